// SPDX-License-Identifier: Apache-2.0
// `relock run --redlock`'s servers, connected all at once. One that does not answer in time
// costs its vote, as one that goes away later does: only fewer than a majority answering is an
// error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <relock/client.hpp>

#include "cli.hpp"

namespace relock_cli {

struct redlock_servers {
  // A client of each server that answered, in --redlock's order (clients do not move).
  std::vector<std::unique_ptr<relock::client>> clients;
  std::vector<std::string> reached;    // their URLs, password hidden
  std::vector<std::string> unreached;  // the others' URLs, password hidden
};

// Connects to every URL at once, each within g.connect_timeout, and notes on stderr those that
// did not answer. Throws failure(exit_usage) when the URLs are no odd number of at least 3, when
// a server refuses us (credentials, a replica, a bad URL), or when fewer than a majority
// answered, naming those that did not: locking `name` is then impossible.
redlock_servers connect_redlock(const global_options& g, const std::vector<std::string>& urls,
                                const std::string& name);

}  // namespace relock_cli
