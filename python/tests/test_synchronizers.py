# SPDX-License-Identifier: Apache-2.0
"""Semaphores and the count-down latch, blocking and asyncio, against a real server."""

from __future__ import annotations

import asyncio
import datetime
import os
import re
import signal
import threading
import time
from typing import Any, Awaitable, Callable

import pytest
from conftest import wait_until

import relock
import relock.asyncio
from relock import errors


def in_thread(function: Callable[..., Any], *args: Any, **kwargs: Any):
    """Runs ``function`` in a new thread; returns (thread, results list)."""
    results: list = []
    thread = threading.Thread(target=lambda: results.append(function(*args, **kwargs)))
    thread.start()
    return thread, results


def subscribed(server, key: str) -> bool:
    """Whether some client listens on a channel of ``key`` (a waiter's wait has begun)."""
    return any(key in channel for channel in server.command("PUBSUB", "CHANNELS"))


class Interrupted(Exception):
    """What the test's SIGINT handler raises: Ctrl-C's KeyboardInterrupt, without pytest's."""


def interrupt_when(condition: Callable[[], bool], call: Callable[[], Any]) -> None:
    """Runs ``call`` on this (the main) thread and sends SIGINT once ``condition`` holds; the
    call must end with Interrupted."""
    def raise_interrupted(signum: int, frame: Any) -> None:
        raise Interrupted()

    previous = signal.signal(signal.SIGINT, raise_interrupted)
    try:
        def send() -> None:
            wait_until(condition, what="the wait to begin")
            os.kill(os.getpid(), signal.SIGINT)

        sender = threading.Thread(target=send)
        try:
            with pytest.raises(Interrupted):
                sender.start()  # in the block: a signal sent at once still lands in it
                call()
        finally:
            sender.join(10)
    finally:
        signal.signal(signal.SIGINT, previous)


async def eventually(condition: Callable[[], Awaitable[bool]], seconds: float = 10.0,
                     what: str = "the condition") -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not hold within {seconds} s")
        await asyncio.sleep(0.01)


# ---- Semaphore ----

def test_a_semaphore_counts_its_permits(client, name):
    sem = client.semaphore(name)
    assert sem.name == name and sem.key == name and name in repr(sem)
    assert sem.available_permits() == 0
    assert sem.try_set_permits(3)
    assert not sem.try_set_permits(5)  # set already
    assert sem.acquire(2)
    assert sem.available_permits() == 1
    assert not sem.acquire(2, blocking=False)
    assert not sem.acquire(2, timeout=datetime.timedelta(milliseconds=50))
    assert sem.acquire(timeout=0)  # one attempt, which finds the last permit
    sem.release(3)
    with sem as same:
        assert same is sem and sem.available_permits() == 2
    assert sem.drain_permits() == 3
    sem.add_permits(2)
    sem.add_permits(-1)
    assert sem.available_permits() == 1


def test_a_semaphore_that_was_never_set_is_not_initialized(client, name):
    with pytest.raises(errors.NotInitialized):
        client.semaphore(name).acquire(timeout=0.1)


def test_a_release_wakes_a_semaphore_waiter_in_another_thread(client, server, name):
    sem = client.semaphore(name)
    sem.try_set_permits(0)
    thread, got = in_thread(sem.acquire, 2, timeout=30)
    wait_until(lambda: subscribed(server, sem.key), what="the waiter's subscription")
    released = time.monotonic()
    sem.release(2)
    thread.join(10)
    assert got == [True]
    assert time.monotonic() - released < 5  # woken by the release's message, not its deadline
    assert sem.available_permits() == 0


def test_ctrl_c_stops_a_semaphore_wait_and_takes_nothing(client, server, name):
    sem = client.semaphore(name)
    sem.try_set_permits(0)
    interrupt_when(lambda: subscribed(server, sem.key), sem.acquire)
    # The interrupted call returned once its wait had ended: a permit now stays free.
    sem.release()
    assert sem.available_permits() == 1


def test_a_semaphore_refuses_bad_input_before_any_io(client, server, name):
    sem = client.semaphore(name)
    for bad in (0, -1, 2**31, 2**70, 1.5, True, "1"):
        with pytest.raises(errors.InvalidArgument):
            sem.acquire(bad)
        with pytest.raises(errors.InvalidArgument):
            sem.release(bad)
    for bad in (-1, 2**31, 2.0):
        with pytest.raises(errors.InvalidArgument):
            sem.try_set_permits(bad)
    with pytest.raises(errors.InvalidArgument):
        sem.add_permits(-(2**31))
    with pytest.raises(errors.InvalidArgument):
        sem.acquire(timeout=-2)
    with pytest.raises(errors.InvalidArgument):
        sem.acquire(blocking=False, timeout=1)
    with pytest.raises(errors.InvalidArgument):
        client.semaphore("")
    assert server.command("EXISTS", name) == 0


def test_a_name_of_another_type_is_wrong_type_for_a_semaphore(client, server, name):
    server.command("SET", name, "not a count")
    with pytest.raises(errors.WrongType):
        client.semaphore(name).acquire(timeout=0.1)
    assert server.command("GET", name) == "not a count"


# ---- PermitExpirableSemaphore ----

def test_permits_have_ids_and_go_back_with_their_block(client, name):
    sem = client.permit_expirable_semaphore(name)
    assert sem.try_set_permits(2) and sem.name == name
    first = sem.acquire(lease=10)
    assert re.fullmatch(r"[0-9a-f]{32}", first.id) and first.semaphore is sem
    with sem.acquire() as second:
        assert isinstance(second, relock._synchronizers.Permit) and second.id != first.id
        assert sem.acquired_permits() == 2 and sem.available_permits() == 0
        assert sem.acquire(blocking=False) is None
        assert sem.acquire(timeout=0.05) is None
    assert second.released and sem.acquired_permits() == 1
    first.release()
    with pytest.raises(errors.NotOwner):
        first.release()  # this object gave it back already
    with pytest.raises(errors.NotOwner):
        sem.release(first.id)  # nobody holds it
    assert not sem.try_release(first)
    assert sem.available_permits() == 2


def test_a_permit_lease_runs_out_and_can_be_changed(client, name):
    sem = client.permit_expirable_semaphore(name)
    sem.try_set_permits(1)
    permit = sem.acquire(lease=0.1)
    wait_until(lambda: sem.acquired_permits() == 0, seconds=5, what="the lease's end")
    assert sem.available_permits() == 1
    with pytest.raises(errors.LockLost):
        permit.release()
    permit = sem.acquire()  # renewed by the watchdog
    assert permit.update_lease(0.1)  # from now on it ends
    wait_until(lambda: sem.acquired_permits() == 0, seconds=5, what="the new lease's end")
    assert not sem.update_lease(permit, 1) and not sem.try_release(permit)


def test_permit_counts_are_set_and_added(client, name):
    sem = client.permit_expirable_semaphore(name)
    sem.set_permits(3)
    permit = sem.acquire()
    sem.set_permits(5)  # available + acquired
    assert sem.available_permits() == 4 and sem.acquired_permits() == 1
    sem.add_permits(-2)
    assert sem.available_permits() == 2
    assert not sem.try_set_permits(7)
    sem.release(permit.id)  # by id, as another process would
    assert sem.available_permits() == 3


def test_a_release_wakes_a_permit_waiter_in_another_thread(client, server, name):
    sem = client.permit_expirable_semaphore(name)
    sem.try_set_permits(1)
    held = sem.acquire()
    thread, got = in_thread(sem.acquire, timeout=30)
    wait_until(lambda: subscribed(server, sem.key), what="the waiter's subscription")
    held.release()
    thread.join(10)
    assert len(got) == 1 and got[0] is not None and got[0].id != held.id
    assert sem.acquired_permits() == 1
    got[0].release()


def test_ctrl_c_stops_a_permit_wait_and_takes_nothing(client, server, name):
    sem = client.permit_expirable_semaphore(name)
    sem.try_set_permits(0)
    interrupt_when(lambda: subscribed(server, sem.key), sem.acquire)
    sem.add_permits(1)
    assert sem.available_permits() == 1 and sem.acquired_permits() == 0


def test_a_permit_semaphore_refuses_bad_input(client, server, name):
    sem = client.permit_expirable_semaphore(name)
    with pytest.raises(errors.InvalidArgument):
        sem.acquire(lease=0)  # refused by the core before any I/O
    with pytest.raises(errors.InvalidArgument):
        sem.acquire(lease=-1)
    with pytest.raises(errors.InvalidArgument):
        sem.acquire(timeout=float("nan"))
    for bad_id in ("not hex", "ab" * 15, 42):
        with pytest.raises(errors.InvalidArgument):
            sem.release(bad_id)
    with pytest.raises(errors.InvalidArgument):
        sem.update_lease("0" * 32, None)
    with pytest.raises(errors.InvalidArgument):
        sem.set_permits(-1)
    with pytest.raises(errors.InvalidArgument):
        sem.add_permits(2**40)
    assert server.command("EXISTS", name) == 0
    with pytest.raises(errors.NotInitialized):
        sem.acquire(timeout=0.05)


# ---- CountDownLatch ----

def test_a_latch_opens_when_counted_down(client, server, name):
    latch = client.count_down_latch(name)
    assert latch.name == name and latch.wait(0)  # a name that holds nothing is open
    assert latch.try_set_count(2)
    assert not latch.try_set_count(3)
    assert latch.count() == 2 and server.command("GET", name) == "2"  # Redisson's data
    assert not latch.wait(0)
    assert not latch.wait(datetime.timedelta(milliseconds=50))
    latch.count_down()
    assert latch.count() == 1
    latch.count_down()
    assert latch.count() == 0 and latch.wait()
    latch.count_down()  # nothing on an open latch
    assert not latch.delete()
    assert latch.try_set_count(1) and latch.delete() and latch.wait(0)


def test_a_count_down_opens_waiters_in_every_thread(client, server, name):
    latch = client.count_down_latch(name)
    latch.try_set_count(1)
    waiters = [in_thread(client.count_down_latch(name).wait, 30) for _ in range(3)]
    wait_until(lambda: subscribed(server, name), what="the waiters' subscription")
    opened = time.monotonic()
    latch.count_down()
    for thread, got in waiters:
        thread.join(10)
        assert got == [True]
    assert time.monotonic() - opened < 5


def test_ctrl_c_stops_a_latch_wait(client, server, name):
    latch = client.count_down_latch(name)
    latch.try_set_count(1)
    interrupt_when(lambda: subscribed(server, name), latch.wait)
    assert latch.count() == 1


def test_a_latch_refuses_bad_input(client, server, name):
    latch = client.count_down_latch(name)
    for bad in (0, -1, 2**31, 1.0, None):
        with pytest.raises(errors.InvalidArgument):
            latch.try_set_count(bad)
    with pytest.raises(errors.InvalidArgument):
        latch.wait(-1)
    assert server.command("EXISTS", name) == 0


# ---- asyncio ----

def test_asyncio_semaphore_acquires_and_releases(url, name):
    async def main() -> None:
        async with relock.asyncio.Client(url) as client:
            sem = client.semaphore(name)
            assert sem.name == name and sem.key == name
            assert await sem.try_set_permits(2)
            assert await sem.acquire(2)
            assert not await sem.try_acquire()
            assert not await sem.acquire(timeout=0.05)
            waiter = asyncio.create_task(sem.acquire(timeout=30))
            await sem.release(2)
            assert await waiter
            async with sem:
                assert await sem.available_permits() == 0
            assert await sem.available_permits() == 1
            assert await sem.drain_permits() == 1
            await sem.add_permits(3)
            assert await sem.available_permits() == 3
            with pytest.raises(errors.InvalidArgument):
                await sem.acquire(0)
            with pytest.raises(errors.InvalidArgument):
                await sem.release(2**31)

    asyncio.run(main())


def test_asyncio_cancellation_leaves_no_permit_taken(url, name):
    async def main() -> None:
        async with relock.asyncio.Client(url) as client:
            # A waiter cancelled in its wait: the permit released next is still free.
            sem = client.semaphore(name)
            await sem.try_set_permits(0)
            waiter = asyncio.create_task(sem.acquire())
            await asyncio.sleep(0)  # the task runs to its wait
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            await sem.release()
            assert await client.semaphore(name).acquire(timeout=10)
            # Cancelled as the release comes: whatever the waiter got in that instant goes back.
            sems = [client.semaphore(f"{name}:{i}") for i in range(10)]
            kept = []
            for sem in sems:
                await sem.try_set_permits(0)
                waiter = asyncio.create_task(sem.acquire())
                await asyncio.sleep(0)
                await sem.release()
                waiter.cancel()
                try:
                    kept.append(await waiter)  # done before the cancel: the permit is its own
                except asyncio.CancelledError:
                    kept.append(False)
            for sem, got in zip(sems, kept):
                if got:
                    await sem.release()
                await eventually(lambda: _is(sem.available_permits(), 1), what="the permit back")

    asyncio.run(main())


async def _is(value: Awaitable[Any], expected: Any) -> bool:
    return await value == expected


def test_asyncio_permits_and_their_cancellation(url, name):
    async def main() -> None:
        async with relock.asyncio.Client(url) as client:
            sem = client.permit_expirable_semaphore(name)
            assert await sem.try_set_permits(1)
            async with await sem.acquire(lease=10) as permit:
                assert re.fullmatch(r"[0-9a-f]{32}", permit.id)
                assert await sem.acquired_permits() == 1
                assert await sem.try_acquire() is None
                assert await sem.acquire(timeout=0.05) is None
                assert await permit.update_lease(20)
            assert permit.released and await sem.available_permits() == 1
            other = await sem.acquire()
            with pytest.raises(errors.NotOwner):
                await sem.release("0" * 32)
            assert await sem.try_release(other) and not await sem.try_release(other)
            # Cancelled waiters, in their wait and as the permit comes back.
            for _ in range(10):
                held = await sem.acquire()
                waiter = asyncio.create_task(sem.acquire())
                await asyncio.sleep(0)
                await held.release()
                waiter.cancel()
                try:
                    got = await waiter
                    await got.release()
                except asyncio.CancelledError:
                    pass
                await eventually(lambda: _is(sem.acquired_permits(), 0), what="no permit held")
            assert await sem.available_permits() == 1
            await sem.set_permits(3)
            await sem.add_permits(-1)
            assert await sem.available_permits() == 2

    asyncio.run(main())


def test_asyncio_latch_opens_waiting_tasks(url, name):
    async def main() -> None:
        async with relock.asyncio.Client(url) as client:
            latch = client.count_down_latch(name)
            assert await latch.try_set_count(2)
            assert await latch.count() == 2 and not await latch.wait(0.05)
            waiters = [asyncio.create_task(client.count_down_latch(name).wait(30))
                       for _ in range(3)]
            cancelled = asyncio.create_task(latch.wait())
            await asyncio.sleep(0)
            cancelled.cancel()
            await latch.count_down()
            await latch.count_down()
            assert await asyncio.gather(*waiters) == [True, True, True]
            with pytest.raises(asyncio.CancelledError):
                await cancelled
            assert await latch.count() == 0 and not await latch.delete()
            with pytest.raises(errors.InvalidArgument):
                await latch.try_set_count(0)

    asyncio.run(main())
