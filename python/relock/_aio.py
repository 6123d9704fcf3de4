# SPDX-License-Identifier: Apache-2.0
"""How an asyncio caller awaits one operation of the C++ core.

``start(done)`` begins it; the core calls ``done(error, value)`` once, on relock's I/O thread,
and that hands the outcome to the event loop. A cancelled task stops the core's wait (a stop
request) and goes on being cancelled at once; whatever the operation got anyway (a lock granted
in the same instant) is given to ``undo`` when it ends, so a cancelled acquire leaves no hold.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable


def _settle(future: asyncio.Future[Any], error: BaseException | None, value: Any) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


async def operation(start: Callable[[Callable[[Any, Any], None]], Any],
                    undo: Callable[[Any], None] | None = None) -> Any:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def done(error: BaseException | None, value: Any) -> None:  # relock's I/O thread
        try:
            loop.call_soon_threadsafe(_settle, future, error, value)
        except RuntimeError:  # the loop is closed: nobody is left to hear it
            pass

    handle = start(done)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        handle.cancel()

        def after(ended: asyncio.Future[Any]) -> None:
            if ended.exception() is None and undo is not None and ended.result():
                undo(ended.result())

        future.add_done_callback(after)
        raise


def ignore(error: BaseException | None, value: Any) -> None:
    """A ``done`` for an operation nobody waits for (an undo's release)."""


async def in_executor(function: Any, *args: Any) -> Any:
    """A call of one round trip (a query) in the loop's default executor."""
    return await asyncio.get_running_loop().run_in_executor(
        None, functools.partial(function, *args))
