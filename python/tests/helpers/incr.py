# SPDX-License-Identifier: Apache-2.0
"""One non-atomic increment of a Redis counter: GET, a pause, SET. `relock run` runs it under
the lock (test_interop.py); it prints when it read and wrote, on CLOCK_MONOTONIC, so the test
can check that no two holders overlapped. Standard library only: it starts with -I -S, fast.

    incr.py PORT KEY
"""

import socket
import sys
import time


def main() -> None:
    port, key = int(sys.argv[1]), sys.argv[2].encode()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        reader = sock.makefile("rb")

        def command(*parts: bytes) -> bytes:
            sock.sendall(b"*%d\r\n" % len(parts)
                         + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
            line = reader.readline()
            if line[:1] == b"-":
                raise SystemExit(f"redis: {line.decode().strip()}")
            if line[:1] == b"$":
                n = int(line[1:-2])
                return b"" if n < 0 else reader.read(n + 2)[:-2]
            return line

        start = time.monotonic_ns()
        value = int(command(b"GET", key) or b"0")
        time.sleep(0.001)  # widens the race a missing lock would lose
        command(b"SET", key, b"%d" % (value + 1))
        print(f"{start} {time.monotonic_ns()}", flush=True)


main()
