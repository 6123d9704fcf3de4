// SPDX-License-Identifier: Apache-2.0
#include <relock/errors.hpp>

namespace relock {
namespace {

class category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "relock"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::invalid_argument:
        return "invalid argument";
      case errc::not_owner:
        return "not the owner of the lock";
      case errc::timeout:
        return "timed out";
      case errc::lock_lost:
        return "lock lost";
      case errc::connection:
        return "connection error";
      case errc::auth_failed:
        return "authentication failed";
      case errc::server_error:
        return "server error";
      case errc::wrong_type:
        return "the key holds another type or is not a lock";
      case errc::non_reentrant:
        return "non-reentrant lock acquired twice by its owner";
      case errc::cancelled:
        return "cancelled";
      case errc::would_deadlock:
        return "it would wait for ever (on relock's I/O thread, or for its own read hold)";
      case errc::renewal_failed:
        return "no renewal reached Redis before the hold's validity deadline";
      case errc::no_synced_replicas:
        return "no replica acknowledged the write";
      case errc::not_initialized:
        return "the semaphore was never given permits (its name holds nothing)";
      case errc::no_permission:
        return "the server's ACL does not allow it (NOPERM)";
      case errc::not_acquired:
        return "not acquired: held elsewhere until the wait ran out";
    }
    return "unknown relock error";
  }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const category_impl instance;
  return instance;
}

}  // namespace relock
