"""One Chroma collection per namespace: the naming rule and the registry.

A metadata ``where`` on a shared collection turns Chroma's HNSW lookup into a
scan of the matching ids (about 350 ms at 100k rows on two cores); a
collection that holds only one namespace answers the same seed search from its
own HNSW index in a few milliseconds. :class:`~langchain_atma.bank.hosts.ChromaHost`
therefore keeps each namespace in its own collection (the *namespaced* layout)
and lists them in a small registry collection.

**Collection names.** Chroma accepts 3-512 characters of ``[A-Za-z0-9._-]``,
starting and ending with a letter or digit, without ``..``. A namespace of any
text (unicode, slashes, any length) maps to::

    <base>-ns-<slug>-<digest>

where ``slug`` is the namespace lowercased with every run of characters other
than ``a-z0-9`` replaced by ``_``, trimmed of ``_`` and cut to 24 characters
(omitted with its ``-`` when empty), and ``digest`` is the first 32 hex digits
(128 bits) of the SHA-256 of the namespace's UTF-8 bytes. The digest makes the
mapping collision-free in practice; the registry stores the namespace of every
name it hands out and raises :class:`~langchain_atma.errors.ConfigError` if
two namespaces ever met on one name, rather than mixing them.

**Registry.** ``<base>__namespaces`` holds one row per namespace (id: the
collection name, document: the namespace) and one layout marker
(``__layout__``: ``namespaced``, or ``migrating`` while ``atma migrate`` copies
a bank of the single-collection layout). A namespace is registered *before*
its collection is created, so a crash in between leaves a registered
namespace without a collection (read as empty; created by the next write or by
``atma verify --repair``), never rows that no registry lists.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from langchain_atma.errors import ConfigError

__all__ = ["LAYOUT_MARKER", "Layout", "NamespaceRegistry", "collection_name_for"]

Layout = Literal["single", "namespaced", "migrating"]
LAYOUT_MARKER = "__layout__"
_SLUG_LEN = 24
_DIGEST_HEX = 32
_NON_SLUG = re.compile(r"[^a-z0-9]+")


def collection_name_for(base: str, namespace: str) -> str:
    """The collection that holds ``namespace`` in the bank ``base``.

    Example:
        >>> name = collection_name_for("atma_memory", "user:42")
        >>> name.startswith("atma_memory-ns-user_42-"), len(name)
        (True, 55)
    """
    slug = _NON_SLUG.sub("_", namespace.lower()).strip("_")[:_SLUG_LEN].strip("_")
    digest = hashlib.sha256(namespace.encode("utf-8", "surrogatepass")).hexdigest()
    middle = f"{slug}-" if slug else ""
    return f"{base}-ns-{middle}{digest[:_DIGEST_HEX]}"


def registry_name(base: str) -> str:
    """The registry collection of the bank ``base``."""
    return f"{base}__namespaces"


class NamespaceRegistry:
    """The namespaces of one bank and the layout marker, kept in a Chroma collection.

    Args:
        client: the chromadb client of the bank.
        base: the bank's collection name.
    """

    def __init__(self, client: Any, base: str) -> None:
        self.base = base
        self._coll = client.get_or_create_collection(registry_name(base), embedding_function=None)
        self._known: dict[str, tuple[str, str]] = {}

    def layout(self) -> Layout | None:
        """The recorded layout, or ``None`` for a registry without a marker."""
        got = self._coll.get(ids=[LAYOUT_MARKER], include=["documents"])
        docs = got.get("documents") or []
        if not docs or docs[0] not in ("namespaced", "migrating"):
            return None
        return "namespaced" if docs[0] == "namespaced" else "migrating"

    def set_layout(self, layout: Layout) -> None:
        """Record the layout."""
        self._coll.upsert(
            ids=[LAYOUT_MARKER],
            embeddings=[[1.0]],
            documents=[layout],
            metadatas=[{"atma_marker": 1}],
        )

    def register(self, namespace: str, *, state: str = "ready") -> str:
        """Register a namespace (idempotent); returns its collection name.

        Raises:
            ConfigError: the name is already registered to another namespace.
        """
        name = collection_name_for(self.base, namespace)
        if self._known.get(namespace) == (name, state):
            return name
        got = self._coll.get(ids=[name], include=["documents", "metadatas"])
        docs = got.get("documents") or []
        if docs and docs[0] != namespace:
            raise ConfigError(
                f"namespaces {docs[0]!r} and {namespace!r} map to one collection {name!r}"
            )
        old_state = ((got.get("metadatas") or [None])[0] or {}).get("state")
        if not docs or old_state != state:
            self._coll.upsert(
                ids=[name], embeddings=[[1.0]], documents=[namespace], metadatas=[{"state": state}]
            )
        self._known[namespace] = (name, state)
        return name

    def entries(self) -> dict[str, tuple[str, str]]:
        """``{namespace: (collection name, state)}`` of every registered namespace."""
        got = self._coll.get(include=["documents", "metadatas"])
        out: dict[str, tuple[str, str]] = {}
        for rid, doc, md in zip(
            got["ids"], got.get("documents") or [], got.get("metadatas") or [], strict=False
        ):
            if rid != LAYOUT_MARKER and doc is not None:
                out[doc] = (rid, str((md or {}).get("state", "ready")))
        return out
