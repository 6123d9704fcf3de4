// A lock kind is data: its scripts and how a release wakes waiters. The waiting loop, the
// release and the watchdog are shared by every kind.
#pragma once

#include "exec/script.hpp"

namespace relock::detail {

enum class wake_rule { wake_one, wake_all };

struct lock_kind {
  const exec::script& acquire;
  const exec::script& release;
  const exec::script& force_release;
  const exec::script& renew;
  wake_rule on_release;
};

extern const lock_kind reentrant_lock_kind;
extern const lock_kind non_reentrant_lock_kind;

}  // namespace relock::detail
