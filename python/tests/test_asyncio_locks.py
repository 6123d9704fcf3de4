# SPDX-License-Identifier: Apache-2.0
"""The lock kinds from asyncio code: a task is an owner; a cancelled task holds nothing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import relock
import relock.asyncio as aio
from relock import errors


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


async def eventually(condition, seconds: float = 10.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not hold within {seconds} s")
        await asyncio.sleep(0.01)


def test_async_with_holds_for_the_block_and_each_task_is_an_owner(url, name):
    async def main():
        async with aio.Client(url) as client:
            lock = client.lock(name)
            async with lock as same:
                assert same is lock
                assert await lock.hold_count() == 1
                assert await lock.acquire(timeout=0.1)  # the same task again: reentrant
                await lock.release()

                async def other_task():
                    return await client.lock(name).acquire(timeout=0.1)

                assert not await asyncio.create_task(other_task())
            assert not await lock.locked()

    run(main())


def test_a_waiting_task_is_woken_by_the_release_while_the_loop_runs_on(url, name):
    async def main():
        async with aio.Client(url) as client:
            lock = client.lock(name)
            await lock.acquire()
            waiter = asyncio.create_task(client.lock(name).acquire(timeout=30))
            ticks = 0
            for _ in range(10):  # the loop is free while the task waits
                await asyncio.sleep(0.01)
                ticks += 1
            assert ticks == 10 and not waiter.done()
            released = time.monotonic()
            await lock.release()
            assert await waiter
            assert time.monotonic() - released < 5

    run(main())


def test_a_timeout_that_runs_out_answers_false(url, name):
    async def main():
        async with aio.Client(url) as client:
            await client.lock(name).acquire()
            started = time.monotonic()
            got = await asyncio.create_task(client.lock(name).acquire(timeout=0.2))
            assert got is False and time.monotonic() - started >= 0.19
            assert not await asyncio.create_task(client.lock(name).try_acquire())

    run(main())


def test_a_cancelled_waiter_leaves_no_hold_and_no_waiter(url, client, name):
    holder, holder_owner = client.fair_lock(name), relock.Owner()
    holder.acquire(owner=holder_owner)

    async def main():
        async with aio.Client(url) as async_client:
            lock = async_client.fair_lock(name)
            owner = relock.Owner()
            waiter = asyncio.create_task(lock.acquire(owner=owner))
            await eventually(lambda: asyncio.to_thread(
                lambda: len(client.inspect(name).waiters) == 1), what="the waiter queued")
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            await asyncio.to_thread(holder.release, owner=holder_owner)
            await eventually(lambda: asyncio.to_thread(lambda: not client.inspect(name).waiters),
                             what="the queue emptied")
            assert not await lock.held(owner=owner)
            assert await asyncio.create_task(lock.acquire(timeout=5))

    run(main())


def test_a_cancel_in_the_instant_of_the_grant_gives_the_hold_back(url, name):
    # Many tries at cancelling just as the lock is granted: whichever way each one ends, the
    # cancelled task never keeps a hold.
    async def free(lock):
        return not await lock.locked()

    async def main():
        async with aio.Client(url) as client:
            for attempt in range(30):
                owner = relock.Owner()
                lock = client.lock(f"{name}:{attempt}")
                task = asyncio.create_task(lock.acquire(owner=owner))
                await asyncio.sleep(attempt * 0.0002)
                task.cancel()
                try:
                    await task
                    await lock.release(owner=owner)  # it won before the cancel
                except asyncio.CancelledError:
                    await eventually(lambda: free(lock), what="the hold given back")

    run(main())


def test_fenced_tokens_read_write_and_lock_sets_under_asyncio(url, name):
    async def main():
        async with aio.Client(url) as client:
            fenced = client.fenced_lock(name + ":f")
            async with fenced as token:
                assert token == await fenced.fence()
            assert await fenced.acquire_token() > token
            await fenced.release()

            rw = client.read_write_lock(name + ":rw")
            async with rw.read:
                writer = asyncio.create_task(rw.write.acquire(timeout=0.1))
                assert not await writer

            multi = aio.MultiLock(client.lock(name + ":a"), client.lock(name + ":b"))
            async with multi:
                assert await client.lock(name + ":a").locked()
            assert not await client.lock(name + ":b").locked()

    run(main())


def test_a_task_may_name_its_owner_and_outside_a_task_it_must(url, name):
    async def main():
        async with aio.Client(url) as client:
            owner = relock.Owner()
            lock = client.lock(name)
            await lock.acquire(owner=owner)
            assert await lock.held(owner=owner) and not await lock.held()
            await lock.release(owner=owner)

    run(main())
    with relock.Client(url) as blocking:
        with pytest.raises(RuntimeError):
            aio.Lock(blocking.lock(name)).owner_field()  # no running task


def test_errors_arrive_as_relock_errors(url, server, name):
    server.command("SET", name, "not a lock")

    async def main():
        async with aio.Client(url) as client:
            with pytest.raises(errors.WrongType):
                await client.lock(name).acquire(timeout=0.1)
            with pytest.raises(errors.NotOwner):
                await client.lock(name + ":free").release()
            with pytest.raises(errors.InvalidArgument):
                await client.lock(name).acquire(timeout=-1)

    run(main())


def test_a_loop_in_another_thread_and_blocking_code_share_one_client(client, name):
    # The asyncio twin wraps the same core: a blocking thread and a loop contend fairly.
    lock = client.lock(name)
    lock.acquire()
    result: list = []

    def loop_thread():
        async def main():
            return await aio.Lock(client.lock(name)).acquire(timeout=10)
        result.append(asyncio.run(main()))

    thread = threading.Thread(target=loop_thread)
    thread.start()
    time.sleep(0.05)
    lock.release()
    thread.join(10)
    assert result == [True]
