// SPDX-License-Identifier: Apache-2.0
// A password in --url never reaches relock's output, whatever goes wrong: a URL that does not
// parse, a server that is not there, a server that refuses the password.
#include <relock/errors.hpp>

#include "cli_fixture.hpp"
#include "support/free_port.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

namespace {

void expect_no_secret(const cli_result& r, const std::string& url) {
  EXPECT_EQ(r.code, 2) << url;
  EXPECT_EQ(r.out.find("s3cret"), std::string::npos) << url << "\n" << r.out;
  EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << url << "\n" << r.err;
  EXPECT_EQ(r.err.find("s3cr%65t"), std::string::npos) << url << "\n" << r.err;
  EXPECT_NE(r.err.find("***"), std::string::npos) << url << "\n" << r.err;  // still says which
}

// Each subcommand that connects, against `url`.
void expect_no_secret_anywhere(const std::string& url) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"status", "x"}, {"unlock", "--force", "x"}, {"run", "x", "--", "true"}}) {
    std::vector<std::string> all{"--url", url};
    all.insert(all.end(), args.begin(), args.end());
    expect_no_secret(run_cli(all), url);
  }
}

}  // namespace

TEST_F(cli, a_url_that_does_not_parse_keeps_its_password) {
  for (const std::string url : {"redis://:s3cret@127.0.0.1:abc", "redis://u:s3cret@127.0.0.1:abc",
                                "redis://s3cret@127.0.0.1:abc", "redis://:s3cret@127.0.0.1:1/db",
                                "redis://:pa/s3cret@127.0.0.1", "redis://:s3cr%65t@127.0.0.1:x",
                                "http://:s3cret@127.0.0.1"}) {
    expect_no_secret_anywhere(url);
  }
}

TEST_F(cli, an_unreachable_server_keeps_the_password) {
  const closed_port dead_server;
  const std::uint16_t dead_port = dead_server.port();
  const std::string at = "127.0.0.1:" + std::to_string(dead_port);
  expect_no_secret_anywhere("redis://:s3cret@" + at);
  expect_no_secret_anywhere("redis://u:s3cret@" + at);
  expect_no_secret_anywhere("redis://s3cret@" + at);
}

TEST_F(cli, a_refused_password_is_not_shown) {
  redis_server secured({.password = "right"});
  const std::string at = "127.0.0.1:" + std::to_string(secured.port());
  expect_no_secret_anywhere("redis://:s3cret@" + at);
  expect_no_secret_anywhere("redis://default:s3cret@" + at);
  expect_no_secret_anywhere("redis://s3cret@" + at);
  expect_no_secret_anywhere("redis://:s3cr%65t@" + at);
  auto r = run_cli({"--url", "redis://:s3cret@" + at, "status", "x"});
  EXPECT_NE(r.err.find("refused our credentials"), std::string::npos) << r.err;
}

// relock::error::what() is the detail alone now: no error code repeated at the end.
TEST_F(cli, error_lines_do_not_end_with_an_error_code) {
  const closed_port dead_server;
  const std::uint16_t dead_port = dead_server.port();
  redis_server secured({.password = "right"});
  raw_.command({"SET", "text", "abc"});
  const std::vector<cli_result> failures{
      run_cli({"--url", "redis://127.0.0.1:" + std::to_string(dead_port), "status", "x"}),
      run_cli(
          {"--url", "redis://:wrong@127.0.0.1:" + std::to_string(secured.port()), "status", "x"}),
      run_cli({"--url", "redis://127.0.0.1:abc", "status", "x"}),
      run({"unlock", "--force", "text"}), run({"status", ""})};
  for (const auto& r : failures) {
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    for (auto e : {relock::errc::connection, relock::errc::auth_failed,
                   relock::errc::invalid_argument, relock::errc::wrong_type}) {
      const std::string tail = ": " + relock::make_error_code(e).message() + "\n";
      EXPECT_FALSE(r.err.ends_with(tail)) << r.err;
    }
  }
}
