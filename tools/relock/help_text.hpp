// SPDX-License-Identifier: Apache-2.0
// relock's help texts: the synopsis, each subcommand's notes and each one's exit codes, as
// --help prints them (tools/relock/man/relock.1 is written from them: keep the two in step).
#pragma once

namespace relock_cli::help {

inline constexpr const char* synopsis =
    R"(flock(1) across hosts: Redisson-compatible distributed locks on Redis.

  relock [--url URL] [--pubsub MODE] [--watchdog-timeout SEC] [--json] COMMAND ...
         [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-server-name NAME]
  relock run [-w SEC] [-n] [-E N] [--lease SEC] [--kind K] [-s|-x] NAME -- COMMAND [ARG...]
  relock run [OPTIONS] --all NAME,NAME... -- COMMAND [ARG...]
  relock run [OPTIONS] --redlock URL,URL,URL NAME -- COMMAND [ARG...]
  relock run [-w SEC] [-n] [-E N] [--lease SEC] --semaphore N NAME -- COMMAND [ARG...]
  relock status NAME
  relock queue offer NAME VALUE|- [--delay SEC] | take NAME [-w SEC] [--raw] | size NAME
  relock semaphore release NAME PERMIT | set NAME N | add NAME N
  relock unlock --force NAME
  relock doctor [--lease SEC] [--json]
  relock top [PATTERN] [--once] [--json] [--sort KEY] [--interval SEC] [--limit N]
  relock demo [--workers N] [--iterations M] [--cluster] [--tls]

URL: redis://[user[:password]@]host[:port][/db], or a Redis Cluster by any of
its nodes: redis-cluster://[user[:password]@]host:port[,host:port...], or the
master that Sentinel watches: redis-sentinel://[user[:password]@]host:port[,...]/MASTER
(the URL's credentials are the data nodes'; the sentinels' go in --sentinel-user
and --sentinel-password or $RELOCK_SENTINEL_PASSWORD). With replicas, lock writes
wait for one to acknowledge them (--replica-sync).

TLS: rediss://, rediss-cluster://, rediss-sentinel://. The server's certificate
is checked against --tls-ca FILE (else the system's CAs) and the host in the URL
(--tls-server-name NAME when the URL gives an address the certificate does not
name); --tls-cert FILE and --tls-key FILE for servers with tls-auth-clients.
Each flag has a twin: $RELOCK_TLS_CA, $RELOCK_TLS_CERT, $RELOCK_TLS_KEY,
$RELOCK_TLS_SERVER_NAME; a flag wins over its twin, and the URL's tls_ca=,
tls_cert=, tls_key=, tls_server_name= win over both. The flags with a plain
redis:// URL are refused; the variables are ignored there.
--tls-insecure-skip-verify accepts any certificate (test benches only: anyone in
between can read the traffic, password included; relock warns on stderr); it
has no variable.

Timeouts: run -w SEC and queue take -w SEC are deadlines for everything before
the command or the value, connecting to Redis included (connecting gets at
least 0.1 s of SEC, so -w 0 still connects). status, unlock, semaphore, queue
offer and queue size give up after 3 s without an answer, to connect and again
for each reply. Otherwise connecting may take up to 10 s.
)";

inline constexpr const char* exit_codes = R"(Exit codes:
  0        success; run: the command's own exit status
  1        run: not acquired within --wait, or at once with -n (-E changes it);
           queue take: nothing came within --wait; semaphore release: no such
           permit taken; unlock: the lock was not held; demo: the count came out wrong;
           doctor: the worst finding is a warning
  2        bad flags, Redis unreachable (or not answering within the connect
           timeout), a TLS certificate or file refused, a name, value or duration
           refused
  3        run: the lock was lost while the command ran; the command got SIGTERM;
           doctor: a check failed
  126/127  run: the command could not be executed / was not found
  128+N    run: the command died of signal N (or relock did, waiting for the lock)
A command's own 1, 2 or 3 pass through as well; when the code is relock's,
relock says why on stderr.)";

// Each subcommand's --help lists its own codes only.
inline constexpr const char* run_exit_codes = R"(Exit codes:
  0        the command's own exit status (its 1, 2 or 3 pass through as well:
           when the code is relock's, relock says why on stderr)
  1        not acquired within --wait, or at once with -n (-E changes it)
  2        bad flags, Redis unreachable, a TLS certificate or file refused, a name
           or duration refused
  3        the lock was lost while the command ran; the command got SIGTERM
  126/127  the command could not be executed / was not found
  128+N    the command died of signal N (or relock did, waiting for the lock))";

inline constexpr const char* status_exit_codes = R"(Exit codes:
  0        shown (a name that holds nothing too)
  2        bad flags, Redis unreachable, the name refused, or it holds data that is
           none of relock's kinds)";

inline constexpr const char* queue_exit_codes = R"(Exit codes:
  0        done: offered; taken and printed; the size printed
  1        take: nothing came within --wait
  2        bad flags, Redis unreachable, a name, value or duration refused, or the
           name (or its delayed queue's keys) holding another Redis type)";

inline constexpr const char* semaphore_exit_codes = R"(Exit codes:
  0        done: the permit given back; the permits set or added
  1        release: no such permit is taken (given back, expired, never taken)
  2        bad flags, Redis unreachable, the name holding something else, or a
           total that would pass 2147483647 (a Java int: Redisson could not read it))";

inline constexpr const char* unlock_exit_codes = R"(Exit codes:
  0        released
  1        the lock was not held
  2        bad flags, Redis unreachable, the name holding something else)";

inline constexpr const char* doctor_exit_codes = R"(Exit codes:
  0        every check passed
  1        a warning: locks work, with a risk the report names
  3        a failure: locks are not safe here until it is fixed
  2        bad flags, Redis unreachable)";

inline constexpr const char* top_exit_codes = R"(Exit codes:
  0        shown (--once), or quit with q
  2        bad flags, Redis unreachable
  130, 143 ended by SIGINT (Ctrl-C) or SIGTERM, after giving the terminal back)";

inline constexpr const char* demo_exit_codes = R"(Exit codes:
  0        the count came out exact
  1        the count came out wrong
  2        bad flags, Redis unreachable, a certificate refused)";

inline constexpr const char* run_notes =
    R"(COMMAND is every word after NAME ("--" before it is optional).
It inherits stdin, stdout and stderr, and gets RELOCK_NAME=NAME in its environment
(and RELOCK_TOKEN, the fencing token, with --kind fenced). SIGINT, SIGTERM and
SIGHUP are forwarded to it; one that comes while waiting for the lock ends the
wait. Without --lease the watchdog renews the lock (every third of
--watchdog-timeout) while the command runs. If the lock is lost anyway (key
deleted, Redis away for longer than the lease) or --lease runs out, the command
gets SIGTERM and relock exits 3; if relock itself is killed, the command gets
SIGKILL. Durations are plain decimal seconds (10, 0.5).

-w SEC is the deadline for everything before COMMAND starts: connecting to Redis
counts against it (at least 0.1 s of it, at most 10 s), and the wait for NAME
gets what is left. A server that accepts connections but answers nothing
(stopped, swapping) costs SEC, then exit 2; with --redlock it costs SEC/n and
its vote. Without -w, connecting may take up to 10 s, then the wait is as long
as it takes.

Kinds, each on the data of its Redisson twin (Java shares NAME with relock):
  lock         the reentrant lock (RLock); the default
  fair         waiters get NAME in the order they asked for it (RFairLock)
  fenced       the command gets this acquisition's fencing token in RELOCK_TOKEN;
               each acquisition's is higher than every earlier one (RFencedLock)
  spin         no pub/sub: waiters poll with backoff, and a force unlock reaches the
               command at the next renewal (or the end of --lease), not at once (RSpinLock)
  read, write  the two sides of the read-write lock NAME (RReadWriteLock), as -s, -x

Several locks:
  --all A,B,C  holds every name at once or none (a multi-lock, as Redisson's
               RedissonMultiLock), on --url's deployment; RELOCK_NAME=A,B,C. Names are
               taken in one sorted order, so two runs naming them in any order never
               deadlock; the wait, --lease and the watchdog apply to each.
  --redlock U1,U2,U3 NAME
               holds NAME on a majority of independent servers (red_lock; an odd number,
               at least 3, redis:// URLs, no replication between them). One server away
               costs one vote, not the lock, whether it stopped answering before relock
               started (a note names it) or later; fewer than a majority answering is
               exit 2. With -w each server has SEC/n of it to answer at start. Servers
               are told apart by their run id, and one named twice is refused; one that
               did not answer cannot be checked, and has no vote. Without --lease each
               member is renewed by the watchdog. See the README, "red_lock", for what it
               does not guarantee.
  Neither takes --kind fenced (one token per lock: the command could not be given one).

At most N at once:
  --semaphore N NAME
               takes one permit of the semaphore NAME (Redisson's RPermitExpirableSemaphore)
               while COMMAND runs, so at most N commands run at once across the fleet.
               NAME is made with N permits if it holds nothing; one that exists is used as
               it is (with a note on stderr when its permits do not add up to N). The
               command gets the permit's id in RELOCK_PERMIT. Without --lease the watchdog
               renews the permit, so a permit whose relock died comes back within
               --watchdog-timeout; a permit found gone is lost, as a lock (exit 3). Takes
               -w, -n, -E and --lease; not --kind, -s, -x, --all or --redlock.)";

}  // namespace relock_cli::help
