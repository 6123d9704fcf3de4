// SPDX-License-Identifier: Apache-2.0
// The one driver of the lock sets: runs a decision machine's steps (multi_acquire_fsm,
// quorum_fsm) on the members' own async calls, all at once, and feeds each answer back with
// the time it came. Members may live on different clients, so answers arrive on several I/O
// threads: the machine is only touched under a mutex, and calls go out after it is let go
// (a member may answer at once, on the calling thread).
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <relock/lock.hpp>
#include <relock/lock_set.hpp>

#include "lock_sets/member_address.hpp"
#include "lock_sets/member_step.hpp"
#include "locks/lock_access.hpp"

namespace relock::detail::lock_sets {

template <class Machine>
class member_run : public std::enable_shared_from_this<member_run<Machine>> {
 public:
  using done_fn = completion<void(std::error_code, lock_set_result)>;

  // `options` is what every member gets (lease, stop, on_lost, listen_for_loss); each step
  // sets its own wait.
  member_run(std::vector<mutex> members, owner who, lock_options options, Machine machine,
             done_fn done)
      : members_(std::move(members)),
        who_(who),
        options_(std::move(options)),
        machine_(std::move(machine)),
        done_(std::move(done)) {}

  void start() {
    member_steps steps;
    {
      std::lock_guard guard(mutex_);
      steps = machine_.start(std::chrono::steady_clock::now());
    }
    run(std::move(steps));
  }

 private:
  void run(member_steps steps) {
    for (auto& s : steps) {
      switch (s.what) {
        case member_step::kind::try_once:
        case member_step::kind::wait:
          ask(s);
          break;
        case member_step::kind::release:
          locks::lock_access::release(
              members_[s.member], who_,
              [self = this->shared_from_this(), i = s.member](std::error_code ec,
                                                              std::string detail) {
                if (ec) detail = member_label(self->members_[i], i) + ": " + detail;
                self->heard({member_event::kind::released, i, ec, std::move(detail)});
              });
          break;
        case member_step::kind::finish: {
          done_fn done;
          {
            std::lock_guard guard(mutex_);
            done = std::move(done_);
          }
          if (done) {
            done(s.ec, lock_set_result{s.acquired, std::move(s.detail), s.validity, s.held});
          }
          break;
        }
      }
    }
  }

  void ask(const member_step& s) {
    lock_options o;
    o.lease = options_.lease;
    o.stop = options_.stop;
    o.on_lost = options_.on_lost;
    o.listen_for_loss = options_.listen_for_loss;
    const bool waits = s.what == member_step::kind::wait;
    if (waits) o.wait = s.wait;
    const bool forever = waits && !s.wait;
    auto& member = members_[s.member];
    locks::lock_access::acquire(
        member, who_, std::move(o), forever,
        [self = this->shared_from_this(), i = s.member](std::error_code ec, acquire_result r) {
          if (ec) {
            // Named only on failure: the label parses the member client's URL.
            self->heard({member_event::kind::failed, i, ec,
                         member_label(self->members_[i], i) + ": " + r.detail});
          } else {
            self->heard({r.acquired ? member_event::kind::acquired : member_event::kind::refused,
                         i,
                         ec,
                         {}});
          }
        });
  }

  void heard(member_event e) {
    member_steps steps;
    {
      std::lock_guard guard(mutex_);
      steps = machine_.on(e, std::chrono::steady_clock::now());
    }
    run(std::move(steps));
  }

  std::vector<mutex> members_;  // never changed after construction: read on any I/O thread
  owner who_;
  lock_options options_;
  std::mutex mutex_;
  Machine machine_;
  done_fn done_;
};

}  // namespace relock::detail::lock_sets
