"""AtmaStore: a LangGraph ``BaseStore`` backed by a :class:`StateBank`, history kept.

Every ``(namespace, key)`` of the store is a *slot* of the bank. Writing a new
value for an existing key does not overwrite it: the new version is committed
with a ``supersede`` decision, so the old version stays in the bank as a
``superseded`` record linked ``superseded_by`` -> the new one. ``get`` and
``search`` return live values (like any other ``BaseStore``), and the history
of every key stays readable with :meth:`AtmaStore.history` or a search with
``filter={"atma_include_history": True}``.

Namespace mapping
-----------------
A LangGraph namespace (a tuple of strings) maps to ONE bank namespace string::

    ("users", "alice", "prefs")  ->  "lgstore.users.alice.prefs"

* the store prefix (``"lgstore"`` by default) comes first, then each label;
  labels are separated by ``.`` (which LangGraph forbids inside labels);
* characters other than ASCII letters, digits, ``_`` and ``-`` are escaped as
  ``:HH`` per UTF-8 byte (``"a b"`` -> ``"a:20b"``, ``":"`` -> ``":3A"``), so
  the mapping is reversible (:func:`decode_namespace`) and never collides;
* the bank allows 128 characters per namespace: a tuple whose mapped form is
  longer (or that is empty, or holds an empty / non-string label) is rejected
  with :class:`~langchain_atma.errors.NamespaceError`.

The store keeps a small registry of the namespaces it has written (bank
namespace ``"<prefix>-namespaces"``, one record per store namespace) so that
``list_namespaces`` and prefix searches work on any host.

Records
-------
One version = one bank record of the mapped namespace:

* ``content``: a readable rendering of the value (``"field: value"`` parts
  joined by ``"; "``, or the texts at the configured ``index`` fields) - this
  is what is embedded;
* ``slot``: the key;
* metadata ``value_json`` (the value as JSON, key order kept), ``store_key``,
  ``store_op`` (``put`` / ``delete``), ``store_indexed`` and ``store_created``.

Deletes keep history: ``delete`` (``put(value=None)``) commits a *tombstone*,
a ``transition`` record ("deleted <key>") with a ``transition`` decision on the
live version, which becomes ``superseded`` (linked ``evolves_to`` -> the
tombstone). A later ``put`` of the same key supersedes the tombstone
(``evolves_from`` link) and starts a new lineage (new ``created_at``). No
record is ever removed, so the bank invariants hold (every superseded record
has a successor, one active record per key).

Differences from ``InMemoryStore`` are listed in ``docs/STORE.md``.

Example:
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> from langchain_atma.bank import StateBank
    >>> store = AtmaStore(StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16)))
    >>> store.put(("users", "ann"), "home", {"city": "Boston"})
    >>> store.put(("users", "ann"), "home", {"city": "Seattle"})
    >>> store.get(("users", "ann"), "home").value
    {'city': 'Seattle'}
    >>> [(v.value["city"], v.status) for v in store.history(("users", "ann"), "home")]
    [('Boston', 'superseded'), ('Seattle', 'active')]
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Literal

import numpy as np
from langchain_core.runnables.config import run_in_executor
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
    validate_op_namespace,
)

from langchain_atma.bank.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.bank.hosts import HostFilter
from langchain_atma.errors import (
    ConfigError,
    InvalidQueryError,
    InvalidRecordError,
    NamespaceError,
)
from langchain_atma.records import (
    LinkType,
    MemoryRecord,
    Provenance,
    RecordStatus,
    TransitionInfo,
    parse_time,
    validate_namespace,
)

__all__ = [
    "DEFAULT_PREFIX",
    "HISTORY_FILTER_KEY",
    "AtmaSearchItem",
    "AtmaStore",
    "decode_namespace",
    "encode_namespace",
]

DEFAULT_PREFIX = "lgstore"
"""Default first part of every bank namespace written by an :class:`AtmaStore`."""

HISTORY_FILTER_KEY = "atma_include_history"
"""Search filter key: ``{"atma_include_history": True}`` also returns superseded versions."""

_SAFE = re.compile(r"[A-Za-z0-9_-]")
_ESCAPE = re.compile(r"(?::[0-9A-F]{2})+")
_PREFIX_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin")
_MAX_RENDER_CHARS = 20_000


# ---------------------------------------------------------------- namespace mapping


def _escape_label(label: str) -> str:
    out: list[str] = []
    for ch in label:
        if _SAFE.fullmatch(ch):
            out.append(ch)
        else:
            out.extend(f":{b:02X}" for b in ch.encode("utf-8"))
    return "".join(out)


def _unescape_label(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        raw = bytes(int(h, 16) for h in m.group(0).split(":")[1:])
        return raw.decode("utf-8")

    return _ESCAPE.sub(repl, text)


def _check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX_RE.match(prefix):
        raise ConfigError(
            f"invalid store prefix {prefix!r}: use 1-32 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return prefix


def encode_namespace(namespace: Sequence[str], prefix: str = DEFAULT_PREFIX) -> str:
    """Map a LangGraph namespace tuple to a bank namespace string (reversible).

    Raises:
        NamespaceError: for an empty tuple, a label that is empty or not a
            string, or a mapped form longer than the bank's 128 characters.

    Example:
        >>> encode_namespace(("users", "ann b"))
        'lgstore.users.ann:20b'
    """
    _check_prefix(prefix)
    if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)) or not namespace:
        raise NamespaceError(
            f"a store namespace must be a non-empty tuple of str, got {namespace!r}"
        )
    for label in namespace:
        if not isinstance(label, str) or not label:
            raise NamespaceError(
                f"namespace {tuple(namespace)!r}: every label must be a non-empty string"
            )
    mapped = ".".join([prefix, *(_escape_label(lbl) for lbl in namespace)])
    if len(mapped) > 128:
        raise NamespaceError(
            f"namespace {tuple(namespace)!r} maps to {len(mapped)} characters "
            f"({mapped[:40]}...); the bank allows 128. Use fewer or shorter labels "
            "(characters outside [A-Za-z0-9_-] take 3 characters per UTF-8 byte)"
        )
    return validate_namespace(mapped)


def decode_namespace(bank_namespace: str, prefix: str = DEFAULT_PREFIX) -> tuple[str, ...]:
    """Inverse of :func:`encode_namespace`.

    Raises:
        NamespaceError: when ``bank_namespace`` was not produced by the store.

    Example:
        >>> decode_namespace("lgstore.users.ann:20b")
        ('users', 'ann b')
    """
    _check_prefix(prefix)
    head = prefix + "."
    if not isinstance(bank_namespace, str) or not bank_namespace.startswith(head):
        raise NamespaceError(f"{bank_namespace!r} is not a store namespace of prefix {prefix!r}")
    try:
        labels = tuple(_unescape_label(p) for p in bank_namespace[len(head) :].split("."))
    except (UnicodeDecodeError, ValueError) as exc:
        raise NamespaceError(f"{bank_namespace!r}: bad escape sequence ({exc})") from exc
    if not all(labels):
        raise NamespaceError(f"{bank_namespace!r} holds an empty label")
    return labels


# --------------------------------------------------------------------- values


def _to_json(value: Mapping[str, Any]) -> str:
    """The value as JSON (key order kept); rejects what JSON cannot hold."""
    if not isinstance(value, Mapping):
        raise InvalidRecordError(f"a store value must be a dict, got {type(value).__name__}")
    for k in value:
        if not isinstance(k, str):
            raise InvalidRecordError(f"store value keys must be strings, got {k!r}")
    try:
        return json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRecordError(f"store value is not JSON-serializable: {exc}") from exc


def _scalar_text(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, sort_keys=True)


def _render(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The readable, embedded text of a value (``field: value`` lines or index fields)."""
    parts: list[str] = []
    if fields and list(fields) != ["$"]:
        for path in fields:
            parts.extend(t for t in get_text_at_path(dict(value), path) if t.strip())
    if not parts:
        parts = [f"{k}: {_scalar_text(v)}" for k, v in value.items()]
    text = "; ".join(p.replace("\x00", " ") for p in parts).strip()
    if len(text) > _MAX_RENDER_CHARS:
        text = text[:_MAX_RENDER_CHARS]
    return text or "{}"


def _compare(actual: Any, op: str, expected: Any) -> bool:
    if op == "$eq":
        return bool(actual == expected)
    if op == "$ne":
        return bool(actual != expected)
    if op == "$in":
        return actual in expected if isinstance(expected, (list, tuple, set)) else False
    if op == "$nin":
        return actual not in expected if isinstance(expected, (list, tuple, set)) else True
    try:
        a, b = float(actual), float(expected)
    except (TypeError, ValueError):
        return False
    if op == "$gt":
        return a > b
    if op == "$gte":
        return a >= b
    if op == "$lt":
        return a < b
    return a <= b  # $lte


def _matches(value: Any, flt: Mapping[str, Any]) -> bool:
    """``InMemoryStore``-style filter: equality, nested dicts, ``$eq/$ne/$gt...``."""
    for key, cond in flt.items():
        actual = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(cond, Mapping) and any(str(k).startswith("$") for k in cond):
            for op, expected in cond.items():
                if op not in _OPS:
                    raise InvalidQueryError(
                        f"unsupported filter operator {op!r}; allowed: {', '.join(_OPS)}"
                    )
                if not _compare(actual, op, expected):
                    return False
        elif isinstance(cond, Mapping):
            if not isinstance(actual, Mapping) or not _matches(actual, cond):
                return False
        elif actual != cond:
            return False
    return True


# ---------------------------------------------------------------------- items


class AtmaSearchItem(SearchItem):
    """A :class:`SearchItem` that also tells which version of the key it is.

    Attributes:
        status: ``"active"`` (the live value), ``"superseded"`` (an older
            version) or ``"deleted"`` (a tombstone, value ``{}``).
        record_id: id of the bank record of this version.
        superseded_at: when this version was replaced (None while live).
    """

    __slots__ = ("status", "record_id", "superseded_at")

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        *,
        status: str = "active",
        record_id: str = "",
        superseded_at: datetime | None = None,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self.status = status
        self.record_id = record_id
        self.superseded_at = superseded_at

    def dict(self) -> dict[str, Any]:
        """JSON-friendly view, with the version fields."""
        out = super().dict()
        out["status"] = self.status
        out["record_id"] = self.record_id
        out["superseded_at"] = self.superseded_at.isoformat() if self.superseded_at else None
        return out


def _is_tombstone(rec: MemoryRecord) -> bool:
    return rec.metadata.get("store_op") == "delete"


def _value_of(rec: MemoryRecord) -> dict[str, Any]:
    raw = rec.metadata.get("value_json")
    if not isinstance(raw, str):
        return {}
    try:
        val = json.loads(raw)
    except ValueError as exc:
        raise InvalidRecordError(f"record {rec.id} holds unreadable value_json: {exc}") from exc
    return val if isinstance(val, dict) else {}


def _created_of(rec: MemoryRecord) -> datetime:
    raw = rec.metadata.get("store_created")
    try:
        return parse_time(raw) if raw is not None else rec.time
    except InvalidRecordError:
        return rec.time


# ---------------------------------------------------------------------- store


class AtmaStore(BaseStore):
    """LangGraph store over a state bank: a key is a slot, updates supersede.

    Args:
        bank: the state bank that holds the items.
        prefix: first part of every mapped bank namespace (default ``"lgstore"``).
        index: optional LangGraph ``IndexConfig``; only ``fields`` is used (the
            value paths rendered into the embedded text, default the whole
            value). Vectors always come from the bank's embeddings, so
            ``embed`` must not be given and ``dims`` is ignored.

    Raises:
        ConfigError: for a bad prefix or an ``index`` with its own ``embed``.
    """

    supports_ttl = False

    def __init__(
        self,
        bank: StateBank,
        *,
        prefix: str = DEFAULT_PREFIX,
        index: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(bank, StateBank):
            raise ConfigError(f"bank must be a StateBank, got {type(bank).__name__}")
        self.bank = bank
        self.prefix = _check_prefix(prefix)
        self.registry_namespace = f"{prefix}-namespaces"
        fields: list[str] | None = None
        if index is not None:
            if index.get("embed") is not None:
                raise ConfigError(
                    "AtmaStore embeds with the bank's embeddings; configure them on the "
                    "StateBank instead of index['embed']"
                )
            raw = index.get("fields")
            if raw is not None:
                if isinstance(raw, str) or not all(isinstance(f, str) for f in raw):
                    raise ConfigError("index['fields'] must be a list of path strings")
                fields = list(raw)
        self.index_fields = fields
        self._lock = threading.RLock()
        self._registered: set[str] = set()

    # ----------------------------------------------------------------- mapping
    def bank_namespace(self, namespace: Sequence[str]) -> str:
        """The bank namespace of a store namespace (see the module docstring)."""
        return encode_namespace(namespace, self.prefix)

    def store_namespace(self, bank_namespace: str) -> tuple[str, ...]:
        """The store namespace of a bank namespace written by this store."""
        return decode_namespace(bank_namespace, self.prefix)

    # ------------------------------------------------------------ BaseStore API
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run operations in order (a put is visible to the ops after it).

        Raises:
            InvalidNamespaceError: for a namespace LangGraph rejects.
            NamespaceError: for a namespace the bank cannot hold.
            InvalidRecordError: for a value that is not a JSON-serializable dict.
            InvalidQueryError: for a bad search (unknown operator, negative limit).
        """
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                if op.value is None:
                    self._delete(op.namespace, op.key)
                else:
                    self._put(op.namespace, op.key, op.value, op.index)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InvalidQueryError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async :meth:`batch` (runs in the default executor; bank calls are blocking)."""
        return await run_in_executor(None, self.batch, list(ops))

    # ---------------------------------------------------------------- extras
    def history(self, namespace: tuple[str, ...], key: str) -> list[AtmaSearchItem]:
        """Every version of one key, oldest first, tombstones included (``status``)."""
        bank_ns = self.bank_namespace(namespace)
        versions = self._versions(bank_ns, str(key))
        by_id = {r.id: r for r in versions}
        return [self._item(ns_rec, tuple(namespace), by_id, None) for ns_rec in versions]

    # ------------------------------------------------------------------ internals
    def _versions(self, bank_ns: str, key: str) -> list[MemoryRecord]:
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:  # the host could neither store nor filter on it
            raise InvalidRecordError(f"store key {key!r} is not valid Unicode text") from None
        rows = self.bank.host.scan(HostFilter(bank_ns, equals={"atma_slot": key}))
        recs = self.bank.get_many(bank_ns, [r.id for r in rows])
        return sorted(
            (r for r in recs if r.metadata.get("store_key") == key), key=lambda r: r.sort_key
        )

    @staticmethod
    def _live(versions: Sequence[MemoryRecord]) -> MemoryRecord | None:
        if not versions:
            return None
        last = versions[-1]
        if last.status is RecordStatus.ACTIVE and not _is_tombstone(last):
            return last
        return None

    def _item(
        self,
        rec: MemoryRecord,
        namespace: tuple[str, ...],
        by_id: Mapping[str, MemoryRecord],
        score: float | None,
    ) -> AtmaSearchItem:
        status = (
            "deleted"
            if _is_tombstone(rec)
            else ("active" if rec.status is RecordStatus.ACTIVE else "superseded")
        )
        superseded_at = None
        if status != "active":
            nxt = [
                by_id[t]
                for t in rec.targets(LinkType.SUPERSEDED_BY, LinkType.EVOLVES_TO)
                if t in by_id
            ]
            if nxt:
                superseded_at = min(n.time for n in nxt)
        return AtmaSearchItem(
            namespace=namespace,
            key=str(rec.metadata.get("store_key", rec.slot or "")),
            value=_value_of(rec),
            created_at=_created_of(rec),
            updated_at=rec.time,
            score=score,
            status=status,
            record_id=rec.id,
            superseded_at=superseded_at,
        )

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        bank_ns = self.bank_namespace(namespace)
        live = self._live(self._versions(bank_ns, str(key)))
        if live is None:
            return None
        return Item(
            value=_value_of(live),
            key=str(key),
            namespace=tuple(namespace),
            created_at=_created_of(live),
            updated_at=live.time,
        )

    def _register(self, bank_ns: str, namespace: tuple[str, ...], vec: np.ndarray) -> None:
        if bank_ns in self._registered:
            return
        self.bank.commit(
            MemoryRecord(
                namespace=self.registry_namespace,
                content="store namespace " + "/".join(namespace),
                slot=bank_ns,
                provenance=Provenance(source_event_id=f"register:{bank_ns}"),
                metadata={"store_namespace": bank_ns},
            ),
            embedding=vec,
        )
        self._registered.add(bank_ns)

    def _put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None,
    ) -> None:
        bank_ns = self.bank_namespace(namespace)
        key = str(key)
        raw = _to_json(value)
        fields = self.index_fields if index is None or index is False else list(index)
        text = _render(value, fields)
        # validate the record text and key first (a lone surrogate, a bad key: the
        # library's own error, nothing stored)
        MemoryRecord(namespace=bank_ns, content=text, slot=key)
        # the thread lock, and the bank's namespace writer lock (a file lock when the
        # bank runs on a Chroma server): read the versions, decide and commit with no
        # other writer in between, in this process or another one
        with self._lock, self.bank.writer_lock(bank_ns):
            versions = self._versions(bank_ns, key)
            live = self._live(versions)
            if live is not None and _value_of(live) == json.loads(raw):
                return  # identical value: no new version
            now = datetime.now(timezone.utc)
            created = _created_of(live) if live is not None else now
            decisions = []
            if versions:
                decisions = [
                    CommitDecision(
                        action=CommitAction.SUPERSEDE,
                        target_id=versions[-1].id,
                        reason="store put: new value for the key",
                    )
                ]
            rec = MemoryRecord(
                namespace=bank_ns,
                content=text,
                time=now,
                slot=key,
                metadata={
                    "store_key": key,
                    "store_op": "put",
                    "store_indexed": index is not False,
                    "store_created": created.isoformat(),
                    "value_json": raw,
                },
            )
            vec = self.bank.embed([text])[0]  # only for a value that is stored
            self._register(bank_ns, tuple(namespace), vec)
            self.bank.commit(rec, decisions, embedding=vec)

    def _delete(self, namespace: tuple[str, ...], key: str) -> None:
        bank_ns = self.bank_namespace(namespace)
        key = str(key)
        with self._lock, self.bank.writer_lock(bank_ns):
            versions = self._versions(bank_ns, key)
            live = self._live(versions)
            if live is None:
                return  # nothing live: deleting is a no-op
            shown = live.content if len(live.content) <= 200 else live.content[:199] + "\u2026"
            tomb = MemoryRecord(
                namespace=bank_ns,
                content=f"deleted {key} (was: {shown})",
                time=datetime.now(timezone.utc),
                slot=key,
                transition=TransitionInfo(
                    from_value=shown, to_value=None, transition_type="delete"
                ),
                metadata={"store_key": key, "store_op": "delete", "store_indexed": False},
            )
            self.bank.commit(
                tomb,
                [
                    CommitDecision(
                        action=CommitAction.TRANSITION, target_id=live.id, reason="store delete"
                    )
                ],
            )

    def _namespaces(self) -> list[tuple[str, tuple[str, ...]]]:
        """(bank namespace, store namespace) of every namespace this store wrote."""
        found: dict[str, tuple[str, ...]] = {}
        for rec in self.bank.records(self.registry_namespace):
            bank_ns = rec.metadata.get("store_namespace")
            if isinstance(bank_ns, str):
                try:
                    found[bank_ns] = self.store_namespace(bank_ns)
                except NamespaceError:
                    continue
                self._registered.add(bank_ns)
        return sorted(found.items(), key=lambda p: p[1])

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit < 0 or op.offset < 0:
            raise InvalidQueryError(
                f"limit and offset must be >= 0, got limit={op.limit}, offset={op.offset}"
            )
        flt = dict(op.filter or {})
        include_history = bool(flt.pop(HISTORY_FILTER_KEY, False))
        prefix = tuple(op.namespace_prefix)
        spaces = [(b, s) for b, s in self._namespaces() if s[: len(prefix)] == prefix]
        statuses = None if include_history else [RecordStatus.ACTIVE]
        cands: list[tuple[MemoryRecord, tuple[str, ...], dict[str, MemoryRecord]]] = []
        for bank_ns, store_ns in spaces:
            recs = self.bank.records(bank_ns, statuses=statuses)
            by_id = {r.id: r for r in recs}
            for rec in recs:
                if _is_tombstone(rec) or "store_key" not in rec.metadata:
                    continue
                if flt and not _matches(_value_of(rec), flt):
                    continue
                cands.append((rec, store_ns, by_id))
        if not op.query:
            cands.sort(key=lambda c: c[0].sort_key, reverse=True)
            page = cands[op.offset : op.offset + op.limit]
            return [self._item(r, ns, by, None) for r, ns, by in page]
        qvec = np.asarray(self.bank.embed_query(op.query), dtype=np.float32)
        qn = float(np.linalg.norm(qvec)) or 1.0
        scored: list[tuple[float, MemoryRecord, tuple[str, ...], dict[str, MemoryRecord]]] = []
        unscored: list[tuple[MemoryRecord, tuple[str, ...], dict[str, MemoryRecord]]] = []
        by_space: dict[
            str, list[tuple[MemoryRecord, tuple[str, ...], dict[str, MemoryRecord]]]
        ] = {}
        for c in cands:
            if c[0].metadata.get("store_indexed") is False:
                unscored.append(c)
            else:
                by_space.setdefault(c[0].namespace, []).append(c)
        for bank_ns, group in by_space.items():
            vecs = self.bank.vectors(bank_ns, [c[0].id for c in group])
            for rec, ns, by in group:
                v = vecs.get(rec.id)
                if v is None:
                    unscored.append((rec, ns, by))
                    continue
                denom = (float(np.linalg.norm(v)) or 1.0) * qn
                score = float(np.dot(v, qvec) / denom)
                scored.append((score if math.isfinite(score) else 0.0, rec, ns, by))
        scored.sort(key=lambda s: (-s[0], s[1].sort_key))
        ranked: list[
            tuple[float | None, MemoryRecord, tuple[str, ...], dict[str, MemoryRecord]]
        ] = [*scored]
        unscored.sort(key=lambda c: c[0].sort_key, reverse=True)
        ranked += [(None, r, ns, by) for r, ns, by in unscored]
        page2 = ranked[op.offset : op.offset + op.limit]
        return [self._item(r, ns, by, s) for s, r, ns, by in page2]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        if op.limit < 0 or op.offset < 0:
            raise InvalidQueryError(
                f"limit and offset must be >= 0, got limit={op.limit}, offset={op.offset}"
            )
        names = [s for _, s in self._namespaces()]
        conds = op.match_conditions or ()
        names = [n for n in names if all(_condition_holds(c, n) for c in conds)]
        if op.max_depth is not None:
            if op.max_depth < 1:
                raise InvalidQueryError(f"max_depth must be >= 1, got {op.max_depth}")
            names = [n[: op.max_depth] for n in names]
        unique = sorted(set(names))
        return unique[op.offset : op.offset + op.limit]


def _condition_holds(cond: MatchCondition, ns: tuple[str, ...]) -> bool:
    if cond.match_type not in ("prefix", "suffix"):
        raise InvalidQueryError(f"unknown match type {cond.match_type!r}")
    path = tuple(cond.path)
    if len(ns) < len(path):
        return False
    part = ns[: len(path)] if cond.match_type == "prefix" else ns[len(ns) - len(path) :]
    return all(p == "*" or p == q for p, q in zip(path, part, strict=True))
