// A throwaway redis-server for `relock demo` when none is given or answering: free loopback
// port, temp dir, dies with us (PR_SET_PDEATHSIG), stopped by PID when this object goes.
#pragma once

#include <sys/types.h>

#include <string>

namespace relock_cli {

class private_redis {
 public:
  private_redis();  // throws failure when redis-server cannot be started
  ~private_redis();
  private_redis(const private_redis&) = delete;
  private_redis& operator=(const private_redis&) = delete;
  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = 0;
  std::string dir_;
  std::string url_;
};

}  // namespace relock_cli
