// SPDX-License-Identifier: Apache-2.0
// The table of bad inputs: each row gives a typed error (relock::errc) within 100 ms (the TLS
// rows: 1 s, see there) and leaves the server's DEBUG DIGEST (one hash of the whole dataset) as
// it was. Names, key types of every kind, durations, settings, URLs, owners, credentials, a
// server that is not Redis, a closed port, and TLS refused for every reason (issue #32). A few
// odd inputs that are valid (binary names) must work and leave no trace.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <relock/client.hpp>

#include "support/client_settings.hpp"
#include "support/free_port.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "support/tls_files.hpp"
#include "support/wait.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;
using steady = std::chrono::steady_clock;

namespace {

redis_options debug_server(std::string password = {}) {
  return {.password = std::move(password), .extra_config = {"enable-debug-command local"}};
}

struct row {
  std::string name;
  std::vector<std::vector<std::string>> setup;  // written before the digest is taken
  std::function<std::error_code()> action;
  std::optional<errc> expected;  // nullopt: a valid odd input, which must succeed
};

// What a call ended with: its relock::error's code, or none.
template <class F>
std::error_code error_of(F f) {
  try {
    f();
    return {};
  } catch (const relock::error& e) {
    return e.code();
  }
}

// What a client construction ends with, checked against the words its message must carry and
// the secrets it must never carry (a password, a key file's contents).
std::error_code refusal_saying(const relock::config& cfg, const std::vector<std::string>& words,
                               const std::vector<std::string>& secrets) {
  try {
    relock::client bad(cfg);
    return {};
  } catch (const relock::error& e) {
    const std::string what = e.what();
    std::cout << "    says: " << what << std::endl;
    for (const auto& w : words) EXPECT_NE(what.find(w), std::string::npos) << "no '" << w << "'";
    for (const auto& s : secrets) EXPECT_EQ(what.find(s), std::string::npos) << "a secret shown";
    return e.code();
  }
}

// The lines of a PEM file between its armour: what must never appear in a message.
std::vector<std::string> pem_body(const std::string& file) {
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.rfind("-----", 0) != 0) lines.push_back(line);
  }
  return lines;
}

std::string digest(raw_client& raw) { return raw.command({"DEBUG", "DIGEST"}).str; }

// Runs every row on `server`, each on a dataset of its own, and prints the table. A refusal
// must come `within` the bound: well inside any timeout, so none of them waited for one.
void run_table(redis_server& server, const std::vector<row>& rows,
               std::chrono::milliseconds within = 100ms) {
  raw_client raw = raw_client::to(server);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    raw.command({"FLUSHALL"});
    for (const auto& cmd : r.setup) ASSERT_FALSE(raw.command(cmd).is_error()) << cmd[0];
    const std::string before = digest(raw);
    const auto t0 = steady::now();
    const std::error_code ec = r.action();
    const auto took = steady::now() - t0;
    std::cout << "  " << r.name << ": " << (ec ? ec.message() : "ok") << ", "
              << std::chrono::duration<double, std::milli>(took).count() << " ms" << std::endl;
    if (r.expected) {
      EXPECT_EQ(ec, *r.expected) << ec.message();
      EXPECT_LT(took, within);
      EXPECT_EQ(digest(raw), before) << "the data changed";
    } else {
      EXPECT_FALSE(ec) << ec.message();
      // Nothing left behind once the release's latch is swept.
      EXPECT_TRUE(wait_until([&] { return digest(raw) == before; }, 3s)) << "a trace was left";
    }
  }
}

std::vector<std::string> lock_kinds() {
  return {"lock",      "non_reentrant_lock", "fair_lock", "fenced_lock",
          "spin_lock", "read side",          "write side"};
}

relock::mutex handle(relock::client& c, const std::string& kind, const std::string& name) {
  if (kind == "lock") return c.lock(name);
  if (kind == "non_reentrant_lock") return c.non_reentrant_lock(name);
  if (kind == "fair_lock") return c.fair_lock(name);
  if (kind == "fenced_lock") return c.fenced_lock(name);
  if (kind == "spin_lock") return c.spin_lock(name);
  auto rw = c.read_write_lock(name);
  return kind == "read side" ? rw.read_lock() : rw.write_lock();
}

// A TCP server that is not Redis: it answers anything with an HTTP error and closes.
class not_redis {
 public:
  not_redis() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error("not_redis: cannot listen");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        char buf[256];
        if (read(c, buf, sizeof buf) > 0) {
          const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
          [[maybe_unused]] auto n = write(c, reply, sizeof reply - 1);
        }
        close(c);
      }
    });
  }
  ~not_redis() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

TEST(bad_inputs, every_row_is_a_typed_error_within_100_ms_and_changes_nothing) {
  redis_server server(debug_server());
  relock::client c(settings_for(server));
  const std::string huge(65 * 1024 + 1, 'n');
  std::vector<row> rows;

  // ---- names: empty and over 64 KiB, for every kind of handle and for inspect ----
  for (const auto& kind : lock_kinds()) {
    for (const auto& [what, n] :
         {std::pair<const char*, std::string>{"empty", ""}, {"huge", huge}}) {
      rows.push_back({kind + ": " + what + " name",
                      {},
                      [&c, kind, n = n] { return error_of([&] { handle(c, kind, n); }); },
                      errc::invalid_argument});
    }
  }
  rows.push_back({"inspect: empty name",
                  {},
                  [&] { return error_of([&] { c.inspect(""); }); },
                  errc::invalid_argument});
  rows.push_back({"inspect: huge name",
                  {},
                  [&] { return error_of([&] { c.inspect(huge); }); },
                  errc::invalid_argument});
  // Binary names are valid Redis keys: they work and leave nothing behind.
  for (const auto& [what, n] : {std::pair<const char*, std::string>{"NUL", std::string("a\0b", 3)},
                                {"0xff", "\xff\xfe"},
                                {"newline", "a\r\nb"}}) {
    rows.push_back({std::string("binary name with ") + what + " works",
                    {},
                    [&c, n = n] {
                      return error_of([&] {
                        auto lk = c.lock(n);
                        lk.lock();
                        lk.unlock();
                      });
                    },
                    std::nullopt});
  }

  // ---- wrong key types: the name holds something that is not a lock ----
  const std::vector<std::pair<std::string, std::vector<std::string>>> foreign = {
      {"a string", {"SET", "x", "v"}},
      {"a list", {"RPUSH", "x", "v"}},
      {"a set", {"SADD", "x", "v"}},
      {"a zset", {"ZADD", "x", "1", "v"}},
      {"a stream", {"XADD", "x", "*", "f", "v"}}};
  for (const auto& [what, setup] : foreign) {
    for (const auto& kind : lock_kinds()) {
      rows.push_back({kind + ": try_lock on " + what,
                      {setup},
                      [&c, kind] { return error_of([&] { handle(c, kind, "x").try_lock(); }); },
                      errc::wrong_type});
    }
  }
  rows.push_back({"force_unlock of a string",
                  {{"SET", "x", "v"}},
                  [&] { return error_of([&] { c.lock("x").force_unlock(); }); },
                  errc::wrong_type});
  rows.push_back({"force_unlock of a hash of another shape",
                  {{"HSET", "x", "name", "value"}},
                  [&] { return error_of([&] { c.lock("x").force_unlock(); }); },
                  errc::wrong_type});
  rows.push_back({"hold_count of a field that is no count",
                  {{"HSET", "x", "someone:1", "abc"}},
                  [&] { return error_of([&] { c.lock("x").hold_count("someone:1"); }); },
                  errc::wrong_type});
  rows.push_back({"fenced lock whose counter is no token",
                  {{"SET", "redisson_lock_token:{x}", "abc"}},
                  [&] { return error_of([&] { c.fenced_lock("x").try_lock(); }); },
                  errc::wrong_type});
  rows.push_back({"unlock of a string",
                  {{"SET", "x", "v"}},
                  [&] {
                    std::error_code ec;
                    c.lock("x").unlock(ec);
                    return ec;
                  },
                  errc::wrong_type});

  // ---- durations: negative, zero lease, NaN, infinite, overflowing ----
  auto lk = [&] { return c.lock("d"); };
  using fms = std::chrono::duration<double, std::milli>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  rows.push_back({"lock(lease -1 ms)",
                  {},
                  [&] { return error_of([&] { lk().lock(-1ms); }); },
                  errc::invalid_argument});
  rows.push_back({"lock(lease 0)",
                  {},
                  [&] { return error_of([&] { lk().lock(0ms); }); },
                  errc::invalid_argument});
  rows.push_back({"try_lock(wait -1 ms)",
                  {},
                  [&] { return error_of([&] { lk().try_lock(-1ms); }); },
                  errc::invalid_argument});
  rows.push_back({"try_lock(wait 1 ms, lease -5 ms)",
                  {},
                  [&] { return error_of([&] { lk().try_lock(1ms, -5ms); }); },
                  errc::invalid_argument});
  rows.push_back({"try_lock(wait 0, lease 0)",
                  {},
                  [&] { return error_of([&] { lk().try_lock(0ms, 0ms); }); },
                  errc::invalid_argument});
  rows.push_back({"try_lock_for(NaN)",
                  {},
                  [&] { return error_of([&] { lk().try_lock_for(fms(nan)); }); },
                  errc::invalid_argument});
  rows.push_back({"try_lock_for(infinity)",
                  {},
                  [&] { return error_of([&] { lk().try_lock_for(fms(inf)); }); },
                  errc::invalid_argument});
  rows.push_back({"try_lock_for(hours::max())",
                  {},
                  [&] { return error_of([&] { lk().try_lock_for(std::chrono::hours::max()); }); },
                  errc::invalid_argument});
  rows.push_back({"lock(lease 200 years)",
                  {},
                  [&] {
                    return error_of([&] {
                      lk().lock(std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::years(200)));
                    });
                  },
                  errc::invalid_argument});
  rows.push_back(
      {"fenced try_lock_and_get_token(wait -1 ms)",
       {},
       [&] { return error_of([&] { c.fenced_lock("d").try_lock_and_get_token(-1ms); }); },
       errc::invalid_argument});
  rows.push_back({"async_try_lock with lease 0",
                  {},
                  [&] {
                    std::promise<std::error_code> got;
                    relock::lock_options o;
                    o.lease = 0ms;
                    lk().async_try_lock(relock::owner::unique(), o,
                                        [&](std::error_code ec, bool) { got.set_value(ec); });
                    return got.get_future().get();
                  },
                  errc::invalid_argument});

  // ---- settings and URLs: refused before anything is sent ----
  auto with = [&](std::function<void(relock::config&)> change) {
    return [&server, change] {
      return error_of([&] {
        auto cfg = settings_for(server);
        change(cfg);
        relock::client bad(cfg);
      });
    };
  };
  rows.push_back({"watchdog_lease 0",
                  {},
                  with([](auto& s) { s.watchdog_lease = 0ms; }),
                  errc::invalid_argument});
  rows.push_back({"command_timeout -1 ms",
                  {},
                  with([](auto& s) { s.command_timeout = -1ms; }),
                  errc::invalid_argument});
  rows.push_back({"command_connections 0",
                  {},
                  with([](auto& s) { s.command_connections = 0; }),
                  errc::invalid_argument});
  rows.push_back(
      {"busy_poll 20 ms", {}, with([](auto& s) { s.busy_poll = 20ms; }), errc::invalid_argument});
  rows.push_back({"replica_sync_attempts 0",
                  {},
                  with([](auto& s) { s.replica_sync_attempts = 0; }),
                  errc::invalid_argument});
  for (const char* url : {"http://127.0.0.1:6379", "redis://127.0.0.1:99999", "redis://:pw@",
                          "redis://127.0.0.1:6379/abc"}) {
    rows.push_back({std::string("URL ") + url,
                    {},
                    with([url](auto& s) { s.url = url; }),
                    errc::invalid_argument});
  }

  // ---- owners: an unlock by someone who holds nothing ----
  rows.push_back({"unlock by a non-owner (another owner holds it)",
                  {{"HSET", "x", c.id() + ":999999", "1"}, {"PEXPIRE", "x", "60000"}},
                  [&] {
                    std::error_code ec;
                    c.lock("x").unlock(ec);
                    return ec;
                  },
                  errc::not_owner});
  rows.push_back(
      {"unlock where a Redisson client holds it",
       {{"HSET", "x", "0f0e0d0c-0b0a-0908-0706-050403020100:1", "1"}, {"PEXPIRE", "x", "60000"}},
       [&] {
         std::promise<std::error_code> got;
         c.lock("x").async_unlock(relock::owner::unique(),
                                  [&](std::error_code ec) { got.set_value(ec); });
         return got.get_future().get();
       },
       errc::not_owner});
  rows.push_back({"unlock of a free lock",
                  {},
                  [&] {
                    std::error_code ec;
                    c.lock("x").unlock(ec);
                    return ec;
                  },
                  errc::not_owner});

  // ---- endpoints: a closed port, a server that is not Redis ----
  static const closed_port closed_server;  // lives as long as the rows that name it
  const std::uint16_t closed = closed_server.port();
  rows.push_back(
      {"a closed port",
       {},
       with([closed](auto& s) { s.url = "redis://127.0.0.1:" + std::to_string(closed); }),
       errc::connection});
  not_redis http;
  rows.push_back(
      {"a server that is not Redis",
       {},
       with([&http](auto& s) { s.url = "redis://127.0.0.1:" + std::to_string(http.port()); }),
       errc::connection});

  std::cout << rows.size() << " rows" << std::endl;
  EXPECT_GE(rows.size(), 40u);
  run_table(server, rows);
}

TEST(bad_inputs, credentials_refused_are_auth_failed_within_100_ms_and_change_nothing) {
  redis_server server(debug_server("s3cret"));
  auto attempt = [&](const std::string& url) {
    relock::config cfg;
    cfg.url = url;
    return error_of([&] { relock::client bad(cfg); });
  };
  const std::string at = "127.0.0.1:" + std::to_string(server.port());
  std::vector<row> rows = {
      {"NOAUTH: no password", {}, [&] { return attempt("redis://" + at); }, errc::auth_failed},
      {"a wrong password", {}, [&] { return attempt("redis://:wrong@" + at); }, errc::auth_failed},
      {"a user that does not exist",
       {},
       [&] { return attempt("redis://nobody:s3cret@" + at); },
       errc::auth_failed}};
  run_table(server, rows);
}

// TLS refused for every reason the issue names, each on a real server with tls-port: a typed
// error, a message naming what is wrong (the certificate's subject and issuer, the name
// expected, the file), never the password or a key's contents.
//
// Each row builds a client: an I/O thread, a TLS context from the files, a handshake. That
// takes 2-45 ms alone under ASan, but 110-175 ms beside other tests on two cores (a CI run), so
// these rows are held to 1 s, not the table's 100 ms. 1 s still proves that no refusal waited
// for a timeout: the shortest one a construction could wait for is the 10 s connect timeout.
constexpr std::chrono::milliseconds tls_refusal_bound = 1s;

TEST(bad_inputs, tls_refusals_are_prompt_typed_errors_that_name_the_cause) {
  const tls_files certificates;
  auto tls_server = [&](const std::string& cert, const std::string& key, bool auth_clients) {
    auto options = debug_server();
    options.tls_cert_file = cert;
    options.tls_key_file = key;
    options.tls_ca_file = certificates.ca();
    options.tls_auth_clients = auth_clients;
    return options;
  };
  const std::string password = "pw-never-shown";
  const std::vector<std::string> secrets = [&] {
    auto s = pem_body(certificates.server_key());
    for (auto& line : pem_body(certificates.client_key())) s.push_back(line);
    s.push_back(password);
    return s;
  }();
  // A client of `server`'s TLS port by `host`, trusting the test CA; `change` spoils it.
  auto refused = [&](const redis_server& server, std::vector<std::string> words,
                     std::function<void(relock::config&)> change) {
    return [&server, &secrets, &certificates, &password, words = std::move(words), change] {
      relock::config cfg;
      cfg.url = "rediss://:" + password + "@localhost:" + std::to_string(server.tls_port());
      cfg.tls.ca_file = certificates.ca();
      change(cfg);
      return refusal_saying(cfg, words, secrets);
    };
  };
  const std::string subject = "CN=relock-server", issuer = "CN=relock-test-ca";

  redis_server server(tls_server(certificates.server_cert(), certificates.server_key(), false));
  const std::string tls_port = std::to_string(server.tls_port());
  const std::string plain_port = std::to_string(server.port());
  temp_dir dir("relock-bad-tls");
  const std::string not_a_key = (dir.path() / "not-a-key.pem").string();
  std::ofstream(not_a_key) << "-----BEGIN PRIVATE KEY-----\nbm90LWEta2V5LWF0LWFsbA==\n"
                              "-----END PRIVATE KEY-----\n";
  std::vector<row> rows = {
      {"TLS: a CA that did not sign the server's certificate",
       {},
       refused(server, {subject, issuer, "not trusted"},
               [&](auto& c) { c.tls.ca_file = certificates.stranger_ca(); }),
       errc::connection},
      {"TLS: an address the certificate does not name",
       {},
       refused(server, {subject, "does not name '127.0.0.1'", "redis.test", "localhost"},
               [&](auto& c) { c.url = "rediss://:" + password + "@127.0.0.1:" + tls_port; }),
       errc::connection},
      {"TLS: a server name the certificate does not carry",
       {},
       refused(server, {subject, "does not name 'other.test'"},
               [&](auto& c) { c.tls.server_name = "other.test"; }),
       errc::connection},
      {"TLS: a plain port behind rediss://",
       {},
       refused(server, {"does not speak TLS", "redis://"},
               [&](auto& c) { c.url = "rediss://:" + password + "@localhost:" + plain_port; }),
       errc::connection},
      {"TLS: the TLS port behind redis://",
       {},
       refused(server, {"TLS port", "rediss://"},
               [&](auto& c) { c.url = "redis://:" + password + "@127.0.0.1:" + tls_port; }),
       errc::connection},
      {"TLS: a CA file that does not exist",
       {},
       refused(server, {"/nonexistent/ca.pem"},
               [&](auto& c) { c.tls.ca_file = "/nonexistent/ca.pem"; }),
       errc::invalid_argument},
      {"TLS: a key file that does not exist",
       {},
       refused(server, {"/nonexistent/client.key"},
               [&](auto& c) {
                 c.tls.cert_file = certificates.client_cert();
                 c.tls.key_file = "/nonexistent/client.key";
               }),
       errc::invalid_argument},
      {"TLS: a key file that cannot be read (a directory)",
       {},
       refused(server, {dir.path().string()},
               [&](auto& c) {
                 c.tls.cert_file = certificates.client_cert();
                 c.tls.key_file = dir.path().string();
               }),
       errc::invalid_argument},
      {"TLS: a key file that holds no usable key",
       {},
       refused(server, {not_a_key},
               [&](auto& c) {
                 c.tls.cert_file = certificates.client_cert();
                 c.tls.key_file = not_a_key;
               }),
       errc::invalid_argument},
      {"TLS: a key that is not the certificate's",
       {},
       refused(server, {certificates.server_key(), certificates.client_cert()},
               [&](auto& c) {
                 c.tls.cert_file = certificates.client_cert();
                 c.tls.key_file = certificates.server_key();
               }),
       errc::invalid_argument},
  };
  run_table(server, rows, tls_refusal_bound);

  redis_server expired(tls_server(certificates.expired_cert(), certificates.expired_key(), false));
  run_table(
      expired,
      {{"TLS: a server certificate that has expired",
        {},
        refused(expired, {"expired", "CN=relock-expired", issuer, "valid from"}, [](auto&) {}),
        errc::connection}},
      tls_refusal_bound);

  redis_server future(
      tls_server(certificates.not_yet_valid_cert(), certificates.not_yet_valid_key(), false));
  run_table(
      future,
      {{"TLS: a server certificate not valid yet",
        {},
        refused(future, {"not yet valid", "CN=relock-future", issuer, "valid from"}, [](auto&) {}),
        errc::connection}},
      tls_refusal_bound);

  redis_server mutual(tls_server(certificates.server_cert(), certificates.server_key(), true));
  run_table(mutual,
            {{"TLS: a server that demands a client certificate, none given",
              {},
              refused(mutual, {"client certificate", "tls_cert"}, [](auto&) {}),
              errc::connection}},
            tls_refusal_bound);
}
