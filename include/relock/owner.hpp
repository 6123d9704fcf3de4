// SPDX-License-Identifier: Apache-2.0
/// \file
/// Who holds a lock. A hold belongs to "<client-id>:<owner-id>" (data-layout §1): by default the
/// owner id is the calling thread's number, so a thread that locks must be the one that unlocks,
/// as with Redisson. Async code, whose continuation may run on any thread, makes an owner once
/// (owner::unique()) and passes it to lock and unlock.
#pragma once

#include <cstdint>

#include <relock/detail/export.hpp>

namespace relock {

/// \copydoc owner.hpp
class RELOCK_API owner {
 public:
  /// The owner numbered `id`: two owners with one number are one owner. Prefer
  /// current_thread() and unique().
  explicit owner(std::uint64_t id) : id_(id) {}

  /// The calling thread's number: unique in this process, stable for the thread's life.
  static owner current_thread();
  /// A fresh number from the same sequence, so it never equals any thread's.
  static owner unique();

  /// Its number: the owner id in "<client-id>:<owner-id>". Owners with one number are equal.
  std::uint64_t id() const { return id_; }
  friend bool operator==(owner, owner) = default;

 private:
  std::uint64_t id_;
};

}  // namespace relock
