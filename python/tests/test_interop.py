# SPDX-License-Identifier: Apache-2.0
"""One lock shared three ways: relock-python, the relock CLI (C++) and the real Redisson 4.7.0.

The binaries come from ./scripts/setup: RELOCK_CLI (default build/relock) and
RELOCK_REDISSON_JAR (default tests/interop/redisson/target/relock-redisson-driver-4.7.0.jar),
java from RELOCK_JAVA or PATH. Missing ones fail the test: the interop suite never skips.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPERS = Path(__file__).resolve().parent / "helpers"
REDISSON_VERSION = "4.7.0"


def required_file(variable: str, default: Path, what: str) -> str:
    path = Path(os.environ.get(variable) or default)
    if not path.is_file():
        pytest.fail(f"{what} not found at {path} ({variable}): ./scripts/setup builds it")
    return str(path)


def java_binary() -> str:
    java = os.environ.get("RELOCK_JAVA") or shutil.which("java")
    if not java:
        pytest.fail("java not found (RELOCK_JAVA, PATH): the Redisson driver needs a JDK 17+; "
                    "./scripts/setup installs one")
    return java


class RedissonDriver:
    """The interop suite's Java driver (tests/interop/README.md, "Protocol"), as the C++ tests'
    relock::test::redisson_driver runs it: commands `ID OWNER CMD ARGS...` on stdin, one JSON
    reply per command on stdout. Its stdin closing makes it exit, so it never outlives us."""

    def __init__(self, jar: str, url: str, watchdog_ms: int = 30_000) -> None:
        self.process = subprocess.Popen(
            [java_binary(), "-jar", jar, "--url", url, "--watchdog-ms", str(watchdog_ms)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._replies: dict[str, dict[str, Any]] = {}
        self._arrived = threading.Condition()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        try:
            ready = self._events.get(timeout=30)
        except queue.Empty:
            ready = {"event": "error", "error": "no ready line within 30 s"}
        if ready.get("event") != "ready":
            self.close()
            pytest.fail(f"the Redisson driver {jar} did not start: {ready}")
        self.version = ready["redisson_version"]

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not a protocol line; the driver's stderr carries its noise
            if "event" in message:
                self._events.put(message)
            else:
                with self._arrived:
                    self._replies[message["id"]] = message
                    self._arrived.notify_all()
        self._events.put({"event": "error", "error": f"exited {self.process.wait()}"})
        with self._arrived:
            self._arrived.notify_all()

    def send(self, owner: str, command: str) -> str:
        self._next += 1
        request = f"r{self._next}"
        assert self.process.stdin is not None
        self.process.stdin.write(f"{request} {owner} {command}\n")
        self.process.stdin.flush()
        return request

    def reply(self, request: str, timeout: float) -> Any:
        with self._arrived:
            if not self._arrived.wait_for(
                    lambda: request in self._replies or self.process.poll() is not None, timeout):
                pytest.fail(f"no reply from the Redisson driver to {request} within {timeout} s")
            answer = self._replies.pop(request, None)
        if answer is None:
            pytest.fail(f"the Redisson driver died before answering {request}")
        if not answer["ok"]:
            pytest.fail(f"Redisson: {answer['cmd']} failed: {answer['error']}")
        return answer["result"]

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()  # EOF: the driver shuts Redisson down and exits
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def test_one_lock_shared_by_python_the_cli_and_redisson_keeps_a_counter_exact(server, name):
    cli = required_file("RELOCK_CLI", ROOT / "build" / "relock", "the relock CLI")
    jar = required_file(
        "RELOCK_REDISSON_JAR",
        ROOT / "tests" / "interop" / "redisson" / "target"
        / f"relock-redisson-driver-{REDISSON_VERSION}.jar",
        "the Redisson driver jar")
    n = 50
    key = f"{name}:counter"
    java = RedissonDriver(jar, server.url)  # first: the JVM takes a second or two to start
    python = None
    stop = threading.Event()  # ends the relock run loop early when the test fails
    try:
        assert java.version == REDISSON_VERSION
        python = subprocess.Popen(
            [sys.executable, str(HELPERS / "relock_worker.py"), "count", server.url, name, key,
             str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert python.stdout is not None
        ready = python.stdout.readline()  # connected: all three start within milliseconds
        assert json.loads(ready or "{}").get("event") == "ready", f"the Python side: {ready!r}"
        # Redisson: n times lock(); GET; 1 ms; SET +1; unlock() (RLock, StringCodec).
        java_loop = java.send("a", f"incloop lock:{name} {key} {n} 1000")
        # The C++ side: n `relock run` processes, one after another, each running one
        # increment under the lock.
        cli_runs: list[subprocess.CompletedProcess[str]] = []

        def run_cli() -> None:
            for _ in range(n):
                if stop.is_set():
                    return
                cli_runs.append(subprocess.run(
                    [cli, "--url", server.url, "run", name, "--", sys.executable, "-I", "-S",
                     str(HELPERS / "incr.py"), str(server.port), key],
                    stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30))
        cli_thread = threading.Thread(target=run_cli)
        cli_thread.start()

        java_intervals = java.reply(java_loop, timeout=60)["intervals"]
        cli_thread.join(60)
        assert not cli_thread.is_alive(), "the relock run loop did not end within 60 s"
        out, _ = python.communicate(timeout=60)
        assert python.returncode == 0, out
    finally:
        stop.set()
        if python is not None and python.poll() is None:
            python.kill()
            python.wait()
        java.close()

    for run in cli_runs:
        assert run.returncode == 0, f"relock run: exit {run.returncode}: {run.stderr}"
    assert len(cli_runs) == n
    assert server.command("GET", key) == str(3 * n)  # exact: no increment lost

    # Every critical section on one clock (CLOCK_MONOTONIC: Java's nanoTime, Python's
    # monotonic_ns): none overlaps another, and the three sides took turns.
    sections = sorted(
        [(s, e, "python") for s, e in json.loads(out.splitlines()[-1])["intervals"]]
        + [(s, e, "redisson") for s, e in java_intervals]
        + [(*map(int, run.stdout.split()), "cli") for run in cli_runs])
    assert len(sections) == 3 * n
    for before, after in zip(sections, sections[1:]):
        assert after[0] >= before[1], f"two holders at once: {before} and {after}"
    turns = sum(1 for before, after in zip(sections, sections[1:]) if before[2] != after[2])
    print(f"{turns} hand-overs between languages in {len(sections)} sections over "
          f"{(sections[-1][1] - sections[0][0]) / 1e9:.2f} s")
    for side in ("python", "redisson", "cli"):
        mine = [i for i, section in enumerate(sections) if section[2] == side]
        others = {section[2] for section in sections[mine[0]:mine[-1]]}
        assert len(others) == 3, f"{side} never contended with every other side: {others}"
    server.command("DEL", key)
