"""The writer lock (thread + file lock), the revision check, and recover() under concurrency.

Offline: a "shared" host is an in-memory Chroma collection that says it is a
server (``is_server``), so the bank runs its multi-process code paths; other
processes are made with ``os.fork`` (POSIX only).
"""

from __future__ import annotations

import json
import mmap
import os
import signal
import sys
import threading
import time
import uuid

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_atma.bank import ChromaHost, CommitAction, CommitDecision, StateBank
from langchain_atma.bank.locks import WriterLock, default_lock_dir
from langchain_atma.errors import CommitError, ConcurrentWriteError, ConfigError
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus

posix_only = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _emb():
    return DeterministicFakeEmbedding(size=16)


class SharedHost:
    """An in-memory Chroma host that presents itself as a shared server."""

    def __init__(self, inner=None):
        self.inner = inner or ChromaHost.ephemeral()
        self.is_server = True
        self.lock_scope = f"test-shared:{uuid.uuid4().hex}"

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _in_child(fn) -> int:
    """Run fn() in a forked child; its exit code (0 = fn returned True)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            code = 0 if fn() else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


# ---------------------------------------------------------------- WriterLock


def test_reentrant_in_one_thread_exclusive_across_threads(tmp_path):
    lock = WriterLock.for_key("scope|ns", tmp_path)
    assert WriterLock.for_key("scope|ns", tmp_path) is lock  # one instance per key
    got: list[str] = []
    with lock, lock:
        t = threading.Thread(target=lambda: got.append(_try(lock, 0.1)))
        t.start()
        t.join()
    assert got == ["busy"]
    t = threading.Thread(target=lambda: got.append(_try(lock, 0.1)))
    t.start()
    t.join()
    assert got == ["busy", "ok"] and not lock.held


def _try(lock, timeout):
    try:
        lock.acquire(timeout)
    except ConcurrentWriteError:
        return "busy"
    lock.release()
    return "ok"


@posix_only
def test_file_lock_excludes_another_process_and_dies_with_it(tmp_path):
    lock = WriterLock.for_key("scope|ns", tmp_path)
    with lock:
        # the forked child must not inherit the parent's hold (flock is per open
        # file description, and the copied thread lock would be re-entrant)
        assert _in_child(lambda: _try(lock, 0.2) == "busy") == 0
    assert _in_child(lambda: _try(lock, 0.2) == "ok") == 0

    # a holder killed with SIGKILL never blocks the others
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        lock.acquire()
        os.write(w, b"x")
        time.sleep(60)
        os._exit(0)
    assert os.read(r, 1) == b"x"
    assert _try(lock, 0.2) == "busy"
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    assert _try(lock, 2.0) == "ok"


@posix_only
def test_back_to_back_holder_lets_a_waiting_process_in(tmp_path):
    # A process that re-takes the lock right after each release (a bulk ingest)
    # must not starve a waiting one: it hands the lock over when someone waits.
    lock = WriterLock.for_key("scope|ns", tmp_path)
    flags = mmap.mmap(-1, 2)  # shared with the child: [0] looping, [1] stop
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        end = time.monotonic() + 6
        while time.monotonic() < end and not flags[1]:
            with lock:
                flags[0] = 1
                time.sleep(0.002)  # a commit
        os._exit(0)
    while not flags[0]:
        time.sleep(0.001)
    t0 = time.monotonic()
    lock.acquire(30)
    waited = time.monotonic() - t0
    lock.release()
    flags[1] = 1
    os.waitpid(pid, 0)
    assert waited < 1.0, f"waited {waited:.1f} s behind a back-to-back holder"


@posix_only
def test_namespaces_do_not_wait_for_each_other(tmp_path):
    a = WriterLock.for_key("scope|alice", tmp_path)
    b = WriterLock.for_key("scope|bob", tmp_path)
    assert a.path != b.path
    with a:
        assert _in_child(lambda: _try(b, 0.2) == "ok") == 0


def test_lock_dir_from_env_and_bank_lock_files(tmp_path, monkeypatch):
    monkeypatch.setenv("ATMA_LOCK_DIR", str(tmp_path / "env-locks"))
    assert default_lock_dir() == tmp_path / "env-locks"
    bank = StateBank(
        host=ChromaHost.persistent(tmp_path / "bank"), embeddings=_emb(), process_lock=True
    )
    bank.add(MemoryRecord(namespace="u", content="hello"))
    assert len(list((tmp_path / "env-locks").glob("*.lock"))) == 1
    # embedded default: no file lock at all
    plain = StateBank(path=tmp_path / "bank2", embeddings=_emb(), lock_dir=tmp_path / "none")
    plain.add(MemoryRecord(namespace="u", content="hello"))
    assert not (tmp_path / "none").exists()


def test_process_lock_needs_a_named_store():
    with pytest.raises(ConfigError, match="lock_scope"):
        StateBank(host=ChromaHost.ephemeral(), embeddings=_emb(), process_lock=True)


def test_lock_timeout_raises_concurrent_write_error(tmp_path):
    host = SharedHost()
    bank = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path, lock_timeout=0.1)
    held = threading.Event()
    release = threading.Event()

    def hold():
        with bank.writer_lock("u"):
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    assert held.wait(10)
    other = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path, lock_timeout=0.1)
    with pytest.raises(ConcurrentWriteError, match="still held"):
        other.add(MemoryRecord(namespace="u", content="blocked"))
    other.add(MemoryRecord(namespace="v", content="another namespace is free"))
    release.set()
    t.join()
    assert bank.count("u") == 0 and bank.count("v") == 1


# ---------------------------------------------------------------- revision check


class _Stall(Embeddings):
    """Stalls the embedding of one text (computed after planning) until told."""

    def __init__(self, text):
        self.text, self.inner = text, _emb()
        self.reached, self.go = threading.Event(), threading.Event()

    def embed_documents(self, texts):
        if texts == [self.text]:
            self.reached.set()
            assert self.go.wait(10)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def test_revision_check_stops_a_writer_outside_the_lock(tmp_path):
    host = SharedHost()
    stall = _Stall("A: Seattle")
    # process_lock=False: the two banks stand for writers on two machines
    a = StateBank(host=host, embeddings=stall, lock_dir=tmp_path, process_lock=False)
    b = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path, process_lock=False)
    seed = b.add(MemoryRecord(namespace="u", content="Boston", slot="location"))
    errors: list[BaseException] = []

    def commit_a():
        try:
            a.commit(
                MemoryRecord(namespace="u", content="A: Seattle", slot="location"),
                [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
            )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=commit_a)
    t.start()
    assert stall.reached.wait(10)
    b_new = b.commit(
        MemoryRecord(namespace="u", content="B: Ashcombe", slot="location"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
    ).record
    stall.go.set()
    t.join(10)
    assert len(errors) == 1 and isinstance(errors[0], ConcurrentWriteError)
    assert isinstance(errors[0], CommitError)  # callers catching CommitError see it too
    assert b.verify("u") == [] and b.count("u") == 2
    assert b.get("u", seed.id).targets(LinkType.SUPERSEDED_BY) == [b_new.id]
    assert host.journal_pending() == []


def test_shared_banks_in_one_process_wait_for_each_other(tmp_path):
    # same host scope + namespace: the process-wide lock orders the two banks
    host = SharedHost()
    stall = _Stall("A: Seattle")
    a = StateBank(host=host, embeddings=stall, lock_dir=tmp_path)
    b = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path)
    seed = b.add(MemoryRecord(namespace="u", content="Boston", slot="location"))
    t = threading.Thread(
        target=lambda: a.commit(
            MemoryRecord(namespace="u", content="A: Seattle", slot="location"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
        )
    )
    t.start()
    assert stall.reached.wait(10)
    threading.Timer(0.3, stall.go.set).start()
    with b.writer_lock("u"):  # waits for A's commit
        live = b.records("u", slot="location", statuses=[RecordStatus.ACTIVE])
        assert [r.content for r in live] == ["A: Seattle"]
        b.commit(
            MemoryRecord(namespace="u", content="B: Ashcombe", slot="location"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=live[0].id)],
        )
    t.join(10)
    assert b.verify("u") == [] and b.count("u") == 3


# ---------------------------------------------------------------- recover()


class _Die(BaseException):
    """Stands for the death of the writer (not caught by the bank's rollback)."""


def test_recover_drops_an_entry_overtaken_by_a_later_commit(tmp_path):
    host = SharedHost()
    bank = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path)
    seed = bank.add(MemoryRecord(namespace="u", content="Boston", slot="location"))
    real_upsert = host.inner.upsert

    def die(rows):
        raise _Die()

    host.upsert = die
    with pytest.raises(_Die):  # journaled, then the writer "dies" before its write
        bank.commit(
            MemoryRecord(id="dead", namespace="u", content="Seattle", slot="location"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
        )
    host.upsert = real_upsert
    assert len(host.journal_pending()) == 1
    # another writer supersedes the same record meanwhile (same revision number
    # as the dead entry's after-image, but another commit id)
    other = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path, recover=False)
    other.commit(
        MemoryRecord(namespace="u", content="Ashcombe", slot="location"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
    )
    entry = json.loads(host.journal_pending()[0][1])
    seed_after = next(r for r in entry["rows"] if r["id"] == seed.id)
    assert seed_after["metadata"]["atma_rev"] == host.get([seed.id])[0].metadata["atma_rev"]

    assert bank.recover() == 0  # the dead commit is dropped whole, not half-applied
    assert host.journal_pending() == []
    assert bank.verify("u") == []
    assert "dead" not in {r.id for r in bank.records("u")}


def test_recover_skips_an_entry_whose_writer_rolled_back_meanwhile(tmp_path):
    host = SharedHost()
    bank = StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path)
    seed = bank.add(MemoryRecord(namespace="u", content="Boston", slot="location"))
    in_write, snapshot, go = threading.Event(), threading.Event(), threading.Event()
    real_upsert, real_pending = host.inner.upsert, host.inner.journal_pending

    def failing_upsert(rows):
        if len(rows) > 1 and not in_write.is_set():
            in_write.set()
            assert go.wait(10)
            raise RuntimeError("disk full")
        real_upsert(rows)

    def pending():
        out = real_pending()
        if in_write.is_set() and not go.is_set():
            snapshot.set()  # the opener saw the in-flight entry
        return out

    host.upsert, host.journal_pending = failing_upsert, pending
    errors: list[BaseException] = []

    def commit():
        try:
            bank.commit(
                MemoryRecord(id="new", namespace="u", content="Seattle", slot="location"),
                [CommitDecision(action=CommitAction.SUPERSEDE, target_id=seed.id)],
            )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=commit)
    t.start()
    assert in_write.wait(10)
    opened: list[StateBank] = []
    opener = threading.Thread(
        target=lambda: opened.append(StateBank(host=host, embeddings=_emb(), lock_dir=tmp_path))
    )
    opener.start()  # its recover() sees the entry, then waits for the lock
    assert snapshot.wait(10)
    go.set()  # the writer's upsert fails; it rolls back and drops its entry
    t.join(10)
    opener.join(10)
    assert len(errors) == 1 and "rolled back" in str(errors[0])
    assert opened and host.journal_pending() == []
    assert {r.id for r in bank.records("u")} == {seed.id}
    assert bank.get("u", seed.id).status is RecordStatus.ACTIVE
    assert bank.verify("u") == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX lock files")
def test_default_lock_dir_is_under_tempdir(monkeypatch):
    monkeypatch.delenv("ATMA_LOCK_DIR", raising=False)
    import tempfile

    assert default_lock_dir() == __import__("pathlib").Path(tempfile.gettempdir()) / "atma-locks"
