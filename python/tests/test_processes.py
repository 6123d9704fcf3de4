# SPDX-License-Identifier: Apache-2.0
"""relock-python across processes: a holder killed with SIGKILL (its watchdog dies with it, the
lease ends the hold) and a waiter stopped by Ctrl-C (nothing left behind)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import Server, wait_until

import relock

WORKER = Path(__file__).resolve().parent / "helpers" / "relock_worker.py"


class Worker:
    """helpers/relock_worker.py in a process of its own, on this interpreter and environment;
    its JSON lines arrive on a queue. Closing its stdin ends it."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, str(WORKER), *args],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))

    def expect(self, event: str, seconds: float = 10.0) -> dict[str, Any]:
        try:
            got = self._lines.get(timeout=seconds)
        except queue.Empty:
            pytest.fail(f"the worker said nothing within {seconds} s (exit {self.process.poll()})")
        assert got["event"] == event, got
        return got

    def kill(self, how: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            self.process.send_signal(how)
        self.process.wait(10)

    def finish(self) -> int:
        """Closes stdin (the worker then exits) and answers its exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(10)


@pytest.fixture
def workers():
    started: list[Worker] = []

    def start(*args: str) -> Worker:
        started.append(Worker(*args))
        return started[-1]

    yield start
    for worker in started:
        worker.kill()


def expires_after_the_kill(server: Server, name: str, field: str, worker: Worker,
                           lease: float) -> None:
    """SIGKILLs the holder and checks that the hold outlives it until the lease it had left
    (nothing released it), and not much longer: free within 2 x lease."""
    pttl_ms = server.command("PTTL", name)
    read_at = time.monotonic()
    worker.kill()
    killed = time.monotonic()
    assert server.command("HGET", name, field) == "1"  # dead, yet held: only the lease ends it
    wait_until(lambda: server.command("EXISTS", name) == 0, 2 * lease,
               "the dead holder's lock to expire")
    freed = time.monotonic()
    assert freed - read_at >= pttl_ms / 1000 - 0.05  # Redis never expires a key early
    assert freed - killed <= 2 * lease


def test_a_killed_holders_watchdog_stops_and_its_lock_expires_within_a_lease(
        server, client, name, workers):
    lease = 1.0
    worker = workers("hold", server.url, name, "--watchdog-lease", str(lease))
    field = worker.expect("held")["field"]
    # Alive, it keeps the lock across several leases: the watchdog renews it (PTTL climbs back).
    pttls = []
    observed_until = time.monotonic() + 3 * lease
    while time.monotonic() < observed_until:
        assert server.command("HGET", name, field) == "1"
        pttls.append(server.command("PTTL", name))
        assert 0 < pttls[-1] <= lease * 1000
        time.sleep(0.05)
    renewals = sum(1 for before, after in zip(pttls, pttls[1:]) if after > before)
    assert renewals >= 4, pttls  # every lease / 3: ~9 in 3 leases
    assert not client.lock(name).acquire(blocking=False)

    expires_after_the_kill(server, name, field, worker, lease)
    lock = client.lock(name)
    assert lock.acquire(blocking=False)
    lock.release()


def test_a_killed_holders_explicit_lease_runs_its_course(server, client, name, workers):
    lease = 1.5
    # The watchdog's lease (0.5 s) is shorter: the hold must last the explicit lease anyway.
    worker = workers("hold", server.url, name, "--watchdog-lease", "0.5", "--lease", str(lease))
    field = worker.expect("held")["field"]
    first = server.command("PTTL", name)
    assert 1000 < first <= lease * 1000
    # Never renewed while its process lives.
    pttls = [first]
    wait_until(lambda: pttls.append(server.command("PTTL", name)) or pttls[-1] < first - 300,
               2 * lease, "the explicit lease to run down")
    assert pttls == sorted(pttls, reverse=True), pttls

    expires_after_the_kill(server, name, field, worker, lease)
    lock = client.lock(name)
    assert lock.acquire(blocking=False)
    lock.release()


def subscribers(server: Server, channel: str) -> int:
    return server.command("PUBSUB", "NUMSUB", channel)[1]


@pytest.mark.parametrize("kind", ["lock", "fair"])
def test_ctrl_c_ends_a_blocked_acquire_at_once_and_leaves_nothing_behind(
        server, client, url, name, workers, kind):
    make = client.fair_lock if kind == "fair" else client.lock
    mine = make(name)
    assert mine.acquire()
    channel = f"redisson_lock__channel:{{{name}}}"
    listening = subscribers(server, channel)
    worker = workers("wait", url, name, "--kind", kind)
    field = worker.expect("waiting")["field"]
    # Really waiting in Redis, not just about to: queued (a fair lock's waiter listens on a
    # channel of its own), or subscribed to the lock's channel.
    if kind == "lock":
        wait_until(lambda: subscribers(server, channel) > listening, 10, "the worker to subscribe")
    else:
        wait_until(lambda: [w.owner for w in client.inspect(name).waiters] == [field], 10,
                   "the worker to queue")

    sent = time.monotonic_ns()
    worker.process.send_signal(signal.SIGINT)
    stopped = worker.expect("interrupted", 5)
    assert (stopped["at_ns"] - sent) / 1e9 < 1.0  # one clock: CLOCK_MONOTONIC, system-wide
    assert not stopped["held"] and stopped["hold_count"] == 0

    # The worker's client is still open, so anything its wait left would still be there.
    info = client.inspect(name)
    assert info.holders == [relock.Holder(owner=mine.owner_field(), holds=1, side="exclusive")]
    assert info.waiters == []
    mine.release()
    with relock.Client(url) as third:
        theirs = (third.fair_lock if kind == "fair" else third.lock)(name)
        assert theirs.acquire(blocking=False)  # at once: no queued ghost, no late acquire
        assert [h.owner for h in client.inspect(name).holders] == [theirs.owner_field()]
        theirs.release()
    assert server.command("EXISTS", name) == 0
    assert worker.finish() == 0


def test_a_process_exits_cleanly_while_daemon_threads_wait_in_acquire(server, workers):
    # The exit's atexit close ends the daemon threads' waits while the interpreter finalizes;
    # a thread that comes back for the GIL too late must not take the process down with it
    # (CPython 3.11-3.13 end such a thread with pthread_exit, which aborts in a C++ destructor).
    # The race is lost now and then, so several processes try at once.
    names = [f"py:exit-waiting:{uuid.uuid4().hex[:8]}" for _ in range(6)]
    exiting = []
    for name in names:
        exiting.append(workers("exit", server.url, name, "4"))
    for worker, name in zip(exiting, names):
        worker.expect("waiting")
        wait_until(lambda: subscribers(server, f"redisson_lock__channel:{{{name}}}") > 0, 10,
                   "the daemon threads to wait")
    for worker in exiting:
        assert worker.process.stdin is not None
        worker.process.stdin.close()
    statuses = [worker.process.wait(20) for worker in exiting]
    server.command("DEL", *names)  # the holds the exits left (a 30 s watchdog lease)
    assert statuses == [0] * len(exiting), (
        f"exit statuses {statuses}: -6 is SIGABRT ('terminate called without an active "
        f"exception')")


def test_a_forked_child_is_refused_its_parents_client_and_makes_its_own(client, url, name):
    # The parent's I/O thread is not in the child: its handles refuse at once there (instead of
    # waiting for ever); a client made in the child works. The child reports by exit status.
    lock = client.lock(name)
    child = os.fork()
    if child == 0:
        status = 1
        try:
            try:
                lock.acquire(timeout=2)
            except relock.errors.WouldDeadlock:
                try:
                    client.lock(name)
                except relock.errors.WouldDeadlock:
                    with relock.Client(url) as own:
                        if own.lock(name).acquire(timeout=2):
                            own.lock(name).release()
                            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(child, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    # The parent's client was left alone by the child: it still works.
    with lock:
        assert lock.held()
