#include "objects/lock_kind.hpp"

#include "scripts/scripts.hpp"

namespace relock::detail {
namespace {

// The embedded sources are constant-initialised string_views, so these may use them at
// dynamic-initialisation time in any order.
const exec::script acquire{"lock_acquire", scripts::lock_acquire};
const exec::script acquire_once{"lock_acquire_once", scripts::lock_acquire_once};
const exec::script release{"lock_release", scripts::lock_release};
const exec::script force_release{"lock_force_release", scripts::lock_force_release};
const exec::script renew{"lock_renew", scripts::lock_renew};

}  // namespace

const lock_kind reentrant_lock_kind{acquire, release, force_release, renew, wake_rule::wake_one};
const lock_kind non_reentrant_lock_kind{acquire_once, release, force_release, renew,
                                        wake_rule::wake_one};

}  // namespace relock::detail
