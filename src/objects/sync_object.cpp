// SPDX-License-Identifier: Apache-2.0
#include "objects/sync_object.hpp"

#include <algorithm>

#include <relock/errors.hpp>

#include "objects/ids.hpp"
#include "objects/naming.hpp"
#include "objects/sync_scripts.hpp"
#include "objects/sync_wait.hpp"

namespace relock::detail {

sync_names sync_names_of(client_core& core, const std::string& name,
                         std::string (*channel)(std::string_view key), const char* what) {
  objects::check_name(name, (std::string(what) + " name").c_str());
  sync_names out{core.key_of(name), {}};
  objects::check_name(out.key, (std::string(what) + " key (after the name mapper)").c_str());
  out.channel = channel(out.key);
  if (core.executor().cluster()) {
    objects::check_one_slot(out.key, {out.channel, objects::unlock_latch_key(out.key, "0")});
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

resp::reply eval_blocking(client_core& core, const exec::script& s, std::vector<std::string> keys,
                          std::vector<std::string> args, const std::string& what) {
  refuse_io_thread(core, what.c_str());
  auto [ec, r] = wait_for<std::error_code, resp::reply>([&](auto done) {
    core.enter([&core, &s, keys = std::move(keys), args = std::move(args),
                done = completion<void(std::error_code, resp::reply)>(std::move(done))](
                   bool running) mutable {
      if (!running) return done(errc::cancelled, resp::reply{});
      core.executor().eval(s, std::move(keys), std::move(args), core.guard(std::move(done)));
    });
  });
  if (ec) throw error(ec, what + ": " + (r.str.empty() ? ec.message() : r.str));
  return std::move(r);
}

acquire_request sync_acquire_request(const std::string& key, const std::string& channel,
                                     std::optional<std::chrono::milliseconds> wait,
                                     std::stop_token stop, const grant_kind& grant,
                                     const hold_kind* hold) {
  acquire_request r;
  r.key = key;
  r.channel = channel;
  r.waiter_channel = channel;
  r.wait = wait ? wait->count() > 0 : true;
  if (wait) r.deadline = std::chrono::steady_clock::now() + *wait;
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
                                std::to_string(wall_clock_ms())};
  if (!raw_id.empty()) args.push_back(std::move(raw_id));
  return eval_blocking(core, sync_scripts::semaphore_admin, std::move(keys), std::move(args), what)
      .integer;
}

}  // namespace relock::detail
