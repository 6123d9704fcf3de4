// SPDX-License-Identifier: Apache-2.0
// Zombie renewals: no watchdog renewal may reach Redis for a hold after that hold's release
// (redisson/redisson#7272: Redisson's renewal can be scheduled after the unlock that should have
// cancelled it, and then renews a released lock for ever).
//
// The server's own order of commands is the judge: a MONITOR connection records every script
// call, and a detector replays them. A renewal naming (key, owner field) after a release of that
// same (key, field), with no acquire of it in between, is a zombie; so is one naming a field of a
// client that had already been destroyed. Each acquisition uses a fresh owner, so a field never
// legitimately comes back once released.
//
// The workload: 20,000 acquisitions over a few contended names, most of them timed out or
// cancelled at random points (a short wait running out, a stop_token, an unlock racing the
// acquire, the client destroyed mid-flight), under a 300 ms watchdog lease so renewals run all
// the time. RELOCK_ZOMBIE_SEED replays a run's random choices (the timings still differ).
#include <gtest/gtest.h>

#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <asio/bind_executor.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <relock/client.hpp>

#include "exec/sha1.hpp"
#include "scripts/scripts.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/wait.hpp"
#include "waiting/lock_kind.hpp"

using namespace std::chrono_literals;
using namespace relock::test;
using relock::errc;

namespace {

// What a MONITOR line says: "<stamp> [<db> <origin>] "arg" "arg" ...".
struct monitor_line {
  std::string stamp;
  std::string origin;  // "0 127.0.0.1:port", or "0 lua" for a command run by a script
  std::vector<std::string> args;
};

// Undoes the server's quoting of one argument (sdscatrepr): \\ \" \n \r \t \a \b \xHH.
std::optional<monitor_line> parse_monitor_line(std::string_view s) {
  const auto open = s.find(" [");
  if (open == std::string_view::npos) return std::nullopt;
  const auto close = s.find("] ", open);
  if (close == std::string_view::npos) return std::nullopt;
  monitor_line line{
      std::string(s.substr(0, open)), std::string(s.substr(open + 2, close - open - 2)), {}};
  std::size_t i = close + 2;
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  while (i < s.size()) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    if (s[i] != '"') return std::nullopt;
    std::string arg;
    ++i;
    for (;;) {
      if (i >= s.size()) return std::nullopt;  // no closing quote
      const char c = s[i++];
      if (c == '"') break;
      if (c != '\\' || i >= s.size()) {
        arg.push_back(c);
        continue;
      }
      const char e = s[i++];
      switch (e) {
        case 'n':
          arg.push_back('\n');
          break;
        case 'r':
          arg.push_back('\r');
          break;
        case 't':
          arg.push_back('\t');
          break;
        case 'a':
          arg.push_back('\a');
          break;
        case 'b':
          arg.push_back('\b');
          break;
        case 'x':
          if (i + 1 < s.size() && hex(s[i]) >= 0 && hex(s[i + 1]) >= 0) {
            arg.push_back(static_cast<char>(hex(s[i]) * 16 + hex(s[i + 1])));
            i += 2;
          } else {
            arg.push_back('x');
          }
          break;
        default:
          arg.push_back(e);  // \\ and \"
      }
    }
    line.args.push_back(std::move(arg));
  }
  return line;
}

// Marker PINGs the test sends through another connection, so the MONITOR stream says where it
// stands: "...gone:<client-id>" once that client is destroyed, any other to know the stream has
// caught up.
constexpr std::string_view gone_marker = "relock-zombie-gone:";

// Replays MONITOR lines in the server's order and finds renewals of released holds. Not
// thread-safe: monitor_tap feeds it under its mutex.
class zombie_detector {
 public:
  zombie_detector() {
    using relock::exec::sha1_hex;
    namespace s = relock::scripts;
    // Every kind this test uses (lock, fenced, spin; non-reentrant too) shares the release and
    // renewal scripts; their acquires all name KEYS[1] and the field in ARGV[2].
    for (auto source : {s::lock_acquire, s::lock_acquire_once, s::fenced_acquire}) {
      roles_[sha1_hex(source)] = role::acquire;
    }
    // The release as the library sends it: its source after release_head.lua.
    roles_[relock::detail::waiting::plain_lock::release.sha] = role::release;
    roles_[sha1_hex(s::lock_renew)] = role::renew;
  }

  void feed(std::string_view text) {
    ++lines_;
    auto line = parse_monitor_line(text);
    if (!line || line->args.empty()) {
      ++unparsed_;
      return;
    }
    // A script's own commands: its call is what counts.
    if (line->origin.ends_with(" lua")) return;
    std::string command = line->args[0];
    for (char& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (command == "ping" && line->args.size() > 1) {
      const std::string& text_arg = line->args[1];
      markers_.insert(text_arg);
      if (text_arg.starts_with(gone_marker)) gone_.insert(text_arg.substr(gone_marker.size()));
      return;
    }
    if (command == "script" && line->args.size() > 2) {
      std::string sub = line->args[1];
      for (char& c : sub) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto loaded = roles_.find(relock::exec::sha1_hex(line->args[2]));
      // A NOSCRIPT answer makes the library load the script and send the call again.
      if (sub == "load" && loaded != roles_.end() && loaded->second == role::renew) {
        renew_loaded_at_ = lines_;
      }
      return;
    }
    std::string sha;
    if (command == "evalsha" && line->args.size() > 2) {
      sha = line->args[1];
      for (char& c : sha) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (command == "eval" && line->args.size() > 2) {
      // After NOSCRIPT the source itself comes: it is known by its digest all the same.
      sha = relock::exec::sha1_hex(line->args[1]);
    } else {
      return;
    }
    auto found = roles_.find(sha);
    if (found == roles_.end()) return;
    const auto& a = line->args;
    const std::size_t nkeys = std::strtoull(a[2].c_str(), nullptr, 10);
    if (a.size() < 3 + nkeys) {
      ++malformed_;
      return;
    }
    const std::vector<std::string> keys(a.begin() + 3, a.begin() + 3 + nkeys);
    const std::vector<std::string> argv(a.begin() + 3 + nkeys, a.end());
    const std::string where = line->stamp + " [" + line->origin + "]";
    switch (found->second) {
      case role::acquire: {
        if (keys.empty() || argv.size() < 2) return void(++malformed_);
        ++acquires_;
        auto& h = holds_[hold_id(keys[0], argv[1])];
        h.events.push_back("acquire " + where);
        h.acquired = true;
        h.released = false;  // a new acquire of the field: renewals are legitimate again
        return;
      }
      case role::release: {
        if (keys.empty() || argv.size() < 3) return void(++malformed_);
        ++releases_;
        auto& h = holds_[hold_id(keys[0], argv[2])];
        h.events.push_back("release " + where);
        h.released = true;
        h.released_at = where;
        h.released_by = line->origin;
        h.released_line = lines_;
        return;
      }
      case role::renew: {
        // ARGV[1] the lease, then ARGV[i + 1] the field held on KEYS[i].
        if (argv.size() != keys.size() + 1) return void(++malformed_);
        ++renewal_calls_;
        for (std::size_t i = 0; i < keys.size(); ++i) {
          const std::string& field = argv[i + 1];
          ++holds_renewed_;
          renewed_fields_.insert(field);
          auto& h = holds_[hold_id(keys[i], field)];
          h.events.push_back("renew (" + std::to_string(keys.size()) + " holds) " + where);
          if (!h.acquired) ++renewed_unacquired_;
          if (h.released) {
            ++zombies_;
            // On the release's own connection the renewal was written after the release; on
            // another, it may have been written before and overtaken by it.
            ++(line->origin == h.released_by ? same_connection_ : other_connection_);
            // The renew script was loaded after the release: this call is the resend of one
            // that met NOSCRIPT, first sent before the release.
            const bool resent = renew_loaded_at_ > h.released_line;
            after_noscript_ += resent ? 1 : 0;
            example(field, "renewal at " + where + " of '" + keys[i] + "' field " + field +
                               " after its release at " + h.released_at +
                               (resent ? " (resent after NOSCRIPT)" : "") +
                               "; its calls: " + join(h.events));
          } else if (gone_.contains(client_of(field))) {
            ++zombies_;
            ++after_gone_;
            example(field, "renewal at " + where + " of '" + keys[i] + "' field " + field +
                               " after its client was destroyed; its calls: " + join(h.events));
          }
        }
        return;
      }
    }
  }

  bool saw(const std::string& marker) const { return markers_.contains(marker); }

  std::size_t lines() const { return lines_; }
  std::size_t unparsed() const { return unparsed_; }
  std::size_t malformed() const { return malformed_; }
  std::size_t acquires() const { return acquires_; }
  std::size_t releases() const { return releases_; }
  std::size_t renewal_calls() const { return renewal_calls_; }
  std::size_t holds_renewed() const { return holds_renewed_; }
  std::size_t zombies() const { return zombies_; }
  std::size_t zombies_after_client_gone() const { return after_gone_; }
  // Zombies after a release, by whether the renewal came on the release's connection.
  std::size_t zombies_same_connection() const { return same_connection_; }
  std::size_t zombies_other_connection() const { return other_connection_; }
  // Zombies after a release that were resends after NOSCRIPT (the script loaded after it).
  std::size_t zombies_after_noscript() const { return after_noscript_; }
  // Renewals of a (key, field) no acquire call ever named: for information.
  std::size_t renewed_unacquired() const { return renewed_unacquired_; }
  const std::set<std::string>& renewed_fields() const { return renewed_fields_; }
  const std::vector<std::string>& examples() const { return examples_; }
  const std::vector<std::string>& zombie_fields() const { return zombie_fields_; }

 private:
  enum class role { acquire, release, renew };
  struct hold_state {
    bool acquired = false;
    bool released = false;
    std::string released_at;
    std::string released_by;  // the connection that sent the release
    std::size_t released_line = 0;
    std::vector<std::string> events;  // its calls, in the server's order
  };

  static std::string hold_id(const std::string& key, const std::string& field) {
    return key + '\0' + field;
  }
  // "<client-id>:<owner-id>": the client's part.
  static std::string client_of(const std::string& field) {
    const auto colon = field.rfind(':');
    return colon == std::string::npos ? std::string() : field.substr(0, colon);
  }
  static std::string join(const std::vector<std::string>& events) {
    std::string all;
    for (const auto& e : events) all += (all.empty() ? "" : ", ") + e;
    return all;
  }
  void example(const std::string& field, std::string text) {
    zombie_fields_.push_back(field);
    if (examples_.size() < 10) examples_.push_back(std::move(text));
  }

  std::unordered_map<std::string, role> roles_;
  std::unordered_map<std::string, hold_state> holds_;
  std::set<std::string> markers_;
  std::set<std::string> gone_;
  std::set<std::string> renewed_fields_;
  std::vector<std::string> examples_;
  std::vector<std::string> zombie_fields_;
  std::size_t lines_ = 0, unparsed_ = 0, malformed_ = 0, acquires_ = 0, releases_ = 0;
  std::size_t renewal_calls_ = 0, holds_renewed_ = 0, zombies_ = 0, after_gone_ = 0;
  std::size_t renewed_unacquired_ = 0, same_connection_ = 0, other_connection_ = 0;
  std::size_t after_noscript_ = 0, renew_loaded_at_ = 0;
};

// A MONITOR connection (hiredis, blocking) read by a thread of its own into a detector. stop()
// shuts the socket down from outside, which ends the blocked read.
class monitor_tap {
 public:
  explicit monitor_tap(const redis_server& server) {
    context_ = redisConnect(server.host().c_str(), server.port());
    if (context_ == nullptr || context_->err) {
      const std::string why = context_ ? context_->errstr : "out of memory";
      if (context_) redisFree(context_);
      throw std::runtime_error("MONITOR connection: " + why);
    }
    auto* r = static_cast<redisReply*>(redisCommand(context_, "MONITOR"));
    const bool ok = r != nullptr && r->type == REDIS_REPLY_STATUS;
    if (r) freeReplyObject(r);
    if (!ok) {
      redisFree(context_);
      throw std::runtime_error("MONITOR refused");
    }
    reader_ = std::thread([this] { read(); });
  }
  ~monitor_tap() {
    stop();
    redisFree(context_);
  }
  monitor_tap(const monitor_tap&) = delete;
  monitor_tap& operator=(const monitor_tap&) = delete;

  void stop() {
    if (!reader_.joinable()) return;
    stopping_ = true;
    ::shutdown(context_->fd, SHUT_RDWR);
    reader_.join();
  }
  // The stream broke before stop(): the verdict would miss lines.
  bool broken() const { return broken_; }

  template <class F>
  auto locked(F f) {
    std::lock_guard guard(mutex_);
    return f(static_cast<const zombie_detector&>(detector_));
  }

 private:
  void read() {
    for (;;) {
      void* raw = nullptr;
      if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) break;
      auto* r = static_cast<redisReply*>(raw);
      if (r->type == REDIS_REPLY_STATUS) {
        std::lock_guard guard(mutex_);
        detector_.feed(std::string_view(r->str, static_cast<std::size_t>(r->len)));
      }
      freeReplyObject(r);
    }
    if (!stopping_) broken_ = true;
  }

  redisContext* context_ = nullptr;
  std::mutex mutex_;
  zombie_detector detector_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> broken_{false};
  std::thread reader_;
};

// Sends a marker through another connection and waits until MONITOR shows it: every command
// the server ran before it has been fed to the detector by then.
bool catch_up(raw_client& raw, monitor_tap& tap, const std::string& marker) {
  raw.command({"PING", marker});
  return wait_until(
      [&] { return tap.locked([&](const zombie_detector& d) { return d.saw(marker); }); }, 20s);
}

void print_detector(const zombie_detector& d) {
  std::cout << "MONITOR lines " << d.lines() << " (unparsed " << d.unparsed()
            << ", malformed calls " << d.malformed() << "); acquire calls " << d.acquires()
            << ", releases " << d.releases() << ", renewal calls " << d.renewal_calls()
            << " renewing " << d.holds_renewed() << " holds (" << d.renewed_fields().size()
            << " distinct fields, " << d.renewed_unacquired()
            << " of a hold no acquire named); zombies " << d.zombies()
            << " (on the release's connection " << d.zombies_same_connection() << ", on another "
            << d.zombies_other_connection() << "; of those, resent after NOSCRIPT "
            << d.zombies_after_noscript() << "; after their client was destroyed "
            << d.zombies_after_client_gone() << ")" << std::endl;
  for (const auto& e : d.examples()) std::cout << "  zombie: " << e << std::endl;
}

// --- The workload -------------------------------------------------------------------------------

// Outcomes, counted on the driver's thread and read by the test's.
struct tally {
  std::atomic<int> started{0}, completed{0};
  std::atomic<int> acquired{0}, timed_out{0}, cancelled_by_stop{0}, cancelled_by_destroy{0},
      errors{0};
  std::atomic<int> unlocked{0}, unlock_not_owner{0}, unlock_lost{0}, unlock_cancelled{0},
      unlock_other{0}, abandoned_holds{0}, long_holds{0};
  std::atomic<int> early_unlocks{0}, early_released{0}, early_not_owner{0}, early_other{0};
  std::atomic<int> extras_pending{0};  // early unlocks not answered yet
  std::atomic<int> holds_lost{0};      // config::on_lock_lost
  std::mutex mutex;
  std::set<std::string> granted;  // every field an acquire reported acquired
  std::map<std::string, int> error_kinds;
  // What the caller did and heard, per field, stamped on the clock MONITOR uses, to tell a
  // zombie's story.
  std::unordered_map<std::string, std::string> story;
};

std::string wall_stamp() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  std::string frac = std::to_string(us % 1'000'000);
  return std::to_string(us / 1'000'000) + "." + std::string(6 - frac.size(), '0') + frac;
}

// One client's share of the acquisitions. Its locks are touched on the driver's thread only, and
// never once `stopping` is set there (the client is destroyed after that).
struct round_state {
  std::vector<relock::mutex> locks;
  int quota = 0;
  bool abrupt = false;  // the client is destroyed with acquisitions under way
  bool stopping = false;
  std::atomic<int> started{0}, completed{0};
};

enum class mode { timeout, stop, hold };

struct attempt {
  std::shared_ptr<round_state> round;
  std::size_t name = 0;
  relock::owner who{0};
  mode how = mode::timeout;
  std::string field;
  bool acquire_done = false;
};

// Runs the acquisitions on one thread of its own (`io`), each worker starting its next
// acquisition when the last one has ended (with its unlock, if it acquired).
class churn {
 public:
  churn(asio::io_context& io, tally& t, std::uint64_t seed) : io_(io), tally_(t), rng_(seed) {}

  void next(const std::shared_ptr<round_state>& r) {
    if (r->stopping || r->started.load() >= r->quota) return;
    ++r->started;
    ++tally_.started;
    auto a = std::make_shared<attempt>();
    a->round = r;
    a->name = pick(0, static_cast<int>(r->locks.size()) - 1);
    a->who = relock::owner::unique();
    a->field = r->locks[a->name].owner_field(a->who);
    const int dice = pick(0, 99);
    a->how = dice < 40 ? mode::timeout : dice < 80 ? mode::stop : mode::hold;
    switch (a->how) {
      case mode::timeout:
        return try_with_timeout(a);
      case mode::stop:
        return lock_until_stopped(a);
      case mode::hold:
        return lock_and_hold(a);
    }
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  void note(const attempt& a, const std::string& what) {
    std::lock_guard guard(tally_.mutex);
    tally_.story[a.field] += wall_stamp() + " " + what + "; ";
  }
  static std::string said(std::error_code ec) { return ec ? ec.message() : "ok"; }
  relock::mutex& lock_of(const attempt& a) { return a.round->locks[a.name]; }

  template <class F>
  void after(std::chrono::milliseconds delay, F f) {
    auto timer = std::make_shared<asio::steady_timer>(io_, delay);
    timer->async_wait([timer, f = std::move(f)](std::error_code) mutable { f(); });
  }

  // (a) A wait that runs out at a random point, sometimes with an unlock racing it.
  void try_with_timeout(const std::shared_ptr<attempt>& a) {
    relock::lock_options o;
    const int wait = pick(0, 20);
    o.wait = std::chrono::milliseconds(wait);
    note(*a, "try_lock, wait " + std::to_string(wait) + " ms");
    lock_of(*a).async_try_lock(a->who, o,
                               asio::bind_executor(io_, [this, a](std::error_code ec, bool got) {
                                 acquire_ended(a, ec, got);
                               }));
    if (pick(0, 3) == 0) {
      after(std::chrono::milliseconds(pick(0, wait)), [this, a] { early_unlock(a); });
    }
  }

  // (b) An unbounded wait ended by its stop_token at a random moment; half the time the caller
  // also unlocks at once, not waiting for the acquire to answer (#7272's interrupted lock and
  // the unlock in its finally block).
  void lock_until_stopped(const std::shared_ptr<attempt>& a) {
    auto stop = std::make_shared<std::stop_source>();
    relock::lock_options o;
    o.stop = stop->get_token();
    note(*a, "lock with a stop_token");
    lock_of(*a).async_lock(a->who, o, asio::bind_executor(io_, [this, a](std::error_code ec) {
                             acquire_ended(a, ec, !ec);
                           }));
    const bool and_unlock = pick(0, 1) == 0;
    auto fire = [this, a, stop, and_unlock] {
      if (a->round->stopping || a->acquire_done) return;
      note(*a, "stop requested");
      stop->request_stop();
      if (and_unlock) early_unlock(a);
    };
    const int delay = pick(0, 10);
    if (delay == 0) return fire();
    after(std::chrono::milliseconds(delay), std::move(fire));
  }

  // (c) A bounded wait; once acquired, a hold that is short, or now and then long enough to
  // meet a renewal tick or three, so the unlock lands at any phase of the watchdog.
  void lock_and_hold(const std::shared_ptr<attempt>& a) {
    relock::lock_options o;
    o.wait = 30ms;
    note(*a, "try_lock to hold, wait 30 ms");
    lock_of(*a).async_try_lock(a->who, o,
                               asio::bind_executor(io_, [this, a](std::error_code ec, bool got) {
                                 acquire_ended(a, ec, got);
                               }));
  }

  void acquire_ended(const std::shared_ptr<attempt>& a, std::error_code ec, bool got) {
    a->acquire_done = true;
    note(*a, "acquire answered: " + said(ec) + (got ? ", acquired" : ", not acquired"));
    if (ec == errc::cancelled) {
      ++(a->round->stopping ? tally_.cancelled_by_destroy : tally_.cancelled_by_stop);
    } else if (ec == errc::timeout || (!ec && !got)) {
      ++tally_.timed_out;
    } else if (ec) {
      ++tally_.errors;
      std::lock_guard guard(tally_.mutex);
      ++tally_.error_kinds[ec.message()];
    } else {
      ++tally_.acquired;
      {
        std::lock_guard guard(tally_.mutex);
        tally_.granted.insert(a->field);
      }
      return hold(a);
    }
    complete(a);
  }

  void hold(const std::shared_ptr<attempt>& a) {
    int ms = pick(0, 5);
    if (a->how == mode::hold && pick(0, 19) == 0) {
      ++tally_.long_holds;
      ms = pick(80, 320);
    }
    if (ms == 0) return unlock(a);
    after(std::chrono::milliseconds(ms), [this, a] { unlock(a); });
  }

  void unlock(const std::shared_ptr<attempt>& a) {
    if (a->round->stopping) {
      // Its client is gone: the hold is left to expire, unrenewed.
      ++tally_.abandoned_holds;
      return complete(a);
    }
    note(*a, "unlock");
    lock_of(*a).async_unlock(a->who, asio::bind_executor(io_, [this, a](std::error_code ec) {
                               note(*a, "unlock answered: " + said(ec));
                               if (!ec) {
                                 ++tally_.unlocked;
                               } else if (ec == errc::not_owner) {
                                 ++tally_.unlock_not_owner;  // an early unlock released it
                               } else if (ec == errc::lock_lost) {
                                 ++tally_.unlock_lost;
                               } else if (ec == errc::cancelled) {
                                 ++tally_.unlock_cancelled;
                               } else {
                                 ++tally_.unlock_other;
                               }
                               complete(a);
                             }));
  }

  // An unlock sent while the owner's acquire is still under way.
  void early_unlock(const std::shared_ptr<attempt>& a) {
    if (a->round->stopping || a->acquire_done) return;
    ++tally_.early_unlocks;
    ++tally_.extras_pending;
    note(*a, "early unlock");
    lock_of(*a).async_unlock(a->who, asio::bind_executor(io_, [this, a](std::error_code ec) {
                               note(*a, "early unlock answered: " + said(ec));
                               if (!ec) {
                                 ++tally_.early_released;
                               } else if (ec == errc::not_owner) {
                                 ++tally_.early_not_owner;
                               } else {
                                 ++tally_.early_other;
                               }
                               --tally_.extras_pending;
                             }));
  }

  void complete(const std::shared_ptr<attempt>& a) {
    ++a->round->completed;
    ++tally_.completed;
    next(a->round);
  }

  asio::io_context& io_;
  tally& tally_;
  std::mt19937_64 rng_;
};

std::uint64_t seed_of_run() {
  if (const char* s = std::getenv("RELOCK_ZOMBIE_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

// Runs `f` on the driver's thread and waits for it: afterwards no handler of the driver is
// half-way through a call into the client.
template <class F>
void on_driver(asio::io_context& io, F f) {
  std::promise<void> done;
  asio::post(io, [&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}

constexpr int total_acquisitions = 20'000;
constexpr int rounds = 5;
constexpr int workers = 16;
constexpr auto lease = 300ms;

TEST(zombie_renewal, no_renewal_reaches_redis_after_an_unlock) {
  const auto began = std::chrono::steady_clock::now();
  redis_server server;
  monitor_tap tap(server);
  auto raw = raw_client::to(server);
  tally t;

  // Declared before any client: relock posts completions to it until the client is gone.
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread driver_thread([&] { io.run(); });
  const std::uint64_t seed = seed_of_run();
  std::cout << "seed " << seed << " (RELOCK_ZOMBIE_SEED)" << std::endl;
  churn driver(io, t, seed);

  relock::config settings = settings_for(server);
  settings.watchdog_lease = lease;  // a renewal every 100 ms
  settings.on_lock_lost = [&t](std::string_view, std::string_view, std::error_code) {
    ++t.holds_lost;
  };

  const std::vector<std::string> names = {"zr:plain-a", "zr:plain-b", "zr:fenced", "zr:spin"};
  for (int round = 0; round < rounds; ++round) {
    auto client = std::make_unique<relock::client>(settings);
    auto r = std::make_shared<round_state>();
    r->locks = {client->lock(names[0]), client->lock(names[1]), client->fenced_lock(names[2]),
                client->spin_lock(names[3])};
    r->quota = total_acquisitions / rounds;
    // All rounds but the last end by destroying the client under way (d).
    r->abrupt = round + 1 < rounds;
    asio::post(io, [&driver, r] {
      for (int w = 0; w < workers; ++w) driver.next(r);
    });
    const bool ended = r->abrupt
                           ? wait_until([&] { return r->started.load() >= r->quota; }, 120s)
                           : wait_until([&] { return r->completed.load() >= r->quota; }, 120s);
    ASSERT_TRUE(ended) << "round " << round << ": started " << r->started.load() << ", completed "
                       << r->completed.load();
    on_driver(io, [&] {
      r->stopping = true;
      r->locks.clear();
    });
    const std::string id = client->id();
    client.reset();
    // Whatever the destroyed client wrote before it closed its sockets has run by now.
    std::this_thread::sleep_for(100ms);
    raw.command({"PING", std::string(gone_marker) + id});
  }
  // Every acquisition (and early unlock) has its answer: the destroyed clients gave theirs.
  ASSERT_TRUE(wait_until(
      [&] { return t.completed.load() == t.started.load() && t.extras_pending.load() == 0; }, 30s))
      << "completed " << t.completed.load() << " of " << t.started.load();
  work.reset();
  driver_thread.join();

  // Holds the abrupt rounds left behind expire within a lease, unless something renews them.
  const bool keys_gone = wait_until(
      [&] {
        for (const auto& n : names) {
          if (raw.command({"EXISTS", n}).integer != 0) return false;
        }
        return true;
      },
      lease * 5);
  // A renewal period and more for the last of them to reach MONITOR, then the marker.
  std::this_thread::sleep_for(lease / 2);
  ASSERT_TRUE(catch_up(raw, tap, "relock-zombie-end"));
  tap.stop();
  ASSERT_FALSE(tap.broken());

  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  std::cout << "acquisitions " << t.started.load() << " (" << rounds << " clients, " << workers
            << " in flight): acquired " << t.acquired.load() << ", timed out " << t.timed_out.load()
            << ", cancelled by stop_token " << t.cancelled_by_stop.load()
            << ", cancelled by client destruction " << t.cancelled_by_destroy.load() << ", errors "
            << t.errors.load() << std::endl;
  for (const auto& [what, n] : t.error_kinds)
    std::cout << "  error " << what << ": " << n << std::endl;
  std::cout << "unlocks: released " << t.unlocked.load() << ", not_owner "
            << t.unlock_not_owner.load() << ", lock_lost " << t.unlock_lost.load() << ", cancelled "
            << t.unlock_cancelled.load() << ", other " << t.unlock_other.load()
            << "; holds abandoned to a destroyed client " << t.abandoned_holds.load()
            << "; long holds " << t.long_holds.load() << "; holds lost (on_lock_lost) "
            << t.holds_lost.load() << std::endl;
  std::cout << "unlocks racing their own acquire " << t.early_unlocks.load() << ": released "
            << t.early_released.load() << ", not_owner " << t.early_not_owner.load() << ", other "
            << t.early_other.load() << std::endl;

  tap.locked([&](const zombie_detector& d) {
    print_detector(d);
    std::size_t never_granted = 0;
    for (const auto& f : d.renewed_fields()) never_granted += t.granted.contains(f) ? 0 : 1;
    std::cout << "renewed fields whose acquire was not reported acquired: " << never_granted
              << std::endl;
    std::size_t after_early_unlock = 0;
    for (const auto& f : d.zombie_fields()) {
      after_early_unlock += t.story[f].find("early unlock") != std::string::npos ? 1 : 0;
    }
    std::cout << "zombies whose owner also unlocked while its acquire was under way: "
              << after_early_unlock << " of " << d.zombie_fields().size() << std::endl;
    for (std::size_t i = 0; i < d.zombie_fields().size() && i < 10; ++i) {
      std::cout << "  caller's side of " << d.zombie_fields()[i] << ": "
                << t.story[d.zombie_fields()[i]] << std::endl;
    }
    std::cout << "elapsed " << elapsed.count() << " ms" << std::endl;

    EXPECT_EQ(d.zombies(), 0u) << "renewals after a release (or after their client's end)";
    // The run must have been able to see one: renewals did run, and releases too.
    EXPECT_GT(d.renewal_calls(), 50u);
    EXPECT_GT(d.releases(), 1000u);
    EXPECT_EQ(d.malformed(), 0u);
  });
  EXPECT_EQ(t.started.load(), total_acquisitions);
  EXPECT_EQ(t.completed.load(), total_acquisitions);
  EXPECT_TRUE(keys_gone) << "a lock key outlived every holder by more than its lease";
}

// The detector can fail: a release, then a renewal of the same field sent by hand, is exactly
// one zombie; a renewal after a new acquire of the field, or of a field never acquired, is not.
TEST(zombie_renewal, the_detector_sees_a_renewal_sent_after_a_release) {
  redis_server server;
  monitor_tap tap(server);
  auto raw = raw_client::to(server);
  using relock::exec::sha1_hex;
  namespace s = relock::scripts;
  const std::string_view release_source = relock::detail::waiting::plain_lock::release.source;
  for (auto source : {s::lock_acquire, release_source, s::lock_renew}) {
    ASSERT_EQ(raw.command({"SCRIPT", "LOAD", std::string(source)}).str, sha1_hex(source));
  }
  const std::string acquire = sha1_hex(s::lock_acquire), renew = sha1_hex(s::lock_renew);
  const auto take = [&](const std::string& key, const std::string& field) {
    EXPECT_TRUE(raw.command({"EVALSHA", acquire, "1", key, "300000", field}).is_nil());
  };
  const auto release_by_source = [&](const std::string& key, const std::string& field) {
    // EVAL with the source, as the library's fallback after NOSCRIPT sends it.
    EXPECT_EQ(raw.command({"EVAL", std::string(release_source), "3", key, "ch:" + key,
                           "latch:" + field, "0", "300000", field, "PUBLISH", "1000"})
                  .integer,
              1);
  };

  take("k1", "c:1");
  raw.command({"EVALSHA", renew, "1", "k1", "300000", "c:1"});  // while held: fine
  take("k2", "c:2");
  release_by_source("k2", "c:2");
  take("k2", "c:2");  // the same field again: its renewals are legitimate once more
  release_by_source("k1", "c:1");
  // One call renewing both: k1's field was released (the zombie), k2's was taken again.
  raw.command({"EVALSHA", renew, "2", "k1", "k2", "300000", "c:1", "c:2"});
  raw.command({"EVALSHA", renew, "1", "k3", "300000", "c:3"});  // never acquired: not a zombie
  ASSERT_TRUE(catch_up(raw, tap, "sanity-end"));
  tap.stop();

  tap.locked([](const zombie_detector& d) {
    print_detector(d);
    EXPECT_EQ(d.zombies(), 1u);
    EXPECT_EQ(d.zombies_same_connection(), 1u);
    EXPECT_EQ(d.renewal_calls(), 3u);
    EXPECT_EQ(d.holds_renewed(), 4u);
    EXPECT_EQ(d.releases(), 2u);
    EXPECT_EQ(d.acquires(), 3u);
    EXPECT_EQ(d.renewed_unacquired(), 1u);
    EXPECT_EQ(d.malformed(), 0u);
    ASSERT_EQ(d.examples().size(), 1u);
    EXPECT_NE(d.examples()[0].find("'k1' field c:1"), std::string::npos) << d.examples()[0];
  });
}

// The line reader undoes the server's quoting, skips a script's own commands, and a renewal
// of a field whose client was reported destroyed is a zombie too.
TEST(zombie_renewal, the_detector_reads_quoted_lines_and_destroyed_clients) {
  const auto parsed = parse_monitor_line(R"(1.5 [0 127.0.0.1:1] "set" "a\"b\\c\x01" "")");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->origin, "0 127.0.0.1:1");
  EXPECT_EQ(parsed->args, (std::vector<std::string>{"set", "a\"b\\c\x01", ""}));

  const std::string renew = relock::exec::sha1_hex(relock::scripts::lock_renew);
  const std::string call =
      R"(2.0 [0 127.0.0.1:2] "evalsha" ")" + renew + R"(" "1" "k" "300" "00000000-aaaa:7")";
  zombie_detector d;
  d.feed(R"(1.0 [0 lua] "pexpire" "k" "300")");
  d.feed(call);  // the client still lives
  d.feed(R"(1.9 [0 127.0.0.1:3] "ping" "relock-zombie-gone:00000000-aaaa")");
  d.feed(call);
  EXPECT_EQ(d.renewal_calls(), 2u);
  EXPECT_EQ(d.zombies(), 1u);
  EXPECT_EQ(d.zombies_after_client_gone(), 1u);
  EXPECT_EQ(d.unparsed(), 0u);
}

}  // namespace
