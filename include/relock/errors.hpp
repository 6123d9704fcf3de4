// SPDX-License-Identifier: Apache-2.0
/// \file
/// relock's error codes and exception.
///
/// Async operations complete with a std::error_code in relock's category; sync calls throw
/// relock::error (a std::system_error) whose what() keeps the detail, e.g. the server's text.
/// relock::with_detail (relock/with_detail.hpp) gives async callers that relock::error too.
#pragma once

#include <string>
#include <system_error>
#include <type_traits>

#include <relock/detail/export.hpp>

namespace relock {

/// What went wrong, as the value of a std::error_code in relock's category (error_category()).
/// docs/design.md, "Errors", says where each comes from.
enum class errc {
  invalid_argument = 1,  ///< refused before any I/O: bad name, bad duration
  not_owner,             ///< unlock by someone who does not hold the lock
  timeout,               ///< Redis did not answer a command within config::command_timeout
                         ///< (never a wait that ran out: that is not_acquired)
  lock_lost,             ///< the hold was found gone: its key deleted or expired, its field removed
  connection,            ///< could not connect, or the connection broke under a command
  auth_failed,           ///< the server refused our credentials (AUTH, NOAUTH, WRONGPASS)
  server_error,          ///< the server answered with an error reply; the text is kept
  wrong_type,            ///< the name holds another Redis type, or data that is not a lock
  non_reentrant,         ///< a non-reentrant lock was taken again by its owner
  cancelled,             ///< the caller cancelled a wait (stop_token) or the client shut down
  would_deadlock,        ///< a blocking call on relock's I/O thread; a read-write upgrade
  renewal_failed,        ///< no renewal reached Redis before the hold's validity deadline
  no_synced_replicas,    ///< replica sync is on and no replica acknowledged the write in time
                         ///< (or the master refused it: NOREPLICAS); an acquire was rolled back
  not_initialized,       ///< a semaphore whose name holds nothing: no permits were ever set
  no_permission,         ///< the server's ACL denies this user a command, key or channel (NOPERM)
  not_acquired,          ///< an acquire that must succeed (async_lock with a wait) ran out of
                         ///< time with the lock held elsewhere; Redis answered throughout
};

/// relock's error category: named "relock", with a short message for each errc.
RELOCK_API const std::error_category& error_category() noexcept;

/// Makes `e` a std::error_code, so an errc compares and converts as one (`ec == errc::timeout`).
inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// Thrown by the synchronous API. what() is the detail alone when there is one (it already says
/// what went wrong, in words); code() carries the errc.
class RELOCK_API error : public std::system_error {
 public:
  /// An error without detail: what() is the code's message.
  explicit error(std::error_code ec) : std::system_error(ec) {}
  /// An error whose what() is `detail`.
  error(std::error_code ec, const std::string& detail) : std::system_error(ec), detail_(detail) {}
  /// The same, from an errc.
  error(errc e, const std::string& detail) : error(make_error_code(e), detail) {}

  /// The detail, or the code's message when there is none.
  const char* what() const noexcept override {
    return detail_.empty() ? std::system_error::what() : detail_.c_str();
  }

 private:
  std::string detail_;
};

}  // namespace relock

// The standard's trait, not relock's: out of the reference (Doxygen cannot place it).
/// \cond
template <>
struct std::is_error_code_enum<relock::errc> : std::true_type {};
/// \endcond
