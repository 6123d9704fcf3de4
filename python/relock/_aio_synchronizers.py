# SPDX-License-Identifier: Apache-2.0
"""Semaphores and the count-down latch for asyncio: the waits awaited through the core's async
operations (a cancelled task leaves no permit taken), the one-round-trip queries in the loop's
default executor."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from . import _synchronizers
from ._aio import ignore, in_executor as _in_executor, operation
from ._durations import Duration, seconds
from ._synchronizers import MAX_PERMITS, count_of, permit_id_of
from .errors import InvalidArgument, NotOwner
from ._process import ProcessBound


class Semaphore(ProcessBound):
    """relock.Semaphore for asyncio: ``async with sem:`` takes and gives back one permit."""

    def __init__(self, blocking: _synchronizers.Semaphore) -> None:
        self._blocking = blocking
        self._bind(blocking._impl)

    @property
    def name(self) -> str:
        return self._blocking.name

    @property
    def key(self) -> str:
        return self._blocking.key

    async def acquire(self, permits: int = 1, timeout: Duration | None = None) -> bool:
        """Takes ``permits``: True when taken, False when ``timeout`` (None: no limit; 0: one
        attempt) ran out. A cancelled task takes none: permits granted as it was cancelled are
        given back."""
        n = count_of(permits, "permits", 1)
        wait = seconds(timeout, "timeout")
        return await operation(
            lambda done: self._impl.acquire_async(n, wait, wait is None, done),
            lambda _: self._impl.release_async(n, ignore))

    async def try_acquire(self, permits: int = 1) -> bool:
        """One attempt, no wait."""
        return await self.acquire(permits, 0)

    async def release(self, permits: int = 1) -> None:
        n = count_of(permits, "permits", 1)
        await operation(lambda done: self._impl.release_async(n, done))

    async def available_permits(self) -> int:
        return await _in_executor(self._impl.available_permits)

    async def drain_permits(self) -> int:
        return await _in_executor(self._impl.drain_permits)

    async def try_set_permits(self, permits: int) -> bool:
        return await _in_executor(self._impl.try_set_permits, count_of(permits, "permits", 0))

    async def add_permits(self, permits: int) -> None:
        await _in_executor(self._impl.add_permits, count_of(permits, "permits", -MAX_PERMITS))

    async def __aenter__(self) -> Semaphore:
        await self.acquire()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.release()

    def __repr__(self) -> str:
        return f"<relock.asyncio.{type(self).__name__} {self.name!r}>"


class Permit:
    """relock.Permit for asyncio: ``await permit.release()``, ``async with permit:``."""

    def __init__(self, semaphore: PermitExpirableSemaphore, permit_id: str) -> None:
        self._semaphore = semaphore
        self._id = permit_id
        self._released = False

    @property
    def id(self) -> str:
        return self._id

    @property
    def semaphore(self) -> PermitExpirableSemaphore:
        return self._semaphore

    @property
    def released(self) -> bool:
        return self._released

    async def release(self) -> None:
        """Gives the permit back: LockLost when its lease ran out meanwhile, NotOwner when this
        object gave it back already."""
        if self._released:
            raise NotOwner(f"permit {self._id} was released already")
        self._released = True  # a failed release is not tried twice, as relock::permit's
        await self._semaphore.release(self._id)

    async def update_lease(self, lease: Duration) -> bool:
        return await self._semaphore.update_lease(self._id, lease)

    async def __aenter__(self) -> Permit:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, value: BaseException | None,
                        traceback: TracebackType | None) -> None:
        if not self._released:
            await self.release()

    def __repr__(self) -> str:
        state = " released" if self._released else ""
        return f"<relock.asyncio.Permit {self._id}{state} of {self._semaphore.name!r}>"


class PermitExpirableSemaphore(ProcessBound):
    """relock.PermitExpirableSemaphore for asyncio: ``async with await sem.acquire() as p:``."""

    def __init__(self, blocking: _synchronizers.PermitExpirableSemaphore) -> None:
        self._blocking = blocking
        self._bind(blocking._impl)

    @property
    def name(self) -> str:
        return self._blocking.name

    @property
    def key(self) -> str:
        return self._blocking.key

    async def acquire(self, timeout: Duration | None = None, *,
                      lease: Duration | None = None) -> Permit | None:
        """A permit; None when ``timeout`` (None: no limit; 0: one attempt) ran out. A cancelled
        task takes none: a permit granted as it was cancelled is given back."""
        wait = seconds(timeout, "timeout")
        permit_lease = seconds(lease, "lease")
        got = await operation(
            lambda done: self._impl.acquire_async(wait, permit_lease, wait is None, done),
            lambda permit_id: self._impl.release_async(permit_id, ignore))
        return None if got is None else Permit(self, got)

    async def try_acquire(self, *, lease: Duration | None = None) -> Permit | None:
        """One attempt, no wait."""
        return await self.acquire(0, lease=lease)

    async def release(self, permit: Permit | str) -> None:
        permit_id = permit_id_of(permit)
        await operation(lambda done: self._impl.release_async(permit_id, done))

    async def try_release(self, permit: Permit | str) -> bool:
        return await _in_executor(self._impl.try_release, permit_id_of(permit))

    async def update_lease(self, permit: Permit | str, lease: Duration) -> bool:
        lease_s = seconds(lease, "lease")
        if lease_s is None:
            raise InvalidArgument("update_lease needs a lease")
        return await _in_executor(self._impl.update_lease, permit_id_of(permit), lease_s)

    async def available_permits(self) -> int:
        return await _in_executor(self._impl.available_permits)

    async def acquired_permits(self) -> int:
        return await _in_executor(self._impl.acquired_permits)

    async def set_permits(self, permits: int) -> None:
        await _in_executor(self._impl.set_permits, count_of(permits, "permits", 0))

    async def try_set_permits(self, permits: int) -> bool:
        return await _in_executor(self._impl.try_set_permits, count_of(permits, "permits", 0))

    async def add_permits(self, permits: int) -> None:
        await _in_executor(self._impl.add_permits, count_of(permits, "permits", -MAX_PERMITS))

    def __repr__(self) -> str:
        return f"<relock.asyncio.{type(self).__name__} {self.name!r}>"


class CountDownLatch(ProcessBound):
    """relock.CountDownLatch for asyncio: ``await latch.wait()``."""

    def __init__(self, blocking: _synchronizers.CountDownLatch) -> None:
        self._blocking = blocking
        self._bind(blocking._impl)

    @property
    def name(self) -> str:
        return self._blocking.name

    @property
    def key(self) -> str:
        return self._blocking.key

    async def try_set_count(self, count: int) -> bool:
        return await _in_executor(self._impl.try_set_count, count_of(count, "count", 1))

    async def count_down(self) -> None:
        await operation(lambda done: self._impl.count_down_async(done))

    async def count(self) -> int:
        return await _in_executor(self._impl.count)

    async def wait(self, timeout: Duration | None = None) -> bool:
        """True once the latch is open; False when ``timeout`` (None: no limit) ran out."""
        wait = seconds(timeout, "timeout")
        return await operation(lambda done: self._impl.wait_async(wait, done))

    async def delete(self) -> bool:
        return await _in_executor(self._impl.delete)

    def __repr__(self) -> str:
        return f"<relock.asyncio.{type(self).__name__} {self.name!r}>"
