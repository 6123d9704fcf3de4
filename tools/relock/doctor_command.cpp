// SPDX-License-Identifier: Apache-2.0
// relock doctor: being written (issue #34).
#include "cli.hpp"

namespace relock_cli {

int doctor_command(const global_options&, const doctor_options&) {
  throw failure(exit_usage, "doctor: not built yet");
}

}  // namespace relock_cli
