// SPDX-License-Identifier: Apache-2.0
// The headers nearly every test file includes, parsed once per build instead of once per file
// (tests/CMakeLists.txt: relock_test_pch). Only stable ones belong here: GoogleTest, the public
// API, Asio's futures and the standard library. A test still includes what it uses itself.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <asio/use_future.hpp>
#include <relock/client.hpp>
