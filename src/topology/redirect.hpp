// SPDX-License-Identifier: Apache-2.0
// Cluster redirections: the MOVED and ASK error replies, read into a value.
// https://redis.io/docs/reference/cluster-spec/#moved-redirection
//
// A pure function of the error text: no I/O, never throws, garbage gives nullopt, so the
// caller decides alone what an unreadable redirection means (it treats it as a plain error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relock::topology {

struct redirect {
  // MOVED: the slot has a new owner, update the slot map. ASK: only this one command goes to
  // the target, preceded by ASKING; the slot map stays as it is (a migration is under way).
  // The member hides the type's name; spell the type `redirect::kind::moved` as usual.
  enum class kind { moved, ask } kind;
  std::uint16_t slot;
  // Verbatim from the server: an IPv4 address, a hostname, or an IPv6 address without brackets
  // ("::1"). Empty when the server's endpoint is unknown (cluster-preferred-endpoint-type
  // unknown-endpoint, Redis 7): then use the host of the connection that got the error.
  std::string host;
  std::uint16_t port;

  friend bool operator==(const redirect&, const redirect&) = default;
};

// Reads "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>", the error text without the
// RESP '-' type byte, as the reader hands it over. The port follows the LAST colon, so IPv6
// hosts need no brackets. Anything else, including a slot >= 16384 or a port outside 1..65535,
// gives nullopt.
std::optional<redirect> parse_redirect(std::string_view error_text);

}  // namespace relock::topology
