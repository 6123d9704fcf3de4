// SPDX-License-Identifier: Apache-2.0
#include <relock/multi_lock.hpp>

namespace relock {

multi_lock::multi_lock(std::vector<mutex> members)
    : lock_set(std::move(members), rule{.what = "multi-lock"}) {}

}  // namespace relock
