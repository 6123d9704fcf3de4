// SPDX-License-Identifier: Apache-2.0
// relock top's terminal: raw mode (keys arrive one by one, unechoed), the alternate screen and a
// hidden cursor while it runs, all given back on every way out: the destructor (a return, an
// exception), and SIGINT, SIGTERM and SIGHUP, which end the wait as a key would. Ctrl-Z gives
// the terminal back while stopped and takes it again on return. Signals reach the main thread
// through a pipe (the self-pipe trick), so nothing but write(2) runs in a handler.
#pragma once

#include <termios.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace relock_cli {

// Columns and rows of the terminal on standard output (TIOCGWINSZ); 80x24 when it does not
// say; none when standard output is no terminal.
struct screen_size {
  std::size_t width = 0, height = 0;
};
std::optional<screen_size> output_size();

// What ended a wait.
struct terminal_event {
  enum class kind { timeout, key, resized, signalled };
  kind what = kind::timeout;
  char key = 0;    // kind::key
  int signal = 0;  // kind::signalled: SIGINT, SIGTERM or SIGHUP
};

class terminal {
 public:
  // Takes the terminal on standard output (and its keys on standard input, when that is a
  // terminal too). Throws failure(exit_usage) when standard output is no terminal.
  terminal();
  ~terminal();
  terminal(const terminal&) = delete;
  terminal& operator=(const terminal&) = delete;

  // Clears the screen and draws `lines` from the top (each already fitted to the width).
  void draw(const std::vector<std::string>& lines);

  // Waits up to `timeout` for a key, a resize or a signal that ends top.
  terminal_event wait(std::chrono::milliseconds timeout);

 private:
  void enter();
  void leave();
  void suspend();  // Ctrl-Z: give the terminal back, stop, take it again

  bool raw_ = false;      // standard input is a terminal, put in raw mode while top runs
  bool keys_ = false;     // and keys are read from it (until it closes)
  bool entered_ = false;  // the screen is top's
  termios saved_{};       // standard input's settings, to give back
  std::string pending_;   // keys read but not yet handed out
};

}  // namespace relock_cli
