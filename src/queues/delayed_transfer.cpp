// SPDX-License-Identifier: Apache-2.0
#include "queues/delayed_transfer.hpp"

#include <charconv>
#include <cmath>

#include <asio/steady_timer.hpp>
#include <relock/errors.hpp>
#include <relock/observer.hpp>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "layout/naming.hpp"
#include "queues/queue_events.hpp"
#include "queues/transfer_schedule.hpp"
#include "scripts/scripts.hpp"
#include "waiting/lock_kind.hpp"

namespace relock::detail::queues {
namespace {

const std::string transfer_source =
    std::string(scripts::delayed_value) + std::string(scripts::delayed_transfer);
const exec::script transfer_script{"delayed_transfer", transfer_source};

constexpr const char* batch = "100";

std::optional<std::int64_t> millis_of(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(value);
}

class transfer_task : public std::enable_shared_from_this<transfer_task>, public shutdown_aware {
 public:
  transfer_task(std::shared_ptr<client_core> core, std::string destination)
      : core_(std::move(core)),
        destination_(std::move(destination)),
        list_(layout::delayed_queue_list(destination_)),
        timeouts_(layout::delayed_queue_timeouts(destination_)),
        channel_(layout::delayed_queue_channel(destination_)),
        layout_(core_->settings().delayed_queue_layout == config::delayed_layout::redisson_3 ? "3"
                                                                                             : "4"),
        timer_(core_->io()) {}

  // I/O thread.
  void start() {
    core_->track(*this);
    std::weak_ptr<transfer_task> weak = shared_from_this();
    auto hear = [weak](const pubsub::event& e) {
      auto self = weak.lock();
      if (!self || self->stopped_) return;
      if (e.kind == pubsub::event_kind::message) {
        if (auto due = millis_of(e.payload)) {
          self->act(self->schedule_.announced(*due, waiting::wall_clock_ms()));
        }
      } else if (e.kind == pubsub::event_kind::resubscribed) {
        self->act(self->schedule_.resubscribed(waiting::wall_clock_ms()));
      }
    };
    auto unconfirmed = [](std::error_code) {};  // the timer delivers meanwhile
    // The channel is classic by contract: every offer announces with a hard-coded PUBLISH
    // (Redisson 3.18.1's and 4.7.0's, read from their jars, and delayed_offer.lua), and a
    // Redisson transfer listens with a classic topic, in a cluster too. So the transfer
    // listens classically whatever the client's pub/sub mode, as well as the client's own way
    // when that is sharded only, for a producer that would SPUBLISH.
    listener_ = core_->channels().add(channel_, hear, unconfirmed);
    if (core_->publish_command() == "SPUBLISH") {
      classic_listener_ = core_->channels().add_classic(channel_, hear, unconfirmed);
    }
    act(schedule_.start(waiting::wall_clock_ms()));
  }

  // I/O thread.
  void stop() {
    if (stopped_) return;
    stopped_ = true;
    core_->untrack(*this);
    timer_.cancel();
    if (listener_) core_->channels().remove(listener_);
    if (classic_listener_) core_->channels().remove(classic_listener_);
    listener_.reset();
    classic_listener_.reset();
  }

 private:
  void on_shutdown() override { stop(); }

  void act(const transfer_schedule::action& a) {
    if (stopped_) return;
    if (a.run) return transfer();
    if (!a.wake_at) return;
    const auto delay = std::chrono::milliseconds(*a.wake_at - waiting::wall_clock_ms());
    timer_.expires_after(std::max(delay, std::chrono::milliseconds(0)));
    timer_.async_wait([weak = weak_from_this()](std::error_code ec) {
      auto self = weak.lock();
      if (ec || !self || self->stopped_) return;
      self->act(self->schedule_.timer(waiting::wall_clock_ms()));
    });
  }

  void transfer() {
    core_->executor().eval(
        transfer_script, {destination_, timeouts_, list_},
        {std::to_string(waiting::wall_clock_ms()), batch, layout_},
        [self = shared_from_this(), sent_at = std::chrono::steady_clock::now()](std::error_code ec,
                                                                                resp::reply r) {
          if (self->stopped_) return;
          const auto now = waiting::wall_clock_ms();
          self->observed(ec, r, sent_at);
          if (ec) {
            if (!self->reported_) {
              self->core_->log(log_level::error, "delayed queue '" + self->destination_ +
                                                     "': the transfer failed: " +
                                                     (r.str.empty() ? ec.message() : r.str));
            }
            self->reported_ = true;
            return self->act(self->schedule_.transfer_failed(now));
          }
          self->reported_ = false;
          std::optional<std::int64_t> next;
          if (r.is_array() && r.elements.size() > 1) {
            const resp::reply& due = r.elements[1];
            next = due.is_integer() ? due.integer : millis_of(due.str).value_or(now);
          }
          self->act(self->schedule_.transferred(next, now));
        },
        {.idempotent = true});
  }

  // Tells the client's observer, if it has one, of a transfer that moved something or failed.
  void observed(std::error_code ec, const resp::reply& r,
                std::chrono::steady_clock::time_point sent_at) const {
    auto* o = core_->settings().observer.get();
    if (o == nullptr) return;
    const std::int64_t moved =
        !ec && r.is_array() && !r.elements.empty() ? r.elements.front().integer : 0;
    if (!ec && moved == 0) return;  // a timer that found nothing due yet: no operation
    tell_queue(o, queue_operation::transfer, destination_, ec, sent_at, moved);
  }

  std::shared_ptr<client_core> core_;
  std::string destination_, list_, timeouts_, channel_;
  std::string layout_;
  asio::steady_timer timer_;
  transfer_schedule schedule_;
  pubsub::listener_ptr listener_;
  pubsub::listener_ptr classic_listener_;  // when the client's own way is sharded only
  bool stopped_ = false;
  bool reported_ = false;  // a failure was logged; the next success clears it
};

// What a handle holds: its end stops the task, on the I/O thread.
struct transfer_hold {
  transfer_hold(std::shared_ptr<client_core> c, std::shared_ptr<transfer_task> t)
      : core(std::move(c)), task(std::move(t)) {}
  transfer_hold(const transfer_hold&) = delete;
  transfer_hold& operator=(const transfer_hold&) = delete;
  ~transfer_hold() {
    core->enter([task = std::move(task)](bool running) {
      if (running) task->stop();
    });
  }
  std::shared_ptr<client_core> core;
  std::shared_ptr<transfer_task> task;
};

}  // namespace

std::shared_ptr<void> hold_transfer(const std::shared_ptr<client_core>& core,
                                    const std::string& destination_key) {
  return core->shared_task(destination_key, [&]() -> std::shared_ptr<void> {
    auto task = std::make_shared<transfer_task>(core, destination_key);
    core->enter([task](bool running) {
      if (running) task->start();
    });
    return std::make_shared<transfer_hold>(core, std::move(task));
  });
}

void stop_transfer(const std::shared_ptr<client_core>& core, const std::string& destination_key) {
  auto held = core->drop_task(destination_key);
  if (auto* hold = static_cast<transfer_hold*>(held.get())) {
    core->enter([task = hold->task](bool running) {
      if (running) task->stop();
    });
  }
}

}  // namespace relock::detail::queues
