#include "objects/sync_object.hpp"

#include <algorithm>

#include <relock/errors.hpp>

#include "objects/ids.hpp"
#include "objects/naming.hpp"
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

}  // namespace relock::detail
