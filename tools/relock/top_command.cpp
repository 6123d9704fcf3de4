// SPDX-License-Identifier: Apache-2.0
// relock top: being written (issue #34).
#include "cli.hpp"

namespace relock_cli {

int top_command(const global_options&, const top_options&) {
  throw failure(exit_usage, "top: not built yet");
}

}  // namespace relock_cli
