// SPDX-License-Identifier: Apache-2.0
#include <relock/lock.hpp>

#include <charconv>
#include <cmath>

#include "client_core.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "waiting/acquire_op.hpp"
#include "waiting/blocking_call.hpp"
#include "waiting/release_op.hpp"

namespace relock {
namespace detail {

std::chrono::milliseconds checked_millis(double ms, const char* what) {
  // 100 years: far beyond any real lease or wait, and far from steady_clock's overflow.
  constexpr double limit = 100.0 * 365 * 24 * 3600 * 1000;
  if (std::isnan(ms)) throw error(errc::invalid_argument, std::string(what) + " is not a number");
  if (ms < 0) throw error(errc::invalid_argument, std::string(what) + " must not be negative");
  if (ms > limit) throw error(errc::invalid_argument, std::string(what) + " is over 100 years");
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(ms)));
}

}  // namespace detail

mutex::mutex(std::shared_ptr<detail::client_core> core, std::string name,
             const detail::waiting::lock_kind& kind)
    : core_(std::move(core)), name_(std::move(name)), kind_(&kind) {
  layout::check_name(name_, "lock name");
  key_ = core_->key_of(name_);
  layout::check_name(key_, "lock key (after the name mapper)");
  channel_ = kind_->channel(key_);
  if (core_->executor().cluster()) {
    layout::check_one_slot(key_, {channel_, layout::unlock_latch_key(key_, "0")});
  }
}

std::string mutex::owner_id(owner o) const {
  // Built in one allocation: it is made on every acquire and release.
  const std::string& client = core_->id();
  char number[24];
  char* end = std::to_chars(number, number + sizeof number, o.id()).ptr;
  std::string id;
  id.reserve(client.size() + 1 + static_cast<std::size_t>(end - number));
  id.append(client).append(1, ':').append(number, static_cast<std::size_t>(end - number));
  return id;
}

std::string mutex::field(owner o) const { return kind_->field(owner_id(o)); }

void mutex::start_acquire(owner who, lock_options options, bool empty_wait_is_forever,
                          acquire_done done) {
  if (core_->stopped()) return done(errc::cancelled, {.detail = "the client has been destroyed"});
  if ((options.lease && options.lease->count() <= 0) ||
      (options.wait && options.wait->count() < 0)) {
    return done(errc::invalid_argument, {.detail = "a lease must be > 0 and a wait >= 0"});
  }
  detail::waiting::acquire_request r;
  r.key = key_;
  r.owner = owner_id(who);
  r.channel = channel_;
  if (kind_->waiter_channel != nullptr) r.waiter_channel = kind_->waiter_channel(key_, r.owner);
  r.field = kind_->field(r.owner);
  r.watchdog = !options.lease;
  r.lease = options.lease.value_or(core_->settings().watchdog_lease);
  r.wait = options.wait ? options.wait->count() > 0 : empty_wait_is_forever;
  r.asked_at = std::chrono::steady_clock::now();
  if (options.wait) r.deadline = *r.asked_at + *options.wait;
  r.stop = std::move(options.stop);
  r.on_lost = std::move(options.on_lost);
  r.listen_for_loss = options.listen_for_loss;
  r.grant = kind_;
  r.hold = kind_;
  detail::waiting::start_acquire(core_, std::move(r), std::move(done));
}

void mutex::start_release(owner who, release_done done) {
  if (core_->stopped()) return done(errc::cancelled, "the client has been destroyed");
  std::string id = owner_id(who);
  std::string owner_field = kind_->field(id);
  detail::waiting::start_release(
      core_,
      detail::waiting::release_request{key_, channel_, std::move(id), std::move(owner_field), kind_,
                                       false},
      std::move(done));
}

detail::acquire_result mutex::acquire_blocking(owner who, lock_options options,
                                               bool empty_wait_is_forever) {
  detail::waiting::refuse_io_thread(*core_, "locking");
  auto [ec, result] =
      relock::detail::waiting::wait_for<std::error_code, detail::acquire_result>([&](auto done) {
        start_acquire(who, std::move(options), empty_wait_is_forever, std::move(done));
      });
  if (ec) throw error(ec, std::string(kind_->what) + " '" + name_ + "': " + result.detail);
  return std::move(result);
}

void mutex::unlock() noexcept { unlock_reporting(nullptr); }

void mutex::unlock(std::error_code& ec) noexcept { unlock_reporting(&ec); }

void mutex::unlock_reporting(std::error_code* out) noexcept {
  std::error_code ec;
  std::string detail;
  if (core_->stopped()) {
    ec = errc::cancelled;
    detail = "unlock: the client has been destroyed";
  } else if (core_->on_io_thread()) {
    ec = errc::would_deadlock;
    detail = "unlock() blocks, and was called on relock's I/O thread; use async_unlock there";
  } else {
    try {
      std::tie(ec, detail) = relock::detail::waiting::wait_for<std::error_code, std::string>(
          [&](auto done) { start_release(owner::current_thread(), std::move(done)); });
    } catch (const std::exception& e) {  // allocation failure: still never throw from here
      ec = errc::connection;
      detail = e.what();
    }
  }
  if (out != nullptr) *out = ec;
  if (!ec || out != nullptr) return;
  core_->log(log_level::error, "unlock failed: " + detail);
  if (const auto& report = core_->settings().on_unlock_error) report(key_, ec, detail);
}

bool mutex::force_unlock() {
  auto [ec, r] = detail::waiting::eval_waiting(
      *core_, kind_->force_release,
      [core = core_.get(), kind = kind_, key = key_, channel = channel_] {
        return kind->force_release_call(
            {key, channel, core->publish_command(), detail::waiting::queue_timing_of(*core)});
      },
      "force_unlock");
  if (ec) {
    throw error(ec, "force_unlock '" + name_ + "': " + (r.str.empty() ? ec.message() : r.str));
  }
  return r.integer == 1;
}

bool mutex::is_locked() const {
  return detail::waiting::run_blocking(*core_, key_, resp::request{"EXISTS", key_}, "is_locked")
             .integer == 1;
}

bool mutex::is_held_by_current_thread() const { return is_held_by(owner::current_thread()); }

bool mutex::is_held_by(owner o) const { return is_held_by(field(o)); }

bool mutex::is_held_by(std::string_view owner_field) const {
  return detail::waiting::run_blocking(*core_, key_, resp::request{"HEXISTS", key_, owner_field},
                                       "is_held_by")
             .integer == 1;
}

std::int64_t mutex::hold_count() const { return hold_count(owner::current_thread()); }

std::int64_t mutex::hold_count(owner o) const { return hold_count(field(o)); }

std::int64_t mutex::hold_count(std::string_view owner_field) const {
  auto r = detail::waiting::run_blocking(*core_, key_, resp::request{"HGET", key_, owner_field},
                                         "hold_count");
  if (r.is_nil()) return 0;
  std::int64_t holds = 0;
  const auto [end, ec] = std::from_chars(r.str.data(), r.str.data() + r.str.size(), holds);
  if (ec != std::errc() || end != r.str.data() + r.str.size()) {
    // Another client's data under this name, not a hold count.
    throw error(errc::wrong_type, "hold_count '" + name_ + "': the field holds '" + r.str +
                                      "', not a hold count: is it a lock?");
  }
  return holds;
}

std::optional<std::chrono::milliseconds> mutex::remaining_lease() const {
  auto r =
      detail::waiting::run_blocking(*core_, key_, resp::request{"PTTL", key_}, "remaining_lease");
  if (r.integer == -2) return std::nullopt;
  if (r.integer == -1) return std::chrono::milliseconds::max();
  return std::chrono::milliseconds(r.integer);
}

std::optional<std::chrono::steady_clock::time_point> mutex::valid_until() const {
  return valid_until(owner::current_thread());
}

std::optional<std::chrono::steady_clock::time_point> mutex::valid_until(owner o) const {
  using deadline = std::optional<std::chrono::steady_clock::time_point>;
  detail::waiting::refuse_io_thread(*core_, "valid_until");
  auto [running, until] = detail::waiting::wait_for<bool, deadline>([&](auto done) {
    core_->enter(
        [core = core_, key = key_, field = field(o),
         done = detail::completion<void(bool, deadline)>(std::move(done))](bool up) mutable {
          if (!up) return done(false, deadline());
          done(true, core->watchdog().valid_until(key, field));
        });
  });
  if (!running) throw error(errc::cancelled, "valid_until: the client has been destroyed");
  return until;
}

std::optional<std::chrono::milliseconds> mutex::valid_for() const {
  return valid_for(owner::current_thread());
}

std::optional<std::chrono::milliseconds> mutex::valid_for(owner o) const {
  const auto until = valid_until(o);
  if (!until) return std::nullopt;
  const auto left = *until - std::chrono::steady_clock::now();
  if (left <= left.zero()) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(left);
}

}  // namespace relock
