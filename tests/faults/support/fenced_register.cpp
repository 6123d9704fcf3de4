// SPDX-License-Identifier: Apache-2.0
#include "support/fenced_register.hpp"

#include <map>
#include <stdexcept>

#include "support/history.hpp"

namespace relock::test {
namespace {

// KEYS: max, log, value. ARGV: token, id, id read. A token equal to the highest is accepted
// (one holder writes more than once).
constexpr std::string_view fenced_write_script = R"lua(
local max = tonumber(redis.call('get', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if token < max then return 0 end
redis.call('set', KEYS[1], ARGV[1])
redis.call('rpush', KEYS[2], ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. ARGV[3])
redis.call('set', KEYS[3], ARGV[2])
return 1
)lua";

// KEYS: log, value. ARGV: id, id read. Atomic only in itself: the read came before, unfenced.
constexpr std::string_view plain_write_script = R"lua(
redis.call('rpush', KEYS[1], '- ' .. ARGV[1] .. ' ' .. ARGV[2])
redis.call('set', KEYS[2], ARGV[1])
return 1
)lua";

std::string key(std::string_view name, std::string_view what) {
  return "reg:" + std::string(name) + ":" + std::string(what);
}

resp::reply checked(resp::reply r) {
  if (r.is_error()) throw std::runtime_error("register: " + r.str);
  return r;
}

struct logged_write {
  std::string token;  // "-" for a plain write
  std::string id;
  std::string read_id;
};

logged_write parse(const std::string& line) {
  const auto a = line.find(' ');
  const auto b = line.find(' ', a + 1);
  return {line.substr(0, a), line.substr(a + 1, b - a - 1),
          b == std::string::npos ? std::string() : line.substr(b + 1)};
}

// The chain of ids from `last` back through the ids each write read: oldest first.
std::vector<std::string> chain(const std::vector<logged_write>& writes, const std::string& last) {
  std::map<std::string, std::string> read_of;
  for (const auto& w : writes) read_of[w.id] = w.read_id;
  std::vector<std::string> out;
  for (std::string id = last; !id.empty() && out.size() <= writes.size();) {
    out.push_back(id);
    auto it = read_of.find(id);
    id = it == read_of.end() ? std::string() : it->second;
  }
  return {out.rbegin(), out.rend()};
}

std::string id_list(const std::vector<std::string>& ids) {
  std::string out = "[";
  for (const auto& id : ids) out += (out.size() > 1 ? "," : "") + json_quote(id);
  return out + "]";
}

// ids look like "owner#seq"; the owner holds ':' but never '#'.
std::pair<std::string, std::string> split_id(const std::string& id) {
  const auto hash = id.rfind('#');
  return {id.substr(0, hash), id.substr(hash + 1)};
}

}  // namespace

fenced_register::fenced_register(raw_client client) : client_(std::move(client)) {}

std::string fenced_register::read(std::string_view name, bool fenced) {
  auto r = checked(client_.command({"GET", key(name, fenced ? "value" : "plain")}));
  return r.is_nil() ? std::string() : r.str;
}

bool fenced_register::write_fenced(std::string_view name, std::int64_t token, std::string_view id,
                                   std::string_view read_id) {
  auto r = checked(client_.command({"EVAL", std::string(fenced_write_script), "3", key(name, "max"),
                                    key(name, "log"), key(name, "value"), std::to_string(token),
                                    std::string(id), std::string(read_id)}));
  return r.integer == 1;
}

void fenced_register::write_plain(std::string_view name, std::string_view id,
                                  std::string_view read_id) {
  checked(client_.command({"EVAL", std::string(plain_write_script), "2", key(name, "plain_log"),
                           key(name, "plain"), std::string(id), std::string(read_id)}));
}

std::string fenced_register::dump_json(std::string_view name) {
  auto lines = [&](std::string_view what) {
    std::vector<logged_write> out;
    for (const auto& e : checked(client_.command({"LRANGE", key(name, what), "0", "-1"})).elements)
      out.push_back(parse(e.str));
    return out;
  };
  const auto fenced = lines("log");
  const auto plain = lines("plain_log");
  std::string accepted = "[";
  for (const auto& w : fenced) {
    const auto [owner, seq] = split_id(w.id);
    accepted += (accepted.size() > 1 ? "," : "") + std::string("[") + w.token + "," +
                json_quote(owner) + "," + seq + "]";
  }
  accepted += "]";
  const auto max = checked(client_.command({"GET", key(name, "max")}));
  return "{\"max\":" + (max.is_nil() ? std::string("0") : max.str) + ",\"accepted\":" + accepted +
         ",\"value\":" + id_list(chain(fenced, read(name, true))) +
         ",\"plain\":" + id_list(chain(plain, read(name, false))) + "}";
}

}  // namespace relock::test
