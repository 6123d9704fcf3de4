// SPDX-License-Identifier: Apache-2.0
#include <relock/owner.hpp>

#include "layout/ids.hpp"

namespace relock {

owner owner::current_thread() { return owner(layout::current_thread_number()); }
owner owner::unique() { return owner(layout::next_owner_number()); }

}  // namespace relock
