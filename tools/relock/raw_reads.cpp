#include "raw_reads.hpp"

#include "client_access.hpp"
#include "client_core.hpp"
#include "exec/executor.hpp"
#include "objects/naming.hpp"
#include "objects/sync_wait.hpp"

namespace relock_cli {
namespace {

raw_value converted(const relock::resp::reply& r) {
  raw_value v;
  v.nil = r.is_nil();
  v.text = r.str;
  v.integer = r.integer;
  for (const auto& e : r.elements) v.elements.push_back(converted(e));
  return v;
}

}  // namespace

raw_value raw_command(relock::client& client, std::vector<std::string> args) {
  relock::resp::request request;
  request.push(std::span<const std::string>(args));
  const std::string key = args.size() > 1 ? args[1] : std::string();
  auto [ec, reply] = relock::detail::wait_for<std::error_code, relock::resp::reply>(
      [&](auto done) { relock::detail::core_of(client)->executor().run(key, std::move(request), std::move(done)); });
  if (ec) throw relock::error(ec, args.front() + " " + key + ": " + reply.str);
  return converted(reply);
}

lock_keys keys_of(std::string_view name) {
  return {relock::objects::fair_queue_key(name), relock::objects::fair_timeout_key(name),
          relock::objects::fenced_token_key(name)};
}

}  // namespace relock_cli
