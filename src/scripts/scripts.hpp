// The Lua sources of src/scripts/*.lua, embedded at build time (cmake/embed_scripts.cmake).
#pragma once

#include <string_view>

namespace relock::scripts {

extern const std::string_view lock_acquire;
extern const std::string_view lock_acquire_once;
extern const std::string_view lock_release;
extern const std::string_view lock_force_release;
extern const std::string_view lock_renew;
extern const std::string_view lock_inspect;

}  // namespace relock::scripts
