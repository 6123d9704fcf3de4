// SPDX-License-Identifier: Apache-2.0
#include "support/cluster_state.hpp"

#include "support/redis_config.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace relock::test {
namespace {

constexpr std::string_view magic = "relock-cluster-state 1";

// A path ends its line, so spaces in $TMPDIR survive.
std::filesystem::path rest_of_line(std::istringstream& in) {
  std::string rest;
  std::getline(in >> std::ws, rest);
  return rest;
}

// The fields after the command name (field 2, in parentheses, may hold spaces and ')').
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return {};
  auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;  // fields[0] is field 3 (state)
}

}  // namespace

void write_cluster_state(const std::filesystem::path& file, const cluster_state& state) {
  std::ostringstream out;
  out << magic << '\n';
  out << "keeper " << state.keeper_pid << ' ' << state.keeper_start_time << '\n';
  out << "control " << state.control << '\n';
  out << "options " << state.options.masters << ' ' << state.options.replicas_per_master << ' '
      << state.options.node_timeout.count() << '\n';
  out << "dir " << state.dir.string() << '\n';
  for (const auto& n : state.nodes) {
    out << "node " << n.host << ' ' << n.port << ' ' << n.pid << ' ' << n.dir.string() << '\n';
  }
  auto temporary = file;
  temporary += ".tmp";
  write_file(temporary, out.str());
  std::filesystem::rename(temporary, file);
}

cluster_state read_cluster_state(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read the cluster state " + file.string());
  auto malformed = [&file](const std::string& line) {
    return std::runtime_error("malformed cluster state " + file.string() + ": '" + line + "'");
  };
  cluster_state state;
  std::string line;
  if (!std::getline(in, line) || line != magic) throw malformed(line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "keeper") {
      fields >> state.keeper_pid >> state.keeper_start_time;
    } else if (kind == "control") {
      fields >> state.control;
    } else if (kind == "options") {
      long long timeout_ms = 0;
      fields >> state.options.masters >> state.options.replicas_per_master >> timeout_ms;
      state.options.node_timeout = std::chrono::milliseconds(timeout_ms);
    } else if (kind == "dir") {
      state.dir = rest_of_line(fields);
    } else if (kind == "node") {
      cluster_node n;
      fields >> n.host >> n.port >> n.pid;
      n.dir = rest_of_line(fields);
      state.nodes.push_back(std::move(n));
    } else {
      throw malformed(line);
    }
    if (fields.fail()) throw malformed(line);
  }
  if (state.keeper_pid <= 0 || state.control.empty() || state.nodes.empty()) {
    throw malformed("(incomplete)");
  }
  return state;
}

unsigned long long process_start_time(pid_t pid) {
  auto fields = stat_fields(pid);
  // starttime is field 22.
  return fields.size() > 19 ? std::stoull(fields[19]) : 0;
}

bool process_alive(pid_t pid) {
  auto fields = stat_fields(pid);
  return !fields.empty() && fields[0] != "Z" && fields[0] != "X";
}

bool keeper_running(const cluster_state& state) {
  return process_alive(state.keeper_pid) &&
         process_start_time(state.keeper_pid) == state.keeper_start_time;
}

std::string keeper_request(const std::string& control, const std::string& request,
                           std::chrono::milliseconds timeout) {
  auto fail = [&](const std::string& what) {
    return std::runtime_error("cluster keeper @" + control + ", request '" + request +
                              "': " + what);
  };
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (control.size() + 1 > sizeof addr.sun_path) throw fail("socket name too long");
  std::memcpy(addr.sun_path + 1, control.data(), control.size());  // sun_path[0] = 0: abstract
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + control.size());

  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw fail(std::strerror(errno));
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } guard{fd};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    throw fail(std::string("connect: ") + std::strerror(errno) + " (is the keeper gone?)");
  }
  const std::string line = request + "\n";
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    throw fail(std::string("send: ") + std::strerror(errno));
  }
  // The keeper answers one line and closes; a restart takes a while, so wait with a deadline.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string reply;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) throw fail("no reply within " + std::to_string(timeout.count()) + " ms");
    char buffer[512];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buffer, static_cast<std::size_t>(n));
    if (reply.find('\n') != std::string::npos) break;
  }
  reply = reply.substr(0, reply.find('\n'));
  if (reply == "ok") return {};
  if (reply.starts_with("ok ")) return reply.substr(3);
  throw fail(reply.empty() ? "closed without a reply" : reply);
}

}  // namespace relock::test
