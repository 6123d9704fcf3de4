// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock::read_write_lock: Redisson's RReadWriteLock in C++, on the same data (docs/data-layout.md
/// §4), so Java and C++ readers and writers share one name.
///
/// Two sides, each a relock::mutex with the whole surface (blocking, try_lock_for, leases and the
/// watchdog, stop_token, async with any completion token and an explicit owner, queries):
/// read_lock() is shared between owners, write_lock() excludes everyone else. For one owner:
/// read + read is reentrant, write + write is reentrant, write then read is allowed (a downgrade:
/// releasing the write leaves the read), and read then write is refused at once with
/// errc::would_deadlock (it would wait for its own read for ever, as in Redisson #4796).
/// A write release wakes every waiter, readers and writers; a read release that frees the lock
/// wakes one.
///
/// read_write_lock itself meets the standard SharedTimedLockable requirements for the calling
/// thread: lock/try_lock*/unlock take the write side, *_shared the read side, so
/// std::unique_lock and std::shared_lock work on it as on std::shared_timed_mutex.
///
/// A cheap handle (two mutexes); it must not outlive its client. Misuse as for mutex.
#pragma once

#include <chrono>

#include <relock/detail/export.hpp>
#include <relock/lock.hpp>

namespace relock {

/// \copydoc read_write_lock.hpp
class RELOCK_API read_write_lock {
 public:
  /// The name it was made with.
  const std::string& name() const { return read_.name(); }
  /// The read side: shared between owners.
  mutex& read_lock() { return read_; }
  /// The write side: excludes everyone else.
  mutex& write_lock() { return write_; }

  /// \name Exclusive: the write side
  ///@{

  /// Waits for ever for the write side, as write_lock().lock().
  void lock() { write_.lock(); }
  /// One attempt at the write side.
  bool try_lock() { return write_.try_lock(); }
  /// Waits at most `wait` for the write side.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return write_.try_lock_for(wait);
  }
  /// Waits until `until` for the write side.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& until) {
    return write_.try_lock_until(until);
  }
  /// Releases the write side; never throws, as mutex::unlock().
  void unlock() noexcept { write_.unlock(); }
  ///@}

  /// \name Shared: the read side
  ///@{

  /// Waits for ever for the read side, as read_lock().lock().
  void lock_shared() { read_.lock(); }
  /// One attempt at the read side.
  bool try_lock_shared() { return read_.try_lock(); }
  /// Waits at most `wait` for the read side.
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait) {
    return read_.try_lock_for(wait);
  }
  /// Waits until `until` for the read side.
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& until) {
    return read_.try_lock_until(until);
  }
  /// Releases the read side; never throws, as mutex::unlock().
  void unlock_shared() noexcept { read_.unlock(); }
  ///@}

 private:
  friend class client;  // makes every handle
  read_write_lock(mutex read, mutex write) : read_(std::move(read)), write_(std::move(write)) {}

  mutex read_;
  mutex write_;
};

}  // namespace relock
