// The sync API waits on the async one. Blocking on relock's own I/O thread would wait for
// ever, so it is refused with a clear error instead.
#pragma once

#include <future>
#include <string>
#include <system_error>
#include <utility>

#include <relock/errors.hpp>

#include "client_core.hpp"
#include "resp/request.hpp"

namespace relock::detail {

// Also refuses a handle whose client is gone: its I/O thread would never answer.
inline void refuse_io_thread(const client_core& core, const char* what) {
  if (core.stopped()) {
    throw error(errc::cancelled, std::string(what) + ": the client has been destroyed");
  }
  if (core.on_io_thread()) {
    throw error(errc::would_deadlock,
                std::string(what) + " blocks, and was called on relock's I/O thread "
                                    "(inside a completion handler); use the async form there");
  }
}

// Runs one command and waits for its reply; throws relock::error with the server's text.
inline resp::reply run_blocking(client_core& core, std::string_view key, resp::request request,
                                const char* what) {
  refuse_io_thread(core, what);
  std::promise<std::pair<std::error_code, resp::reply>> done;
  auto future = done.get_future();
  core.executor().run(key, std::move(request), [&done](std::error_code ec, resp::reply r) {
    done.set_value({ec, std::move(r)});
  });
  auto [ec, r] = future.get();
  if (ec) throw error(ec, std::string(what) + " '" + std::string(key) + "': " + r.str);
  return std::move(r);
}

}  // namespace relock::detail
