// SPDX-License-Identifier: Apache-2.0
// The synchronizers' scripts (data-layout §7), each loaded with synchronizer_head.lua in front:
// their kinds' parts (semaphore_kind.cpp, permit_semaphore_kind.cpp, latch_kind.cpp) and their
// handles' administration calls share them.
#pragma once

#include "exec/script.hpp"

namespace relock::detail::synchronizers::synchronizer_scripts {

extern const exec::script semaphore_acquire;
extern const exec::script semaphore_release;
extern const exec::script semaphore_take_back;
extern const exec::script semaphore_admin;
extern const exec::script permit_acquire;
extern const exec::script permit_release;
extern const exec::script permit_renew;
extern const exec::script latch_await;
extern const exec::script latch_admin;

}  // namespace relock::detail::synchronizers::synchronizer_scripts
