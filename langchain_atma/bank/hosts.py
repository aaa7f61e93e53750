"""Host stores: where the overlay's rows actually live.

A-TMA is an *overlay*: it does not own a database. Every record is one row of
a host vector store, and the overlay's state (status, links, slot, provenance)
lives in that row's metadata under ``atma_*`` keys, so a plain vector search
of the same collection still works and still returns the text.

What a host must support (the :class:`HostStore` protocol):

* string ids chosen by the caller;
* ``upsert(rows)`` of several rows in ONE call (the bank's commit is one such
  call, preceded by a journal entry, see :mod:`langchain_atma.bank.bank`);
* ``get(ids)`` returning rows with their embeddings and metadata;
* ``query(vector, k, flt)`` — vector search restricted by an equality /
  membership metadata filter;
* ``scan(flt)`` — list rows by the same kind of filter (inspection, verify,
  idempotency look-ups);
* ``delete(ids)``;
* a small journal (``journal_put/journal_delete/journal_pending``) for
  crash recovery.

Two hosts ship: :class:`ChromaHost` (default; embedded ``PersistentClient`` or
a ``chroma run`` server) and :class:`VectorStoreHost`, an adapter over a
LangChain ``VectorStore`` such as ``InMemoryVectorStore``.

Example:
    >>> from langchain_atma.bank.hosts import ChromaHost, HostFilter
    >>> host = ChromaHost.ephemeral()
    >>> host.upsert([HostRow(id="r1", text="hi", embedding=[1.0, 0.0],
    ...                      metadata={"atma_ns": "u"})])
    >>> [r.id for r in host.scan(HostFilter(namespace="u"))]
    ['r1']
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlparse

import numpy as np

from langchain_atma.bank.namespace_index import (
    Layout,
    NamespaceRegistry,
    collection_name_for,
    registry_name,
)
from langchain_atma.errors import BankNotFoundError, ConfigError, HostUnavailableError

__all__ = [
    "ChromaHost",
    "HostFilter",
    "HostRow",
    "HostStore",
    "VectorStoreHost",
]

NS_KEY = "atma_ns"
_WIDE_TTL_S = 2.0
logger = logging.getLogger(__name__)
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})


@dataclass
class HostRow:
    """One row of a host store."""

    id: str
    text: str
    embedding: list[float] | None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HostFilter:
    """A metadata filter every host can evaluate.

    Attributes:
        namespace: required; rows of other namespaces never match.
        equals: extra ``key == value`` conditions.
        any_of: ``key in values`` conditions.
    """

    namespace: str
    equals: dict[str, Any] = field(default_factory=dict)
    any_of: dict[str, tuple[Any, ...]] = field(default_factory=dict)

    def matches(self, metadata: dict[str, Any] | None) -> bool:
        """Evaluate the filter on one row's metadata."""
        md = metadata or {}
        if md.get(NS_KEY) != self.namespace:
            return False
        for key, val in self.equals.items():
            if md.get(key) != val:
                return False
        for key, vals in self.any_of.items():
            if md.get(key) not in vals:
                return False
        return True

    def to_chroma(self, *, namespace: bool = True) -> dict[str, Any] | None:
        """Translate to Chroma's ``where`` syntax (``None``: no condition left).

        Args:
            namespace: include the namespace condition (a collection that holds
                only this namespace needs none).
        """
        clauses: list[dict[str, Any]] = [{NS_KEY: self.namespace}] if namespace else []
        clauses += [{k: v} for k, v in self.equals.items()]
        clauses += [{k: {"$in": list(v)}} for k, v in self.any_of.items()]
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@runtime_checkable
class HostStore(Protocol):
    """The operations the overlay needs from a host vector store."""

    def upsert(self, rows: Sequence[HostRow]) -> None:
        """Insert or replace rows, all in one call."""

    def get(
        self, ids: Sequence[str], *, include_embeddings: bool = True, namespace: str | None = None
    ) -> list[HostRow]:
        """Rows for the ids that exist (missing ids are skipped).

        With ``namespace``, only rows of that namespace are returned (a host may
        look nowhere else); without it, rows of any namespace.
        """

    def query(
        self, vector: Sequence[float], k: int, flt: HostFilter
    ) -> list[tuple[HostRow, float]]:
        """Top-k rows by cosine similarity (higher is closer) among rows matching ``flt``."""

    def scan(self, flt: HostFilter) -> list[HostRow]:
        """All rows matching ``flt`` (embeddings may be omitted)."""

    def delete(self, ids: Sequence[str], *, namespace: str | None = None) -> None:
        """Delete rows by id (with ``namespace``, only rows of that namespace)."""

    def count(self) -> int:
        """Number of rows in the collection (all namespaces)."""

    def journal_put(self, entry_id: str, payload: str) -> None:
        """Store a pending commit journal entry."""

    def journal_delete(self, entry_id: str) -> None:
        """Remove a journal entry once its commit is applied."""

    def journal_pending(self) -> list[tuple[str, str]]:
        """Pending journal entries ``(id, payload)``, oldest first."""


# --------------------------------------------------------------------------- Chroma


def _wrap_chroma_errors(exc: Exception, where: str) -> Exception:
    text = str(exc)
    lowered = text.lower()
    if (
        isinstance(exc, (ConnectionError, OSError))
        or "connect" in lowered
        or ("timed out" in lowered)
    ):
        return HostUnavailableError(f"Chroma host unavailable during {where}: {text}")
    return exc


def _parse_server_url(url: str) -> tuple[str, int, bool]:
    """``(hostname, port, ssl)`` of a Chroma server URL (``http[s]://HOST[:PORT][/]``).

    Raises:
        ConfigError: anything else (a missing or unknown scheme separator, no host, a
            port that is not a number from 1 to 65535, a path, query, user or spaces).
    """
    bad = ConfigError(f"invalid Chroma URL {url!r}; expected http://HOST:PORT")
    text = url.strip() if isinstance(url, str) else ""
    if not text or any(ch.isspace() for ch in text):
        raise bad
    if "://" not in text:
        if "/" in text.split("?")[0].rstrip("/"):
            raise bad  # "http//host:8000", "host/path"
        text = f"http://{text}"
    parsed = urlparse(text)
    try:
        port = parsed.port
    except ValueError:
        raise bad from None
    if (
        parsed.scheme not in ("http", "https")
        or not parsed.hostname
        or port == 0
        or parsed.path not in ("", "/")
        or parsed.query
        or parsed.fragment
        or parsed.username
        or parsed.password
    ):
        raise bad
    ssl = parsed.scheme == "https"
    return parsed.hostname, port or (443 if ssl else 8000), ssl


def _floats(vector: Any) -> list[float]:
    """A stored vector as Python floats (``tolist`` on numpy arrays: one C call)."""
    if isinstance(vector, np.ndarray):
        return list(vector.astype(np.float64).tolist())
    return [float(x) for x in vector]


def _pages(
    collection: Any, *, include: list[str], where: dict[str, Any] | None = None, page: int = 5000
) -> Iterable[dict[str, Any]]:
    """A collection's rows matching ``where``, ``page`` rows per read."""
    offset = 0
    while True:
        got = collection.get(where=where, include=include, limit=page, offset=offset)
        if not got["ids"]:
            return
        yield got
        if len(got["ids"]) < page:
            return
        offset += page


def _namespaces_in(collection: Any) -> set[str]:
    """The namespaces of the rows of one collection (reads every row's metadata)."""
    return {
        str(md[NS_KEY])
        for got in _pages(collection, include=["metadatas"])
        for md in got.get("metadatas") or []
        if md and md.get(NS_KEY)
    }


class ChromaHost:
    """Chroma collections as the host (default).

    Use :meth:`persistent` for the embedded default (one process), :meth:`server`
    for a ``chroma run`` server shared by several processes, or pass any
    ``chromadb`` client. Writers of several processes on one machine are
    serialised by the bank's writer lock (:mod:`langchain_atma.bank.locks`);
    writers on different machines need an external lock or a single writer.
    Chroma's own embedding function is never used: every collection is created
    with ``embedding_function=None`` and every row comes with its vector, so
    nothing is downloaded at run time.

    Layouts (:mod:`~langchain_atma.bank.namespace_index`): a new bank keeps each
    namespace in its own collection (``namespaced``), so a seed search is a plain
    HNSW lookup; a bank written by 0.1 keeps every namespace in the one collection
    ``collection_name`` (``single``) and still works, with a metadata filter per
    query, until ``atma migrate`` moves it (``migrating`` while that runs: the
    single collection stays authoritative).

    Args:
        client: a chromadb client.
        collection_name: the bank's collection name (created if missing, cosine space).
        create: create what is missing; ``False`` raises
            :class:`~langchain_atma.errors.BankNotFoundError` for a missing bank.
        layout: ``"auto"`` (what the bank has; ``namespaced`` for a new one),
            ``"namespaced"`` or ``"single"`` (to build a bank of the 0.1 layout).
        overfetch: for a filtered search inside one namespace's collection, the
            plain top ``overfetch * k`` are read first and filtered here; the
            filtered Chroma query runs only when they hold fewer than ``k`` matches.
    """

    def __init__(
        self,
        client: Any,
        collection_name: str = "atma_memory",
        *,
        create: bool = True,
        layout: Literal["auto", "namespaced", "single"] = "auto",
        overfetch: int = 4,
    ) -> None:
        self.client = client
        self.collection_name = collection_name
        self.is_server = False
        # names the shared store in writer-lock keys (set by server() / persistent())
        self.lock_scope: str | None = None
        self._overfetch = max(1, overfetch)
        self._create = create
        if not create and not self._exists(collection_name):
            banks = sorted(n for n in self._collection_names() if "-ns-" not in n and "__" not in n)
            raise BankNotFoundError(
                f"no bank collection {collection_name!r} here"
                + (f" (banks: {', '.join(banks)})" if banks else "")
            )
        try:
            self.collection = client.get_or_create_collection(
                collection_name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
            )
            self._journal = client.get_or_create_collection(
                f"{collection_name}__journal",
                embedding_function=None,
            )
            self._registry: NamespaceRegistry | None = (
                NamespaceRegistry(client, collection_name)
                if self._exists(registry_name(collection_name))
                else None
            )
            self.layout: Layout = self._open_layout(layout)
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "open collection") from exc
        self._ns_colls: dict[str, Any] = {}
        self._wide_memo: tuple[Any, float, list[tuple[HostRow, float]]] | None = None
        self._lock = threading.RLock()

    def _open_layout(self, wanted: str) -> Layout:
        recorded = self._registry.layout() if self._registry is not None else None
        if wanted == "single":
            if recorded == "namespaced":
                raise ConfigError(f"bank {self.collection_name!r} uses the namespaced layout")
            return recorded or "single"
        if recorded is not None:
            return recorded
        if self.collection.count() > 0:
            if wanted == "namespaced":
                raise ConfigError(
                    f"bank {self.collection_name!r} uses the single-collection layout of "
                    "0.1; run `atma migrate` first"
                )
            logger.warning(
                "bank %r uses the single-collection layout of 0.1 (a metadata filter per "
                "search); `atma migrate` moves it to one collection per namespace",
                self.collection_name,
            )
            return "single"
        if self._create:
            self._registry_or_create().set_layout("namespaced")
        return "namespaced"

    @property
    def namespaced(self) -> bool:
        """Whether each namespace lives in its own collection."""
        return self.layout == "namespaced"

    def _registry_or_create(self) -> NamespaceRegistry:
        if self._registry is None:
            self._registry = NamespaceRegistry(self.client, self.collection_name)
        return self._registry

    def _ns_collection(self, namespace: str, *, create: bool) -> Any:
        """The collection of one namespace (``None`` when it has none and ``create`` is off)."""
        coll = self._ns_colls.get(namespace)
        if coll is not None:
            return coll
        name = collection_name_for(self.collection_name, namespace)
        if create:
            self._registry_or_create().register(namespace)  # before the collection
            coll = self.client.get_or_create_collection(
                name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
            )
        else:
            try:
                coll = self.client.get_collection(name, embedding_function=None)
            except Exception:  # noqa: BLE001 - chromadb raises NotFoundError / ValueError
                return None
        self._ns_colls[namespace] = coll
        return coll

    def collection_for(self, namespace: str) -> Any | None:
        """The Chroma collection that holds a namespace's rows (``None`` before its first).

        A plain Chroma search of it returns the records' texts, as for any collection.
        """
        if not self.namespaced:
            return self.collection
        return self._ns_collection(namespace, create=False)

    def _collections_for(self, namespace: str | None) -> list[Any]:
        """Where rows of ``namespace`` (``None``: any namespace) can be."""
        if not self.namespaced:
            return [self.collection]
        if namespace is not None:
            coll = self._ns_collection(namespace, create=False)
            return [] if coll is None else [coll]
        found = self._registry.entries() if self._registry is not None else {}
        return [
            c for ns in sorted(found) if (c := self._ns_collection(ns, create=False)) is not None
        ]

    # -- constructors -----------------------------------------------------------------
    @classmethod
    def persistent(
        cls,
        path: str | os.PathLike[str],
        collection_name: str = "atma_memory",
        *,
        create: bool = True,
        layout: Literal["auto", "namespaced", "single"] = "auto",
    ) -> ChromaHost:
        """Embedded bank in a local directory (single process).

        Args:
            path: the bank directory.
            collection_name: the collection.
            create: create the directory and collection when missing; with ``False``
                a missing one raises :class:`~langchain_atma.errors.BankNotFoundError`
                and nothing is written.
            layout: see the class (``"auto"`` keeps what the bank has).
        """
        import chromadb
        from chromadb.config import Settings

        if not create and not (Path(path) / "chroma.sqlite3").is_file():
            raise BankNotFoundError(f"no bank at {path} (the directory holds no Chroma database)")
        Path(path).mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(
            path=str(path), settings=Settings(anonymized_telemetry=False)
        )
        host = cls(client, collection_name, create=create, layout=layout)
        host.lock_scope = f"chroma-path:{Path(path).resolve()}/{collection_name}"
        return host

    @classmethod
    def server(
        cls,
        url: str,
        collection_name: str = "atma_memory",
        *,
        create: bool = True,
        layout: Literal["auto", "namespaced", "single"] = "auto",
    ) -> ChromaHost:
        """A Chroma server reached by URL, e.g. ``http://127.0.0.1:8000``.

        With ``create=False`` a missing collection raises
        :class:`~langchain_atma.errors.BankNotFoundError` instead of being created.

        Raises:
            ConfigError: for a malformed URL.
            HostUnavailableError: when the server cannot be reached.
        """
        import chromadb
        from chromadb.config import Settings

        hostname, port, ssl = _parse_server_url(url)
        try:
            client = chromadb.HttpClient(
                host=hostname,
                port=port,
                ssl=ssl,
                settings=Settings(anonymized_telemetry=False),
            )
            client.heartbeat()
        except Exception as exc:  # noqa: BLE001
            raise HostUnavailableError(
                f"cannot reach the Chroma server at {url}: {exc}. Start one with "
                "`chroma run --host 127.0.0.1 --port 8000 --path ./chroma-data`"
            ) from exc
        host = cls(client, collection_name, create=create, layout=layout)
        host.is_server = True
        name = hostname.lower()
        if name in _LOOPBACK:
            name = "localhost"
        scheme = "https" if ssl else "http"
        host.lock_scope = f"chroma+{scheme}://{name}:{port}/{collection_name}"
        return host

    @classmethod
    def ephemeral(
        cls,
        collection_name: str | None = None,
        *,
        layout: Literal["auto", "namespaced", "single"] = "auto",
    ) -> ChromaHost:
        """An in-memory Chroma bank (tests, demos)."""
        import chromadb
        from chromadb.config import Settings

        client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
        return cls(client, collection_name or f"atma_{uuid.uuid4().hex[:12]}", layout=layout)

    # -- protocol ---------------------------------------------------------------------
    def upsert(self, rows: Sequence[HostRow]) -> None:
        """Insert or replace rows: one Chroma call per namespace among them."""
        if not rows:
            return
        groups: dict[str | None, list[HostRow]] = {}
        for r in rows:
            ns = r.metadata.get(NS_KEY) if self.namespaced else None
            if self.namespaced and not isinstance(ns, str):
                raise ValueError(f"row {r.id} has no {NS_KEY} metadata")
            groups.setdefault(ns, []).append(r)
        self._wide_memo = None
        for ns, group in groups.items():
            self._fill_embeddings(group, ns)
            try:
                coll = self.collection if ns is None else self._ns_collection(ns, create=True)
                coll.upsert(
                    ids=[r.id for r in group],
                    embeddings=[list(map(float, r.embedding or [])) for r in group],
                    documents=[r.text for r in group],
                    metadatas=[dict(r.metadata) for r in group],
                )
            except Exception as exc:  # noqa: BLE001
                raise _wrap_chroma_errors(exc, "upsert") from exc

    def _fill_embeddings(self, rows: list[HostRow], namespace: str | None) -> None:
        """Keep the stored vector of rows given without one (their text did not change)."""
        missing = [r.id for r in rows if r.embedding is None]
        if not missing:
            return
        stored = {r.id: r.embedding for r in self.get(missing, namespace=namespace)}
        for r in rows:
            if r.embedding is None:
                r.embedding = stored.get(r.id)
        if any(r.embedding is None for r in rows):
            raise ValueError("a new row needs an embedding")

    def get(
        self, ids: Sequence[str], *, include_embeddings: bool = True, namespace: str | None = None
    ) -> list[HostRow]:
        """Rows by id (with embeddings unless ``include_embeddings=False``).

        With ``namespace``, only that namespace's rows; without it, the namespaced
        layout looks through every namespace's collection (maintenance only).
        """
        if not ids:
            return []
        include = ["documents", "metadatas"]
        if include_embeddings:
            include.append("embeddings")
        out: list[HostRow] = []
        try:
            for coll in self._collections_for(namespace):
                out += self._rows(coll.get(ids=list(ids), include=include))
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "get") from exc
        if namespace is not None:
            out = [r for r in out if r.metadata.get(NS_KEY) == namespace]
        return out

    def query(
        self, vector: Sequence[float], k: int, flt: HostFilter
    ) -> list[tuple[HostRow, float]]:
        """Cosine top-k within the filter (similarity = 1 - cosine distance).

        In the namespaced layout a search with conditions besides the namespace
        first reads the plain top ``overfetch * k`` of the namespace's index and
        filters them here: exact whenever at least ``k`` of them match, which is
        the common case (live statuses, one of a few speakers); otherwise the
        filtered Chroma query runs.
        """
        if k <= 0:
            return []
        vec = [list(map(float, vector))]
        try:
            if not self.namespaced:
                return self._query(self.collection, vec, k, flt.to_chroma())
            coll = self._ns_collection(flt.namespace, create=False)
            if coll is None:
                return []
            where = flt.to_chroma(namespace=False)
            if where is None:
                return self._query(coll, vec, k, None)
            wide = self._wide(flt.namespace, coll, vec, k * self._overfetch)
            hits = [(row, sim) for row, sim in wide if flt.matches(row.metadata)]
            if len(hits) >= k or len(wide) < k * self._overfetch:
                return hits[:k]
            return self._query(coll, vec, k, where)
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "query") from exc

    def _wide(
        self, namespace: str, coll: Any, vec: list[list[float]], n: int
    ) -> list[tuple[HostRow, float]]:
        """The plain top ``n`` of a namespace, reused by the next filtered search.

        The write path's gate asks for the live rows and then for the speaker's live
        rows near the same vector; both are filtered from one read. The memo holds
        one result, is dropped by every write of this host object and lives at most
        :data:`_WIDE_TTL_S` seconds (other processes' writes are not seen sooner).
        """
        key = (namespace, n, hash(tuple(vec[0])))
        memo = self._wide_memo
        if memo is not None and memo[0] == key and time.monotonic() - memo[1] < _WIDE_TTL_S:
            return memo[2]
        got = self._query(coll, vec, n, None)
        self._wide_memo = (key, time.monotonic(), got)
        return got

    def _query(
        self, coll: Any, vec: list[list[float]], k: int, where: dict[str, Any] | None
    ) -> list[tuple[HostRow, float]]:
        res = coll.query(
            query_embeddings=vec,
            n_results=k,
            where=where,
            include=["embeddings", "documents", "metadatas", "distances"],
        )
        ids = res["ids"][0]
        docs = (res.get("documents") or [[None] * len(ids)])[0]
        metas = (res.get("metadatas") or [[None] * len(ids)])[0]
        embs = res.get("embeddings")
        emb_list: list[Any] = list(embs[0]) if embs is not None else [None] * len(ids)
        dists = (res.get("distances") or [[0.0] * len(ids)])[0]
        return [
            (
                HostRow(
                    id=rid,
                    text=docs[i] or "",
                    embedding=None if emb is None else _floats(emb),
                    metadata=dict(metas[i] or {}),
                ),
                1.0 - float(dists[i]),
            )
            for i, (rid, emb) in enumerate(zip(ids, emb_list, strict=False))
        ]

    def scan(self, flt: HostFilter) -> list[HostRow]:
        """All rows matching the filter (no embeddings)."""
        try:
            if not self.namespaced:
                res = self.collection.get(where=flt.to_chroma(), include=["documents", "metadatas"])
                return self._rows(res)
            coll = self._ns_collection(flt.namespace, create=False)
            if coll is None:
                return []
            res = coll.get(where=flt.to_chroma(namespace=False), include=["documents", "metadatas"])
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "scan") from exc
        return [r for r in self._rows(res) if r.metadata.get(NS_KEY) == flt.namespace]

    def delete(self, ids: Sequence[str], *, namespace: str | None = None) -> None:
        """Delete rows by id (with ``namespace``, only from that namespace)."""
        if not ids:
            return
        self._wide_memo = None
        try:
            for coll in self._collections_for(namespace):
                coll.delete(ids=list(ids))
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "delete") from exc

    def count(self) -> int:
        """Rows in the bank (all namespaces)."""
        try:
            colls = [self.collection] if not self.namespaced else self._collections_for(None)
            return sum(int(c.count()) for c in colls)
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "count") from exc

    def namespaces(self) -> list[str]:
        """The namespaces that hold at least one row, sorted."""
        try:
            if self.namespaced:
                found = self._registry.entries() if self._registry is not None else {}
                return sorted(
                    ns
                    for ns in found
                    if (c := self._ns_collection(ns, create=False)) is not None and c.count() > 0
                )
            return sorted(_namespaces_in(self.collection))
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "list namespaces") from exc

    def journal_put(self, entry_id: str, payload: str) -> None:
        """Write a journal entry (a one-dimensional dummy vector is stored)."""
        try:
            self._journal.upsert(
                ids=[entry_id],
                embeddings=[[1.0]],
                documents=[payload],
                metadatas=[{"atma_journal": 1}],
            )
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "journal write") from exc

    def journal_delete(self, entry_id: str) -> None:
        """Drop a journal entry."""
        try:
            self._journal.delete(ids=[entry_id])
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "journal delete") from exc

    def journal_pending(self) -> list[tuple[str, str]]:
        """Pending entries, ordered by their id (ids start with a time stamp)."""
        try:
            res = self._journal.get(include=["documents"])
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "journal read") from exc
        pairs = list(zip(res["ids"], res.get("documents") or [], strict=False))
        return sorted(((i, d or "") for i, d in pairs), key=lambda p: p[0])

    # -- layout maintenance -----------------------------------------------------------
    def layout_problems(self) -> list[str]:
        """What ``atma verify`` reports about the layout (empty when all is in order)."""
        problems: list[str] = []
        if self.layout == "migrating":
            problems.append("a migration to one collection per namespace did not finish")
        if self.layout == "single":
            problems.append("single-collection layout of 0.1 (run `atma migrate`)")
        if not self.namespaced:
            return problems
        entries = self._registry.entries() if self._registry is not None else {}
        names = self._collection_names()
        problems += [
            f"namespace {ns!r} is registered but has no collection"
            for ns, (name, _) in sorted(entries.items())
            if name not in names
        ]
        problems += [
            f"namespace {ns!r} was being copied when a migration stopped"
            for ns, (_, state) in sorted(entries.items())
            if state != "ready"
        ]
        listed = {name for name, _ in entries.values()}
        problems += [
            f"collection {name!r} is not in the registry"
            for name in sorted(self._orphans(names, listed))
        ]
        if self.collection.count() > 0:
            problems.append("rows left in the single collection by a migration")
        return problems

    def _collection_names(self) -> set[str]:
        try:
            return {getattr(c, "name", c) for c in self.client.list_collections()}
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "list collections") from exc

    def _exists(self, name: str) -> bool:
        """Whether the client has a collection of that name (one lookup, no listing)."""
        try:
            self.client.get_collection(name, embedding_function=None)
        except Exception as exc:  # noqa: BLE001 - chromadb raises NotFoundError / ValueError
            if isinstance(_wrap_chroma_errors(exc, "open collection"), HostUnavailableError):
                raise _wrap_chroma_errors(exc, "open collection") from exc
            return False
        return True

    def _orphans(self, names: set[str], listed: set[str]) -> list[str]:
        prefix = f"{self.collection_name}-ns-"
        return [n for n in names if n.startswith(prefix) and n not in listed]

    def migrate(
        self,
        *,
        lock: Callable[[str], AbstractContextManager[Any]] | None = None,
        progress: Callable[[str, int], None] | None = None,
        page: int = 2000,
    ) -> dict[str, int]:
        """Move a bank of the single-collection layout to one collection per namespace.

        Resumable and idempotent: rows are copied (same ids, vectors, documents and
        metadata) namespace by namespace, each checked by its ids before it is marked
        copied; the layout flips to ``namespaced`` only when every namespace is, and
        the single collection is emptied last. A crash at any point leaves a readable
        bank (the single collection stays authoritative until the flip); running it
        again, or ``atma verify --repair``, completes it. Run it with no writers.

        Args:
            lock: the writer lock of a namespace, held while it is copied.
            progress: called with each namespace and its row count once copied.
            page: rows read per call.

        Returns:
            ``{"namespaces": n, "rows": copied, "left_over": rows removed from the
            single collection}``.
        """
        copied = spaces = 0
        if self.layout != "namespaced":
            registry = self._registry_or_create()
            registry.set_layout("migrating")
            self.layout = "migrating"
            entries = registry.entries()
            for ns in sorted(_namespaces_in(self.collection)):
                spaces += 1
                if entries.get(ns, ("", ""))[1] == "ready" and self._same_ids(ns):
                    continue
                with lock(ns) if lock is not None else nullcontext():
                    n = self._copy_namespace(registry, ns, page)
                copied += n
                if progress is not None:
                    progress(ns, n)
            registry.set_layout("namespaced")
            self.layout = "namespaced"
            self._ns_colls.clear()
        left = self._drop_single_rows(page)
        return {"namespaces": spaces, "rows": copied, "left_over": left}

    def _copy_namespace(self, registry: NamespaceRegistry, ns: str, page: int) -> int:
        name = registry.register(ns, state="copying")
        coll = self.client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )
        n = 0
        include = ["documents", "metadatas", "embeddings"]
        for got in _pages(self.collection, include=include, where={NS_KEY: ns}, page=page):
            coll.upsert(
                ids=got["ids"],
                embeddings=got["embeddings"],
                documents=got["documents"],
                metadatas=got["metadatas"],
            )
            n += len(got["ids"])
        if not self._same_ids(ns):
            raise HostUnavailableError(f"copy of namespace {ns!r} does not match; run again")
        registry.register(ns, state="ready")
        return n

    def _same_ids(self, ns: str) -> bool:
        old = {
            i for got in _pages(self.collection, include=[], where={NS_KEY: ns}) for i in got["ids"]
        }
        try:
            new = self.client.get_collection(
                collection_name_for(self.collection_name, ns), embedding_function=None
            )
        except Exception:  # noqa: BLE001 - not created yet
            return not old
        return set(new.get(include=[])["ids"]) == old

    def _drop_single_rows(self, page: int) -> int:
        """Remove rows left in the single collection once every namespace has its own."""
        left = 0
        while True:
            got = self.collection.get(include=["metadatas"], limit=page)
            ids = got["ids"]
            if not ids:
                return left
            keep: list[str] = []
            by_ns: dict[str, list[str]] = {}
            for rid, md in zip(ids, got.get("metadatas") or [], strict=False):
                by_ns.setdefault(str((md or {}).get(NS_KEY, "")), []).append(rid)
            for ns, group in by_ns.items():
                coll = self._ns_collection(ns, create=False) if ns else None
                have = set(coll.get(ids=group, include=[])["ids"]) if coll is not None else set()
                keep += [i for i in group if i not in have]
            if keep:
                raise HostUnavailableError(
                    f"{len(keep)} row(s) of the single collection have no copy; "
                    "run `atma migrate` again"
                )
            self.collection.delete(ids=ids)
            left += len(ids)

    def repair_layout(self) -> list[str]:
        """Complete what a crash left of a migration or of a namespace's creation.

        Returns:
            One line per fix.
        """
        fixed: list[str] = []
        if self.layout == "migrating":
            got = self.migrate()
            fixed.append(f"finished the migration ({got['namespaces']} namespaces)")
        if not self.namespaced:
            return fixed
        registry = self._registry_or_create()
        entries = registry.entries()
        names = self._collection_names()
        for ns, (name, _) in sorted(entries.items()):
            if name not in names:
                self._ns_collection(ns, create=True)
                fixed.append(f"created the collection of namespace {ns!r}")
        for name in sorted(self._orphans(names, {n for n, _ in entries.values()})):
            coll = self.client.get_collection(name, embedding_function=None)
            mds = coll.get(include=["metadatas"], limit=1).get("metadatas") or []
            ns = str((mds[0] or {}).get(NS_KEY, "")) if mds else ""
            if ns and collection_name_for(self.collection_name, ns) == name:
                registry.register(ns)
                fixed.append(f"registered namespace {ns!r}")
            elif not mds:
                self.client.delete_collection(name)
                fixed.append(f"dropped the empty collection {name!r}")
        left = self._drop_single_rows(2000) if self.collection.count() else 0
        if left:
            fixed.append(f"removed {left} migrated row(s) from the single collection")
        return fixed

    @staticmethod
    def _rows(res: Any) -> list[HostRow]:
        ids = res["ids"]
        docs = res.get("documents")
        metas = res.get("metadatas")
        embs = res.get("embeddings")
        out = []
        for i, rid in enumerate(ids):
            emb = None if embs is None else embs[i]
            out.append(
                HostRow(
                    id=rid,
                    text=(docs[i] if docs is not None else "") or "",
                    embedding=None if emb is None else _floats(emb),
                    metadata=dict((metas[i] if metas is not None else None) or {}),
                )
            )
        return out


# --------------------------------------------------------------------- LangChain VS


class VectorStoreHost:
    """Adapter making a LangChain ``VectorStore`` a host.

    The vector store must support ``add_documents(documents, ids=...)`` with
    caller ids (replacing a row with the same id, or after ``delete``),
    ``get_by_ids`` and ``similarity_search_with_score_by_vector``. Scanning by
    metadata needs either a ``scan`` callable returning all documents, or an
    ``InMemoryVectorStore`` (its ``store`` dict is read). The journal is kept in
    process memory unless ``journal_path`` (a JSON file) is given.

    Since a generic vector store has no server-side metadata filter this adapter
    over-fetches (``overfetch`` x k, then the whole store) and filters rows
    itself, so namespaces are never crossed.

    Example:
        >>> from langchain_core.vectorstores import InMemoryVectorStore
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> host = VectorStoreHost(InMemoryVectorStore(DeterministicFakeEmbedding(size=8)))
        >>> host.count()
        0
    """

    def __init__(
        self,
        vectorstore: Any,
        *,
        scan: Any | None = None,
        journal_path: str | os.PathLike[str] | None = None,
        overfetch: int = 8,
    ) -> None:
        self.vectorstore = vectorstore
        self._scan = scan
        self._journal_path = Path(journal_path) if journal_path else None
        self._journal: dict[str, str] = {}
        self._overfetch = max(1, overfetch)
        self._lock = threading.RLock()
        if self._journal_path and self._journal_path.exists():
            self._journal = json.loads(self._journal_path.read_text(encoding="utf-8"))

    def _all_docs(self) -> list[Any]:
        from langchain_core.documents import Document

        if self._scan is not None:
            return list(self._scan())
        store = getattr(self.vectorstore, "store", None)
        if isinstance(store, dict):
            return [
                Document(id=k, page_content=v["text"], metadata=dict(v.get("metadata") or {}))
                for k, v in store.items()
            ]
        raise ConfigError(
            "this vector store cannot be scanned; pass scan=callable returning all documents"
        )

    def _vectors(self, ids: Iterable[str]) -> dict[str, list[float]]:
        store = getattr(self.vectorstore, "store", None)
        if isinstance(store, dict):
            return {i: list(store[i]["vector"]) for i in ids if i in store}
        return {}

    def upsert(self, rows: Sequence[HostRow]) -> None:
        """Replace rows (delete + add, under a lock) in one logical call."""
        from langchain_core.documents import Document

        if not rows:
            return
        with self._lock:
            vecs = self._vectors(r.id for r in rows if r.embedding is None)
            docs, embs = [], []
            for r in rows:
                emb = r.embedding if r.embedding is not None else vecs.get(r.id)
                if emb is None:
                    raise ValueError(f"row {r.id} needs an embedding")
                docs.append(Document(id=r.id, page_content=r.text, metadata=dict(r.metadata)))
                embs.append(list(map(float, emb)))
            store = getattr(self.vectorstore, "store", None)
            if isinstance(store, dict):
                for d, e in zip(docs, embs, strict=True):
                    store[d.id] = {
                        "id": d.id,
                        "vector": e,
                        "text": d.page_content,
                        "metadata": d.metadata,
                    }
                return
            add_with_vectors = getattr(self.vectorstore, "add_embeddings", None)
            self.vectorstore.delete(ids=[r.id for r in rows])
            if callable(add_with_vectors):
                add_with_vectors(
                    text_embeddings=list(zip([d.page_content for d in docs], embs, strict=True)),
                    metadatas=[d.metadata for d in docs],
                    ids=[d.id for d in docs],
                )
            else:
                self.vectorstore.add_documents(docs, ids=[d.id for d in docs])

    def get(
        self, ids: Sequence[str], *, include_embeddings: bool = True, namespace: str | None = None
    ) -> list[HostRow]:
        """Rows by id (with vectors where the store exposes them)."""
        if not ids:
            return []
        docs = [
            d
            for d in self.vectorstore.get_by_ids(list(ids))
            if namespace is None or (d.metadata or {}).get(NS_KEY) == namespace
        ]
        vecs = self._vectors(d.id for d in docs if d.id) if include_embeddings else {}
        return [
            HostRow(
                id=str(d.id),
                text=d.page_content,
                embedding=vecs.get(str(d.id)),
                metadata=dict(d.metadata or {}),
            )
            for d in docs
        ]

    def query(
        self, vector: Sequence[float], k: int, flt: HostFilter
    ) -> list[tuple[HostRow, float]]:
        """Top-k among rows matching the filter (over-fetch, then filter)."""
        if k <= 0:
            return []
        total = self.count()
        fetch = min(total, k * self._overfetch)
        while True:
            hits = self.vectorstore.similarity_search_with_score_by_vector(
                list(map(float, vector)), k=max(fetch, 1)
            )
            matched = [(d, s) for d, s in hits if flt.matches(d.metadata)]
            if len(matched) >= k or fetch >= total:
                break
            fetch = min(total, fetch * 4)
        vecs = self._vectors(str(d.id) for d, _ in matched[:k])
        return [
            (
                HostRow(
                    id=str(d.id),
                    text=d.page_content,
                    embedding=vecs.get(str(d.id)),
                    metadata=dict(d.metadata or {}),
                ),
                float(s),
            )
            for d, s in matched[:k]
        ]

    def scan(self, flt: HostFilter) -> list[HostRow]:
        """All matching rows."""
        return [
            HostRow(
                id=str(d.id), text=d.page_content, embedding=None, metadata=dict(d.metadata or {})
            )
            for d in self._all_docs()
            if flt.matches(d.metadata)
        ]

    def delete(self, ids: Sequence[str], *, namespace: str | None = None) -> None:
        """Delete rows (with ``namespace``, only rows of that namespace)."""
        if namespace is not None:
            ids = [r.id for r in self.get(ids, include_embeddings=False, namespace=namespace)]
        if ids:
            self.vectorstore.delete(ids=list(ids))

    def count(self) -> int:
        """Rows in the store."""
        store = getattr(self.vectorstore, "store", None)
        if isinstance(store, dict):
            return len(store)
        return len(self._all_docs())

    def namespaces(self) -> list[str]:
        """The namespaces that hold at least one row, sorted."""
        return sorted(
            {
                str(ns)
                for d in self._all_docs()
                if (ns := (getattr(d, "metadata", None) or {}).get(NS_KEY))
            }
        )

    def _flush_journal(self) -> None:
        if self._journal_path is not None:
            tmp = self._journal_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._journal), encoding="utf-8")
            os.replace(tmp, self._journal_path)

    def journal_put(self, entry_id: str, payload: str) -> None:
        """Record a pending commit."""
        with self._lock:
            self._journal[entry_id] = payload
            self._flush_journal()

    def journal_delete(self, entry_id: str) -> None:
        """Drop a journal entry."""
        with self._lock:
            self._journal.pop(entry_id, None)
            self._flush_journal()

    def journal_pending(self) -> list[tuple[str, str]]:
        """Pending entries, oldest first."""
        with self._lock:
            return sorted(self._journal.items())
