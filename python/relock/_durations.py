# SPDX-License-Identifier: Apache-2.0
"""Durations as the C++ core takes them: float seconds, or None."""

from __future__ import annotations

import datetime
import math

from .errors import InvalidArgument

Duration = float | int | datetime.timedelta


def seconds(value: Duration | None, what: str) -> float | None:
    """``value`` (seconds, or a timedelta) as float seconds; None stays None."""
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgument(f"{what} must be seconds (int, float) or a timedelta, not "
                              f"{type(value).__name__}")
    value = float(value)
    if math.isnan(value) or value < 0:
        raise InvalidArgument(f"{what} must not be negative; got {value}")
    return value


def wait_of(blocking: bool, timeout: Duration | None) -> tuple[float | None, bool]:
    """threading.Lock.acquire's (blocking, timeout) as (wait, forever) for the core.

    blocking=False tries once (a timeout is then an error, as in threading); timeout -1 or None
    waits for ever; another timeout waits at most that long.
    """
    if not blocking:
        if timeout is not None and timeout != -1:
            raise InvalidArgument("can't specify a timeout for a non-blocking call")
        return None, False
    if timeout is None or (not isinstance(timeout, datetime.timedelta) and timeout == -1):
        return None, True
    return seconds(timeout, "timeout"), False
