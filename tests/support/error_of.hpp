// The relock error a call ended with, for tests that expect a call to throw.
#pragma once

#include <system_error>

#include <relock/errors.hpp>

namespace relock::test {

// None when it returned normally. Also the error of an async call's future (asio::use_future
// throws a std::system_error).
template <class F>
std::error_code error_of(F f) {
  try {
    f();
  } catch (const std::system_error& e) {
    return e.code();
  }
  return {};
}

}  // namespace relock::test
