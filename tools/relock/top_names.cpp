// SPDX-License-Identifier: Apache-2.0
#include "top_names.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace relock_cli {
namespace {

bool has_brace(std::string_view text) { return text.find('{') != std::string_view::npos; }

bool ends_with(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

bool all_of(std::string_view text, bool (*good)(char)) {
  return !text.empty() && std::all_of(text.begin(), text.end(), good);
}
bool decimal(char c) { return c >= '0' && c <= '9'; }
bool hex(char c) { return decimal(c) || (c >= 'a' && c <= 'f'); }

// The name a derived name was made from, when `wrapped` is what §1.2 makes of one: "{name}"
// for a name without '{', the name itself otherwise. "{x}" is read as the name x: a name that
// is itself "{x}" derives the same text, and the scan puts such keys right (top_scan.cpp).
std::optional<std::string> unwrapped(std::string_view wrapped) {
  if (wrapped.size() >= 3 && wrapped.front() == '{' && wrapped.back() == '}' &&
      !has_brace(wrapped.substr(1, wrapped.size() - 2))) {
    return std::string(wrapped.substr(1, wrapped.size() - 2));
  }
  if (has_brace(wrapped)) return std::string(wrapped);
  return std::nullopt;
}

// What is left of `text` once its last `parts` ':'-separated parts are gone; none when it has
// fewer.
std::optional<std::string_view> without_last_parts(std::string_view text, int parts) {
  for (int i = 0; i < parts; ++i) {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    text = text.substr(0, colon);
  }
  return text;
}

// The name behind a prefixed key: redisson_lock_queue:{orders} -> orders.
std::optional<std::string> from_prefixed(std::string_view key) {
  // "redisson_delay_queue:" after "redisson_delay_queue_timeout:": neither is a prefix of the
  // other, so the order does not matter, but the list reads in §-order.
  static constexpr std::array<std::string_view, 5> prefixes{
      "redisson_lock_queue:",           // fair lock's waiters (§3)
      "redisson_lock_timeout:",         // their deadlines (§3)
      "redisson_lock_token:",           // fenced lock's counter (§5)
      "redisson_delay_queue_timeout:",  // delayed queue's due times (§9)
      "redisson_delay_queue:",          // its elements (§9)
  };
  for (const auto prefix : prefixes) {
    if (key.substr(0, prefix.size()) == prefix) return unwrapped(key.substr(prefix.size()));
  }
  // An unlock latch (§1.8): prefixed("redisson_unlock_latch", name) + ":" + 32 hex digits.
  constexpr std::string_view latch = "redisson_unlock_latch:";
  if (key.substr(0, latch.size()) == latch && key.size() > latch.size() + 33 &&
      key[key.size() - 33] == ':' && all_of(key.substr(key.size() - 32), hex)) {
    return unwrapped(key.substr(latch.size(), key.size() - latch.size() - 33));
  }
  return std::nullopt;
}

// The name behind a suffixed key: a read hold's timeout, {orders}:<uuid>:<thread>:rwlock_timeout:2
// (§4), or a permit-expirable semaphore's permits taken, {orders}:timeout (§7).
std::optional<std::string> from_suffixed(std::string_view key) {
  constexpr std::string_view read_hold = ":rwlock_timeout:";
  const auto at = key.rfind(read_hold);
  if (at != std::string_view::npos && all_of(key.substr(at + read_hold.size()), decimal)) {
    // The owner field before it is "<client-id>:<thread-id>", Redisson's and relock's alike.
    if (const auto wrapped = without_last_parts(key.substr(0, at), 2)) return unwrapped(*wrapped);
    return std::nullopt;
  }
  constexpr std::string_view permits = ":timeout";
  if (ends_with(key, permits)) return unwrapped(key.substr(0, key.size() - permits.size()));
  return std::nullopt;
}

}  // namespace

key_owner object_of(std::string_view key) {
  if (auto name = from_prefixed(key)) return {std::move(*name), true};
  if (auto name = from_suffixed(key)) return {std::move(*name), true};
  return {std::string(key), false};
}

std::string prefixed(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  out += has_brace(name) ? ":" + std::string(name) : ":{" + std::string(name) + "}";
  return out;
}

}  // namespace relock_cli
