// SPDX-License-Identifier: Apache-2.0
// A blocking take's decisions (blocking_queue::take, poll with a wait), with no I/O and no clock
// of its own: the operation around it (take_op) feeds it what happened, with the time, and does
// what it answers.
//
//   send BLPOP (at most `chunk` at a time) --nil--> send again ... --element--> finish, got
//   the deadline passes with BLPOP out --> unblock it (CLIENT UNBLOCK) and finish, timed out
//   stop (stop_token, client shutting down) --> the same, cancelled
//   Redis away (a lost connection, LOADING, READONLY after a failover, a redirection) -->
//     try again a little later while the deadline lasts; at the deadline, finish with the error
//   a refusal for good (WRONGTYPE, NOAUTH...) --> finish with it
// A BLPOP left out when the take finished is an orphan: if it still brings an element (the
// server popped it before it heard the unblock), the element goes back to the head of the list,
// so no element is lost to a take that gave up. One that the server popped while the connection
// broke, before its reply reached us, is lost: nothing can tell it from one never popped.
//
// Not thread-safe: one operation drives it, on the I/O thread.
#pragma once

#include <chrono>
#include <optional>
#include <system_error>

namespace relock::detail::queues {

class take_fsm {
 public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;
  using duration = std::chrono::milliseconds;

  // The longest single BLPOP: a take that waits longer re-issues it, so a connection that died
  // silently, or a master that moved, is found within this.
  static constexpr duration chunk{5'000};
  static constexpr duration retry_after_outage{100};

  enum class step {
    none,       // nothing to do
    send,       // BLPOP for `block_for`, routed afresh
    retry,      // send again after `delay`
    finish,     // complete the take
    unblock,    // complete it, and unblock the BLPOP still out (it becomes an orphan)
    give_back,  // an orphan brought an element: push it back to the head of the list
  };
  enum class ending { got, timed_out, failed, cancelled };

  struct action {
    step what = step::none;
    duration block_for{0};  // send
    duration delay{0};      // retry
    ending why = ending::got;
    std::error_code ec{};  // finish/unblock with ending::failed or ::cancelled
  };

  // `deadline` empty: wait for ever (take).
  explicit take_fsm(std::optional<time_point> deadline) : deadline_(deadline) {}

  action start(time_point now);
  action got_element();
  action got_nil(time_point now);
  // An error reply or a failed send; `transient`: Redis away or moving (worth another try).
  action failed(std::error_code ec, bool transient, time_point now);
  action retry_due(time_point now);
  action deadline_passed(time_point now);
  action stop(std::error_code why);

  bool finished() const { return finished_; }
  bool blocking() const { return out_; }

 private:
  action send(time_point now);
  action end(ending why, std::error_code ec = {});

  std::optional<time_point> deadline_;
  bool out_ = false;  // a BLPOP is out, unanswered
  bool finished_ = false;
  std::error_code away_{};  // the last transient failure, reported if the deadline ends on it
};

}  // namespace relock::detail::queues
