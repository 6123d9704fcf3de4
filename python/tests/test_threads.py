# SPDX-License-Identifier: Apache-2.0
"""relock-python under threads: one shared client and lock object, each thread its own owner,
and the GIL released while a thread waits."""

from __future__ import annotations

import threading
import time


def test_eight_threads_sharing_a_client_and_a_lock_keep_a_python_counter_exact(client, name):
    threads, increments = 8, 100
    lock = client.lock(name)  # one object for all: the owner is the calling thread
    counter = 0
    inside = 0
    overlaps = []
    holders = []
    failures = []
    start = threading.Barrier(threads)

    def work(me: int) -> None:
        nonlocal counter, inside
        try:
            start.wait()
            for _ in range(increments):
                with lock:
                    inside += 1
                    if inside != 1:
                        overlaps.append(inside)
                    holders.append(me)
                    value = counter
                    time.sleep(0)  # hands the GIL over mid-update: only the lock keeps it exact
                    counter = value + 1
                    inside -= 1
        except BaseException as failure:  # noqa: BLE001 (reported by the test below)
            failures.append(failure)

    workers = [threading.Thread(target=work, args=(me,)) for me in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert not any(worker.is_alive() for worker in workers), "a thread is still running at 60 s"
    assert failures == []
    assert overlaps == []
    assert counter == threads * increments
    handovers = sum(1 for before, after in zip(holders, holders[1:]) if before != after)
    assert handovers >= threads * increments // 4  # they contended, not ran one by one
    assert not lock.locked()


def test_a_thread_waiting_in_acquire_lets_the_others_run(client, name):
    lock = client.lock(name)
    assert lock.acquire()  # held by this thread: the waiter below is another owner
    stop = threading.Event()
    stamps: list[float] = []

    def tick() -> None:
        # Pure Python, so it runs only while it has the GIL: a stamp every 1000 rounds.
        rounds = 0
        while not stop.is_set():
            rounds += 1
            if rounds % 1000 == 0:
                stamps.append(time.monotonic())

    waited: list[tuple[bool, float, float]] = []

    def wait() -> None:
        began = time.monotonic()
        got = lock.acquire(timeout=1.0)
        waited.append((got, began, time.monotonic()))

    ticker = threading.Thread(target=tick)
    waiter = threading.Thread(target=wait)
    ticker.start()
    waiter.start()
    waiter.join(10)
    stop.set()
    ticker.join(10)
    lock.release()

    [(got, began, ended)] = waited
    assert not got and 0.9 <= ended - began < 3.0
    during = [stamp for stamp in stamps if began <= stamp <= ended]
    assert during, "the ticker never ran while the other thread waited"
    gaps = [after - before for before, after in zip([began, *during], [*during, ended])]
    # Holding the GIL for the wait would stop the ticker for the whole second; Python's switch
    # interval is 5 ms, so a quarter of a second without a stamp already means it was starved
    # (the margin is for a loaded machine).
    assert max(gaps) < 0.25, f"the ticker stalled for {max(gaps):.3f} s while a thread waited"
