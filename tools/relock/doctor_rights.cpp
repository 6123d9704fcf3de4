// SPDX-License-Identifier: Apache-2.0
// relock doctor's acl check: relock's own calls, tried with a real client on scratch names of
// one master (relock-doctor:{TAG}:...), since ACL rules are the server's to judge: a lock, a fair
// lock, both sides of a read-write lock, a semaphore, a count-down latch, a queue, and a wait
// on a lock the second client holds, whose subscription the server may refuse. Each call's
// refusal is kept with the server's words; the scratch keys are deleted at the end.
#include <asio/use_future.hpp>
#include <relock/with_detail.hpp>

#include "cli.hpp"
#include "doctor.hpp"

namespace relock_cli::doctor {
namespace {

using namespace std::chrono_literals;

// Long enough for a subscription's answer (a refusal included) to arrive on any sane network:
// the waiter subscribes first, then waits out the rest.
constexpr std::chrono::milliseconds pubsub_wait{500};

// The unlock that says why it failed, with the server's words (plain unlock() cannot throw).
void release(relock::mutex& m) {
  m.async_unlock(relock::owner::current_thread(), relock::with_detail(asio::use_future)).get();
}

// The server's words: relock's errors start with "<kind> '<name>': ", which the finding says
// already, and Redis 7 ends a script's error with its SHA and line.
std::string words_of(const std::exception& e) {
  std::string text = without_script_position(e.what());
  const auto named = text.find("': ");
  if (text.find("relock-doctor:") < named && named != std::string::npos) text.erase(0, named + 3);
  return text;
}

void hold_and_release(relock::mutex& m) {
  if (!m.try_lock()) throw std::runtime_error("held by someone else");
  release(m);
}

}  // namespace

void refusal_watch::on_subscription_refused(const relock::subscription_event& e) {
  std::lock_guard lock(mutex_);
  refused_.emplace_back(std::string(e.channel), std::string(e.detail));
}

std::vector<std::string> refusal_watch::refused_with(const std::string& tag) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& [channel, detail] : refused_) {
    if (channel.find(tag) != std::string::npos) out.push_back(detail);
  }
  return out;
}

rights_read try_rights(const relock::client& client, const relock::client& holder,
                       const refusal_watch& watch, const relock::server_node& node,
                       const scratch_names& scratch, const std::string& user) {
  rights_read r;
  r.user = user;
  const std::string prefix = "relock-doctor:{" + scratch.tag + "}:";
  const auto attempt = [&](const char* what, auto&& body) {
    try {
      body();
    } catch (const relock::error& e) {
      auto& list = e.code() == relock::errc::no_permission ? r.refused : r.failed;
      list.push_back({what, words_of(e)});
    } catch (const std::exception& e) {
      r.failed.push_back({what, words_of(e)});
    }
  };
  attempt("lock", [&] {
    auto m = client.lock(prefix + "lock");
    hold_and_release(m);
  });
  attempt("fair lock", [&] {
    auto m = client.fair_lock(prefix + "fair");
    hold_and_release(m);
  });
  attempt("read-write lock", [&] {
    auto rw = client.read_write_lock(prefix + "rw");
    hold_and_release(rw.read_lock());
    hold_and_release(rw.write_lock());
  });
  attempt("semaphore", [&] {
    auto s = client.semaphore(prefix + "semaphore");
    s.try_set_permits(1);
    if (!s.try_acquire()) throw std::runtime_error("no permit to take");
    s.release();
  });
  attempt("count-down latch", [&] {
    auto l = client.count_down_latch(scratch.latch);
    l.try_set_count(1);
    l.count_down();
    if (!l.await(1s)) throw std::runtime_error("still closed after its count reached 0");
  });
  attempt("queue", [&] {
    auto q = client.blocking_queue(prefix + "queue");
    q.offer("relock doctor");
    if (!q.poll(1s)) throw std::runtime_error("the value offered was not there to take");
  });
  attempt("pub/sub", [&] {
    auto held = holder.lock(prefix + "pubsub");
    if (!held.try_lock()) throw std::runtime_error("held by someone else");
    bool taken = false;
    try {
      // The wait subscribes to the lock's channel; the observer hears a refusal.
      auto waiter = client.lock(prefix + "pubsub");
      taken = waiter.try_lock(pubsub_wait);
      if (taken) release(waiter);
    } catch (...) {
      std::error_code ignored;  // the waiter's error is the one to report
      held.unlock(ignored);
      throw;
    }
    release(held);
    if (taken) throw std::runtime_error("acquired a lock that another client held");
  });
  r.subscription_refused = watch.refused_with(scratch.tag);

  // What a refused or failed call may have left; the rest expires (unlock latches, 20 s). The
  // latch's name has a slot of its own: a DEL of its own.
  std::vector<std::string> leftovers{"DEL"};
  for (const char* name : {"lock", "fair", "rw", "semaphore", "queue", "pubsub"}) {
    leftovers.push_back(prefix + name);
  }
  leftovers.push_back("redisson_lock_queue:" + prefix + "fair");
  leftovers.push_back("redisson_lock_timeout:" + prefix + "fair");
  for (const auto& del : {leftovers, std::vector<std::string>{"DEL", scratch.latch}}) {
    try {
      client.call(node, del);
    } catch (const std::exception&) {
      // A node that stopped answering keeps them: scratch names, harmless.
    }
  }
  return r;
}

}  // namespace relock_cli::doctor
