// SPDX-License-Identifier: Apache-2.0
// The global TLS flags on relock's command line, and their $RELOCK_TLS_* twins.
#pragma once

#include "cli.hpp"

namespace CLI {
class App;
}

namespace relock_cli {

// Adds --tls-ca, --tls-cert, --tls-key, --tls-server-name and --tls-insecure-skip-verify to
// `app`, filling `t` with the environment's twins first: a flag given replaces its twin.
void add_tls_flags(CLI::App& app, tls_options& t);

}  // namespace relock_cli
