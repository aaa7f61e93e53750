"""Process bodies for test_concurrency.py (top level, so `spawn` can import them).

Every worker reports through a queue as ``(kind, worker_id, payload, error)``;
an exception is reported, never raised, so the parent can assert on it.
"""

from __future__ import annotations

import time
import traceback
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.records import LinkType, MemoryRecord, Provenance, RecordStatus

EMB_SIZE = 16
VALID_STATUSES = {s.value for s in RecordStatus}
SUCCESSOR_LINKS = (LinkType.SUPERSEDED_BY, LinkType.EVOLVES_TO)


def open_bank(url: str, coll: str, lock_dir: str, process_lock: bool = True) -> StateBank:
    return StateBank(
        url=url,
        collection_name=coll,
        embeddings=DeterministicFakeEmbedding(size=EMB_SIZE),
        lock_dir=lock_dir,
        process_lock=process_lock,
    )


def supersede_live(bank: StateBank, ns: str, slot: str, content: str, event: str) -> str:
    """Read the live record of a slot under the writer lock, then supersede it."""
    with bank.writer_lock(ns):
        live = bank.records(ns, slot=slot, statuses=[RecordStatus.ACTIVE])
        if len(live) != 1:
            raise AssertionError(f"slot {slot}: {len(live)} live records under the lock")
        res = bank.commit(
            MemoryRecord(
                namespace=ns,
                content=content,
                slot=slot,
                provenance=Provenance(source_event_id=event),
            ),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=live[0].id)],
        )
        assert res.record is not None
        return res.record.id


def writer(
    url: str,
    coll: str,
    ns: str,
    lock_dir: str,
    wid: int,
    m: int,
    slots: list[str],
    start: Any,
    out: Any,
) -> None:
    """M colliding slot updates: every writer cycles through the same few slots."""
    try:
        bank = open_bank(url, coll, lock_dir)
        start.wait(60)
        for i in range(m):
            slot = slots[(wid + i) % len(slots)]
            supersede_live(
                bank, ns, slot, f"writer {wid} update {i}: new {slot} value", f"w{wid}-e{i}"
            )
        out.put(("writer", wid, m, None))
    except BaseException:  # noqa: BLE001
        out.put(("writer", wid, None, traceback.format_exc()))


def reader(
    url: str, coll: str, ns: str, lock_dir: str, slots: list[str], start: Any, stop: Any, out: Any
) -> None:
    """Query while the writers run; every returned row must be well-formed."""
    problems: list[str] = []
    queries = 0
    try:
        bank = open_bank(url, coll, lock_dir)
        start.wait(60)
        while not stop.is_set() and len(problems) < 20:
            for slot in slots:
                hits = bank.search(ns, f"new {slot} value", k=12)
                queries += 1
                recs = [h.record for h in hits]
                targets = {lk.target for r in recs for lk in r.links}
                found = {r.id for r in bank.get_many(ns, sorted(targets))}
                for r in recs:
                    if r.status.value not in VALID_STATUSES:
                        problems.append(f"{r.id}: status {r.status}")
                    for lk in r.links:
                        if lk.target not in found:
                            problems.append(f"{r.id}: {lk.type.value} -> missing {lk.target}")
                    if r.status is RecordStatus.SUPERSEDED and not r.targets(*SUCCESSOR_LINKS):
                        problems.append(f"{r.id}: superseded without successor")
            time.sleep(0.05)  # leave the server (and a 2-core machine) to the writers
        out.put(("reader", 0, {"queries": queries, "problems": problems}, None))
    except BaseException:  # noqa: BLE001
        out.put(("reader", 0, {"queries": queries, "problems": problems}, traceback.format_exc()))


def stalled_writer(
    url: str,
    coll: str,
    ns: str,
    lock_dir: str,
    process_lock: bool,
    slot: str,
    ready: Any,
    in_write: Any,
    other_done: Any,
    out: Any,
    stall_s: float,
) -> None:
    """Supersede the live record, but stall in the write (after the revision check).

    The stall waits for ``other_done`` at most ``stall_s``: with the lock, the
    other writer cannot commit meanwhile, so the wait runs out.
    """
    try:
        bank = open_bank(url, coll, lock_dir, process_lock)
        real_upsert = bank.host.upsert

        def upsert(rows: Any) -> None:
            if len(rows) > 1:
                in_write.set()
                waited_out = not other_done.wait(stall_s)
                out.put(("stall", 1, waited_out, None))
            real_upsert(rows)

        bank.host.upsert = upsert  # type: ignore[method-assign]
        if not ready.wait(60):  # the other bank is open (its recover() has run)
            raise AssertionError("the quick writer never opened its bank")
        supersede_live(bank, ns, slot, f"stalled writer: new {slot} value", "stalled")
        out.put(("writer", 1, 1, None))
    except BaseException:  # noqa: BLE001
        out.put(("writer", 1, None, traceback.format_exc()))


def quick_writer(
    url: str,
    coll: str,
    ns: str,
    lock_dir: str,
    process_lock: bool,
    slot: str,
    ready: Any,
    in_write: Any,
    other_done: Any,
    out: Any,
    stall_s: float,
) -> None:
    """Wait until the stalled writer is in its write, then supersede the live record."""
    try:
        bank = open_bank(url, coll, lock_dir, process_lock)
        ready.set()
        if not in_write.wait(60):
            raise AssertionError("the stalled writer never reached its write")
        supersede_live(bank, ns, slot, f"quick writer: new {slot} value", "quick")
        other_done.set()
        out.put(("writer", 2, 1, None))
    except BaseException:  # noqa: BLE001
        out.put(("writer", 2, None, traceback.format_exc()))


def store_writer(
    url: str, coll: str, lock_dir: str, wid: int, m: int, keys: list[str], start: Any, out: Any
) -> None:
    """Put ``m`` values through an AtmaStore on its own bank; puts collide on ``keys``."""
    from langchain_atma.store import AtmaStore

    done, err = 0, None
    try:
        store = AtmaStore(open_bank(url, coll, lock_dir))
        start.wait(60)
        for i in range(m):
            key = keys[(wid + i) % len(keys)]
            store.put(("team", "prefs"), key, {"value": f"w{wid}-{i}"})
            done += 1
    except Exception:  # reported to the parent
        err = traceback.format_exc()
    out.put(("store", wid, done, err))
