// Redis Cluster key slots: CRC16 (XMODEM) of the key's hash tag, modulo 16384.
// https://redis.io/docs/reference/cluster-spec/#key-distribution-model
#pragma once

#include <cstdint>
#include <string_view>

namespace relock::topology {

constexpr std::uint16_t slot_count = 16384;

std::uint16_t crc16_xmodem(std::string_view data);

// The part of `key` that is hashed: the text between the first '{' and the next '}' when that
// text is not empty, otherwise the whole key.
std::string_view hash_tag(std::string_view key);

inline std::uint16_t slot_of(std::string_view key) {
  return crc16_xmodem(hash_tag(key)) % slot_count;
}

}  // namespace relock::topology
