// Random and process-unique identifiers: client UUIDs, release request ids, owner numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace relock::objects {

// A version-4 UUID, canonical 36-char lowercase form (data-layout §1: the client id).
std::string random_uuid();
// 32 lowercase hex digits from 16 random bytes (data-layout §1: an unlock request id).
std::string random_request_id();
std::string random_bytes(std::size_t n);
// A random 64-bit number, e.g. to seed a spin waiter's jitter.
std::uint64_t random_seed();

// The calling thread's number, unique in this process and stable for the thread's life.
std::uint64_t current_thread_number();
// A fresh number from the same sequence, for owners that are not threads.
std::uint64_t next_owner_number();

}  // namespace relock::objects
