// SPDX-License-Identifier: Apache-2.0
#include "waiting/core_acquire_env.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include "client_core.hpp"
#include "containers/block_cache.hpp"

namespace relock::detail::waiting {
namespace {

class core_acquire_env final : public acquire_env {
 public:
  explicit core_acquire_env(std::shared_ptr<client_core> core)
      : core_(std::move(core)), timer_(core_->io()) {}

  const config& settings() const override { return core_->settings(); }
  const std::string& publish_command() const override { return core_->publish_command(); }
  queue_timing queue_timing_now() const override { return queue_timing_of(*core_); }
  bool stopped() const override { return core_->stopped(); }
  void track(shutdown_aware& op) override { core_->track(op); }
  void untrack(shutdown_aware& op) override { core_->untrack(op); }
  void log(log_level level, std::string_view text) const override { core_->log(level, text); }
  void post(unique_function<void()> fn) override { asio::post(core_->io(), std::move(fn)); }

  void eval(const exec::script& s, script_call call, exec::result_callback done,
            exec::eval_options options) override {
    core_->executor().eval(s, std::move(call.keys), std::move(call.args), std::move(done),
                           std::move(options));
  }
  void release(release_request request, release_callback done) override {
    release_now(core_, std::move(request), std::move(done));
  }

  void join(const std::string& channel, pubsub::wake_count wakes, pubsub::waiter& w,
            pubsub::waiter_queues::ready_callback ready,
            std::chrono::milliseconds linger) override {
    core_->waiters().join(channel, wakes, w, std::move(ready), linger);
  }
  void leave(pubsub::waiter& w, bool used_wake) override { core_->waiters().leave(w, used_wake); }
  bool take_permit(const pubsub::waiter& w) override { return core_->waiters().take_permit(w); }
  bool has_waiters(const std::string& channel) const override {
    return core_->waiters().has_waiters(channel);
  }
  bool listening(const std::string& channel) const override {
    return core_->waiters().confirmed(channel);
  }
  clock::time_point now() const override { return clock::now(); }
  void arm_timer(clock::time_point at, unique_function<void()> fired) override {
    timer_.expires_at(at);
    timer_.async_wait([fired = std::move(fired)](std::error_code ec) mutable {
      if (!ec) fired();  // a timer cancelled or replaced does nothing
    });
  }
  void cancel_timer() override { timer_.cancel(); }

  bool holds(const std::string& key, const std::string& field) const override {
    return core_->watchdog().held_by(key, field);
  }
  void record_hold(renewal::watchdog::grant grant) override {
    core_->watchdog().held(std::move(grant));
  }
  take_back_book& take_backs() override { return core_->take_backs(); }
  void discard_latch(std::string latch) override { core_->sweeper().discard(std::move(latch)); }

 private:
  std::shared_ptr<client_core> core_;
  asio::steady_timer timer_;
};

}  // namespace

std::shared_ptr<acquire_env> make_core_acquire_env(std::shared_ptr<client_core> core) {
  return containers::make_cached<core_acquire_env>(std::move(core));
}

}  // namespace relock::detail::waiting
