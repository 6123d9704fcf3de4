// SPDX-License-Identifier: Apache-2.0
// The acquire operation against a fake environment: what it sends, in what order, and what it
// records, for the paths a server makes hard to reach (a reply lost, a take-back held back, a
// grant no replica acknowledged, a shutdown or a stop in the middle). No server, no clock.
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <relock/errors.hpp>

#include "client_core.hpp"
#include "locks/lock_kinds.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "waiting/acquire_env.hpp"
#include "waiting/acquire_fsm.hpp"
#include "waiting/acquire_op.hpp"
#include "waiting/lock_kind.hpp"

namespace acquire_op_test {  // keeps this file's names apart in a unity build

using namespace std::chrono_literals;
using relock::errc;
using namespace relock::detail;
using namespace relock::detail::synchronizers;
using namespace relock::detail::waiting;
namespace resp = relock::resp;

namespace {

const acquire_env::clock::time_point t0{std::chrono::hours(1)};

// Every need met by hand: a test answers each call, release and subscription, and fires the
// timer, when it chooses.
class fake_env final : public acquire_env {
 public:
  struct call {
    const relock::exec::script* script;
    script_call args;
    relock::exec::result_callback done;
  };
  struct release_sent {
    release_request request;
    release_callback done;
  };

  relock::config config_{};
  std::string publish_ = "publish";
  clock::time_point now_ = t0;
  bool stopped_ = false;
  shutdown_aware* tracked_ = nullptr;
  std::vector<relock::detail::unique_function<void()>> posted_;
  std::deque<call> calls_;
  std::deque<release_sent> releases_;
  std::vector<std::pair<relock::pubsub::waiter*, relock::pubsub::waiter_queues::ready_callback>>
      joins_;
  int leaves_ = 0;
  bool others_waiting_ = false;
  bool listening_ = false;
  std::vector<std::chrono::milliseconds> lingers_;
  std::optional<clock::time_point> timer_at_;
  relock::detail::unique_function<void()> timer_fired_;
  std::set<std::pair<std::string, std::string>> holds_;
  std::vector<relock::renewal::watchdog::grant> grants_;
  take_back_book book_;
  std::vector<std::string> discarded_;

  const relock::config& settings() const override { return config_; }
  const std::string& publish_command() const override { return publish_; }
  queue_timing queue_timing_now() const override { return {}; }
  bool stopped() const override { return stopped_; }
  void track(shutdown_aware& op) override { tracked_ = &op; }
  void untrack(shutdown_aware&) override { tracked_ = nullptr; }
  void log(relock::log_level, std::string_view) const override {}
  void post(relock::detail::unique_function<void()> fn) override {
    posted_.push_back(std::move(fn));
  }
  void eval(const relock::exec::script& s, script_call c, relock::exec::result_callback done,
            relock::exec::eval_options) override {
    calls_.push_back({&s, std::move(c), std::move(done)});
  }
  void release(release_request request, release_callback done) override {
    releases_.push_back({std::move(request), std::move(done)});
  }
  void join(const std::string&, relock::pubsub::wake_count, relock::pubsub::waiter& w,
            relock::pubsub::waiter_queues::ready_callback ready,
            std::chrono::milliseconds linger) override {
    joins_.emplace_back(&w, std::move(ready));
    lingers_.push_back(linger);
  }
  void leave(relock::pubsub::waiter&, bool) override { ++leaves_; }
  bool take_permit(const relock::pubsub::waiter&) override { return false; }
  bool has_waiters(const std::string&) const override { return others_waiting_; }
  bool listening(const std::string&) const override { return listening_; }
  clock::time_point now() const override { return now_; }
  void arm_timer(clock::time_point at, relock::detail::unique_function<void()> fired) override {
    timer_at_ = at;
    timer_fired_ = std::move(fired);
  }
  void cancel_timer() override {
    timer_at_.reset();
    timer_fired_ = {};
  }
  bool holds(const std::string& key, const std::string& field) const override {
    return holds_.count({key, field}) > 0;
  }
  void record_hold(relock::renewal::watchdog::grant grant) override {
    grants_.push_back(std::move(grant));
  }
  take_back_book& take_backs() override { return book_; }
  void discard_latch(std::string latch) override { discarded_.push_back(std::move(latch)); }

  // The test's side.
  void answer(resp::reply r, std::error_code ec = {}) {
    ASSERT_FALSE(calls_.empty());
    auto c = std::move(calls_.front());
    calls_.pop_front();
    c.done(ec, std::move(r));
  }
  void answer_release(std::error_code ec = {}, std::string detail = {}) {
    ASSERT_FALSE(releases_.empty());
    auto r = std::move(releases_.front());
    releases_.pop_front();
    r.done(ec, std::move(detail));
  }
  // Every callback the test left unanswered holds the operation, which holds this environment:
  // dropped at the end of each test, so nothing leaks.
  void forget() {
    calls_.clear();
    releases_.clear();
    joins_.clear();
    posted_.clear();
    timer_fired_ = {};
  }
  void fire_timer() {
    ASSERT_TRUE(timer_at_.has_value());
    now_ = *timer_at_;
    timer_at_.reset();
    std::exchange(timer_fired_, {})();
  }
};

struct outcome {
  bool done = false;
  std::error_code ec;
  relock::detail::acquire_result result;
};

const lock_kind& kind = reentrant_lock_kind;
constexpr const char* owner = "client:1";

acquire_request request_for(std::optional<acquire_env::clock::time_point> deadline,
                            bool wait = true) {
  acquire_request r;
  r.key = "lk";
  r.channel = kind.channel(r.key);
  r.waiter_channel = r.channel;
  r.owner = owner;
  r.field = kind.field(owner);
  r.lease = 30s;
  r.watchdog = true;
  r.wait = wait;
  r.deadline = deadline;
  r.grant = &kind;
  r.hold = &kind;
  return r;
}

void start(const std::shared_ptr<fake_env>& env, acquire_request r, outcome& out) {
  run_acquire(env, std::move(r), [&out](std::error_code ec, acquire_result result) {
    out = {true, ec, std::move(result)};
  });
}

resp::reply acquired() { return resp::reply::make_nil(); }

}  // namespace

class acquire_op : public ::testing::Test {
 protected:
  void TearDown() override { env->forget(); }
  std::shared_ptr<fake_env> env = std::make_shared<fake_env>();
};

namespace {
resp::reply refused(std::int64_t ttl_ms) { return resp::reply::make_integer(ttl_ms); }

}  // namespace

TEST_F(acquire_op, a_free_lock_is_recorded_for_the_watchdog_before_the_caller_hears) {
  outcome out;
  start(env, request_for(std::nullopt, false), out);
  ASSERT_EQ(env->calls_.size(), 1u);
  EXPECT_EQ(env->calls_.front().script, &kind.acquire);
  EXPECT_NE(env->tracked_, nullptr) << "told of a shutdown while the try is out";
  env->now_ = t0 + 1ms;
  env->answer(acquired());
  ASSERT_TRUE(out.done);
  EXPECT_TRUE(out.result.acquired);
  ASSERT_EQ(env->grants_.size(), 1u);
  EXPECT_EQ(env->grants_[0].key, "lk");
  EXPECT_EQ(env->grants_[0].sent_at, t0) << "the validity counts from the try's sending";
  EXPECT_EQ(env->tracked_, nullptr);
}

TEST_F(acquire_op, a_refused_wait_subscribes_tries_again_and_wakes_on_a_message) {
  outcome out;
  start(env, request_for(t0 + 10s), out);
  env->answer(refused(5000));
  ASSERT_EQ(env->joins_.size(), 1u);
  EXPECT_TRUE(env->calls_.empty()) << "the next try waits for the subscription";
  env->joins_[0].second({});
  ASSERT_EQ(env->calls_.size(), 1u);
  env->answer(refused(5000));
  EXPECT_EQ(env->timer_at_, t0 + 5s) << "until the holder's TTL runs out";
  env->joins_[0].first->wake();
  ASSERT_EQ(env->calls_.size(), 1u) << "a message tries at once";
  env->answer(acquired());
  ASSERT_TRUE(out.done);
  EXPECT_TRUE(out.result.acquired);
  EXPECT_EQ(env->leaves_, 1);
  EXPECT_FALSE(env->timer_at_.has_value());
}

TEST_F(acquire_op, a_wait_behind_this_clients_waiters_joins_them_without_a_try) {
  env->others_waiting_ = true;
  outcome out;
  start(env, request_for(t0 + 10s), out);
  EXPECT_TRUE(env->calls_.empty()) << "no try ahead of the threads already waiting";
  ASSERT_EQ(env->joins_.size(), 1u);
  env->joins_[0].second({});
  EXPECT_TRUE(env->calls_.empty());
  EXPECT_EQ(env->timer_at_, t0 + acquire_fsm::no_ttl_recheck) << "a lost message costs this";
  env->joins_[0].first->wake();
  ASSERT_EQ(env->calls_.size(), 1u) << "its turn: it tries";
  env->answer(acquired());
  ASSERT_TRUE(out.done);
  EXPECT_TRUE(out.result.acquired);
  EXPECT_EQ(env->leaves_, 1);
}

TEST_F(acquire_op, a_wait_on_a_channel_this_client_listens_on_joins_then_tries_once) {
  env->listening_ = true;
  outcome out;
  start(env, request_for(t0 + 10s), out);
  EXPECT_TRUE(env->calls_.empty()) << "it joins first";
  ASSERT_EQ(env->joins_.size(), 1u);
  EXPECT_EQ(env->lingers_.at(0), 0ms) << "the lock's shared channel goes with its last waiter";
  env->joins_[0].second({});
  ASSERT_EQ(env->calls_.size(), 1u) << "then it tries";
  env->answer(refused(5000));
  EXPECT_TRUE(env->calls_.empty()) << "one try: a release after it is heard";
  EXPECT_EQ(env->timer_at_, t0 + 5s);
  env->joins_[0].first->wake();
  ASSERT_EQ(env->calls_.size(), 1u);
  env->answer(acquired());
  ASSERT_TRUE(out.done);
  EXPECT_TRUE(out.result.acquired);
}

TEST_F(acquire_op, an_owners_own_channel_lingers_after_its_wait_the_locks_shared_one_does_not) {
  outcome shared;
  start(env, request_for(t0 + 10s), shared);
  env->answer(refused(5000));
  ASSERT_EQ(env->lingers_.size(), 1u);
  EXPECT_EQ(env->lingers_[0], 0ms) << "every release publishes there: it goes with its waiter";

  const auto& fair = relock::detail::locks::fair_lock_kind;
  auto own = request_for(t0 + 10s);
  own.grant = &fair;
  own.hold = &fair;
  own.waiter_channel = fair.waiter_channel(own.key, owner);
  outcome waited;
  start(env, std::move(own), waited);
  env->answer(refused(5000));
  ASSERT_EQ(env->lingers_.size(), 2u);
  EXPECT_GT(env->lingers_[1], 0ms) << "only this owner's turn is told there";
}

TEST_F(acquire_op, a_reentry_and_a_single_try_never_wait_behind_this_clients_waiters) {
  env->others_waiting_ = true;
  env->holds_.insert({"lk", kind.field(owner)});
  outcome reentry;
  start(env, request_for(t0 + 10s), reentry);
  ASSERT_EQ(env->calls_.size(), 1u) << "the owner holds it: it must not wait for itself";
  env->answer(acquired());
  EXPECT_TRUE(reentry.result.acquired);

  env->holds_.clear();
  outcome once;
  start(env, request_for(std::nullopt, false), once);
  ASSERT_EQ(env->calls_.size(), 1u) << "try_lock() looks once, at once";
  env->answer(refused(100));
  EXPECT_TRUE(once.done);
  EXPECT_TRUE(env->joins_.empty());
}

TEST_F(acquire_op, a_lost_reply_is_taken_back_under_the_tries_latch_and_again_before_the_next_try) {
  outcome out;
  start(env, request_for(t0 + 10s), out);
  const std::string latch(env->calls_.front().args.keys.back());
  env->answer(resp::reply::make_error("no reply"), errc::timeout);
  ASSERT_EQ(env->releases_.size(), 1u);
  EXPECT_TRUE(env->releases_[0].request.take_back);
  EXPECT_EQ(env->releases_[0].request.latch, latch);
  EXPECT_TRUE(env->book_.has("lk", owner)) << "booked until a copy is answered";
  EXPECT_EQ(env->timer_at_, t0 + acquire_fsm::retry_after_outage);

  env->fire_timer();
  EXPECT_TRUE(env->calls_.empty()) << "no try while the take-back is unanswered";
  ASSERT_EQ(env->releases_.size(), 2u) << "a second copy goes first";
  EXPECT_EQ(env->releases_[1].request.latch, latch);
  EXPECT_EQ(env->releases_[1].request.timeout, env->config_.command_timeout);

  // The first copy never answers; the second does: the take-back leaves the book, the try goes.
  auto first = std::move(env->releases_.front());
  env->releases_.pop_front();
  env->answer_release({}, {});
  EXPECT_FALSE(env->book_.has("lk", owner));
  ASSERT_EQ(env->calls_.size(), 1u);
  EXPECT_NE(env->calls_.front().args.keys.back(), latch) << "each try has a latch of its own";
  first.done(errc::timeout, "late");
  EXPECT_EQ(env->calls_.size(), 1u) << "a late copy's answer changes nothing";
  env->answer(acquired());
  EXPECT_TRUE(out.result.acquired);
}

// The same-owner race (docs/faults.md): an acquire that gave up with its take-back unanswered,
// then the same owner's next acquire, on the same client.
TEST_F(acquire_op, the_same_owners_next_acquire_sends_the_pending_take_back_first) {
  outcome first;
  start(env, request_for(std::nullopt, false), first);
  const std::string latch(env->calls_.front().args.keys.back());
  env->answer(resp::reply::make_error("no reply"), errc::timeout);
  ASSERT_TRUE(first.done);
  EXPECT_EQ(first.ec, errc::timeout);
  ASSERT_EQ(env->releases_.size(), 1u);
  auto held_copy = std::move(env->releases_.front());  // delayed somewhere, unanswered
  env->releases_.pop_front();

  outcome other;
  auto someone_else = request_for(std::nullopt, false);
  someone_else.owner = "client:2";
  someone_else.field = kind.field(someone_else.owner);
  start(env, someone_else, other);
  EXPECT_EQ(env->calls_.size(), 1u) << "another owner's try is not held back";
  env->answer(refused(100));

  outcome second;
  start(env, request_for(std::nullopt, false), second);
  EXPECT_TRUE(env->calls_.empty());
  ASSERT_EQ(env->releases_.size(), 1u);
  EXPECT_EQ(env->releases_[0].request.latch, latch) << "under the same latch";
  env->answer_release({}, {});
  ASSERT_EQ(env->calls_.size(), 1u);
  env->answer(acquired());
  EXPECT_TRUE(second.result.acquired);
  held_copy.done({}, {});
  EXPECT_FALSE(env->book_.has("lk", owner));
}

TEST_F(acquire_op, the_deadline_ends_a_wait_whose_take_backs_stay_unanswered) {
  release_request booked;
  booked.key = "lk";
  booked.take_back = true;
  booked.latch = "l1";
  env->book_.add({"lk", owner}, booked);
  outcome out;
  start(env, request_for(t0 + 2s), out);
  ASSERT_EQ(env->releases_.size(), 1u);
  EXPECT_EQ(env->timer_at_, t0 + 2s);
  env->fire_timer();
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.ec, errc::connection);
  env->answer_release({}, {});
  EXPECT_TRUE(env->calls_.empty()) << "an answer after the end leads to no try";
}

TEST_F(acquire_op, a_grant_no_replica_acknowledged_goes_back_before_the_next_try) {
  outcome out;
  start(env, request_for(t0 + 10s), out);
  env->answer(acquired(), errc::no_synced_replicas);
  ASSERT_EQ(env->releases_.size(), 1u);
  EXPECT_FALSE(env->releases_[0].request.take_back) << "one hold goes back, as a release";
  EXPECT_TRUE(env->releases_[0].request.cleanup);
  EXPECT_FALSE(env->timer_at_.has_value());
  EXPECT_TRUE(env->calls_.empty());
  env->now_ = t0 + 5ms;
  env->answer_release({}, {});
  EXPECT_EQ(env->timer_at_, t0 + 5ms + acquire_fsm::retry_after_outage);
  env->fire_timer();
  ASSERT_EQ(env->calls_.size(), 1u);
  env->answer(acquired());
  EXPECT_TRUE(out.result.acquired);
  EXPECT_EQ(env->grants_.size(), 1u) << "only the acknowledged grant is recorded";
}

TEST_F(acquire_op, a_grant_that_comes_while_the_client_shuts_down_goes_back) {
  outcome out;
  start(env, request_for(std::nullopt, false), out);
  ASSERT_NE(env->tracked_, nullptr);
  env->tracked_->on_shutdown();
  EXPECT_FALSE(out.done) << "the try's reply decides";
  env->answer(acquired());
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.ec, errc::cancelled);
  EXPECT_TRUE(env->grants_.empty());
  ASSERT_EQ(env->releases_.size(), 1u) << "nobody will hear of the hold";
}

TEST_F(acquire_op, a_stop_request_ends_a_wait_on_the_io_thread) {
  std::stop_source stop;
  auto r = request_for(std::nullopt);
  r.stop = stop.get_token();
  outcome out;
  start(env, r, out);
  env->answer(refused(5000));
  env->joins_[0].second({});
  env->answer(refused(5000));
  stop.request_stop();
  EXPECT_FALSE(out.done) << "not from the stopping thread";
  ASSERT_EQ(env->posted_.size(), 1u);
  std::exchange(env->posted_[0], {})();
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.ec, errc::cancelled);
  EXPECT_EQ(env->leaves_, 1);
}

TEST_F(acquire_op, a_lost_re_entry_is_not_taken_back) {
  env->holds_.insert({"lk", kind.field(owner)});
  outcome out;
  start(env, request_for(std::nullopt, false), out);
  env->answer(resp::reply::make_error("no reply"), errc::connection);
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.ec, errc::connection);
  EXPECT_TRUE(env->releases_.empty()) << "it would undo the owner's older hold";
  EXPECT_FALSE(env->book_.has("lk", owner));
}

TEST_F(acquire_op, a_latch_that_opens_while_the_client_shuts_down_has_nothing_to_give_back) {
  auto r = request_for(std::nullopt, false);
  r.grant = &latch_grant;  // a grant alone: no hold to release, no take-back
  r.hold = nullptr;
  outcome out;
  start(env, r, out);
  ASSERT_NE(env->tracked_, nullptr);
  env->tracked_->on_shutdown();
  env->answer(resp::reply::make_nil());  // open
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.ec, errc::cancelled);
  EXPECT_TRUE(env->releases_.empty());
  EXPECT_TRUE(env->calls_.empty()) << "an await granted nothing: no script undoes it";
}

}  // namespace acquire_op_test
