// relock queue offer|take|size: Redisson's blocking queue (and the delayed queue feeding it)
// from the shell, sharing the queue with Java producers and consumers.
#include <chrono>
#include <iostream>

#include "cli.hpp"
#include "output.hpp"

namespace relock_cli {

int queue_command(const global_options& g, const queue_options& o) {
  std::optional<std::chrono::milliseconds> delay, wait;
  if (o.delay_seconds) delay = to_duration(*o.delay_seconds, "--delay", false);
  if (o.wait_seconds) wait = to_duration(*o.wait_seconds, "--wait", false);
  auto client = connect(g, make_config(g));
  try {
    auto queue = client.blocking_queue(o.name);
    if (o.action == "offer") {
      if (delay) {
        // The delayed queue's own transfer runs while the handle lives: a consumer's (relock
        // queue take, or Java's) moves the element when it is due.
        auto delayed = client.delayed_queue(o.name);
        delayed.offer(o.value, *delay);
      } else {
        queue.offer(o.value);
      }
      return exit_ok;
    }
    if (o.action == "size") {
      std::cout << queue.size() << "\n";
      return exit_ok;
    }
    // take: also move what a delayed queue has due for this destination while waiting.
    auto transfer = client.delayed_queue(o.name);
    std::optional<std::string> value;
    if (wait) {
      value = queue.poll(*wait);
    } else {
      value = queue.take();
    }
    if (!value) {
      std::cerr << "relock: nothing came in '" << o.name << "' within " << seconds_text(*wait)
                << "\n";
      return exit_conflict;
    }
    std::cout << *value << "\n";
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
