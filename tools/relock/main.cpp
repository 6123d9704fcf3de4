// relock: flock(1) for a fleet. Parses the command line, runs one subcommand, and turns every
// error into one line on stderr and an exit code (listed in --help).
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "cli.hpp"

using namespace relock_cli;

namespace {

constexpr const char* exit_codes = R"(Exit codes:
  0        success (run: the command's own exit status)
  1        run: not acquired within --wait, or at once with -n (see --conflict-exit-code);
           unlock --force: the lock was not held
  2        bad flags, Redis unreachable, a name or duration refused
  3        run: the lock was lost while the command ran; the command got SIGTERM
  126/127  run: the command could not be executed / was not found
  128+N    run: the command died of signal N)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"relock: Redisson-compatible distributed locks on Redis, from the shell"};
  app.footer(exit_codes);
  app.require_subcommand(1);

  global_options g;
  const char* env_url = std::getenv("RELOCK_URL");
  g.url = env_url != nullptr ? env_url : "redis://127.0.0.1:6379";
  g.url_given = env_url != nullptr;
  auto* url = app.add_option("--url", g.url, "redis://[user[:password]@]host[:port][/db]; "
                                             "default $RELOCK_URL, then redis://127.0.0.1:6379");
  app.add_option("--watchdog-timeout", g.watchdog_seconds,
                 "seconds a lock outlives a dead holder (default 30); renewed every third of it");
  app.add_flag("--json", g.json, "machine-readable output");

  run_options r;
  auto* run = app.add_subcommand("run", "hold NAME while COMMAND runs, then release it");
  run->add_option("-w,--wait", r.wait_seconds, "give up after this many seconds (decimals ok)");
  run->add_flag("-n,--nonblock", r.nonblock, "give up at once if NAME is held");
  run->add_option("-E,--conflict-exit-code", r.conflict_exit_code,
                  "exit code when not acquired (default 1)");
  run->add_option("--lease", r.lease_seconds,
                  "hold at most this long (no watchdog); the command is stopped when it ends");
  run->add_option("--kind", r.kind, "lock kind")
      ->check(CLI::IsMember({"lock", "fair", "read", "write", "fenced"}));
  run->add_flag("-s,--shared", r.shared, "read side of the read-write lock NAME");
  run->add_flag("-x,--exclusive", r.exclusive, "write side of the read-write lock NAME");
  run->add_option("name", r.name, "lock name")->required();
  run->add_option("command", r.command, "command and arguments, after --")->required();

  std::string status_name;
  auto* status = app.add_subcommand("status", "show who holds NAME, and its lease");
  status->add_option("name", status_name, "lock name")->required();

  std::string unlock_name;
  bool force = false;
  auto* unlock = app.add_subcommand("unlock", "release NAME whoever holds it");
  unlock->add_flag("--force", force, "required: the lock is taken away from its holder");
  unlock->add_option("name", unlock_name, "lock name")->required();

  int workers = 8, iterations = 250;
  auto* demo = app.add_subcommand(
      "demo", "N processes increment a shared counter under one lock (starts a private Redis "
              "when none answers and no --url is given)");
  demo->add_option("--workers", workers, "worker processes (default 8)")->check(CLI::Range(1, 64));
  demo->add_option("--iterations", iterations, "increments per worker (default 250)")
      ->check(CLI::Range(1, 100000));

  int worker = 0;
  auto* demo_worker_cmd = app.add_subcommand("demo-worker", "")->group("");  // hidden
  demo_worker_cmd->add_option("--iterations", iterations)->required();
  demo_worker_cmd->add_option("--worker", worker)->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "relock: " << e.what() << " (see relock --help)\n";
    return exit_usage;
  }
  if (url->count() > 0) g.url_given = true;

  try {
    if (*run) return run_command(g, r);
    if (*status) return status_command(g, status_name);
    if (*unlock) return unlock_command(g, unlock_name, force);
    if (*demo) return demo_command(g, workers, iterations);
    if (*demo_worker_cmd) return demo_worker(g.url, iterations, worker);
  } catch (const failure& f) {
    std::cerr << "relock: " << f.what() << "\n";
    return f.code;
  } catch (const relock::error& e) {
    std::cerr << "relock: " << e.what() << "\n";
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "relock: " << e.what() << "\n";
    return exit_usage;
  }
  return exit_usage;
}
