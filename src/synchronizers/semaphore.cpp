// SPDX-License-Identifier: Apache-2.0
#include <relock/semaphore.hpp>

#include <relock/detail/durations.hpp>

#include "client_core.hpp"
#include "layout/naming.hpp"
#include "synchronizers/synchronizer.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "synchronizers/synchronizer_scripts.hpp"
#include "waiting/acquire_op.hpp"
#include "waiting/blocking_call.hpp"
#include "waiting/release_op.hpp"

namespace relock {

static_assert(semaphore::max() == detail::synchronizers::max_permits);

namespace {

using detail::acquire_result;

// The waiting acquire of `permits`, through the one waiting loop.
void acquire_counted(const std::shared_ptr<detail::client_core>& core, const std::string& key,
                     const std::string& channel, bool wait_when_absent, std::int64_t permits,
                     std::optional<std::chrono::milliseconds> wait, std::stop_token stop,
                     detail::completion<void(std::error_code, acquire_result)> done) {
  if (core->stopped()) return done(errc::cancelled, {.detail = "the client has been destroyed"});
  if (permits < 1 || permits > detail::synchronizers::max_permits || (wait && wait->count() < 0)) {
    return done(
        errc::invalid_argument,
        {.detail = "permits must be between 1 and " +
                   std::to_string(detail::synchronizers::max_permits) + ", and a wait >= 0"});
  }
  auto r = detail::synchronizers::synchronizer_acquire_request(
      key, channel, wait, std::move(stop),
      detail::synchronizers::semaphore_grant(wait_when_absent));
  r.permits = permits;
  detail::waiting::start_acquire(core, std::move(r), std::move(done));
}

}  // namespace

semaphore::semaphore(std::shared_ptr<detail::client_core> core, std::string name,
                     semaphore_options options)
    : core_(std::move(core)), name_(std::move(name)), options_(options) {
  auto names = detail::synchronizers::synchronizer_names_of(*core_, name_,
                                                            layout::semaphore_channel, "semaphore");
  key_ = std::move(names.key);
  channel_ = std::move(names.channel);
}

void semaphore::start_acquire(std::int64_t permits, std::optional<std::chrono::milliseconds> wait,
                              std::stop_token stop, acquire_done done) {
  acquire_counted(core_, key_, channel_, options_.wait_when_absent, permits, wait, std::move(stop),
                  [done = std::move(done)](std::error_code ec, acquire_result r) mutable {
                    done(ec, std::move(r.detail), r.acquired);
                  });
}

void semaphore::start_release(std::int64_t permits, release_done done) {
  if (core_->stopped()) return done(errc::cancelled, "the client has been destroyed");
  if (permits < 1 || permits > detail::synchronizers::max_permits) {
    return done(errc::invalid_argument, "permits to release must be between 1 and " +
                                            std::to_string(detail::synchronizers::max_permits));
  }
  detail::waiting::release_request r{
      key_, channel_, {}, {}, &detail::synchronizers::semaphore_release, false, permits};
  detail::waiting::start_release(core_, std::move(r), std::move(done));
}

bool semaphore::acquire_blocking(std::int64_t permits,
                                 std::optional<std::chrono::milliseconds> wait,
                                 std::stop_token stop) {
  detail::synchronizers::check_permits(permits, 1, "permits to acquire");
  detail::waiting::refuse_io_thread(*core_, "acquire");
  auto [ec, result] = detail::waiting::wait_for<std::error_code, acquire_result>([&](auto done) {
    acquire_counted(core_, key_, channel_, options_.wait_when_absent, permits, wait,
                    std::move(stop), std::move(done));
  });
  if (ec) throw error(ec, "semaphore '" + name_ + "': " + result.detail);
  return result.acquired;
}

void semaphore::acquire(std::int64_t permits, std::stop_token stop) {
  acquire_blocking(permits, std::nullopt, std::move(stop));
}

bool semaphore::try_acquire(std::int64_t permits) {
  return acquire_blocking(permits, std::chrono::milliseconds(0), {});
}

bool semaphore::try_acquire(std::int64_t permits, std::chrono::milliseconds wait,
                            std::stop_token stop) {
  return acquire_blocking(permits, detail::to_millis(wait, "wait"), std::move(stop));
}

permit semaphore::acquire_permits(std::int64_t permits, std::stop_token stop) {
  // A permit for permits not taken would add them on its way out.
  if (!acquire_blocking(permits, std::nullopt, std::move(stop))) {
    throw error(errc::connection, "semaphore '" + name_ + "': acquire ended without the permits");
  }
  return permit::counting(*this, permits);
}

std::optional<permit> semaphore::try_acquire_permits(std::int64_t permits,
                                                     std::chrono::milliseconds wait,
                                                     std::stop_token stop) {
  if (!acquire_blocking(permits, detail::to_millis(wait, "wait"), std::move(stop))) {
    return std::nullopt;
  }
  return permit::counting(*this, permits);
}

void semaphore::release(std::int64_t permits) {
  detail::synchronizers::check_permits(permits, 1, "permits to release");
  detail::waiting::refuse_io_thread(*core_, "release");
  auto [ec, detail_text] = detail::waiting::wait_for<std::error_code, std::string>(
      [&](auto done) { start_release(permits, std::move(done)); });
  if (ec) {
    throw error(ec, "semaphore '" + name_ +
                        "': release: " + (detail_text.empty() ? ec.message() : detail_text));
  }
}

namespace {

std::int64_t permits_admin(detail::client_core& core, const std::string& key,
                           const std::string& channel, const char* op, std::int64_t n,
                           const std::string& name) {
  return detail::synchronizers::semaphore_admin(core, key, channel, op, n,
                                                "semaphore '" + name + "'");
}

}  // namespace

std::int64_t semaphore::available_permits() const {
  return permits_admin(*core_, key_, channel_, "available", 0, name_);
}

std::int64_t semaphore::drain_permits() {
  return permits_admin(*core_, key_, channel_, "drain", 0, name_);
}

bool semaphore::try_set_permits(std::int64_t permits) {
  detail::synchronizers::check_permits(permits, 0, "permits to set");
  return permits_admin(*core_, key_, channel_, "try_set", permits, name_) == 1;
}

void semaphore::add_permits(std::int64_t permits) {
  detail::synchronizers::check_permits(permits, -detail::synchronizers::max_permits,
                                       "permits to add");
  permits_admin(*core_, key_, channel_, "add", permits, name_);
}

}  // namespace relock
