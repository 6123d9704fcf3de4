// SPDX-License-Identifier: Apache-2.0
#include "redlock_servers.hpp"

#include <exception>
#include <future>
#include <iostream>

namespace relock_cli {
namespace {

// One server's client, or why it did not answer.
struct answer {
  std::unique_ptr<relock::client> client;
  std::string why;
};

answer connect_one(const global_options& one) {
  try {
    // In place: connect()'s result cannot move, and a failure is weighed here, not thrown.
    return {std::make_unique<relock::client>(make_config(one)), {}};
  } catch (const relock::error& e) {
    if (!unanswered(e)) fail_to_connect(one, e);  // refused: a mistake to fix, not a lost vote
    return {nullptr, without_secret(e.what(), one.url)};
  }
}

std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : "; ") + item;
  return out;
}

}  // namespace

redlock_servers connect_redlock(const global_options& g, const std::vector<std::string>& urls,
                                const std::string& name) {
  const auto n = urls.size();
  if (n < 3 || n % 2 == 0) {
    throw failure(exit_usage, "--redlock needs an odd number of servers, at least 3 (got " +
                                  std::to_string(n) + ")");
  }
  // All at once: a server that does not answer costs one connect timeout, not one each.
  std::vector<std::future<answer>> connecting;
  for (const auto& url : urls) {
    global_options one = g;
    one.url = url;
    one.url_given = true;
    one.url_flag = "--redlock";
    connecting.push_back(std::async(std::launch::async, connect_one, one));
  }
  redlock_servers out;
  std::vector<std::string> silent;  // the unreached, each with why
  std::exception_ptr refused;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      auto a = connecting[i].get();
      if (a.client) {
        out.clients.push_back(std::move(a.client));
        out.reached.push_back(shown_url(urls[i]));
      } else {
        out.unreached.push_back(shown_url(urls[i]));
        silent.push_back(out.unreached.back() + " (" + a.why + ")");
      }
    } catch (...) {
      if (!refused) refused = std::current_exception();
    }
  }
  if (refused) std::rethrow_exception(refused);
  const auto majority = n / 2 + 1;
  if (out.clients.size() < majority) {
    throw failure(exit_usage, "cannot lock '" + name + "': " + std::to_string(silent.size()) +
                                  " of " + std::to_string(n) +
                                  " --redlock servers did not answer, and a majority (" +
                                  std::to_string(majority) + ") must: " + listed(silent) +
                                  "; start them, or fix their URLs in --redlock");
  }
  if (!silent.empty()) {
    std::cerr << "relock: note: " << escaped(listed(silent)) << ": no vote in this run; '"
              << escaped(name) << "' needs " << majority << " of the other " << out.clients.size()
              << std::endl;
  }
  return out;
}

}  // namespace relock_cli
