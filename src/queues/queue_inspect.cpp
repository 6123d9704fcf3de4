// SPDX-License-Identifier: Apache-2.0
// client::inspect_queue: one read-only script reads a queue name and its delayed queue.
#include <charconv>

#include <relock/client.hpp>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "layout/naming.hpp"
#include "scripts/scripts.hpp"
#include "waiting/blocking_call.hpp"

namespace relock {
namespace {

const exec::script inspect_script{"queue_inspect", scripts::queue_inspect, /*writes=*/false};

}  // namespace

queue_info client::inspect_queue(std::string_view name) const {
  const std::string n(name);
  layout::check_name(n, "queue name");
  const auto key = core_->key_of(n);
  layout::check_name(key, "queue key (after the name mapper)");
  auto& core = *core_;
  auto r = detail::waiting::eval_blocking(
      core, inspect_script,
      {key, layout::delayed_queue_list(key), layout::delayed_queue_timeouts(key)}, {},
      "inspect_queue '" + n + "'");
  queue_info info;
  info.name = n;
  if (r.elements.size() < 4) throw error(errc::server_error, "inspect_queue: an unreadable reply");
  info.redis_type = r.elements[0].str;
  info.length = r.elements[1].integer;
  info.delayed = r.elements[2].integer;
  const auto& due = r.elements[3].str;
  double value = 0;
  if (!r.elements[3].is_nil() && !due.empty() &&
      std::from_chars(due.data(), due.data() + due.size(), value).ec == std::errc()) {
    info.next_due_ms = static_cast<std::int64_t>(value);
  }
  return info;
}

}  // namespace relock
