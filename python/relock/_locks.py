# SPDX-License-Identifier: Apache-2.0
"""The lock kinds for blocking code, shaped like threading.Lock: acquire / release, ``with``."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from . import _relock
from ._durations import Duration, seconds, wait_of
from ._owners import owner_id
from ._relock import Owner
from ._process import ProcessBound


class _Hold(ProcessBound):
    """What every lock and lock set shares: acquire, release and ``with``.

    The owner is the calling thread unless ``owner=`` names a :class:`relock.Owner`: a thread
    that acquired must release (as in Redisson), and the same thread may acquire again
    (reentrant kinds) and must release as many times.
    """

    def __init__(self, impl: Any, keep: Any = None) -> None:
        self._bind(impl)
        self._keep = keep  # what the handle needs alive: its client, or its members

    def acquire(self, blocking: bool = True, timeout: Duration | None = -1, *,
                lease: Duration | None = None, owner: Owner | None = None) -> bool:
        """Takes the lock; True when taken, False when ``timeout`` ran out (or, not blocking,
        when it is held elsewhere).

        ``timeout`` -1 or None waits for ever. ``lease`` makes the hold expire that long after
        it is taken, never renewed; without one, the client's watchdog keeps it while this
        process lives. The GIL is released while waiting; Ctrl-C stops the wait and leaves
        nothing held.
        """
        wait, forever = wait_of(blocking, timeout)
        return self._impl.acquire(owner_id(owner), wait, seconds(lease, "lease"), forever)

    def release(self, *, owner: Owner | None = None) -> None:
        """Gives back one hold; relock.errors.NotOwner when the owner holds none, LockLost when
        its hold was lost meanwhile."""
        self._impl.release(owner_id(owner))

    def __enter__(self) -> Any:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release()


class Lock(_Hold):
    """A distributed lock (the kind its maker names), with Redisson's data: a Java service using
    Redisson's RLock (RFairLock, RSpinLock, a side of RReadWriteLock) on the same name contends
    with it."""

    @property
    def name(self) -> str:
        return self._impl.name

    @property
    def key(self) -> str:
        """The name after the client's name mapper: the Redis key."""
        return self._impl.key

    def locked(self) -> bool:
        """Whether anyone holds it, in any process."""
        return self._impl.is_locked()

    def held(self, *, owner: Owner | None = None) -> bool:
        """Whether the calling thread (or ``owner``) holds it."""
        return self._impl.is_held_by(owner_id(owner))

    def held_by_field(self, field: str) -> bool:
        """Whether the owner field ``field`` (any client's, Redisson's too) holds it."""
        return self._impl.is_held_by_field(field)

    def hold_count(self, *, owner: Owner | None = None) -> int:
        """How many times the calling thread (or ``owner``) holds it."""
        return self._impl.hold_count(owner_id(owner))

    def owner_field(self, *, owner: Owner | None = None) -> str:
        """The hash field this client writes for the calling thread (or ``owner``)."""
        return self._impl.owner_field(owner_id(owner))

    def remaining_lease(self) -> float | None:
        """Seconds left on the hold; None when free; inf when the key has no expiry."""
        return self._impl.remaining_lease()

    def valid_for(self, *, owner: Owner | None = None) -> float | None:
        """Seconds the hold is certainly still valid, from what this client knows (no I/O);
        None when it records no such hold."""
        return self._impl.valid_for(owner_id(owner))

    def force_unlock(self) -> bool:
        """Deletes the lock whoever holds it and wakes its waiters; False when it was free."""
        return self._impl.force_unlock()

    def __repr__(self) -> str:
        return f"<relock.{type(self).__name__} {self.name!r}>"


class FencedLock(Lock):
    """A lock whose every acquire gets a fencing token, larger than any before it on the name
    (Redisson's RFencedLock): a resource that remembers the largest token it saw can refuse a
    paused ex-holder's late write. ``with lock as token:``."""

    def acquire_token(self, blocking: bool = True, timeout: Duration | None = -1, *,
                      lease: Duration | None = None, owner: Owner | None = None) -> int | None:
        """As acquire, answering the token (None when not taken)."""
        wait, forever = wait_of(blocking, timeout)
        return self._impl.acquire_token(owner_id(owner), wait, seconds(lease, "lease"), forever)

    def fence(self, *, owner: Owner | None = None) -> int | None:
        """The token of the calling thread's (or ``owner``'s) hold; None when it holds none."""
        return self._impl.fence(owner_id(owner))

    def __enter__(self) -> Any:
        return self.acquire_token()


class ReadWriteLock:
    """Redisson's RReadWriteLock: many readers or one writer. ``read`` and ``write`` are locks;
    a writer may also take the read side (downgrade), a reader never the write side."""

    def __init__(self, read: Lock, write: Lock) -> None:
        self.read = read
        self.write = write

    @property
    def name(self) -> str:
        return self.read.name


class MultiLock(_Hold):
    """Several locks taken as one, all or none (Redisson's RedissonMultiLock), from one client or
    several."""

    def __init__(self, *locks: Lock) -> None:
        super().__init__(_relock.make_multi_lock([lock._impl for lock in locks]), locks)


class RedLock(_Hold):
    """The RedLock algorithm over independent servers (one lock per server, each from its own
    client): taken when a majority is taken within the lease (Redisson's RedissonRedLock)."""

    def __init__(self, *locks: Lock) -> None:
        super().__init__(_relock.make_red_lock([lock._impl for lock in locks]), locks)
