# SPDX-License-Identifier: Apache-2.0
"""The pytest suite's fixtures: real Redis servers started here, on free loopback ports, in
temp dirs, stopped by PID (and by the kernel, PR_SET_PDEATHSIG, if pytest dies first)."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

import relock

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resp(port: int, *args: Any, timeout: float = 3.0) -> Any:
    """One command to the server on ``port``, its reply decoded (a minimal RESP2 client, so the
    tests need no Redis client library of their own)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        parts = [str(a).encode() if not isinstance(a, bytes) else a for a in args]
        s.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        reader = s.makefile("rb")
        return _read(reader)


def _read(reader: Any) -> Any:
    line = reader.readline()
    if not line:
        raise ConnectionError("the server closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = reader.read(n + 2)[:-2]
        return data.decode(errors="replace")
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read(reader) for _ in range(n)]
    raise RuntimeError(f"unexpected reply {line!r}")


class Server:
    """One redis-server (or valkey-server: RELOCK_TEST_SERVER_BINARY) of the suite's own."""

    def __init__(self, directory: Path, extra: list[str] | None = None) -> None:
        binary = os.environ.get("RELOCK_TEST_SERVER_BINARY", "redis-server")
        for _ in range(5):  # a port taken between free_port() and the bind: another one
            self.port = free_port()
            self.process = subprocess.Popen(
                [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(directory), *(extra or [])],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent)
            if self._wait_ready(10.0):
                return
            self.stop()
        raise RuntimeError(f"{binary} did not start")

    def _wait_ready(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if resp(self.port, "PING") == "PONG":
                    return True
            except RuntimeError as refusal:  # it answers: up, behind a password
                return "NOAUTH" in str(refusal)
            except OSError:
                time.sleep(0.02)
        return False

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def command(self, *args: Any) -> Any:
        return resp(self.port, *args)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The suite's one server, shared: every test uses names of its own."""
    s = Server(tmp_path_factory.mktemp("redis"))
    yield s
    s.stop()


@pytest.fixture
def url(server: Server) -> str:
    return server.url


@pytest.fixture
def client(url: str) -> Iterator[relock.Client]:
    c = relock.Client(url)
    yield c
    c.close()


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    """A name no other test uses."""
    return f"py:{request.node.name}:{uuid.uuid4().hex[:8]}"


def wait_until(condition: Any, seconds: float = 10.0, what: str = "the condition") -> None:
    """Polls ``condition`` until it is true; fails the test at the deadline."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not hold within {seconds} s")
        time.sleep(0.01)
