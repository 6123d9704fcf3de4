// Plain Redis commands for the CLI's own needs (status, demo), through the client's executor.
#pragma once

#include <string>
#include <vector>

#include <relock/client.hpp>

#include "resp/reply.hpp"

namespace relock_cli {

// Runs one command and waits; throws relock::error with the server's text.
relock::resp::reply command(relock::client& client, std::vector<std::string> args);

}  // namespace relock_cli
