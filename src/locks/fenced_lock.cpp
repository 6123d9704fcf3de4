// SPDX-License-Identifier: Apache-2.0
#include <relock/fenced_lock.hpp>

#include <charconv>

#include "client_core.hpp"
#include "layout/naming.hpp"
#include "waiting/blocking_call.hpp"

namespace relock {
namespace {

std::int64_t parse_token(std::string_view text, std::string_view what) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw error(errc::wrong_type,
                std::string(what) + " holds '" + std::string(text) + "', not a fencing token");
  }
  return value;
}

}  // namespace

std::int64_t fenced_lock::token_of(const detail::acquire_result& r) {
  return parse_token(r.token, "the acquire's reply");
}

std::optional<std::int64_t> fenced_lock::acquire_token(lock_options options,
                                                       bool empty_wait_is_forever) {
  auto r = acquire_blocking(owner::current_thread(), std::move(options), empty_wait_is_forever);
  if (!r.acquired) return std::nullopt;
  return token_of(r);
}

// A wait for ever ends acquired or with an error; not acquired would be a bug, said as such.
std::int64_t fenced_lock::lock_and_get_token() { return waited_token({}); }

std::int64_t fenced_lock::lock_and_get_token(std::chrono::milliseconds lease) {
  lock_options o;
  o.lease = detail::to_millis(lease, "lease");
  return waited_token(std::move(o));
}

std::int64_t fenced_lock::waited_token(lock_options options) {
  auto token = acquire_token(std::move(options), true);
  if (!token) throw error(errc::not_acquired, "fenced lock '" + name() + "': not acquired");
  return *token;
}

std::optional<std::int64_t> fenced_lock::try_lock_and_get_token() {
  return acquire_token({}, false);
}

std::optional<std::int64_t> fenced_lock::try_lock_and_get_token(std::chrono::milliseconds wait) {
  lock_options o;
  o.wait = detail::to_millis(wait, "wait");
  return acquire_token(std::move(o), false);
}

std::optional<std::int64_t> fenced_lock::try_lock_and_get_token(std::chrono::milliseconds wait,
                                                                std::chrono::milliseconds lease) {
  lock_options o;
  o.wait = detail::to_millis(wait, "wait");
  o.lease = detail::to_millis(lease, "lease");
  return acquire_token(std::move(o), false);
}

std::int64_t fenced_lock::token() const {
  const std::string counter = layout::fenced_token_key(key());
  auto r = detail::waiting::run_blocking(core(), counter, resp::request{"GET", counter}, "token");
  if (r.is_nil()) return 0;
  return parse_token(r.str, counter);
}

std::optional<std::int64_t> fenced_lock::fence() const { return fence(owner::current_thread()); }

std::optional<std::int64_t> fenced_lock::fence(owner o) const {
  detail::client_core& c = core();
  detail::waiting::refuse_io_thread(c, "fence");
  auto [running, token] = detail::waiting::wait_for<bool, std::string>([&](auto done) {
    c.enter([&c, key = key(), field = field(o),
             done = detail::completion<void(bool, std::string)>(std::move(done))](bool up) mutable {
      if (!up) return done(false, std::string());
      done(true, c.watchdog().first_token(key, field));
    });
  });
  if (!running) throw error(errc::cancelled, "fence: the client has been destroyed");
  if (token.empty()) return std::nullopt;
  return parse_token(token, "the hold's token");
}

}  // namespace relock
