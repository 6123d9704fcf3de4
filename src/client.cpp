#include <relock/client.hpp>

#include "client_core.hpp"
#include "objects/lock_kind.hpp"

namespace relock {

client::client(config settings)
    : core_(std::make_shared<detail::client_core>(std::move(settings))) {}

client::~client() { core_->shutdown(); }

const std::string& client::id() const { return core_->id(); }
const config& client::settings() const { return core_->settings(); }

Lock client::lock(std::string_view name) const {
  return Lock(core_, std::string(name), detail::reentrant_lock_kind);
}

Lock client::non_reentrant_lock(std::string_view name) const {
  return Lock(core_, std::string(name), detail::non_reentrant_lock_kind);
}

}  // namespace relock
