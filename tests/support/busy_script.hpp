// SPDX-License-Identifier: Apache-2.0
// A read-only Lua script long past the server's busy-reply-threshold: until kill() (SCRIPT
// KILL) the server answers every other command with -BUSY. The fault suite's busy_script fault
// and the pub/sub refusal tests both use it.
#pragma once

#include <thread>

namespace relock::test {

class redis_server;

class busy_script {
 public:
  explicit busy_script(const redis_server& server);  // starts the script on a thread of its own
  ~busy_script();                                    // kills it if still running, joins
  busy_script(const busy_script&) = delete;
  busy_script& operator=(const busy_script&) = delete;

  // True once the server answers -BUSY (false after 5 s).
  bool wait_until_busy();
  // SCRIPT KILL, repeated until it is done or the script has already ended.
  void kill();

 private:
  const redis_server& server_;
  std::thread runner_;
  bool killed_ = false;
};

}  // namespace relock::test
