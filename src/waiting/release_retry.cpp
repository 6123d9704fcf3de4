// SPDX-License-Identifier: Apache-2.0
#include "waiting/release_retry.hpp"

#include <asio/steady_timer.hpp>
#include <relock/errors.hpp>

#include "client_core.hpp"
#include "waiting/release_retry_fsm.hpp"
#include "waiting/take_back_book.hpp"

namespace relock::detail::waiting {
namespace {

// Performs what release_retry_fsm decides.
class release_retry_op : public std::enable_shared_from_this<release_retry_op>,
                         public shutdown_aware {
 public:
  release_retry_op(std::shared_ptr<client_core> core, release_request request,
                   std::chrono::steady_clock::time_point until)
      : core_(std::move(core)), request_(std::move(request)), fsm_(until), timer_(core_->io()) {}

  void start() {
    core_->track(*this);
    core_->take_backs().add(who(), request_);
    act(fsm_.start(now()));
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  take_back_book::id who() const { return {request_.key, request_.owner}; }

  bool still_booked() const {
    for (const auto& r : core_->take_backs().pending(who())) {
      if (r.latch == request_.latch) return true;
    }
    return false;
  }

  void act(release_retry_fsm::action a) {
    switch (a.what) {
      case release_retry_fsm::step::none:
        return;
      case release_retry_fsm::step::wait:
        timer_.expires_at(*a.until);
        return timer_.async_wait([self = shared_from_this()](std::error_code ec) {
          if (!ec) self->act(self->fsm_.timer(now(), self->still_booked()));
        });
      case release_retry_fsm::step::send:
        return send();
      case release_retry_fsm::step::finish:
        if (tracked_) core_->untrack(*this);
        tracked_ = false;
        timer_.cancel();
        return;
    }
  }

  void send() {
    release_request copy = request_;
    copy.timeout = core_->settings().command_timeout;
    release_now(core_, std::move(copy),
                [self = shared_from_this()](std::error_code ec, std::string detail) {
                  const bool ran = !release_not_run(ec, detail) && ec != errc::cancelled;
                  if (ran) {
                    self->core_->take_backs().answered(self->who(), self->request_.latch);
                    if (!ec) {
                      self->core_->log(log_level::info,
                                       "released '" + self->request_.key +
                                           "' after all: a copy of the unlock whose "
                                           "answer was lost was answered");
                    }
                  }
                  self->act(self->fsm_.answered(ran, now()));
                });
  }

  void on_shutdown() override {
    timer_.cancel();
    act(fsm_.shutdown(now(), still_booked()));
  }

  std::shared_ptr<client_core> core_;
  release_request request_;
  release_retry_fsm fsm_;
  asio::steady_timer timer_;
  bool tracked_ = true;
};

}  // namespace

void retry_release(const std::shared_ptr<client_core>& core, release_request request,
                   std::chrono::steady_clock::time_point until) {
  // Sent again, it runs in relock's name: no local hold is counted down twice, and its latch is
  // written whatever it finds, so a stale copy landing later changes nothing.
  request.cleanup = true;
  request.take_back = true;
  std::make_shared<release_retry_op>(core, std::move(request), until)->start();
}

}  // namespace relock::detail::waiting
