// SPDX-License-Identifier: Apache-2.0
// The resource the locks protect in the fault suite: a second redis-server holding, per lock
// name, a fenced register and an unfenced one (HISTORY.md, register.json).
//
// A write is a read-modify-write: read the id of the last write, then write one's own id with
// the id it read. The fenced write is one script that refuses a token lower than the highest it
// has seen; the plain write has no token. Both log (id, id read) in order, so the chain of "id
// read" links from the final id is exactly what a list-valued register would hold: a write that
// is not on the chain was lost (two holders read the same state, and one overwrote the other).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/raw_client.hpp"

namespace relock::test {

class fenced_register {
 public:
  explicit fenced_register(raw_client client);

  // The id of the last fenced (or plain) write to `name`; empty before the first.
  std::string read(std::string_view name, bool fenced);
  // True when accepted. Throws std::runtime_error when no verdict came back (I/O error).
  bool write_fenced(std::string_view name, std::int64_t token, std::string_view id,
                    std::string_view read_id);
  void write_plain(std::string_view name, std::string_view id, std::string_view read_id);

  // register.json's entry for `name` (HISTORY.md), reconstructed from the server's logs.
  std::string dump_json(std::string_view name);

 private:
  raw_client client_;
};

}  // namespace relock::test
