// SPDX-License-Identifier: Apache-2.0
// Reconnect delays: capped exponential growth with jitter, so many clients that lost one
// server do not reconnect in lockstep.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace relock::net {

class backoff {
 public:
  backoff(std::chrono::milliseconds min, std::chrono::milliseconds max)
      : min_(std::max<std::chrono::milliseconds>(min, std::chrono::milliseconds(1))),
        max_(std::max(max, min_)) {}

  // The delay before the next attempt: min * 2^failures capped at max, then a random point
  // in its upper half ("equal jitter": never much shorter than planned, never in lockstep).
  std::chrono::milliseconds next() {
    auto ceiling = min_;
    for (unsigned i = 0; i < failures_ && ceiling < max_; ++i) ceiling *= 2;
    ceiling = std::min(ceiling, max_);
    ++failures_;
    std::uniform_int_distribution<std::int64_t> pick(ceiling.count() / 2, ceiling.count());
    return std::chrono::milliseconds(pick(rng_));
  }

  void reset() { failures_ = 0; }
  unsigned failures() const { return failures_; }

 private:
  std::chrono::milliseconds min_, max_;
  unsigned failures_ = 0;
  std::minstd_rand rng_{std::random_device{}()};
};

}  // namespace relock::net
