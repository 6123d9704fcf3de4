# SPDX-License-Identifier: Apache-2.0
"""Handles on the C++ core belong to the process that made them.

A client's I/O thread does not survive fork(): in the child, a handle made before the fork would
wait for ever for a thread that is not there. So every handle remembers its process, and a call
from another one raises relock.errors.WouldDeadlock at once; a child makes its own Client.
"""

from __future__ import annotations

import os
from typing import Any

from .errors import WouldDeadlock

_pid = os.getpid()


def _after_fork_in_child() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_after_fork_in_child)


class ProcessBound:
    """Holds a handle of the C++ core as ``_impl``, for the process that made it."""

    _bound_core: Any
    _bound_pid: int

    def _bind(self, core: Any) -> None:
        self._bound_core = core
        self._bound_pid = _pid

    @property
    def _impl(self) -> Any:
        if self._bound_pid != _pid:
            raise WouldDeadlock(f"this {type(self).__name__} was made in process "
                                f"{self._bound_pid}, before fork(): make a new Client in this "
                                "process")
        return self._bound_core
