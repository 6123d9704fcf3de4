# SPDX-License-Identifier: Apache-2.0
"""The checker's own tests: fed known-bad histories it must flag each one, and pass good ones."""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relock_checker as checker  # noqa: E402

MS = 1_000_000
CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "relock_checker.py")


class History:
    """Builds a history in memory: each hold a few calls, times in ms."""

    def __init__(self):
        self.events = []
        self.register = {"names": {}}
        self.seq = 0

    def add(self, t, op, ph, p="w1", **fields):
        self.events.append(dict(t=int(t * MS), p=p, th=0, op=op, ph=ph, **fields))

    def hold(self, owner, start, ok, end, name="n", token=None, kind=None, p="w1", wait=1000,
             release=True, valid=None):
        kind = kind or ("fenced" if token is not None else "reentrant")
        self.add(start, "acquire", "invoke", p, name=name, kind=kind, owner=owner,
                 wait_until=int((start + wait) * MS))
        self.add(ok, "acquire", "ok", p, name=name, owner=owner, token=token,
                 valid_until=int((valid if valid is not None else ok + 30000) * MS))
        if release:
            self.add(end, "release", "invoke", p, name=name, owner=owner)
            self.add(end + 0.5, "release", "ok", p, name=name, owner=owner)

    def write(self, owner, t, token, accepted=True, name="n", p="w1", in_state=1, log=True):
        self.seq += 1
        self.add(t, "write", "invoke", p, name=name, owner=owner, token=token, seq=self.seq,
                 valid_until=int((t + 1000) * MS))
        self.add(t + 0.2, "write", "ok", p, name=name, owner=owner, token=token, seq=self.seq,
                 accepted=accepted)
        reg = self.register["names"].setdefault(name, {"max": 0, "accepted": [], "value": [],
                                                       "plain": []})
        if accepted and token is not None and log:
            reg["accepted"].append([token, owner, self.seq])
            reg["max"] = max(reg["max"], token)
        if accepted:
            state = reg["value"] if token is not None else reg["plain"]
            state.extend([f"{owner}#{self.seq}"] * in_state)

    def fault(self, t, kind, ph="start", target="server", names=()):
        self.add(t, "fault", ph, "nemesis", fault=kind, target=target, names=list(names))

    def wait(self, owner, start, done, wait, ok=False, name="n", p="w2"):
        self.add(start, "acquire", "invoke", p, name=name, kind="reentrant", owner=owner,
                 wait_until=int((start + wait) * MS))
        if ok:
            self.add(done, "acquire", "ok", p, name=name, owner=owner, token=None,
                     valid_until=int((done + 30000) * MS))
        else:
            self.add(done, "acquire", "fail", p, name=name, owner=owner, err="timeout")

    def check(self, bound_ms=1000):
        events = sorted(self.events, key=lambda e: e["t"])
        return checker.check_events(events, self.register, bound_ms)


def violations(result, check):
    return result["checks"][check]["violations"]


def explained(result, check):
    return result["checks"][check]["explained"]


def clean_history():
    h = History()
    for i in range(5):
        t = i * 10
        h.hold(f"o{i}", t, t + 1, t + 8, token=i + 1)
        h.write(f"o{i}", t + 2, i + 1)
    return h


class CleanHistories(unittest.TestCase):
    def test_turns_with_increasing_tokens_pass_every_check(self):
        r = clean_history().check()
        self.assertTrue(r["ok"], r["checks"])
        self.assertEqual(r["figures"]["fenced_acquisitions"], 5)

    def test_readers_may_share(self):
        h = History()
        h.hold("r1", 0, 1, 10, kind="read")
        h.hold("r2", 0, 2, 9, kind="read")
        self.assertEqual(violations(h.check(), "3"), 0)

    def test_a_hold_ends_at_its_validity_deadline(self):
        # Paused past its deadline, never released: the next owner after the deadline is fine.
        h = History()
        h.hold("o1", 0, 1, None, token=1, release=False, valid=100)
        h.fault(50, "pause", target="w1")
        h.hold("o2", 90, 120, 130, token=2, p="w2")
        h.fault(200, "pause", ph="end", target="w1")
        self.assertEqual(violations(h.check(), "3"), 0)


class KnownBadHistories(unittest.TestCase):
    def test_a_double_grant_is_flagged(self):
        h = History()
        h.hold("o1", 0, 1, 5, token=7)
        h.hold("o2", 10, 11, 15, token=7, p="w2")
        self.assertEqual(violations(h.check(), "1"), 1)

    def test_a_token_going_backwards_in_real_time_is_flagged(self):
        h = History()
        h.hold("o1", 0, 1, 5, token=9)
        h.hold("o2", 10, 11, 15, token=8, p="w2")
        r = h.check()
        self.assertEqual(violations(r, "2"), 1)
        self.assertFalse(r["ok"])

    def test_an_overlap_is_flagged_and_a_del_explains_it(self):
        h = History()
        h.hold("o1", 0, 1, 20, token=1)
        h.hold("o2", 5, 10, 30, token=2, p="w2")
        r = h.check()
        self.assertEqual(violations(r, "3"), 1)
        h.fault(3, "del", names=["n"])
        r = h.check()
        self.assertEqual(violations(r, "3"), 0)
        self.assertEqual(explained(r, "3"), 1)

    def test_an_eviction_window_open_before_the_hold_began_explains_an_overlap(self):
        # maxmemory was lowered before o1 asked, and o1's key was evicted while it held it.
        h = History()
        h.fault(2, "evict")
        h.hold("o1", 5, 6, 20)
        h.fault(8, "evict", ph="end")
        h.hold("o2", 9, 10, 30, p="w2")
        r = h.check()
        self.assertEqual(violations(r, "3"), 0)
        self.assertEqual(explained(r, "3"), 1)

    def test_an_eviction_window_closed_before_the_hold_began_explains_nothing(self):
        h = History()
        h.fault(1, "evict")
        h.fault(3, "evict", ph="end")
        h.hold("o1", 5, 6, 20)
        h.hold("o2", 9, 10, 30, p="w2")
        self.assertEqual(violations(h.check(), "3"), 1)

    def test_a_hold_granted_between_a_del_logged_and_done_is_explained_by_it(self):
        # The nemesis logs a DEL, then sends it: a hold granted in between loses its key too.
        h = History()
        h.fault(3, "del", names=["n"])
        h.hold("o1", 4, 5, 20)
        h.hold("o2", 9, 10, 30, p="w2")
        self.assertEqual(violations(h.check(), "3"), 1)  # an instant: before o1 asked
        h.fault(6, "del", ph="end", names=["n"])
        r = h.check()
        self.assertEqual(violations(r, "3"), 0)
        self.assertEqual(explained(r, "3"), 1)

    def test_a_del_after_the_later_logged_hold_asked_explains_an_overlap(self):
        # o2 asked first and the server granted it first; a DEL took its key, o1 took the free
        # lock, and o2's process logged its grant only after o1's (descheduled, or a slow
        # reply). The overlap in the log is the DEL's doing, though it came before o1 asked.
        h = History()
        h.add(2, "acquire", "invoke", "w2", name="n", kind="fenced", owner="o2",
              wait_until=1000 * MS)
        h.fault(3, "del", names=["n"])
        h.hold("o1", 5, 6, 20)
        h.add(10, "acquire", "ok", "w2", name="n", owner="o2", token=1,
              valid_until=30000 * MS)
        r = h.check()
        self.assertEqual(violations(r, "3"), 0)
        self.assertEqual(explained(r, "3"), 1)

    def test_a_del_before_both_holds_asked_explains_nothing(self):
        h = History()
        h.fault(1, "del", names=["n"])
        h.hold("o2", 2, 10, 30, p="w2")
        h.hold("o1", 5, 6, 20)
        self.assertEqual(violations(h.check(), "3"), 1)

    def test_an_unexplained_violation_names_the_faults_around_it(self):
        # What a CI log that keeps only the report needs to tell a checker gap from a lock bug.
        h = History()
        h.fault(1, "client_pause")
        h.fault(4, "client_pause", ph="end")
        h.hold("o1", 5, 6, 20)
        h.hold("o2", 9, 10, 30, p="w2")
        example = h.check()["checks"]["3"]["examples"][0]
        self.assertIn("faults within 2 s: client_pause@", example)

    def test_a_fault_on_another_name_explains_nothing(self):
        h = History()
        h.hold("o1", 0, 1, 20)
        h.hold("o2", 5, 10, 30, p="w2")
        h.fault(3, "del", names=["other"])
        self.assertEqual(violations(h.check(), "3"), 1)

    def test_a_register_going_back_is_flagged(self):
        h = clean_history()
        h.register["names"]["n"]["accepted"].append([2, "o1", 1])
        h.register["names"]["n"]["accepted"].sort(key=lambda a: -a[0])
        self.assertGreaterEqual(violations(h.check(), "4"), 1)

    def test_a_refused_write_needs_a_fault(self):
        h = History()
        h.hold("o1", 0, 1, 10, token=1)
        h.write("o1", 5, 1, accepted=False)
        self.assertEqual(violations(h.check(), "4"), 1)
        h.fault(2, "pause", target="w1")
        h.fault(4, "pause", ph="end", target="w1")
        r = h.check()
        self.assertEqual(violations(r, "4"), 0)
        self.assertEqual(explained(r, "4"), 1)

    def test_a_lost_or_doubled_update_is_flagged(self):
        h = History()
        h.hold("o1", 0, 1, 10, token=1)
        h.write("o1", 5, 1, in_state=0)  # acknowledged, not in the state
        h.hold("o2", 20, 21, 30, token=2, p="w2")
        h.write("o2", 25, 2, p="w2", in_state=2)  # in the state twice
        self.assertEqual(violations(h.check(), "5"), 2)

    def test_a_fault_while_the_grant_was_on_its_way_explains_a_refusal(self):
        # The key was expired by someone else before the holder even heard it had the lock.
        h = History()
        h.hold("o1", 0, 30, 40, token=1)
        h.fault(10, "pexpire", names=["n"])
        h.hold("o2", 15, 20, 25, token=2, p="w2")
        h.write("o2", 21, 2, p="w2")
        h.write("o1", 31, 1, accepted=False)
        r = h.check()
        self.assertEqual(violations(r, "4"), 0)
        self.assertEqual(explained(r, "4"), 1)

    def test_a_plain_lost_update_is_explained_only_by_a_pause(self):
        h = History()
        h.hold("o1", 0, 1, 10)
        h.write("o1", 5, None, in_state=0)
        self.assertEqual(violations(h.check(), "5"), 1)
        h.fault(2, "pause", target="w1")
        h.fault(7, "pause", ph="end", target="w1")
        self.assertEqual(violations(h.check(), "5"), 0)

    def test_a_wait_ending_long_after_its_deadline_is_flagged(self):
        h = History()
        h.wait("w", 0, 4000, wait=1000)
        self.assertEqual(violations(h.check(), "6"), 1)

    def test_a_waiter_left_sleeping_on_a_free_lock_is_flagged_unless_a_fault_was_there(self):
        h = History()
        h.hold("o1", 0, 1, 100)
        h.wait("w", 50, 3050, wait=3000)  # times out on its deadline, yet...
        r = h.check()
        self.assertEqual(violations(r, "6"), 1)  # ...the lock was free from 100 ms
        h.fault(150, "client_kill")
        r = h.check()
        self.assertEqual(violations(r, "6"), 0)
        self.assertEqual(explained(r, "6"), 1)

    def test_a_waiter_served_at_once_is_fine(self):
        h = History()
        h.hold("o1", 0, 1, 100)
        h.wait("w", 50, 105, wait=3000, ok=True)
        self.assertEqual(violations(h.check(), "6"), 0)


class Epochs(unittest.TestCase):
    def test_tokens_restarting_after_a_data_loss_are_a_new_epoch(self):
        h = History()
        h.hold("o1", 0, 1, 5, token=5)
        h.fault(10, "restart_no_persist")
        h.hold("o2", 20, 21, 25, token=1, p="w2")
        r = h.check()
        self.assertEqual(violations(r, "1"), 0)
        self.assertEqual(violations(r, "2"), 0)


class Files(unittest.TestCase):
    def write_run(self, d, h):
        by_process = {}
        for e in h.events:
            by_process.setdefault(e["p"], []).append(e)
        for p, evs in by_process.items():
            with open(os.path.join(d, p + ".jsonl"), "w") as f:
                for e in evs:
                    f.write(json.dumps(e) + "\n")
        with open(os.path.join(d, "register.json"), "w") as f:
            json.dump(h.register, f)

    def run_cli(self, d, *args):
        return subprocess.run([sys.executable, CHECKER, d, *args], capture_output=True, text=True)

    def test_exit_codes_json_and_a_torn_last_line(self):
        with tempfile.TemporaryDirectory() as d:
            self.write_run(d, clean_history())
            with open(os.path.join(d, "w1.jsonl"), "a") as f:
                f.write('{"t": 99, "p": "w1", "op": "acq')  # killed mid-write
            out = os.path.join(d, "result.json")
            r = self.run_cli(d, "--json", out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(out) as f:
                result = json.load(f)
            self.assertTrue(result["ok"])
            self.assertEqual(result["figures"]["torn_lines"], 1)
            self.assertEqual(set(result["checks"]), {"1", "2", "3", "4", "5", "6"})
        with tempfile.TemporaryDirectory() as d:
            h = History()
            h.hold("o1", 0, 1, 5, token=7)
            h.hold("o2", 10, 11, 15, token=7, p="w2")
            self.write_run(d, h)
            self.assertEqual(self.run_cli(d).returncode, 1)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "w1.jsonl"), "w") as f:
                f.write("not json\n{}\n")
            self.assertEqual(self.run_cli(d).returncode, 2)


class Scale(unittest.TestCase):
    def test_a_hundred_thousand_acquisitions_in_seconds(self):
        h = History()
        names = ["a", "b", "c", "d"]
        t = {n: 0.0 for n in names}
        tokens = {n: 0 for n in names}
        for i in range(100_000):
            n = names[i % 4]
            tokens[n] += 1
            h.hold(f"o{i}", t[n], t[n] + 0.1, t[n] + 0.3, name=n, token=tokens[n])
            t[n] += 1
        started = time.monotonic()
        r = h.check()
        took = time.monotonic() - started
        self.assertTrue(r["ok"])
        self.assertLess(took, 30)
        print(f"\n100,000 acquisitions checked in {took:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
