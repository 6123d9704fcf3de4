# SPDX-License-Identifier: Apache-2.0
"""relock: distributed locks and synchronizers on Redis, data-compatible with Redisson.

A Python process, a C++ service (relock) and a Java service (Redisson) that use one name
contend on one lock: same keys, hash fields, channels and scripts. Blocking API here;
``relock.asyncio`` has the same objects for asyncio.
"""

from . import errors
from ._client import Client
from ._info import Holder, LockInfo, QueueInfo, QueuedWaiter, SemaphorePermit
from ._locks import FencedLock, Lock, MultiLock, ReadWriteLock, RedLock
from ._queues import BlockingQueue, DelayedQueue
from ._relock import Owner
from ._synchronizers import CountDownLatch, Permit, PermitExpirableSemaphore, Semaphore
from .errors import Error

__version__ = "1.0.0"

__all__ = [
    "Client", "Owner", "Lock", "FencedLock", "ReadWriteLock", "MultiLock", "RedLock",
    "Semaphore", "PermitExpirableSemaphore", "Permit", "CountDownLatch", "BlockingQueue",
    "DelayedQueue", "LockInfo", "Holder", "QueuedWaiter", "SemaphorePermit", "QueueInfo", "Error", "errors",
]
