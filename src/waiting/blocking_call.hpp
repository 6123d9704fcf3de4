// SPDX-License-Identifier: Apache-2.0
// The blocking calls, written once: every blocking call waits on its async form. Blocking on
// relock's own I/O thread would wait for ever, so it is refused with a clear error instead.
#pragma once

#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <relock/errors.hpp>

#include "client_core.hpp"
#include "exec/script.hpp"
#include "resp/bulk_strings.hpp"
#include "resp/request.hpp"
#include "waiting/result_slot.hpp"

namespace relock::detail::waiting {

// Also refuses a handle whose client is gone: its I/O thread would never answer.
inline void refuse_io_thread(const client_core& core, const char* what) {
  if (core.stopped()) {
    throw error(errc::cancelled, std::string(what) + ": the client has been destroyed");
  }
  if (core.on_io_thread()) {
    throw error(errc::would_deadlock,
                std::string(what) +
                    " blocks, and was called on relock's I/O thread "
                    "(inside a completion handler); use the async form there");
  }
}

// Starts an async operation and waits for its completion's arguments: the one way every
// blocking call waits. `start` receives the callback to hand to the operation; the callback
// runs once, on relock's I/O thread.
template <class... Results, class Start>
std::tuple<Results...> wait_for(Start&& start) {
  result_slot<Results...> slot;
  std::forward<Start>(start)([&slot](Results... results) { slot.fill(std::move(results)...); });
  return slot.take();
}

// Runs one script on the I/O thread and waits for it: the outcome, and the reply (the server's
// text in its `str` on an error). `make_call` runs on the I/O thread and returns the call's keys
// and args ({.keys, .args}), for calls built from state that only that thread reads.
template <class MakeCall>
std::tuple<std::error_code, resp::reply> eval_waiting(client_core& core, const exec::script& s,
                                                      MakeCall make_call, const char* what) {
  refuse_io_thread(core, what);
  return wait_for<std::error_code, resp::reply>([&](auto done) {
    core.enter([&core, &s, make_call = std::move(make_call),
                done = completion<void(std::error_code, resp::reply)>(std::move(done))](
                   bool running) mutable {
      if (!running) return done(errc::cancelled, resp::reply{});
      auto call = make_call();
      core.executor().eval(s, std::move(call.keys), std::move(call.args),
                           core.guard(std::move(done)));
    });
  });
}

inline std::tuple<std::error_code, resp::reply> eval_waiting(client_core& core,
                                                             const exec::script& s,
                                                             resp::bulk_strings keys,
                                                             resp::bulk_strings args,
                                                             const char* what) {
  struct call {
    resp::bulk_strings keys, args;
  };
  return eval_waiting(
      core, s, [c = call{std::move(keys), std::move(args)}]() mutable { return std::move(c); },
      what);
}

// The same, throwing relock::error "<what>: <the server's text>" on failure.
inline resp::reply eval_blocking(client_core& core, const exec::script& s, resp::bulk_strings keys,
                                 resp::bulk_strings args, const std::string& what) {
  auto [ec, r] = eval_waiting(core, s, std::move(keys), std::move(args), what.c_str());
  if (ec) throw error(ec, what + ": " + (r.str.empty() ? ec.message() : r.str));
  return std::move(r);
}

// Runs one command and waits for its reply; throws relock::error with the server's text.
inline resp::reply run_blocking(client_core& core, std::string_view key, resp::request request,
                                const char* what) {
  refuse_io_thread(core, what);
  auto [ec, r] = wait_for<std::error_code, resp::reply>([&](auto done) {
    core.enter([&core, key = std::string(key), request = std::move(request),
                done = completion<void(std::error_code, resp::reply)>(std::move(done))](
                   bool running) mutable {
      if (!running) return done(errc::cancelled, resp::reply{});
      core.executor().run(key, std::move(request), core.guard(std::move(done)));
    });
  });
  if (ec) {
    throw error(ec, std::string(what) + " '" + std::string(key) +
                        "': " + (r.str.empty() ? ec.message() : r.str));
  }
  return std::move(r);
}

}  // namespace relock::detail::waiting
