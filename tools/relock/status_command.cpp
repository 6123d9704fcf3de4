// relock status: who holds NAME and how often, its lease, and a fair lock's queue, read straight
// from Redisson's data (redisson-compat.md §2-§5), so holders in Java show up too.
#include <charconv>
#include <cstdlib>

#include "cli.hpp"
#include "output.hpp"
#include "raw_reads.hpp"

namespace relock_cli {
namespace {

// Hold counts and tokens are integers; anything else means the key is not a lock of ours.
std::int64_t integer(const std::string& text, const std::string& where) {
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw failure(exit_usage, where + " holds '" + text + "', not a number: is it a lock?");
  }
  return n;
}

// Sorted-set scores come back in Redis's double format ("1700000000000", "1.5e+12").
std::int64_t score(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) {
    throw failure(exit_usage, where + " holds the score '" + text + "', not a number");
  }
  return static_cast<std::int64_t>(d);
}

void read_holders(relock::client& client, lock_status& s) {
  const auto fields = raw_command(client, {"HGETALL", s.name}).elements;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    const std::string& field = fields[i].text;
    if (field == "mode") {  // only a read-write lock has it (§4)
      s.kind = "read-write";
      s.mode = fields[i + 1].text;
      continue;
    }
    const auto holds = integer(fields[i + 1].text, "'" + s.name + "' field " + field);
    s.holders.push_back({field, holds, ""});
  }
  constexpr std::string_view write_suffix = ":write";
  for (auto& h : s.holders) {
    if (!s.mode) {
      h.side = "exclusive";
    } else if (h.owner.ends_with(write_suffix)) {
      h.owner.resize(h.owner.size() - write_suffix.size());
      h.side = "write";
    } else {
      h.side = "read";
    }
  }
}

lock_status read_status(relock::client& client, const std::string& name) {
  lock_status s;
  s.name = name;
  s.kind = "lock";
  const std::string type = raw_command(client, {"TYPE", name}).text;
  if (type != "none" && type != "hash") {
    throw failure(exit_usage, "'" + name + "' is a Redis " + type + ", not a lock");
  }
  const auto keys = keys_of(name);
  // A fair lock shows itself only while someone waits; a fenced one by its token counter.
  auto token = raw_command(client, {"GET", keys.fenced_token});
  if (!token.nil) {
    s.kind = "fenced";
    s.fencing_token = integer(token.text, keys.fenced_token);
  }
  if (type == "hash") {
    s.locked = true;
    read_holders(client, s);
    const auto ttl = raw_command(client, {"PTTL", name}).integer;
    if (ttl >= 0) s.remaining_lease_ms = ttl;
  }
  const auto queue = raw_command(client, {"LRANGE", keys.fair_queue, "0", "-1"}).elements;
  if (!queue.empty()) s.kind = "fair";
  for (const auto& owner : queue) {
    auto deadline = raw_command(client, {"ZSCORE", keys.fair_timeout, owner.text});
    waiter w{owner.text, std::nullopt};
    if (!deadline.nil) w.gives_up_at_ms = score(deadline.text, keys.fair_timeout);
    s.queue.push_back(std::move(w));
  }
  return s;
}

}  // namespace

int status_command(const global_options& g, const std::string& name) {
  auto client = connect(g, make_config(g));
  client.lock(name);  // the library's checks on the name: empty, too long
  try {
    print(read_status(client, name), g.json);
  } catch (const relock::error& e) {
    fail_with(g, e, "cannot read '" + name + "'");
  }
  return exit_ok;
}

}  // namespace relock_cli
