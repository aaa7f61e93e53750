"""Fault injection: a commit is one write, and a crash never leaves partial state.

The fault hosts below make the host *non-atomic* on purpose (rows are written one
by one) so that a crash between the old and the new record's updates really
produces a partial host state; the tests then show that the bank's journal hides
it (in-process: rollback; after a process kill: roll-forward on open).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import ChromaHost, CommitAction, CommitDecision, StateBank
from langchain_atma.errors import CommitError, HostUnavailableError
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus


class RowByRowHost:
    """Delegates to a real host but upserts one row at a time, failing on demand."""

    def __init__(self, inner, fail_at_row=None, exc=None):
        self.inner = inner
        self.fail_at_row = fail_at_row
        self.exc = exc if exc is not None else RuntimeError("disk full")
        self.calls = 0

    def upsert(self, rows):
        for i, row in enumerate(rows):
            if self.fail_at_row is not None and i == self.fail_at_row:
                self.fail_at_row = None  # fail once
                raise self.exc
            self.inner.upsert([row])

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _setup(tmp_path, host_factory=None):
    emb = DeterministicFakeEmbedding(size=16)
    inner = ChromaHost.persistent(tmp_path / "bank")
    host = host_factory(inner) if host_factory else inner
    bank = StateBank(host=host, embeddings=emb)
    old = bank.add(MemoryRecord(namespace="u", content="I live in Boston.", slot="location"))
    return bank, inner, emb, old


@pytest.mark.parametrize("fail_at_row", [0, 1])
def test_exception_mid_commit_rolls_back(tmp_path, fail_at_row):
    bank, inner, _, old = _setup(tmp_path, lambda h: RowByRowHost(h))
    bank.host.fail_at_row = fail_at_row
    with pytest.raises(CommitError, match="rolled back"):
        bank.commit(
            MemoryRecord(namespace="u", content="I moved to Seattle.", slot="location"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
        )
    recs = bank.records("u")
    assert [r.id for r in recs] == [old.id]
    assert recs[0].status is RecordStatus.ACTIVE and recs[0].links == []
    assert inner.journal_pending() == []
    assert bank.verify("u") == []


def test_host_unavailable_keeps_its_type_and_rolls_back(tmp_path):
    bank, inner, _, old = _setup(
        tmp_path, lambda h: RowByRowHost(h, exc=HostUnavailableError("server down"))
    )
    bank.host.fail_at_row = 1
    with pytest.raises(HostUnavailableError):
        bank.commit(
            MemoryRecord(namespace="u", content="I moved to Seattle.", slot="location"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
        )
    assert bank.get("u", old.id).status is RecordStatus.ACTIVE
    assert bank.count("u") == 1


_SETUP = textwrap.dedent(
    """
    import sys
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_atma.bank import StateBank
    from langchain_atma.records import MemoryRecord

    bank = StateBank(path=sys.argv[1], embeddings=DeterministicFakeEmbedding(size=16))
    bank.add(MemoryRecord(id="old", namespace="u", content="I live in Boston.", slot="location"))
    """
)

_CHILD = textwrap.dedent(
    """
    import os, sys, json
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_atma.bank import ChromaHost, CommitAction, CommitDecision, StateBank
    from langchain_atma.records import MemoryRecord

    path, old_id, stage = sys.argv[1], sys.argv[2], sys.argv[3]
    inner = ChromaHost.persistent(path)

    class Killer:
        def __getattr__(self, name):
            return getattr(inner, name)
        def journal_put(self, entry_id, payload):
            if stage == "before_journal":
                os._exit(17)
            inner.journal_put(entry_id, payload)
            if stage == "after_journal":
                os._exit(17)
        def upsert(self, rows):
            for i, row in enumerate(rows):
                inner.upsert([row])
                if stage == "between_rows" and i == 0:
                    os._exit(17)  # killed between the new and the old record's update
        def journal_delete(self, entry_id):
            if stage == "before_journal_delete":
                os._exit(17)
            inner.journal_delete(entry_id)

    bank = StateBank(host=Killer(), embeddings=DeterministicFakeEmbedding(size=16))
    bank.commit(MemoryRecord(id="new", namespace="u", content="I moved to Seattle.",
                             slot="location"),
                [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old_id)])
    print("survived")
    """
)


@pytest.mark.parametrize(
    ("stage", "committed"),
    [
        ("before_journal", False),
        ("after_journal", True),
        ("between_rows", True),
        ("before_journal_delete", True),
    ],
)
def test_process_killed_mid_commit_recovers(tmp_path, stage, committed):
    # Chroma's embedded client is single-process (it caches the collection per
    # path), so this process opens the bank only after the writer has died.
    emb = DeterministicFakeEmbedding(size=16)
    setup = subprocess.run(
        [sys.executable, "-c", _SETUP, str(tmp_path / "bank")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert setup.returncode == 0, setup.stderr[-2000:]
    old_id = "old"
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "bank"), old_id, stage],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 17, proc.stderr[-2000:]

    raw = ChromaHost.persistent(tmp_path / "bank")
    observed = StateBank(host=raw, embeddings=emb, recover=False)
    ids = {r.id for r in observed.records("u")}
    assert observed.host.journal_pending() != [] or stage in ("before_journal",)
    if stage == "between_rows":
        # the fault really happened: the new row exists, the old one is not updated yet
        assert "new" in ids
        assert observed.get("u", old_id).status is RecordStatus.ACTIVE
        assert observed.verify("u") != []

    reopened = StateBank(host=ChromaHost.persistent(tmp_path / "bank"), embeddings=emb)
    assert reopened.host.journal_pending() == []
    assert reopened.verify("u") == []
    recs = {r.id: r for r in reopened.records("u")}
    if committed:
        assert recs[old_id].status is RecordStatus.SUPERSEDED
        assert recs["new"].has_link(LinkType.SUPERSEDES, old_id)
        assert recs[old_id].has_link(LinkType.SUPERSEDED_BY, "new")
    else:
        assert set(recs) == {old_id}
        assert recs[old_id].status is RecordStatus.ACTIVE


def test_stale_journal_entry_never_overwrites_newer_state(tmp_path):
    bank, inner, emb, old = _setup(tmp_path)
    # a journal entry that claims to start from rev 0 of `old`, while `old` moved on
    row = inner.get([old.id])[0]
    stale = dict(row.metadata, atma_status="superseded", atma_rev=1)
    inner.journal_put(
        "00000000000000000001-stale",
        json.dumps(
            {
                "pre_revs": {old.id: 0},
                "rows": [
                    {"id": old.id, "text": row.text, "embedding": row.embedding, "metadata": stale}
                ],
            }
        ),
    )
    fresh = dict(row.metadata, atma_rev=5)
    inner.upsert([type(row)(id=old.id, text=row.text, embedding=row.embedding, metadata=fresh)])
    assert bank.recover() == 0
    assert bank.get("u", old.id).status is RecordStatus.ACTIVE
    assert inner.journal_pending() == []


_INGEST = textwrap.dedent(
    """
    import os, sys, json
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_atma.bank import ChromaHost, StateBank
    from langchain_atma.bank.write_graph import ingest_events

    path, kill_at = sys.argv[1], int(sys.argv[2])
    inner = ChromaHost.persistent(path)
    calls = {"n": 0}

    class Killer:
        def __getattr__(self, name):
            return getattr(inner, name)
        def upsert(self, rows):
            for row in rows:
                inner.upsert([row])
                calls["n"] += 1
                if calls["n"] == kill_at:
                    os._exit(17)  # killed mid-conversation (maybe mid-commit)

    texts = ["I live in Boston, near the river.", "The weather is lovely this week.",
             "I adopted a cat named Nimbus.", "I work as a nurse at St. Mary's.",
             "I moved to Seattle last month, it is home now.",
             "Sadly Nimbus passed away, no pets for me now.",
             "I quit nursing and I work as a teacher now.", "See you on Friday!"]
    events = [{"event_id": f"e{i}", "timestamp": f"2024-0{i + 1}-01T10:00:00",
               "speaker": "Maya", "text": t} for i, t in enumerate(texts)]
    bank = StateBank(host=Killer(), embeddings=DeterministicFakeEmbedding(size=16))
    ingest_events(bank, events, namespace="u", use_gate=False)
    by_id = {r.id: r for r in bank.records("u")}
    ev = {r.id: r.provenance.source_event_id for r in by_id.values()}
    state = {r.provenance.source_event_id: [r.status.value,
             sorted(f"{lk.type.value}:{ev.get(lk.target)}" for lk in r.links)]
             for r in by_id.values()}
    print(json.dumps({"state": state, "problems": len(bank.verify("u"))}))
    """
)


def _run_ingest(path, kill_at):
    return subprocess.run(
        [sys.executable, "-c", _INGEST, str(path), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("kill_at", [3, 7])
def test_killed_ingest_rerun_converges(tmp_path, kill_at):
    ref = _run_ingest(tmp_path / "ref", 0)  # never killed: the reference bank
    assert ref.returncode == 0, ref.stderr
    expected = json.loads(ref.stdout.strip().splitlines()[-1])
    assert expected["problems"] == 0 and len(expected["state"]) == 8
    assert any(s == "superseded" for s, _ in expected["state"].values())  # it has history

    killed = _run_ingest(tmp_path / "bank", kill_at)
    assert killed.returncode == 17  # really died mid-conversation
    again = _run_ingest(tmp_path / "bank", 0)  # re-run the whole ingest on the same bank
    assert again.returncode == 0, again.stderr
    got = json.loads(again.stdout.strip().splitlines()[-1])
    assert got["problems"] == 0
    assert got["state"] == expected["state"]  # same records, statuses and links
