// SPDX-License-Identifier: Apache-2.0
// The relock error a call ended with, for tests that expect a call to throw.
#pragma once

#include <future>
#include <memory>
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

// The error an async call completes with, waited for: `start` gets the callback to pass as the
// call's completion token (its results after the error are `Results...`). Not asio::use_future
// for an error: it carries the error as an exception, whose reference count libstdc++ updates
// where TSan cannot see (a false data race when the I/O thread drops the handler).
template <class... Results, class Start>
std::future<std::error_code> async_error(Start start) {
  auto done = std::make_shared<std::promise<std::error_code>>();
  auto outcome = done->get_future();
  start([done](std::error_code ec, Results...) { done->set_value(ec); });
  return outcome;
}
template <class... Results, class Start>
std::error_code async_error_of(Start start) {
  return async_error<Results...>(std::move(start)).get();
}

}  // namespace relock::test
