// SPDX-License-Identifier: Apache-2.0
#include "pubsub/channel_pair.hpp"

namespace relock::pubsub {

listener_ptr channel_pair::add(std::string channel, listener_function on_event,
                               confirm_callback confirmed) {
  struct both_answers {
    confirm_callback confirmed;
    int due = 2;
    int failed = 0;
    std::error_code first_error;
  };
  auto answers = std::make_shared<both_answers>();
  answers->confirmed = std::move(confirmed);
  auto answered = [answers](std::error_code ec) {
    if (ec && answers->failed++ == 0) answers->first_error = ec;
    if (--answers->due == 0 && answers->confirmed) {
      std::exchange(answers->confirmed,
                    {})(answers->failed == 2 ? answers->first_error : std::error_code());
    }
  };
  auto front = std::make_shared<listener>(listener{channel, on_event, false});
  auto classic = classic_.add(channel, on_event, answered);
  auto sharded = sharded_.add(std::move(channel), std::move(on_event), answered);
  parts_[front.get()] = {std::move(classic), std::move(sharded)};
  return front;
}

listener_ptr channel_pair::add_classic(std::string channel, listener_function on_event,
                                       confirm_callback confirmed) {
  auto l = classic_.add_classic(std::move(channel), std::move(on_event), std::move(confirmed));
  classic_only_.insert(l.get());
  return l;
}

void channel_pair::remove(const listener_ptr& l) {
  if (!l) return;
  if (classic_only_.erase(l.get()) > 0) return classic_.remove(l);
  auto it = parts_.find(l.get());
  if (it == parts_.end()) return;
  classic_.remove(it->second.first);
  sharded_.remove(it->second.second);
  parts_.erase(it);
}

}  // namespace relock::pubsub
