// SPDX-License-Identifier: Apache-2.0
#include <relock/count_down_latch.hpp>

#include <relock/detail/durations.hpp>

#include "client_core.hpp"
#include "layout/naming.hpp"
#include "synchronizers/synchronizer.hpp"
#include "synchronizers/synchronizer_kinds.hpp"
#include "synchronizers/synchronizer_scripts.hpp"
#include "waiting/acquire_op.hpp"
#include "waiting/blocking_call.hpp"

namespace relock {
namespace {

using detail::acquire_result;

// An await, through the one waiting loop: a try that finds the latch open "acquires".
void await_open(const std::shared_ptr<detail::client_core>& core, const std::string& key,
                const std::string& channel, std::optional<std::chrono::milliseconds> wait,
                std::stop_token stop,
                detail::completion<void(std::error_code, acquire_result)> done) {
  if (core->stopped()) return done(errc::cancelled, {.detail = "the client has been destroyed"});
  if (wait && wait->count() < 0) {
    return done(errc::invalid_argument, {.detail = "a wait must be >= 0"});
  }
  auto r = detail::synchronizers::synchronizer_acquire_request(key, channel, wait, std::move(stop),
                                                               detail::synchronizers::latch_grant);
  detail::waiting::start_acquire(core, std::move(r), std::move(done));
}

std::int64_t latch_op(detail::client_core& core, const std::string& key, const std::string& channel,
                      const char* op, std::int64_t n, const std::string& what) {
  return detail::waiting::eval_blocking(
             core, detail::synchronizers::synchronizer_scripts::latch_admin, {key, channel},
             {op, std::to_string(n), core.publish_command()}, what)
      .integer;
}

}  // namespace

count_down_latch::count_down_latch(std::shared_ptr<detail::client_core> core, std::string name)
    : core_(std::move(core)), name_(std::move(name)) {
  auto names =
      detail::synchronizers::synchronizer_names_of(*core_, name_, layout::latch_channel, "latch");
  key_ = std::move(names.key);
  channel_ = std::move(names.channel);
}

void count_down_latch::start_await(std::optional<std::chrono::milliseconds> wait,
                                   std::stop_token stop, await_done done) {
  await_open(core_, key_, channel_, wait, std::move(stop),
             [done = std::move(done)](std::error_code ec, acquire_result r) mutable {
               done(ec, std::move(r.detail), r.acquired);
             });
}

void count_down_latch::start_count_down(detail::answer<> done) {
  core_->enter(
      [core = core_, key = key_, channel = channel_, done = std::move(done)](bool running) mutable {
        if (!running) return done(errc::cancelled, "the client has been destroyed");
        core->executor().eval(detail::synchronizers::synchronizer_scripts::latch_admin,
                              {key, channel}, {"down", "0", core->publish_command()},
                              [done = std::move(done)](std::error_code ec, resp::reply r) mutable {
                                done(ec, ec ? std::move(r.str) : std::string());
                              });
      });
}

bool count_down_latch::await_blocking(std::optional<std::chrono::milliseconds> wait,
                                      std::stop_token stop) {
  detail::waiting::refuse_io_thread(*core_, "await");
  auto [ec, result] = detail::waiting::wait_for<std::error_code, acquire_result>([&](auto done) {
    await_open(core_, key_, channel_, wait, std::move(stop), std::move(done));
  });
  if (ec) throw error(ec, "latch '" + name_ + "': await: " + result.detail);
  return result.acquired;
}

void count_down_latch::await(std::stop_token stop) {
  await_blocking(std::nullopt, std::move(stop));
}

bool count_down_latch::await(std::chrono::milliseconds wait, std::stop_token stop) {
  return await_blocking(detail::to_millis(wait, "wait"), std::move(stop));
}

bool count_down_latch::try_set_count(std::int64_t count) {
  detail::synchronizers::check_permits(count, 1, "a latch's count");
  return latch_op(*core_, key_, channel_, "try_set", count, "latch '" + name_ + "'") == 1;
}

void count_down_latch::count_down() {
  latch_op(*core_, key_, channel_, "down", 0, "latch '" + name_ + "'");
}

std::int64_t count_down_latch::count() const {
  auto r = detail::waiting::eval_blocking(
      *core_, detail::synchronizers::synchronizer_scripts::latch_admin, {key_, channel_},
      {"count", "0", core_->publish_command()}, "latch '" + name_ + "'");
  return r.integer;
}

bool count_down_latch::delete_latch() {
  return latch_op(*core_, key_, channel_, "delete", 0, "latch '" + name_ + "'") == 1;
}

}  // namespace relock
