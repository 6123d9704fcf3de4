// SPDX-License-Identifier: Apache-2.0
// relock queue offer|take|size: Redisson's blocking queue (and the delayed queue feeding it)
// from the shell, sharing the queue with Java producers and consumers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <stop_token>
#include <string_view>

#include "cli.hpp"
#include "output.hpp"

namespace relock_cli {

namespace {

// What the delayed queue's transfer reported: a WRONGTYPE from its keys ends a take, which would
// otherwise wait for elements that can never be moved. Set on relock's I/O thread.
struct transfer_watch {
  std::mutex mutex;
  std::string failure;
  std::stop_source stop;

  void heard(relock::log_level level, std::string_view line) {
    if (level != relock::log_level::error || line.find("WRONGTYPE") == std::string_view::npos ||
        line.find("transfer") == std::string_view::npos) {
      return;
    }
    {
      const std::lock_guard lock(mutex);
      if (failure.empty()) failure = line;
    }
    stop.request_stop();
  }
  std::string reported() {
    const std::lock_guard lock(mutex);
    return failure;
  }
};

// VALUE "-": standard input to its end, as bytes. Read up to just past the limit, so that a
// larger value is refused without being held in memory whole.
std::string read_value(std::size_t limit) {
  std::string value;
  char buffer[65536];
  while (value.size() <= limit) {
    const auto got = std::fread(buffer, 1, sizeof buffer, stdin);
    value.append(buffer, got);
    if (got < sizeof buffer) break;
  }
  if (std::ferror(stdin)) throw failure(exit_usage, "cannot read the value from standard input");
  if (value.size() > limit) {
    throw failure(exit_usage, "the value on standard input is over " + std::to_string(limit) +
                                  " bytes, the largest a queue takes; nothing was offered");
  }
  return value;
}

}  // namespace

int queue_command(const global_options& g, const queue_options& o) {
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::chrono::milliseconds> delay, wait;
  if (o.delay_seconds) delay = to_duration(*o.delay_seconds, "--delay", false);
  if (o.wait_seconds) wait = to_duration(*o.wait_seconds, "--wait", false);
  transfer_watch watch;
  auto settings = make_config(g);
  // take -w is the deadline, connecting included; offer and size are one round trip each.
  if (o.action != "take") settings.connect_timeout = one_shot_timeout;
  if (o.action == "take" && wait) settings.connect_timeout = connect_timeout_for(*wait);
  if (o.action == "take") {
    settings.log = [&watch](relock::log_level level, std::string_view line) {
      watch.heard(level, line);
    };
  }
  const std::size_t max_value = settings.max_value_size;
  auto client = connect(g, std::move(settings));
  try {
    auto queue = client.blocking_queue(o.name);
    if (o.action == "offer") {
      const std::string value = o.value == "-" ? read_value(max_value) : o.value;
      if (delay) {
        // The delayed queue's own transfer runs while the handle lives: a consumer's (relock
        // queue take, or Java's) moves the element when it is due.
        auto delayed = client.delayed_queue(o.name);
        delayed.offer(value, *delay);
      } else {
        queue.offer(value);
      }
      return exit_ok;
    }
    if (o.action == "size") {
      std::cout << queue.size() << "\n";
      return exit_ok;
    }
    // take: also move what a delayed queue has due for this destination while waiting.
    auto transfer = client.delayed_queue(o.name);
    // Its arrival list, which the transfer reads only once something is due: of another type,
    // nothing offered with --delay would ever come.
    try {
      transfer.size();
    } catch (const relock::error& e) {
      if (e.code() != relock::errc::wrong_type) throw;
      watch.heard(relock::log_level::error, std::string("the transfer's list: ") + e.what());
    }
    std::optional<std::string> value;
    try {
      if (wait) {
        const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - started);
        value = queue.poll(std::max(*wait - spent, std::chrono::milliseconds(0)),
                           watch.stop.get_token());
      } else {
        value = queue.take(watch.stop.get_token());
      }
    } catch (const relock::error& e) {
      if (e.code() != relock::errc::cancelled || watch.reported().empty()) throw;
    }
    if (const auto why = watch.reported(); !why.empty() && !value) {
      throw failure(exit_usage, "'" + o.name + "' cannot be fed by its delayed queue, whose keys " +
                                    "hold another Redis type (" + why + "); nothing was taken");
    }
    if (!value) {
      std::cerr << "relock: nothing came in '" << escaped(o.name) << "' within "
                << seconds_text(*wait) << "\n";
      return exit_conflict;
    }
    std::cout.write(value->data(), static_cast<std::streamsize>(value->size()));
    if (!o.raw) std::cout << "\n";
    std::cout.flush();
    return exit_ok;
  } catch (const relock::error& e) {
    if (e.code() == relock::errc::invalid_argument) throw failure(exit_usage, e.what());
    if (e.code() == relock::errc::wrong_type) {
      throw failure(exit_usage, "'" + o.name + "' is no queue: " + e.what());
    }
    fail_with(g, e, "queue " + o.action + " '" + o.name + "'");
  }
}

bool print_queue_status(relock::client& client, const global_options& g, const std::string& name) {
  relock::queue_info info;
  try {
    info = client.inspect_queue(name);
  } catch (const relock::error& e) {
    fail_with(g, e, "cannot read '" + name + "'");
  }
  if (info.redis_type != "list" && info.delayed == 0) return false;
  queue_status s;
  s.name = name;
  s.length = info.length;
  s.delayed = info.delayed;
  s.next_due_ms = info.next_due_ms;
  if (info.next_due_ms) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    s.next_due_in_ms = *info.next_due_ms - now;
  }
  print(s, g.json);
  return true;
}

}  // namespace relock_cli
