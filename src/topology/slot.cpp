// SPDX-License-Identifier: Apache-2.0
#include "topology/slot.hpp"

#include <array>

namespace relock::topology {
namespace {

// CRC16-CCITT with polynomial 0x1021, initial value 0, no reflection (XMODEM), by table.
constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    std::uint16_t crc = static_cast<std::uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr auto table = make_table();

}  // namespace

std::uint16_t crc16_xmodem(std::string_view data) {
  std::uint16_t crc = 0;
  for (unsigned char c : data) {
    crc = static_cast<std::uint16_t>((crc << 8) ^ table[((crc >> 8) ^ c) & 0xff]);
  }
  return crc;
}

std::string_view hash_tag(std::string_view key) {
  auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  // Searched from after the '{', as the server does; Redisson searches from the start (slot.hpp).
  auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

}  // namespace relock::topology
