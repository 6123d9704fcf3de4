#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Shows what a Redisson version actually sends to Redis for each lock operation.

Starts throwaway redis-server processes on free loopback ports (a single server, or a 3-master
cluster with --cluster), records MONITOR on each, drives the Redisson driver jar through a fixed
scenario (lock, re-lock, watchdog renewal, contention with a waiter, unlock, forceUnlock, lease
locks, and with --all the fair, read/write and fenced locks), and prints the transcript with
"=== step" markers. Servers are stopped by their recorded PIDs.

    tests/interop/redisson/observe.py target/relock-redisson-driver-4.7.0.jar [--cluster] [--all]

Used to write the "Differences between Redisson versions" section of tests/interop/README.md.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    if port > 55000:  # cluster bus port = port + 10000 must stay valid
        return free_port()
    return port


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
                          capture_output=True, text=True, timeout=30).stdout


class Servers:
    def __init__(self, cluster):
        self.dir = tempfile.mkdtemp(prefix="relock-observe-")
        self.procs = []
        self.ports = []
        for _ in range(3 if cluster else 1):
            port = free_port()
            d = os.path.join(self.dir, str(port))
            os.makedirs(d)
            args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                    "--appendonly", "no", "--dir", d]
            if cluster:
                args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            log = open(os.path.join(d, "log"), "w")
            self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
            self.ports.append(port)
        for port in self.ports:
            for _ in range(100):
                if redis_cli(port, "PING").strip() == "PONG":
                    break
                time.sleep(0.05)
        if cluster:
            subprocess.run(["redis-cli", "--cluster", "create",
                            *[f"127.0.0.1:{p}" for p in self.ports],
                            "--cluster-replicas", "0", "--cluster-yes"],
                           capture_output=True, text=True, timeout=60, check=True)
            for _ in range(100):
                if "cluster_state:ok" in redis_cli(self.ports[0], "CLUSTER", "INFO"):
                    break
                time.sleep(0.1)
            time.sleep(1)

    def stop(self):
        for p in self.procs:  # by recorded PID only
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Driver:
    def __init__(self, jar, url, watchdog_ms, extra):
        self.p = subprocess.Popen(["java", "-jar", jar, "--url", url, "--watchdog-ms",
                                   str(watchdog_ms), *extra],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  bufsize=1)
        self.ready = json.loads(self.p.stdout.readline())
        if self.ready.get("event") != "ready":
            raise RuntimeError(f"driver did not start: {self.ready}")
        self.replies = {}
        self.cv = threading.Condition()
        self.n = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            j = json.loads(line)
            with self.cv:
                self.replies[j["id"]] = j
                self.cv.notify_all()

    def send(self, owner, cmd):
        self.n += 1
        i = f"c{self.n}"
        self.p.stdin.write(f"{i} {owner} {cmd}\n")
        self.p.stdin.flush()
        return i

    def wait(self, i, timeout=30):
        with self.cv:
            self.cv.wait_for(lambda: i in self.replies, timeout)
            r = self.replies.pop(i)
        shown = r.get("result") if r["ok"] else "ERROR " + r["error"]
        print(f"#   {r['owner']} {r['cmd']} -> {json.dumps(shown)}", flush=True)
        return r

    def call(self, owner, cmd):
        return self.wait(self.send(owner, cmd))

    def close(self):
        self.p.stdin.write("x - exit\n")
        self.p.stdin.flush()
        self.p.wait(20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jar")
    ap.add_argument("--cluster", action="store_true", help="3-master Redis Cluster")
    ap.add_argument("--all", action="store_true", help="also fair, read/write and fenced locks")
    ap.add_argument("--watchdog-ms", type=int, default=3000)
    ap.add_argument("--keep-pings", action="store_true")
    ap.add_argument("--timestamps", action="store_true", help="keep MONITOR's time stamps")
    args = ap.parse_args()

    servers = Servers(args.cluster)
    monitors = []
    try:
        for port in servers.ports:
            redis_cli(port, "SCRIPT", "FLUSH")
            out = tempfile.NamedTemporaryFile("w+", delete=False,
                                              dir=servers.dir, suffix=f".{port}.monitor")
            m = subprocess.Popen(["redis-cli", "-h", "127.0.0.1", "-p", str(port), "MONITOR"],
                                 stdout=out, stderr=subprocess.DEVNULL)
            monitors.append((port, m, out))
        time.sleep(0.3)

        def mark(text):
            print(f"# === {text}", flush=True)
            for port in servers.ports:
                redis_cli(port, "ECHO", f"=== {text}")

        extra = []
        if args.cluster:
            extra = ["--cluster", ",".join(f"127.0.0.1:{p}" for p in servers.ports[1:])]
        d = Driver(args.jar, f"redis://127.0.0.1:{servers.ports[0]}", args.watchdog_ms, extra)
        print(f"# driver ready: {json.dumps(d.ready)}", flush=True)
        wd = args.watchdog_ms / 1000.0

        mark("threadid")
        d.call("a", "threadid")
        d.call("b", "threadid")
        mark("lock (no lease: watchdog)")
        d.call("a", "lock L")
        mark("re-lock (re-entry)")
        d.call("a", "lock L")
        mark("queries: holdcount, remainttl, isheld, islocked")
        for owner, cmd in [("a", "holdcount L"), ("a", "remainttl L"), ("a", "isheld L"),
                           ("b", "isheld L"), ("b", "islocked L")]:
            d.call(owner, cmd)
        mark(f"watchdog renewals (sleep {wd * 0.8:.1f} s; renewal every watchdog/3)")
        time.sleep(wd * 0.8)
        mark("b trylock L 0 (fails)")
        d.call("b", "trylock L 0")
        mark("b unlock L (not the owner)")
        d.call("b", "unlock L")
        mark("b trylock L 5000 waits; a unlocks twice; b gets it")
        i = d.send("b", "trylock L 5000")
        time.sleep(0.5)
        d.call("a", "unlock L")
        d.call("a", "unlock L")
        d.wait(i)
        mark("a forceunlock L (held by b), then again (absent)")
        d.call("a", "forceunlock L")
        d.call("a", "forceunlock L")
        mark("lease lock M 5000, re-lock with lease, partial and full unlock")
        d.call("a", "lock M 5000")
        time.sleep(0.5)
        d.call("a", "lock M 5000")
        d.call("a", "unlock M")
        d.call("a", "unlock M")
        mark("several locks of two owners renewed (batching)")
        d.call("a", "lock X1")
        d.call("a", "lock X2")
        d.call("b", "lock X3")
        time.sleep(wd * 0.5)
        d.call("a", "unlock X1")
        d.call("a", "unlock X2")
        d.call("b", "unlock X3")
        if args.all:
            mark("fair lock: a holds, b waits, a unlocks")
            d.call("a", "lock fair:F")
            i = d.send("b", "trylock fair:F 3000")
            time.sleep(0.5)
            d.call("a", "unlock fair:F")
            d.wait(i)
            d.call("b", "unlock fair:F")
            mark("fair lock: b gives up waiting")
            d.call("a", "lock fair:G")
            d.call("b", "trylock fair:G 300")
            d.call("a", "unlock fair:G")
            mark("read locks shared by a and b")
            d.call("a", "lock read:RW")
            d.call("b", "lock read:RW")
            time.sleep(wd * 0.5)
            d.call("a", "unlock read:RW")
            d.call("b", "unlock read:RW")
            mark("write lock, downgrade to read")
            d.call("a", "lock write:RW")
            d.call("a", "lock read:RW")
            d.call("a", "unlock write:RW")
            d.call("a", "unlock read:RW")
            mark("fenced lock")
            d.call("a", "lockandgettoken fenced:FE")
            d.call("a", "lockandgettoken fenced:FE")
            d.call("a", "gettoken fenced:FE")
            d.call("a", "unlock fenced:FE")
            d.call("a", "unlock fenced:FE")
        mark("end")
        d.close()
        time.sleep(0.3)
    finally:
        for port, m, out in monitors:
            if m.poll() is None:
                os.kill(m.pid, signal.SIGTERM)
                m.wait()
        for port, m, out in monitors:
            out.flush()
            out.seek(0)
            print(f"\n######## MONITOR 127.0.0.1:{port}")
            for line in out:
                line = line.rstrip("\n")
                if not args.keep_pings and line.endswith('"PING"'):
                    continue
                # "1795392034.593433 [0 127.0.0.1:43740] ..." -> "[0 127.0.0.1:43740] ..."
                parts = line.split(" ", 1)
                strip = not args.timestamps and len(parts) == 2 and parts[0][:1].isdigit()
                print(parts[1] if strip else line)
        servers.stop()


if __name__ == "__main__":
    sys.exit(main())
