// SPDX-License-Identifier: Apache-2.0
// A deadline given on the command line bounds the whole run, connecting included (issue 31):
// against a server that accepts connections but answers nothing (SIGSTOPped), `run -w 2` gives
// up after 2 s, not after the library's 10 s connect timeout; status, which has no -w, gives up
// after its own 3 s.
#include "cli_fixture.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using steady = std::chrono::steady_clock;

namespace {

struct timed {
  cli_result result;
  steady::duration took;
};

}  // namespace

class cli_deadline : public cli {
 protected:
  timed timed_run(std::vector<std::string> args) {
    const auto started = steady::now();
    auto r = run(std::move(args), 30s);
    return {std::move(r), steady::now() - started};
  }
};

TEST_F(cli_deadline, run_wait_bounds_connecting_to_a_stopped_server) {
  server_.pause();
  auto t = timed_run({"run", "-w", "2", "x", "--", "true"});
  EXPECT_EQ(t.result.code, 2) << t.result.err;
  EXPECT_EQ(lines(t.result.err), 1u) << t.result.err;
  EXPECT_NE(t.result.err.find("unreachable"), std::string::npos) << t.result.err;
  EXPECT_GE(t.took, 1900ms);  // it did wait for the server, as long as it was told
  EXPECT_LT(t.took, 5s);      // not the 10 s connect timeout

  auto once = timed_run({"run", "-w", "0", "x", "--", "true"});
  EXPECT_EQ(once.result.code, 2) << once.result.err;
  EXPECT_LT(once.took, 3s);
  server_.resume();
  EXPECT_EQ(run({"run", "-w", "2", "x", "--", "true"}).code, 0);  // and works once it answers
}

TEST_F(cli_deadline, queue_take_wait_bounds_connecting_too) {
  server_.pause();
  auto t = timed_run({"queue", "take", "q", "-w", "1"});
  EXPECT_EQ(t.result.code, 2) << t.result.err;
  EXPECT_LT(t.took, 4s);
}

TEST_F(cli_deadline, status_and_unlock_give_up_on_a_stopped_server_after_3_s) {
  server_.pause();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "x"}, std::vector<std::string>{"unlock", "--force", "x"},
        std::vector<std::string>{"semaphore", "add", "s", "1"}}) {
    SCOPED_TRACE(args[0]);
    auto t = timed_run(args);
    EXPECT_EQ(t.result.code, 2) << t.result.err;
    EXPECT_EQ(lines(t.result.err), 1u) << t.result.err;
    EXPECT_GE(t.took, 2900ms);
    EXPECT_LT(t.took, 7s);  // 3 s, with room for a loaded machine; not 10 s
  }
}
