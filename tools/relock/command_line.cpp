// SPDX-License-Identifier: Apache-2.0
// The command line: flags and usage errors, parsed with CLI11 into plain options (the longer
// help texts are in help_text.hpp).
#include "command_line.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "help_text.hpp"
#include "tls_flags.hpp"

namespace relock_cli {
namespace {

// One line, for the subcommand that the error was about: what it expects and where to look.
std::string usage_of(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands()) {
    const auto& name = sub->get_name();
    if (name == "run") {
      return "relock run [OPTIONS] (NAME | --all NAME,NAME... | --semaphore N NAME) -- COMMAND "
             "[ARG...]; see run --help";
    }
    if (name == "status") return "relock status NAME";
    if (name == "queue") {
      return "relock queue offer NAME VALUE|- [--delay SEC] | take NAME [-w SEC] [--raw] | size "
             "NAME";
    }
    if (name == "semaphore") {
      return "relock semaphore release NAME PERMIT | set NAME N | add NAME N";
    }
    if (name == "unlock") return "relock unlock --force NAME";
    if (name == "doctor") return "relock doctor [--lease SEC] [--json]";
    if (name == "top") {
      return "relock top [PATTERN] [--once] [--json] [--sort name|kind|holders|waiters|lease] "
             "[--interval SEC] [--limit N]";
    }
    if (name == "demo") return "relock demo [--workers N] [--iterations M] [--cluster] [--tls]";
  }
  return "relock [OPTIONS] run|status|queue|semaphore|unlock|doctor|top|demo ...; see relock "
         "--help";
}

// A count as people write one: digits only. CLI11's integers also take 0x10, 0b1 and 0o7.
CLI::Validator plain_decimal() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return {};
        return "'" + text + "' is not a plain decimal number";
      },
      "", "plain decimal");
}

// A comma-separated list as typed: every member must be there ("a,,b", ",", "" are refused).
std::vector<std::string> split_list(const std::string& text, const char* flag) {
  std::vector<std::string> out;
  for (std::size_t from = 0;;) {
    const auto comma = text.find(',', from);
    out.push_back(text.substr(from, comma - from));
    if (out.back().empty()) {
      throw CLI::ValidationError(std::string(flag) + " '" + text + "'",
                                 "has an empty member: give every one, separated by single commas");
    }
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

// After NAME every word is the command's; "--" before it is optional, as with flock(1).
// With --all there is no NAME: the word taken for it is the command's first.
// `after_separator`: the words after the first "--" of the command line. When they are NAME and
// COMMAND, "--" came before NAME: the user left NAME out (`relock run -w 1 -- make`).
void split_command(run_options& r, const std::vector<std::string>& after_separator) {
  if (r.all_list) r.all_names = split_list(*r.all_list, "--all");
  if (r.redlock_list) r.redlock_urls = split_list(*r.redlock_list, "--redlock");
  if (r.all_names.empty() && !after_separator.empty() && after_separator.front() == r.name &&
      std::equal(r.command.begin(), r.command.end(), after_separator.begin() + 1,
                 after_separator.end())) {
    throw CLI::ValidationError(
        "NAME", "missing: say which lock before --, as in run NAME -- " + after_separator.front());
  }
  if (!r.all_names.empty() && !r.name.empty()) {
    r.command.insert(r.command.begin(), r.name);
    r.name.clear();
  }
  if (!r.command.empty() && r.command.front() == "--") r.command.erase(r.command.begin());
  if (r.command.empty()) {
    throw CLI::ValidationError("COMMAND", "missing: say what to run after NAME --");
  }
  if (r.command.front().starts_with("-")) {
    throw CLI::ValidationError("COMMAND '" + r.command.front() + "'",
                               "options go before NAME, not after it");
  }
}

}  // namespace

std::optional<int> parse_command_line(int argc, char** argv, command_line& c) {
  CLI::App app{help::synopsis, "relock"};
  app.footer(help::exit_codes);
  app.require_subcommand(1);
  app.fallthrough();  // global options may also follow the subcommand: relock status x --json
  app.set_version_flag("--version", RELOCK_VERSION);

  global_options& g = c.global;
  const char* env_url = std::getenv("RELOCK_URL");
  g.url_given = env_url != nullptr && *env_url != '\0';
  g.url = g.url_given ? env_url : "redis://127.0.0.1:6379";
  auto* url = app.add_option("--url", g.url,
                             "redis://[user[:password]@]host[:port][/db], "
                             "redis-cluster://host:port[,host:port...] or "
                             "redis-sentinel://host:port[,host:port...]/MASTER; "
                             "default $RELOCK_URL, then redis://127.0.0.1:6379")
                  ->type_name("URL");
  app.add_option("--watchdog-timeout", g.watchdog_seconds,
                 "how long a lock outlives a holder that died (default 30); renewed every third "
                 "of it while held")
      ->type_name("SEC");
  app.add_option("--pubsub", g.pubsub,
                 "pub/sub in a cluster: auto (sharded where Redis 7 has it), sharded, classic, or "
                 "both (a fleet mixing Redisson 3.18 and 4.x); the URL's ?pubsub= also works")
      ->check(CLI::IsMember({"auto", "sharded", "classic", "both"}))
      ->type_name("MODE");
  app.add_option("--replica-sync", g.replica_sync,
                 "wait for a replica to acknowledge each lock write: auto (whenever the master "
                 "has replicas), on, off; the URL's ?replica_sync= also works")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->type_name("MODE");
  app.add_option("--sentinel-user", g.sentinel_user, "the sentinels' ACL user, when they have one")
      ->type_name("USER");
  const char* env_sentinel_password = std::getenv("RELOCK_SENTINEL_PASSWORD");
  if (env_sentinel_password != nullptr) g.sentinel_password = env_sentinel_password;
  app.add_option("--sentinel-password", g.sentinel_password,
                 "the sentinels' password (default $RELOCK_SENTINEL_PASSWORD, which keeps it out "
                 "of the process list)")
      ->type_name("PW");
  add_tls_flags(app, g.tls);
  app.add_flag(
      "--json", g.json,
      "status, unlock, doctor, demo: print one JSON object; top: one JSON document (implies "
      "--once); run: its report on stderr");

  run_options& r = c.run;
  auto* run = app.add_subcommand("run", "hold NAME while COMMAND runs, then release it");
  run->footer(std::string(help::run_notes) + "\n\n" + help::run_exit_codes);
  run->positionals_at_end();  // after NAME, even "-x" belongs to the command
  run->add_option("-w,--wait", r.wait_seconds,
                  "give up after SEC, connecting included (default: wait until acquired)")
      ->type_name("SEC");
  run->add_flag("-n,--nonblock", r.nonblock, "give up at once if NAME is held (overrides --wait)");
  run->add_option("-E,--conflict-exit-code", r.conflict_exit_code,
                  "exit code when not acquired (default 1)")
      ->type_name("N")
      ->check(CLI::Range(0, 255));
  run->add_option("--report", r.report,
                  "when it ends, write how it went (outcome, waited, held, renewals) as one JSON "
                  "object to FILE (-: standard error, as --json)")
      ->type_name("FILE");
  run->add_option("--lease", r.lease_seconds,
                  "hold at most SEC, without the watchdog; the command gets SIGTERM then")
      ->type_name("SEC");
  auto* kind = run->add_option("--kind", r.kind,
                               "lock (default), fair, fenced, spin; read, write (as -s, -x): "
                               "see Kinds below")
                   ->type_name("KIND")
                   ->check(CLI::IsMember({"lock", "fair", "fenced", "spin", "read", "write"}));
  auto* shared = run->add_flag("-s,--shared", r.shared, "read side of the read-write lock NAME");
  auto* exclusive = run->add_flag("-x,--exclusive", r.exclusive, "its write side");
  shared->excludes(exclusive)->excludes(kind);
  exclusive->excludes(kind);
  // Taken as one word and split by split_list: CLI11's own splitting drops empty members, so
  // `--all , -- CMD` would lock a plain NAME "--".
  auto* all = run->add_option("--all", r.all_list,
                              "hold every one of these names, or none (a multi-lock); no NAME")
                  ->type_name("NAME,NAME...")
                  ->allow_extra_args(false);
  auto* redlock = run->add_option("--redlock", r.redlock_list,
                                  "hold NAME on a majority of these independent servers")
                      ->type_name("URL,URL,URL")
                      ->allow_extra_args(false);
  all->excludes(redlock);
  auto* semaphore =
      run->add_option("--semaphore", r.semaphore,
                      "hold one of N permits of the semaphore NAME (made with N if absent): at "
                      "most N at once")
          ->type_name("N")
          ->check(plain_decimal())
          ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000}));
  semaphore->excludes(all)->excludes(redlock)->excludes(kind);
  semaphore->excludes(shared)->excludes(exclusive);
  run->add_option("NAME", r.name, "the lock's (or semaphore's) name: its Redis key")->required();
  // Checked by split_command: with --all the first word of COMMAND lands in NAME.
  run->add_option("COMMAND", r.command, "what to run, with its arguments");

  auto* status = app.add_subcommand(
      "status",
      "who holds NAME, how often, for how long; a fair lock's queue, in order, with each "
      "waiter's deadline; a fenced lock's last token; the node serving it. A semaphore's "
      "available permits and the permits taken, with their expiries; a counter's value (a "
      "semaphore's or a count-down latch's); a queue's length. Gives up after 3 s without an "
      "answer (to connect, and again for the read)");
  status->footer(help::status_exit_codes);
  status->add_option("NAME", c.name, "the lock's (semaphore's, latch's, queue's) name")->required();

  queue_options& q = c.queue;
  auto* queue = app.add_subcommand(
      "queue",
      "Redisson's blocking queue NAME (a Redis list) and the delayed queue feeding it, shared "
      "with Java (StringCodec values)");
  queue->require_subcommand(1);
  queue->footer(help::queue_exit_codes);
  auto* offer = queue->add_subcommand("offer", "append VALUE to NAME, or put it in after --delay");
  offer
      ->add_option("--delay", q.delay_seconds,
                   "the delayed queue: VALUE reaches NAME once SEC have passed, moved by a "
                   "running consumer's transfer (relock queue take, Java's RDelayedQueue)")
      ->type_name("SEC");
  offer->add_option("NAME", q.name, "the queue's name (its Redis list)")->required();
  offer->footer(help::queue_exit_codes);
  offer
      ->add_option("VALUE", q.value,
                   "the value, as bytes; - reads it from standard input, every byte to the end "
                   "(NUL bytes too, up to 16 MiB)")
      ->required();
  auto* take = queue->add_subcommand(
      "take", "print NAME's head and remove it, waiting for one (exit 1 after -w)");
  take->add_option("-w,--wait", q.wait_seconds,
                   "give up after SEC, connecting included (default: wait for ever)")
      ->type_name("SEC");
  take->add_flag("--raw", q.raw,
                 "write the value's bytes exactly, with no newline after it (for binary values, "
                 "or values ending in a newline)");
  take->add_option("NAME", q.name, "the queue's name")->required();
  take->footer(help::queue_exit_codes);
  auto* size = queue->add_subcommand("size", "print how many elements NAME holds");
  size->add_option("NAME", q.name, "the queue's name")->required();
  size->footer(help::queue_exit_codes);

  semaphore_admin_options& sa = c.semaphore;
  auto* sem = app.add_subcommand(
      "semaphore",
      "a permit-expirable semaphore's administration (Redisson's RPermitExpirableSemaphore): "
      "give a stuck permit back, or change how many permits there are");
  sem->require_subcommand(1);
  sem->footer(help::semaphore_exit_codes);
  auto* give_back = sem->add_subcommand(
      "release", "give PERMIT of NAME back, whoever took it (a holder that died, say)");
  give_back->add_option("NAME", sa.name, "the semaphore's name")->required();
  give_back->add_option("PERMIT", sa.permit, "the permit's id, 32 hex digits, as status shows it")
      ->required();
  give_back->footer(help::semaphore_exit_codes);
  auto* set_permits = sem->add_subcommand(
      "set", "make NAME's permits N in all, taken ones included (made when absent)");
  set_permits->add_option("NAME", sa.name, "the semaphore's name")->required();
  set_permits->add_option("N", sa.permits, "the total, 0 to 2147483647")
      ->required()
      ->check(plain_decimal())
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{2'147'483'647}));
  set_permits->footer(help::semaphore_exit_codes);
  auto* add_permits = sem->add_subcommand(
      "add",
      "make N more permits of NAME available (made when absent); the total must stay "
      "at most 2147483647");
  add_permits->add_option("NAME", sa.name, "the semaphore's name")->required();
  add_permits->add_option("N", sa.permits, "how many, 1 to 2147483647")
      ->required()
      ->check(plain_decimal())
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{2'147'483'647}));
  add_permits->footer(help::semaphore_exit_codes);

  auto* unlock = app.add_subcommand(
      "unlock",
      "take NAME away from whoever holds it and wake its waiters (a fair lock's next in line)");
  unlock->add_flag("--force", c.force, "required: a lock belongs to its holder");
  unlock->add_option("NAME", c.name, "the lock's name")->required();
  unlock->footer(help::unlock_exit_codes);

  doctor_options& dr = c.doctor;
  auto* doctor = app.add_subcommand(
      "doctor",
      "check a deployment for locks: eviction policy, persistence, replicas, failover "
      "timeouts against the lease, ACL rights, Lua, busy scripts, pub/sub buffers, clock skew "
      "and round trip, on every node; each finding pass, warn or fail, why, and the fix");
  doctor
      ->add_option("--lease", dr.lease_seconds,
                   "the lease your locks use, in seconds (default: the watchdog's, 30)")
      ->type_name("SEC");
  doctor->footer(help::doctor_exit_codes);

  top_options& tp = c.top;
  auto* top = app.add_subcommand(
      "top",
      "watch the locks, semaphores, latches and queues whose names match PATTERN, refreshed "
      "every second: holders (host and pid where known), holds, lease left, waiters, permits, "
      "lengths; read with SCAN on every master, never KEYS. q quits, s changes the order, r "
      "refreshes");
  top->add_option("PATTERN", tp.pattern, "names to show, as SCAN MATCH takes them (default *)");
  top->add_flag("--once", tp.once, "one screen (with --json, one JSON document), then exit");
  top->add_option("--sort", tp.sort, "the order: name, kind, holders, waiters, lease")
      ->check(CLI::IsMember({"name", "kind", "holders", "waiters", "lease"}));
  top->add_option("--interval", tp.interval_seconds, "seconds between refreshes (default 1)")
      ->type_name("SEC");
  top->add_option("--limit", tp.limit, "at most N rows (default: what fits the terminal)")
      ->type_name("N")
      ->check(CLI::Range(0, 100000));
  top->footer(help::top_exit_codes);

  demo_options& d = c.demo;
  auto* demo = app.add_subcommand(
      "demo",
      "see it work: N processes add to one counter under one lock (with no --url and "
      "nothing answering, on a private redis-server)");
  demo->add_option("--workers", d.workers, "worker processes (default 8)")
      ->type_name("N")
      ->check(CLI::Range(1, 64));
  demo->add_option("--iterations", d.iterations, "increments per worker (default 250)")
      ->type_name("M")
      ->check(CLI::Range(1, 100000));
  demo->footer(help::demo_exit_codes);
  demo->add_flag("--cluster", d.cluster,
                 "on a Redis Cluster: the redis-cluster:// --url, or with none a private one of "
                 "3 masters (redis-server and redis-cli from PATH)");
  demo->add_flag("--tls", d.tls,
                 "over TLS: the rediss:// --url, or with none a private redis-server that speaks "
                 "only TLS, with a throwaway CA of its own");

  auto* worker = app.add_subcommand("demo-worker", "")->group("");  // hidden: the demo's processes
  worker->add_option("--iterations", d.iterations)->required();
  worker->add_option("--worker", d.worker_index)->required();
  worker->add_option("--prefix", d.prefix)->required();
  worker->add_option("--dir", d.dir)->required();

  try {
    app.parse(argc, argv);
    if (*run) {
      std::vector<std::string> after_separator;
      const auto separator = std::find(argv + 1, argv + argc, std::string_view("--"));
      if (separator != argv + argc) after_separator.assign(separator + 1, argv + argc);
      split_command(r, after_separator);
    }
    if (*unlock && !c.force) {
      throw CLI::ValidationError("unlock", "takes --force: it releases the lock whoever holds it");
    }
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version: printed, exit 0
  } catch (const CLI::ParseError& e) {
    const auto extras = app.remaining();
    if (app.get_subcommands().empty() && !extras.empty()) {
      std::cerr << "relock: unknown command '" << escaped(extras.front())
                << "'. Usage: " << usage_of(app) << "\n";
      return exit_usage;
    }
    std::cerr << "relock: " << escaped(e.what()) << ". Usage: " << usage_of(app) << "\n";
    return exit_usage;
  }
  if (url->count() > 0) g.url_given = true;
  for (auto* sub : {run, status, queue, sem, unlock, doctor, top, demo, worker}) {
    if (*sub) c.subcommand = sub->get_name();
  }
  for (auto* sub : {offer, take, size}) {
    if (*sub) q.action = sub->get_name();
  }
  for (auto* sub : {give_back, set_permits, add_permits}) {
    if (*sub) sa.action = sub->get_name();
  }
  return std::nullopt;
}

}  // namespace relock_cli
