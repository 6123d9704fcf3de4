// SPDX-License-Identifier: Apache-2.0
// The four things `relock run` can hold, behind run_target.
#include <iostream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <asio/use_future.hpp>

#include "redlock_servers.hpp"
#include "run_target.hpp"

namespace relock_cli {
namespace {

using std::chrono::milliseconds;

// A client constructed in place from connect()'s result (clients do not move).
struct connected {
  connected(const global_options& g, relock::config settings)
      : client(connect(g, std::move(settings))) {}
  relock::client client;
};

// NAME: one lock. A fenced lock keeps its own type: it is acquired through the calls that
// hand back the acquisition's token.
class single_lock final : public run_target {
 public:
  single_lock(const global_options& g, const run_options& o)
      : g_(g), at_(g, make_config(g)), name_(o.name), lock_(make(at_.client, o)) {}

  std::string name() const override { return name_; }
  std::string where() const override { return shown_url(g_.url); }

  acquisition acquire(relock::owner me, relock::lock_options options, bool bounded) override {
    using asio::use_future;
    if (auto* fenced = std::get_if<relock::fenced_lock>(&lock_)) {
      if (!bounded) {
        return {true, fenced->async_lock_and_get_token(me, std::move(options), use_future).get()};
      }
      const auto token =
          fenced->async_try_lock_and_get_token(me, std::move(options), use_future).get();
      return {token.has_value(), token};
    }
    if (!bounded) {
      plain().async_lock(me, std::move(options), use_future).get();
      return {true, std::nullopt};
    }
    return {plain().async_try_lock(me, std::move(options), use_future).get(), std::nullopt};
  }

  std::optional<time_point> lease_end(relock::owner, milliseconds lease) override {
    const auto asked = std::chrono::steady_clock::now();
    try {
      const auto left = plain().remaining_lease().value_or(milliseconds(0));
      if (left == milliseconds::max()) return std::nullopt;  // no expiry: nothing to stop
      return asked + left;
    } catch (const relock::error&) {
      return asked + lease;  // the PTTL did not come back: the lease as we asked it
    }
  }

  void unlock(std::error_code& ec) noexcept override { plain().unlock(ec); }

  // Several readers are not "another owner": they are named, so a writer that gives up knows
  // whom it waited for (readers that keep coming go first, as with Redisson: README).
  std::string busy() const override {
    std::vector<std::string> readers;
    try {
      for (const auto& h : at_.client.inspect(name_).holders) {
        if (h.side == relock::hold_side::read) readers.push_back(h.owner);
      }
    } catch (const relock::error&) {
      // Gone or unreadable now: the plain words say enough.
    }
    if (readers.size() < 2) return run_target::busy();
    std::string list;
    for (std::size_t i = 0; i < readers.size(); ++i) list += (i ? ", " : "") + readers[i];
    return "'" + name_ + "' is held by " + std::to_string(readers.size()) + " readers (" + list +
           ")";
  }

 private:
  using held = std::variant<relock::mutex, relock::fenced_lock>;
  static held make(relock::client& c, const run_options& o) {
    if (kind_of(o) == "fenced") return c.fenced_lock(o.name);
    return lock_of(c, o.name, o);
  }
  relock::mutex& plain() {
    return std::visit([](relock::mutex& l) -> relock::mutex& { return l; }, lock_);
  }

  const global_options& g_;
  connected at_;
  std::string name_;
  held lock_;
};

// --all and --redlock: a set of locks (relock::multi_lock, relock::red_lock).
template <class Set>
class lock_set final : public run_target {
 public:
  lock_set(std::string name, std::string where,
           std::vector<std::unique_ptr<relock::client>> clients, Set set)
      : name_(std::move(name)),
        where_(std::move(where)),
        clients_(std::move(clients)),
        set_(std::move(set)) {}

  std::string name() const override { return name_; }
  std::string where() const override { return where_; }

  acquisition acquire(relock::owner me, relock::lock_options options, bool bounded) override {
    if (!bounded) {
      set_.async_lock(me, std::move(options), asio::use_future).get();
      return {true, std::nullopt};
    }
    return {set_.async_try_lock(me, std::move(options), asio::use_future).get(), std::nullopt};
  }

  std::optional<time_point> lease_end(relock::owner me, milliseconds lease) override {
    // The set's validity from its members' own: the earliest member's (multi-lock), or when
    // fewer than a quorum would remain (red_lock).
    return set_.valid_until(me).value_or(std::chrono::steady_clock::now() + lease);
  }

  void unlock(std::error_code& ec) noexcept override { set_.unlock(ec); }

 private:
  std::string name_;
  std::string where_;
  std::vector<std::unique_ptr<relock::client>> clients_;  // before set_: its locks need them
  Set set_;
};

// --semaphore N NAME: one permit of the permit-expirable semaphore NAME (Redisson's
// RPermitExpirableSemaphore), made with N permits when NAME holds nothing, so at most N commands
// run at once across the fleet. Without --lease the client's watchdog renews the permit, so one
// whose relock died comes back a watchdog lease later.
class semaphore_permit final : public run_target {
 public:
  semaphore_permit(const global_options& g, const run_options& o)
      : g_(g),
        at_(g, make_config(g)),
        name_(o.name),
        permits_(*o.semaphore),
        semaphore_(at_.client.permit_expirable_semaphore(o.name)) {}

  std::string name() const override { return name_; }
  std::string where() const override { return shown_url(g_.url); }

  acquisition acquire(relock::owner, relock::lock_options options, bool bounded) override {
    set_up();
    relock::permit_options p;
    p.lease = options.lease;
    p.stop = std::move(options.stop);
    p.on_lost = std::move(options.on_lost);
    if (bounded) p.wait = options.wait.value_or(milliseconds(0));  // none: -n, one try
    auto id = semaphore_.async_acquire(std::move(p), asio::use_future).get();
    if (!id) return {};
    permit_ = std::move(*id);
    return {true, std::nullopt, permit_.id()};
  }

  // The permit's expiry as the acquire wrote it (Unix ms, by this host's clock), on the steady
  // clock: read after the acquire, so never late.
  std::optional<time_point> lease_end(relock::owner, milliseconds lease) override {
    const auto asked = std::chrono::steady_clock::now();
    const auto now = std::chrono::system_clock::now();
    try {
      const auto info = at_.client.inspect(name_);
      for (const auto& p : info.permits) {
        if (p.id != permit_.id()) continue;
        if (!p.expires_at_ms) return std::nullopt;  // never expires: nothing to stop
        const auto expires = std::chrono::system_clock::time_point(milliseconds(*p.expires_at_ms));
        return asked + std::chrono::duration_cast<milliseconds>(expires - now);
      }
      // Not among the permits taken: already gone. (Past the 1000 shown: not known.)
      if (info.permits_taken == static_cast<std::int64_t>(info.permits.size())) return asked;
    } catch (const relock::error&) {
      // Not read: the lease as we asked for it, below.
    }
    return asked + lease;
  }

  void unlock(std::error_code& ec) noexcept override {
    if (permit_) permit_.release(ec);
  }

  std::string held() const override { return "the permit of the semaphore '" + name_ + "'"; }
  std::string acquiring() const override {
    return "take a permit of the semaphore '" + name_ + "'";
  }
  std::string busy() const override { return "no permit of the semaphore '" + name_ + "' is free"; }
  std::string gone() const override {
    return "it was taken back (its time ran out, or the semaphore was deleted or changed)";
  }

 private:
  // Makes the semaphore with N permits when NAME holds nothing. One that exists is used as it
  // is, with a note when its permits do not add up to N. Refuses a name holding anything else.
  void set_up() {
    using relock::object_kind;
    auto info = at_.client.inspect(name_);
    if (info.kind == object_kind::none && info.redis_type == "none") {
      if (semaphore_.try_set_permits(permits_)) return;
      info = at_.client.inspect(name_);  // made by another relock or client meanwhile
    }
    if (info.kind != object_kind::counter && info.kind != object_kind::permit_semaphore) {
      throw failure(exit_usage, not_a_semaphore(info));
    }
    // Taken permits past their expiry count too: the next acquire or release gives them back.
    const std::int64_t total = info.value.value_or(0) + info.permits_taken;
    if (total != permits_) {
      std::cerr << "relock: note: the semaphore '" << escaped(name_) << "' has " << total
                << " permit" << (total == 1 ? "" : "s") << " (" << info.value.value_or(0)
                << " available, " << info.permits_taken << " taken), not " << permits_
                << "; using it as it is" << std::endl;
    }
  }

  static std::string not_a_semaphore(const relock::lock_info& info) {
    using relock::object_kind;
    const std::string name = "'" + info.name + "'";
    if (info.kind != object_kind::unknown) {  // a lock, or a free one's token or queue
      return name + " holds a lock (kind " + std::string(relock::to_string(info.kind)) +
             "), not a semaphore";
    }
    if (info.redis_type == "none") {
      return name + " is not a semaphore: the lock family's other keys for it hold data";
    }
    return name + " is a Redis " + info.redis_type + ", not a semaphore's count";
  }

  const global_options& g_;
  connected at_;
  std::string name_;
  std::int64_t permits_;
  relock::permit_expirable_semaphore semaphore_;
  relock::permit permit_;  // given back by unlock, or at the latest when run returns
};

void refuse_fenced(const run_options& o, const char* flag) {
  if (kind_of(o) == "fenced") {
    throw failure(exit_usage, std::string("--kind fenced hands the command one fencing token; it "
                                          "cannot be used with ") +
                                  flag);
  }
}

std::string joined(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

}  // namespace

std::string kind_of(const run_options& o) {
  return o.shared ? "read" : o.exclusive ? "write" : o.kind;
}

relock::mutex lock_of(relock::client& client, const std::string& name, const run_options& o) {
  const std::string kind = kind_of(o);
  if (kind == "lock") return client.lock(name);
  if (kind == "read") return client.read_write_lock(name).read_lock();
  if (kind == "write") return client.read_write_lock(name).write_lock();
  if (kind == "fair") return client.fair_lock(name);
  if (kind == "fenced") return client.fenced_lock(name);
  if (kind == "spin") return client.spin_lock(name);
  throw failure(exit_usage, "unknown lock kind '" + kind + "'");  // the parser lets none through
}

std::unique_ptr<run_target> make_target(const global_options& g, const run_options& o) {
  try {
    if (!o.all_names.empty()) {
      refuse_fenced(o, "--all");
      std::vector<std::unique_ptr<relock::client>> clients;
      // In place (clients do not move), from connect()'s result.
      clients.push_back(
          std::unique_ptr<relock::client>(new relock::client(connect(g, make_config(g)))));
      std::vector<relock::mutex> members;
      for (const auto& n : o.all_names) members.push_back(lock_of(*clients[0], n, o));
      relock::multi_lock set(std::move(members));
      return std::make_unique<lock_set<relock::multi_lock>>(
          joined(o.all_names, ","), shown_url(g.url), std::move(clients), std::move(set));
    }
    if (!o.redlock_urls.empty()) {
      refuse_fenced(o, "--redlock");
      auto servers = connect_redlock(g, o.redlock_urls, o.name);
      std::vector<relock::mutex> members;
      for (const auto& c : servers.clients) members.push_back(lock_of(*c, o.name, o));
      // Those that did not answer vote no: the quorum stays a majority of every server named.
      relock::red_lock set(std::move(members), {.unreached = servers.unreached});
      return std::make_unique<lock_set<relock::red_lock>>(
          o.name, joined(servers.reached, ", "), std::move(servers.clients), std::move(set));
    }
    if (o.semaphore) return std::make_unique<semaphore_permit>(g, o);
    return std::make_unique<single_lock>(g, o);
  } catch (const relock::error& e) {
    // A refused name, or a set that cannot be one (a name twice, servers not independent).
    if (e.code() == relock::errc::invalid_argument) throw failure(exit_usage, e.what());
    throw;
  }
}

}  // namespace relock_cli
