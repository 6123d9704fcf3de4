// SPDX-License-Identifier: Apache-2.0
// relock top: one screen as lines of text, fitted to a width and a height: a header (the time,
// the server, how many objects are shown of how many matched, the order), the column titles and
// one row per object. Pure: the terminal draws it, --once prints it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "top_rows.hpp"

namespace relock_cli {

struct top_header {
  std::string time;  // "14:03:07"
  std::string url;   // as shown_url shows it: no password
  std::string sort;
  bool no_touch_unavailable = false;  // CLIENT NO-TOUCH refused: reading may touch LRU/LFU
  std::size_t refused = 0;            // names the ACL user may not read
  bool live = false;                  // the keys' reminder: q quits...
  std::string problem;  // the last refresh failed: why (the rows are the last good ones)
};

// The lines of one screen. `objects` sorted; `width`, `height` 0: no limit that way; `limit`
// 0: no cap on the rows beyond the height.
std::vector<std::string> render(const top_header& header, const std::vector<top_object>& objects,
                                std::size_t width, std::size_t height, std::size_t limit);

// How many display columns UTF-8 `text` takes (one per character), and `text` cut to `columns`.
std::size_t display_width(const std::string& text);
std::string cut_to(const std::string& text, std::size_t columns);

}  // namespace relock_cli
