# SPDX-License-Identifier: Apache-2.0
"""Semaphores and the count-down latch for blocking code, shaped like threading's."""

from __future__ import annotations

import operator
from types import TracebackType
from typing import Any

from . import _relock
from ._durations import Duration, seconds, wait_of
from .errors import InvalidArgument, NotOwner
from ._process import ProcessBound

# The most permits one call takes, gives back or sets: Java's largest int, as Redisson.
MAX_PERMITS = 2**31 - 1


def count_of(value: Any, what: str, low: int) -> int:
    """``value`` checked as a count in [low, MAX_PERMITS] (add_permits: [-MAX_PERMITS, ...]),
    refused before any I/O: an int too large for the core would be a TypeError otherwise."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)  # an int, or an int-like (numpy's)
    except TypeError:
        raise InvalidArgument(f"{what} must be an int, not {type(value).__name__}") from None
    if not low <= value <= MAX_PERMITS:
        raise InvalidArgument(f"{what} must be between {low} and {MAX_PERMITS}; got {value}")
    return value


def permit_id_of(permit: Permit | Any) -> str:
    """A permit's id: a Permit (blocking or asyncio) or the id itself (32 hex chars)."""
    found = getattr(permit, "id", permit)
    if not isinstance(found, str):
        raise InvalidArgument(f"a permit id is a str of 32 hex digits, not "
                              f"{type(found).__name__}")
    return found


class Semaphore(ProcessBound):
    """A counting semaphore (Redisson's RSemaphore), shared with Java and C++ processes.

    Permits have no owner and no lease: anyone may release them, and a holder that dies keeps
    them. Set the count first (try_set_permits or add_permits): acquiring from a name that holds
    nothing raises relock.errors.NotInitialized. ``with sem:`` takes and gives back one permit.
    """

    def __init__(self, impl: Any, keep: Any = None) -> None:
        self._bind(impl)
        self._keep = keep  # the client the handle needs alive

    @classmethod
    def _make(cls, client: Any, name: str, wait_when_absent: bool = False) -> Semaphore:
        # wait_when_absent: acquiring from a name that holds nothing waits (as Redisson does)
        # instead of raising NotInitialized.
        return cls(_relock.make_semaphore(client._impl, name, wait_when_absent), client)

    @property
    def name(self) -> str:
        return self._impl.name

    @property
    def key(self) -> str:
        """The name after the client's name mapper: the Redis key."""
        return self._impl.key

    def acquire(self, permits: int = 1, blocking: bool = True,
                timeout: Duration | None = -1) -> bool:
        """Takes ``permits``; True when taken, False when ``timeout`` ran out (or, not blocking,
        when they are not free now). ``timeout`` -1 or None waits for ever. The GIL is released
        while waiting; Ctrl-C stops the wait and leaves nothing taken."""
        n = count_of(permits, "permits", 1)
        wait, forever = wait_of(blocking, timeout)
        return self._impl.acquire(n, wait, forever)

    def release(self, permits: int = 1) -> None:
        """Gives back (adds) ``permits`` and wakes waiters, in every process."""
        self._impl.release(count_of(permits, "permits", 1))

    def available_permits(self) -> int:
        """The permits free now (0 when the name holds nothing)."""
        return self._impl.available_permits()

    def drain_permits(self) -> int:
        """Takes every free permit; how many."""
        return self._impl.drain_permits()

    def try_set_permits(self, permits: int) -> bool:
        """Sets the count only when the name holds nothing; False when it holds one (even 0)."""
        return self._impl.try_set_permits(count_of(permits, "permits", 0))

    def add_permits(self, permits: int) -> None:
        """Adds ``permits``, which may be negative; creates the semaphore when absent."""
        self._impl.add_permits(count_of(permits, "permits", -MAX_PERMITS))

    def __enter__(self) -> Semaphore:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<relock.{type(self).__name__} {self.name!r}>"


class Permit:
    """One permit of a PermitExpirableSemaphore: its ``id`` (32 hex chars, as Redisson shows it)
    and ``release()``; ``with`` gives it back at the block's end.

    A permit nobody releases stays taken: until its lease ends, or, taken without a lease,
    while its client lives (the watchdog renews it), as threading.Semaphore's would. Another
    process (Java's too) may give it back by id.
    """

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
        """Whether release() was called on this object."""
        return self._released

    def release(self) -> None:
        """Gives the permit back: relock.errors.LockLost when its lease ran out (or it was taken
        back) meanwhile, NotOwner when this object gave it back already."""
        if self._released:
            raise NotOwner(f"permit {self._id} was released already")
        self._released = True  # a failed release is not tried twice, as relock::permit's
        self._semaphore.release(self._id)

    def update_lease(self, lease: Duration) -> bool:
        """The permit now expires ``lease`` from now (no more watchdog renewal); False when it
        is not held."""
        return self._semaphore.update_lease(self._id, lease)

    def __enter__(self) -> Permit:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if not self._released:
            self.release()

    def __repr__(self) -> str:
        state = " released" if self._released else ""
        return f"<relock.Permit {self._id}{state} of {self._semaphore.name!r}>"


class PermitExpirableSemaphore(ProcessBound):
    """A semaphore whose permits have ids and leases (Redisson's RPermitExpirableSemaphore).

    A permit taken with ``lease=`` expires then; one taken without is renewed by the client's
    watchdog while the client lives and comes back a watchdog lease after it dies. Set the count
    first (try_set_permits, set_permits or add_permits): acquiring from a name that holds nothing
    raises relock.errors.NotInitialized. ``with sem.acquire() as permit:``.
    """

    def __init__(self, impl: Any, keep: Any = None) -> None:
        self._bind(impl)
        self._keep = keep

    @classmethod
    def _make(cls, client: Any, name: str, wait_when_absent: bool = False) -> PermitExpirableSemaphore:
        # wait_when_absent: acquiring from a name that holds nothing waits (as Redisson does)
        # instead of raising NotInitialized.
        return cls(_relock.make_permit_expirable_semaphore(client._impl, name, wait_when_absent), client)

    @property
    def name(self) -> str:
        return self._impl.name

    @property
    def key(self) -> str:
        return self._impl.key

    def acquire(self, blocking: bool = True, timeout: Duration | None = -1, *,
                lease: Duration | None = None) -> Permit | None:
        """A permit; None when ``timeout`` ran out (or, not blocking, when none is free now).
        ``timeout`` -1 or None waits for ever. The GIL is released while waiting; Ctrl-C stops
        the wait and leaves nothing taken."""
        wait, forever = wait_of(blocking, timeout)
        got = self._impl.acquire(wait, seconds(lease, "lease"), forever)
        return None if got is None else Permit(self, got)

    def release(self, permit: Permit | str) -> None:
        """Gives back the permit (a Permit or its id): relock.errors.NotOwner when no such permit
        is held, LockLost when this client held it and it expired or was taken back."""
        self._impl.release(permit_id_of(permit))

    def try_release(self, permit: Permit | str) -> bool:
        """The same; False instead of an error when the permit is not held."""
        return self._impl.try_release(permit_id_of(permit))

    def update_lease(self, permit: Permit | str, lease: Duration) -> bool:
        """The permit now expires ``lease`` from now; False when it is not held."""
        lease_s = seconds(lease, "lease")
        if lease_s is None:
            raise InvalidArgument("update_lease needs a lease")
        return self._impl.update_lease(permit_id_of(permit), lease_s)

    def available_permits(self) -> int:
        return self._impl.available_permits()

    def acquired_permits(self) -> int:
        """The permits held and not expired, by every client."""
        return self._impl.acquired_permits()

    def set_permits(self, permits: int) -> None:
        """Makes available + acquired equal ``permits`` (Redisson 4.x setPermits)."""
        self._impl.set_permits(count_of(permits, "permits", 0))

    def try_set_permits(self, permits: int) -> bool:
        """Sets the available count only when the name holds nothing."""
        return self._impl.try_set_permits(count_of(permits, "permits", 0))

    def add_permits(self, permits: int) -> None:
        """Adds ``permits`` (may be negative) to the available count; creates it when absent."""
        self._impl.add_permits(count_of(permits, "permits", -MAX_PERMITS))

    def __repr__(self) -> str:
        return f"<relock.{type(self).__name__} {self.name!r}>"


class CountDownLatch(ProcessBound):
    """A count-down latch (Redisson's RCountDownLatch): wait() returns once count_down() has
    brought the count to zero, in every process at once. A name that holds nothing is open."""

    def __init__(self, impl: Any, keep: Any = None) -> None:
        self._bind(impl)
        self._keep = keep

    @classmethod
    def _make(cls, client: Any, name: str) -> CountDownLatch:
        return cls(_relock.make_count_down_latch(client._impl, name), client)

    @property
    def name(self) -> str:
        return self._impl.name

    @property
    def key(self) -> str:
        return self._impl.key

    def try_set_count(self, count: int) -> bool:
        """Sets the count (1 or more) only when the latch is open; False otherwise."""
        return self._impl.try_set_count(count_of(count, "count", 1))

    def count_down(self) -> None:
        """Decrements the count; at zero the latch opens. Nothing on an open latch."""
        self._impl.count_down()

    def count(self) -> int:
        """The count now; 0 when open."""
        return self._impl.count()

    def wait(self, timeout: Duration | None = None) -> bool:
        """Waits until the latch opens (Java's await): True when open, False when ``timeout``
        (None: no limit; 0: look once) ran out first. The GIL is released while waiting; Ctrl-C
        stops the wait."""
        return self._impl.wait(seconds(timeout, "timeout"))

    def delete(self) -> bool:
        """Deletes the latch, opening it for every waiter; False when it was open already."""
        return self._impl.delete()

    def __repr__(self) -> str:
        return f"<relock.{type(self).__name__} {self.name!r}>"
