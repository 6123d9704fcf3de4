// SPDX-License-Identifier: Apache-2.0
#include "objects/release_retry.hpp"

#include <asio/steady_timer.hpp>
#include <relock/errors.hpp>

#include "client_core.hpp"
#include "objects/take_back_book.hpp"

namespace relock::detail {
namespace {

class release_retry_op : public std::enable_shared_from_this<release_retry_op>,
                         public shutdown_aware {
 public:
  release_retry_op(std::shared_ptr<client_core> core, release_request request,
                   std::chrono::steady_clock::time_point until)
      : core_(std::move(core)), request_(std::move(request)), until_(until), timer_(core_->io()) {}

  void start() {
    core_->track(*this);
    core_->take_backs().add(who(), request_);
    wait_then_send();
  }

 private:
  take_back_book::id who() const { return {request_.key, request_.owner}; }

  bool still_booked() const {
    for (const auto& r : core_->take_backs().pending(who())) {
      if (r.latch == request_.latch) return true;
    }
    return false;
  }

  void wait_then_send() {
    timer_.expires_after(retry_pause);
    timer_.async_wait([self = shared_from_this()](std::error_code ec) {
      if (!ec) self->send();
    });
  }

  void send() {
    // Answered meanwhile (a try of the owner settled it), or past the lease: nothing left to do
    // here. A booked release stays booked: the owner's next try sends it first.
    if (!still_booked() || std::chrono::steady_clock::now() >= until_) return finish();
    in_flight_ = true;
    release_request copy = request_;
    copy.timeout = core_->settings().command_timeout;
    release_now(core_, std::move(copy),
                [self = shared_from_this()](std::error_code ec, std::string detail) {
                  self->in_flight_ = false;
                  if (!release_not_run(ec, detail) && ec != errc::cancelled) {
                    self->core_->take_backs().answered(self->who(), self->request_.latch);
                    if (!ec) {
                      self->core_->log(log_level::info,
                                       "released '" + self->request_.key +
                                           "' after all: a copy of the unlock whose "
                                           "answer was lost was answered");
                    }
                    return self->finish();
                  }
                  if (self->stopping_) return self->finish();
                  self->wait_then_send();
                });
  }

  void on_shutdown() override {
    stopping_ = true;
    timer_.cancel();
    // One last copy, which the shutdown's drain lets finish while Redis answers.
    if (!in_flight_) send();
  }

  void finish() {
    if (tracked_) core_->untrack(*this);
    tracked_ = false;
    timer_.cancel();
  }

  std::shared_ptr<client_core> core_;
  release_request request_;
  std::chrono::steady_clock::time_point until_;
  asio::steady_timer timer_;
  bool in_flight_ = false;
  bool stopping_ = false;
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

}  // namespace relock::detail
