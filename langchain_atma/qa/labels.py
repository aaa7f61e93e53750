"""Trace-to-label projection Lambda: which state label the answer model sees.

Every evidence row keeps the trace produced by the bank and retrieval levels:
the record's status, links, transition metadata and host metadata, plus the
``relation`` it was reached through. ``relation`` is the link type *held by the
row it was reached from* (``via``) that points to this row: ``superseded_by``
means the row supersedes its ``via`` row (a successor); ``supersedes`` means the
``via`` row supersedes it (a predecessor).

Priority (first rule that applies wins):

1. **transition memory** - a transition row: ``record.status == transition`` or
   the record carries transition metadata (``record.transition is not None``).
2. **transition linked memory** - reached through an evolution link:
   ``row.relation in {"evolves_from", "evolves_to"}``, unless the record is itself
   an endpoint of an explicit supersession (active and holding ``supersedes``, or
   superseded and holding ``superseded_by``): such a row keeps its state label
   (rule 3 or 4), because it *is* the old or live state the transition connects.
3. **historical memory** - ``record.status == superseded``, or the host
   metadata marks the record stale (see :func:`metadata_marks_stale`).
4. **current memory** - ``record.status == active``; or a successor row
   (``row.relation == "superseded_by"``) that is not itself marked stale; or a
   record that holds a ``supersedes`` link.
5. For status ``unknown`` rows only: a record that holds a ``superseded_by``
   link or was reached as a predecessor (``row.relation == "supersedes"``) is
   **historical memory** (checked before rule 4's link tests, since a record
   with a successor is not the live state).
6. **retrieved memory** - everything else (no status, no state relation).

View refinement (:func:`label_rows` with ``view=QueryView.HISTORICAL`` only): of
two rows labelled *current memory* that are tied by a ``coexists`` /
``scoped_exception`` link, the earlier one (record time, then write order) is
relabelled **historical memory**. Both facts are still true, but a question
about the earlier state ("what did she originally like?") asks for the one
stated first, and the label tells the answer model which that is. Other views
keep both as current memory.

Host metadata accepted as "stale" (keys are case-sensitive, values are not):

* ``state``, ``status``, ``lifecycle`` or ``memory_state`` with a string value
  in ``{"stale", "inactive", "archived", "superseded", "outdated", "expired",
  "historical"}``;
* boolean flags ``stale``, ``archived``, ``inactive``, ``outdated``,
  ``is_stale``, ``is_archived`` or ``is_inactive`` set to ``True``;
* ``active`` or ``is_active`` set to ``False``.

Example:
    >>> from langchain_atma.records import MemoryRecord
    >>> from langchain_atma.retrieval.packets import Bucket, EvidenceRow
    >>> row = EvidenceRow(record=MemoryRecord(namespace="t", content="Lives in Seattle."),
    ...                   bucket=Bucket.SEED)
    >>> project_label(row).value
    'current memory'
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_atma.errors import InvalidRecordError
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus
from langchain_atma.retrieval.packets import EvidenceLabel, EvidenceRow, QueryView

__all__ = [
    "STALE_FLAG_KEYS",
    "STALE_STATE_KEYS",
    "STALE_STATE_VALUES",
    "label_rows",
    "metadata_marks_stale",
    "project_label",
]

STALE_STATE_KEYS: tuple[str, ...] = ("state", "status", "lifecycle", "memory_state")
"""Metadata keys whose string value may mark a record stale."""

STALE_STATE_VALUES: frozenset[str] = frozenset(
    {"stale", "inactive", "archived", "superseded", "outdated", "expired", "historical"}
)
"""Values (case-insensitive) of :data:`STALE_STATE_KEYS` that mean stale."""

STALE_FLAG_KEYS: tuple[str, ...] = (
    "stale",
    "archived",
    "inactive",
    "outdated",
    "is_stale",
    "is_archived",
    "is_inactive",
)
"""Boolean metadata flags that mark a record stale when ``True``."""

_ACTIVE_FLAG_KEYS: tuple[str, ...] = ("active", "is_active")
_EVOLUTION = {LinkType.EVOLVES_FROM.value, LinkType.EVOLVES_TO.value}


def metadata_marks_stale(record: MemoryRecord) -> bool:
    """Whether the host metadata marks the record stale / inactive / archived."""
    md = record.metadata
    for key in STALE_STATE_KEYS:
        val = md.get(key)
        if isinstance(val, str) and val.strip().lower() in STALE_STATE_VALUES:
            return True
    if any(md.get(key) is True for key in STALE_FLAG_KEYS):
        return True
    return any(md.get(key) is False for key in _ACTIVE_FLAG_KEYS)


def project_label(row: EvidenceRow) -> EvidenceLabel:
    """Project one row's trace fields onto a state label (deterministic).

    Raises:
        InvalidRecordError: when ``row`` is not an :class:`EvidenceRow`.
    """
    if not isinstance(row, EvidenceRow):
        raise InvalidRecordError(f"expected an EvidenceRow, got {type(row).__name__}")
    rec = row.record
    relation = row.relation.strip().lower() if row.relation else None
    # 1. the change itself
    if rec.status is RecordStatus.TRANSITION or rec.transition is not None:
        return EvidenceLabel.TRANSITION
    # 2. reached through an evolution link. A row that is itself an endpoint of an
    #    explicit supersession (an active record that supersedes another, or a
    #    superseded record with a successor) keeps its state label instead: it is
    #    the live / old state the transition connects, not just "linked" to it.
    if relation in _EVOLUTION and not (
        (rec.status is RecordStatus.ACTIVE and rec.targets(LinkType.SUPERSEDES))
        or (rec.status is RecordStatus.SUPERSEDED and rec.targets(LinkType.SUPERSEDED_BY))
    ):
        return EvidenceLabel.TRANSITION_LINKED
    # 3. old state
    if rec.status is RecordStatus.SUPERSEDED or metadata_marks_stale(rec):
        return EvidenceLabel.HISTORICAL
    # 4. live state
    if rec.status is RecordStatus.ACTIVE:
        return EvidenceLabel.CURRENT
    # status unknown from here on
    if rec.targets(LinkType.SUPERSEDED_BY) or relation == LinkType.SUPERSEDES.value:
        return EvidenceLabel.HISTORICAL  # 5. it has a successor: not the live state
    if relation == LinkType.SUPERSEDED_BY.value or rec.targets(LinkType.SUPERSEDES):
        return EvidenceLabel.CURRENT
    # 6. nothing known
    return EvidenceLabel.RETRIEVED


def label_rows(
    rows: Iterable[EvidenceRow],
    view: QueryView | str | None = None,
    context: Iterable[EvidenceRow] | None = None,
) -> list[EvidenceRow]:
    """Copies of the rows, in the same order, with ``label`` set by :func:`project_label`.

    With ``view="historical"``, the earlier row of two coexisting *current
    memory* rows is labelled *historical memory* (see the module docstring).
    The partner may also be a row of ``context`` (the candidate pool the
    packet was cut from): the packet then need not hold both. The input rows
    are not modified.

    Example:
        >>> from langchain_atma.records import Link, LinkType, MemoryRecord
        >>> from langchain_atma.retrieval.packets import Bucket, EvidenceRow
        >>> old = MemoryRecord(id="a", namespace="t", content="I love tulips.", time=1,
        ...                    links=[Link(type=LinkType.COEXISTS, target="b")])
        >>> new = MemoryRecord(id="b", namespace="t", content="Lately: sunflowers.", time=2,
        ...                    links=[Link(type=LinkType.COEXISTS, target="a")])
        >>> rows = [EvidenceRow(record=r, bucket=Bucket.SEED) for r in (old, new)]
        >>> [r.label.value for r in label_rows(rows, view="historical")]
        ['historical memory', 'current memory']
        >>> [r.label.value for r in label_rows(rows, view="current")]
        ['current memory', 'current memory']

    Raises:
        InvalidRecordError: when an item is not an :class:`EvidenceRow`, or
            ``view`` is not a query view.
    """
    try:
        v = None if view is None else QueryView(view)
    except ValueError:
        raise InvalidRecordError(f"unknown query view {view!r}") from None
    out = [row.model_copy(update={"label": project_label(row)}) for row in rows]
    if v is not QueryView.HISTORICAL:
        return out
    by_id = {r.id: r for r in out if r.label is EvidenceLabel.CURRENT}
    partners = dict(by_id)
    for c in context or ():
        if c.id not in partners and project_label(c) is EvidenceLabel.CURRENT:
            partners[c.id] = c
    earlier: set[str] = set()
    for r in by_id.values():
        if any(
            p is not None and p.id != r.id and p.record.sort_key > r.record.sort_key
            for p in map(
                partners.get, r.record.targets(LinkType.COEXISTS, LinkType.SCOPED_EXCEPTION)
            )
        ):
            earlier.add(r.id)
    return [
        r.model_copy(update={"label": EvidenceLabel.HISTORICAL}) if r.id in earlier else r
        for r in out
    ]
