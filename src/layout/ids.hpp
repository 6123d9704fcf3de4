// SPDX-License-Identifier: Apache-2.0
// Random and process-unique identifiers: client UUIDs, release request ids, owner numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relock::layout {

// A version-4 UUID, canonical 36-char lowercase form (data-layout §1: the client id).
std::string random_uuid();
// 32 lowercase hex digits from 16 random bytes (data-layout §1: an unlock request id).
std::string random_request_id();
constexpr std::size_t request_id_size = 32;
// The same written into `out`, which holds request_id_size chars: no allocation.
void random_request_id(char* out);
std::string random_bytes(std::size_t n);
// Lowercase hex of `bytes`, and back: nullopt unless `text` is hex digits of even length (either
// case). A permit id is 16 bytes in Redis and 32 hex digits to users (data-layout §7).
std::string to_hex(std::string_view bytes);
std::optional<std::string> from_hex(std::string_view text);
// A random 64-bit number, e.g. to seed a spin waiter's jitter.
std::uint64_t random_seed();

// The calling thread's number, unique in this process and stable for the thread's life.
std::uint64_t current_thread_number();
// A fresh number from the same sequence, for owners that are not threads.
std::uint64_t next_owner_number();

}  // namespace relock::layout
