# SPDX-License-Identifier: Apache-2.0
"""The blocking and delayed queues for asyncio: offers, polls and takes awaited through the
core's async operations, the one-round-trip calls in the loop's default executor.

A task cancelled while it takes gets nothing, and loses nothing: the core puts back an element
the server handed it after the cancel; one that arrived in the same instant is offered back
(at the tail: relock's API has no push to the head)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from . import _queues
from ._aio import ignore, in_executor as _in_executor, operation
from ._durations import Duration, seconds
from ._queues import Value, delay_of, value_of
from .errors import Error
from ._process import ProcessBound

_Done = Callable[[Any, Any], None]


def _boxed(done: _Done) -> _Done:
    """An element as a 1-tuple: _aio.operation gives back only a truthy result, and b"" is an
    element too."""
    return lambda error, value: done(error, None if value is None else (value,))


class BlockingQueue(ProcessBound):
    """relock.BlockingQueue for asyncio."""

    def __init__(self, blocking: _queues.BlockingQueue) -> None:
        self._blocking = blocking
        self._bind(blocking._impl)

    @property
    def name(self) -> str:
        return self._blocking.name

    @property
    def key(self) -> str:
        return self._blocking.key

    def _put_back(self, box: tuple[bytes]) -> None:
        self._impl.offer_async(box[0], ignore)

    async def offer(self, value: Value) -> bool:
        data = value_of(value)
        await operation(lambda done: self._impl.offer_async(data, done))
        return True  # unbounded: every value is taken

    async def put(self, value: Value) -> None:
        if not await self.offer(value):
            raise Error(f"queue {self.name!r} refused the value")

    async def poll(self, timeout: Duration | None = None) -> bytes | None:
        """The head, removed; None when empty (``timeout`` None: no wait) or still empty after
        ``timeout``."""
        wait = seconds(timeout, "timeout")
        box = await operation(lambda done: self._impl.poll_async(wait, _boxed(done)),
                              self._put_back)
        return None if box is None else box[0]

    async def take(self) -> bytes:
        """The head, removed, waiting as long as it takes."""
        box = await operation(lambda done: self._impl.take_async(_boxed(done)), self._put_back)
        return box[0]

    async def size(self) -> int:
        return await _in_executor(self._impl.size)

    async def peek(self) -> bytes | None:
        return await _in_executor(self._impl.peek)

    async def remove(self, value: Value) -> bool:
        return await _in_executor(self._impl.remove, value_of(value))

    async def clear(self) -> bool:
        return await _in_executor(self._impl.clear)

    def __repr__(self) -> str:
        return f"<relock.asyncio.{type(self).__name__} {self.name!r}>"


class DelayedQueue(ProcessBound):
    """relock.DelayedQueue for asyncio."""

    def __init__(self, blocking: _queues.DelayedQueue) -> None:
        self._blocking = blocking
        self._bind(blocking._impl)

    @property
    def destination(self) -> str:
        return self._blocking.destination

    async def offer(self, value: Value, delay: Duration) -> None:
        data = value_of(value)
        due_in = delay_of(delay)
        await operation(lambda done: self._impl.offer_async(data, due_in, done))

    async def size(self) -> int:
        return await _in_executor(self._impl.size)

    async def contains(self, value: Value) -> bool:
        return await _in_executor(self._impl.contains, value_of(value))

    async def remove(self, value: Value) -> bool:
        return await _in_executor(self._impl.remove, value_of(value))

    async def clear(self) -> None:
        await _in_executor(self._impl.clear)

    async def destroy(self) -> None:
        await _in_executor(self._impl.destroy)

    def __repr__(self) -> str:
        return f"<relock.asyncio.{type(self).__name__} -> {self.destination!r}>"
