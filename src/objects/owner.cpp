// SPDX-License-Identifier: Apache-2.0
#include <relock/owner.hpp>

#include "objects/ids.hpp"

namespace relock {

owner owner::current_thread() { return owner(objects::current_thread_number()); }
owner owner::unique() { return owner(objects::next_owner_number()); }

}  // namespace relock
