// Uses only the installed headers and library: makes a client handle type and a lock type.
#include <relock/client.hpp>

#include <iostream>

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
