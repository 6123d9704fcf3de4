# SPDX-License-Identifier: Apache-2.0
"""relock for asyncio: the same objects, whose waits are awaited instead of blocking.

The owner of a hold is the task that took it (one :class:`relock.Owner` per task), unless
``owner=`` names one. A task cancelled while it waits leaves nothing held. Queries that are one
round trip (``locked()``, ``hold_count()``...) run in the loop's default executor.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from . import _client, _locks, _relock
from ._aio import ignore, in_executor as _in_executor, operation
from ._aio_queues import BlockingQueue, DelayedQueue
from ._aio_synchronizers import CountDownLatch, Permit, PermitExpirableSemaphore, Semaphore
from ._durations import Duration, seconds
from ._info import LockInfo, QueueInfo
from ._owners import task_owner
from ._relock import Owner
from ._process import ProcessBound


class _AsyncHold(ProcessBound):
    """acquire / release / ``async with`` for a lock or lock set, owned by the task."""

    def __init__(self, blocking: _locks._Hold) -> None:
        self._blocking = blocking
        self._bind(blocking._impl)

    async def acquire(self, timeout: Duration | None = None, *, lease: Duration | None = None,
                      owner: Owner | None = None) -> bool:
        """Takes the lock: True when taken, False when ``timeout`` (None: no limit) ran out."""
        who = task_owner(owner)
        wait = seconds(timeout, "timeout")
        hold_lease = seconds(lease, "lease")
        return await operation(
            lambda done: self._impl.acquire_async(who.id, wait, hold_lease, wait is None, done),
            lambda _: self._impl.release_async(who.id, ignore))

    async def try_acquire(self, *, lease: Duration | None = None,
                          owner: Owner | None = None) -> bool:
        """One attempt, no wait."""
        who = task_owner(owner)
        hold_lease = seconds(lease, "lease")
        return await operation(
            lambda done: self._impl.acquire_async(who.id, None, hold_lease, False, done),
            lambda _: self._impl.release_async(who.id, ignore))

    async def release(self, *, owner: Owner | None = None) -> None:
        who = task_owner(owner)
        await operation(lambda done: self._impl.release_async(who.id, done))

    async def __aenter__(self) -> Any:
        await self.acquire()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.release()


class Lock(_AsyncHold):
    """relock.Lock for asyncio."""

    _blocking: _locks.Lock

    @property
    def name(self) -> str:
        return self._blocking.name

    @property
    def key(self) -> str:
        return self._blocking.key

    async def locked(self) -> bool:
        return await _in_executor(self._impl.is_locked)

    async def held(self, *, owner: Owner | None = None) -> bool:
        return await _in_executor(self._impl.is_held_by, task_owner(owner).id)

    async def hold_count(self, *, owner: Owner | None = None) -> int:
        return await _in_executor(self._impl.hold_count, task_owner(owner).id)

    def owner_field(self, *, owner: Owner | None = None) -> str:
        return self._impl.owner_field(task_owner(owner).id)

    async def remaining_lease(self) -> float | None:
        return await _in_executor(self._impl.remaining_lease)

    async def force_unlock(self) -> bool:
        return await _in_executor(self._impl.force_unlock)

    def __repr__(self) -> str:
        return f"<relock.asyncio.{type(self).__name__} {self.name!r}>"


class FencedLock(Lock):
    """relock.FencedLock for asyncio: ``async with lock as token:``."""

    async def acquire_token(self, timeout: Duration | None = None, *,
                            lease: Duration | None = None,
                            owner: Owner | None = None) -> int | None:
        who = task_owner(owner)
        wait = seconds(timeout, "timeout")
        hold_lease = seconds(lease, "lease")
        return await operation(
            lambda done: self._impl.acquire_token_async(who.id, wait, hold_lease, wait is None,
                                                        done),
            lambda _: self._impl.release_async(who.id, ignore))

    async def fence(self, *, owner: Owner | None = None) -> int | None:
        return await _in_executor(self._impl.fence, task_owner(owner).id)

    async def __aenter__(self) -> Any:
        return await self.acquire_token()


class ReadWriteLock:
    """relock.ReadWriteLock for asyncio."""

    def __init__(self, read: Lock, write: Lock) -> None:
        self.read = read
        self.write = write

    @property
    def name(self) -> str:
        return self.read.name


class MultiLock(_AsyncHold):
    """relock.MultiLock for asyncio: made from relock.asyncio locks."""

    def __init__(self, *locks: Lock) -> None:
        super().__init__(_locks.MultiLock(*(lock._blocking for lock in locks)))


class RedLock(_AsyncHold):
    """relock.RedLock for asyncio: made from relock.asyncio locks."""

    def __init__(self, *locks: Lock) -> None:
        super().__init__(_locks.RedLock(*(lock._blocking for lock in locks)))


class Client:
    """relock.Client for asyncio, with the same URL and settings. Constructing it connects
    (blocking the loop for the connect, as a first command would); ``async with`` closes it."""

    def __init__(self, url: str = "redis://127.0.0.1:6379", **settings: Any) -> None:
        self.blocking = _client.Client(url, **settings)

    @property
    def id(self) -> str:
        return self.blocking.id

    async def close(self) -> None:
        await _in_executor(self.blocking.close)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.close()

    def lock(self, name: str) -> Lock:
        return Lock(self.blocking.lock(name))

    def non_reentrant_lock(self, name: str) -> Lock:
        return Lock(self.blocking.non_reentrant_lock(name))

    def fair_lock(self, name: str) -> Lock:
        return Lock(self.blocking.fair_lock(name))

    def non_reentrant_fair_lock(self, name: str) -> Lock:
        return Lock(self.blocking.non_reentrant_fair_lock(name))

    def spin_lock(self, name: str) -> Lock:
        return Lock(self.blocking.spin_lock(name))

    def fenced_lock(self, name: str) -> FencedLock:
        return FencedLock(self.blocking.fenced_lock(name))

    def read_write_lock(self, name: str) -> ReadWriteLock:
        both = self.blocking.read_write_lock(name)
        return ReadWriteLock(Lock(both.read), Lock(both.write))

    def semaphore(self, name: str, *, wait_when_absent: bool = False) -> Semaphore:
        return Semaphore(self.blocking.semaphore(name, wait_when_absent=wait_when_absent))

    def permit_expirable_semaphore(self, name: str, *,
                                   wait_when_absent: bool = False) -> PermitExpirableSemaphore:
        return PermitExpirableSemaphore(
            self.blocking.permit_expirable_semaphore(name, wait_when_absent=wait_when_absent))

    def count_down_latch(self, name: str) -> CountDownLatch:
        return CountDownLatch(self.blocking.count_down_latch(name))

    def blocking_queue(self, name: str) -> BlockingQueue:
        return BlockingQueue(self.blocking.blocking_queue(name))

    def delayed_queue(self, destination: str) -> DelayedQueue:
        return DelayedQueue(self.blocking.delayed_queue(destination))

    async def inspect(self, name: str) -> LockInfo:
        return await _in_executor(self.blocking.inspect, name)

    async def inspect_queue(self, name: str) -> QueueInfo:
        return await _in_executor(self.blocking.inspect_queue, name)


__all__ = [
    "Client", "Lock", "FencedLock", "ReadWriteLock", "MultiLock", "RedLock", "Owner", "Semaphore",
    "PermitExpirableSemaphore", "Permit", "CountDownLatch", "BlockingQueue", "DelayedQueue",
]
