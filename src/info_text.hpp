// SPDX-License-Identifier: Apache-2.0
// INFO's reply: "# Section" headers and "name:value" lines, each ended by CRLF.
#pragma once

#include <string_view>

namespace relock::detail {

// The value of `name:` on a line of INFO's text; empty when absent. A view into `info`.
std::string_view info_field(std::string_view info, std::string_view name);

}  // namespace relock::detail
