// SPDX-License-Identifier: Apache-2.0
// relock::read_write_lock: Redisson's RReadWriteLock in C++, on the same data (docs/data-layout.md
// §4), so Java and C++ readers and writers share one name.
//
// Two sides, each a relock::mutex with the whole surface (blocking, try_lock_for, leases and the
// watchdog, stop_token, async with any completion token and an explicit owner, queries):
// read_lock() is shared between owners, write_lock() excludes everyone else. For one owner:
// read + read is reentrant, write + write is reentrant, write then read is allowed (a downgrade:
// releasing the write leaves the read), and read then write is refused at once with
// errc::would_deadlock (it would wait for its own read for ever, as in Redisson #4796).
// A write release wakes every waiter, readers and writers; a read release that frees the lock
// wakes one.
//
// read_write_lock itself meets the standard SharedTimedLockable requirements for the calling
// thread: lock/try_lock*/unlock take the write side, *_shared the read side, so
// std::unique_lock and std::shared_lock work on it as on std::shared_timed_mutex.
//
// A cheap handle (two Locks); it must not outlive its client. Misuse as for mutex.
#pragma once

#include <chrono>

#include <relock/detail/export.hpp>
#include <relock/lock.hpp>

namespace relock {

class RELOCK_API read_write_lock {
 public:
  const std::string& name() const { return read_.name(); }
  mutex& read_lock() { return read_; }
  mutex& write_lock() { return write_; }

  // --- Exclusive: the write side ---
  void lock() { write_.lock(); }
  bool try_lock() { return write_.try_lock(); }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return write_.try_lock_for(wait);
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& until) {
    return write_.try_lock_until(until);
  }
  void unlock() noexcept { write_.unlock(); }

  // --- Shared: the read side ---
  void lock_shared() { read_.lock(); }
  bool try_lock_shared() { return read_.try_lock(); }
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait) {
    return read_.try_lock_for(wait);
  }
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& until) {
    return read_.try_lock_until(until);
  }
  void unlock_shared() noexcept { read_.unlock(); }

 private:
  friend class client;  // makes every handle
  read_write_lock(mutex read, mutex write) : read_(std::move(read)), write_(std::move(write)) {}

  mutex read_;
  mutex write_;
};

}  // namespace relock
