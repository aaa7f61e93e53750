"""Several writer processes on one Chroma server (`chroma run`, started by scripts/test.sh).

* 4 spawned writers x 25 colliding slot updates (each reads the live record of a
  slot under the writer lock and supersedes it), plus a reader querying all the
  while: no lost write, verify() == [], one linear chain per slot, and every row
  the reader saw was well-formed.
* The same race forced deterministically (one writer stalls inside its write,
  after its revision check, while a second one commits): clean with the lock,
  a lost link and two live states without it.
* The optimistic revision check: a writer outside the lock that changes a target
  between a commit's read and its write makes that commit fail, nothing written.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import threading
import time
import uuid

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import CommitAction, CommitDecision
from langchain_atma.errors import ConcurrentWriteError
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus
from tests.integration import concurrency_workers as w

pytestmark = pytest.mark.integration

URL = os.environ.get("ATMA_TEST_CHROMA_URL")
needs_server = pytest.mark.skipif(not URL, reason="ATMA_TEST_CHROMA_URL not set")

N_WRITERS = 4
M_EVENTS = 25
SLOTS = ["location", "job", "car"]


def _collect(out, n, timeout=120.0):
    got = []
    end = time.monotonic() + timeout
    while len(got) < n:
        try:
            got.append(out.get(timeout=max(0.1, end - time.monotonic())))
        except queue.Empty:
            break
    return got


def _seed(bank, ns, slots):
    return {
        s: bank.add(MemoryRecord(namespace=ns, content=f"seed {s} value", slot=s)).id for s in slots
    }


def _assert_linear(bank, ns, slot, expected_len):
    recs = {r.id: r for r in bank.records(ns, slot=slot)}
    assert len(recs) == expected_len
    live = [r for r in recs.values() if r.status is RecordStatus.ACTIVE]
    assert len(live) == 1, f"slot {slot}: {len(live)} live records"
    for r in recs.values():
        assert len(r.targets(LinkType.SUPERSEDES)) <= 1, r
        assert len(r.targets(LinkType.SUPERSEDED_BY)) <= 1, r
    # walk back from the live record: the chain covers every record of the slot
    seen, cur = [], live[0]
    while True:
        seen.append(cur.id)
        prev = cur.targets(LinkType.SUPERSEDES)
        if not prev:
            break
        cur = recs[prev[0]]
    assert len(seen) == len(set(seen)) == expected_len


@needs_server
def test_many_writer_processes_one_namespace(tmp_path):
    coll, ns = f"it_cc_{uuid.uuid4().hex[:8]}", "shared"
    lock_dir = str(tmp_path / "locks")
    bank = w.open_bank(URL, coll, lock_dir)
    _seed(bank, ns, SLOTS)

    ctx = mp.get_context("spawn")
    start, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=w.writer, args=(URL, coll, ns, lock_dir, i, M_EVENTS, SLOTS, start, out))
        for i in range(N_WRITERS)
    ]
    procs.append(
        ctx.Process(target=w.reader, args=(URL, coll, ns, lock_dir, SLOTS, start, stop, out))
    )
    t0 = time.monotonic()
    for p in procs:
        p.start()
    try:
        start.set()
        writers = [m for m in _collect(out, N_WRITERS) if m[0] == "writer"]
        stop.set()
        readers = _collect(out, 1, timeout=60)
    finally:
        stop.set()
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    elapsed = time.monotonic() - t0

    assert len(writers) == N_WRITERS, writers
    for _kind, wid, done, err in writers:
        assert err is None, f"writer {wid}:\n{err}"
        assert done == M_EVENTS
    assert len(readers) == 1 and readers[0][0] == "reader"
    rstats, rerr = readers[0][2], readers[0][3]
    assert rerr is None, rerr
    assert rstats["queries"] > 0
    assert rstats["problems"] == [], rstats["problems"][:5]

    # no lost write: every event is there, once
    assert bank.count(ns) == N_WRITERS * M_EVENTS + len(SLOTS)
    events = [r.provenance.source_event_id for r in bank.records(ns)]
    want = {f"w{i}-e{j}" for i in range(N_WRITERS) for j in range(M_EVENTS)}
    assert {e for e in events if e} == want and len([e for e in events if e]) == len(want)
    assert bank.verify(ns) == []
    for k, slot in enumerate(SLOTS):
        updates = sum(
            (wid + i) % len(SLOTS) == k for wid in range(N_WRITERS) for i in range(M_EVENTS)
        )
        _assert_linear(bank, ns, slot, updates + 1)
    assert bank.host.journal_pending() == []
    print(
        f"\n{N_WRITERS}x{M_EVENTS} commits + {rstats['queries']} reader queries in {elapsed:.1f}s"
    )


def _forced_race(tmp_path, process_lock):
    coll, ns, slot = f"it_race_{uuid.uuid4().hex[:8]}", "shared", "location"
    lock_dir = str(tmp_path / "locks")
    bank = w.open_bank(URL, coll, lock_dir)
    seed = _seed(bank, ns, [slot])[slot]
    ctx = mp.get_context("spawn")
    ready, in_write, other_done, out = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Queue()
    # with the lock the stall always runs out (keep it short); without it, it ends
    # as soon as the other writer has committed (allow a slow machine)
    stall_s = 2.0 if process_lock else 30.0
    args = (URL, coll, ns, lock_dir, process_lock, slot, ready, in_write, other_done, out, stall_s)
    procs = [
        ctx.Process(target=w.stalled_writer, args=args),
        ctx.Process(target=w.quick_writer, args=args),
    ]
    for p in procs:
        p.start()
    try:
        msgs = _collect(out, 3)
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    errors = [m[3] for m in msgs if m[3]]
    assert errors == [], errors
    stall = [m[2] for m in msgs if m[0] == "stall"]
    assert len(stall) == 1 and len([m for m in msgs if m[0] == "writer"]) == 2, msgs
    return bank, ns, slot, seed, stall[0]


@needs_server
def test_forced_race_is_safe_with_the_lock(tmp_path):
    bank, ns, slot, _seed_id, waited_out = _forced_race(tmp_path, process_lock=True)
    assert waited_out, "the quick writer committed while the stalled one held the lock"
    assert bank.verify(ns) == []
    _assert_linear(bank, ns, slot, 3)


@needs_server
def test_forced_race_breaks_without_the_lock(tmp_path):
    # The same interleaving with the lock off: the stalled writer passed its
    # revision check before the quick writer committed, then overwrites the seed
    # row, dropping the quick writer's link: two live states, a one-way link.
    bank, ns, slot, seed, waited_out = _forced_race(tmp_path, process_lock=False)
    assert not waited_out
    kinds = {v.kind for v in bank.verify(ns)}
    assert {"double_active", "missing_reciprocal"} <= kinds
    live = bank.records(ns, slot=slot, statuses=[RecordStatus.ACTIVE])
    assert len(live) == 2
    assert len(bank.get(ns, seed).targets(LinkType.SUPERSEDED_BY)) == 1  # a link was lost


@needs_server
def test_revision_check_stops_a_writer_outside_the_lock(tmp_path):
    # two banks with process_lock=False stand for writers on two machines
    coll, ns = f"it_rev_{uuid.uuid4().hex[:8]}", "shared"
    lock_dir = str(tmp_path / "locks")
    planned, other_done = threading.Event(), threading.Event()

    class StallingEmbeddings(DeterministicFakeEmbedding):
        def embed_documents(self, texts):
            planned.set()  # the commit has read its targets and planned
            assert other_done.wait(30)
            return super().embed_documents(texts)

    a = w.open_bank(URL, coll, lock_dir, process_lock=False)
    a.embeddings = StallingEmbeddings(size=w.EMB_SIZE)
    b = w.open_bank(URL, coll, lock_dir, process_lock=False)
    seed = b.add(MemoryRecord(namespace=ns, content="seed location value", slot="location"))
    errors: list[BaseException] = []

    def commit_a():
        try:
            a.commit(
                MemoryRecord(namespace=ns, content="A: Seattle", slot="location"),
                [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
            )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=commit_a)
    t.start()
    assert planned.wait(30)
    b_new = b.commit(
        MemoryRecord(namespace=ns, content="B: Ashcombe", slot="location"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
        embedding=[1.0] * w.EMB_SIZE,
    ).record
    other_done.set()
    t.join(30)
    assert len(errors) == 1 and isinstance(errors[0], ConcurrentWriteError), errors
    assert b.verify(ns) == []
    assert b.count(ns) == 2  # nothing of A's commit was written
    assert b.get(ns, seed.id).targets(LinkType.SUPERSEDED_BY) == [b_new.id]
    assert a.host.journal_pending() == []


@needs_server
def test_store_puts_from_many_processes_keep_one_linear_history(tmp_path):
    from langchain_atma.store import AtmaStore

    coll, lock_dir = f"it_st_{uuid.uuid4().hex[:8]}", str(tmp_path / "locks")
    keys, n, m = ["theme", "language"], 3, 12
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=w.store_writer, args=(URL, coll, lock_dir, i, m, keys, start, out))
        for i in range(n)
    ]
    for p in procs:
        p.start()
    try:
        start.set()
        got = _collect(out, n, timeout=180)
    finally:
        for p in procs:
            p.join(30)
            if p.is_alive():
                p.kill()
    assert len(got) == n, got
    for _kind, wid, done, err in got:
        assert err is None, f"store writer {wid}:\n{err}"
        assert done == m
    store = AtmaStore(w.open_bank(URL, coll, lock_dir))
    bank_ns = store.bank_namespace(("team", "prefs"))
    for k, key in enumerate(keys):
        puts = sum((wid + i) % len(keys) == k for wid in range(n) for i in range(m))
        # every put is a version (values differ), exactly one is live, one linear chain
        _assert_linear(store.bank, bank_ns, key, puts)
        item = store.get(("team", "prefs"), key)
        assert item is not None and item.value["value"].startswith("w")
    assert store.bank.verify(bank_ns) == []
