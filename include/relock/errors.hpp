// relock's error codes and exception.
//
// Async operations complete with a std::error_code in relock's category; sync calls throw
// relock::error (a std::system_error) whose what() keeps the detail, e.g. the server's text.
#pragma once

#include <string>
#include <system_error>
#include <type_traits>

namespace relock {

enum class errc {
  invalid_argument = 1,  // refused before any I/O: bad name, bad duration
  not_owner,             // unlock or renew by someone who does not hold the lock
  timeout,               // a command got no reply within its timeout
  lock_lost,             // the lock expired or was deleted while we believed we held it
  connection,            // could not connect, or the connection broke under a command
  auth_failed,           // the server refused our credentials (AUTH, NOAUTH, WRONGPASS)
  server_error,          // the server answered with an error reply; the text is kept
  wrong_type,            // a key of this name holds another Redis type (WRONGTYPE)
  non_reentrant,         // a non-reentrant lock was taken again by its owner
  cancelled,             // the caller cancelled a wait (stop_token) or the client shut down
  would_deadlock,        // a blocking call was made on relock's own I/O thread
  not_acquired,          // a try_lock that did not get the lock (async forms only)
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

// Thrown by the synchronous API.
class error : public std::system_error {
 public:
  explicit error(std::error_code ec) : std::system_error(ec) {}
  error(std::error_code ec, const std::string& detail) : std::system_error(ec, detail) {}
  error(errc e, const std::string& detail) : std::system_error(make_error_code(e), detail) {}
};

}  // namespace relock

template <>
struct std::is_error_code_enum<relock::errc> : std::true_type {};
