// A private redis-server: see private_redis.hpp.
#include "private_redis.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <relock/client.hpp>

#include "cli.hpp"

namespace relock_cli {
namespace {

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    throw failure(exit_usage, "demo: no free loopback port for a private Redis");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

private_redis::private_redis() {
  char pattern[] = "/tmp/relock-demo-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw failure(exit_usage, "demo: cannot make a temp dir");
  dir_ = pattern;
  const std::string port = std::to_string(free_port());
  url_ = "redis://127.0.0.1:" + port;
  // Everything the child needs is built before fork: between fork and exec it may only make
  // async-signal-safe calls.
  const std::string log = dir_ + "/redis.log";
  const char* argv[] = {"redis-server", "--port",     port.c_str(), "--bind", "127.0.0.1",
                        "--dir",        dir_.c_str(), "--save",     "",       "--appendonly",
                        "no",           "--logfile",  log.c_str(),  nullptr};
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw failure(exit_usage, "demo: cannot fork redis-server");
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);   // dies with us, even if we are killed
    if (getppid() != parent) _exit(1);  // we died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the demo blocks its stop signals; redis must not
    execvp(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  relock::config probe;
  probe.url = url_;
  probe.connect_timeout = std::chrono::milliseconds(200);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      relock::client ready(probe);
      return;
    } catch (const relock::error&) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
          std::error_code ignored;
          std::filesystem::remove_all(dir_, ignored);
          throw failure(exit_usage,
                        "demo: no Redis at the default URL and no redis-server on "
                        "PATH to start one; install redis-server or pass --url");
        }
        throw failure(exit_usage,
                      "demo: the private redis-server exited at start; see " + dir_ + "/redis.log");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);  // a constructor that throws gets no destructor
        waitpid(pid_, nullptr, 0);
        pid_ = 0;
        throw failure(exit_usage, "demo: the private redis-server did not answer within 10 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling with a deadline
    }
  }
}

private_redis::~private_redis() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);  // nothing to save: a demo's data
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace relock_cli
