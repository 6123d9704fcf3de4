// SPDX-License-Identifier: Apache-2.0
#include <relock/delayed_queue.hpp>

#include <relock/config.hpp>
#include <relock/detail/durations.hpp>
#include <relock/observer.hpp>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "queues/delayed_transfer.hpp"
#include "queues/queue_events.hpp"
#include "scripts/scripts.hpp"
#include "waiting/blocking_call.hpp"
#include "waiting/lock_kind.hpp"

namespace relock {
namespace {

const exec::script offer_script{"delayed_offer", scripts::delayed_offer};
const std::string find_source =
    std::string(scripts::delayed_value) + std::string(scripts::delayed_find);
const exec::script find_script{"delayed_find", find_source};

const char* layout_of(const detail::client_core& core) {
  return core.settings().delayed_queue_layout == config::delayed_layout::redisson_3 ? "3" : "4";
}

// Redisson 4.x: 8 random bytes; 3.x: a random number (a double in the element: 53 bits).
std::string random_id(const detail::client_core& core) {
  if (*layout_of(core) == '4') return layout::random_bytes(8);
  return std::to_string(layout::random_seed() >> 11);
}

// Runs a script on the I/O thread and waits for it; throws relock::error, wrong_type in words.
resp::reply run_script(detail::client_core& core, const exec::script& s,
                       std::vector<std::string> keys, std::vector<std::string> args,
                       const char* what, const std::string& destination) {
  auto [ec, r] = detail::waiting::eval_waiting(core, s, std::move(keys), std::move(args), what);
  if (ec == errc::wrong_type) {
    throw error(ec, std::string(what) + " '" + destination +
                        "': a key of the delayed queue holds another Redis type (" + r.str + ")");
  }
  if (ec) {
    throw error(ec, std::string(what) + " '" + destination +
                        "': " + (r.str.empty() ? ec.message() : r.str));
  }
  return std::move(r);
}

}  // namespace

delayed_queue::delayed_queue(std::shared_ptr<detail::client_core> core, std::string destination)
    : core_(std::move(core)), destination_(std::move(destination)) {
  layout::check_name(destination_, "delayed queue destination");
  key_ = core_->key_of(destination_);
  layout::check_name(key_, "delayed queue destination (after the name mapper)");
  list_ = layout::delayed_queue_list(key_);
  timeouts_ = layout::delayed_queue_timeouts(key_);
  channel_ = layout::delayed_queue_channel(key_);
  if (core_->executor().cluster()) layout::check_one_slot(key_, {list_, timeouts_, channel_});
  transfer_ = detail::queues::hold_transfer(core_, key_);
}

void delayed_queue::start_offer(std::string value, std::chrono::milliseconds delay,
                                detail::answer<> done) {
  if (delay.count() < 0) return done(errc::invalid_argument, "a delay must be >= 0");
  if (value.size() > core_->settings().max_value_size) {
    return done(errc::invalid_argument, "a value of " + std::to_string(value.size()) +
                                            " bytes is over config::max_value_size");
  }
  std::vector<std::string> keys{key_, timeouts_, list_, channel_};
  std::vector<std::string> args{std::to_string(detail::waiting::wall_clock_ms() + delay.count()),
                                random_id(*core_), std::move(value), layout_of(*core_)};
  core_->enter([core = core_, keys = std::move(keys), args = std::move(args),
                done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, "the client has been destroyed");
    auto* o = core->settings().observer.get();
    const auto sent_at = std::chrono::steady_clock::now();
    auto key = o != nullptr ? keys.front() : std::string();
    core->executor().eval(
        offer_script, std::move(keys), std::move(args),
        // Guarded: the client's shutdown tells the caller at once, the offer still drains.
        [done = core->guard(std::move(done)), o, sent_at, key = std::move(key)](
            std::error_code ec, resp::reply r) mutable {
          detail::queues::tell_queue(o, queue_operation::offer, key, ec, sent_at, ec ? 0 : 1);
          done(ec, ec ? std::move(r.str) : std::string());
        });
  });
}

void delayed_queue::offer(std::string_view value, std::chrono::milliseconds delay) {
  const auto d = detail::to_millis(delay, "delay");
  if (value.size() > core_->settings().max_value_size) {
    throw error(errc::invalid_argument, "offer '" + destination_ + "': a value of " +
                                            std::to_string(value.size()) +
                                            " bytes is over config::max_value_size (" +
                                            std::to_string(core_->settings().max_value_size) + ")");
  }
  // The async form's one path (and its observer event), waited for.
  detail::waiting::refuse_io_thread(*core_, "offer");
  auto [ec, text] = detail::waiting::wait_for<std::error_code, std::string>(
      [&](auto done) { start_offer(std::string(value), d, detail::answer<>(std::move(done))); });
  if (ec == errc::wrong_type) {
    throw error(ec, "offer '" + destination_ +
                        "': a key of the delayed queue holds another Redis type (" + text + ")");
  }
  if (ec) throw error(ec, "offer '" + destination_ + "': " + (text.empty() ? ec.message() : text));
}

std::int64_t delayed_queue::size() const {
  return detail::waiting::run_blocking(*core_, list_, resp::request{"LLEN", list_}, "size").integer;
}

bool delayed_queue::contains(std::string_view value) const {
  return run_script(*core_, find_script, {list_, timeouts_},
                    {std::string(value), "0", layout_of(*core_)}, "contains", destination_)
             .integer == 1;
}

bool delayed_queue::remove(std::string_view value) {
  return run_script(*core_, find_script, {list_, timeouts_},
                    {std::string(value), "1", layout_of(*core_)}, "remove", destination_)
             .integer == 1;
}

void delayed_queue::clear() {
  detail::waiting::run_blocking(*core_, list_, resp::request{"DEL", list_, timeouts_}, "clear");
}

void delayed_queue::destroy() { detail::queues::stop_transfer(core_, key_); }

}  // namespace relock
