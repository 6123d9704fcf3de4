// SPDX-License-Identifier: Apache-2.0
#include "top_screen.hpp"

#include <algorithm>

namespace relock_cli {
namespace {

// Columns no wider than this (their cells are cut, with '~' at the end), so that one long name
// or a lock with many readers leaves room for the others.
constexpr std::size_t widest_name = 48;
constexpr std::size_t widest_holders = 64;
constexpr std::size_t gap = 2;

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string capped(const std::string& cell, std::size_t most) {
  if (display_width(cell) <= most) return cell;
  return cut_to(cell, most - 1) + "~";
}

std::string padded(const std::string& cell, std::size_t columns) {
  return cell + std::string(columns - std::min(columns, display_width(cell)), ' ');
}

std::string header_line(const top_header& h, std::size_t shown, std::size_t matched,
                        std::size_t width) {
  std::string line = "relock top  " + h.time + "  " + h.url + "  objects " + std::to_string(shown) +
                     " of " + std::to_string(matched) + "  sort " + h.sort;
  if (h.no_touch_unavailable) line += "  (no-touch unavailable)";
  if (h.refused > 0) {
    line += "  (" + std::to_string(h.refused) + (h.refused == 1 ? " name" : " names") +
            " refused by the ACL)";
  }
  // The keys' reminder only whole: cut, it would say less than nothing.
  const std::string keys = "  [q quit, s sort, r refresh]";
  if (h.live && (width == 0 || display_width(line + keys) <= width)) line += keys;
  return line;
}

}  // namespace

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !continuation(c); }));
}

std::string cut_to(const std::string& text, std::size_t columns) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (continuation(text[i])) continue;
    if (seen++ == columns) return text.substr(0, i);
  }
  return text;
}

std::vector<std::string> render(const top_header& header, const std::vector<top_object>& objects,
                                std::size_t width, std::size_t height, std::size_t limit) {
  // The header, a line for a problem or a blank one, the titles: what is left is for rows.
  constexpr std::size_t above_rows = 3;
  std::size_t rows = objects.size();
  if (limit > 0) rows = std::min(rows, limit);
  if (height > 0) rows = std::min(rows, height > above_rows ? height - above_rows : 0);

  std::vector<std::vector<std::string>> table{column_titles()};
  for (std::size_t i = 0; i < rows; ++i) table.push_back(cells_of(objects[i]));
  std::vector<std::size_t> widths(column_titles().size(), 0);
  for (auto& cells : table) {
    cells[0] = capped(cells[0], widest_name);
    cells[2] = capped(cells[2], widest_holders);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      widths[c] = std::max(widths[c], display_width(cells[c]));
    }
  }

  std::vector<std::string> lines{header_line(header, rows, objects.size(), width),
                                 header.problem.empty() ? "" : "! " + header.problem};
  for (const auto& cells : table) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      line += c + 1 == cells.size() ? cells[c] : padded(cells[c], widths[c] + gap);
    }
    lines.push_back(std::move(line));
  }
  if (height > 0 && lines.size() > height) lines.resize(height);
  if (width > 0) {
    for (auto& line : lines) line = cut_to(line, width);
  }
  return lines;
}

}  // namespace relock_cli
