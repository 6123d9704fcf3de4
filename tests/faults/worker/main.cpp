// SPDX-License-Identifier: Apache-2.0
// relock_fault_worker: one process of the fault suite. A relock client (public API only) whose
// threads take locks over a few names (fenced or plain reentrant, each hold with an owner of its
// own, or with reuse_owners=1 the thread's own owner for every hold, as applications that lock
// from a thread without naming an owner do), write the register while they believe they hold
// them, and release; every step goes to the process's history file (HISTORY.md). Runs until its
// end time, then exits 0; the harness may kill, stop or starve it at any moment. With
// redlock=URL,URL every hold is a red_lock over `url` and those servers instead, with a fixed
// lease, believed held for the validity its acquire returned.
//
//   relock_fault_worker url=redis://... register=127.0.0.1:PORT names=a,b,c process=w1
//                       out=DIR/w1.jsonl until_ns=T [threads=4] [fenced_percent=80] ...
#include <relock/client.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/fenced_register.hpp"
#include "support/history.hpp"

using namespace std::chrono_literals;
using relock::test::event;
using relock::test::monotonic_ns;

namespace {

struct options {
  std::string url;
  std::string register_host = "127.0.0.1";
  std::uint16_t register_port = 0;
  std::vector<std::string> names;
  std::string process = "w";
  std::string out;
  std::int64_t until_ns = 0;
  int threads = 4;
  int fenced_percent = 80;
  int wait_max_ms = 400;
  int hold_max_ms = 2;
  int lease_ms = 0;  // 0: the watchdog's lease, renewed
  int watchdog_lease_ms = 1500;
  int command_timeout_ms = 500;
  int write_margin_ms = 30;  // a write needs this much validity left
  std::uint64_t seed = 1;
  std::int64_t stop_at_token = 0;    // stop once a fenced acquire hands out this token (0: never)
  int writes_max = 2;                // writes per hold: 1 to this
  std::string stop_file;             // stop once this file exists
  bool reuse_owners = false;         // every hold of a thread has the thread's owner
  std::vector<std::string> redlock;  // the other servers of a red_lock (empty: plain locks)
};

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, by);) out.push_back(part);
  return out;
}

options parse(int argc, char** argv) {
  options o;
  std::map<std::string, std::string> kv;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("not key=value: " + a);
    kv[a.substr(0, eq)] = a.substr(eq + 1);
  }
  auto num = [&](const char* k, auto& into) {
    if (auto it = kv.find(k); it != kv.end()) into = std::stoll(it->second);
  };
  o.url = kv.at("url");
  const auto reg = split(kv.at("register"), ':');
  o.register_host = reg.at(0);
  o.register_port = static_cast<std::uint16_t>(std::stoi(reg.at(1)));
  o.names = split(kv.at("names"), ',');
  o.process = kv.at("process");
  o.out = kv.at("out");
  num("until_ns", o.until_ns);
  num("threads", o.threads);
  num("fenced_percent", o.fenced_percent);
  num("wait_max_ms", o.wait_max_ms);
  num("hold_max_ms", o.hold_max_ms);
  num("lease_ms", o.lease_ms);
  num("watchdog_lease_ms", o.watchdog_lease_ms);
  num("command_timeout_ms", o.command_timeout_ms);
  num("write_margin_ms", o.write_margin_ms);
  num("seed", o.seed);
  num("stop_at_token", o.stop_at_token);
  num("writes_max", o.writes_max);
  if (auto it = kv.find("stop_file"); it != kv.end()) o.stop_file = it->second;
  if (auto it = kv.find("reuse_owners"); it != kv.end()) o.reuse_owners = it->second == "1";
  if (auto it = kv.find("redlock"); it != kv.end()) o.redlock = split(it->second, ',');
  return o;
}

std::string error_name(std::error_code ec) {
  if (ec.category() != relock::error_category()) return ec.message();
  switch (static_cast<relock::errc>(ec.value())) {
    case relock::errc::invalid_argument:
      return "invalid_argument";
    case relock::errc::not_owner:
      return "not_owner";
    case relock::errc::timeout:
      return "timeout";
    case relock::errc::lock_lost:
      return "lock_lost";
    case relock::errc::connection:
      return "connection";
    case relock::errc::auth_failed:
      return "auth_failed";
    case relock::errc::server_error:
      return "server_error";
    case relock::errc::wrong_type:
      return "wrong_type";
    case relock::errc::non_reentrant:
      return "non_reentrant";
    case relock::errc::cancelled:
      return "cancelled";
    case relock::errc::would_deadlock:
      return "would_deadlock";
    case relock::errc::renewal_failed:
      return "renewal_failed";
    case relock::errc::no_synced_replicas:
      return "no_synced_replicas";
    case relock::errc::not_initialized:
      return "not_initialized";
    case relock::errc::no_permission:
      return "no_permission";
    case relock::errc::not_acquired:
      return "not_acquired";
  }
  return ec.message();
}

std::int64_t ns_of(std::chrono::steady_clock::time_point t) {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC: the same numbers as monotonic_ns().
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

class worker {
 public:
  // `clients`: the lock server's, then each red_lock server's (redlock=).
  worker(options o, std::vector<std::unique_ptr<relock::client>>& clients,
         relock::test::history& history)
      : o_(std::move(o)), clients_(clients), client_(*clients.front()), history_(history) {}

  void run(int thread) {
    std::mt19937_64 rng(o_.seed * 1000 + static_cast<std::uint64_t>(thread));
    std::optional<relock::test::fenced_register> reg;
    std::int64_t seq = 0;
    while (monotonic_ns() < o_.until_ns && !stop_ && !told_to_stop()) {
      try {
        if (!reg) {
          reg.emplace(relock::test::raw_client(o_.register_host, o_.register_port, {}, {}, 2s));
        }
        if (o_.redlock.empty()) {
          one_hold(thread, rng, *reg, seq);
        } else {
          one_redlock_hold(thread, rng, *reg, seq);
        }
      } catch (const std::exception& e) {
        // The register never fails on purpose; say so and go on with a fresh connection.
        history_.append(thread, event("error", "info").str("what", e.what()));
        reg.reset();
        std::this_thread::sleep_for(10ms);
      }
    }
  }

 private:
  bool told_to_stop() const {
    return !o_.stop_file.empty() && ::access(o_.stop_file.c_str(), F_OK) == 0;
  }

  int uniform(std::mt19937_64& rng, int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }

  void one_hold(int thread, std::mt19937_64& rng, relock::test::fenced_register& reg,
                std::int64_t& seq) {
    const std::string name =
        o_.names[static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(o_.names.size()) - 1))];
    const bool fenced = uniform(rng, 1, 100) <= o_.fenced_percent;
    const relock::owner who =
        o_.reuse_owners ? relock::owner::current_thread() : relock::owner::unique();
    relock::fenced_lock lk = client_.fenced_lock(name);
    relock::mutex plain = client_.lock(name);
    relock::mutex& handle = fenced ? static_cast<relock::mutex&>(lk) : plain;
    // The history names each hold by its owner field; a reused owner's holds are told apart by
    // a count after it, which the checker treats as another owner (HISTORY.md).
    const std::string owner =
        handle.owner_field(who) + (o_.reuse_owners ? "/" + std::to_string(++holds_) : "");
    // Never past the end: the harness waits for every worker to stop by then.
    const auto left = std::max<std::int64_t>(0, (o_.until_ns - monotonic_ns()) / 1'000'000);
    const auto wait =
        std::chrono::milliseconds(std::min<std::int64_t>(uniform(rng, 0, o_.wait_max_ms), left));

    history_.append(thread, event("acquire", "invoke")
                                .str("name", name)
                                .str("kind", fenced ? "fenced" : "reentrant")
                                .str("owner", owner)
                                .integer("wait_until", monotonic_ns() + wait / 1ns));
    relock::lock_options opts;
    opts.wait = wait;
    if (o_.lease_ms > 0) opts.lease = std::chrono::milliseconds(o_.lease_ms);
    opts.on_lost = [this, thread, name, owner](std::error_code why) {
      history_.append(
          thread,
          event("lost", "info").str("name", name).str("owner", owner).str("err", error_name(why)));
    };
    std::promise<std::pair<std::error_code, std::optional<std::int64_t>>> got;
    if (fenced) {
      lk.async_try_lock_and_get_token(who, std::move(opts),
                                      [&](std::error_code ec, std::optional<std::int64_t> t) {
                                        got.set_value({ec, t});
                                      });
    } else {
      plain.async_try_lock(who, std::move(opts), [&](std::error_code ec, bool acquired) {
        got.set_value({ec, acquired ? std::optional<std::int64_t>(0) : std::nullopt});
      });
    }
    auto [ec, token] = got.get_future().get();
    if (ec || !token) {
      history_.append(thread, event("acquire", "fail")
                                  .str("name", name)
                                  .str("owner", owner)
                                  .str("err", ec ? error_name(ec) : "timeout"));
      return;
    }
    const std::optional<std::int64_t> fence =
        fenced ? token : std::optional<std::int64_t>(std::nullopt);
    if (fence && o_.stop_at_token > 0 && *fence >= o_.stop_at_token) stop_ = true;
    auto valid = handle.valid_until(who);
    std::int64_t valid_ns = valid ? ns_of(*valid) : monotonic_ns();
    history_.append(thread, event("acquire", "ok")
                                .str("name", name)
                                .str("owner", owner)
                                .optional_integer("token", fence)
                                .integer("valid_until", valid_ns));

    const int writes = uniform(rng, 1, o_.writes_max);
    for (int i = 0; i < writes; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(uniform(rng, 0, o_.hold_max_ms * 500)));
      valid = handle.valid_until(who);
      if (!valid) break;  // lost: nothing more to write
      if (ns_of(*valid) != valid_ns) {
        valid_ns = ns_of(*valid);
        history_.append(thread, event("valid", "info")
                                    .str("name", name)
                                    .str("owner", owner)
                                    .integer("valid_until", valid_ns));
      }
      if (valid_ns - monotonic_ns() < o_.write_margin_ms * 1'000'000LL) break;
      write(thread, reg, name, owner, fence, ++seq, valid_ns);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(uniform(rng, 0, o_.hold_max_ms * 500)));

    history_.append(thread, event("release", "invoke").str("name", name).str("owner", owner));
    std::promise<std::error_code> released;
    handle.async_unlock(who, [&](std::error_code e) { released.set_value(e); });
    const std::error_code rec = released.get_future().get();
    event done = rec ? event("release", "fail") : event("release", "ok");
    done.str("name", name).str("owner", owner);
    if (rec) done.str("err", error_name(rec));
    history_.append(thread, done);
  }

  // A red_lock hold: plain locks of one name on every server, a fixed lease, no renewal. Its
  // belief is what an application has: from the moment the acquire's answer arrives, for the
  // validity it reports (README: "how long the hold is good for, from now").
  void one_redlock_hold(int thread, std::mt19937_64& rng, relock::test::fenced_register& reg,
                        std::int64_t& seq) {
    const std::string name =
        o_.names[static_cast<std::size_t>(uniform(rng, 0, static_cast<int>(o_.names.size()) - 1))];
    const relock::owner who =
        o_.reuse_owners ? relock::owner::current_thread() : relock::owner::unique();
    std::vector<relock::mutex> members;
    for (auto& c : clients_) members.push_back(c->lock(name));
    relock::red_lock red(std::move(members));
    const std::string owner = red.members().front().owner_field(who) +
                              (o_.reuse_owners ? "/" + std::to_string(++holds_) : "");
    const auto left = std::max<std::int64_t>(0, (o_.until_ns - monotonic_ns()) / 1'000'000);
    const auto wait =
        std::chrono::milliseconds(std::min<std::int64_t>(uniform(rng, 0, o_.wait_max_ms), left));
    history_.append(thread, event("acquire", "invoke")
                                .str("name", name)
                                .str("kind", "redlock")
                                .str("owner", owner)
                                .integer("wait_until", monotonic_ns() + wait / 1ns));
    relock::lock_options opts;
    opts.wait = wait;
    opts.lease = std::chrono::milliseconds(o_.lease_ms > 0 ? o_.lease_ms : 1000);
    opts.on_lost = [this, thread, name, owner](std::error_code why) {
      history_.append(
          thread,
          event("lost", "info").str("name", name).str("owner", owner).str("err", error_name(why)));
    };
    struct outcome {
      std::error_code ec;
      relock::redlock_result r;
      std::int64_t heard_ns;  // when the answer arrived: the validity counts from here
    };
    std::promise<outcome> got;
    red.async_acquire(who, std::move(opts), [&](std::error_code ec, relock::redlock_result r) {
      got.set_value({ec, r, monotonic_ns()});
    });
    const outcome out = got.get_future().get();
    if (out.ec || !out.r.acquired) {
      history_.append(thread, event("acquire", "fail")
                                  .str("name", name)
                                  .str("owner", owner)
                                  .str("err", out.ec ? error_name(out.ec) : "timeout"));
      return;
    }
    const std::int64_t valid_ns = out.heard_ns + out.r.validity / 1ns;
    history_.append(thread, event("acquire", "ok")
                                .str("name", name)
                                .str("owner", owner)
                                .optional_integer("token", std::nullopt)
                                .integer("valid_until", valid_ns)
                                .integer("members", static_cast<std::int64_t>(out.r.members_held)));
    const int writes = uniform(rng, 1, o_.writes_max);
    for (int i = 0; i < writes; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(uniform(rng, 0, o_.hold_max_ms * 500)));
      if (valid_ns - monotonic_ns() < o_.write_margin_ms * 1'000'000LL) break;
      write(thread, reg, name, owner, std::nullopt, ++seq, valid_ns);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(uniform(rng, 0, o_.hold_max_ms * 500)));
    history_.append(thread, event("release", "invoke").str("name", name).str("owner", owner));
    std::promise<std::error_code> released;
    red.async_unlock(who, [&](std::error_code e, std::vector<relock::member_failure>) {
      released.set_value(e);
    });
    const std::error_code rec = released.get_future().get();
    event done = rec ? event("release", "fail") : event("release", "ok");
    done.str("name", name).str("owner", owner);
    if (rec) done.str("err", error_name(rec));
    history_.append(thread, done);
  }

  void write(int thread, relock::test::fenced_register& reg, const std::string& name,
             const std::string& owner, std::optional<std::int64_t> token, std::int64_t seq,
             std::int64_t valid_ns) {
    history_.append(thread, event("write", "invoke")
                                .str("name", name)
                                .str("owner", owner)
                                .optional_integer("token", token)
                                .integer("seq", seq)
                                .integer("valid_until", valid_ns));
    const std::string id = owner + "#" + std::to_string(seq);
    try {
      const std::string read_id = reg.read(name, token.has_value());
      bool accepted = true;
      if (token) {
        accepted = reg.write_fenced(name, *token, id, read_id);
      } else {
        reg.write_plain(name, id, read_id);
      }
      history_.append(thread, event("write", "ok")
                                  .str("name", name)
                                  .str("owner", owner)
                                  .optional_integer("token", token)
                                  .integer("seq", seq)
                                  .boolean("accepted", accepted));
    } catch (const std::exception& e) {
      history_.append(thread, event("write", "fail")
                                  .str("name", name)
                                  .str("owner", owner)
                                  .optional_integer("token", token)
                                  .integer("seq", seq)
                                  .str("err", e.what()));
      throw;
    }
  }

  options o_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> holds_{0};  // a reused owner's holds, numbered
  std::vector<std::unique_ptr<relock::client>>& clients_;
  relock::client& client_;
  relock::test::history& history_;
};

// The lock server may be down when a replacement worker starts: keep trying until the end.
std::unique_ptr<relock::client> connect(const options& o, const std::string& url,
                                        relock::test::history& history) {
  relock::config c;
  c.url = url;
  c.watchdog_lease = std::chrono::milliseconds(o.watchdog_lease_ms);
  c.command_timeout = std::chrono::milliseconds(o.command_timeout_ms);
  while (monotonic_ns() < o.until_ns) {
    try {
      return std::make_unique<relock::client>(c);
    } catch (const relock::error& e) {
      history.append(0, event("connect", "fail").str("err", error_name(e.code())));
      std::this_thread::sleep_for(100ms);
    }
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const options o = parse(argc, argv);
    relock::test::history history(o.out, o.process);
    history.append(0, event("start", "info").integer("pid", getpid()));
    std::vector<std::unique_ptr<relock::client>> clients;
    for (const auto& url : [&] {
           std::vector<std::string> urls{o.url};
           urls.insert(urls.end(), o.redlock.begin(), o.redlock.end());
           return urls;
         }()) {
      clients.push_back(connect(o, url, history));
      if (!clients.back()) return 0;
    }
    worker w(o, clients, history);
    std::vector<std::thread> threads;
    for (int t = 0; t < o.threads; ++t) threads.emplace_back([&w, t] { w.run(t); });
    for (auto& t : threads) t.join();
    history.append(0, event("end", "info"));
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "relock_fault_worker: " << e.what() << std::endl;
    return 2;
  }
}
