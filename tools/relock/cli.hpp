// SPDX-License-Identifier: Apache-2.0
// The relock CLI's shared pieces: exit codes, parsed options, and one entry point per
// subcommand. Everything here runs on the main thread; errors travel as `failure` up to main,
// which prints them once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <relock/client.hpp>

namespace relock_cli {

// Exit codes, as `relock --help` lists them. `run` otherwise passes the command's status on.
constexpr int exit_ok = 0;
constexpr int exit_conflict = 1;   // default of --conflict-exit-code, as flock(1)
constexpr int exit_usage = 2;      // bad flags, Redis unreachable, a refused name or duration
constexpr int exit_lock_lost = 3;  // the lock was lost while the command ran
constexpr int exit_cannot_run = 126;
constexpr int exit_not_found = 127;

// A message for the user and the code to exit with; main prints it once, on stderr.
struct failure : std::runtime_error {
  failure(int exit_code, const std::string& what) : std::runtime_error(what), code(exit_code) {}
  int code;
};

// One setting as given, and where from: "--tls-ca" or "$RELOCK_TLS_CA", for messages; empty
// `from`: not given.
struct given_setting {
  std::string value;
  std::string from;
  bool given() const { return !from.empty(); }
};

// The TLS flags and their environment twins (a flag wins over its twin), for rediss:// URLs.
// Verification is turned off by the flag only: no variable can hide that in an environment.
struct tls_options {
  given_setting ca, cert, key, server_name;
  bool insecure_skip_verify = false;  // --tls-insecure-skip-verify
};

struct global_options {
  std::string url;
  bool url_given = false;  // --url or $RELOCK_URL, as opposed to the built-in default
  // Where the URL came from, for messages: "--redlock" for a red_lock member's; else --url's.
  std::string url_flag;
  // How long connecting may take: what is left of a deadline given on the command line (run -w,
  // queue take -w), or a subcommand's own bound; unset: the library's 10 s.
  std::optional<std::chrono::milliseconds> connect_timeout;
  std::optional<std::string> watchdog_seconds;  // as typed: to_duration checks it
  std::string pubsub;                           // --pubsub: auto, sharded, classic, both; "" unset
  std::string replica_sync;                     // --replica-sync: auto, on, off; "" unset
  std::string sentinel_user;                    // --sentinel-user
  std::string sentinel_password;                // --sentinel-password or $RELOCK_SENTINEL_PASSWORD
  tls_options tls;
  bool json = false;
  std::shared_ptr<relock::observer> observer;  // given to every client made (run --report)
};

struct run_options {
  std::string name;
  std::vector<std::string> command;
  std::optional<std::string> wait_seconds;  // as typed
  bool nonblock = false;
  int conflict_exit_code = exit_conflict;
  std::optional<std::string> lease_seconds;
  std::string kind = "lock";
  bool shared = false;
  bool exclusive = false;
  std::optional<std::string> all_list;      // --all as typed: NAME,NAME...
  std::optional<std::string> redlock_list;  // --redlock as typed: URL,URL,URL
  std::vector<std::string> all_names;       // --all's names: a multi-lock over them (no NAME)
  std::vector<std::string> redlock_urls;    // --redlock's: NAME on each of these servers
  std::optional<std::int64_t> semaphore;    // --semaphore N: a permit of NAME, made with N permits
  std::optional<std::string> report;        // --report FILE: how it went, as JSON ("-": stderr)
};

struct queue_options {
  std::string action;  // offer, take, size
  std::string name;
  std::string value;                         // offer; "-": standard input
  std::optional<std::string> delay_seconds;  // offer --delay, as typed
  std::optional<std::string> wait_seconds;   // take -w, as typed
  bool raw = false;                          // take --raw: the bytes, no newline
};

struct semaphore_admin_options {
  std::string action;  // release, set, add
  std::string name;
  std::string permit;        // release: the permit's id, as status shows it
  std::int64_t permits = 0;  // set: the total; add: how many more
};

struct doctor_options {
  // The lease the deployment's locks use, as typed (--lease SEC): what timeouts are judged
  // against; unset: the watchdog's (30 s, or --watchdog's).
  std::optional<std::string> lease_seconds;
};

struct top_options {
  std::string pattern = "*";  // names to show, as SCAN MATCH takes them
  bool once = false;          // one screen (or one JSON document with --json), then exit
  std::string sort = "name";  // name, kind, holders, waiters, lease
  std::optional<std::string> interval_seconds;  // between refreshes, as typed; default 1
  int limit = 0;                                // at most so many rows; 0: what fits
};

struct demo_options {
  int workers = 8;
  int iterations = 250;
  bool cluster = false;  // on a Redis Cluster: --url's, else a private one (private_redis.hpp)
  bool tls = false;      // over TLS: --url's rediss://, else a private server with its own CA
  int worker_index = 0;  // demo-worker only
  std::string prefix;    // demo-worker only: the run's lock name (demo.hpp)
  std::string dir;       // demo-worker only: the run's files (demo.hpp)
};

// Seconds as typed on the command line, plain decimal ("10", "0.5"), in milliseconds rounded
// up. Throws failure(exit_usage) naming `flag` for anything else (hex, exponents, inf, nan, a
// sign, empty) and for over 100 years; `positive` also refuses 0 (a lease or watchdog of 0).
std::chrono::milliseconds to_duration(const std::string& seconds, const char* flag, bool positive);
// 1500 ms -> "1.5 s", for messages.
std::string seconds_text(std::chrono::milliseconds d);

// `text` on one line for a terminal: control bytes (a newline in a name, say) as \n, \t, \r or
// \xNN, so that a message stays one line and a name shows what it holds.
std::string escaped(std::string_view text);
// `text` without the script SHA and line that Redis adds to an error raised in a script.
std::string without_script_position(const std::string& text);

// The URL as messages show it: redis://user:***@host:port.
std::string shown_url(const std::string& url);
// `text` with every trace of the URL's password replaced by ***: what main prints.
std::string without_secret(const std::string& text, const std::string& url);

// The longest status, unlock, semaphore, queue offer and size wait for Redis: to connect, and
// then for each reply (relock::config's command timeout).
constexpr std::chrono::milliseconds one_shot_timeout{3'000};
// The least connecting gets from a deadline (run -w, queue take -w), so that -w 0 still connects.
constexpr std::chrono::milliseconds min_connect_timeout{100};
// Connecting bounded by a deadline `wait` from now: `wait`, but at least min_connect_timeout and
// at most the library's default.
std::chrono::milliseconds connect_timeout_for(std::chrono::milliseconds wait);

// The TLS settings of `t`, checked: files readable, a certificate with its key, no empty name.
// Throws failure(exit_usage) naming the flag or variable. TLS flags with a URL that is not
// rediss://... are refused too (`url`: the one they would apply to); their twins are ignored
// there, so one environment can serve plain and TLS deployments.
relock::tls_settings tls_settings_of(const tls_options& t, const std::string& url);
// Whether `url` asks for TLS: rediss://, rediss-cluster://, rediss-sentinel://.
bool tls_url(const std::string& url);

relock::config make_config(const global_options& g);
// Connects, turning the library's connection errors into one line that says what to do.
relock::client connect(const global_options& g, relock::config settings);
// connect()'s line for a client that could not be made.
[[noreturn]] void fail_to_connect(const global_options& g, const relock::error& e);
// Whether `e` says Redis did not answer (down, stopped, too slow), not that it refused us.
bool unanswered(const std::system_error& e);
// Whether `e` says the TLS handshake failed: a certificate refused (ours or the server's).
bool tls_refused(const std::system_error& e);
// Whether `e` says a server closed a connection it had accepted: over TLS, most often a
// tls-auth-clients server that did not like the client's certificate (or its absence).
bool closed_after_handshake(const std::system_error& e);
// The same for an error of a later call, e.g. a connection lost under a command.
[[noreturn]] void fail_with(const global_options& g, const std::system_error& e,
                            const std::string& doing);

// Why a name that is no lock cannot be used as one: "'x' is a Redis string, not a lock".
std::string not_a_lock(const relock::lock_info& info);

int run_command(const global_options& g, const run_options& o);
int status_command(const global_options& g, const std::string& name);
int queue_command(const global_options& g, const queue_options& o);
// A queue's status, when `name` holds a queue or a delayed queue feeds it; false otherwise.
bool print_queue_status(relock::client& client, const global_options& g, const std::string& name);
int unlock_command(const global_options& g, const std::string& name);
int semaphore_command(const global_options& g, const semaphore_admin_options& o);
int demo_command(const global_options& g, const demo_options& o);
// relock doctor: is this deployment safe for locks? One finding per check, pass/warn/fail.
int doctor_command(const global_options& g, const doctor_options& o);
// relock top [PATTERN]: the locks, semaphores, latches and queues whose names match, live.
int top_command(const global_options& g, const top_options& o);
int demo_worker(const global_options& g, const demo_options& o);

}  // namespace relock_cli
