// SPDX-License-Identifier: Apache-2.0
#include "top_terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <string_view>

#include "cli.hpp"

namespace relock_cli {
namespace {

// ANSI: the alternate screen keeps the shell's screen as it was; the cursor would blink at the
// end of the last row.
constexpr std::string_view take_screen = "\x1b[?1049h\x1b[?25l";
constexpr std::string_view give_screen = "\x1b[?25h\x1b[?1049l";
constexpr std::string_view clear_screen = "\x1b[H\x1b[2J";

constexpr std::array<int, 5> handled{SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP};

// The self-pipe: the handlers write the signal's number, wait() reads it. One terminal at a time.
int signal_pipe[2] = {-1, -1};
std::array<struct sigaction, handled.size()> previous{};

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(sig);
  (void)!::write(signal_pipe[1], &byte, 1);
  errno = saved;
}

void write_all(std::string_view text) {
  while (!text.empty()) {
    const auto n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a terminal gone: nothing left to show it on
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void catch_signals() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < handled.size(); ++i) ::sigaction(handled[i], &action, &previous[i]);
}

void release_signals() {
  for (std::size_t i = 0; i < handled.size(); ++i) ::sigaction(handled[i], &previous[i], nullptr);
}

}  // namespace

std::optional<screen_size> output_size() {
  if (::isatty(STDOUT_FILENO) == 0) return std::nullopt;
  winsize w{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0 || w.ws_col == 0 || w.ws_row == 0) {
    return screen_size{80, 24};
  }
  return screen_size{w.ws_col, w.ws_row};
}

terminal::terminal() {
  if (::isatty(STDOUT_FILENO) == 0) {
    throw failure(exit_usage,
                  "top: standard output is not a terminal; use --once for one screen, or --json");
  }
  if (::pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw failure(exit_usage, "top: cannot make a pipe for signals");
  }
  raw_ = ::isatty(STDIN_FILENO) != 0 && ::tcgetattr(STDIN_FILENO, &saved_) == 0;
  keys_ = raw_;
  catch_signals();
  enter();
}

terminal::~terminal() {
  leave();
  release_signals();
  ::close(signal_pipe[0]);
  ::close(signal_pipe[1]);
  signal_pipe[0] = signal_pipe[1] = -1;
}

void terminal::enter() {
  if (raw_) {
    // Keys one at a time, not echoed; ISIG stays, so Ctrl-C and Ctrl-Z still signal.
    termios raw = saved_;
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }
  write_all(take_screen);
  entered_ = true;
}

void terminal::leave() {
  if (!entered_) return;
  entered_ = false;
  write_all(give_screen);
  if (raw_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

void terminal::suspend() {
  leave();
  // Stopped the ordinary way, with the terminal as the shell expects it; raise returns once the
  // shell continues us (fg).
  struct sigaction stop {};
  stop.sa_handler = SIG_DFL;
  sigemptyset(&stop.sa_mask);
  struct sigaction ours {};
  ::sigaction(SIGTSTP, &stop, &ours);
  ::raise(SIGTSTP);
  ::sigaction(SIGTSTP, &ours, nullptr);
  enter();
}

void terminal::draw(const std::vector<std::string>& lines) {
  std::string screen(clear_screen);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) screen += "\r\n";  // none after the last: the bottom row must not scroll
    screen += lines[i];
  }
  write_all(screen);
}

terminal_event terminal::wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!pending_.empty()) {
      const char key = pending_.front();
      pending_.erase(0, 1);
      return {terminal_event::kind::key, key, 0};
    }
    pollfd fds[2] = {{signal_pipe[0], POLLIN, 0}, {keys_ ? STDIN_FILENO : -1, POLLIN, 0}};
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int ready = ::poll(fds, 2, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready < 0 && errno == EINTR) continue;  // the byte is in the pipe: read at the next turn
    if (ready <= 0) return {};
    if ((fds[0].revents & POLLIN) != 0) {
      // One signal per call: any others stay in the pipe for the next.
      unsigned char sig = 0;
      if (::read(signal_pipe[0], &sig, 1) == 1) {
        if (sig == SIGTSTP) {
          suspend();
          return {terminal_event::kind::resized, 0, 0};  // redraw: the screen was given back
        }
        if (sig == SIGWINCH) return {terminal_event::kind::resized, 0, 0};
        return {terminal_event::kind::signalled, 0, sig};
      }
    }
    if ((fds[1].revents & (POLLIN | POLLHUP)) != 0) {
      char keys[64];
      const auto n = ::read(STDIN_FILENO, keys, sizeof keys);
      if (n > 0) {
        pending_.assign(keys, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        keys_ = false;  // the terminal's input is gone: no more keys, still a screen
      }
    }
  }
}

}  // namespace relock_cli
