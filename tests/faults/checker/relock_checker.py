#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Judges a fault run's whole history against what a lock promises.

Every process of a run (workers, the nemesis) leaves a JSON Lines file of events in the run's
directory; the harness adds register.json, the state of the fenced register the locks protect.
The format is tests/faults/HISTORY.md. Per lock name this checks:

  1. no fencing token is granted twice (within a token epoch);
  2. real-time order: an acquire that completed before another began has the smaller token;
  3. belief exclusion: the hold intervals of different owners never overlap (readers may share);
  4. the fenced register never accepted a lower token after a higher one, and each write it
     refused is explained by a logged fault;
  5. no lost update: every acknowledged write is in the register's state exactly once;
  6. no lost wake-up: a wait ends by its own deadline, and a waiter present at a release is not
     left sleeping on a free lock.

A violation that a logged fault can explain (an external DEL of the lock's key, a data loss, the
writer's own process stopped) is counted apart, as explained; only unexplained ones fail the run.
Everything is sorted once and swept, so a run of 100,000 acquisitions takes seconds.
"""

import argparse
import bisect
import glob
import json
import os
import sys
from collections import defaultdict

# Faults that can legitimately end a hold behind its holder's back, or lose data.
BREAKING = {"del", "pexpire", "evict", "restart_no_persist", "failover_unsynced"}
# Faults that start a new token epoch: the counter itself may have gone back.
EPOCH = {"restart_no_persist", "failover_unsynced"}
CHECK_NAMES = {
    "1": "no token granted twice",
    "2": "tokens follow real-time order",
    "3": "hold intervals never overlap",
    "4": "the fenced register never goes back, refusals explained",
    "5": "no lost update",
    "6": "no lost wake-up",
}


class InputError(Exception):
    pass


# ---------------------------------------------------------------- reading


def read_events(run_dir):
    """Every event of the run, sorted by time, and the number of torn last lines skipped."""
    events, torn = [], 0
    for path in sorted(glob.glob(os.path.join(run_dir, "*.jsonl"))):
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for i, line in enumerate(lines):
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                if i == len(lines) - 1:
                    torn += 1  # a process killed in mid-write
                else:
                    raise InputError(f"{path}:{i + 1}: not JSON: {line[:80]!r}")
    events.sort(key=lambda e: e["t"])
    return events, torn


def read_register(run_dir):
    path = os.path.join(run_dir, "register.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: {e}")


# ---------------------------------------------------------------- model


class Fault:
    def __init__(self, kind, target, names, start, end):
        self.kind, self.target, self.names = kind, target, names
        self.start, self.end = start, end

    def touches(self, name):
        return not self.names or name in self.names

    def overlaps(self, lo, hi):
        return self.start <= hi and self.end >= lo


class Hold:
    """One owner's acquisition, from invoke to release."""

    def __init__(self, owner, name, kind, process):
        self.owner, self.name, self.kind, self.process = owner, name, kind, process
        self.invoke = self.ok = self.done = None
        self.wait_until = None
        self.token = None
        self.valid_until = None
        self.release = None  # release invoke
        self.release_ok = None
        self.lost = None
        self.err = None

    def belief_end(self, death, history_end):
        ends = [history_end]
        for t in (self.release, self.lost, self.valid_until, death):
            if t is not None:
                ends.append(t)
        return min(ends)


def build(events):
    holds = {}
    faults, open_faults = Faults(), {}
    deaths = defaultdict(list)  # process -> kill times
    writes = []
    history_end = events[-1]["t"] if events else 0
    for e in events:
        op, ph = e.get("op"), e.get("ph")
        if op == "fault":
            key = (e["fault"], e.get("target"), tuple(e.get("names") or []))
            if ph == "start":
                f = Fault(e["fault"], e.get("target"), set(e.get("names") or []), e["t"], e["t"])
                faults.append(f)
                open_faults[key] = f
                if e["fault"] == "kill":
                    deaths[e.get("target")].append(e["t"])
            elif ph == "end" and key in open_faults:
                open_faults.pop(key).end = e["t"]
            continue
        owner = e.get("owner")
        if op == "acquire":
            if ph == "invoke":
                h = holds[owner] = Hold(owner, e["name"], e.get("kind"), e["p"])
                h.invoke, h.wait_until = e["t"], e.get("wait_until")
            elif owner in holds:
                h = holds[owner]
                h.done = e["t"]
                if ph == "ok":
                    h.ok, h.token, h.valid_until = e["t"], e.get("token"), e.get("valid_until")
                else:
                    h.err = e.get("err")
        elif op == "valid" and owner in holds:
            holds[owner].valid_until = max(holds[owner].valid_until or 0, e["valid_until"])
        elif op == "release" and owner in holds:
            if ph == "invoke":
                holds[owner].release = e["t"]
            elif ph == "ok":
                holds[owner].release_ok = e["t"]
        elif op == "lost" and owner in holds:
            if holds[owner].lost is None:
                holds[owner].lost = e["t"]
        elif op == "write":
            writes.append(e)
    # A start whose end never came lasts to the end of the history (durations only: the kinds
    # logged without an end are instants).
    for f in open_faults.values():
        if f.kind not in INSTANT:
            f.end = history_end
    return holds, faults, deaths, writes, history_end


INSTANT = {"kill", "del", "pexpire", "client_kill", "proxy_reset", "restart_no_persist"}


def death_of(deaths, process, after):
    """The first kill of `process` at or after `after`."""
    times = deaths.get(process, [])
    i = bisect.bisect_left(times, after)
    return times[i] if i < len(times) else None


class Faults(list):
    """The run's faults, with each name's epoch boundaries worked out once."""

    def __init__(self):
        super().__init__()
        self.epoch_starts = {}


def epoch_of(name, t, faults):
    """How many epoch-starting faults on `name` came at or before `t`."""
    starts = faults.epoch_starts.get(name)
    if starts is None:
        starts = sorted(f.start for f in faults if f.kind in EPOCH and f.touches(name))
        faults.epoch_starts[name] = starts
    return bisect.bisect_right(starts, t)


def nearby(name, lo, hi, faults, t0, margin_ns=2_000_000_000):
    """The faults on `name` within `margin_ns` of [lo, hi], for a violation's example: what was
    going on around it, when no fault explained it."""
    near = [f for f in faults if f.touches(name) and f.overlaps(lo - margin_ns, hi + margin_ns)]
    if not near:
        return "; no fault within 2 s"
    shown = ", ".join(f"{f.kind}@{ms(f.start, t0)}"
                      + (f"..{ms(f.end, t0)}" if f.end > f.start else "") for f in near[:6])
    return f"; faults within 2 s: {shown}" + (f" and {len(near) - 6} more" if len(near) > 6 else "")


def breaking_between(name, lo, hi, faults):
    return [f for f in faults if f.kind in BREAKING and f.touches(name) and f.overlaps(lo, hi)]


# ---------------------------------------------------------------- checks


class Result:
    def __init__(self, max_examples):
        self.max_examples = max_examples
        self.checks = {k: {"name": v, "violations": 0, "explained": 0, "explained_by": {},
                           "examples": []} for k, v in CHECK_NAMES.items()}
        self.not_checked = set()

    def violation(self, check, text):
        c = self.checks[check]
        c["violations"] += 1
        if len(c["examples"]) < self.max_examples:
            c["examples"].append(text)

    def judge(self, check, faults, text):
        """Explained by `faults` when there are any, else a violation described by `text()`."""
        if faults:
            self.explained(check, faults)
        else:
            self.violation(check, text())

    def explained(self, check, faults):
        c = self.checks[check]
        c["explained"] += 1
        for kind in {f.kind for f in faults}:
            c["explained_by"][kind] = c["explained_by"].get(kind, 0) + 1


def ms(t, t0):
    return f"{(t - t0) / 1e6:.1f} ms"


def check_tokens(by_name, faults, res, t0):
    """Checks 1 and 2 over the fenced acquisitions of each name."""
    for name, hs in by_name.items():
        fenced = [h for h in hs if h.ok is not None and h.token is not None]
        seen = {}
        # An acquisition's epoch is the one it was asked in: a grant by the old server may be
        # heard just after the data loss.
        for h in sorted(fenced, key=lambda h: h.ok):
            key = (epoch_of(name, h.invoke, faults), h.token)
            if key in seen:
                first = seen[key]
                res.judge("1", breaking_between(name, first.invoke, h.ok, faults),
                          lambda: f"{name}: token {h.token} granted to {first.owner} at "
                                  f"{ms(first.ok, t0)} and to {h.owner} at {ms(h.ok, t0)}"
                                  + nearby(name, first.invoke, h.ok, faults, t0))
            else:
                seen[key] = h
        # 2: sweep by invoke time, knowing the largest token of every acquire completed before.
        completed = sorted(fenced, key=lambda h: h.ok)
        i, best = 0, {}  # epoch -> hold with the largest token completed so far
        for h in sorted(fenced, key=lambda h: h.invoke):
            while i < len(completed) and completed[i].ok < h.invoke:
                c = completed[i]
                ep = epoch_of(name, c.invoke, faults)
                if ep not in best or c.token > best[ep].token:
                    best[ep] = c
                i += 1
            ep = epoch_of(name, h.invoke, faults)
            prior = best.get(ep)
            if prior is not None and prior.owner != h.owner and prior.token >= h.token:
                res.judge("2", breaking_between(name, prior.invoke, h.ok, faults),
                          lambda: f"{name}: {prior.owner} got {prior.token} at "
                                  f"{ms(prior.ok, t0)}, yet {h.owner}, invoked later at "
                                  f"{ms(h.invoke, t0)}, got {h.token}"
                                  + nearby(name, prior.invoke, h.ok, faults, t0))


def check_exclusion(by_name, faults, deaths, history_end, res, t0):
    """Check 3: sort intervals by start; each must begin after the latest end of the others."""
    for name, hs in by_name.items():
        intervals = []
        for h in hs:
            if h.ok is None:
                continue
            end = h.belief_end(death_of(deaths, h.process, h.ok), history_end)
            if end > h.ok:
                intervals.append((h.ok, end, h))
        intervals.sort(key=lambda x: x[0])
        # The live interval reaching furthest, and for reads the furthest non-read one.
        furthest = None
        furthest_writer = None
        for start, end, h in intervals:
            rival = furthest_writer if h.kind == "read" else furthest
            if rival is not None and rival[1] > start and rival[2].owner != h.owner:
                other = rival[2]
                # The server granted each hold somewhere between its invoke and its ok, so the
                # one logged later may have been granted first (its reply slow, or its process
                # descheduled before it logged): whichever went first lost its key between the
                # earlier invoke and this ok. A fault in effect at any moment of that window
                # explains the overlap, an eviction window that opened before it too.
                lo = min(other.invoke, h.invoke)
                why = breaking_between(name, lo, start, faults)
                res.judge("3", why,
                          lambda: f"{name}: {h.owner} ({h.kind}, asked at {ms(h.invoke, t0)}) "
                                  f"acquired at {ms(start, t0)} while {other.owner} "
                                  f"({other.kind}, asked at {ms(other.invoke, t0)}) believed it "
                                  f"held it [{ms(other.ok, t0)}, {ms(rival[1], t0)})"
                                  + nearby(name, lo, start, faults, t0))
            if furthest is None or end > furthest[1]:
                furthest = (start, end, h)
            if h.kind != "read" and (furthest_writer is None or end > furthest_writer[1]):
                furthest_writer = (start, end, h)


def write_id(owner, seq):
    return f"{owner}#{seq}"


def check_register(writes, holds, faults, register, res, t0):
    """Checks 4 and 5."""
    if register is None:
        res.not_checked.update({"4", "5"})
        return
    names = register.get("names", {})
    by_key = {}
    for w in writes:
        by_key.setdefault((w.get("owner"), w.get("seq")), {})[w["ph"]] = w
    for name, reg in names.items():
        # 4a: accepted tokens never go back within an epoch.
        accepted = reg.get("accepted", [])
        last = None
        for token, owner, seq in accepted:
            w = by_key.get((owner, seq), {}).get("invoke")
            t = w["t"] if w else 0
            ep = epoch_of(name, t, faults)
            if last is not None and last[0] == ep and token < last[1]:
                why = breaking_between(name, last[2], t, faults)
                if why:
                    res.explained("4", why)
                else:
                    res.violation("4", f"{name}: the register accepted token {token} "
                                  f"({owner}#{seq}) after {last[1]}")
            last = (ep, token, t)
        in_accepted = defaultdict(int)
        for token, owner, seq in accepted:
            in_accepted[(owner, seq)] += 1
        value = defaultdict(int)
        for i in reg.get("value", []):
            value[i] += 1
        plain = defaultdict(int)
        for i in reg.get("plain", []):
            plain[i] += 1
        logged = set()
        for (owner, seq), phases in by_key.items():
            inv = phases.get("invoke")
            if inv is None or inv.get("name") != name:
                continue
            logged.add(write_id(owner, seq))
            ok, fail = phases.get("ok"), phases.get("fail")
            # The hold may have begun on the server as soon as its acquire was sent.
            h = holds.get(owner)
            since = h.invoke if h is not None else inv["t"]
            until = (ok or fail or inv)["t"]
            fenced = inv.get("token") is not None
            # 4b: a refused write needs a reason; 4c: an accepted one is logged once.
            if fenced and ok is not None and not ok.get("accepted"):
                # After a data loss the register still holds the old epoch's highest token.
                why = [f for f in faults if f.kind in EPOCH and f.touches(name)
                       and f.start <= until] + breaking_between(name, since, until, faults) + [
                    f for f in faults if f.kind == "pause" and f.target == inv["p"]
                    and f.overlaps(since, until)]
                if why:
                    res.explained("4", why)
                else:
                    res.violation("4", f"{name}: the register refused {owner}#{seq} (token "
                                  f"{inv['token']}) at {ms(until, t0)} and no fault explains it")
            if fenced and ok is not None and ok.get("accepted") and in_accepted[(owner, seq)] != 1:
                res.violation("4", f"{name}: accepted write {owner}#{seq} is in the register's "
                              f"log {in_accepted[(owner, seq)]} times")
            # 5: an acknowledged write is in the state exactly once.
            if ok is None or not ok.get("accepted"):
                continue
            state = value if fenced else plain
            count = state.get(write_id(owner, seq), 0)
            if count != 1:
                why = breaking_between(name, since, until + 1, faults)
                if not fenced:
                    why += [f for f in faults if f.kind == "pause" and f.overlaps(since, until)]
                if why:
                    res.explained("5", why)
                else:
                    res.violation("5", f"{name}: acknowledged {'fenced' if fenced else 'plain'} "
                                  f"write {owner}#{seq} is in the state {count} times")
        for i in list(value) + list(plain):
            if i not in logged:
                res.violation("5", f"{name}: {i} is in the state but no worker logged it")


def check_wakeups(by_name, releases, faults, bound_ns, res, t0, figures):
    """Check 6: (a) every wait ends by its deadline; (b) no waiter sleeps on a free lock."""
    late = []
    for hs in by_name.values():
        for h in hs:
            if h.wait_until is None or h.done is None:
                continue
            over = h.done - h.wait_until
            late.append(over)
            if over > bound_ns:
                why = [f for f in faults if f.overlaps(h.wait_until, h.done)]
                if why:
                    res.explained("6", why)
                else:
                    res.violation("6", f"{h.name}: {h.owner}'s wait ended {over / 1e6:.0f} ms "
                                  f"after its deadline at {ms(h.wait_until, t0)}"
                                  + nearby(h.name, h.wait_until, h.done, faults, t0))
    late.sort()
    if late:
        figures["wait_end_after_deadline_ms_max"] = round(late[-1] / 1e6, 1)
        figures["wait_end_after_deadline_ms_p99"] = round(late[int(0.99 * (len(late) - 1))] / 1e6, 1)
    largest_gap = 0
    for name, hs in by_name.items():
        grants = sorted(h.ok for h in hs if h.ok is not None)
        # A waiter present at r that kept waiting past r + bound on its own terms has
        # min(done, wait_until) > r + bound; a running maximum of that over the waits invoked
        # before r answers "is there one?" for every release in one sweep.
        waits = sorted(((h.invoke, min(h.done, h.wait_until), h.done) for h in hs
                        if h.done is not None and h.wait_until is not None))
        i, longest, latest_done = 0, None, None
        for r in releases.get(name, []):
            while i < len(waits) and waits[i][0] < r:
                longest = waits[i][1] if longest is None else max(longest, waits[i][1])
                latest_done = waits[i][2] if latest_done is None else max(latest_done, waits[i][2])
                i += 1
            j = bisect.bisect_left(grants, r)
            gap = grants[j] - r if j < len(grants) else None
            if gap is not None and latest_done is not None and latest_done > r:
                largest_gap = max(largest_gap, gap)  # some waiter was there: the handoff time
            if longest is None or longest <= r + bound_ns:
                continue
            if gap is None or gap > bound_ns:
                why = [f for f in faults if f.overlaps(r, r + bound_ns)]
                if why:
                    res.explained("6", why)
                else:
                    res.violation("6", f"{name}: released at {ms(r, t0)} with a waiter present, "
                                  f"next grant "
                                  f"{'never' if gap is None else f'{gap / 1e6:.0f} ms later'}"
                                  + nearby(name, r, r + bound_ns, faults, t0))
    figures["largest_free_gap_with_waiters_ms"] = round(largest_gap / 1e6, 1)


# ---------------------------------------------------------------- the run


def check_events(events, register, wake_bound_ms=1000, max_examples=5, torn=0):
    res = Result(max_examples)
    holds, faults, deaths, writes, history_end = build(events)
    t0 = events[0]["t"] if events else 0
    by_name = defaultdict(list)
    for h in holds.values():
        by_name[h.name].append(h)
    # A release frees the lock from when it is sent: the next holder may hear of it before the
    # releaser does.
    releases = defaultdict(list)
    for h in holds.values():
        if h.release_ok is not None:
            releases[h.name].append(h.release)
    for v in releases.values():
        v.sort()

    figures = figures_of(events, holds, faults, writes, torn)
    check_tokens(by_name, faults, res, t0)
    check_exclusion(by_name, faults, deaths, history_end, res, t0)
    check_register(writes, holds, faults, register, res, t0)
    check_wakeups(by_name, releases, faults, wake_bound_ms * 1_000_000, res, t0, figures)
    ok = all(c["violations"] == 0 for c in res.checks.values())
    return {"figures": figures, "checks": res.checks, "not_checked": sorted(res.not_checked),
            "ok": ok}


def figures_of(events, holds, faults, writes, torn):
    acquired = [h for h in holds.values() if h.ok is not None]
    per_kind, per_name, losses, failures = (defaultdict(int) for _ in range(4))
    for h in acquired:
        per_kind[h.kind] += 1
        per_name[h.name] += 1
    for h in holds.values():
        if h.ok is None and h.err is not None:
            failures[h.err] += 1
    for e in events:
        if e.get("op") == "lost":
            losses[e.get("err")] += 1
    accepted = sum(1 for w in writes if w["ph"] == "ok" and w.get("accepted"))
    refused = sum(1 for w in writes if w["ph"] == "ok" and not w.get("accepted"))
    indeterminate = sum(1 for w in writes if w["ph"] == "fail")
    fault_kinds = defaultdict(int)
    for f in faults:
        fault_kinds[f.kind] += 1
    span = (events[-1]["t"] - events[0]["t"]) / 1e9 if events else 0
    return {
        "events": len(events),
        "torn_lines": torn,
        "seconds": round(span, 1),
        "processes": len({e.get("p") for e in events}),
        "acquisitions": len(acquired),
        "fenced_acquisitions": sum(1 for h in acquired if h.token is not None),
        "acquisitions_by_kind": dict(per_kind),
        "acquisitions_by_name": dict(per_name),
        "acquire_failures": dict(failures),
        "releases": sum(1 for h in holds.values() if h.release_ok is not None),
        "losses_reported": dict(losses),
        "writes_accepted": accepted,
        "writes_refused": refused,
        "writes_indeterminate": indeterminate,
        "faults": dict(fault_kinds),
    }


def check_run(run_dir, wake_bound_ms=1000, max_examples=5):
    events, torn = read_events(run_dir)
    return check_events(events, read_register(run_dir), wake_bound_ms, max_examples, torn)


def report(result):
    lines = ["figures:"]
    for k, v in result["figures"].items():
        lines.append(f"  {k}: {v}")
    lines.append("checks:")
    for k, c in result["checks"].items():
        state = "not checked" if k in result["not_checked"] else (
            "ok" if c["violations"] == 0 else "VIOLATED")
        extra = f", {c['explained']} explained by faults {c['explained_by']}" if c["explained"] else ""
        lines.append(f"  {k}. {c['name']}: {state} ({c['violations']} violations{extra})")
        for ex in c["examples"]:
            lines.append(f"       {ex}")
    lines.append("verdict: " + ("no violation" if result["ok"] else "VIOLATIONS"))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run_dir")
    p.add_argument("--wake-bound-ms", type=int, default=1000)
    p.add_argument("--json")
    p.add_argument("--max-examples", type=int, default=5)
    a = p.parse_args(argv)
    try:
        result = check_run(a.run_dir, a.wake_bound_ms, a.max_examples)
    except (InputError, OSError, KeyError) as e:
        print(f"relock_checker: {e}", file=sys.stderr)
        return 2
    print(report(result))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, sort_keys=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
