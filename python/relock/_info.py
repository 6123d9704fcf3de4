# SPDX-License-Identifier: Apache-2.0
"""What Client.inspect and Client.inspect_queue answer, as dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Holder:
    """One owner's holds on a lock."""

    owner: str  #: "<client-id>:<thread-id>", as its client wrote it (Redisson's too)
    holds: int  #: how many times it holds it (re-entries)
    side: str  #: "exclusive", or "read" / "write" for a read-write lock
    read_leases: list[float | None] = field(default_factory=list)  #: seconds left, per read hold


@dataclass(frozen=True)
class QueuedWaiter:
    """A fair lock's waiter, in its queue."""

    owner: str
    gives_up_at_ms: int | None  #: Unix ms, by the waiter's clock


@dataclass(frozen=True)
class SemaphorePermit:
    """A permit taken from a permit-expirable semaphore."""

    id: str
    expires_at_ms: int | None  #: Unix ms; None: never


@dataclass(frozen=True)
class LockInfo:
    """What a name holds in Redis, read in one script (a consistent snapshot)."""

    name: str
    key: str
    node: str  #: "host:port" of the server that answered
    server: str  #: "redis 7.0.15", "valkey 9.1.2"; "" when INFO is refused
    kind: str  #: none, lock, read-write, fair, fenced, counter, unknown, permit-semaphore
    redis_type: str
    mode: str | None
    holders: list[Holder]
    remaining_lease: float | None  #: seconds; inf without expiry; None when nothing is stored
    waiters: list[QueuedWaiter]
    fencing_token: int | None
    value: int | None
    permits_taken: int
    permits: list[SemaphorePermit]
    synced_replicas: int
    last_acknowledged: int

    @property
    def locked(self) -> bool:
        """Whether anyone holds the lock."""
        return bool(self.holders)

    @classmethod
    def _from(cls, d: dict[str, Any]) -> LockInfo:
        d = dict(d)
        d["holders"] = [Holder(**h) for h in d["holders"]]
        d["waiters"] = [QueuedWaiter(**w) for w in d["waiters"]]
        d["permits"] = [SemaphorePermit(**p) for p in d["permits"]]
        return cls(**d)


@dataclass(frozen=True)
class QueueInfo:
    """A blocking queue and the delayed queue feeding it."""

    name: str
    redis_type: str
    length: int  #: elements ready to take
    delayed: int  #: elements not yet due
    next_due_ms: int | None  #: the earliest of them, Unix ms
