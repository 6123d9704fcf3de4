// SPDX-License-Identifier: Apache-2.0
#include "layout/ids.hpp"

#include <atomic>
#include <random>

#include <unistd.h>

namespace relock::layout {
namespace {

std::mt19937_64 seeded_generator() {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device(), device(), device()};
  return std::mt19937_64(seed);
}

// One generator per thread, seeded from the OS: safe from any thread without a lock. Reseeded
// in a forked child, which would otherwise repeat its parent's numbers: the child's first
// client would get the same UUID as the parent's next one, and so the same owner fields.
std::mt19937_64& generator() {
  thread_local std::mt19937_64 rng = seeded_generator();
  thread_local pid_t seeded_in = getpid();
  if (const pid_t now = getpid(); now != seeded_in) {
    rng = seeded_generator();
    seeded_in = now;
  }
  return rng;
}

std::atomic<std::uint64_t> owner_sequence{1};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Lowercase hex of `bytes` into `out`, which holds twice as many chars.
void write_hex(std::string_view bytes, char* out) {
  static constexpr char digits[] = "0123456789abcdef";
  for (unsigned char b : bytes) {
    *out++ = digits[b >> 4];
    *out++ = digits[b & 0xf];
  }
}

}  // namespace

std::string to_hex(std::string_view bytes) {
  std::string out(bytes.size() * 2, '0');
  write_hex(bytes, out.data());
  return out;
}

std::optional<std::string> from_hex(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out(text.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = hex_digit(text[2 * i]);
    const int low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out[i] = static_cast<char>(high * 16 + low);
  }
  return out;
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  auto& rng = generator();
  for (std::size_t i = 0; i < n; i += 8) {
    std::uint64_t word = rng();
    for (std::size_t j = 0; j < 8 && i + j < n; ++j)
      out[i + j] = static_cast<char>(word >> (8 * j));
  }
  return out;
}

std::uint64_t random_seed() { return generator()(); }

void random_request_id(char* out) {
  // Made on every try and every release: nothing here allocates.
  char bytes[request_id_size / 2];
  auto& rng = generator();
  for (std::size_t i = 0; i < sizeof bytes; i += 8) {
    const std::uint64_t word = rng();
    for (std::size_t j = 0; j < 8; ++j) bytes[i + j] = static_cast<char>(word >> (8 * j));
  }
  write_hex(std::string_view(bytes, sizeof bytes), out);
}

std::string random_request_id() {
  std::string id(request_id_size, '0');
  random_request_id(id.data());
  return id;
}

std::string random_uuid() {
  std::string bytes = random_bytes(16);
  bytes[6] = static_cast<char>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<char>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string h = to_hex(bytes);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20);
}

std::uint64_t current_thread_number() {
  thread_local const std::uint64_t number = owner_sequence.fetch_add(1);
  return number;
}

std::uint64_t next_owner_number() { return owner_sequence.fetch_add(1); }

}  // namespace relock::layout
