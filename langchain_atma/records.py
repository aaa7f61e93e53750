"""The memory record model: r = (content x, time t, status s, links L, metadata z).

A :class:`MemoryRecord` is the unit the state bank stores. Besides the paper's
five fields it carries provenance (which event wrote it, who said it, in which
session) and, when known, a slot key (the state variable it talks about, e.g.
``"location"``).

Time handling
-------------
* Every record time is a timezone-aware :class:`~datetime.datetime` in UTC.
* Input may be an aware ``datetime`` (converted to UTC), a naive ``datetime`` or
  an ISO-8601 string without offset (both *interpreted as UTC*), an ISO-8601
  string with an offset, or a POSIX epoch number (seconds).
* Records are ordered by ``(time, seq)`` where ``seq`` is a nanosecond write
  counter assigned by the bank, so two records with the same time keep their
  write order.

Example:
    >>> from langchain_atma.records import MemoryRecord, RecordStatus
    >>> r = MemoryRecord(namespace="alice", content="I live in Boston.",
    ...                  time="2023-05-20T10:00:00")
    >>> r.status is RecordStatus.ACTIVE, r.time.isoformat()
    (True, '2023-05-20T10:00:00+00:00')
"""

from __future__ import annotations

import math
import re
import uuid
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from langchain_atma.errors import (
    AtmaError,
    InvalidMetadataError,
    InvalidRecordError,
    InvalidTimestampError,
    NamespaceError,
)

__all__ = [
    "Link",
    "LinkType",
    "MemoryRecord",
    "MetadataValue",
    "Provenance",
    "RECIPROCAL_LINKS",
    "RecordStatus",
    "TransitionInfo",
    "normalize_metadata",
    "parse_time",
    "validate_namespace",
]

MetadataValue = Union[str, int, float, bool]
"""A scalar a host store can keep in row metadata."""

MAX_CONTENT_CHARS = 1_000_000
"""Longest record content accepted (one million characters)."""

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@\-]{0,127}$")


class RecordStatus(str, Enum):
    """The state role of a record."""

    ACTIVE = "active"
    """The live state: what is true now."""
    SUPERSEDED = "superseded"
    """An old state replaced by a newer record; kept for historical questions."""
    TRANSITION = "transition"
    """A record describing a change itself (``from X to Y``)."""
    UNKNOWN = "unknown"
    """No state role could be assigned."""


class LinkType(str, Enum):
    """Typed links between records."""

    SUPERSEDES = "supersedes"
    SUPERSEDED_BY = "superseded_by"
    EVOLVES_FROM = "evolves_from"
    EVOLVES_TO = "evolves_to"
    SCOPED_EXCEPTION = "scoped_exception"
    COEXISTS = "coexists"
    RELATED = "related"


RECIPROCAL_LINKS: dict[LinkType, LinkType] = {
    LinkType.SUPERSEDES: LinkType.SUPERSEDED_BY,
    LinkType.SUPERSEDED_BY: LinkType.SUPERSEDES,
    LinkType.EVOLVES_FROM: LinkType.EVOLVES_TO,
    LinkType.EVOLVES_TO: LinkType.EVOLVES_FROM,
    LinkType.SCOPED_EXCEPTION: LinkType.SCOPED_EXCEPTION,
    LinkType.COEXISTS: LinkType.COEXISTS,
    LinkType.RELATED: LinkType.RELATED,
}
"""For each link type, the type the target record must hold back."""


def validate_namespace(namespace: object) -> str:
    """Check a namespace string and return it.

    Namespaces are 1-128 characters of letters, digits and ``_ . : @ -``,
    starting with a letter or digit.

    Raises:
        NamespaceError: when the namespace is missing or malformed.
    """
    if not isinstance(namespace, str) or not _NAMESPACE_RE.match(namespace):
        raise NamespaceError(
            f"invalid namespace {namespace!r}: use 1-128 characters of letters, "
            "digits and '_.:@-', starting with a letter or digit"
        )
    return namespace


def parse_time(value: object) -> datetime:
    """Normalize a time value to an aware UTC datetime.

    Args:
        value: an aware or naive ``datetime`` (naive means UTC), an ISO-8601
            string (with or without offset; ``Z`` accepted), or POSIX seconds.

    Raises:
        InvalidTimestampError: when the value is not a valid point in time.

    Example:
        >>> parse_time("2023-05-08T13:56:00+02:00").isoformat()
        '2023-05-08T11:56:00+00:00'
    """
    if isinstance(value, bool):
        raise InvalidTimestampError(f"invalid timestamp {value!r}: a bool is not a time")
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)):
        if not math.isfinite(float(value)):
            raise InvalidTimestampError(f"invalid timestamp {value!r}: not finite")
        try:
            dt = datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (OverflowError, OSError, ValueError) as exc:
            raise InvalidTimestampError(f"invalid timestamp {value!r}: {exc}") from exc
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise InvalidTimestampError("invalid timestamp '': empty string")
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidTimestampError(
                f"invalid timestamp {value!r}: expected ISO 8601, e.g. 2023-05-08T13:56:00"
            ) from exc
    else:
        raise InvalidTimestampError(
            f"invalid timestamp of type {type(value).__name__}: use datetime, ISO string or epoch"
        )
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError as exc:  # e.g. 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise InvalidTimestampError(
            f"invalid timestamp {value!r}: out of range once converted to UTC"
        ) from exc


def normalize_metadata(metadata: object) -> dict[str, MetadataValue]:
    """Validate host metadata: scalar values only; ``None`` values are dropped.

    Keys starting with ``atma_`` are reserved for the overlay's own fields.

    Raises:
        InvalidMetadataError: for non-string keys, reserved keys, nested
            containers, non-finite floats or other unsupported values.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidMetadataError(
            f"metadata must be a dict of scalars, got {type(metadata).__name__}"
        )
    out: dict[str, MetadataValue] = {}
    for key, val in metadata.items():
        if not isinstance(key, str) or not key:
            raise InvalidMetadataError(f"metadata key {key!r} must be a non-empty string")
        if key.startswith("atma_"):
            raise InvalidMetadataError(f"metadata key {key!r}: the prefix 'atma_' is reserved")
        if val is None:
            continue  # documented normalization: None means "no value"
        if isinstance(val, float) and not math.isfinite(val):
            raise InvalidMetadataError(f"metadata {key!r}: non-finite float {val!r}")
        if isinstance(val, (str, int, float, bool)):
            out[key] = val
            continue
        raise InvalidMetadataError(
            f"metadata {key!r}: value of type {type(val).__name__} cannot be stored by the "
            "host; use str, int, float or bool (serialize nested data to a JSON string)"
        )
    return out


class Link(BaseModel):
    """A typed, directed link from one record to another in the same namespace."""

    model_config = ConfigDict(frozen=True)

    type: LinkType = Field(description="The relation this record holds to the target.")
    target: str = Field(min_length=1, description="Id of the target record.")


class Provenance(BaseModel):
    """Where a record came from."""

    source_event_id: str | None = Field(
        default=None,
        description="Id of the event (turn, message) that produced the record; "
        "committing the same event twice is a no-op.",
    )
    speaker: str | None = Field(default=None, description="Who said it.")
    session_id: str | None = Field(default=None, description="Session or conversation id.")


class TransitionInfo(BaseModel):
    """What a transition record (or a transition link) says about a change."""

    from_value: str | None = Field(default=None, description="The state before the change.")
    to_value: str | None = Field(default=None, description="The state after the change.")
    transition_type: str | None = Field(
        default=None, description="Kind of change: temporal, negation, value, scope..."
    )


def _reraise_as_atma(exc: ValidationError) -> AtmaError:
    """Turn a pydantic ValidationError into the library's own exception type."""
    for err in exc.errors():
        original = (err.get("ctx") or {}).get("error")
        if isinstance(original, AtmaError):
            return original
    errors = exc.errors()
    if not errors:
        return InvalidRecordError(f"invalid record: {exc}")
    loc = ".".join(str(p) for p in errors[0]["loc"])
    return InvalidRecordError(f"invalid record field {loc or '?'}: {errors[0]['msg']}")


class MemoryRecord(BaseModel):
    """One memory: content, time, state status, typed links and host metadata.

    Example:
        >>> r = MemoryRecord(namespace="u1", content="I adopted a cat named Tom.",
        ...                  slot="pets", provenance=Provenance(source_event_id="e1"))
        >>> r.id == r.id, r.status.value
        (True, 'active')
    """

    model_config = ConfigDict(validate_assignment=True)

    id: str = Field(
        default_factory=lambda: uuid.uuid4().hex,
        min_length=1,
        max_length=256,
        description="Unique id within the host collection.",
    )
    namespace: str = Field(description="Owner namespace (user, agent, tenant). Never crossed.")
    content: str = Field(description="The memory text x.")
    time: datetime = Field(
        default_factory=lambda: datetime.now(timezone.utc),
        description="When the fact was stated (aware, UTC). Naive input is read as UTC.",
    )
    status: RecordStatus = Field(default=RecordStatus.ACTIVE, description="State role s.")
    links: list[Link] = Field(default_factory=list, description="Typed links L.")
    slot: str | None = Field(
        default=None, description="State variable the record talks about, when known."
    )
    provenance: Provenance = Field(default_factory=Provenance, description="Origin.")
    transition: TransitionInfo | None = Field(
        default=None, description="Transition metadata for records describing a change."
    )
    metadata: dict[str, MetadataValue] = Field(
        default_factory=dict, description="Host metadata z (scalars only)."
    )
    seq: int = Field(default=0, description="Write order tie-breaker (set by the bank).")
    states_fact: bool | None = Field(
        default=None,
        description="Whether the text states a fact, rather than only asking, greeting or "
        "reacting ('What got you into running?', 'Wow, congrats!'). Set once by the write "
        "path (the offline judge's text cues, no model); the read path ranks a seed that "
        "states no fact a little lower. None = not analysed (records added directly to the "
        "bank), which is never demoted.",
    )

    @field_validator("namespace", mode="before")
    @classmethod
    def _check_namespace(cls, v: object) -> str:
        return validate_namespace(v)

    @field_validator("content", mode="before")
    @classmethod
    def _check_content(cls, v: object) -> str:
        if not isinstance(v, str):
            raise InvalidRecordError(f"content must be a string, got {type(v).__name__}")
        if not v.strip():
            raise InvalidRecordError("content is empty or whitespace")
        if len(v) > MAX_CONTENT_CHARS:
            raise InvalidRecordError(
                f"content has {len(v)} characters; the limit is {MAX_CONTENT_CHARS}"
            )
        if "\x00" in v:
            raise InvalidRecordError("content contains a NUL character")
        return v

    @field_validator("time", mode="before")
    @classmethod
    def _check_time(cls, v: object) -> datetime:
        return parse_time(v)

    @field_validator("status", mode="before")
    @classmethod
    def _check_status(cls, v: object) -> RecordStatus:
        try:
            return RecordStatus(v)
        except ValueError:
            allowed = ", ".join(s.value for s in RecordStatus)
            raise InvalidRecordError(f"unknown status {v!r}; allowed: {allowed}") from None

    @field_validator("links", mode="before")
    @classmethod
    def _check_links(cls, v: object) -> list[Any]:
        if v is None:
            return []
        if not isinstance(v, (list, tuple)):
            raise InvalidRecordError("links must be a list")
        out: list[Any] = []
        for item in v:
            raw_type = (
                item.type
                if isinstance(item, Link)
                else (item.get("type") if isinstance(item, dict) else None)
            )
            try:
                LinkType(raw_type)
            except ValueError:
                allowed = ", ".join(t.value for t in LinkType)
                raise InvalidRecordError(
                    f"unknown link type {raw_type!r}; allowed: {allowed}"
                ) from None
            out.append(item)
        return out

    @field_validator("metadata", mode="before")
    @classmethod
    def _check_metadata(cls, v: object) -> dict[str, MetadataValue]:
        return normalize_metadata(v)

    @model_validator(mode="after")
    def _check_self_links(self) -> MemoryRecord:
        for link in self.links:
            if link.target == self.id:
                raise InvalidRecordError(f"record {self.id} links to itself")
        return self

    @model_validator(mode="after")
    def _check_unicode(self) -> MemoryRecord:
        """Every text must be valid Unicode (a lone surrogate cannot be stored as UTF-8)."""
        prov, trans = self.provenance, self.transition
        texts: list[tuple[str, object]] = [
            ("id", self.id),
            ("content", self.content),
            ("slot", self.slot),
            ("provenance.source_event_id", prov.source_event_id),
            ("provenance.speaker", prov.speaker),
            ("provenance.session_id", prov.session_id),
            *(("links.target", lk.target) for lk in self.links),
            *(("metadata key", k) for k in self.metadata),
            *((f"metadata.{k}", v) for k, v in self.metadata.items()),
        ]
        if trans is not None:
            texts += [
                ("transition.from_value", trans.from_value),
                ("transition.to_value", trans.to_value),
                ("transition.transition_type", trans.transition_type),
            ]
        for where, text in texts:
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise InvalidRecordError(
                        f"{where} is not valid Unicode text (lone surrogate at position "
                        f"{exc.start})"
                    ) from None
        return self

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _reraise_as_atma(exc) from exc

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryRecord:
        """Validate a dict into a record, raising the library's own exceptions."""
        if not isinstance(data, dict):
            raise InvalidRecordError(f"a record must be a mapping, got {type(data).__name__}")
        return cls(**data)

    # ------------------------------------------------------------------ helpers
    def targets(self, *types: LinkType) -> list[str]:
        """Ids this record links to, optionally only through the given types."""
        return [lk.target for lk in self.links if not types or lk.type in types]

    def has_link(self, type_: LinkType, target: str) -> bool:
        """Whether the record holds a link of ``type_`` to ``target``."""
        return any(lk.type is type_ and lk.target == target for lk in self.links)

    def with_link(self, type_: LinkType, target: str) -> MemoryRecord:
        """A copy with one more link (no duplicate is added)."""
        if self.has_link(type_, target):
            return self.model_copy(deep=True)
        copy = self.model_copy(deep=True)
        copy.links = [*copy.links, Link(type=type_, target=target)]
        return copy

    @property
    def sort_key(self) -> tuple[datetime, int, str]:
        """Chronological order: time, then write order, then id."""
        return (self.time, self.seq, self.id)
