# SPDX-License-Identifier: Apache-2.0
"""The blocking and delayed queues for blocking code. Values are bytes: bytes (or bytearray,
memoryview) go in as they are, a str as its UTF-8, and bytes come out, as redis-py does by
default. A Java side sharing a queue uses Redisson's StringCodec or ByteArrayCodec."""

from __future__ import annotations

from typing import Any, Union

from . import _relock
from ._durations import Duration, seconds
from .errors import Error, InvalidArgument
from ._process import ProcessBound

Value = Union[bytes, bytearray, memoryview, str]


def value_of(value: Any) -> bytes:
    """``value`` as the core takes it: bytes (a str as its UTF-8, refused with a lone
    surrogate, which has none)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidArgument(f"a queue value str must be valid UTF-8: {e}") from None
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise InvalidArgument(f"a queue value is bytes or str, not {type(value).__name__}")


def delay_of(delay: Duration) -> float:
    found = seconds(delay, "delay")
    if found is None:
        raise InvalidArgument("an offer to a delayed queue needs a delay (0: at once)")
    return found


class BlockingQueue(ProcessBound):
    """A queue on a Redis list (Redisson's RBlockingQueue): producers and consumers in every
    process and language share it. Unbounded: offer always succeeds."""

    def __init__(self, impl: Any, keep: Any = None) -> None:
        self._bind(impl)
        self._keep = keep  # the client the handle needs alive

    @classmethod
    def _make(cls, client: Any, name: str) -> BlockingQueue:
        return cls(_relock.make_blocking_queue(client._impl, name), client)

    @property
    def name(self) -> str:
        return self._impl.name

    @property
    def key(self) -> str:
        """The name after the client's name mapper: the Redis key."""
        return self._impl.key

    def offer(self, value: Value) -> bool:
        """Appends ``value`` at the tail; True (an unbounded queue takes every value)."""
        return self._impl.offer(value_of(value))

    def put(self, value: Value) -> None:
        """offer, raising relock.Error if the queue refused the value."""
        if not self.offer(value):
            raise Error(f"queue {self.name!r} refused the value")

    def poll(self, timeout: Duration | None = None) -> bytes | None:
        """The head, removed; None when the queue is empty (``timeout`` None: no wait) or stayed
        empty for ``timeout``. The GIL is released while waiting; Ctrl-C stops the wait."""
        return self._impl.poll(seconds(timeout, "timeout"))

    def take(self) -> bytes:
        """The head, removed, waiting as long as it takes. The GIL is released while waiting;
        Ctrl-C stops the wait, and an element that came in the same instant goes back to the
        queue (at its tail: relock's API has no push to the head)."""
        return self._impl.take()

    def size(self) -> int:
        return self._impl.size()

    def peek(self) -> bytes | None:
        """The head, left in place; None when empty."""
        return self._impl.peek()

    def remove(self, value: Value) -> bool:
        """Removes the first element equal to ``value``; False when there was none."""
        return self._impl.remove(value_of(value))

    def clear(self) -> bool:
        """Deletes the queue; False when it was empty already."""
        return self._impl.clear()

    def __repr__(self) -> str:
        return f"<relock.{type(self).__name__} {self.name!r}>"


class DelayedQueue(ProcessBound):
    """Elements offered with a delay, moved to the blocking queue ``destination`` once due
    (Redisson's RDelayedQueue). While this object lives, its client moves due elements (at
    least once a second, and at once for an element due earlier than any other)."""

    def __init__(self, impl: Any, keep: Any = None) -> None:
        self._bind(impl)
        self._keep = keep

    @classmethod
    def _make(cls, client: Any, destination: str) -> DelayedQueue:
        return cls(_relock.make_delayed_queue(client._impl, destination), client)

    @property
    def destination(self) -> str:
        """The name of the blocking queue it feeds."""
        return self._impl.destination

    def offer(self, value: Value, delay: Duration) -> None:
        """Puts ``value`` in the destination once ``delay`` (seconds or a timedelta; 0: at the
        next transfer) has passed."""
        self._impl.offer(value_of(value), delay_of(delay))

    def size(self) -> int:
        """The elements not yet due."""
        return self._impl.size()

    def contains(self, value: Value) -> bool:
        """Whether an element not yet due has the value ``value``."""
        return self._impl.contains(value_of(value))

    def remove(self, value: Value) -> bool:
        """Removes the first element not yet due equal to ``value``; False when there was none."""
        return self._impl.remove(value_of(value))

    def clear(self) -> None:
        """Deletes every element not yet due (the destination keeps what it has)."""
        self._impl.clear()

    def destroy(self) -> None:
        """Stops this client's transfer to the destination (Redisson's destroy()); elements
        stay for another client's transfer."""
        self._impl.destroy()

    def __repr__(self) -> str:
        return f"<relock.{type(self).__name__} -> {self.destination!r}>"
