// SPDX-License-Identifier: Apache-2.0
// client::inspect: one read-only script reads the name's key and the lock family's auxiliary
// keys (lock_inspect.lua); the kind is then recognised here, from the data alone.
#include "layout/inspect.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include <relock/errors.hpp>

#include "client_core.hpp"
#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "master_watch.hpp"
#include "scripts/scripts.hpp"
#include "server_name.hpp"

namespace relock {

const char* to_string(object_kind kind) noexcept {
  switch (kind) {
    case object_kind::none:
      return "none";
    case object_kind::lock:
      return "lock";
    case object_kind::read_write_lock:
      return "read-write";
    case object_kind::fair_lock:
      return "fair";
    case object_kind::fenced_lock:
      return "fenced";
    case object_kind::counter:
      return "counter";
    case object_kind::unknown:
      return "unknown";
    case object_kind::permit_semaphore:
      return "permit-semaphore";
  }
  return "unknown";
}

const char* to_string(hold_side side) noexcept {
  switch (side) {
    case hold_side::exclusive:
      return "exclusive";
    case hold_side::read:
      return "read";
    case hold_side::write:
      return "write";
  }
  return "exclusive";
}

}  // namespace relock

namespace relock::layout {
namespace {

const exec::script inspect_script{"lock_inspect", scripts::lock_inspect, /*writes=*/false};

// The script's reply, by position (lock_inspect.lua).
enum field : std::size_t {
  main_type,
  main_pttl,
  main_body,
  token_type,
  token_value,
  queue_type,
  queue_owners,
  timeout_type,
  timeout_scores,
  read_hold_leases,
  permits_type,
  permits_count,
  permits_list,
  reply_size
};

// Redisson's score for a permit taken without a lease: it never expires.
constexpr std::int64_t never_expires = 922337203685477;

std::optional<std::int64_t> decimal(std::string_view text) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

// A hold count as every lock script writes it: digits only (as lock_force_release.lua checks).
std::optional<std::int64_t> hold_count(std::string_view text) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  return decimal(text);
}

// A sorted-set score in Redis's text form ("1700000000000", "1.7e+12", "inf"); from_chars
// rather than strtod, which would follow the process's locale.
std::optional<std::int64_t> epoch_ms(std::string_view text) {
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  // 2^63 is exactly representable; anything at or beyond it would overflow the cast.
  constexpr double bound = 9223372036854775808.0;
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(d) || d >= bound ||
      d < -bound) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d);
}

// The lock's hash: owner field -> holds, plus `mode` for a read-write lock. false when any
// field is of another shape (then it is no lock we know).
bool read_holders(const resp::reply& hash, const resp::reply& leases, lock_info& info) {
  constexpr std::string_view write_suffix = ":write";
  std::vector<holder> holders;
  std::optional<std::string> mode;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    const std::string& name = hash.elements[i].str;
    const std::string& value = hash.elements[i + 1].str;
    if (name == "mode" && (value == "read" || value == "write")) {
      mode = value;
      continue;
    }
    const auto holds = hold_count(value);
    if (!holds) return false;
    holder h{name, *holds, hold_side::exclusive};
    // The script lists one entry per field, in the hash's order: i / 2 is this field's.
    if (i / 2 < leases.elements.size()) {
      for (const auto& pttl : leases.elements[i / 2].elements) {
        h.read_leases.push_back(pttl.integer >= 0
                                    ? std::optional(std::chrono::milliseconds(pttl.integer))
                                    : std::nullopt);
      }
    }
    holders.push_back(std::move(h));
  }
  if (mode) {
    for (auto& h : holders) {
      if (h.owner.ends_with(write_suffix)) {
        h.owner.resize(h.owner.size() - write_suffix.size());
        h.side = hold_side::write;
      } else {
        h.side = hold_side::read;
      }
    }
  }
  info.holders = std::move(holders);
  info.mode = std::move(mode);
  return true;
}

// The auxiliary keys; false when one of them holds another type or shape.
bool read_auxiliaries(const std::vector<resp::reply>& r, lock_info& info) {
  const std::string& token_kind = r[token_type].str;
  if (token_kind == "string") {
    info.fencing_token = decimal(r[token_value].str);
    if (!info.fencing_token) return false;
  } else if (token_kind != "none") {
    return false;
  }
  const std::string& queue_kind = r[queue_type].str;
  const std::string& timeout_kind = r[timeout_type].str;
  if ((queue_kind != "list" && queue_kind != "none") ||
      (timeout_kind != "zset" && timeout_kind != "none")) {
    return false;
  }
  const auto& owners = r[queue_owners].elements;
  const auto& scores = r[timeout_scores].elements;
  for (std::size_t i = 0; i < owners.size(); ++i) {
    queued_waiter w{owners[i].str, std::nullopt};
    if (i < scores.size() && !scores[i].is_nil()) w.gives_up_at_ms = epoch_ms(scores[i].str);
    info.waiters.push_back(std::move(w));
  }
  return true;
}

// A permit-expirable semaphore's permits taken: member, score, member, score...
void read_permits(const std::vector<resp::reply>& r, lock_info& info) {
  info.permits_taken = r[permits_count].integer;
  const auto& flat = r[permits_list].elements;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
    semaphore_permit p{layout::to_hex(flat[i].str), epoch_ms(flat[i + 1].str)};
    if (p.expires_at_ms == never_expires) p.expires_at_ms.reset();
    info.permits.push_back(std::move(p));
  }
}

// What the data says the name is (lock_info.hpp).
object_kind recognise(const std::vector<resp::reply>& r, lock_info& info) {
  const bool aux_ok = read_auxiliaries(r, info);
  // A lock's family: fair when someone queues (it shows only then), else fenced by its token.
  const auto lock_family = [&](object_kind plain) {
    if (!info.waiters.empty()) return object_kind::fair_lock;
    if (info.fencing_token) return object_kind::fenced_lock;
    return plain;
  };
  const std::string& type = info.redis_type;
  // The permits taken from a permit-expirable semaphore ({name}:timeout), when there are any.
  const bool permits = r[permits_type].str == "zset";
  if (permits) read_permits(r, info);
  if (type == "none") {
    if (!aux_ok) return object_kind::unknown;
    const auto kind = lock_family(object_kind::none);
    // Its available count deleted (or never written) while permits are out.
    return kind == object_kind::none && permits ? object_kind::permit_semaphore : kind;
  }
  if (type == "hash") {
    if (!aux_ok || !r[main_body].is_array() ||
        !read_holders(r[main_body], r[read_hold_leases], info)) {
      return object_kind::unknown;
    }
    return info.mode ? object_kind::read_write_lock : lock_family(object_kind::lock);
  }
  if (type == "string" && r[main_body].is_string()) {
    info.value = decimal(r[main_body].str);
    if (info.value) return permits ? object_kind::permit_semaphore : object_kind::counter;
  }
  return object_kind::unknown;
}

std::error_code decode(const resp::reply& r, lock_info& info) {
  if (!r.is_array() || r.elements.size() != reply_size || !r.elements[main_type].is_string() ||
      !r.elements[main_pttl].is_integer() || !r.elements[queue_owners].is_array() ||
      !r.elements[timeout_scores].is_array() || !r.elements[permits_type].is_string() ||
      !r.elements[permits_count].is_integer() || !r.elements[permits_list].is_array()) {
    return errc::server_error;  // not what lock_inspect.lua returns
  }
  const auto& e = r.elements;
  info.redis_type = e[main_type].str;
  const std::int64_t pttl = e[main_pttl].integer;
  if (pttl == -1) {
    info.remaining_lease = std::chrono::milliseconds::max();
  } else if (pttl >= 0) {
    info.remaining_lease = std::chrono::milliseconds(pttl);
  }  // -2: nothing stored
  info.kind = recognise(e, info);
  if (info.kind == object_kind::counter || info.kind == object_kind::unknown ||
      info.kind == object_kind::permit_semaphore) {
    // mutex data only for a lock: what the auxiliary keys hold means nothing next to these.
    info.holders.clear();
    info.mode.reset();
    info.waiters.clear();
    info.fencing_token.reset();
  }
  if (info.kind != object_kind::permit_semaphore) {
    // Permits only for a permit semaphore: a sorted set under a lock's name is no business of it.
    info.permits_taken = 0;
    info.permits.clear();
  }
  return {};
}

// Completes `info` with what the master that answered says of itself: its name and version,
// and with replica sync on, how far its replicas are. Neither fails the inspect: a server that
// refuses INFO leaves them empty. Two round trips after the script, one with sync off.
void ask_server(exec::executor& executor, lock_info info, inspect_callback done) {
  const std::string key = info.key;
  executor.run(
      key, resp::request{"INFO", "server"},
      [&executor, info = std::move(info), done = std::move(done)](std::error_code ec,
                                                                  resp::reply r) mutable {
        if (!ec && r.is_string()) info.server = detail::server_name_of(r.str);
        // INFO refused (an ACL without it) or the client going away: the replicas' INFO
        // would meet the same.
        if (ec || info.synced_replicas == 0) return done({}, "", std::move(info));
        const std::string key = info.key;
        executor.run(
            key, resp::request{"INFO", "replication"},
            [info = std::move(info), done = std::move(done)](std::error_code ec,
                                                             resp::reply r) mutable {
              if (!ec && r.is_string()) {
                info.online_replicas = detail::online_replicas(r.str);
                info.replicas_acknowledging = detail::caught_up_replicas(r.str);
              }
              done({}, "", std::move(info));
            },
            /*idempotent=*/true);
      },
      /*idempotent=*/true);
}

}  // namespace

void start_inspect(std::shared_ptr<detail::client_core> core, std::string name,
                   inspect_callback done) {
  std::string key;
  try {
    layout::check_name(name, "lock name");
    key = core->key_of(name);
    layout::check_name(key, "lock key (after the name mapper)");
  } catch (const error& e) {
    return done(e.code(), e.what(), {});
  }
  if (core->stopped()) return done(errc::cancelled, "the client has been destroyed", {});
  detail::client_core& door = *core;
  door.enter([core = std::move(core), name = std::move(name), key = std::move(key),
              done = std::move(done)](bool running) mutable {
    if (!running) return done(errc::cancelled, "the client has been destroyed", {});
    std::vector<std::string> keys{key,
                                  layout::fenced_token_key(key),
                                  layout::fair_queue_key(key),
                                  layout::fair_timeout_key(key),
                                  layout::rwlock_key_prefix(key),
                                  layout::semaphore_timeout_key(key)};
    // Reads only, so resending it after a lost connection is harmless.
    exec::executor& executor = core->executor();
    executor.eval(inspect_script, std::move(keys), {},
                  [&executor, name = std::move(name), key, done = core->guard(std::move(done))](
                      std::error_code ec, resp::reply r) mutable {
                    lock_info info;
                    std::string text = ec ? std::move(r.str) : std::string();
                    if (!ec) {
                      info.name = std::move(name);
                      // On the I/O thread, as node_of needs. Asked after the answer, so a MOVED met
                      // on the way has already updated the map.
                      info.node = executor.node_of(key);
                      info.synced_replicas = executor.synced_replicas(key);
                      info.last_acknowledged = executor.last_acknowledged();
                      info.key = std::move(key);
                      ec = decode(r, info);
                      if (ec) text = "the inspect script's reply is not what it writes";
                    }
                    if (ec) return done(ec, std::move(text), {});
                    ask_server(executor, std::move(info), std::move(done));
                  },
                  {.idempotent = true});
  });
}

}  // namespace relock::layout
