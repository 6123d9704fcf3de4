#include "redis_reads.hpp"

#include <future>

#include "client_core.hpp"

namespace relock_cli {

relock::resp::reply command(relock::client& client, std::vector<std::string> args) {
  std::promise<std::pair<std::error_code, relock::resp::reply>> done;
  auto future = done.get_future();
  relock::resp::request request;
  request.push(std::span<const std::string>(args));
  const std::string key = args.size() > 1 ? args[1] : std::string();
  client.core()->executor().run(key, std::move(request),
                                [&done](std::error_code ec, relock::resp::reply r) {
                                  done.set_value({ec, std::move(r)});
                                });
  auto [ec, r] = future.get();
  if (ec) throw relock::error(ec, args.front() + " " + key + ": " + r.str);
  return std::move(r);
}

}  // namespace relock_cli
