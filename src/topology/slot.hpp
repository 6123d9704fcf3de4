// SPDX-License-Identifier: Apache-2.0
// Redis Cluster key slots: CRC16 (XMODEM) of the key's hash tag, modulo 16384.
// https://redis.io/docs/reference/cluster-spec/#key-distribution-model
#pragma once

#include <cstdint>
#include <string_view>

namespace relock::topology {

constexpr std::uint16_t slot_count = 16384;

std::uint16_t crc16_xmodem(std::string_view data);

// The part of `key` that is hashed: the text between the first '{' and the first '}' after it
// when that text is not empty, otherwise the whole key. This is the server's rule
// (keyHashSlot in Redis's cluster.c), so relock sends each key to the node that will take it.
//
// Redisson (ClusterConnectionManager.calcSlot for String and byte[] keys, which is what its
// locks, renewals and channels use) pairs the first '{' with the first '}' anywhere in the key:
// when a '}' comes before the first '{' it hashes the whole key. So "a}b{c}", "}{x}" and
// "x}{y}z" go to the tag's slot here and on the server but to the whole key's slot in Redisson,
// which then follows the server's MOVED to the same node. Every other key, "a{}b", "a{b",
// "a{b}c}" and "{}{x}" included, gets the same slot from both. (Redisson before 3.13.4 hashed
// the empty tag of "a{}b" to slot 0 and threw on "a{b".)
std::string_view hash_tag(std::string_view key);

inline std::uint16_t slot_of(std::string_view key) {
  return crc16_xmodem(hash_tag(key)) % slot_count;
}

}  // namespace relock::topology
