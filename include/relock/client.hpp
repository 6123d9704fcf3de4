// relock::client: one connection to a Redis deployment, shared by every lock made from it.
//
// A client has a random UUID (its id: the first half of every hold's owner field), one I/O
// thread, one command connection, one subscriber connection and one watchdog. Construction
// connects and throws relock::error when the server cannot be reached or refuses our
// credentials. It is thread-safe; lock handles made from it are cheap and must not outlive it.
// Destruction stops the I/O thread: operations still under way complete with errc::cancelled,
// and handles left over fail with errc::cancelled. Do not destroy a client inside one of its
// own completion handlers (its I/O thread cannot join itself).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <relock/config.hpp>
#include <relock/errors.hpp>
#include <relock/lock.hpp>

namespace relock {

namespace detail {
class client_core;
}

class client {
 public:
  explicit client(config settings = {});
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  // The client's UUID, canonical 36-char lowercase form.
  const std::string& id() const;
  const config& settings() const;

  // A reentrant lock (Redisson's RLock) on `name`. Cheap; throws errc::invalid_argument for
  // an empty name or one over 64 KiB.
  Lock lock(std::string_view name) const;
  // The same data, but a second acquire by the holder fails with errc::non_reentrant.
  Lock non_reentrant_lock(std::string_view name) const;

  // For relock's own objects.
  const std::shared_ptr<detail::client_core>& core() const { return core_; }

 private:
  std::shared_ptr<detail::client_core> core_;
};

}  // namespace relock
