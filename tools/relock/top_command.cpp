// SPDX-License-Identifier: Apache-2.0
// relock top [PATTERN]: the locks, semaphores, latches and queues whose names match, one row
// each, refreshed every --interval in a terminal of its own (top_terminal.hpp) until q; or one
// screen (--once) or one JSON document (--json, which implies --once), for scripts. What it
// reads and how: top_refresh.hpp.
#include <chrono>
#include <ctime>
#include <iostream>

#include "cli.hpp"
#include "top_json.hpp"
#include "top_refresh.hpp"
#include "top_screen.hpp"
#include "top_terminal.hpp"

namespace relock_cli {
namespace {

using steady = std::chrono::steady_clock;

constexpr std::chrono::milliseconds default_interval{1'000};
// Below this a refresh of many objects would run back to back, and keep a server busy for a view.
constexpr std::chrono::milliseconds shortest_interval{100};

std::chrono::milliseconds interval_of(const top_options& o) {
  if (!o.interval_seconds) return default_interval;
  const auto d = to_duration(*o.interval_seconds, "--interval", true);
  if (d < shortest_interval) {
    throw failure(exit_usage, "--interval '" + *o.interval_seconds +
                                  "' is under 0.1 s: each refresh scans every master");
  }
  return d;
}

std::string time_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  char text[16] = "";
  if (localtime_r(&now, &parts) != nullptr) std::strftime(text, sizeof text, "%H:%M:%S", &parts);
  return text;
}

top_header header_for(const global_options& g, const std::string& sort, const top_snapshot& s) {
  top_header h;
  h.time = time_now();
  h.url = shown_url(g.url);
  h.sort = sort;
  h.no_touch_unavailable = s.no_touch_unavailable;
  h.refused = s.refused;
  return h;
}

int once(const relock::client& client, const global_options& g, const top_options& o) {
  top_snapshot s;
  try {
    s = refresh(client, o.pattern);
  } catch (const relock::error& e) {
    fail_with(g, e, "top: cannot read the objects");
  }
  sort_objects(s.objects, o.sort);
  const auto limit = static_cast<std::size_t>(o.limit);
  if (g.json) {
    std::cout << top_json(s.objects, limit) << "\n";
    return exit_ok;
  }
  // A terminal gets a screen of it; a pipe or a file every row (--limit still caps them).
  const auto size = output_size().value_or(screen_size{});
  for (const auto& line :
       render(header_for(g, o.sort, s), s.objects, size.width, size.height, limit)) {
    std::cout << line << "\n";
  }
  return exit_ok;
}

int live(const relock::client& client, const global_options& g, const top_options& o,
         std::chrono::milliseconds interval) {
  terminal screen;
  std::string sort = o.sort;
  top_snapshot last;
  std::string problem, last_good;  // last_good: when the rows were read
  const auto draw = [&] {
    auto header = header_for(g, sort, last);
    header.live = true;
    header.problem = problem;
    const auto size = output_size().value_or(screen_size{80, 24});
    screen.draw(
        render(header, last.objects, size.width, size.height, static_cast<std::size_t>(o.limit)));
  };
  for (;;) {
    try {
      last = refresh(client, o.pattern);
      problem.clear();
      last_good = time_now();
    } catch (const relock::error& e) {
      // Redis away for a while (a restart, a failover): say so over the last rows, and try again
      // at the next refresh rather than end the view.
      problem = "cannot refresh: " + escaped(without_secret(e.what(), g.url));
      if (!last_good.empty()) problem += "; the rows are from " + last_good;
    }
    sort_objects(last.objects, sort);
    draw();
    for (const auto next = steady::now() + interval;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(next - steady::now());
      if (left.count() <= 0) break;
      const auto event = screen.wait(left);
      using kind = terminal_event::kind;
      if (event.what == kind::timeout) break;
      if (event.what == kind::signalled) return 128 + event.signal;
      if (event.what == kind::key && (event.key == 'q' || event.key == 'Q')) return exit_ok;
      if (event.what == kind::key && (event.key == 'r' || event.key == 'R')) break;
      if (event.what == kind::key && (event.key == 's' || event.key == 'S')) {
        sort = next_sort_key(sort);
        sort_objects(last.objects, sort);
      }
      draw();  // a new order, a new size, or a key top has no use for: the same screen again
    }
  }
}

}  // namespace

int top_command(const global_options& g, const top_options& o) {
  const auto interval = interval_of(o);
  auto settings = make_config(g);
  settings.connect_timeout = one_shot_timeout;  // a view: no reason to wait 10 s to start
  // One connection per node: CLIENT NO-TOUCH holds for the connection it was sent on, so every
  // read must ride the same one (top_refresh.hpp).
  settings.command_connections = 1;
  const auto client = connect(g, std::move(settings));
  if (o.once || g.json) return once(client, g, o);
  return live(client, g, o, interval);
}

}  // namespace relock_cli
