// SPDX-License-Identifier: Apache-2.0
// No hold is reported lost for 20 s while two processes hog both CPUs (docs/faults.md): the
// watchdog's renewals and the validity deadline must hold up on a starved machine. With a 1.5 s
// lease, renewed every 500 ms, that is 40 renewal rounds of 20 holds and 13 leases' worth of time
// starved. It runs alone (RUN_SERIAL): its hogs would starve every other test's timing too.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "support/child_process.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;

TEST(cpu_hog, no_hold_is_reported_lost_while_two_processes_hog_the_cpus_for_20_s) {
  constexpr auto lease = 1500ms;
  constexpr auto run = 20s;
  std::vector<pid_t> hogs;
  for (int i = 0; i < 2; ++i) {
    // Forked before any client: a spinning child with no threads, dying with the test.
    const pid_t hog = fork_child([] {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      volatile std::uint64_t spin = 0;
      for (;;) spin = spin + 1;
      return 0;
    });
    ASSERT_GT(hog, 0);
    hogs.push_back(hog);
  }
  redis_server server;
  auto c = settings_for(server);
  c.watchdog_lease = lease;
  std::atomic<int> lost{0};
  c.on_lock_lost = [&](std::string_view, std::string_view, std::error_code) { ++lost; };
  relock::client client(c);
  raw_client raw = raw_client::to(server);
  std::vector<relock::mutex> locks;
  const auto me = relock::owner::unique();
  for (int i = 0; i < 20; ++i) {
    locks.push_back(client.lock("hogged-" + std::to_string(i)));
    std::promise<std::error_code> got;
    locks.back().async_lock(me, {}, [&](std::error_code ec) { got.set_value(ec); });
    ASSERT_FALSE(got.get_future().get());
  }
  std::int64_t min_pttl = lease.count();
  // Watches the margin while it waits: a loss ends the wait at once.
  const bool any_lost = wait_until(
      [&] {
        const auto p = raw.command({"PTTL", locks[0].key()}).integer;
        if (p >= 0) min_pttl = std::min(min_pttl, p);
        return lost.load() != 0;
      },
      run, 100ms);
  for (pid_t h : hogs) kill(h, SIGKILL);
  for (pid_t h : hogs) waitpid(h, nullptr, 0);
  std::cout << "20 s under two CPU hogs: " << lost.load() << " losses, lowest remaining lease seen "
            << min_pttl << " ms of " << lease.count() << std::endl;
  EXPECT_FALSE(any_lost);
  for (auto& lk : locks) {
    std::promise<std::error_code> done;
    lk.async_unlock(me, [&](std::error_code ec) { done.set_value(ec); });
    EXPECT_FALSE(done.get_future().get());
  }
}
