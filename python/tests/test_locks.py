# SPDX-License-Identifier: Apache-2.0
"""The lock kinds from blocking Python code, against a real server."""

from __future__ import annotations

import datetime
import threading
import time

import pytest
from conftest import Server, wait_until

import relock
from relock import errors


def in_thread(function, *args, **kwargs):
    """Runs ``function`` in a new thread; returns (thread, results list)."""
    results: list = []
    thread = threading.Thread(target=lambda: results.append(function(*args, **kwargs)))
    thread.start()
    return thread, results


def test_a_reentrant_lock_counts_its_holds_and_only_its_owner_releases(client, name):
    lock = client.lock(name)
    assert lock.acquire()
    assert lock.acquire(timeout=0.1)
    assert lock.hold_count() == 2 and lock.held() and lock.locked()
    thread, got = in_thread(lock.acquire, timeout=0.05)
    thread.join()
    assert got == [False]  # another thread is another owner
    thread, _ = in_thread(lambda: pytest.raises(errors.NotOwner, lock.release))
    thread.join()
    lock.release()
    lock.release()
    assert not lock.locked()
    with pytest.raises(errors.NotOwner) as failure:
        lock.release()
    assert isinstance(failure.value, RuntimeError)  # as threading.Lock's release


def test_with_holds_the_lock_for_the_block_and_the_data_is_redissons(client, server, name):
    lock = client.lock(name)
    with lock as same:
        assert same is lock
        # Redisson's layout: a hash field "<client-id>:<thread-id>" -> holds, with a TTL.
        field = lock.owner_field()
        assert field.startswith(client.id + ":")
        assert server.command("HGET", name, field) == "1"
        assert 0 < server.command("PTTL", name) <= 30_000
        info = client.inspect(name)
        assert info.kind == "lock" and info.locked
        assert info.holders == [relock.Holder(owner=field, holds=1, side="exclusive")]
        assert lock.held_by_field(field)
    assert server.command("EXISTS", name) == 0


def test_a_waiter_is_woken_by_the_release_not_by_its_deadline(client, name):
    lock = client.lock(name)
    lock.acquire()
    thread, got = in_thread(client.lock(name).acquire, timeout=30)
    wait_until(lambda: client.inspect(name).locked, what="the holder's hold")
    time.sleep(0.05)  # let the waiter subscribe and try once (it cannot take the lock anyway)
    released = time.monotonic()
    lock.release()
    thread.join(10)
    assert got == [True]
    assert time.monotonic() - released < 5  # woken by the unlock message, long before 30 s


def test_a_timeout_that_runs_out_answers_false_and_blocking_false_tries_once(client, name):
    lock = client.lock(name)
    lock.acquire()
    other = client.lock(name)
    for attempt in (lambda: other.acquire(blocking=False),
                    lambda: other.acquire(timeout=0),
                    lambda: other.acquire(timeout=datetime.timedelta(milliseconds=100))):
        thread, got = in_thread(attempt)
        thread.join(5)
        assert got == [False]
    started = time.monotonic()
    thread, got = in_thread(other.acquire, timeout=0.3)
    thread.join(5)
    assert got == [False] and time.monotonic() - started >= 0.29
    lock.release()


def test_a_lease_ends_the_hold_without_a_release(client, name):
    lock = client.lock(name)
    assert lock.acquire(lease=0.2)
    assert lock.remaining_lease() <= 0.2
    wait_until(lambda: not lock.locked(), seconds=5, what="the lease's end")


def test_the_watchdog_keeps_a_hold_past_its_lease(url, name):
    with relock.Client(url, watchdog_lease=0.6) as client:
        lock = client.lock(name)
        lock.acquire()
        deadline = time.monotonic() + 1.8  # three leases
        while time.monotonic() < deadline:
            assert lock.held()
            time.sleep(0.1)
        assert 0 < lock.remaining_lease() <= 0.6
        assert lock.valid_for() > 0
        lock.release()


def test_an_explicit_owner_holds_across_threads(client, name):
    owner = relock.Owner()
    lock = client.lock(name)
    thread, got = in_thread(lock.acquire, owner=owner)
    thread.join()
    assert got == [True]
    assert lock.held(owner=owner) and not lock.held()
    lock.release(owner=owner)
    assert not lock.locked()
    assert relock.Owner(7) == relock.Owner(7) and relock.Owner() != relock.Owner()


def test_a_non_reentrant_lock_refuses_its_owner_a_second_time(client, name):
    lock = client.non_reentrant_lock(name)
    lock.acquire()
    with pytest.raises(errors.NonReentrant):
        lock.acquire(timeout=0.1)
    lock.release()


def test_a_fair_lock_grants_in_the_order_of_asking(client, name):
    lock = client.fair_lock(name)
    lock.acquire()
    order: list[int] = []
    threads = []
    for i in range(3):
        def wait_turn(i=i):
            with client.fair_lock(name):
                order.append(i)
        thread = threading.Thread(target=wait_turn)
        thread.start()
        threads.append(thread)
        wait_until(lambda: len(client.inspect(name).waiters) == i + 1, what=f"waiter {i} queued")
    assert client.inspect(name).kind == "fair"
    lock.release()
    for thread in threads:
        thread.join(10)
    assert order == [0, 1, 2]


def test_a_spin_lock_excludes_and_hands_over(client, name):
    lock = client.spin_lock(name)
    lock.acquire()
    thread, got = in_thread(client.spin_lock(name).acquire, timeout=10)
    lock.release()
    thread.join(10)
    assert got == [True]


def test_fenced_tokens_grow_with_every_acquire(client, name):
    lock = client.fenced_lock(name)
    with lock as first:
        assert lock.fence() == first
    second = lock.acquire_token()
    assert second > first
    lock.release()
    assert lock.acquire_token(blocking=False) > second
    assert client.inspect(name).fencing_token == second + 1
    thread, got = in_thread(client.fenced_lock(name).acquire_token, timeout=0.05)
    thread.join()
    assert got == [None]
    lock.release()


def test_readers_share_and_a_writer_waits_for_them(client, name):
    rw = client.read_write_lock(name)
    rw.read.acquire()
    reader = relock.Owner()
    assert client.read_write_lock(name).read.acquire(timeout=1, owner=reader)  # a second reader
    thread, got = in_thread(client.read_write_lock(name).write.acquire, timeout=0.1)
    thread.join()
    assert got == [False]
    assert client.inspect(name).mode == "read"
    rw.read.release()
    rw.read.release(owner=reader)
    with rw.write:
        assert client.inspect(name).mode == "write"
        with rw.read:  # a writer may also read (downgrade)
            pass


def test_a_multi_lock_takes_all_or_none(client, name):
    a, b = client.lock(name + ":a"), client.lock(name + ":b")
    with relock.MultiLock(a, b):
        assert a.held() and b.held()
    b.acquire()
    thread, got = in_thread(relock.MultiLock(client.lock(name + ":a"), client.lock(name + ":b"))
                            .acquire, timeout=0.1)
    thread.join()
    assert got == [False]
    assert not a.locked()  # the member it got was given back
    b.release()


def test_a_red_lock_is_taken_by_a_majority_of_independent_servers(server, tmp_path, name):
    others = [Server(tmp_path / str(i)) for i in range(2) if not (tmp_path / str(i)).mkdir()]
    clients = [relock.Client(s.url) for s in [server, *others]]
    try:
        locks = [c.lock(name) for c in clients]
        blocker = threading.Thread(target=lambda: clients[2].lock(name).acquire(lease=30))
        blocker.start()
        blocker.join()
        red = relock.RedLock(*locks)
        assert red.acquire(timeout=1)  # two of three
        assert locks[0].held() and locks[1].held()
        red.release()
        assert not locks[0].locked() and locks[2].locked()
        with pytest.raises(errors.InvalidArgument):  # one server twice is no majority
            relock.RedLock(clients[0].lock(name), clients[0].lock(name + ":b"))
    finally:
        for c in clients:
            c.close()
        for s in others:
            s.stop()


def test_bad_input_is_refused_before_any_io(client, server, name):
    with pytest.raises(errors.InvalidArgument):
        client.lock("")
    with pytest.raises(errors.InvalidArgument):
        client.lock("x" * (64 * 1024 + 1))
    lock = client.lock(name)
    with pytest.raises(ValueError):
        lock.acquire(timeout=-2)
    with pytest.raises(errors.InvalidArgument):
        lock.acquire(blocking=False, timeout=1)
    with pytest.raises(errors.InvalidArgument):
        lock.acquire(lease=float("nan"))
    with pytest.raises(errors.InvalidArgument):
        lock.acquire(lease=1e12)
    with pytest.raises(errors.InvalidArgument):
        lock.acquire(timeout="soon")
    assert server.command("EXISTS", name) == 0


def test_a_name_that_holds_another_type_is_refused_and_left_alone(client, server, name):
    server.command("SET", name, "not a lock")
    with pytest.raises(errors.WrongType):
        client.lock(name).acquire(timeout=0.1)
    assert server.command("GET", name) == "not a lock"


def test_connection_errors_and_bad_urls_are_typed(server):
    with pytest.raises(errors.InvalidArgument):
        relock.Client("http://127.0.0.1:1")
    with pytest.raises(errors.ConnectionFailed) as failure:
        relock.Client("redis://127.0.0.1:1", connect_timeout=1)
    assert isinstance(failure.value, ConnectionError)


def test_a_wrong_password_is_auth_failed_and_not_printed(tmp_path):
    protected = Server(tmp_path, ["--requirepass", "right-password"])
    try:
        with pytest.raises(errors.AuthFailed) as failure:
            relock.Client(f"redis://:wrong-password@127.0.0.1:{protected.port}")
        assert "wrong-password" not in str(failure.value)
        with relock.Client(f"redis://:right-password@127.0.0.1:{protected.port}") as client:
            assert client.lock("p").acquire()
            assert "right-password" not in repr(client)
    finally:
        protected.stop()


def test_a_lost_hold_is_reported(url, client, name):
    lost: list = []
    with relock.Client(url, watchdog_lease=0.6,
                       on_lock_lost=lambda key, owner, why: lost.append((key, why))) as holder:
        lock = holder.lock(name)
        lock.acquire()
        assert client.lock(name).force_unlock()
        wait_until(lambda: lost, seconds=5, what="on_lock_lost")
        assert lost[0][0] == name and isinstance(lost[0][1], errors.LockLost)
        with pytest.raises(errors.LockLost):
            lock.release()


def test_a_closed_client_cancels_waits_and_refuses_more(url, name):
    holder = relock.Client(url)
    holder.lock(name).acquire()
    waiter = relock.Client(url)
    thread, got = in_thread(lambda: pytest.raises(errors.Cancelled, waiter.lock(name).acquire))
    wait_until(lambda: thread.is_alive(), what="the waiter")
    time.sleep(0.05)
    waiter.close()
    thread.join(10)
    assert not thread.is_alive() and got
    with pytest.raises(errors.Cancelled):
        waiter.lock(name)
    assert waiter.closed
    holder.close()
