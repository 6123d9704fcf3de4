// SPDX-License-Identifier: Apache-2.0
// Blocking wrappers over the executor's callbacks, for tests that drive the layers directly.
#pragma once

#include <chrono>
#include <future>
#include <string>
#include <system_error>
#include <vector>

#include "exec/executor.hpp"
#include "resp/bulk_strings.hpp"
#include "resp/reply.hpp"

namespace relock::test {

struct result {
  std::error_code ec;
  resp::reply value;
};

inline result run(exec::executor& ex, std::vector<std::string> args) {
  std::promise<result> done;
  auto future = done.get_future();
  resp::request request;
  request.push(std::span<const std::string>(args));
  ex.run(args.size() > 1 ? args[1] : std::string(), std::move(request),
         [&done](std::error_code ec, resp::reply r) mutable {
           done.set_value({ec, std::move(r)});
         });
  return future.get();
}

inline result eval(exec::executor& ex, const exec::script& s, resp::bulk_strings keys,
                   resp::bulk_strings args) {
  std::promise<result> done;
  auto future = done.get_future();
  ex.eval(s, std::move(keys), std::move(args), [&done](std::error_code ec, resp::reply r) mutable {
    done.set_value({ec, std::move(r)});
  });
  return future.get();
}

}  // namespace relock::test
