// SPDX-License-Identifier: Apache-2.0
// Uses only the installed headers and library.
//
// main() makes a client against a port where nothing listens: a clean relock::error is the
// proof that the library loads and runs. use_everything() is never called, but it is linked:
// it names every function of the public API (the inline async ones too, which call exported
// helpers), so one that librelock.so does not export fails the link here, not in a user's
// build. (A RELOCK_API declaration is exported only if the definition's file sees it.)
#include <relock/client.hpp>

#include <functional>
#include <iostream>
#include <mutex>
#include <string>

using namespace std::chrono_literals;

void use_everything(relock::client& client, std::function<void(std::string)> note) {
  note(client.id());
  note(client.settings().url);
  relock::lock_info info = client.inspect("consumer");
  note(relock::to_string(info.kind));
  note(relock::to_string(relock::hold_side::read));
  client.async_inspect(
      "consumer", [note](std::error_code ec, relock::lock_info i) { note(ec.message() + i.name); });

  relock::mutex lock = client.lock("consumer");
  relock::mutex other = client.non_reentrant_lock("consumer");
  note(lock.name() + lock.key() + other.owner_field(relock::owner::current_thread()));
  lock.lock();
  lock.lock(10s);
  lock.lock(std::stop_token{}, 10s);
  note(std::to_string(lock.try_lock()) + std::to_string(lock.try_lock(1s)) +
       std::to_string(lock.try_lock(1s, 10s)) + std::to_string(lock.try_lock_for(1s)) +
       std::to_string(lock.try_lock_until(std::chrono::steady_clock::now() + 1s)));
  { std::scoped_lock guard(lock); }
  lock.unlock();
  std::error_code ec;
  lock.unlock(ec);
  note(std::to_string(lock.force_unlock()) + std::to_string(lock.is_locked()) +
       std::to_string(lock.is_held_by_current_thread()) +
       std::to_string(lock.is_held_by(relock::owner(1))) + std::to_string(lock.is_held_by("x:1")) +
       std::to_string(lock.hold_count()) + std::to_string(lock.hold_count(relock::owner(1))) +
       std::to_string(lock.hold_count("x:1")) + std::to_string(lock.remaining_lease().has_value()));

  auto me = relock::owner::unique();
  lock.async_lock(me, {.lease = 10s, .wait = 1s}, [note](std::error_code e) { note(e.message()); });
  lock.async_try_lock(
      me, {}, [note](std::error_code e, bool got) { note(e.message() + std::to_string(got)); });
  lock.async_unlock(me, [note](std::error_code e) { note(e.message()); });
  note(relock::make_error_code(relock::errc::timeout).message());
  note(relock::error_category().name());
}

int main() {
  relock::config settings;
  settings.url = "redis://127.0.0.1:1";  // nothing listens there: a clean error is the proof
  settings.connect_timeout = std::chrono::milliseconds(500);
  try {
    relock::client client(settings);
  } catch (const relock::error& e) {
    std::cout << "relock consumer ok: " << e.what() << "\n";
    return e.code() == relock::errc::connection ? 0 : 1;
  }
  return 1;
}
