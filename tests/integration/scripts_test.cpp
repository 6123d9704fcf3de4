// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <relock/client.hpp>

#include "client_access.hpp"
#include "client_core.hpp"
#include "support/client_settings.hpp"
#include "support/raw_client.hpp"
#include "support/redis_server.hpp"
#include "support/sync_calls.hpp"

using relock::errc;
using relock::test::eval;
using relock::test::redis_server;
using relock::test::settings_for;

namespace {

const relock::exec::script add_to_key("add_to_key",
                                      "return redis.call('INCRBY', KEYS[1], ARGV[1])");

}  // namespace

TEST(scripts, run_by_sha_and_reload_once_after_script_flush) {
  redis_server server;
  relock::client client(settings_for(server));
  auto& ex = relock::detail::core_of(client)->executor();
  auto raw = relock::test::raw_client::to(server);

  // First call: the server has never seen the script, so NOSCRIPT is answered by a load.
  EXPECT_EQ(eval(ex, add_to_key, {"n"}, {"5"}).value.integer, 5);
  EXPECT_EQ(raw.command({"SCRIPT", "EXISTS", add_to_key.sha}).elements.at(0).integer, 1);

  raw.command({"SCRIPT", "FLUSH"});
  auto again = eval(ex, add_to_key, {"n"}, {"2"});
  EXPECT_FALSE(again.ec) << again.value.str;
  EXPECT_EQ(again.value.integer, 7);  // ran exactly once after the reload
  EXPECT_EQ(raw.command({"GET", "n"}).str, "7");
}

TEST(scripts, the_local_sha_is_the_servers_sha) {
  redis_server server;
  auto raw = relock::test::raw_client::to(server);
  EXPECT_EQ(raw.command({"SCRIPT", "LOAD", std::string(add_to_key.source)}).str, add_to_key.sha);
}

TEST(scripts, script_errors_surface_with_the_servers_text) {
  redis_server server;
  relock::client client(settings_for(server));
  const relock::exec::script broken("broken", "return redis.call('HGET', KEYS[1], 'f')");
  auto raw = relock::test::raw_client::to(server);
  raw.command({"SET", "str", "v"});
  auto r = eval(relock::detail::core_of(client)->executor(), broken, {"str"}, {});
  EXPECT_EQ(r.ec, errc::wrong_type);
  EXPECT_NE(r.value.str.find("WRONGTYPE"), std::string::npos) << r.value.str;
  EXPECT_EQ(raw.command({"GET", "str"}).str, "v");
}
