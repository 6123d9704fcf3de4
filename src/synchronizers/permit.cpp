// SPDX-License-Identifier: Apache-2.0
#include <relock/permit.hpp>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

#include <relock/permit_expirable_semaphore.hpp>
#include <relock/semaphore.hpp>

#include "client_core.hpp"
#include "waiting/blocking_call.hpp"

namespace relock {
namespace detail::synchronizers {

using give_back_done = answer<>;

// What a permit owns: a copy of its semaphore's handle (which knows how to give permits back)
// and what to give back. The semaphores befriend it for their core and their release.
struct permit_state {
  permit_state(const semaphore& from, std::int64_t n) : from(from), core(from.core_), count(n) {}
  permit_state(const permit_expirable_semaphore& from, std::string id)
      : from(from), core(from.core_), id(std::move(id)) {}

  const std::string& key() const {
    return std::visit([](const auto& h) -> const std::string& { return h.key(); }, from);
  }
  // For error messages, as the semaphores' own release() words them.
  std::string what() const {
    const auto& name =
        std::visit([](const auto& h) -> const std::string& { return h.name(); }, from);
    return "semaphore '" + name + "': release" + (id.empty() ? "" : " of permit " + id);
  }
  // Starts the release; `done` runs on relock's I/O thread.
  void send(give_back_done done) {
    if (auto* counting = std::get_if<semaphore>(&from)) {
      return counting->start_release(count, std::move(done));
    }
    std::get<permit_expirable_semaphore>(from).start_release(id, std::move(done));
  }

  std::variant<semaphore, permit_expirable_semaphore> from;
  std::shared_ptr<client_core> core;
  std::string id;  // an id-permit's; empty for a plain semaphore's
  std::int64_t count = 1;
};

}  // namespace detail::synchronizers

namespace {

const std::string no_text;

// A failure nobody can be handed (the destructor's) goes where mutex::unlock() sends its own.
void report(const detail::client_core& core, const std::string& key, std::error_code ec,
            const std::string& text) {
  core.log(log_level::error, "giving back a permit failed: " + text);
  if (const auto& on_unlock_error = core.settings().on_unlock_error) {
    on_unlock_error(key, ec, text);
  }
}

// Gives the permits back and waits for the outcome: (error, words for a human). Not on the I/O
// thread.
std::pair<std::error_code, std::string> give_back_waiting(
    detail::synchronizers::permit_state& s) noexcept {
  std::error_code ec;
  std::string text;
  if (s.core->stopped()) {
    ec = errc::cancelled;
    text = "the client has been destroyed";
  } else {
    try {
      std::tie(ec, text) = detail::waiting::wait_for<std::error_code, std::string>(
          [&](auto done) { s.send(std::move(done)); });
    } catch (const std::exception& e) {  // allocation failure: still never throw from here
      ec = errc::connection;
      text = e.what();
    }
  }
  if (ec) text = s.what() + ": " + (text.empty() ? ec.message() : text);
  return {ec, std::move(text)};
}

// What the destructor and a move-assignment do with what the permit still owns.
void let_go(std::unique_ptr<detail::synchronizers::permit_state> s) noexcept {
  if (!s) return;
  if (s->core->on_io_thread()) {
    // Waiting here would wait for ever: the answer comes on this thread. Send the release and
    // report a failure when it comes back.
    try {
      s->send(
          [core = s->core, key = s->key(), what = s->what()](std::error_code ec, std::string text) {
            if (ec) report(*core, key, ec, what + ": " + (text.empty() ? ec.message() : text));
          });
    } catch (const std::exception& e) {
      report(*s->core, s->key(), errc::connection, s->what() + ": " + e.what());
    }
    return;
  }
  auto [ec, text] = give_back_waiting(*s);
  if (ec) report(*s->core, s->key(), ec, text);
}

}  // namespace

permit::permit() noexcept = default;

permit::permit(std::unique_ptr<detail::synchronizers::permit_state> state) noexcept
    : state_(std::move(state)) {}

permit::permit(permit&& other) noexcept = default;

permit& permit::operator=(permit&& other) noexcept {
  if (this != &other) {
    let_go(std::move(state_));
    state_ = std::move(other.state_);
  }
  return *this;
}

permit::~permit() { let_go(std::move(state_)); }

permit permit::counting(const semaphore& from, std::int64_t n) {
  return permit(std::make_unique<detail::synchronizers::permit_state>(from, n));
}

permit permit::with_id(const permit_expirable_semaphore& from, std::string id) {
  return permit(std::make_unique<detail::synchronizers::permit_state>(from, std::move(id)));
}

const std::string& permit::id() const noexcept { return state_ ? state_->id : no_text; }

std::int64_t permit::count() const noexcept { return state_ ? state_->count : 0; }

const std::string& permit::semaphore_name() const noexcept {
  if (!state_) return no_text;
  return std::visit([](const auto& h) -> const std::string& { return h.name(); }, state_->from);
}

void permit::release() {
  if (!state_) throw error(errc::not_owner, "permit::release: this permit owns nothing");
  if (state_->core->on_io_thread() && !state_->core->stopped()) {
    throw error(errc::would_deadlock, state_->what() +
                                          ": release() blocks, and was called on relock's I/O "
                                          "thread; use async_release there");
  }
  // Empty from here whatever the outcome: a release that failed is not sent twice.
  auto s = std::move(state_);
  auto [ec, text] = give_back_waiting(*s);
  if (ec) throw error(ec, text);
}

void permit::release(std::error_code& ec) noexcept {
  ec = {};
  if (!state_) {
    ec = errc::not_owner;
    return;
  }
  if (state_->core->on_io_thread() && !state_->core->stopped()) {
    ec = errc::would_deadlock;
    return;
  }
  auto s = std::move(state_);
  ec = give_back_waiting(*s).first;
}

std::string permit::detach() noexcept {
  auto s = std::move(state_);
  return s ? std::move(s->id) : std::string();
}

asio::io_context& permit::io() const { return detail::io_of(*state_->core); }

void permit::start_release(detail::answer<> done) {
  auto s = std::move(state_);
  s->send(std::move(done));
}

}  // namespace relock
