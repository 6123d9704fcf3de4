#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python entries of bench/run: one scenario, one repetition, one JSON line on stdout.

    driver.py --lib relock-python|redis-py|pottery --scenario uncontended|handoff|n-locks
              --rep N --url redis://HOST:PORT [--seconds S] [--threads T] [--variant V]
              [--probe-url URL]

Runs under .venv/bench's Python (bench/python/prepare). The scenarios are bench/uncontended.cpp,
bench/handoff.cpp (the reentrant lock, one client) and bench/n_locks.cpp again, in Python
threads, with the same names, warm-ups, windows and fields, so bench/run's table and
bench/chart.py read the lines as they read the C++ driver's and the Redisson peer's:

- uncontended: one thread, one lock, acquire() + release() pairs back to back; a pair is timed
  from the end of the previous one (pair p50 / p99, pairs/s).
- handoff: T threads (8) on one lock. The holder keeps it 1 ms, releases, then waits until
  another thread holds it before asking again, so every release is a handoff. Handoff latency
  runs from just before the holder's release() call to the moment another thread's acquire()
  returns: release, the library's way of telling (relock: a pub/sub message; the peers: their
  next poll), wake-up, acquire, and the Python around them. Every thread makes its first
  acquire() as the window opens; a wait is acquire()'s duration, every acquisition a sample.
- n-locks: T threads (8), thread t on its own lock bench:n-locks:t of one shared client; pairs
  as uncontended's, pairs/s over all.

The libraries, each as its users would write it, defaults kept:
- relock-python: relock.Client(url), client.lock(name) per thread (the owner is the thread),
  acquire() / release(); waits block in C++ with the GIL released and are woken by the
  release's message. handoff's waits have no deadline, as the C++ driver's lock(stop_token);
  closing the client 3 s after the window ends any still under way (counted as cancelled).
- redis-py: redis.Redis.from_url(url).lock(name): Lock(timeout=None, sleep=0.1, blocking=True,
  thread_local=True); acquire is SET NX, release a script; a waiter polls every 0.1 s.
- pottery: Redlock(key=name, masters={redis.Redis.from_url(url)}): one master,
  auto_release_time 10 s; each call goes through a thread pool; a waiter retries after a random
  0-0.2 s sleep.
The peers have no way to stop a wait from outside: their handoff waits are bounded instead
(blocking_timeout / timeout, until 3 s after the window), which changes nothing while they run.

Server figures come from the server (CONFIG RESETSTAT before the window, INFO cpu and
commandstats after it) over a redis-py connection of the driver's own; client CPU from
getrusage(RUSAGE_SELF). Percentiles are nearest-rank over every sample, as bench/support.cpp's.
"""

import argparse
import json
import math
import resource
import sys
import threading
import time

now_ns = time.perf_counter_ns  # CLOCK_MONOTONIC, as the C++ driver's steady_clock

GRACE_S = 3.0  # as bench/handoff.cpp: waits still under way this long after the window end
HOLD_S = 0.001  # handoff: each holder keeps the lock 1 ms
# bench/support.cpp's cdf_quantiles: the distribution printed beside a pair's or handoff's p50.
CDF_QUANTILES = [0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9,
                 0.95, 0.98, 0.99, 0.995, 0.999, 1]


# ---------------------------------------------------------------- the libraries
class Lib:
    """One library: handle(name) gives a lock handle with acquire() (no deadline) and
    release(); acquire_until(handle, deadline_ns) waits at most until then (False: not taken);
    cancel() ends waits still under way where the library can; close() lets go of the
    client."""

    cancelled_errors = ()

    def acquire_until(self, handle, deadline_ns):
        raise NotImplementedError

    def cancel(self):
        pass

    def close(self):
        pass


class RelockPython(Lib):
    def __init__(self, url):
        import relock
        self.client = relock.Client(url)
        self.cancelled_errors = (relock.errors.Cancelled,)

    def handle(self, name):
        return self.client.lock(name)

    def acquire_until(self, handle, deadline_ns):
        # No deadline, as the C++ driver's lock(stop_token): cancel() (closing the client)
        # ends it if it ever outlives the grace.
        return handle.acquire()

    def cancel(self):
        self.client.close()

    def close(self):
        self.client.close()


class RedisPy(Lib):
    def __init__(self, url):
        import redis
        self.redis = redis.Redis.from_url(url)

    def handle(self, name):
        return self.redis.lock(name)  # defaults: timeout=None, sleep=0.1, blocking=True

    def acquire_until(self, handle, deadline_ns):
        return handle.acquire(blocking_timeout=max(deadline_ns - now_ns(), 0) / 1e9)

    def close(self):
        self.redis.close()


class Pottery(Lib):
    def __init__(self, url):
        import redis
        from pottery import Redlock
        self.redis = redis.Redis.from_url(url)
        self.redlock = Redlock

    def handle(self, name):
        return self.redlock(key=name, masters={self.redis})  # defaults: auto_release_time 10 s

    def acquire_until(self, handle, deadline_ns):
        return handle.acquire(timeout=max(deadline_ns - now_ns(), 0) / 1e9)

    def close(self):
        self.redis.close()


LIBS = {"relock-python": RelockPython, "redis-py": RedisPy, "pottery": Pottery}


def versions(lib):
    import importlib.metadata as md
    package = {"relock-python": "relock", "redis-py": "redis", "pottery": "pottery"}[lib]
    out = {"lib_version": md.version(package),
           "python": "%d.%d.%d" % sys.version_info[:3]}
    if lib == "pottery":
        out["redis_py_version"] = md.version("redis")
    return out


# ---------------------------------------------------------------- measuring
def percentile_us(sorted_ns, q):
    """Nearest rank in sorted nanoseconds, in microseconds; None when empty."""
    if not sorted_ns:
        return None
    rank = min(max(math.ceil(q * len(sorted_ns)), 1), len(sorted_ns))
    return sorted_ns[rank - 1] / 1000.0


def cdf_us(sorted_ns):
    if not sorted_ns:
        return None
    return [[q, percentile_us(sorted_ns, q)] for q in CDF_QUANTILES]


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


class ServerProbe:
    """What the server saw during a window, from outside the library under test."""

    def __init__(self, url):
        import redis
        self.r = redis.Redis.from_url(url)
        self.cpu0 = 0.0

    def _cpu(self):
        info = self.r.info("cpu")
        return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

    def start(self):
        self.r.config_resetstat()
        self.cpu0 = self._cpu()

    def stop(self):
        cpu = self._cpu() - self.cpu0
        calls, per_command = 0, []
        evalsha = 0
        for name, stats in self.r.info("commandstats").items():
            command = name[len("cmdstat_"):]
            if command.startswith(("info", "config")):  # the probe's own
                continue
            n = int(stats["calls"])
            calls += n
            per_command.append("%s=%d" % (command, n))
            if command == "evalsha":
                evalsha = n
        self.r.close()
        return {"cpu_seconds": cpu, "calls": calls, "evalsha": evalsha,
                "per_command": ",".join(per_command)}


def start_threads(target, n):
    """n started threads running target(t). Daemons: should the main thread fail, the process
    still ends (bench/run reports the error) instead of waiting on workers that wait for it."""
    workers = [threading.Thread(target=target, args=(t,), daemon=True) for t in range(n)]
    for w in workers:
        w.start()
    return workers


def base_line(o):
    line = {"lib": o.lib, "variant": o.variant, "scenario": o.scenario, "rep": o.rep}
    for f in ("pairs_per_s", "acq_per_s", "pair_p50_us", "pair_p99_us", "handoff_p50_us",
              "handoff_p99_us", "handoffs_per_s", "wait_p50_us", "wait_p99_us", "wait_max_us",
              "rtt_p50_us"):
        line[f] = None
    return line


def add_common(line, window_s, client_cpu_s, server, operations):
    line["window_s"] = window_s
    line["client_cpu_pct"] = 100.0 * client_cpu_s / window_s
    line["server_cpu_pct"] = 100.0 * server["cpu_seconds"] / window_s
    line["evalsha_per_op"] = server["evalsha"] / operations if operations else None
    line["server_calls_per_op"] = server["calls"] / operations if operations else None
    line["server_calls"] = server["per_command"]


def set_pairs(line, pair_ns):
    pair_ns.sort()
    line["pair_p50_us"] = percentile_us(pair_ns, 0.50)
    line["pair_cdf_us"] = cdf_us(pair_ns)
    line["pair_p99_us"] = percentile_us(pair_ns, 0.99)
    line["pair_max_us"] = percentile_us(pair_ns, 1.0)


# ---------------------------------------------------------------- scenarios
def uncontended(o, lib):
    lock = lib.handle("bench:uncontended")
    acquire, release = lock.acquire, lock.release
    for _ in range(200):  # as the C++ driver: scripts loaded, connections and caches warm
        acquire()
        release()
    probe = ServerProbe(o.probe_url or o.url)
    max_pairs = 2_000_000
    pair_ns = []
    add = pair_ns.append
    pairs = errors = 0
    probe.start()
    cpu0 = cpu_seconds()
    t0 = now_ns()
    end = t0 + int(o.seconds * 1e9)
    t = t0
    while pairs < max_pairs and t < end:
        acquire()
        try:
            release()
        except Exception:  # noqa: BLE001 - counted, as the C++ driver's unlock(ec)
            errors += 1
        after = now_ns()
        add(after - t)
        t = after
        pairs += 1
    window = (now_ns() - t0) / 1e9
    cpu = cpu_seconds() - cpu0
    server = probe.stop()
    line = base_line(o)
    line["pairs_per_s"] = pairs / window
    set_pairs(line, pair_ns)
    line.update(pairs=pairs, errors=errors)
    add_common(line, window, cpu, server, pairs)
    return line


def n_locks(o, lib):
    threads = o.threads
    max_pairs = 1_000_000
    pair_ns = [[] for _ in range(threads)]
    pairs = [0] * threads
    errors = [0] * threads
    warmed = threading.Barrier(threads + 1)
    go = threading.Event()
    window_end = [0]
    failures = []

    def worker(t):
        try:
            lock = lib.handle("bench:n-locks:%d" % t)
            acquire, release = lock.acquire, lock.release
            for _ in range(100):
                acquire()
                release()
        except Exception as e:  # noqa: BLE001 - reported after the window
            failures.append(e)
            warmed.abort()
            return
        warmed.wait()
        go.wait()
        end = window_end[0]
        add = pair_ns[t].append
        n = bad = 0
        now = now_ns()
        while n < max_pairs and now < end:
            acquire()
            try:
                release()
            except Exception:  # noqa: BLE001 - counted
                bad += 1
            after = now_ns()
            add(after - now)
            now = after
            n += 1
        pairs[t], errors[t] = n, bad

    probe = ServerProbe(o.probe_url or o.url)
    workers = start_threads(worker, threads)
    try:
        warmed.wait()
    except threading.BrokenBarrierError:
        for w in workers:
            w.join()
        raise RuntimeError("warm-up failed: %r" % failures[0])
    probe.start()
    cpu0 = cpu_seconds()
    t0 = now_ns()
    window_end[0] = t0 + int(o.seconds * 1e9)
    go.set()
    for w in workers:
        w.join()
    window = (now_ns() - t0) / 1e9
    cpu = cpu_seconds() - cpu0
    server = probe.stop()
    total = sum(pairs)
    line = base_line(o)
    line["pairs_per_s"] = total / window
    set_pairs(line, [d for per in pair_ns for d in per])
    line.update(threads=threads, pairs=total, errors=sum(errors))
    add_common(line, window, cpu, server, total)
    return line


def handoff(o, lib):
    name = "bench:handoff"
    warm = lib.handle(name)
    for _ in range(100):
        warm.acquire()
        warm.release()
    threads = o.threads
    max_acquisitions = 100_000
    m = threading.Lock()
    held_by_new_owner = threading.Condition(m)
    # Under m (Python's GIL makes no read-modify-write atomic across threads):
    state = {"generation": 0, "unlock_started": 0, "inside": 0, "last_holder": -1,
             "overlaps": 0, "self_handoffs": 0, "cancelled": 0, "errors": 0, "finished": 0}
    wait_ns = [[] for _ in range(threads)]
    handoff_ns = [[] for _ in range(threads)]
    ready = threading.Barrier(threads + 1)
    go = threading.Event()
    window_end = [0]

    def count(field):
        with m:
            state[field] += 1

    failures = []

    def worker(t):
        try:
            lock = lib.handle(name)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            failures.append(e)
            ready.abort()
            return
        release = lock.release
        waits, handoffs = wait_ns[t].append, handoff_ns[t].append
        ready.wait()
        go.wait()
        end = window_end[0]
        deadline = end + int(GRACE_S * 1e9)
        try:
            for _ in range(max_acquisitions):
                asked = now_ns()
                if asked >= end:
                    break
                try:
                    got = lib.acquire_until(lock, deadline)
                except lib.cancelled_errors:
                    got = False
                except Exception:  # noqa: BLE001 - counted
                    count("errors")
                    break
                if not got:
                    count("cancelled")
                    break
                acquired = now_ns()
                waits(acquired - asked)
                with m:
                    started, state["unlock_started"] = state["unlock_started"], 0
                    if state["inside"] != 0:
                        state["overlaps"] += 1
                    state["inside"] += 1
                    if state["last_holder"] == t:
                        state["self_handoffs"] += 1
                    state["last_holder"] = t
                    state["generation"] += 1
                    mine = state["generation"]
                    held_by_new_owner.notify_all()
                if started:
                    handoffs(acquired - started)

                time.sleep(HOLD_S)
                with m:
                    state["inside"] -= 1
                state["unlock_started"] = now_ns()  # one store: the holder alone writes it now
                try:
                    release()
                except Exception:  # noqa: BLE001 - counted
                    count("errors")
                # Wait for another thread to take it, so this one cannot take it back itself.
                with m:
                    left = (end - now_ns()) / 1e9
                    if not held_by_new_owner.wait_for(
                            lambda: state["generation"] != mine, timeout=max(left, 0)):
                        break
        finally:
            count("finished")

    probe = ServerProbe(o.probe_url or o.url)
    workers = start_threads(worker, threads)
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        raise RuntimeError("a thread's lock handle failed: %r" % failures[0])
    probe.start()
    cpu0 = cpu_seconds()
    t0 = now_ns()
    window_end[0] = t0 + int(o.seconds * 1e9)
    go.set()
    # As join_or_cancel: every worker done, or the grace over; then stop what still waits.
    deadline = window_end[0] + int(GRACE_S * 1e9)
    while state["finished"] < threads and now_ns() < deadline:
        time.sleep(0.005)
    if state["finished"] < threads:
        lib.cancel()
    for w in workers:
        w.join()
    window = (now_ns() - t0) / 1e9
    cpu = cpu_seconds() - cpu0
    server = probe.stop()

    waits = sorted(d for per in wait_ns for d in per)
    handoffs = sorted(d for per in handoff_ns for d in per)
    line = base_line(o)
    line["acq_per_s"] = len(waits) / window
    line["handoff_p50_us"] = percentile_us(handoffs, 0.50)
    line["handoff_cdf_us"] = cdf_us(handoffs)
    line["handoff_p99_us"] = percentile_us(handoffs, 0.99)
    line["handoff_max_us"] = percentile_us(handoffs, 1.0)
    line["handoffs_per_s"] = len(handoffs) / window
    line["wait_p50_us"] = percentile_us(waits, 0.50)
    line["wait_p99_us"] = percentile_us(waits, 0.99)
    line["wait_max_us"] = percentile_us(waits, 1.0)
    line.update(threads=threads, clients=1, handoffs=len(handoffs),
                cancelled=state["cancelled"], errors=state["errors"],
                overlaps=state["overlaps"], self_handoffs=state["self_handoffs"])
    add_common(line, window, cpu, server, len(waits))
    return line


SCENARIOS = {"uncontended": uncontended, "n-locks": n_locks, "handoff": handoff}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", choices=sorted(LIBS), required=True)
    ap.add_argument("--scenario", choices=sorted(SCENARIOS), required=True)
    ap.add_argument("--rep", type=int, default=1)
    ap.add_argument("--url", default="redis://127.0.0.1:6379")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--variant", default="default", help="echoed in the line")
    ap.add_argument("--probe-url", help="the server probe's redis:// URL (default --url)")
    o = ap.parse_args()
    lib = LIBS[o.lib](o.url)
    try:
        line = SCENARIOS[o.scenario](o, lib)
    finally:
        lib.close()
    line.update(versions(o.lib))
    print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
