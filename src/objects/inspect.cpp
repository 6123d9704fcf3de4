// Placeholder until the inspect script lands (same session).
#include "objects/inspect.hpp"

#include <relock/errors.hpp>

namespace relock {
const char* to_string(object_kind) noexcept { return "unknown"; }
const char* to_string(hold_side) noexcept { return "exclusive"; }
}  // namespace relock

namespace relock::detail {
void start_inspect(std::shared_ptr<client_core>, std::string, inspect_callback done) {
  done(errc::server_error, {});
}
}  // namespace relock::detail
