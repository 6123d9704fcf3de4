# SPDX-License-Identifier: Apache-2.0
"""Who holds: a thread for blocking code, a task for asyncio code, or an explicit Owner."""

from __future__ import annotations

import asyncio
import weakref

from ._relock import Owner

_task_owners: weakref.WeakKeyDictionary[asyncio.Task, Owner] = weakref.WeakKeyDictionary()


def owner_id(owner: Owner | None) -> int | None:
    """The core's owner number; None is the calling thread (the core asks on that thread)."""
    return None if owner is None else owner.id


def task_owner(owner: Owner | None = None) -> Owner:
    """``owner``, or the running task's own Owner: one per task, for the task's life."""
    if owner is not None:
        return owner
    task = asyncio.current_task()
    if task is None:
        raise RuntimeError("relock.asyncio needs a running task (or an explicit owner=)")
    found = _task_owners.get(task)
    if found is None:
        found = _task_owners[task] = Owner()
    return found
