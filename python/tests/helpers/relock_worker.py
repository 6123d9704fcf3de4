# SPDX-License-Identifier: Apache-2.0
"""A relock-python process for the tests that cross process boundaries (test_interop.py,
test_processes.py). It speaks one JSON line per event on stdout and exits when its stdin
closes, so it never outlives the test that started it (even a killed pytest).

    relock_worker.py count URL NAME KEY N            N read-modify-writes of KEY under NAME
    relock_worker.py hold  URL NAME [--watchdog-lease S] [--lease S]   take NAME, keep it
    relock_worker.py wait  URL NAME [--kind lock|fair]                 acquire() until Ctrl-C
    relock_worker.py exit  URL NAME THREADS    hold NAME, THREADS daemon threads wait for it;
                                               when stdin closes, the interpreter exits normally
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import threading
import time

import relock


def say(**event: object) -> None:
    print(json.dumps(event), flush=True)


def exit_when_stdin_closes() -> None:
    # A watcher thread, so the main thread may be blocked in acquire(): os._exit skips the
    # atexit close, as a crash would. It reads the raw fd: a daemon thread inside sys.stdin's
    # buffer lock aborts the interpreter's shutdown.
    def watch() -> None:
        while os.read(0, 4096):
            pass
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


def resp(sock: socket.socket, reader, *args: str):
    """One command on a raw RESP2 connection (the test needs no Redis client library)."""
    parts = [a.encode() for a in args]
    sock.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
    line = reader.readline()
    if line[:1] == b"$":
        n = int(line[1:-2])
        return None if n < 0 else reader.read(n + 2)[:-2].decode()
    if line[:1] == b"-":
        raise RuntimeError(line.decode().strip())
    return line[1:-2].decode()


def count(args: argparse.Namespace) -> None:
    host, port = args.url.removeprefix("redis://").split(":")
    lock = relock.Client(args.url).lock(args.name)
    intervals = []
    say(event="ready")
    with socket.create_connection((host, int(port))) as sock:
        reader = sock.makefile("rb")
        for _ in range(args.n):
            with lock:
                start = time.monotonic_ns()  # CLOCK_MONOTONIC, as Java's nanoTime
                value = int(resp(sock, reader, "GET", args.key) or 0)
                time.sleep(0.001)  # widens the race a missing lock would lose
                resp(sock, reader, "SET", args.key, str(value + 1))
                intervals.append([start, time.monotonic_ns()])
    say(event="counted", intervals=intervals)


def hold(args: argparse.Namespace) -> None:
    client = relock.Client(args.url, watchdog_lease=args.watchdog_lease)
    lock = client.lock(args.name)
    assert lock.acquire(lease=args.lease)
    say(event="held", field=lock.owner_field(), at_ns=time.monotonic_ns())
    while True:  # until SIGKILL (or stdin closes)
        time.sleep(60)


def wait(args: argparse.Namespace) -> None:
    client = relock.Client(args.url)
    lock = client.fair_lock(args.name) if args.kind == "fair" else client.lock(args.name)
    say(event="waiting", field=lock.owner_field())
    try:
        lock.acquire()
        say(event="acquired")
    except KeyboardInterrupt:
        say(event="interrupted", at_ns=time.monotonic_ns(), held=lock.held(),
            hold_count=lock.hold_count())
    # The client stays open (its watchdog would keep anything the interrupted wait left held)
    # until the test closes stdin.
    while True:
        time.sleep(60)


def exit_while_waiting(args: argparse.Namespace) -> None:
    client = relock.Client(args.url)
    assert client.lock(args.name).acquire()

    def wait() -> None:
        try:
            client.lock(args.name).acquire()
        except relock.errors.Cancelled:
            pass  # the exit closes the client: every wait under way ends so

    for _ in range(args.threads):
        threading.Thread(target=wait, daemon=True).start()
    say(event="waiting")
    while os.read(0, 4096):
        pass
    # Returns with the daemon threads still in acquire(): the atexit close ends their waits
    # while the interpreter shuts down.


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("count")
    c.add_argument("url")
    c.add_argument("name")
    c.add_argument("key")
    c.add_argument("n", type=int)
    h = sub.add_parser("hold")
    h.add_argument("url")
    h.add_argument("name")
    h.add_argument("--watchdog-lease", type=float, default=None)
    h.add_argument("--lease", type=float, default=None)
    w = sub.add_parser("wait")
    w.add_argument("url")
    w.add_argument("name")
    w.add_argument("--kind", choices=["lock", "fair"], default="lock")
    e = sub.add_parser("exit")
    e.add_argument("url")
    e.add_argument("name")
    e.add_argument("threads", type=int)
    args = parser.parse_args()
    if args.mode == "exit":
        exit_while_waiting(args)
        return
    exit_when_stdin_closes()
    {"count": count, "hold": hold, "wait": wait}[args.mode](args)


if __name__ == "__main__":
    main()
