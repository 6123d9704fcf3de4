// SPDX-License-Identifier: Apache-2.0
#include <relock/blocking_queue.hpp>
#include <relock/detail/durations.hpp>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "layout/naming.hpp"
#include "queues/take_op.hpp"
#include "scripts/scripts.hpp"
#include "waiting/blocking_call.hpp"

namespace relock {
namespace {

const exec::script clear_script{"queue_clear", scripts::queue_clear};

// A queue of a name that holds another type: errc::wrong_type, in words.
[[noreturn]] void fail(const std::error_code& ec, const std::string& what, const std::string& key,
                       const std::string& detail) {
  if (ec == errc::wrong_type) {
    throw error(ec, what + " '" + key + "': the name holds another Redis type, not a queue");
  }
  throw error(ec, what + " '" + key + "': " + (detail.empty() ? ec.message() : detail));
}

}  // namespace

blocking_queue::blocking_queue(std::shared_ptr<detail::client_core> core, std::string name)
    : core_(std::move(core)), name_(std::move(name)) {
  layout::check_name(name_, "queue name");
  key_ = core_->key_of(name_);
  layout::check_name(key_, "queue key (after the name mapper)");
}

void blocking_queue::check_value(std::string_view value) const {
  if (value.size() > core_->settings().max_value_size) {
    throw error(errc::invalid_argument, "queue '" + name_ + "': a value of " +
                                            std::to_string(value.size()) +
                                            " bytes is over config::max_value_size (" +
                                            std::to_string(core_->settings().max_value_size) + ")");
  }
}

void blocking_queue::start_offer(std::string value, detail::answer<> done) {
  try {
    check_value(value);
  } catch (const error& e) {
    return done(e.code(), e.what());
  }
  core_->enter([core = core_, key = key_, value = std::move(value),
                done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, "the client has been destroyed");
    core->executor().run(key, resp::request{"RPUSH", key, std::move(value)},
                         [done = std::move(done)](std::error_code ec, resp::reply r) mutable {
                           done(ec, ec ? std::move(r.str) : std::string());
                         });
  });
}

void blocking_queue::start_poll(std::optional<std::chrono::milliseconds> wait, std::stop_token stop,
                                poll_done done) {
  if (wait && wait->count() < 0) return done(errc::invalid_argument, "a wait must be >= 0", {});
  if (wait && wait->count() == 0) {
    // No wait: LPOP on the command connections.
    return core_->enter([core = core_, key = key_, done = std::move(done)](bool running) mutable {
      if (!running) return done(errc::cancelled, "the client has been destroyed", std::nullopt);
      core->executor().run(key, resp::request{"LPOP", key},
                           [done = std::move(done)](std::error_code ec, resp::reply r) mutable {
                             if (ec) return done(ec, std::move(r.str), std::nullopt);
                             if (r.is_nil()) return done(ec, "", std::nullopt);
                             done(ec, "", std::move(r.str));
                           });
    });
  }
  detail::queues::take_request r;
  r.key = key_;
  r.asked_at = std::chrono::steady_clock::now();
  if (wait) r.deadline = *r.asked_at + *wait;
  r.stop = std::move(stop);
  detail::queues::start_take(core_, std::move(r), std::move(done));
}

bool blocking_queue::offer(std::string_view value) {
  check_value(value);
  detail::waiting::run_blocking(*core_, key_, resp::request{"RPUSH", key_, std::string(value)},
                                "offer");
  return true;
}

std::optional<std::string> blocking_queue::poll() {
  auto r = detail::waiting::run_blocking(*core_, key_, resp::request{"LPOP", key_}, "poll");
  if (r.is_nil()) return std::nullopt;
  return std::move(r.str);
}

std::optional<std::string> blocking_queue::poll(std::chrono::milliseconds wait,
                                                std::stop_token stop) {
  detail::waiting::refuse_io_thread(*core_, "poll");
  const auto w = detail::to_millis(wait, "wait");
  auto [ec, said, value] =
      detail::waiting::wait_for<std::error_code, std::string, std::optional<std::string>>(
          [&](auto done) { start_poll(w, std::move(stop), std::move(done)); });
  if (ec) fail(ec, "poll", key_, said);
  return std::move(value);
}

std::string blocking_queue::take(std::stop_token stop) {
  detail::waiting::refuse_io_thread(*core_, "take");
  auto [ec, said, value] =
      detail::waiting::wait_for<std::error_code, std::string, std::optional<std::string>>(
          [&](auto done) { start_poll(std::nullopt, std::move(stop), std::move(done)); });
  if (ec) fail(ec, "take", key_, said);
  if (!value) throw error(errc::connection, "take '" + key_ + "': ended without an element");
  return std::move(*value);
}

std::int64_t blocking_queue::size() const {
  return detail::waiting::run_blocking(*core_, key_, resp::request{"LLEN", key_}, "size").integer;
}

std::optional<std::string> blocking_queue::peek() const {
  auto r = detail::waiting::run_blocking(*core_, key_, resp::request{"LINDEX", key_, "0"}, "peek");
  if (r.is_nil()) return std::nullopt;
  return std::move(r.str);
}

bool blocking_queue::remove(std::string_view value) {
  return detail::waiting::run_blocking(
             *core_, key_, resp::request{"LREM", key_, "1", std::string(value)}, "remove")
             .integer > 0;
}

bool blocking_queue::clear() {
  auto [ec, r] = detail::waiting::eval_waiting(*core_, clear_script, {key_}, {}, "clear");
  if (ec) fail(ec, "clear", key_, r.str);
  return r.integer == 1;
}

}  // namespace relock
