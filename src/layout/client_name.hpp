// SPDX-License-Identifier: Apache-2.0
// The name a client's connections give themselves (CLIENT SETNAME): its id, host and pid, so
// that an owner field ("<id>:<thread>") leads to a process through CLIENT LIST.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace relock::layout {

// The default template of config::client_name.
inline constexpr std::string_view default_client_name = "relock:{id}:{host}:{pid}";

// `pattern` (config::client_name; empty: the default) with {id}, {host} and {pid} replaced.
std::string client_name(std::string_view pattern, std::string_view id);

// Why Redis would refuse `pattern` as a name (a space, a newline), or nullopt.
std::optional<std::string> client_name_problem(std::string_view pattern);

}  // namespace relock::layout
