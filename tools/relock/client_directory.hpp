// SPDX-License-Identifier: Apache-2.0
// Who is behind an owner field: every relock connection names itself "relock:{id}:{host}:{pid}"
// (config::client_name), so CLIENT LIST on the node that serves a lock maps a holder's owner
// field ("{id}:{thread}") to its host, pid and address. Holders that name no relock client
// (Redisson's, a relock with a name of its own without {id}) stay unknown.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <relock/client.hpp>

namespace relock_cli {

// Where a holder runs, as far as its connection's name and address tell.
struct holder_process {
  std::string host;  // from the name; empty when the name does not follow the default form
  std::string pid;   // likewise
  std::string addr;  // CLIENT LIST's addr: the connection's ip:port, as the server sees it
};

class client_directory {
 public:
  // Reads CLIENT LIST from `node`. Never throws for a refusal (NOPERM, a renamed command): the
  // directory is then unavailable and says why.
  static client_directory read(const relock::client& client, const relock::server_node& node);
  // The same from CLIENT LIST's text (for tests and for callers that read it themselves).
  static client_directory parse(std::string_view client_list);

  // The process behind `owner` (an owner field), if a relock connection names its id.
  std::optional<holder_process> find(std::string_view owner) const;
  bool available() const { return why_not_.empty(); }
  // Why the directory is empty: "CLIENT LIST refused: NOPERM ...".
  const std::string& why_not() const { return why_not_; }

 private:
  struct entry {
    std::string name, addr;
  };
  std::vector<entry> clients_;
  std::string why_not_;
};

// How a holder shows in a table: "host pid 1234 (10.0.0.5:51234)", or "unknown".
std::string shown(const std::optional<holder_process>& p);

}  // namespace relock_cli
