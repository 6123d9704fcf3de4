// SPDX-License-Identifier: Apache-2.0
#include "exec/sha1.hpp"

#include <array>
#include <cstdint>

namespace relock::exec {
namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// One 64-byte block, as FIPS 180-4 §6.1.2 describes it.
void compress(std::array<std::uint32_t, 5>& h, const unsigned char* block) {
  std::array<std::uint32_t, 80> w{};
  for (int t = 0; t < 16; ++t) {
    w[t] = std::uint32_t(block[4 * t]) << 24 | std::uint32_t(block[4 * t + 1]) << 16 |
           std::uint32_t(block[4 * t + 2]) << 8 | std::uint32_t(block[4 * t + 3]);
  }
  for (int t = 16; t < 80; ++t) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  auto [a, b, c, d, e] = h;
  for (int t = 0; t < 80; ++t) {
    std::uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    std::uint32_t next = rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = next;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<std::uint32_t, 5> h{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t full = data.size() / 64 * 64;
  for (std::size_t i = 0; i < full; i += 64) compress(h, bytes + i);

  // Padding: 0x80, zeros, then the message length in bits, big-endian, to a block boundary.
  std::array<unsigned char, 128> tail{};
  std::size_t rest = data.size() - full;
  for (std::size_t i = 0; i < rest; ++i) tail[i] = bytes[full + i];
  tail[rest] = 0x80;
  std::size_t tail_size = rest + 1 + 8 <= 64 ? 64 : 128;
  std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_size - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (std::size_t i = 0; i < tail_size; i += 64) compress(h, tail.data() + i);

  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (std::uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out += digits[(word >> shift) & 0xf];
  }
  return out;
}

}  // namespace relock::exec
