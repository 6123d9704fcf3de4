// SPDX-License-Identifier: Apache-2.0
// The code blocks of one README section, as the checkout has them: tests that prove what the
// README says (the ACL rules) read it from there, so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace relock::test {

// The fenced code blocks between the heading that starts with `heading` (e.g. "### Least
// privilege") and the next heading of any level, each joined into one line. Empty when the
// README or the heading is missing.
inline std::vector<std::string> readme_blocks(const std::string& heading) {
  std::ifstream in(std::string(RELOCK_SOURCE_DIR) + "/README.md");
  std::vector<std::string> blocks;
  std::string line;
  bool in_section = false;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (in_block) {
      if (line.starts_with("```")) {
        in_block = false;
      } else {
        blocks.back() += (blocks.back().empty() ? "" : " ") + line;
      }
    } else if (line.starts_with("#")) {
      if (in_section) break;
      in_section = line.starts_with(heading);
    } else if (in_section && line.starts_with("```")) {
      in_block = true;
      blocks.emplace_back();
    }
  }
  return blocks;
}

// Block `index` of the ACL section (0: one server, 1: a Cluster's additions, 2: the sentinels'
// user), empty when there is none.
inline std::string readme_acl_rules(std::size_t index) {
  const auto blocks = readme_blocks("### Least privilege");
  return index < blocks.size() ? blocks[index] : std::string();
}

// `rules` split at whitespace: the arguments of ACL SETUSER.
inline std::vector<std::string> acl_words(const std::string& rules) {
  std::vector<std::string> words;
  std::istringstream in(rules);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace relock::test
