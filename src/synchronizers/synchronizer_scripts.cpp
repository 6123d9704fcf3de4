// SPDX-License-Identifier: Apache-2.0
#include "synchronizers/synchronizer_scripts.hpp"

#include <string>

#include "scripts/scripts.hpp"

namespace relock::detail::synchronizers::synchronizer_scripts {
namespace {

// The sources are built before the scripts below, which hash them, in this file's order of
// initialisation.
std::string with_head(std::string_view body) {
  return std::string(scripts::synchronizer_head) + std::string(body);
}
const std::string semaphore_acquire_source = with_head(scripts::semaphore_acquire);
const std::string semaphore_release_source = with_head(scripts::semaphore_release);
const std::string semaphore_take_back_source = with_head(scripts::semaphore_take_back);
const std::string semaphore_admin_source = with_head(scripts::semaphore_admin);
const std::string permit_acquire_source = with_head(scripts::permit_acquire);
const std::string permit_release_source = with_head(scripts::permit_release);
const std::string latch_await_source = with_head(scripts::latch_await);
const std::string latch_admin_source = with_head(scripts::latch_admin);

}  // namespace

const exec::script semaphore_acquire{"semaphore_acquire", semaphore_acquire_source};
const exec::script semaphore_release{"semaphore_release", semaphore_release_source};
const exec::script semaphore_take_back{"semaphore_take_back", semaphore_take_back_source};
const exec::script semaphore_admin{"semaphore_admin", semaphore_admin_source};
const exec::script permit_acquire{"permit_acquire", permit_acquire_source};
const exec::script permit_release{"permit_release", permit_release_source};
const exec::script permit_renew{"permit_renew", scripts::permit_renew};
// An await only reads: no WAIT behind it.
const exec::script latch_await{"latch_await", latch_await_source, /*writes=*/false};
const exec::script latch_admin{"latch_admin", latch_admin_source};

}  // namespace relock::detail::synchronizers::synchronizer_scripts
