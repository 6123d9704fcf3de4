// SPDX-License-Identifier: Apache-2.0
// What every CLI test starts from: its own redis-server, a raw client that plays "someone
// else looking at Redis", and the relock binary pointed at that server.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_process.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "support/wait.hpp"

namespace relock::test {

class cli : public ::testing::Test {
 protected:
  std::vector<std::string> with_url(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--url", server_.url()});
    return args;
  }
  cli_result run(std::vector<std::string> args,
                 std::chrono::milliseconds timeout = std::chrono::seconds(30),
                 cli_options options = {}) {
    return run_cli(with_url(std::move(args)), timeout, std::move(options));
  }

  bool exists(const std::string& key) { return raw_.command({"EXISTS", key}).integer == 1; }
  std::int64_t pttl(const std::string& key) { return raw_.command({"PTTL", key}).integer; }
  // A relock waiting for `name` has subscribed to its unlock channel (data-layout §2).
  bool someone_waits_on(const std::string& name) {
    auto r = raw_.command({"PUBSUB", "NUMSUB", "redisson_lock__channel:{" + name + "}"});
    return r.elements.at(1).integer >= 1;
  }
  static std::size_t lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
  }
  // A path for a marker file that a command creates to say how far it got.
  std::string file(const std::string& name) const { return (scratch_.path() / name).string(); }
  static bool appears(const std::string& file) {
    return wait_until([&] { return std::filesystem::exists(file); }, std::chrono::seconds(10));
  }

  temp_dir scratch_{"relock-cli"};
  redis_server server_;
  raw_client raw_ = raw_client::to(server_);
};

}  // namespace relock::test
