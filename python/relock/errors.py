# SPDX-License-Identifier: Apache-2.0
"""relock's errors: one class per error code of the C++ library (relock::errc).

Every class derives from :class:`Error`; where Python has a built-in class for the same
meaning, the relock class derives from it too, so ``except TimeoutError`` or
``except ValueError`` catch what they should.
"""

from __future__ import annotations


class Error(Exception):
    """A relock operation failed. ``code`` is relock::errc's number (0: not one of them)."""

    code: int = 0

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(Error, ValueError):
    """Refused before any I/O: a bad name, duration or setting."""

    code = 1


class NotOwner(Error, RuntimeError):
    """A release by an owner that holds nothing (threading.Lock raises RuntimeError)."""

    code = 2


class CommandTimeout(Error, TimeoutError):
    """Redis did not answer a command within the client's command_timeout."""

    code = 3


class LockLost(Error):
    """The hold was found gone: its key deleted or expired, its field removed."""

    code = 4


class ConnectionFailed(Error, ConnectionError):
    """Could not connect, or the connection broke under a command."""

    code = 5


class AuthFailed(Error, PermissionError):
    """The server refused the credentials (AUTH, NOAUTH, WRONGPASS)."""

    code = 6


class ServerError(Error):
    """The server answered with an error reply; the message is its text."""

    code = 7


class WrongType(Error):
    """The name holds another Redis type, or data that is not this kind of object."""

    code = 8


class NonReentrant(Error, RuntimeError):
    """A non-reentrant lock was taken again by its owner."""

    code = 9


class Cancelled(Error):
    """The wait was cancelled, or the client closed under it."""

    code = 10


class WouldDeadlock(Error, RuntimeError):
    """A blocking call from relock's own I/O thread, or a read-to-write upgrade."""

    code = 11


class RenewalFailed(LockLost):
    """No renewal reached Redis before the hold's validity deadline: the hold is lost."""

    code = 12


class NoSyncedReplicas(Error):
    """Replica sync is on and no replica acknowledged the write in time."""

    code = 13


class NotInitialized(Error):
    """A semaphore whose name holds nothing: no permits were ever set."""

    code = 14


class NoPermission(Error, PermissionError):
    """The server's ACL denies this user a command, key or channel (NOPERM)."""

    code = 15


class NotAcquired(Error, TimeoutError):
    """A wait that had to succeed ran out of time with the object held elsewhere."""

    code = 16


_BY_CODE: dict[int, type[Error]] = {
    cls.code: cls
    for cls in (
        InvalidArgument, NotOwner, CommandTimeout, LockLost, ConnectionFailed, AuthFailed,
        ServerError, WrongType, NonReentrant, Cancelled, WouldDeadlock, RenewalFailed,
        NoSyncedReplicas, NotInitialized, NoPermission, NotAcquired,
    )
}


def from_code(code: int, message: str) -> Error:
    """The exception for relock::errc ``code`` (the C++ module raises through this)."""
    return _BY_CODE.get(code, Error)(message)


__all__ = ["Error", "from_code"] + [cls.__name__ for cls in _BY_CODE.values()]
