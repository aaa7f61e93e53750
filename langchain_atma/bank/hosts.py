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
import os
import threading
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlparse

import numpy as np

from langchain_atma.errors import BankNotFoundError, ConfigError, HostUnavailableError

__all__ = [
    "ChromaHost",
    "HostFilter",
    "HostRow",
    "HostStore",
    "VectorStoreHost",
]

NS_KEY = "atma_ns"
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

    def to_chroma(self) -> dict[str, Any]:
        """Translate to Chroma's ``where`` syntax."""
        clauses: list[dict[str, Any]] = [{NS_KEY: self.namespace}]
        clauses += [{k: v} for k, v in self.equals.items()]
        clauses += [{k: {"$in": list(v)}} for k, v in self.any_of.items()]
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}


@runtime_checkable
class HostStore(Protocol):
    """The operations the overlay needs from a host vector store."""

    def upsert(self, rows: Sequence[HostRow]) -> None:
        """Insert or replace rows, all in one call."""

    def get(self, ids: Sequence[str], *, include_embeddings: bool = True) -> list[HostRow]:
        """Rows for the ids that exist (missing ids are skipped)."""

    def query(
        self, vector: Sequence[float], k: int, flt: HostFilter
    ) -> list[tuple[HostRow, float]]:
        """Top-k rows by cosine similarity (higher is closer) among rows matching ``flt``."""

    def scan(self, flt: HostFilter) -> list[HostRow]:
        """All rows matching ``flt`` (embeddings may be omitted)."""

    def delete(self, ids: Sequence[str]) -> None:
        """Delete rows by id."""

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
    if isinstance(exc, (ConnectionError, OSError)) or "connect" in lowered or (
        "timed out" in lowered
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
    if (parsed.scheme not in ("http", "https") or not parsed.hostname or port == 0
            or parsed.path not in ("", "/") or parsed.query or parsed.fragment
            or parsed.username or parsed.password):
        raise bad
    ssl = parsed.scheme == "https"
    return parsed.hostname, port or (443 if ssl else 8000), ssl


class ChromaHost:
    """A Chroma collection as the host (default).

    Use :meth:`persistent` for the embedded default (one process), :meth:`server`
    for a ``chroma run`` server shared by several processes, or pass any
    ``chromadb`` client. Writers of several processes on one machine are
    serialised by the bank's writer lock (:mod:`langchain_atma.bank.locks`);
    writers on different machines need an external lock or a single writer.
    Chroma's own embedding function is never used: the collection is created
    with ``embedding_function=None`` and every row comes with its vector, so
    nothing is downloaded at run time.

    Args:
        client: a chromadb client.
        collection_name: collection to use (created if missing, cosine space).
    """

    def __init__(self, client: Any, collection_name: str = "atma_memory", *,
                 create: bool = True) -> None:
        self.client = client
        self.collection_name = collection_name
        self.is_server = False
        # names the shared store in writer-lock keys (set by server() / persistent())
        self.lock_scope: str | None = None
        if not create:
            try:
                names = {getattr(c, "name", c) for c in client.list_collections()}
            except Exception as exc:  # noqa: BLE001
                raise _wrap_chroma_errors(exc, "list collections") from exc
            if collection_name not in names:
                raise BankNotFoundError(
                    f"no bank collection {collection_name!r} here"
                    + (f" (collections: {', '.join(sorted(names))})" if names else "")
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
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "open collection") from exc
        self._lock = threading.RLock()

    # -- constructors -----------------------------------------------------------------
    @classmethod
    def persistent(cls, path: str | os.PathLike[str], collection_name: str = "atma_memory",
                   *, create: bool = True) -> ChromaHost:
        """Embedded bank in a local directory (single process).

        Args:
            path: the bank directory.
            collection_name: the collection.
            create: create the directory and collection when missing; with ``False``
                a missing one raises :class:`~langchain_atma.errors.BankNotFoundError`
                and nothing is written.
        """
        import chromadb
        from chromadb.config import Settings

        if not create and not (Path(path) / "chroma.sqlite3").is_file():
            raise BankNotFoundError(f"no bank at {path} (the directory holds no Chroma database)")
        Path(path).mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(
            path=str(path), settings=Settings(anonymized_telemetry=False)
        )
        host = cls(client, collection_name, create=create)
        host.lock_scope = f"chroma-path:{Path(path).resolve()}/{collection_name}"
        return host

    @classmethod
    def server(cls, url: str, collection_name: str = "atma_memory", *,
               create: bool = True) -> ChromaHost:
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
        host = cls(client, collection_name, create=create)
        host.is_server = True
        name = hostname.lower()
        if name in _LOOPBACK:
            name = "localhost"
        scheme = "https" if ssl else "http"
        host.lock_scope = f"chroma+{scheme}://{name}:{port}/{collection_name}"
        return host

    @classmethod
    def ephemeral(cls, collection_name: str | None = None) -> ChromaHost:
        """An in-memory Chroma collection (tests, demos)."""
        import chromadb
        from chromadb.config import Settings

        client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
        return cls(client, collection_name or f"atma_{uuid.uuid4().hex[:12]}")

    # -- protocol ---------------------------------------------------------------------
    def upsert(self, rows: Sequence[HostRow]) -> None:
        """Insert or replace rows in one Chroma call."""
        if not rows:
            return
        missing = [r.id for r in rows if r.embedding is None]
        if missing:
            # keep the stored vector for rows whose text did not change
            stored = {r.id: r.embedding for r in self.get(missing)}
            for r in rows:
                if r.embedding is None:
                    r.embedding = stored.get(r.id)
            if any(r.embedding is None for r in rows):
                raise ValueError("a new row needs an embedding")
        try:
            self.collection.upsert(
                ids=[r.id for r in rows],
                embeddings=[list(map(float, r.embedding or [])) for r in rows],
                documents=[r.text for r in rows],
                metadatas=[dict(r.metadata) for r in rows],
            )
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "upsert") from exc

    def get(self, ids: Sequence[str], *, include_embeddings: bool = True) -> list[HostRow]:
        """Rows by id (with embeddings unless ``include_embeddings=False``)."""
        if not ids:
            return []
        include = ["documents", "metadatas"]
        if include_embeddings:
            include.append("embeddings")
        try:
            res = self.collection.get(ids=list(ids), include=include)
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "get") from exc
        return self._rows(res)

    def query(
        self, vector: Sequence[float], k: int, flt: HostFilter
    ) -> list[tuple[HostRow, float]]:
        """Cosine top-k within the filter (similarity = 1 - cosine distance)."""
        if k <= 0:
            return []
        try:
            res = self.collection.query(
                query_embeddings=[list(map(float, vector))],
                n_results=k,
                where=flt.to_chroma(),
                include=["embeddings", "documents", "metadatas", "distances"],
            )
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "query") from exc
        ids = res["ids"][0]
        docs = (res.get("documents") or [[None] * len(ids)])[0]
        metas = (res.get("metadatas") or [[None] * len(ids)])[0]
        embs = res.get("embeddings")
        emb_list = embs[0] if embs is not None else [None] * len(ids)
        dists = (res.get("distances") or [[0.0] * len(ids)])[0]
        out: list[tuple[HostRow, float]] = []
        for i, rid in enumerate(ids):
            emb = emb_list[i]
            out.append(
                (
                    HostRow(
                        id=rid,
                        text=docs[i] or "",
                        embedding=None if emb is None else [float(x) for x in emb],
                        metadata=dict(metas[i] or {}),
                    ),
                    1.0 - float(dists[i]),
                )
            )
        return out

    def scan(self, flt: HostFilter) -> list[HostRow]:
        """All rows matching the filter (no embeddings)."""
        try:
            res = self.collection.get(where=flt.to_chroma(), include=["documents", "metadatas"])
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "scan") from exc
        return self._rows(res)

    def delete(self, ids: Sequence[str]) -> None:
        """Delete rows by id."""
        if ids:
            try:
                self.collection.delete(ids=list(ids))
            except Exception as exc:  # noqa: BLE001
                raise _wrap_chroma_errors(exc, "delete") from exc

    def count(self) -> int:
        """Rows in the collection."""
        try:
            return int(self.collection.count())
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "count") from exc

    def namespaces(self) -> list[str]:
        """The namespaces that hold at least one row, sorted (reads every row's metadata)."""
        names: set[str] = set()
        offset, page = 0, 5000
        try:
            while True:
                got = self.collection.get(include=["metadatas"], limit=page, offset=offset)
                mds = got.get("metadatas") or []
                names.update(str(md[NS_KEY]) for md in mds if md and md.get(NS_KEY))
                if len(mds) < page:
                    return sorted(names)
                offset += page
        except Exception as exc:  # noqa: BLE001
            raise _wrap_chroma_errors(exc, "list namespaces") from exc

    def journal_put(self, entry_id: str, payload: str) -> None:
        """Write a journal entry (a one-dimensional dummy vector is stored)."""
        try:
            self._journal.upsert(
                ids=[entry_id], embeddings=[[1.0]], documents=[payload],
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
                    embedding=None if emb is None else [float(x) for x in emb],
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
                        "id": d.id, "vector": e, "text": d.page_content, "metadata": d.metadata
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

    def get(self, ids: Sequence[str], *, include_embeddings: bool = True) -> list[HostRow]:
        """Rows by id (with vectors where the store exposes them)."""
        if not ids:
            return []
        docs = self.vectorstore.get_by_ids(list(ids))
        vecs = self._vectors(d.id for d in docs if d.id) if include_embeddings else {}
        return [
            HostRow(id=str(d.id), text=d.page_content, embedding=vecs.get(str(d.id)),
                    metadata=dict(d.metadata or {}))
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
            (HostRow(id=str(d.id), text=d.page_content, embedding=vecs.get(str(d.id)),
                     metadata=dict(d.metadata or {})), float(s))
            for d, s in matched[:k]
        ]

    def scan(self, flt: HostFilter) -> list[HostRow]:
        """All matching rows."""
        return [
            HostRow(id=str(d.id), text=d.page_content, embedding=None,
                    metadata=dict(d.metadata or {}))
            for d in self._all_docs()
            if flt.matches(d.metadata)
        ]

    def delete(self, ids: Sequence[str]) -> None:
        """Delete rows."""
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
        return sorted({str(ns) for d in self._all_docs()
                       if (ns := (getattr(d, "metadata", None) or {}).get(NS_KEY))})

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


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors."""
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    den = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb / den) if den else 0.0
