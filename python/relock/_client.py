# SPDX-License-Identifier: Apache-2.0
"""relock.Client: one connection to a Redis deployment, shared by every object made from it."""

from __future__ import annotations

import atexit
import logging
import os
import weakref
from types import TracebackType
from typing import Any, Callable

from . import _relock
from ._durations import Duration, seconds
from ._info import LockInfo, QueueInfo
from ._locks import FencedLock, Lock, ReadWriteLock
from ._queues import BlockingQueue, DelayedQueue
from ._synchronizers import CountDownLatch, PermitExpirableSemaphore, Semaphore

_logger = logging.getLogger("relock")
_LEVELS = (logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR)

# Clients still open at exit are closed while the interpreter can still run their callbacks.
_open: weakref.WeakSet[Client] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for client in list(_open):
        client.close()
    # Threads still inside relock calls (a daemon thread's acquire, ended by the close) must
    # be back in Python before the interpreter finalizes: CPython would end them in a way the
    # C++ below them cannot survive (python/src/bridge.hpp, released_gil).
    _relock.wait_for_threads_back(5.0)


def _abandon_all_in_child() -> None:
    # A fork()ed child has none of its parent's I/O threads: the parent's clients can neither
    # work nor be closed here (relock/_process.py).
    for client in list(_open):
        client._impl.abandon()
    _open.clear()


os.register_at_fork(after_in_child=_abandon_all_in_child)


def _log(level: int, line: str) -> None:
    _logger.log(_LEVELS[level] if 0 <= level < len(_LEVELS) else logging.ERROR, "%s", line)


class Client:
    """Connects to the deployment ``url`` names, as the C++ relock::client does:

    - ``redis://[user[:password]@]host[:port][/db]``: one server (or a master with replicas);
    - ``redis-cluster://host:port[,host:port...]``: a Redis Cluster;
    - ``redis-sentinel://host:port[,host:port...]/MASTER``: the master a Sentinel set watches;
    - ``rediss://``, ``rediss-cluster://``, ``rediss-sentinel://``: the same over TLS.

    Durations are seconds (int, float) or timedeltas. Thread-safe: share one client between
    threads. Raises relock.errors.ConnectionFailed or AuthFailed when it cannot connect.
    ``on_lock_lost(key, owner_field, error)`` hears every hold this client lost, on relock's I/O
    thread; relock's log goes to the ``relock`` logger.
    """

    def __init__(self, url: str = "redis://127.0.0.1:6379", *,
                 client_name: str | None = None,
                 connect_timeout: Duration | None = None,
                 command_timeout: Duration | None = None,
                 watchdog_lease: Duration | None = None,
                 reconnect_min_delay: Duration | None = None,
                 reconnect_max_delay: Duration | None = None,
                 command_connections: int | None = None,
                 busy_poll: Duration | None = None,
                 fair_lock_wait_timeout: Duration | None = None,
                 sentinel_user: str | None = None,
                 sentinel_password: str | None = None,
                 tls_ca: str | None = None,
                 tls_cert: str | None = None,
                 tls_key: str | None = None,
                 tls_server_name: str | None = None,
                 tls_insecure_skip_verification: bool = False,
                 on_lock_lost: Callable[[str, str, Exception], None] | None = None) -> None:
        durations = {
            "connect_timeout": connect_timeout, "command_timeout": command_timeout,
            "watchdog_lease": watchdog_lease, "reconnect_min_delay": reconnect_min_delay,
            "reconnect_max_delay": reconnect_max_delay, "busy_poll": busy_poll,
            "fair_lock_wait_timeout": fair_lock_wait_timeout,
        }
        settings: dict[str, Any] = {name: seconds(value, name) for name, value in durations.items()}
        settings.update(
            client_name=client_name, command_connections=command_connections,
            sentinel_user=sentinel_user, sentinel_password=sentinel_password, tls_ca=tls_ca,
            tls_cert=tls_cert, tls_key=tls_key, tls_server_name=tls_server_name,
            tls_insecure_skip_verification=tls_insecure_skip_verification,
            on_lock_lost=on_lock_lost, log=_log)
        self._impl = _relock.Client(url, **settings)
        _open.add(self)

    @property
    def id(self) -> str:
        """The client's UUID: the first half of every owner field it writes."""
        return self._impl.id

    @property
    def closed(self) -> bool:
        return self._impl.closed

    def close(self) -> None:
        """Ends every wait under way (relock.errors.Cancelled) and disconnects. Holds already
        taken expire after their lease; the watchdog stops renewing them."""
        self._impl.close()
        _open.discard(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    # ---- locks ----
    def lock(self, name: str) -> Lock:
        """A reentrant lock (Redisson's RLock)."""
        return Lock(_relock.make_lock(self._impl, "reentrant", name), self)

    def non_reentrant_lock(self, name: str) -> Lock:
        """A lock its owner cannot take twice (relock.errors.NonReentrant)."""
        return Lock(_relock.make_lock(self._impl, "non_reentrant", name), self)

    def fair_lock(self, name: str) -> Lock:
        """A lock granted in the order of asking (Redisson's RFairLock)."""
        return Lock(_relock.make_lock(self._impl, "fair", name), self)

    def non_reentrant_fair_lock(self, name: str) -> Lock:
        return Lock(_relock.make_lock(self._impl, "non_reentrant_fair", name), self)

    def spin_lock(self, name: str) -> Lock:
        """A lock whose waiters poll with backoff instead of listening (Redisson's spin lock)."""
        return Lock(_relock.make_lock(self._impl, "spin", name), self)

    def fenced_lock(self, name: str) -> FencedLock:
        """A lock with fencing tokens (Redisson's RFencedLock)."""
        return FencedLock(_relock.make_fenced_lock(self._impl, name), self)

    def read_write_lock(self, name: str) -> ReadWriteLock:
        """Redisson's RReadWriteLock."""
        return ReadWriteLock(Lock(_relock.make_lock(self._impl, "read", name), self),
                             Lock(_relock.make_lock(self._impl, "write", name), self))

    # ---- semaphores, latch, queues ----
    def semaphore(self, name: str, *, wait_when_absent: bool = False) -> Semaphore:
        """A counting semaphore (Redisson's RSemaphore). ``wait_when_absent``: acquiring from a
        name that holds nothing waits (as Redisson does) instead of raising NotInitialized."""
        return Semaphore._make(self, name, wait_when_absent)

    def permit_expirable_semaphore(self, name: str, *,
                                   wait_when_absent: bool = False) -> PermitExpirableSemaphore:
        """A semaphore whose permits have ids and leases (Redisson's
        RPermitExpirableSemaphore)."""
        return PermitExpirableSemaphore._make(self, name, wait_when_absent)

    def count_down_latch(self, name: str) -> CountDownLatch:
        """Redisson's RCountDownLatch."""
        return CountDownLatch._make(self, name)

    def blocking_queue(self, name: str) -> BlockingQueue:
        """Redisson's RBlockingQueue of bytes."""
        return BlockingQueue._make(self, name)

    def delayed_queue(self, destination: str) -> DelayedQueue:
        """Redisson's RDelayedQueue, feeding the blocking queue ``destination``."""
        return DelayedQueue._make(self, destination)

    # ---- what Redis holds ----
    def inspect(self, name: str) -> LockInfo:
        """What the name holds, read in one script: holders, lease, waiters, token, permits."""
        return LockInfo._from(self._impl.inspect(name))

    def inspect_queue(self, name: str) -> QueueInfo:
        """A blocking queue's length and the delayed elements due to it."""
        return QueueInfo(**self._impl.inspect_queue(name))

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.id
        return f"<relock.Client {state}>"
