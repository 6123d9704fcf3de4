// The relock error a call ended with, for tests that expect a call to throw.
#pragma once

#include <system_error>

#include <relock/errors.hpp>

namespace relock::test {

// None when it returned normally.
template <class F>
std::error_code error_of(F f) {
  try {
    f();
  } catch (const relock::error& e) {
    return e.code();
  }
  return {};
}

}  // namespace relock::test
