// SPDX-License-Identifier: Apache-2.0
#include <relock/client.hpp>

#include "client_core.hpp"
#include "layout/inspect.hpp"
#include "layout/naming.hpp"
#include "locks/lock_kinds.hpp"
#include "waiting/blocking_call.hpp"
#include "waiting/lock_kind.hpp"

namespace relock {

client::client(config settings)
    : core_(std::make_shared<detail::client_core>(std::move(settings))) {}

client::~client() { core_->shutdown(); }

const std::string& client::id() const { return core_->id(); }
const config& client::settings() const { return core_->settings(); }

mutex client::lock(std::string_view name) const {
  return mutex(core_, std::string(name), detail::waiting::reentrant_lock_kind);
}

mutex client::non_reentrant_lock(std::string_view name) const {
  return mutex(core_, std::string(name), detail::waiting::non_reentrant_lock_kind);
}

read_write_lock client::read_write_lock(std::string_view name) const {
  return relock::read_write_lock(mutex(core_, std::string(name), detail::locks::rwlock_read_kind),
                                 mutex(core_, std::string(name), detail::locks::rwlock_write_kind));
}

mutex client::fair_lock(std::string_view name) const {
  return mutex(core_, std::string(name), detail::locks::fair_lock_kind);
}

mutex client::non_reentrant_fair_lock(std::string_view name) const {
  return mutex(core_, std::string(name), detail::locks::non_reentrant_fair_lock_kind);
}

fenced_lock client::fenced_lock(std::string_view name) const {
  return relock::fenced_lock(core_, std::string(name), detail::locks::fenced_lock_kind);
}

mutex client::spin_lock(std::string_view name) const {
  return mutex(core_, std::string(name), detail::locks::spin_lock_kind);
}

blocking_queue client::blocking_queue(std::string_view name) const {
  return relock::blocking_queue(core_, std::string(name));
}

delayed_queue client::delayed_queue(std::string_view destination) const {
  return relock::delayed_queue(core_, std::string(destination));
}

semaphore client::semaphore(std::string_view name, semaphore_options options) const {
  return relock::semaphore(core_, std::string(name), options);
}

permit_expirable_semaphore client::permit_expirable_semaphore(std::string_view name,
                                                              semaphore_options options) const {
  return relock::permit_expirable_semaphore(core_, std::string(name), options);
}

count_down_latch client::count_down_latch(std::string_view name) const {
  return relock::count_down_latch(core_, std::string(name));
}

asio::io_context& client::io(detail::client_core& core) { return core.io(); }

void client::start_inspect(const std::shared_ptr<detail::client_core>& core, std::string name,
                           detail::answer<lock_info> done) {
  layout::start_inspect(core, std::move(name), std::move(done));
}

lock_info client::inspect(std::string_view name) const {
  // Checked here too, so that the exception says what is wrong with the name.
  layout::check_name(name, "lock name");
  layout::check_name(core_->key_of(name), "lock key (after the name mapper)");
  detail::waiting::refuse_io_thread(*core_, "inspect");
  auto [ec, said, info] = detail::waiting::wait_for<std::error_code, std::string, lock_info>(
      [&](auto done) { layout::start_inspect(core_, std::string(name), std::move(done)); });
  if (ec) {
    throw error(ec, "inspect '" + std::string(name) + "': " + (said.empty() ? ec.message() : said));
  }
  return std::move(info);
}

}  // namespace relock
