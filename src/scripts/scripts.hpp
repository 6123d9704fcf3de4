// SPDX-License-Identifier: Apache-2.0
// The Lua sources of src/scripts/*.lua, embedded at build time (cmake/embed_scripts.cmake).
#pragma once

#include <string_view>

namespace relock::scripts {

extern const std::string_view lock_acquire;
extern const std::string_view lock_acquire_once;
extern const std::string_view lock_release;
extern const std::string_view release_head;  // the head of every lock-family release script
extern const std::string_view lock_force_release;
extern const std::string_view lock_renew;
extern const std::string_view lock_inspect;
// Read-write lock (data-layout §4).
extern const std::string_view rwlock_read_acquire;
extern const std::string_view rwlock_read_release;
extern const std::string_view rwlock_write_acquire;
extern const std::string_view rwlock_write_release;
extern const std::string_view rwlock_force_release;
extern const std::string_view rwlock_renew;
// Fair lock (data-layout §3): fair_queue is the head of each of the others.
extern const std::string_view fair_queue;
extern const std::string_view fair_acquire;
extern const std::string_view fair_release;
extern const std::string_view fair_force_release;
extern const std::string_view fair_give_up;
// Fenced lock (data-layout §5).
extern const std::string_view fenced_acquire;
// Queues (data-layout §9).
extern const std::string_view queue_clear;
extern const std::string_view delayed_value;  // the head of the two below
extern const std::string_view delayed_transfer;
extern const std::string_view delayed_find;
extern const std::string_view delayed_offer;
extern const std::string_view queue_inspect;
// Semaphores and the count-down latch (data-layout §7): synchronizer_head is the head of each.
extern const std::string_view synchronizer_head;
extern const std::string_view semaphore_acquire;
extern const std::string_view semaphore_release;
extern const std::string_view semaphore_take_back;
extern const std::string_view semaphore_admin;
extern const std::string_view permit_acquire;
extern const std::string_view permit_release;
extern const std::string_view permit_renew;
extern const std::string_view latch_await;
extern const std::string_view latch_admin;

}  // namespace relock::scripts
