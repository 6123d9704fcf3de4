// SPDX-License-Identifier: Apache-2.0
// Reading a server's log for failure messages: the end of it, or what one run added.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace relock::test {

// The last `lines` lines of the file (at most its last 64 KiB); empty if it cannot be read.
std::string last_lines(const std::filesystem::path& file, std::size_t lines);

// The file's content from byte `offset` on; empty if it cannot be read.
std::string read_from(const std::filesystem::path& file, std::uintmax_t offset);

}  // namespace relock::test
