"""The state bank: records with state roles, kept in a host vector store.

:class:`StateBank` is the bank level of A-TMA. It stores :class:`MemoryRecord`
rows in a host (Chroma by default), and its core operation is
:meth:`StateBank.commit`: write a new record together with decisions about
earlier records (supersede, transition, coexist, scoped exception, related,
duplicate), as **one** host write.

Invariants (enforced on every commit, checked by :meth:`StateBank.verify`):

* a single-valued slot never has two ``active`` records unless they are linked
  as ``coexists`` or ``scoped_exception``;
* superseded records are never deleted and stay retrievable;
* links are reciprocal (``supersedes`` <-> ``superseded_by``, ``evolves_from``
  <-> ``evolves_to``; ``coexists``, ``scoped_exception``, ``related`` both ways);
* committing the same source event twice is idempotent;
* a commit is applied as one write: a journal entry holding the full after-image
  of every touched row is written first, then all rows in one ``upsert``, then
  the entry is dropped. A bank opened after a crash rolls pending entries
  forward (only over rows that did not change since), so no partial commit
  stays visible.
* nothing crosses namespaces: every read is bound to one namespace (with the
  default Chroma host each namespace has its own collection), and ids of another
  namespace are reported as missing. Record ids are unique within a namespace
  (within the whole bank on a host that keeps every namespace in one collection);
* one writer per namespace at a time: commits hold the bank's writer lock
  (:meth:`StateBank.writer_lock`), a thread lock plus, for a Chroma server, a
  file lock shared by every process of the machine (:mod:`~langchain_atma.bank.locks`).
  On a server, a commit also re-reads the revisions (``atma_rev``) of the rows
  it changes just before writing, and raises
  :class:`~langchain_atma.errors.ConcurrentWriteError` (nothing written) when a
  writer that does not share the lock changed them in between.

Concurrency model: an embedded bank (``path=``) is for one process, with any
number of threads; a Chroma server (``url=``) takes writers from many processes
of one machine (they share the lock directory, ``ATMA_LOCK_DIR``); writers on
different machines need an external lock or a single writer.

Example:
    >>> from langchain_atma.bank import StateBank, CommitDecision, CommitAction
    >>> from langchain_atma.records import MemoryRecord
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    >>> old = bank.commit(MemoryRecord(namespace="u", content="I live in Boston.",
    ...                                slot="location")).record
    >>> new = bank.commit(
    ...     MemoryRecord(namespace="u", content="I moved to Seattle.", slot="location"),
    ...     [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)]).record
    >>> bank.get("u", old.id).status.value, bank.get("u", new.id).status.value
    ('superseded', 'active')
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field

from langchain_atma.bank.hosts import ChromaHost, HostFilter, HostRow, HostStore
from langchain_atma.bank.locks import DEFAULT_LOCK_TIMEOUT, WriterLock, default_lock_dir
from langchain_atma.errors import (
    AtmaError,
    CommitError,
    ConcurrentWriteError,
    ConfigError,
    InvalidQueryError,
    InvalidRecordError,
    RecordNotFoundError,
)
from langchain_atma.records import (
    RECIPROCAL_LINKS,
    Link,
    LinkType,
    MemoryRecord,
    Provenance,
    RecordStatus,
    TransitionInfo,
    validate_namespace,
)

__all__ = [
    "CommitAction",
    "CommitDecision",
    "CommitResult",
    "DEFAULT_MULTI_VALUED_SLOTS",
    "ScoredRecord",
    "StateBank",
    "Violation",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
DEFAULT_PATH = "./.atma"
DEFAULT_COLLECTION = "atma_memory"

DEFAULT_MULTI_VALUED_SLOTS: frozenset[str] = frozenset(
    {
        "hobbies",
        "hobby",
        "likes",
        "dislikes",
        "preferences",
        "preference",
        "interests",
        "skills",
        "languages",
        "friends",
        "goals",
        "activities",
        "favorites",
        "favourites",
    }
)
"""Slot families that may hold several active values at once.

A slot key may carry a sub-key after a colon (``likes:food``); its family is the
part before the colon. Every other slot is single-valued.
"""

_STATE_LINKS = {
    LinkType.SUPERSEDES,
    LinkType.SUPERSEDED_BY,
    LinkType.EVOLVES_FROM,
    LinkType.EVOLVES_TO,
    LinkType.COEXISTS,
    LinkType.SCOPED_EXCEPTION,
}


class CommitAction(str, Enum):
    """What a commit does to one earlier record."""

    SUPERSEDE = "supersede"
    """The new record replaces the target: target -> superseded, new -> active.
    When the target is a transition record, it is the change that led to the new
    state: ``evolves_to`` / ``evolves_from`` links, statuses unchanged."""
    TRANSITION = "transition"
    """The new record describes the change away from the target: new -> transition,
    target -> superseded, ``evolves_from`` / ``evolves_to`` links."""
    COEXIST = "coexist"
    """Both stay active, linked ``coexists``."""
    SCOPED_EXCEPTION = "scoped_exception"
    """Both stay active; the new one qualifies the target (``scoped_exception``)."""
    RELATED = "related"
    """A weak ``related`` link, no state change."""
    DUPLICATE = "duplicate"
    """The new record restates the target: nothing is written (no-op)."""


class CommitDecision(BaseModel):
    """One decision about an earlier record, applied by :meth:`StateBank.commit`."""

    action: CommitAction = Field(description="What to do with the target record.")
    target_id: str = Field(min_length=1, description="Id of the earlier record.")
    reason: str = Field(default="", description="Short human-readable reason.")
    transition: TransitionInfo | None = Field(
        default=None, description="Transition metadata (for TRANSITION decisions)."
    )


class CommitResult(BaseModel):
    """Outcome of one commit."""

    commit_id: str = Field(description="Id of the commit (journal entry id).")
    record: MemoryRecord | None = Field(
        default=None, description="The new record as stored (None for a duplicate)."
    )
    updated: list[MemoryRecord] = Field(
        default_factory=list, description="Earlier records whose status or links changed."
    )
    applied: list[CommitDecision] = Field(default_factory=list, description="Decisions applied.")
    duplicate_of: str | None = Field(default=None, description="Set when the commit was a no-op.")
    idempotent: bool = Field(
        default=False, description="True when the source event was already committed."
    )


class ScoredRecord(BaseModel):
    """A search hit."""

    record: MemoryRecord = Field(description="The record.")
    score: float = Field(description="Cosine similarity to the query (higher is closer).")
    vector: list[float] | None = Field(
        default=None,
        repr=False,
        exclude=True,
        description="The record's stored embedding, when the host returned it with the hit.",
    )


class Violation(BaseModel):
    """An invariant violation found by :meth:`StateBank.verify`."""

    kind: str = Field(
        description="dangling_link | missing_reciprocal | double_active | "
        "orphan_superseded | bad_row"
    )
    record_id: str = Field(description="The record where it was found.")
    detail: str = Field(description="What is wrong.")


# ---------------------------------------------------------------- row (de)serialization

_seq_counter = itertools.count()
_seq_lock = threading.Lock()


def _next_seq() -> int:
    with _seq_lock:
        return time.time_ns() + next(_seq_counter) % 1000


def _record_to_row(rec: MemoryRecord, embedding: Sequence[float] | None, rev: int) -> HostRow:
    md: dict[str, Any] = dict(rec.metadata)
    md.update(
        {
            "atma_v": SCHEMA_VERSION,
            "atma_ns": rec.namespace,
            "atma_status": rec.status.value,
            "atma_links": json.dumps([[lk.type.value, lk.target] for lk in rec.links]),
            "atma_time": rec.time.isoformat(),
            "atma_ts": rec.time.timestamp(),
            "atma_seq": int(rec.seq),
            "atma_rev": int(rev),
        }
    )
    optional = {
        "atma_slot": rec.slot,
        "atma_event": rec.provenance.source_event_id,
        "atma_speaker": rec.provenance.speaker,
        "atma_session": rec.provenance.session_id,
        "atma_transition": rec.transition.model_dump_json() if rec.transition else None,
        "atma_fact": rec.states_fact,
    }
    md.update({k: v for k, v in optional.items() if v is not None})
    return HostRow(
        id=rec.id,
        text=rec.content,
        embedding=None if embedding is None else [float(x) for x in embedding],
        metadata=md,
    )


def _optional_bool(value: Any) -> bool | None:
    """A stored flag read back (hosts may return 0/1 for a bool); ``None`` when absent."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise ValueError(f"atma_fact must be a bool, got {value!r}")


def _row_to_record(row: HostRow) -> MemoryRecord:
    md = row.metadata
    try:
        links = [Link(type=LinkType(t), target=str(g)) for t, g in json.loads(md["atma_links"])]
        transition = (
            TransitionInfo.model_validate_json(md["atma_transition"])
            if md.get("atma_transition")
            else None
        )
        return MemoryRecord(
            id=row.id,
            namespace=md["atma_ns"],
            content=row.text,
            time=md["atma_time"],
            status=md["atma_status"],
            links=links,
            slot=md.get("atma_slot"),
            provenance=Provenance(
                source_event_id=md.get("atma_event"),
                speaker=md.get("atma_speaker"),
                session_id=md.get("atma_session"),
            ),
            transition=transition,
            metadata={k: v for k, v in md.items() if not k.startswith("atma_")},
            seq=int(md.get("atma_seq", 0)),
            states_fact=_optional_bool(md.get("atma_fact")),
        )
    except (KeyError, ValueError, TypeError, AtmaError) as exc:
        raise InvalidRecordError(f"host row {row.id!r} is not a valid atma record: {exc}") from exc


def _slot_family(slot: str) -> str:
    return slot.split(":", 1)[0].strip().lower()


def _rev(row: HostRow) -> int:
    return int(row.metadata.get("atma_rev", 0))


class _WriterHold(AbstractContextManager[None]):
    """Holds a namespace's writer lock.

    With a process lock, that is the namespace's :class:`WriterLock` alone (its
    own thread lock orders this process's threads; other namespaces go on in
    parallel). Without one, it is the bank's re-entrant lock. Never both, so two
    threads nesting writer locks of two namespaces cannot deadlock on the bank
    lock.
    """

    __slots__ = ("_file", "_thread", "_timeout")

    def __init__(
        self, file_lock: WriterLock | None, thread_lock: Any, timeout: float | None
    ) -> None:
        self._file = file_lock
        self._thread = thread_lock
        self._timeout = timeout

    def __enter__(self) -> None:
        if self._file is not None:
            self._file.acquire(self._timeout)
        else:
            self._thread.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._file is not None:
            self._file.release()
        else:
            self._thread.release()


# --------------------------------------------------------------------------- the bank


class StateBank:
    """State-aware memory bank over a host vector store.

    Host selection, first match wins: ``host`` argument; ``url`` argument or
    ``ATMA_CHROMA_URL`` (a Chroma server); ``path`` argument or ``ATMA_PATH``
    (embedded Chroma ``PersistentClient``); default ``./.atma``.

    Args:
        host: any :class:`~langchain_atma.bank.hosts.HostStore`.
        path: directory of the embedded Chroma bank.
        url: URL of a Chroma server (``chroma run``), e.g. ``http://127.0.0.1:8000``.
        collection_name: Chroma collection (``ATMA_COLLECTION``; default ``atma_memory``).
        embeddings: any LangChain embeddings, ``"default"`` (all-MiniLM-L6-v2,
            offline; also ``None``) or a local SentenceTransformer model directory.
        multi_valued_slots: slot families that may hold several active values.
        recover: roll pending journal entries forward on open (default True).
        record_cache: keep a write-through LRU cache of records read or written by
            this process (speeds up link expansion). Default: on for in-process
            hosts, off for a Chroma server, where other processes may write.
        cache_size: maximum number of cached records.
        process_lock: serialise commits of this machine's processes with a file
            lock per (host, collection, namespace). Default: on for a Chroma
            server, off otherwise (an embedded bank is single-process). The host
            must name its store (``lock_scope``, set by :class:`ChromaHost`).
        lock_dir: directory of the lock files; every writer process must use the
            same one (``ATMA_LOCK_DIR``; default ``<tempdir>/atma-locks``).
        lock_timeout: seconds a commit waits for the file lock before
            :class:`~langchain_atma.errors.ConcurrentWriteError` (None: forever).
        create: create the bank directory and collection when missing (default);
            ``False`` opens an existing bank only (read-only tools), raising
            :class:`~langchain_atma.errors.BankNotFoundError` and writing nothing.

    Threads: one bank may be shared by any number of threads; commits, ``clear``,
    ``repair`` and ``recover`` are serialised by a re-entrant lock (per bank; per
    namespace and process-wide with ``process_lock``).

    Raises:
        ConfigError: ``process_lock=True`` with a host that has no ``lock_scope``;
            ``embeddings`` that name no model.
    """

    def __init__(
        self,
        *,
        host: HostStore | None = None,
        path: str | os.PathLike[str] | None = None,
        url: str | None = None,
        collection_name: str | None = None,
        embeddings: Embeddings | str | os.PathLike[str] | None = None,
        multi_valued_slots: Iterable[str] | None = None,
        recover: bool = True,
        record_cache: bool | None = None,
        cache_size: int = 50_000,
        process_lock: bool | None = None,
        lock_dir: str | os.PathLike[str] | None = None,
        lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT,
        create: bool = True,
    ) -> None:
        from langchain_atma.embeddings import resolve_embeddings

        resolved = resolve_embeddings(embeddings)  # before a host is opened or created
        collection = collection_name or os.environ.get("ATMA_COLLECTION") or DEFAULT_COLLECTION
        if host is None:
            url = url or os.environ.get("ATMA_CHROMA_URL") or None
            if url:
                host = ChromaHost.server(url, collection, create=create)
            else:
                bank_path = Path(path or os.environ.get("ATMA_PATH") or DEFAULT_PATH)
                host = ChromaHost.persistent(bank_path, collection, create=create)
        self.host: HostStore = host
        self.embeddings: Embeddings = resolved
        self.multi_valued_slots = frozenset(
            s.lower() for s in (multi_valued_slots or DEFAULT_MULTI_VALUED_SLOTS)
        )
        self._lock = threading.RLock()
        self._shared = bool(getattr(host, "is_server", False))
        if process_lock is None:
            process_lock = self._shared
        scope = getattr(host, "lock_scope", None)
        if process_lock and not scope:
            raise ConfigError(
                f"process_lock=True needs a host that names its store (lock_scope); "
                f"{type(host).__name__} does not"
            )
        self._lock_scope: str | None = str(scope) if process_lock else None
        self._lock_dir = Path(lock_dir) if lock_dir is not None else default_lock_dir()
        self._lock_timeout = lock_timeout
        self._ns_locks: dict[str, WriterLock] = {}
        if record_cache is None:
            record_cache = not self._shared
        # keyed by (namespace, id): ids are unique within a namespace
        self._cache: OrderedDict[tuple[str, str], MemoryRecord] | None = (
            OrderedDict() if record_cache else None
        )
        self._cache_lock = threading.Lock()
        self._cache_size = max(1, cache_size)
        self._centroids = _Centroids()
        if recover:
            self.recover()

    # ------------------------------------------------------------------ writer lock
    def writer_lock(self, namespace: str) -> AbstractContextManager[None]:
        """The namespace's writer lock, as a context manager (re-entrant).

        Every commit takes it. Hold it yourself around a read-decide-commit
        sequence so that no other writer (thread, or process of this machine
        on the same Chroma server) commits in between::

            with bank.writer_lock("u"):
                live = bank.records("u", slot="location", statuses=[RecordStatus.ACTIVE])
                bank.commit(new, [CommitDecision(action=CommitAction.SUPERSEDE,
                                                 target_id=live[0].id)])

        Raises:
            ConcurrentWriteError: the file lock was not free within ``lock_timeout``.
        """
        validate_namespace(namespace)
        return _WriterHold(self._ns_lock(namespace), self._lock, self._lock_timeout)

    def _ns_lock(self, namespace: str) -> WriterLock | None:
        if self._lock_scope is None:
            return None
        lock = self._ns_locks.get(namespace)
        if lock is None:
            lock = WriterLock.for_key(f"{self._lock_scope}|{namespace}", self._lock_dir)
            self._ns_locks[namespace] = lock
        return lock

    # ------------------------------------------------------------------ record cache
    def _cache_put(self, records: Iterable[MemoryRecord]) -> None:
        cache = self._cache
        if cache is None:
            return
        with self._cache_lock:
            for rec in records:
                key = (rec.namespace, rec.id)
                cache[key] = rec
                cache.move_to_end(key)
            while len(cache) > self._cache_size:
                cache.popitem(last=False)

    def _cache_drop(self, namespace: str, ids: Iterable[str]) -> None:
        if self._cache is not None:
            with self._cache_lock:
                for i in ids:
                    self._cache.pop((namespace, i), None)

    @classmethod
    def in_memory(cls, *, embeddings: Embeddings | str | None = None, **kwargs: Any) -> StateBank:
        """A bank on an ephemeral in-memory Chroma collection (tests, demos)."""
        return cls(host=ChromaHost.ephemeral(), embeddings=embeddings, **kwargs)

    # ------------------------------------------------------------------ embeddings
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts with the bank's embeddings (float32 matrix)."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        encode = getattr(self.embeddings, "encode", None)
        if callable(encode):
            return np.asarray(encode(list(texts)), dtype=np.float32)
        return np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query."""
        return np.asarray(self.embeddings.embed_query(text), dtype=np.float32)

    def is_single_valued(self, slot: str | None) -> bool:
        """Whether a slot may hold only one active record (unless coexisting)."""
        return bool(slot) and _slot_family(slot or "") not in self.multi_valued_slots

    # ------------------------------------------------------------------ reads
    def get(self, namespace: str, record_id: str) -> MemoryRecord:
        """Fetch one record.

        Raises:
            RecordNotFoundError: when no record with that id exists in the namespace.
        """
        validate_namespace(namespace)
        recs = self.get_many(namespace, [record_id])
        if not recs:
            raise RecordNotFoundError(f"record {record_id!r} not found in namespace {namespace!r}")
        return recs[0]

    def get_many(self, namespace: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records for the ids that exist in the namespace, in the order asked."""
        validate_namespace(namespace)
        uniq = list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))
        cache = self._cache
        found: dict[str, MemoryRecord] = {}
        if cache is not None:
            for rid in uniq:
                hit = cache.get((namespace, rid))
                if hit is not None:
                    found[rid] = hit
        missing = [rid for rid in uniq if rid not in found]
        if missing:
            fetched = [
                _row_to_record(row)
                for row in self.host.get(missing, include_embeddings=False, namespace=namespace)
                if row.metadata.get("atma_ns") is not None
            ]
            self._cache_put(fetched)
            found.update((r.id, r) for r in fetched)
        return [
            found[rid].model_copy()
            for rid in uniq
            if rid in found and found[rid].namespace == namespace
        ]

    def vectors(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored embeddings of records (no re-encoding), keyed by id."""
        validate_namespace(namespace)
        out: dict[str, np.ndarray] = {}
        for row in self.host.get(list(dict.fromkeys(ids)), namespace=namespace):
            if row.metadata.get("atma_ns") == namespace and row.embedding is not None:
                out[row.id] = np.asarray(row.embedding, dtype=np.float32)
        return out

    def centroid(self, namespace: str) -> np.ndarray | None:
        """The mean vector of a namespace's records (``None`` while it has none).

        Seeded from up to :data:`CENTROID_SEED_RECORDS` stored vectors the first
        time a namespace is asked for, then updated by every commit of this
        bank object. A mean over many records moves slowly, so writes of other
        processes that this object does not see change it little. The write
        path's proposal gate centres its candidate query on it.
        """
        validate_namespace(namespace)
        return self._centroids.get(namespace, self._sample_vectors)

    def _sample_vectors(self, namespace: str, n: int) -> list[np.ndarray]:
        ids = [r.id for r in self.host.scan(HostFilter(namespace))[:n]]
        return [
            np.asarray(r.embedding, dtype=np.float64)
            for r in self.host.get(ids, namespace=namespace)
            if r.embedding is not None and r.metadata.get("atma_ns") == namespace
        ]

    def find_by_event(self, namespace: str, source_event_id: str) -> MemoryRecord | None:
        """The record written for a source event, if any."""
        validate_namespace(namespace)
        rows = self.host.scan(HostFilter(namespace, equals={"atma_event": source_event_id}))
        return _row_to_record(rows[0]) if rows else None

    def records(
        self,
        namespace: str,
        *,
        statuses: Iterable[RecordStatus] | None = None,
        slot: str | None = None,
    ) -> list[MemoryRecord]:
        """All records of a namespace (optionally of one status set / slot), oldest first."""
        validate_namespace(namespace)
        equals = {"atma_slot": slot} if slot is not None else {}
        any_of = {"atma_status": tuple(s.value for s in statuses)} if statuses is not None else {}
        flt = HostFilter(namespace, equals=equals, any_of=any_of)
        recs = [_row_to_record(r) for r in self.host.scan(flt)]
        return sorted(recs, key=lambda r: r.sort_key)

    def __repr__(self) -> str:
        from langchain_atma.embeddings import encoder_name

        where = getattr(self.host, "lock_scope", None) or type(self.host).__name__
        return f"StateBank({where!r}, embeddings={encoder_name(self.embeddings)!r})"

    def namespaces(self) -> list[str]:
        """The namespaces that hold at least one record, sorted.

        Reads every row's metadata: meant for tools and error messages, not hot paths.

        Raises:
            ConfigError: the host cannot list its rows.
        """
        lister = getattr(self.host, "namespaces", None)
        if not callable(lister):
            raise ConfigError(f"{type(self.host).__name__} cannot list namespaces")
        return list(lister())

    def count(self, namespace: str) -> int:
        """Number of records in a namespace."""
        validate_namespace(namespace)
        return len(self.host.scan(HostFilter(namespace)))

    def search(
        self,
        namespace: str,
        query: str,
        k: int = 5,
        *,
        statuses: Iterable[RecordStatus] | None = None,
    ) -> list[ScoredRecord]:
        """Host semantic search inside one namespace.

        Raises:
            InvalidQueryError: for an empty query or ``k < 1``.
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidQueryError("query is empty")
        return self.search_by_vector(namespace, self.embed_query(query), k, statuses=statuses)

    def search_by_vector(
        self,
        namespace: str,
        vector: Sequence[float] | np.ndarray,
        k: int = 5,
        *,
        statuses: Iterable[RecordStatus] | None = None,
        speaker: str | None = None,
    ) -> list[ScoredRecord]:
        """Vector search inside one namespace, optionally restricted by status / speaker."""
        validate_namespace(namespace)
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InvalidQueryError(f"k must be a positive integer, got {k!r}")
        if speaker is not None and (not isinstance(speaker, str) or not speaker.strip()):
            raise InvalidQueryError(f"speaker must be a non-empty string, got {speaker!r}")
        flt = HostFilter(
            namespace,
            equals={"atma_speaker": speaker} if speaker is not None else {},
            any_of={"atma_status": tuple(s.value for s in statuses)}
            if statuses is not None
            else {},
        )
        hits = self.host.query([float(x) for x in vector], k, flt)
        out = [
            ScoredRecord(record=_row_to_record(row), score=score, vector=row.embedding)
            for row, score in hits
            if row.metadata.get("atma_ns") == namespace
        ]
        self._cache_put(h.record for h in out)
        return out

    def linked(
        self, namespace: str, record: MemoryRecord, *types: LinkType
    ) -> list[tuple[LinkType, MemoryRecord]]:
        """Records a record links to (optionally through given link types)."""
        pairs = [(lk.type, lk.target) for lk in record.links if not types or lk.type in types]
        found = {r.id: r for r in self.get_many(namespace, [t for _, t in pairs])}
        return [(t, found[g]) for t, g in pairs if g in found]

    def chains(self, namespace: str) -> list[list[MemoryRecord]]:
        """State chains: records connected by state links, each in time order.

        Records without any state link are not included.
        """
        recs = {r.id: r for r in self.records(namespace)}
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.get(x, x) != x:
                x = parent[x]
            return x

        for r in recs.values():
            for lk in r.links:
                if lk.type in _STATE_LINKS and lk.target in recs:
                    a, b = find(r.id), find(lk.target)
                    if a != b:
                        parent[a] = b
        groups: dict[str, list[MemoryRecord]] = {}
        for r in recs.values():
            if any(lk.type in _STATE_LINKS for lk in r.links):
                groups.setdefault(find(r.id), []).append(r)
        chains = [sorted(g, key=lambda r: r.sort_key) for g in groups.values()]
        return sorted(chains, key=lambda c: c[0].sort_key)

    # ------------------------------------------------------------------ commit
    def add(
        self, record: MemoryRecord, *, embedding: Sequence[float] | None = None
    ) -> MemoryRecord:
        """Store a record with no decisions (a plain append)."""
        res = self.commit(record, (), embedding=embedding)
        assert res.record is not None
        return res.record

    def commit(
        self,
        record: MemoryRecord,
        decisions: Sequence[CommitDecision] = (),
        *,
        embedding: Sequence[float] | np.ndarray | None = None,
        event_checked: bool = False,
    ) -> CommitResult:
        """Write ``record`` and apply ``decisions`` about earlier records, as one write.

        Args:
            record: the new record. Links it already carries are applied too
                (``supersedes``, ``evolves_from``, ``coexists``,
                ``scoped_exception`` and ``related`` are turned into decisions;
                reciprocal links are added to the targets).
            decisions: what to do with earlier records of the same namespace.
            embedding: the record's vector if already computed (avoids a second
                encoder pass); computed with the bank's embeddings otherwise.
            event_checked: the caller holds the namespace's writer lock around this
                call and found no record of the record's source event with
                :meth:`find_by_event` inside that same hold; the commit skips that
                lookup (one host round trip). Leave it off otherwise.

        Returns:
            A :class:`CommitResult`.

        Raises:
            RecordNotFoundError: a decision or link names an id that is not in
                the namespace.
            CommitError: the decisions are inconsistent, or would break the
                single-active-per-slot invariant. Nothing is written.
            ConcurrentWriteError: (a :class:`CommitError`) on a Chroma server,
                another writer changed a target between this commit's read and
                its write, or the writer lock was not free in time. Nothing is
                written; re-read and retry.
        """
        if not isinstance(record, MemoryRecord):
            raise InvalidRecordError(f"commit expects a MemoryRecord, got {type(record).__name__}")
        decisions = [
            d if isinstance(d, CommitDecision) else CommitDecision.model_validate(d)
            for d in decisions
        ]
        ns = record.namespace
        with self.writer_lock(ns):
            # 1. idempotency
            event = record.provenance.source_event_id
            if event and not event_checked:
                existing = self.find_by_event(ns, event)
                if existing is not None:
                    return CommitResult(
                        commit_id="",
                        record=existing,
                        idempotent=True,
                    )
            # ids share one space on a single collection: look across namespaces there
            clash = self.host.get(
                [record.id],
                include_embeddings=False,
                namespace=ns if getattr(self.host, "namespaced", False) else None,
            )
            if clash:
                if clash[0].metadata.get("atma_ns") == ns and clash[0].text == record.content:
                    return CommitResult(
                        commit_id="", record=_row_to_record(clash[0]), idempotent=True
                    )
                raise CommitError(f"record id {record.id!r} already exists")

            # 2. links carried by the record become decisions
            decisions = decisions + self._decisions_from_links(record)
            new = record.model_copy(deep=True)
            new.links = []  # re-added, with reciprocals, by the decisions below
            self._check_decisions(new, decisions)

            # 3. load targets (namespace-checked). On a shared host they are read
            # from the host, with their revisions, for the check in step 6.
            target_ids = list(dict.fromkeys(d.target_id for d in decisions))
            plan_revs: dict[str, int] | None = None
            if self._shared and target_ids:
                rows = [
                    r
                    for r in self.host.get(target_ids, include_embeddings=False, namespace=ns)
                    if r.metadata.get("atma_ns") == ns
                ]
                targets = {r.id: _row_to_record(r) for r in rows}
                plan_revs = {r.id: _rev(r) for r in rows}
            else:
                targets = {r.id: r for r in self.get_many(ns, target_ids)}
            missing = [t for t in target_ids if t not in targets]
            if missing:
                raise RecordNotFoundError(
                    f"commit names record(s) {missing} not found in namespace {ns!r}"
                )

            dup = [d for d in decisions if d.action is CommitAction.DUPLICATE]
            if dup:
                return CommitResult(commit_id="", duplicate_of=dup[0].target_id, applied=dup)

            # 4. apply decisions in memory
            new.seq = _next_seq()
            changed: dict[str, MemoryRecord] = {}
            for d in decisions:
                tgt = changed.get(d.target_id) or targets[d.target_id].model_copy(deep=True)
                self._apply(new, tgt, d)
                changed[tgt.id] = tgt

            # 5. invariant: single active per single-valued slot
            self._check_slot_invariant(new, changed)

            # 6. one journaled write, from the rows' current before-images. On a
            # shared host the targets must still be at the revisions planned from:
            # a writer that does not share the lock may have changed them since.
            vec = embedding
            if vec is None:
                vec = self.embed([new.content])[0]
            # (with their vectors, so the upsert needs no read of its own)
            before = (
                [
                    r
                    for r in self.host.get(target_ids, namespace=ns)
                    if r.metadata.get("atma_ns") == ns
                ]
                if target_ids
                else []
            )
            revs = {r.id: _rev(r) for r in before}
            if plan_revs is not None and revs != plan_revs:
                moved = sorted(i for i in plan_revs if revs.get(i) != plan_revs[i])
                raise ConcurrentWriteError(
                    f"record(s) {moved} of namespace {ns!r} changed while this commit was "
                    "planned (a writer outside this machine's lock?); nothing was written"
                )
            vectors = {r.id: r.embedding for r in before}
            rows = [_record_to_row(new, list(map(float, vec)), 1)]
            rows += [
                _record_to_row(t, vectors.get(t.id), revs.get(t.id, 0) + 1)
                for t in changed.values()
            ]
            try:
                commit_id = self._write(rows, before, new.id)
            except BaseException:
                self._cache_drop(ns, [new.id, *changed])
                raise
            self._cache_put([new, *changed.values()])
            self._centroids.add(ns, np.asarray(vec, dtype=np.float64))
            return CommitResult(
                commit_id=commit_id,
                record=new,
                updated=list(changed.values()),
                applied=list(decisions),
            )

    # -- commit helpers ------------------------------------------------------------
    @staticmethod
    def _decisions_from_links(record: MemoryRecord) -> list[CommitDecision]:
        mapping = {
            LinkType.SUPERSEDES: CommitAction.SUPERSEDE,
            LinkType.EVOLVES_FROM: CommitAction.TRANSITION,
            LinkType.COEXISTS: CommitAction.COEXIST,
            LinkType.SCOPED_EXCEPTION: CommitAction.SCOPED_EXCEPTION,
            LinkType.RELATED: CommitAction.RELATED,
        }
        out = []
        for lk in record.links:
            if lk.type not in mapping:
                raise CommitError(
                    f"a new record cannot carry a {lk.type.value!r} link; commit the newer "
                    "record with the forward link (supersedes / evolves_from) instead"
                )
            out.append(
                CommitDecision(
                    action=mapping[lk.type],
                    target_id=lk.target,
                    reason="link carried by the record",
                )
            )
        return out

    @staticmethod
    def _check_decisions(new: MemoryRecord, decisions: Sequence[CommitDecision]) -> None:
        seen: dict[str, CommitAction] = {}
        for d in decisions:
            if d.target_id == new.id:
                raise CommitError("a record cannot hold a decision about itself")
            prev = seen.get(d.target_id)
            if prev is not None and prev is not d.action:
                raise CommitError(
                    f"conflicting decisions for {d.target_id}: {prev.value} and {d.action.value}"
                )
            seen[d.target_id] = d.action
        if any(d.action is CommitAction.DUPLICATE for d in decisions) and len(seen) > 1:
            raise CommitError("a duplicate decision cannot be combined with other decisions")

    @staticmethod
    def _link(a: MemoryRecord, type_: LinkType, b: MemoryRecord) -> None:
        if not a.has_link(type_, b.id):
            a.links = [*a.links, Link(type=type_, target=b.id)]
        back = RECIPROCAL_LINKS[type_]
        if not b.has_link(back, a.id):
            b.links = [*b.links, Link(type=back, target=a.id)]

    def _apply(self, new: MemoryRecord, tgt: MemoryRecord, d: CommitDecision) -> None:
        act = d.action
        if act is CommitAction.SUPERSEDE:
            if tgt.status is RecordStatus.TRANSITION:
                self._link(new, LinkType.EVOLVES_FROM, tgt)
            else:
                self._link(new, LinkType.SUPERSEDES, tgt)
                tgt.status = RecordStatus.SUPERSEDED
        elif act is CommitAction.TRANSITION:
            new.status = RecordStatus.TRANSITION
            if d.transition is not None and new.transition is None:
                new.transition = d.transition
            self._link(new, LinkType.EVOLVES_FROM, tgt)
            if tgt.status is RecordStatus.ACTIVE:
                tgt.status = RecordStatus.SUPERSEDED
        elif act is CommitAction.COEXIST:
            self._link(new, LinkType.COEXISTS, tgt)
        elif act is CommitAction.SCOPED_EXCEPTION:
            self._link(new, LinkType.SCOPED_EXCEPTION, tgt)
        elif act is CommitAction.RELATED:
            self._link(new, LinkType.RELATED, tgt)

    def _check_slot_invariant(self, new: MemoryRecord, changed: dict[str, MemoryRecord]) -> None:
        if new.status is not RecordStatus.ACTIVE or not self.is_single_valued(new.slot):
            return
        assert new.slot is not None
        rows = self.host.scan(
            HostFilter(
                new.namespace,
                equals={"atma_slot": new.slot, "atma_status": RecordStatus.ACTIVE.value},
            )
        )
        clash = []
        for row in rows:
            rec = changed.get(row.id) or _row_to_record(row)
            if rec.status is not RecordStatus.ACTIVE:
                continue
            if new.has_link(LinkType.COEXISTS, rec.id) or new.has_link(
                LinkType.SCOPED_EXCEPTION, rec.id
            ):
                continue
            clash.append(rec.id)
        if clash:
            raise CommitError(
                f"slot {new.slot!r} would have two active records ({clash} and the new one); "
                "supersede them, or link them as coexists / scoped_exception"
            )

    def _write(self, rows: list[HostRow], before: list[HostRow], new_id: str) -> str:
        """Journal, then one upsert, then drop the journal entry.

        If the upsert raises in this process, the rows are rolled back to their
        before-images and the error is re-raised (nothing changed). If the process
        dies instead, :meth:`recover` rolls the entry forward on the next open.
        """
        commit_id = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        if len(rows) == 1 and not before:
            # A single new row is one upsert: atomic on its own, no journal needed.
            try:
                self.host.upsert(rows)
            except Exception as exc:
                if isinstance(exc, AtmaError):
                    raise
                raise CommitError(f"commit failed, nothing was written: {exc}") from exc
            return commit_id
        pre_revs = {r.id: _rev(r) for r in before}
        for r in rows:
            # marks each row as written by this commit (recover() tells "applied"
            # from "rewritten since by another commit" with it)
            r.metadata["atma_cid"] = commit_id
        payload = json.dumps(
            {
                "commit_id": commit_id,
                "pre_revs": pre_revs,
                # rows that already exist keep their stored vector: not journaled
                "rows": [
                    {
                        "id": r.id,
                        "text": r.text,
                        "metadata": r.metadata,
                        "embedding": None if r.id in pre_revs else r.embedding,
                    }
                    for r in rows
                ],
            }
        )
        self.host.journal_put(commit_id, payload)
        try:
            self.host.upsert(rows)
        except Exception as exc:
            try:
                if new_id:
                    self.host.delete([new_id], namespace=rows[0].metadata.get("atma_ns"))
                if before:
                    self.host.upsert(before)
                self.host.journal_delete(commit_id)
            except Exception as rb_exc:  # noqa: BLE001
                logger.error("rollback of commit %s failed: %s", commit_id, rb_exc)
                raise CommitError(
                    f"commit {commit_id} failed ({exc}) and could not be rolled back; "
                    "it stays journaled and is completed by recover() on the next open"
                ) from exc
            if isinstance(exc, AtmaError):
                raise
            raise CommitError(f"commit failed and was rolled back: {exc}") from exc
        self.host.journal_delete(commit_id)
        return commit_id

    # ------------------------------------------------------------------ recovery
    def recover(self) -> int:
        """Roll pending journal entries forward; returns how many were applied.

        An entry is the after-image of a commit whose writer died (or lost the
        host) before dropping it. Each row of the entry is either already
        written (it carries the entry's commit id), still untouched (at the
        revision the commit started from, or missing for the new record), or
        rewritten since by another commit. The untouched rows are written only
        when no row was rewritten since; otherwise the entry is dropped whole,
        so a stale entry never overwrites newer state nor half-applies.

        Entries are handled under their namespace's writer lock, and skipped
        when their writer finished (or rolled back) meanwhile, so opening a bank
        while other processes commit is safe.
        """
        applied = 0
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()
        pending = self.host.journal_pending()
        if not pending:
            return 0
        groups: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for entry_id, payload in pending:
            try:
                data = json.loads(payload)
                ns = str(data["rows"][0]["metadata"]["atma_ns"])
            except (ValueError, KeyError, TypeError, IndexError):
                logger.warning("dropping unreadable journal entry %s", entry_id)
                with self._lock:
                    self.host.journal_delete(entry_id)
                continue
            groups.setdefault(ns, []).append((entry_id, data))
        for ns, entries in groups.items():
            file_lock = self._ns_lock(ns) if ns else None
            with _WriterHold(file_lock, self._lock, self._lock_timeout):
                still = {i for i, _ in self.host.journal_pending()} if self._shared else None
                for entry_id, data in entries:
                    if still is not None and entry_id not in still:
                        continue  # its writer finished or rolled back meanwhile
                    if self._roll_forward(entry_id, data):
                        applied += 1
                    self.host.journal_delete(entry_id)
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()
        return applied

    def _roll_forward(self, entry_id: str, data: dict[str, Any]) -> bool:
        try:
            rows = [HostRow(**r) for r in data["rows"]]
            pre = {k: int(v) for k, v in data.get("pre_revs", {}).items()}
        except (KeyError, TypeError, ValueError):
            logger.warning("dropping unreadable journal entry %s", entry_id)
            return False
        current: dict[str, HostRow] = {}
        for ns in {r.metadata.get("atma_ns") for r in rows}:
            ids = [r.id for r in rows if r.metadata.get("atma_ns") == ns]
            current.update(
                (r.id, r)
                for r in self.host.get(
                    ids, include_embeddings=False, namespace=ns if isinstance(ns, str) else None
                )
            )
        todo: list[HostRow] = []
        moved: list[str] = []
        for row in rows:
            cur = current.get(row.id)
            want_rev = int(row.metadata.get("atma_rev", 0))
            if cur is None:
                if row.id in pre:
                    moved.append(row.id)  # deleted since (clear)
                elif row.embedding is not None:
                    todo.append(row)
                continue
            cur_rev = _rev(cur)
            cid = row.metadata.get("atma_cid")
            if cid is not None and cur.metadata.get("atma_cid") == cid:
                continue  # written by this very commit
            if cid is None and cur_rev == want_rev:
                continue  # entry of an older version (no commit ids): taken as written
            if cur_rev == pre.get(row.id, want_rev - 1):
                todo.append(row)
            else:
                moved.append(row.id)
        if moved:
            if todo:
                logger.warning(
                    "journal entry %s not applied: row(s) %s were rewritten since by another "
                    "commit",
                    entry_id,
                    moved,
                )
            return False
        if not todo:
            return False
        self.host.upsert(todo)
        return True

    # ------------------------------------------------------------------ maintenance
    def clear(self, namespace: str) -> int:
        """Delete EVERY record of one namespace (history included); returns the count.

        Other namespaces are untouched.
        """
        with self.writer_lock(namespace):
            ids = [r.id for r in self.host.scan(HostFilter(namespace))]
            self._cache_drop(namespace, ids)
            self.host.delete(ids, namespace=namespace)
            self._centroids.forget(namespace)
            return len(ids)

    def migrate(self, *, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
        """Move a bank of the single-collection layout (0.1) to a collection per namespace.

        Pending commits are rolled forward first; each namespace is copied under its
        writer lock. Resumable; see :meth:`ChromaHost.migrate
        <langchain_atma.bank.hosts.ChromaHost.migrate>`.

        Raises:
            ConfigError: the host has no layouts (it is not a :class:`ChromaHost`).
        """
        move = getattr(self.host, "migrate", None)
        if not callable(move):
            raise ConfigError(f"{type(self.host).__name__} has one layout; nothing to migrate")
        self.recover()
        out: dict[str, int] = move(lock=self.writer_lock, progress=progress)
        if self._cache is not None:
            with self._cache_lock:
                self._cache.clear()
        return out

    def layout_problems(self) -> list[str]:
        """Bank-wide problems of the host's layout; empty when none.

        For example an unfinished migration, or a namespace registered without its
        collection.
        """
        check = getattr(self.host, "layout_problems", None)
        return list(check()) if callable(check) else []

    def repair_layout(self) -> list[str]:
        """Complete what a crash left of a migration or of a namespace's creation."""
        fix = getattr(self.host, "repair_layout", None)
        return list(fix()) if callable(fix) else []

    def verify(self, namespace: str) -> list[Violation]:
        """Check the bank invariants for a namespace; returns the violations found."""
        recs = {r.id: r for r in self.records(namespace)}
        out: list[Violation] = []
        for r in recs.values():
            for lk in r.links:
                tgt = recs.get(lk.target)
                if tgt is None:
                    out.append(
                        Violation(
                            kind="dangling_link",
                            record_id=r.id,
                            detail=f"{lk.type.value} -> missing {lk.target}",
                        )
                    )
                    continue
                back = RECIPROCAL_LINKS[lk.type]
                if not tgt.has_link(back, r.id):
                    out.append(
                        Violation(
                            kind="missing_reciprocal",
                            record_id=r.id,
                            detail=f"{lk.type.value} -> {tgt.id} lacks {back.value} back",
                        )
                    )
            if r.status is RecordStatus.SUPERSEDED and not r.targets(
                LinkType.SUPERSEDED_BY, LinkType.EVOLVES_TO
            ):
                out.append(
                    Violation(
                        kind="orphan_superseded",
                        record_id=r.id,
                        detail="superseded without a successor link",
                    )
                )
        by_slot: dict[str, list[MemoryRecord]] = {}
        for r in recs.values():
            if r.status is RecordStatus.ACTIVE and self.is_single_valued(r.slot):
                by_slot.setdefault(r.slot or "", []).append(r)
        for slot, group in by_slot.items():
            for a, b in itertools.combinations(group, 2):
                if not (
                    a.has_link(LinkType.COEXISTS, b.id)
                    or a.has_link(LinkType.SCOPED_EXCEPTION, b.id)
                    or b.has_link(LinkType.COEXISTS, a.id)
                    or b.has_link(LinkType.SCOPED_EXCEPTION, a.id)
                ):
                    out.append(
                        Violation(
                            kind="double_active",
                            record_id=b.id,
                            detail=f"slot {slot!r}: {a.id} and {b.id} both active",
                        )
                    )
        return out

    def repair(self, namespace: str) -> list[Violation]:
        """Repair invariant violations of a namespace; returns what was fixed.

        Rules (applied in this order, written as one journaled upsert):

        * a dangling link (target missing) is removed;
        * a missing reciprocal link is added to the target;
        * a superseded record with no successor link becomes ``active`` again
          (its successor was lost, so it is the latest known state);
        * two active records of a single-valued slot that are not linked as
          coexisting: the older one is superseded by the newer one.

        No record is ever deleted.
        """
        with self.writer_lock(namespace):
            recs = {r.id: r.model_copy(deep=True) for r in self.records(namespace)}
            fixed: list[Violation] = []
            touched: set[str] = set()
            for r in recs.values():
                keep = []
                for lk in r.links:
                    if lk.target not in recs:
                        fixed.append(
                            Violation(
                                kind="dangling_link",
                                record_id=r.id,
                                detail=f"removed {lk.type.value} -> {lk.target}",
                            )
                        )
                        touched.add(r.id)
                    else:
                        keep.append(lk)
                r.links = keep
            for r in list(recs.values()):
                for lk in r.links:
                    tgt = recs[lk.target]
                    back = RECIPROCAL_LINKS[lk.type]
                    if not tgt.has_link(back, r.id):
                        tgt.links = [*tgt.links, Link(type=back, target=r.id)]
                        touched.add(tgt.id)
                        fixed.append(
                            Violation(
                                kind="missing_reciprocal",
                                record_id=tgt.id,
                                detail=f"added {back.value} -> {r.id}",
                            )
                        )
            for r in recs.values():
                if r.status is RecordStatus.SUPERSEDED and not r.targets(
                    LinkType.SUPERSEDED_BY, LinkType.EVOLVES_TO
                ):
                    r.status = RecordStatus.ACTIVE
                    touched.add(r.id)
                    fixed.append(
                        Violation(
                            kind="orphan_superseded",
                            record_id=r.id,
                            detail="no successor: made active again",
                        )
                    )
            by_slot: dict[str, list[MemoryRecord]] = {}
            for r in sorted(recs.values(), key=lambda x: x.sort_key):
                if r.status is RecordStatus.ACTIVE and self.is_single_valued(r.slot):
                    by_slot.setdefault(r.slot or "", []).append(r)
            for group in by_slot.values():
                live = group[-1]
                for older in group[:-1]:
                    if live.has_link(LinkType.COEXISTS, older.id) or live.has_link(
                        LinkType.SCOPED_EXCEPTION, older.id
                    ):
                        continue
                    self._link(live, LinkType.SUPERSEDES, older)
                    older.status = RecordStatus.SUPERSEDED
                    touched.update({live.id, older.id})
                    fixed.append(
                        Violation(
                            kind="double_active",
                            record_id=older.id,
                            detail=f"superseded by newer {live.id}",
                        )
                    )
            if touched:
                before = self.host.get(
                    sorted(touched), include_embeddings=False, namespace=namespace
                )
                revs = {r.id: int(r.metadata.get("atma_rev", 0)) for r in before}
                rows = [_record_to_row(recs[i], None, revs.get(i, 0) + 1) for i in sorted(touched)]
                self._cache_drop(namespace, touched)
                self._write(rows, before, new_id="")
            return fixed


CENTROID_SEED_RECORDS = 512
"""Stored records read to seed a namespace's centroid (:meth:`StateBank.centroid`)."""


class _Centroids:
    """Running sum and count of vectors per namespace (thread-safe).

    A namespace is seeded on its first :meth:`get`; :meth:`add` only updates
    namespaces already seeded, so a commit before any read never hides the
    stored records from the seed.
    """

    def __init__(self) -> None:
        self._sums: dict[str, tuple[np.ndarray | None, int]] = {}
        self._lock = threading.Lock()

    def get(
        self, namespace: str, load: Callable[[str, int], Sequence[np.ndarray]]
    ) -> np.ndarray | None:
        with self._lock:
            hit = self._sums.get(namespace)
        if hit is None:
            vecs = load(namespace, CENTROID_SEED_RECORDS)
            entry = (np.sum(vecs, axis=0), len(vecs)) if len(vecs) else (None, 0)
            with self._lock:
                hit = self._sums.setdefault(namespace, entry)
        total, n = hit
        return None if total is None or not n else (total / n).astype(np.float32)

    def add(self, namespace: str, vec: np.ndarray) -> None:
        with self._lock:
            hit = self._sums.get(namespace)
            if hit is not None:
                total, n = hit
                self._sums[namespace] = (vec.copy() if total is None else total + vec, n + 1)

    def forget(self, namespace: str) -> None:
        with self._lock:
            self._sums.pop(namespace, None)
