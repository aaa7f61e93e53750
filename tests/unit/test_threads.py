"""Threads sharing one embedded bank: commits are serialised by the bank's lock.

* 8 threads, each adding notes, superseding the live record of shared slots
  (read under ``bank.writer_lock``) and searching: exact counts, verify() == [],
  one linear chain per slot, and every search hit well-formed.
* A forced interleaving (one commit stalls after planning while another thread
  commits): clean with the lock; with the lock replaced by a no-op, the stalled
  commit overwrites the other's link and leaves two live states.
"""

from __future__ import annotations

import threading

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus

N_THREADS = 8
K_ROUNDS = 8
SLOTS = ["location", "job"]
NS = "u"


class _NoLock:
    """Stands in for the bank's lock to show what it prevents."""

    def acquire(self, *a, **k):
        return True

    def release(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def supersede_live(bank, slot, content):
    with bank.writer_lock(NS):
        live = bank.records(NS, slot=slot, statuses=[RecordStatus.ACTIVE])
        assert len(live) == 1, f"{slot}: {len(live)} live records under the lock"
        return bank.commit(
            MemoryRecord(namespace=NS, content=content, slot=slot),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=live[0].id)],
        ).record


def assert_linear(bank, slot, expected_len):
    recs = {r.id: r for r in bank.records(NS, slot=slot)}
    assert len(recs) == expected_len
    live = [r for r in recs.values() if r.status is RecordStatus.ACTIVE]
    assert len(live) == 1
    seen, cur = [], live[0]
    while True:
        seen.append(cur.id)
        assert len(cur.targets(LinkType.SUPERSEDED_BY)) <= 1
        prev = cur.targets(LinkType.SUPERSEDES)
        assert len(prev) <= 1
        if not prev:
            break
        cur = recs[prev[0]]
    assert len(set(seen)) == expected_len


@pytest.fixture
def bank(tmp_path):
    return StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))


def test_eight_threads_share_one_bank(bank):
    for s in SLOTS:
        bank.add(MemoryRecord(namespace=NS, content=f"seed {s} value", slot=s))
    start = threading.Barrier(N_THREADS)
    errors: list[BaseException] = []
    bad_hits: list[str] = []

    def work(t):
        try:
            start.wait(10)
            for i in range(K_ROUNDS):
                bank.add(MemoryRecord(namespace=NS, content=f"thread {t} note {i}"))
                supersede_live(bank, SLOTS[(t + i) % len(SLOTS)], f"thread {t} new value {i}")
                hits = bank.search(NS, f"new value {i}", k=6)
                ids = {lk.target for h in hits for lk in h.record.links}
                found = {r.id for r in bank.get_many(NS, sorted(ids))}
                bad_hits.extend(
                    f"{h.record.id} -> {t_}"
                    for h in hits
                    for t_ in h.record.targets()
                    if t_ not in found
                )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(N_THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert errors == []
    assert bad_hits == []
    assert bank.count(NS) == len(SLOTS) + 2 * N_THREADS * K_ROUNDS
    assert bank.verify(NS) == []
    for s in SLOTS:
        assert_linear(bank, s, N_THREADS * K_ROUNDS // len(SLOTS) + 1)
    assert bank.host.journal_pending() == []


class _StallingEmbeddings(Embeddings):
    """Stalls the commit of the text "stalled: Seattle" after it is planned (the
    embedding is computed right before the write) until the other commit is done,
    or 1 s passes."""

    def __init__(self):
        self.inner = DeterministicFakeEmbedding(size=16)
        self.planned, self.other_done = threading.Event(), threading.Event()
        self.waited_out: list[bool] = []

    def embed_documents(self, texts):
        if texts == ["stalled: Seattle"]:
            self.planned.set()
            self.waited_out.append(not self.other_done.wait(1.0))
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.mark.parametrize("locked", [True, False])
def test_forced_interleaving(tmp_path, locked):
    emb = _StallingEmbeddings()
    bank = StateBank(path=tmp_path / "bank", embeddings=emb)
    if not locked:
        bank._lock = _NoLock()
    seed = bank.add(MemoryRecord(namespace=NS, content="seed: Boston", slot="location"))
    errors: list[BaseException] = []

    def stalled():
        try:
            supersede_live(bank, "location", "stalled: Seattle")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    th = threading.Thread(target=stalled)
    th.start()
    assert emb.planned.wait(10)
    supersede_live(bank, "location", "quick: Ashcombe")  # blocks while the lock is held
    emb.other_done.set()
    th.join(10)
    assert errors == []
    assert bank.count(NS) == 3
    if locked:
        assert emb.waited_out == [True]  # the quick commit could not get in
        assert bank.verify(NS) == []
        assert_linear(bank, "location", 3)
    else:
        assert emb.waited_out == [False]
        kinds = {v.kind for v in bank.verify(NS)}
        assert {"double_active", "missing_reciprocal"} <= kinds
        assert len(bank.get(NS, seed.id).targets(LinkType.SUPERSEDED_BY)) == 1
