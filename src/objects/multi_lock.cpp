// SPDX-License-Identifier: Apache-2.0
#include <relock/multi_lock.hpp>

namespace relock {

MultiLock::MultiLock(std::vector<Lock> members)
    : lock_set(std::move(members), rule{.what = "multi-lock"}) {}

}  // namespace relock
