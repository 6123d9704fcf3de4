// SPDX-License-Identifier: Apache-2.0
// The watchdog's table, driven with a fake clock and hand-made replies: what a tick sends, what a
// reply confirms or loses, when a silent server costs a hold, and what a release is told.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "renewal/hold_table.hpp"

namespace hold_table_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using relock::renewal::hold_table;
using relock::renewal::renewer;
using relock::resp::reply;

namespace {

const hold_table::time_point t0{std::chrono::hours(1)};

const relock::exec::script one_key_script{"one", "return 1"};
const relock::exec::script many_keys_script{"many", "return 2"};

// One key and the field per hold, as the reentrant lock renews.
void one_key(std::string_view key, std::string_view owner, std::int64_t,
             std::vector<std::string>& keys, std::vector<std::string>& args) {
  keys.emplace_back(key);
  args.emplace_back(owner);
}
// The hash and one extra key per re-entry, as a read hold renews.
void key_per_hold(std::string_view key, std::string_view owner, std::int64_t holds,
                  std::vector<std::string>& keys, std::vector<std::string>& args) {
  keys.emplace_back(key);
  for (std::int64_t n = 1; n <= holds; ++n)
    keys.push_back(std::string(key) + ":t" + std::to_string(n));
  args.emplace_back(owner);
  args.push_back(std::to_string(holds));
}

const renewer lock_renewer{one_key_script, one_key};
const renewer read_renewer{many_keys_script, key_per_hold};

reply answers(std::vector<int> each) {
  std::vector<reply> e;
  for (int x : each) e.push_back(reply::make_integer(x));
  return reply::make_array(std::move(e));
}

}  // namespace

TEST(hold_table, a_tick_renews_every_renewing_hold_once_with_all_its_keys) {
  hold_table t;
  t.held("a", "o:1", "o:1", 30s, &lock_renewer, {}, t0);
  t.held("a", "o:1", "o:1", 30s, &lock_renewer, {}, t0);  // re-entry: still one hold
  t.held("doc", "o:1", "o:1", 30s, &read_renewer, {}, t0);
  t.held("doc", "o:1", "o:1", 30s, &read_renewer, {}, t0);
  t.held("fixed", "o:1", "o:1", 5s, nullptr, {}, t0);  // a fixed lease is never renewed
  auto calls = t.renewals(30s, 100, false);
  ASSERT_EQ(calls.size(), 2u);
  // Calls come in the order of their scripts' addresses, which the build decides.
  if (calls[0].script != &one_key_script) std::swap(calls[0], calls[1]);
  EXPECT_EQ(calls[0].script, &one_key_script);
  EXPECT_EQ(calls[0].keys, (std::vector<std::string>{"a"}));
  EXPECT_EQ(calls[0].args, (std::vector<std::string>{"30000", "o:1"}));
  EXPECT_EQ(calls[1].script, &many_keys_script);
  EXPECT_EQ(calls[1].keys, (std::vector<std::string>{"doc", "doc:t1", "doc:t2"}));
  EXPECT_EQ(calls[1].args, (std::vector<std::string>{"30000", "o:1", "2"}));
  EXPECT_EQ(t.size(), 3u);
}

TEST(hold_table, batches_are_cut_at_the_batch_size_and_grouped_by_slot_when_asked) {
  hold_table t;
  for (int i = 0; i < 5; ++i)
    t.held("{x}" + std::to_string(i), "f", "f", 30s, &lock_renewer, {}, t0);
  t.held("{y}0", "f", "f", 30s, &lock_renewer, {}, t0);
  auto calls = t.renewals(30s, 2, false);
  std::vector<std::size_t> sizes;
  for (auto& c : calls) sizes.push_back(c.targets.size());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{2, 2, 2}));

  calls = t.renewals(30s, 100, true);  // Cluster: {x} and {y} are two slots
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].targets.size() + calls[1].targets.size(), 6u);
  for (auto& c : calls) {
    for (auto& k : c.keys) EXPECT_EQ(k.substr(0, 3), c.keys[0].substr(0, 3));
  }
}

TEST(hold_table, a_reply_confirms_what_it_renewed_and_loses_what_it_found_gone) {
  hold_table t;
  std::vector<std::error_code> heard;
  t.held(
      "a", "f", "f", 30s, &lock_renewer, [&](std::error_code ec) { heard.push_back(ec); }, t0);
  t.held("b", "f", "f", 30s, &lock_renewer, {}, t0);
  auto call = t.renewals(30s, 100, false).at(0);
  auto lost = t.renewed(call.targets, answers({1, 0}), t0 + 10s, t0 + 10s);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].id.first, "b");
  EXPECT_EQ(lost[0].why, errc::lock_lost);
  EXPECT_EQ(lost[0].since_confirmed, 10s);
  EXPECT_TRUE(heard.empty());
  // b's owner hears of it at its release; a is kept and confirmed at the renewal's sending.
  auto plan = t.releasing("b", "f", 30s);
  EXPECT_TRUE(plan.lost);
  EXPECT_FALSE(t.releasing("b", "f", 30s).lost);  // said once
  // Confirmed at t0 + 10s: valid until 40 s minus the margin (1% of 30 s + 2 ms = 302 ms).
  EXPECT_EQ(t.find("a", "f")->valid_until, t0 + 40s - 302ms);
  EXPECT_TRUE(t.expire_unconfirmed(t0 + 40s - 303ms).empty());
  EXPECT_EQ(t.expire_unconfirmed(t0 + 40s - 302ms).size(), 1u);
}

TEST(hold_table, a_reply_never_judges_a_hold_released_or_taken_afresh_since) {
  hold_table t;
  t.held("a", "f", "f", 30s, &lock_renewer, {}, t0);
  auto old = t.renewals(30s, 100, false).at(0);
  t.releasing("a", "f", 30s);                         // released...
  t.held("a", "f", "f", 30s, &lock_renewer, {}, t0);  // ...and taken again
  EXPECT_TRUE(t.renewed(old.targets, answers({0}), t0, t0).empty());
  EXPECT_NE(t.find("a", "f"), nullptr);
  // Nor does a check answered for the old generation.
  EXPECT_FALSE(t.checked(old.targets[0].id, old.targets[0].generation, false, t0));
  auto now = t.renewals(30s, 100, false).at(0);
  EXPECT_TRUE(t.checked(now.targets[0].id, now.targets[0].generation, false, t0));
}

TEST(hold_table, a_silent_server_loses_renewing_holds_at_their_validity_deadline) {
  hold_table t;
  t.held("w", "f", "f", 30s, &lock_renewer, {}, t0);
  t.held("fixed", "f", "f", 30s, nullptr, {}, t0);
  // The deadline is the lease less its margin, so the report comes before the key can expire.
  EXPECT_EQ(t.next_deadline(), t0 + 30s - 302ms);
  EXPECT_TRUE(t.expire_unconfirmed(t0 + 30s - 303ms).empty());
  auto lost = t.expire_unconfirmed(t0 + 30s - 302ms);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].id.first, "w");
  EXPECT_EQ(lost[0].why, errc::renewal_failed);
  EXPECT_NE(t.find("fixed", "f"), nullptr);    // its lease is the server's to end
  EXPECT_EQ(t.next_deadline(), std::nullopt);  // and it has no deadline to watch
}

TEST(hold_table, validity_counts_from_the_sending_of_the_last_confirmed_call) {
  hold_table t;
  t.held("a", "f", "f", 10s, &lock_renewer, {}, t0);
  EXPECT_EQ(t.find("a", "f")->valid_until, t0 + 10s - 102ms);
  // A re-entry sent later sets the expiry afresh; one sent earlier (a slow reply) says less.
  t.held("a", "f", "f", 10s, &lock_renewer, {}, t0 + 2s);
  EXPECT_EQ(t.find("a", "f")->valid_until, t0 + 12s - 102ms);
  t.held("a", "f", "f", 10s, &lock_renewer, {}, t0 + 1s);
  EXPECT_EQ(t.find("a", "f")->valid_until, t0 + 12s - 102ms);
  // A renewal reply confirms from when it was sent, not from when it came back.
  auto call = t.renewals(10s, 100, false).at(0);
  EXPECT_TRUE(t.renewed(call.targets, answers({1}), t0 + 5s, t0 + 9s).empty());
  EXPECT_EQ(t.find("a", "f")->valid_until, t0 + 15s - 102ms);
}

TEST(hold_table, releases_count_re_entries_down_and_restore_the_holds_lease) {
  hold_table t;
  std::vector<std::string> dropped;
  t.on_drop = [&](hold_table::hold& h) { dropped.push_back(h.owner); };
  t.held("a", "f", "me", 7s, nullptr, {}, t0);
  t.held("a", "f", "me", 7s, nullptr, {}, t0);
  auto plan = t.releasing("a", "f", 30s);
  EXPECT_TRUE(plan.known);
  EXPECT_EQ(plan.lease, 7s);
  EXPECT_TRUE(dropped.empty());
  t.releasing("a", "f", 30s);
  EXPECT_EQ(dropped, (std::vector<std::string>{"me"}));
  plan = t.releasing("a", "f", 30s);  // unknown: the caller's default lease
  EXPECT_FALSE(plan.known);
  EXPECT_EQ(plan.lease, 30s);
  EXPECT_TRUE(t.renewals(30s, 100, false).empty());
}

TEST(hold_table, a_hold_with_a_release_in_flight_is_not_renewed) {
  hold_table t;
  t.held("a", "f", "f", 30s, &lock_renewer, {}, t0);
  t.held("b", "f", "f", 30s, &lock_renewer, {}, t0);
  // An unlock racing its own acquire: the release went out before the grant was recorded.
  t.release_sent({"a", "f"});
  auto calls = t.renewals(30s, 100, false);
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(calls[0].targets.size(), 1u);
  EXPECT_EQ(calls[0].targets[0].id.first, "b");
  t.release_answered({"a", "f"});
  EXPECT_EQ(t.renewals(30s, 100, false).at(0).targets.size(), 2u);
}

TEST(hold_table, a_renewal_call_in_flight_is_known_until_its_last_answer) {
  hold_table t;
  t.held("a", "f", "f", 30s, &lock_renewer, {}, t0);
  auto first = t.renewals(30s, 100, false).at(0);
  auto second = t.renewals(30s, 100, false).at(0);
  t.renewal_sent(first.targets);
  t.renewal_sent(second.targets);
  EXPECT_TRUE(t.renewal_in_flight({"a", "f"}));
  EXPECT_TRUE(t.renewal_answered(first.targets).empty());  // one still out
  EXPECT_TRUE(t.renewal_in_flight({"a", "f"}));
  auto settled = t.renewal_answered(second.targets);
  ASSERT_EQ(settled.size(), 1u);
  EXPECT_FALSE(t.renewal_in_flight({"a", "f"}));
}

TEST(hold_table, one_hold_can_be_renewed_alone_unless_its_release_is_in_flight) {
  hold_table t;
  t.held("a", "f", "f", 30s, &lock_renewer, {}, t0);
  t.held("b", "f", "f", 30s, &lock_renewer, {}, t0);
  t.held("fixed", "f", "f", 30s, nullptr, {}, t0);
  auto one = t.renewal_of({"a", "f"}, 30s);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->targets.size(), 1u);
  EXPECT_EQ(one->targets[0].id.first, "a");
  EXPECT_EQ(one->args.at(0), "30000");
  EXPECT_FALSE(t.renewal_of({"fixed", "f"}, 30s).has_value());
  t.release_sent({"a", "f"});
  EXPECT_FALSE(t.renewal_of({"a", "f"}, 30s).has_value());
}

}  // namespace hold_table_test
