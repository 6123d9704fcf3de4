// SPDX-License-Identifier: Apache-2.0
#include <relock/permit_expirable_semaphore.hpp>

#include <relock/detail/durations.hpp>

#include "client_core.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "synchronizers/synchronizer.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "synchronizers/synchronizer_scripts.hpp"
#include "waiting/acquire_op.hpp"
#include "waiting/blocking_call.hpp"
#include "waiting/release_op.hpp"

namespace relock {
namespace {

using detail::acquire_result;

// A permit id as users hand it in: 32 hex digits (either case), lowercase from here on.
std::string checked_id(std::string_view id) {
  auto raw = layout::from_hex(id);
  if (id.size() != 32 || !raw) {
    throw error(errc::invalid_argument,
                "a permit id is 32 hex digits, not '" + std::string(id.substr(0, 64)) + "'");
  }
  return layout::to_hex(*raw);
}

}  // namespace

permit_expirable_semaphore::permit_expirable_semaphore(std::shared_ptr<detail::client_core> core,
                                                       std::string name, semaphore_options options)
    : core_(std::move(core)), name_(std::move(name)), options_(options) {
  auto names = detail::synchronizers::synchronizer_names_of(*core_, name_,
                                                            layout::semaphore_channel, "semaphore");
  key_ = std::move(names.key);
  channel_ = std::move(names.channel);
}

namespace {

// The waiting acquire of one permit, through the one waiting loop; the result's token is the
// permit's id.
void acquire_permit(const std::shared_ptr<detail::client_core>& core, const std::string& key,
                    const std::string& channel, bool wait_when_absent, permit_options options,
                    detail::completion<void(std::error_code, acquire_result)> done) {
  if (core->stopped()) return done(errc::cancelled, {.detail = "the client has been destroyed"});
  if ((options.lease && options.lease->count() <= 0) ||
      (options.wait && options.wait->count() < 0)) {
    return done(errc::invalid_argument, {.detail = "a lease must be > 0 and a wait >= 0"});
  }
  auto r = detail::synchronizers::synchronizer_acquire_request(
      key, channel, options.wait, std::move(options.stop),
      detail::synchronizers::permit_grant(wait_when_absent), &detail::synchronizers::permit_hold);
  // The permit's id is its owner: every try of this acquire offers the same one, so a try that
  // runs twice never takes a second permit.
  r.owner = layout::random_request_id();
  r.field = r.owner;
  r.watchdog = !options.lease;
  r.lease = options.lease.value_or(core->settings().watchdog_lease);
  r.on_lost = std::move(options.on_lost);
  std::string id = r.owner;
  detail::waiting::start_acquire(core, std::move(r),
                                 [done = std::move(done), id = std::move(id)](
                                     std::error_code ec, acquire_result result) mutable {
                                   if (!ec && result.acquired) result.token = std::move(id);
                                   done(ec, std::move(result));
                                 });
}

}  // namespace

void permit_expirable_semaphore::start_acquire(permit_options options, acquire_done done) {
  acquire_permit(
      core_, key_, channel_, options_.wait_when_absent, std::move(options),
      [self = *this, done = std::move(done)](std::error_code ec, acquire_result r) mutable {
        if (ec || !r.acquired) return done(ec, std::move(r.detail), std::nullopt);
        done(ec, "", permit::with_id(self, std::move(r.token)));
      });
}

std::optional<std::string> permit_expirable_semaphore::acquire_blocking(permit_options options) {
  detail::waiting::refuse_io_thread(*core_, "acquire");
  auto [ec, result] = detail::waiting::wait_for<std::error_code, acquire_result>([&](auto done) {
    acquire_permit(core_, key_, channel_, options_.wait_when_absent, std::move(options),
                   std::move(done));
  });
  if (ec) throw error(ec, "semaphore '" + name_ + "': acquire: " + result.detail);
  if (!result.acquired) return std::nullopt;
  return std::move(result.token);
}

permit permit_expirable_semaphore::acquire(std::optional<std::chrono::milliseconds> lease,
                                           std::stop_token stop) {
  permit_options o;
  if (lease) o.lease = detail::to_millis(*lease, "lease");
  o.stop = std::move(stop);
  auto id = acquire_blocking(std::move(o));
  if (!id)
    throw error(errc::connection, "semaphore '" + name_ + "': acquire ended without a permit");
  return permit::with_id(*this, std::move(*id));
}

std::optional<permit> permit_expirable_semaphore::try_acquire(
    std::chrono::milliseconds wait, std::optional<std::chrono::milliseconds> lease,
    std::stop_token stop) {
  permit_options o;
  o.wait = detail::to_millis(wait, "wait");
  if (lease) o.lease = detail::to_millis(*lease, "lease");
  o.stop = std::move(stop);
  auto id = acquire_blocking(std::move(o));
  if (!id) return std::nullopt;
  return permit::with_id(*this, std::move(*id));
}

void permit_expirable_semaphore::start_release(std::string permit_id, release_done done) {
  if (core_->stopped()) return done(errc::cancelled, "the client has been destroyed");
  std::string id;
  try {
    id = checked_id(permit_id);
  } catch (const error& e) {
    return done(e.code(), e.what());
  }
  detail::waiting::release_request r{key_, channel_, id, id, &detail::synchronizers::permit_hold,
                                     false};
  detail::waiting::start_release(core_, std::move(r), std::move(done));
}

void permit_expirable_semaphore::release(std::string_view permit_id) {
  const std::string id = checked_id(permit_id);
  detail::waiting::refuse_io_thread(*core_, "release");
  auto [ec, text] = detail::waiting::wait_for<std::error_code, std::string>(
      [&](auto done) { start_release(id, std::move(done)); });
  if (ec) {
    throw error(ec, "semaphore '" + name_ + "': release of permit " + id + ": " +
                        (text.empty() ? ec.message() : text));
  }
}

bool permit_expirable_semaphore::try_release(std::string_view permit_id) {
  try {
    release(permit_id);
    return true;
  } catch (const error& e) {
    if (e.code() == errc::not_owner || e.code() == errc::lock_lost) return false;
    throw;
  }
}

namespace {

std::int64_t permit_admin(detail::client_core& core, const std::string& key,
                          const std::string& channel, const char* op, std::int64_t n,
                          const std::string& name, std::string raw_id = {}) {
  return detail::synchronizers::semaphore_admin(
      core, key, channel, op, n, "semaphore '" + name + "'", layout::semaphore_timeout_key(key),
      std::move(raw_id));
}

}  // namespace

bool permit_expirable_semaphore::update_lease(std::string_view permit_id,
                                              std::chrono::milliseconds lease) {
  const std::string id = checked_id(permit_id);
  const auto ms = detail::to_millis(lease, "lease");
  if (ms.count() <= 0) throw error(errc::invalid_argument, "a lease must be > 0");
  // A fixed lease from now on: the watchdog would otherwise overwrite it at its next renewal.
  detail::waiting::refuse_io_thread(*core_, "update_lease");
  detail::waiting::wait_for<>([&](auto done) {
    core_->enter([core = core_, key = key_, id, done = std::move(done)](bool running) mutable {
      if (running) core->watchdog().forget(key, id);
      done();
    });
  });
  return permit_admin(*core_, key_, channel_, "lease", ms.count(), name_, *layout::from_hex(id)) ==
         1;
}

std::int64_t permit_expirable_semaphore::available_permits() const {
  return permit_admin(*core_, key_, channel_, "available", 0, name_);
}

std::int64_t permit_expirable_semaphore::acquired_permits() const {
  return permit_admin(*core_, key_, channel_, "acquired", 0, name_);
}

void permit_expirable_semaphore::set_permits(std::int64_t permits) {
  detail::synchronizers::check_permits(permits, 0, "permits to set");
  permit_admin(*core_, key_, channel_, "set", permits, name_);
}

bool permit_expirable_semaphore::try_set_permits(std::int64_t permits) {
  detail::synchronizers::check_permits(permits, 0, "permits to set");
  return permit_admin(*core_, key_, channel_, "try_set", permits, name_) == 1;
}

void permit_expirable_semaphore::add_permits(std::int64_t permits) {
  detail::synchronizers::check_permits(permits, -detail::synchronizers::max_permits,
                                       "permits to add");
  permit_admin(*core_, key_, channel_, "add", permits, name_);
}

}  // namespace relock
