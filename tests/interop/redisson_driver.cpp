// SPDX-License-Identifier: Apache-2.0
#include "redisson_driver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#ifndef RELOCK_INTEROP_DIR
#error "RELOCK_INTEROP_DIR must name tests/interop/redisson (set by tests/interop/CMakeLists.txt)"
#endif

namespace relock::test {

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The java binary: $RELOCK_JAVA, else $JAVA_HOME/bin/java, else the first `java` on PATH.
// Resolved before fork so the child only has to execv.
std::string find_java() {
  if (const char* j = std::getenv("RELOCK_JAVA"); j && *j) {
    if (!is_executable(j)) {
      throw std::runtime_error(std::string("RELOCK_JAVA=") + j + " is not an executable file");
    }
    return j;
  }
  if (const char* home = std::getenv("JAVA_HOME"); home && *home) {
    std::string candidate = std::string(home) + "/bin/java";
    if (is_executable(candidate)) return candidate;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream ss(dirs);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/java";
    if (is_executable(candidate)) return candidate;
  }
  throw std::runtime_error(
      "java not found (RELOCK_JAVA, JAVA_HOME, PATH): the interop suite needs a JDK 17+; "
      "run ./scripts/setup or tests/interop/redisson/prepare");
}

// The class-data-sharing archive tests/interop/redisson/prepare makes beside a jar, when it is
// newer than the jar (an older one no longer matches it); empty: none.
std::string cds_archive_of(const std::string& jar) {
  std::error_code ec;
  const fs::path archive = fs::path(jar).replace_extension(".jsa");
  const auto made = fs::last_write_time(archive, ec);
  if (ec) return {};
  const auto built = fs::last_write_time(jar, ec);
  return !ec && made >= built ? archive.string() : std::string();
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::vector<long> version_key(const std::string& v) {
  std::vector<long> key;
  std::stringstream ss(v);
  std::string part;
  while (std::getline(ss, part, '.')) {
    key.push_back(std::strtol(part.c_str(), nullptr, 10));
  }
  return key;
}

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

}  // namespace

// ------------------------------------------------------------------------------------------
// Jar discovery

std::string redisson_driver::version_of_jar(const std::string& jar) {
  static const std::regex pattern(R"(^relock-redisson-driver-([0-9][0-9A-Za-z.\-]*)\.jar$)");
  std::smatch m;
  std::string name = fs::path(jar).filename().string();
  if (std::regex_match(name, m, pattern)) return m[1].str();
  return {};
}

std::string redisson_driver::param_name(const std::string& jar) {
  std::string v = version_of_jar(jar);
  if (v.empty()) return jar.rfind("missing", 0) == 0 ? "missing" : "unknown";
  std::string name = "redisson_";
  for (char c : v) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

std::vector<std::string> redisson_driver::jar_paths() {
  std::vector<std::string> jars;
  std::string where;
  if (const char* env = std::getenv("RELOCK_REDISSON_JARS"); env && *env) {
    where = std::string("RELOCK_REDISSON_JARS=") + env;
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':')) {
      if (item.empty()) continue;
      if (!fs::is_regular_file(item)) {
        throw std::runtime_error("RELOCK_REDISSON_JARS names " + item + ", which is not a file");
      }
      jars.push_back(item);
    }
  } else {
    fs::path dir = fs::path(RELOCK_INTEROP_DIR) / "target";
    where = dir.string();
    std::error_code ec;
    if (fs::is_directory(dir, ec)) {
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.is_regular_file() && !version_of_jar(entry.path().string()).empty()) {
          jars.push_back(entry.path().string());
        }
      }
    }
  }
  if (jars.empty()) {
    throw std::runtime_error(
        "no Redisson driver jar in " + where +
        ": build them with tests/interop/redisson/prepare (needs Java 17+ and Maven; "
        "./scripts/setup runs it). The interop suite does not skip without them.");
  }
  std::sort(jars.begin(), jars.end(), [](const std::string& a, const std::string& b) {
    return version_key(version_of_jar(a)) < version_key(version_of_jar(b));
  });
  return jars;
}

std::vector<std::string> redisson_driver::jar_params() {
  try {
    return jar_paths();
  } catch (const std::exception& e) {
    return {std::string("missing: ") + e.what()};
  }
}

void redisson_driver::check_jar(const std::string& jar) {
  if (jar.rfind("missing: ", 0) == 0) throw std::runtime_error(jar.substr(9));
  if (!fs::is_regular_file(jar)) {
    throw std::runtime_error("Redisson driver jar " + jar +
                             " does not exist: run "
                             "tests/interop/redisson/prepare");
  }
}

// ------------------------------------------------------------------------------------------
// Process

redisson_driver::redisson_driver(std::string jar, std::string url,
                                 std::chrono::milliseconds watchdog)
    : redisson_driver(std::move(jar), std::move(url), options{.watchdog = watchdog}) {}

redisson_driver::redisson_driver(std::string jar, std::string url, options opts)
    : jar_(std::move(jar)), url_(std::move(url)), opts_(std::move(opts)) {
  check_jar(jar_);
  // A driver lives for one test and does little work: the JIT's first tier and the serial
  // collector start it sooner and leave the other tests' CPU alone (no C2 compiler threads,
  // no parallel GC threads on a two-core machine).
  std::vector<std::string> argv{find_java(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"};
  // The JVM's own warnings go to stderr: stdout carries the driver's replies.
  argv.insert(argv.end(), {"-Xlog:disable", "-Xlog:all=warning:stderr"});
  // With the jar's class-data-sharing archive, the JVM maps the classes a run loads instead of
  // reading them from the jar: it starts in about half the CPU (1.17 -> 0.65 CPU-s), and the
  // suite starts hundreds of drivers. An archive that does not fit this JVM is ignored (a warning).
  if (const std::string archive = cds_archive_of(jar_); !archive.empty()) {
    argv.push_back("-XX:SharedArchiveFile=" + archive);
  }
  argv.insert(argv.end(), opts_.jvm_args.begin(), opts_.jvm_args.end());
  argv.insert(argv.end(), {"-jar", jar_, "--url", url_, "--watchdog-ms",
                           std::to_string(opts_.watchdog.count())});
  if (!opts_.cluster_nodes.empty()) {
    argv.push_back("--cluster");
    argv.push_back(join(opts_.cluster_nodes, ","));
  }
  if (!opts_.sharded_subscription.empty()) {
    argv.push_back("--sharded-subscription");
    argv.push_back(opts_.sharded_subscription);
  }
  // A redis-sentinel:// url went through --url above unchanged: the driver reads relock's form.
  for (const auto& replica : opts_.replicas) {
    argv.push_back("--replica");
    argv.push_back(replica);
  }
  if (!opts_.sentinel_username.empty()) {
    argv.push_back("--sentinel-username");
    argv.push_back(opts_.sentinel_username);
  }
  if (!opts_.sentinel_password.empty()) {
    argv.push_back("--sentinel-password");
    argv.push_back(opts_.sentinel_password);
  }
  if (!opts_.read_mode.empty()) {
    argv.push_back("--read-mode");
    argv.push_back(opts_.read_mode);
  }
  if (!opts_.tls_ca_file.empty()) {
    argv.push_back("--tls-ca");
    argv.push_back(opts_.tls_ca_file);
  }
  if (!opts_.nat_map.empty()) {
    std::vector<std::string> pairs;
    for (const auto& [from, to] : opts_.nat_map) pairs.push_back(from + "=" + to);
    argv.push_back("--nat-map");
    argv.push_back(join(pairs, ","));
  }
  if (!opts_.client_name.empty()) {
    argv.push_back("--client-name");
    argv.push_back(opts_.client_name);
  }
  start(argv);

  std::string failure;
  {
    std::unique_lock lock(mutex_);
    bool done = cv_.wait_for(lock, opts_.ready_timeout, [&] { return ready_ || eof_; });
    if (!ready_) {
      if (!startup_error_.empty()) {
        failure = startup_error_;
      } else if (eof_) {
        failure = "the driver closed its stdout before it was ready";
      } else if (!done) {
        failure = "no ready line within " + std::to_string(opts_.ready_timeout.count()) + " ms";
      }
      if (!stray_.empty()) {
        failure += "; it printed: " + join({stray_.begin(), stray_.end()}, " | ");
      }
    }
  }
  if (!failure.empty()) {
    {
      std::lock_guard plock(proc_mutex_);
      if (!reaped_) ::kill(pid_, SIGKILL);
    }
    reap_blocking();
    std::string how = exit_description();
    if (wake_fds_[1] >= 0) (void)!::write(wake_fds_[1], "x", 1);
    if (reader_.joinable()) reader_.join();
    close_stdin();
    for (int* fd : {&stdout_fd_, &wake_fds_[0], &wake_fds_[1]}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
    throw std::runtime_error("Redisson driver " + jar_ + " (" + url_ + ") did not start: " +
                             failure + " (" + how + "; its stderr is in the test log)");
  }
}

void redisson_driver::start(const std::vector<std::string>& argv) {
  int in_pair[2];   // [0] ours, [1] the child's stdin
  int out_pipe[2];  // [0] ours, [1] the child's stdout
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair");
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(in_pair[0]);
    ::close(in_pair[1]);
    throw std::system_error(err, std::generic_category(), "pipe2");
  }
  if (::pipe2(wake_fds_, O_CLOEXEC) != 0) {
    int err = errno;
    for (int fd : {in_pair[0], in_pair[1], out_pipe[0], out_pipe[1]}) ::close(fd);
    throw std::system_error(err, std::generic_category(), "pipe2");
  }
  // Our end of the child's stdin only ever writes.
  ::shutdown(in_pair[0], SHUT_RD);

  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t parent = ::getpid();
  static const char exec_failed[] = "redisson_driver: execv java failed\n";

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    for (int fd : {in_pair[0], in_pair[1], out_pipe[0], out_pipe[1]}) ::close(fd);
    throw std::system_error(err, std::generic_category(), "fork");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(in_pair[1], STDIN_FILENO) < 0 || ::dup2(out_pipe[1], STDOUT_FILENO) < 0) {
      ::_exit(127);
    }
    ::close_range(3, ~0U, 0);  // no test sockets leak into the JVM
    ::execv(cargv[0], cargv.data());
    (void)!::write(STDERR_FILENO, exec_failed, sizeof exec_failed - 1);
    ::_exit(127);
  }
  pid_ = pid;
  ::close(in_pair[1]);
  ::close(out_pipe[1]);
  stdin_fd_ = in_pair[0];
  stdout_fd_ = out_pipe[0];
  reader_ = std::thread([this] { reader_loop(); });
}

redisson_driver::~redisson_driver() {
  bool alive = false;
  {
    std::lock_guard plock(proc_mutex_);
    alive = !try_reap();
    if (alive) ::kill(pid_, SIGCONT);  // harmless when running; needed if a test SIGSTOPped it
  }
  if (alive) {
    {
      std::lock_guard wlock(write_mutex_);
      if (stdin_fd_ >= 0) {
        static const char line[] = "exit - exit\n";
        (void)!::send(stdin_fd_, line, sizeof line - 1, MSG_NOSIGNAL);
      }
    }
    close_stdin();  // EOF: the driver exits on it as well
    if (!wait_exit(std::chrono::seconds(10))) {
      {
        std::lock_guard plock(proc_mutex_);
        if (!reaped_) ::kill(pid_, SIGKILL);
      }
      reap_blocking();
    }
  }
  close_stdin();
  if (wake_fds_[1] >= 0) (void)!::write(wake_fds_[1], "x", 1);
  if (reader_.joinable()) reader_.join();
  for (int* fd : {&stdout_fd_, &wake_fds_[0], &wake_fds_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void redisson_driver::close_stdin() {
  std::lock_guard wlock(write_mutex_);
  if (stdin_fd_ >= 0) {
    ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
}

bool redisson_driver::try_reap() {
  // proc_mutex_ held by the caller.
  if (reaped_) return true;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    reaped_ = true;
    exit_status_ = r == pid_ ? status : 0;
    return true;
  }
  return false;
}

void redisson_driver::reap_blocking() {
  std::lock_guard plock(proc_mutex_);
  if (reaped_) return;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  reaped_ = true;
  exit_status_ = r == pid_ ? status : 0;
}

bool redisson_driver::running() {
  std::lock_guard plock(proc_mutex_);
  return !try_reap();
}

bool redisson_driver::wait_exit(std::chrono::milliseconds timeout) {
  auto deadline = clock_type::now() + timeout;
  for (;;) {
    {
      std::lock_guard plock(proc_mutex_);
      if (try_reap()) return true;
    }
    if (clock_type::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void redisson_driver::kill(int sig) {
  std::lock_guard plock(proc_mutex_);
  if (reaped_ || pid_ <= 0) return;
  ::kill(pid_, sig);
}

std::string redisson_driver::exit_description() const {
  // Called after reaping.
  if (WIFEXITED(exit_status_)) {
    return "exited with status " + std::to_string(WEXITSTATUS(exit_status_));
  }
  if (WIFSIGNALED(exit_status_)) {
    return "killed by signal " + std::to_string(WTERMSIG(exit_status_));
  }
  return "status " + std::to_string(exit_status_);
}

std::string redisson_driver::describe() const {
  std::string v = redisson_version_.empty() ? version_of_jar(jar_) : redisson_version_;
  return "Redisson " + v + " driver (pid " + std::to_string(pid_) + ")";
}

// ------------------------------------------------------------------------------------------
// Protocol

void redisson_driver::reader_loop() {
  std::string buffer;
  char chunk[65536];
  for (;;) {
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) break;
    if (!fds[0].revents) continue;
    ssize_t got = ::read(stdout_fd_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      handle_line(buffer.substr(start, nl - start));
    }
    buffer.erase(0, start);
  }
  if (!buffer.empty()) handle_line(buffer);
  std::lock_guard lock(mutex_);
  eof_ = true;
  cv_.notify_all();
}

void redisson_driver::handle_line(const std::string& raw) {
  std::string line = raw;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) return;
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  std::lock_guard lock(mutex_);
  if (j.is_discarded() || !j.is_object()) {
    if (stray_.size() < 200) stray_.push_back(line);
    return;
  }
  if (auto ev = j.find("event"); ev != j.end() && ev->is_string()) {
    if (*ev == "ready") {
      client_id_ = j.value("client_id", "");
      redisson_version_ = j.value("redisson_version", "");
      sharded_subscription_ = j.value("sharded_subscription", "");
      ready_ = true;
    } else if (*ev == "error") {
      startup_error_ = j.value("error", line);
    } else if (stray_.size() < 200) {
      stray_.push_back(line);
    }
    cv_.notify_all();
    return;
  }
  if (auto id = j.find("id"); id != j.end() && id->is_string()) {
    std::string key = id->get<std::string>();  // before j is moved from
    replies_[key] = std::move(j);
    cv_.notify_all();
    return;
  }
  if (stray_.size() < 200) stray_.push_back(line);
}

std::string redisson_driver::send(const std::string& owner, const std::string& cmd_and_args) {
  if (owner.empty() || owner.find_first_of(" \t\r\n") != std::string::npos) {
    throw std::invalid_argument("redisson_driver::send: owner must be one non-empty word, got '" +
                                owner + "'");
  }
  if (cmd_and_args.empty() || cmd_and_args.find_first_of("\r\n") != std::string::npos) {
    throw std::invalid_argument("redisson_driver::send: command must be one non-empty line");
  }
  std::string id;
  std::string line;
  {
    std::lock_guard wlock(write_mutex_);
    if (stdin_fd_ < 0) throw std::runtime_error(describe() + ": stdin already closed");
    id = "r" + std::to_string(++next_id_);
    {
      std::lock_guard lock(mutex_);
      if (eof_) {
        throw std::runtime_error(describe() + " has exited; cannot send '" + cmd_and_args + "'");
      }
      commands_[id] = owner + " " + cmd_and_args;
    }
    line = id + " " + owner + " " + cmd_and_args + "\n";
    std::size_t off = 0;
    while (off < line.size()) {
      ssize_t w = ::send(stdin_fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        std::lock_guard lock(mutex_);
        commands_.erase(id);
        throw std::runtime_error(describe() + ": cannot send '" + cmd_and_args +
                                 "': " + errno_text(err));
      }
      off += static_cast<std::size_t>(w);
    }
  }
  return id;
}

nlohmann::json redisson_driver::wait_reply(const std::string& id,
                                           std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, timeout, [&] { return replies_.count(id) != 0 || eof_; });
  if (auto it = replies_.find(id); it != replies_.end()) {
    nlohmann::json j = std::move(it->second);
    replies_.erase(it);
    commands_.erase(id);
    return j;
  }
  std::string what = "'" + id + " ";
  if (auto c = commands_.find(id); c != commands_.end()) {
    what += c->second;
  } else {
    what += "<unknown id>";
  }
  what += "'";
  if (eof_) {
    throw std::runtime_error(describe() + " exited before answering " + what);
  }
  throw std::runtime_error(describe() + ": no reply within " + std::to_string(timeout.count()) +
                           " ms to " + what);
}

nlohmann::json redisson_driver::call(const std::string& owner, const std::string& cmd_and_args,
                                     std::chrono::milliseconds timeout) {
  return wait_reply(send(owner, cmd_and_args), timeout);
}

nlohmann::json redisson_driver::call_ok(const std::string& owner, const std::string& cmd_and_args,
                                        std::chrono::milliseconds timeout) {
  nlohmann::json r = call(owner, cmd_and_args, timeout);
  if (!r.value("ok", false)) {
    throw std::runtime_error(describe() + ": '" + owner + " " + cmd_and_args +
                             "' failed: " + r.value("error", r.dump()));
  }
  return r.contains("result") ? r["result"] : nlohmann::json();
}

std::string redisson_driver::owner_field(const std::string& owner) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = owner_fields_.find(owner); it != owner_fields_.end()) return it->second;
  }
  nlohmann::json tid = call_ok(owner, "threadid");
  if (!tid.is_number_integer()) {
    throw std::runtime_error(describe() + ": threadid answered " + tid.dump());
  }
  std::string field = client_id_ + ":" + std::to_string(tid.get<std::int64_t>());
  std::lock_guard lock(mutex_);
  owner_fields_[owner] = field;
  return field;
}

std::vector<std::string> redisson_driver::stray_output() const {
  std::lock_guard lock(mutex_);
  return {stray_.begin(), stray_.end()};
}

}  // namespace relock::test
