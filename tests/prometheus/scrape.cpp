// SPDX-License-Identifier: Apache-2.0
#include "scrape.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace relock::test {

namespace {

// Closes the socket on every way out.
struct socket_fd {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ~socket_fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("scrape: " + what + ": " + std::strerror(errno));
}

bool includes(const std::map<std::string, std::string>& labels,
              const std::map<std::string, std::string>& having) {
  return std::all_of(having.begin(), having.end(), [&](const auto& wanted) {
    auto it = labels.find(wanted.first);
    return it != labels.end() ? it->second == wanted.second : wanted.second.empty();
  });
}

// One `name="value"` list, from after '{' to after '}'.
std::map<std::string, std::string> parse_labels(const std::string& line, std::size_t& at) {
  std::map<std::string, std::string> labels;
  while (at < line.size() && line[at] != '}') {
    const auto eq = line.find("=\"", at);
    if (eq == std::string::npos) throw std::runtime_error("exposition: bad labels: " + line);
    std::string name = line.substr(at, eq - at);
    std::string value;
    at = eq + 2;
    for (; at < line.size() && line[at] != '"'; ++at) {
      if (line[at] == '\\' && at + 1 < line.size()) {
        ++at;
        value += line[at] == 'n' ? '\n' : line[at];
      } else {
        value += line[at];
      }
    }
    ++at;  // the closing quote
    if (at < line.size() && line[at] == ',') ++at;
    labels.emplace(std::move(name), std::move(value));
  }
  if (at >= line.size()) throw std::runtime_error("exposition: unclosed labels: " + line);
  ++at;  // '}'
  return labels;
}

}  // namespace

std::string scrape(std::uint16_t port) {
  socket_fd s;
  if (s.fd < 0) fail("socket");
  const timeval timeout{10, 0};
  ::setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) fail("connect");
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(s.fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    fail("send");
  }
  std::string response;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::recv(s.fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("recv");
    }
    response.append(buffer, static_cast<std::size_t>(n));
  }
  const auto body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || body == std::string::npos ||
      response.compare(response.find(' ') + 1, 3, "200") != 0) {
    throw std::runtime_error("scrape: not a 200 response: " + response.substr(0, 200));
  }
  return response.substr(body + 4);
}

std::vector<sample> parse_exposition(const std::string& text) {
  std::vector<sample> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    sample s;
    std::size_t at = line.find_first_of("{ ");
    if (at == std::string::npos) throw std::runtime_error("exposition: no value: " + line);
    s.name = line.substr(0, at);
    if (line[at] == '{') s.labels = parse_labels(line, ++at);
    const char* value = line.c_str() + at;
    char* end = nullptr;
    s.value = std::strtod(value, &end);
    if (end == value) throw std::runtime_error("exposition: bad value: " + line);
    samples.push_back(std::move(s));
  }
  return samples;
}

double sum_of(const std::vector<sample>& samples, std::string_view name,
              const std::map<std::string, std::string>& having) {
  double sum = 0;
  for (const auto& s : samples) {
    if (s.name == name && includes(s.labels, having)) sum += s.value;
  }
  return sum;
}

std::size_t count_of(const std::vector<sample>& samples, std::string_view name,
                     const std::map<std::string, std::string>& having) {
  return static_cast<std::size_t>(std::count_if(samples.begin(), samples.end(), [&](const auto& s) {
    return s.name == name && includes(s.labels, having);
  }));
}

}  // namespace relock::test
