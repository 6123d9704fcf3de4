# SPDX-License-Identifier: Apache-2.0
"""The blocking and delayed queues, blocking and asyncio, against a real server."""

from __future__ import annotations

import asyncio
import datetime
import time

import pytest
from conftest import wait_until
from test_synchronizers import eventually, in_thread, interrupt_when

import relock
import relock.asyncio
from relock import errors


def taking(server) -> bool:
    """Whether some client is blocked in BLPOP (a take's wait has begun)."""
    return "cmd=blpop" in server.command("CLIENT", "LIST")


def test_a_queue_is_a_redis_list_of_bytes(client, server, name):
    queue = client.blocking_queue(name)
    assert queue.name == name and queue.key == name and name in repr(queue)
    assert queue.offer(b"\x00\xff")
    assert queue.offer("héllo")  # a str goes in as its UTF-8
    queue.put(bytearray(b"third"))
    assert server.command("LLEN", name) == 3 and server.command("LINDEX", name, 1) == "héllo"
    assert queue.size() == 3
    assert queue.peek() == b"\x00\xff" and queue.size() == 3
    assert queue.poll() == b"\x00\xff"
    assert queue.take() == "héllo".encode()
    assert queue.remove(memoryview(b"third")) and not queue.remove("third")
    assert queue.poll() is None and queue.peek() is None
    assert queue.poll(0.05) is None and queue.poll(datetime.timedelta(0)) is None
    queue.offer(b"")
    assert queue.take() == b""  # an empty value is an element too
    queue.offer("x")
    assert queue.clear() and not queue.clear() and queue.size() == 0


def test_an_offer_wakes_a_taker_in_another_thread(client, server, name):
    queue = client.blocking_queue(name)
    takers = [in_thread(client.blocking_queue(name).take) for _ in range(2)]
    poller = in_thread(queue.poll, 30)
    wait_until(lambda: server.command("CLIENT", "LIST").count("cmd=blpop") >= 3,
               what="three blocked takes")
    offered = time.monotonic()
    for value in (b"a", b"b", b"c"):
        queue.offer(value)
    got = []
    for thread, results in [*takers, poller]:
        thread.join(10)
        got += results
    assert sorted(got) == [b"a", b"b", b"c"]  # each element to exactly one taker
    assert time.monotonic() - offered < 5 and queue.size() == 0


def test_ctrl_c_stops_a_take_and_takes_nothing(client, server, name):
    queue = client.blocking_queue(name)
    interrupt_when(lambda: taking(server), queue.take)
    queue.offer(b"after")
    assert queue.poll(5) == b"after"  # the stopped take is not there to steal it
    interrupt_when(lambda: taking(server), lambda: queue.poll(30))
    queue.offer(b"again")
    assert queue.size() == 1 and queue.poll() == b"again"


def test_a_queue_refuses_bad_input_before_any_io(client, server, name):
    queue = client.blocking_queue(name)
    for bad in (42, None, ["a"], "\ud800"):
        with pytest.raises(errors.InvalidArgument):
            queue.offer(bad)
    with pytest.raises(errors.InvalidArgument):
        queue.offer(b"x" * (16 * 1024 * 1024 + 1))  # over config::max_value_size
    with pytest.raises(errors.InvalidArgument):
        queue.poll(-1)
    with pytest.raises(errors.InvalidArgument):
        queue.poll(float("inf"))
    with pytest.raises(errors.InvalidArgument):
        client.blocking_queue("")
    assert server.command("EXISTS", name) == 0
    server.command("SET", name, "not a list")
    with pytest.raises(errors.WrongType):
        queue.offer(b"x")
    with pytest.raises(errors.WrongType):
        queue.poll(0.05)
    assert server.command("GET", name) == "not a list"


def test_a_delayed_queue_delivers_when_due(client, name):
    delayed = client.delayed_queue(name)
    queue = client.blocking_queue(name)
    assert delayed.destination == name and name in repr(delayed)
    delayed.offer(b"later", 60)
    delayed.offer("soon", datetime.timedelta(milliseconds=100))
    assert delayed.size() == 2 and delayed.contains(b"later") and delayed.contains("soon")
    assert queue.poll() is None  # not due yet
    assert queue.poll(10) == b"soon"
    assert delayed.size() == 1 and not delayed.contains("soon")
    assert delayed.remove("later") and not delayed.remove("later")
    delayed.offer(b"x", 60)
    delayed.clear()
    assert delayed.size() == 0
    delayed.offer(b"now", 0)
    assert queue.take() == b"now"
    delayed.destroy()


def test_a_delayed_queue_refuses_bad_input(client, name):
    delayed = client.delayed_queue(name)
    for bad_delay in (-1, None, "1", float("nan"), 1e12):
        with pytest.raises(errors.InvalidArgument):
            delayed.offer(b"x", bad_delay)
    with pytest.raises(errors.InvalidArgument):
        delayed.offer(3, 0)
    assert delayed.size() == 0


def test_asyncio_queues(url, name):
    async def main() -> None:
        async with relock.asyncio.Client(url) as client:
            queue = client.blocking_queue(name)
            assert queue.name == name and queue.key == name
            taker = asyncio.create_task(queue.take())
            assert await queue.offer("one")
            await queue.put(b"two")
            assert await taker == b"one"  # the only taker gets the head
            assert await queue.size() == 1 and await queue.peek() == b"two"
            assert await queue.poll() == b"two" and await queue.poll() is None
            assert await queue.poll(0.05) is None
            await queue.offer(b"")
            assert await queue.poll(1) == b""
            await queue.offer(b"x")
            assert await queue.remove("x") and not await queue.clear()
            delayed = client.delayed_queue(name)
            assert delayed.destination == name
            await delayed.offer(b"later", 60)
            await delayed.offer("due", 0.05)
            assert await delayed.size() == 2 and await delayed.contains("later")
            assert await queue.poll(10) == b"due"
            assert await delayed.remove(b"later") and await delayed.size() == 0
            await delayed.offer(b"y", 60)
            await delayed.clear()
            assert not await delayed.contains(b"y")
            await delayed.destroy()
            with pytest.raises(errors.InvalidArgument):
                await queue.offer(1.5)
            with pytest.raises(errors.InvalidArgument):
                await delayed.offer(b"z", -1)

    asyncio.run(main())


def test_asyncio_cancelled_takes_lose_no_element(url, server, name):
    async def main() -> None:
        async with relock.asyncio.Client(url) as client:
            # Cancelled in its wait: the next element goes to the next taker.
            queue = client.blocking_queue(name)
            taker = asyncio.create_task(queue.take())
            await eventually(lambda: _blocked(server), what="the take's BLPOP")
            taker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await taker
            await queue.offer(b"kept")
            assert await queue.poll(5) == b"kept"
            # Cancelled as the element comes: it is the taker's, or it is back in the queue.
            queues = [client.blocking_queue(f"{name}:{i}") for i in range(10)]
            for i, q in enumerate(queues):
                taker = asyncio.create_task(q.take() if i % 2 else q.poll(30))
                await asyncio.sleep(0)
                await q.offer(b"")  # an empty element must come back too
                taker.cancel()
                try:
                    got = await taker
                    assert got == b""
                    expected = 0
                except asyncio.CancelledError:
                    expected = 1
                await eventually(lambda: _size_is(q, expected), what="the element back")

    asyncio.run(main())


async def _blocked(server) -> bool:
    return taking(server)


async def _size_is(queue, expected: int) -> bool:
    return await queue.size() == expected
