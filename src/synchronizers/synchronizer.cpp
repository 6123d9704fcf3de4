// SPDX-License-Identifier: Apache-2.0
#include "synchronizers/synchronizer.hpp"

#include <algorithm>

#include <relock/errors.hpp>

#include "layout/ids.hpp"
#include "layout/naming.hpp"
#include "synchronizers/synchronizer_scripts.hpp"
#include "waiting/blocking_call.hpp"

namespace relock::detail::synchronizers {

synchronizer_names synchronizer_names_of(client_core& core, const std::string& name,
                                         std::string (*channel)(std::string_view key),
                                         const char* what) {
  layout::check_name(name, (std::string(what) + " name").c_str());
  synchronizer_names out{core.key_of(name), {}};
  layout::check_name(out.key, (std::string(what) + " key (after the name mapper)").c_str());
  out.channel = channel(out.key);
  if (core.executor().cluster()) {
    layout::check_one_slot(out.key, {out.channel, layout::unlock_latch_key(out.key, "0")});
  }
  return out;
}

void check_permits(std::int64_t n, std::int64_t min, const char* what) {
  if (n < min || n > max_permits || n < -max_permits) {
    throw error(errc::invalid_argument, std::string(what) + " must be between " +
                                            std::to_string(std::max(min, -max_permits)) + " and " +
                                            std::to_string(max_permits) + ", not " +
                                            std::to_string(n));
  }
}

waiting::acquire_request synchronizer_acquire_request(const std::string& key,
                                                      const std::string& channel,
                                                      std::optional<std::chrono::milliseconds> wait,
                                                      std::stop_token stop,
                                                      const waiting::grant_kind& grant,
                                                      const waiting::hold_kind* hold) {
  waiting::acquire_request r;
  r.key = key;
  r.channel = channel;
  r.wait = wait ? wait->count() > 0 : true;
  r.asked_at = std::chrono::steady_clock::now();
  if (wait) r.deadline = *r.asked_at + *wait;
  r.stop = std::move(stop);
  r.grant = &grant;
  r.hold = hold;
  return r;
}

std::int64_t semaphore_admin(client_core& core, const std::string& key, const std::string& channel,
                             const char* op, std::int64_t n, const std::string& what,
                             const std::string& timeouts, std::string raw_id) {
  std::vector<std::string> keys{key, channel};
  if (!timeouts.empty()) keys.push_back(timeouts);
  std::vector<std::string> args{op, std::to_string(n), core.publish_command(),
                                std::to_string(waiting::wall_clock_ms())};
  if (!raw_id.empty()) args.push_back(std::move(raw_id));
  return waiting::eval_blocking(core, synchronizer_scripts::semaphore_admin, std::move(keys),
                                std::move(args), what)
      .integer;
}

}  // namespace relock::detail::synchronizers
