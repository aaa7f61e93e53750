"""The LTP benchmark file format: models, loader, validators and the replay view.

An LTP-format file (see ``docs/LTP.md`` and the project's FORMAT.md) is one
JSON document: profiles, each with a chronological event stream, the state
units hidden in it, and two probes per unit. :func:`load_ltp` parses a file
into an :class:`LtpFile`, raising :class:`~langchain_atma.errors.BenchmarkFormatError`
with the JSON path of the first problems (wrong shapes, invalid UTF-8, bad
timestamps, unknown enum values, duplicate ids). :func:`validate_ltp` runs the
structural validators and returns a list of problems (empty when valid).

Replay must never see gold labels: :func:`replay_view` turns an event into a
:class:`ReplayEvent`, a separate model that only has ``event_id``,
``timestamp``, ``speaker`` and ``text``.

Timestamps are naive datetimes (ISO 8601 without zone). A timestamp given with
an offset is converted to UTC and stored naive.

Example:
    >>> f = LtpFile.model_validate({"name": "ltp", "version": 1, "profiles": []})
    >>> validate_ltp(f, expected_profiles=1)
    ['$.profiles: expected 1 profiles, found 0']
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
)

from langchain_atma.benchmarks.locomo import answer_tokens
from langchain_atma.errors import BenchmarkFormatError, ConfigError, InvalidTimestampError
from langchain_atma.records import parse_time

__all__ = [
    "EventKind",
    "LtpEvent",
    "LtpFile",
    "LtpProbe",
    "LtpProfile",
    "LtpSource",
    "LtpUnit",
    "ProbeKind",
    "ProbeView",
    "ReplayEvent",
    "UpdateType",
    "dump_ltp",
    "load_ltp",
    "select_profiles",
    "replay_stream",
    "replay_view",
    "validate_ltp",
]

_MAX_REPORTED_ERRORS = 5


class EventKind(str, Enum):
    """Gold kind of an event (never visible to the replaying runner)."""

    DIALOG = "dialog"
    CUE_OLD = "cue_old"
    CUE_NEW = "cue_new"
    TRANSITION = "transition"


class UpdateType(str, Enum):
    """How the new cue of a unit relates to the old one."""

    TEMPORAL = "temporal"
    NEGATION = "negation"
    VALUE = "value"
    SCOPE = "scope"


class ProbeView(str, Enum):
    """The state a probe asks for."""

    CURRENT = "current"
    HISTORICAL = "historical"


class ProbeKind(str, Enum):
    """Probe family: ``conflict`` goes with current, ``fact`` with historical."""

    CONFLICT = "conflict"
    FACT = "fact"


_VIEW_KIND = {ProbeView.CURRENT: ProbeKind.CONFLICT, ProbeView.HISTORICAL: ProbeKind.FACT}


def _to_naive(value: object) -> datetime:
    if isinstance(value, bool) or not isinstance(value, (str, datetime)):
        raise ValueError(
            f"invalid timestamp {value!r}: expected an ISO 8601 string like 2023-05-08T13:56:00"
        )
    try:
        return parse_time(value).astimezone(timezone.utc).replace(tzinfo=None)
    except InvalidTimestampError as exc:
        raise ValueError(str(exc)) from exc


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class LtpSource(_Part):
    """Where a profile's conversation comes from."""

    dataset: str | None = Field(default=None, description="Dataset name, e.g. 'locomo10'.")
    sample_id: str | None = Field(default=None, description="Conversation id, e.g. 'conv-26'.")


class LtpEvent(_Part):
    """One event of a profile's stream, with its gold labels."""

    event_id: str = Field(min_length=1, description="Unique id within the profile.")
    timestamp: datetime = Field(description="ISO 8601 without zone.")
    speaker: str = Field(min_length=1, description="Who said it.")
    text: str = Field(min_length=1, description="What was said.")
    kind: EventKind = Field(description="Gold kind: dialog, cue_old, cue_new or transition.")
    unit_id: str | None = Field(default=None, description="Gold unit of a cue/transition.")
    dia_id: str | None = Field(default=None, description="LoCoMo dialogue id of a dialog turn.")

    @field_validator("timestamp", mode="before")
    @classmethod
    def check_timestamp(cls, value: object) -> datetime:
        """Parse an ISO 8601 timestamp; an offset is converted to naive UTC."""
        return _to_naive(value)

    @field_serializer("timestamp")
    def dump_timestamp(self, value: datetime) -> str:
        """Write the timestamp as ISO 8601 without zone."""
        return value.isoformat()


class LtpUnit(_Part):
    """One state unit: an old cue, a new cue and optionally a transition."""

    unit_id: str = Field(min_length=1, description="Unique unit id.")
    slot: str = Field(min_length=1, description="State variable, e.g. 'location.city'.")
    update_type: UpdateType = Field(description="temporal, negation, value or scope.")
    old_value: str = Field(min_length=1, description="Value stated by the old cue.")
    current_value: str = Field(min_length=1, description="Value stated by the new cue.")
    old_event_id: str = Field(min_length=1, description="Event id of the old cue.")
    new_event_id: str = Field(min_length=1, description="Event id of the new cue.")
    transition_event_id: str | None = Field(
        default=None, description="Event id of the transition record, if any."
    )


class LtpProbe(_Part):
    """One question about a unit, asked after the whole stream is replayed."""

    probe_id: str = Field(min_length=1, description="Unique probe id.")
    unit_id: str = Field(min_length=1, description="The unit asked about.")
    view: ProbeView = Field(description="current or historical.")
    kind: ProbeKind = Field(description="conflict (current) or fact (historical).")
    question: str = Field(min_length=1, description="The question text.")
    target: str = Field(min_length=1, description="Value the answer must give.")
    alternate: str = Field(min_length=1, description="Value of the other state.")


class LtpProfile(_Part):
    """One profile: a subject, its event stream, units and probes."""

    profile_id: str = Field(min_length=1, description="Unique profile id.")
    source: LtpSource | None = Field(default=None, description="Source conversation.")
    subject: str = Field(min_length=1, description="The person the probes ask about.")
    events: tuple[LtpEvent, ...] = Field(description="Chronological replay stream.")
    units: tuple[LtpUnit, ...] = Field(description="State units hidden in the stream.")
    probes: tuple[LtpProbe, ...] = Field(description="Probes, two per unit.")


class LtpFile(BaseModel):
    """A whole LTP-format file. Extra top-level keys (e.g. ``notes``) are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = Field(min_length=1, description="Benchmark name, e.g. 'ltp'.")
    version: int = Field(ge=1, description="Format version (1).")
    profiles: tuple[LtpProfile, ...] = Field(description="The profiles.")


class ReplayEvent(BaseModel):
    """What a runner may see while replaying: no kind, unit or gold fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_id: str = Field(description="Event id; use it as the record's source event id.")
    timestamp: datetime = Field(description="Event time (naive, ISO 8601 without zone).")
    speaker: str = Field(description="Who said it.")
    text: str = Field(description="What was said.")


def replay_view(event: LtpEvent) -> ReplayEvent:
    """The label-free view of one event."""
    return ReplayEvent(
        event_id=event.event_id, timestamp=event.timestamp, speaker=event.speaker, text=event.text
    )


def replay_stream(profile: LtpProfile) -> list[ReplayEvent]:
    """The label-free replay stream of a profile, in order."""
    return [replay_view(e) for e in profile.events]


# --------------------------------------------------------------------------- loading


def _json_path(loc: Iterable[int | str]) -> str:
    out = "$"
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _duplicate_errors(data: LtpFile) -> list[str]:
    errors: list[str] = []

    def check(items: Iterable[tuple[str, str]], what: str) -> None:
        first: dict[str, str] = {}
        for ident, path in items:
            if ident in first:
                errors.append(f"{path}: duplicate {what} {ident!r} (first at {first[ident]})")
            else:
                first[ident] = path

    profiles = data.profiles
    check(((p.profile_id, f"$.profiles[{i}].profile_id") for i, p in enumerate(profiles)), "id")
    for i, p in enumerate(profiles):
        check(
            ((e.event_id, f"$.profiles[{i}].events[{j}].event_id") for j, e in enumerate(p.events)),
            "event id",
        )
    check(
        (
            (u.unit_id, f"$.profiles[{i}].units[{j}].unit_id")
            for i, p in enumerate(profiles)
            for j, u in enumerate(p.units)
        ),
        "unit id",
    )
    check(
        (
            (q.probe_id, f"$.profiles[{i}].probes[{j}].probe_id")
            for i, p in enumerate(profiles)
            for j, q in enumerate(p.probes)
        ),
        "probe id",
    )
    return errors


def load_ltp(path: str | Path) -> LtpFile:
    """Load and shape-check an LTP-format file.

    Raises:
        BenchmarkFormatError: for a missing or unreadable file, invalid UTF-8 or
            JSON (including JSON nested too deeply to parse), wrong shapes, bad
            timestamps, unknown enum values or duplicate ids; the message names
            the JSON path of each (first few) problem.
    """
    file = Path(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError as exc:
        raise BenchmarkFormatError(f"LTP file not found: {file}") from exc
    except OSError as exc:  # a directory, no permission...
        raise BenchmarkFormatError(f"cannot read LTP file {file}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BenchmarkFormatError(
            f"{file}: not valid UTF-8 at byte {exc.start} ({exc.reason})"
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(
            f"{file}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError:
        raise BenchmarkFormatError(f"{file}: JSON nested too deeply") from None
    return _parse(data, str(file))


def _parse(data: Any, origin: str) -> LtpFile:
    try:
        parsed = LtpFile.model_validate(data)
    except ValidationError as exc:
        items = exc.errors()
        lines = [
            f"{_json_path(e['loc'])}: {e['msg']}"
            + (f" (got {e['input']!r})" if e["type"] == "enum" else "")
            for e in items[:_MAX_REPORTED_ERRORS]
        ]
        more = len(items) - len(lines)
        suffix = f"\n  ... and {more} more" if more > 0 else ""
        raise BenchmarkFormatError(
            f"{origin}: not a valid LTP file:\n  " + "\n  ".join(lines) + suffix
        ) from None
    dupes = _duplicate_errors(parsed)
    if dupes:
        shown = dupes[:_MAX_REPORTED_ERRORS]
        raise BenchmarkFormatError(f"{origin}: duplicate ids:\n  " + "\n  ".join(shown))
    return parsed


def dump_ltp(data: LtpFile) -> str:
    """Serialize an :class:`LtpFile` to deterministic JSON text (UTF-8, indented)."""
    payload = data.model_dump(mode="json")
    return json.dumps(payload, ensure_ascii=False, indent=1) + "\n"


# --------------------------------------------------------------------------- validators


def _key(value: str) -> tuple[str, ...]:
    return tuple(answer_tokens(value))


def _norm(value: str) -> str:
    return " ".join(value.casefold().split())


def _leaks(value: str, question: str) -> bool:
    needle = answer_tokens(value, stem=False)
    hay = answer_tokens(question, stem=False)
    if not needle:
        return False
    n = len(needle)
    return any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def validate_ltp(
    data: LtpFile,
    *,
    strict: bool = True,
    expected_profiles: int | None = None,
    expected_units: int | None = None,
) -> list[str]:
    """Run the structural validators; return the problems found (empty = valid).

    Always checked (what the runner and scorers rely on): profile count and
    units per profile when expected values are given; unique profile, event
    (per profile), unit and probe ids; each unit's old/new (and transition)
    event exists, has the right kind and points back to the unit; every cue or
    transition event names a unit of its profile that uses it; the old cue
    comes before the new cue in the stream; exactly two probes per unit, one
    historical/fact and one current/conflict; gold consistency (historical
    target = old value and alternate = current value, current probe reversed;
    old and current values differ after normalization and have tokens).

    With ``strict=True`` also: events are chronological (timestamps never
    decrease); the old cue is strictly earlier in time than the new cue; a
    transition event lies after the old cue and before the new cue; dialog
    events carry no unit id; cues are spoken by the profile subject; no
    leakage (a probe's target value does not appear in its question).

    Args:
        data: the parsed file.
        strict: include the strict rules.
        expected_profiles: required number of profiles, if any.
        expected_units: required number of units per profile, if any.
    """
    problems: list[str] = []
    add = problems.append
    if expected_profiles is not None and len(data.profiles) != expected_profiles:
        add(f"$.profiles: expected {expected_profiles} profiles, found {len(data.profiles)}")
    problems.extend(_duplicate_errors(data))
    for i, profile in enumerate(data.profiles):
        _validate_profile(profile, f"$.profiles[{i}]", strict, expected_units, add)
    return problems


@dataclass(frozen=True)
class _EventIndex:
    """A profile's events by id, and their positions in the stream."""

    events: dict[str, LtpEvent]
    position: dict[str, int]


def _validate_profile(
    profile: LtpProfile, where: str, strict: bool, expected_units: int | None, add: Any
) -> None:
    pid = profile.profile_id
    if expected_units is not None and len(profile.units) != expected_units:
        count = len(profile.units)
        add(f"{where}.units: profile {pid} has {count} units, expected {expected_units}")
    if strict:
        _check_chronology(profile, where, add)
    index = _EventIndex(
        {e.event_id: e for e in profile.events},
        {e.event_id: n for n, e in enumerate(profile.events)},
    )
    used_by: dict[str, str] = {}
    for j, unit in enumerate(profile.units):
        _check_unit(profile, index, unit, f"{where}.units[{j}]", strict, used_by, add)
    _check_cue_events(profile, where, strict, used_by, add)
    _check_probes(profile, where, strict, add)


def _check_chronology(profile: LtpProfile, where: str, add: Any) -> None:
    for n in range(1, len(profile.events)):
        if profile.events[n].timestamp < profile.events[n - 1].timestamp:
            e = profile.events[n]
            add(
                f"{where}.events[{n}]: event {e.event_id} at {e.timestamp.isoformat()} is "
                f"earlier than the event before it (stream not chronological)"
            )


def _check_unit(
    profile: LtpProfile,
    index: _EventIndex,
    unit: LtpUnit,
    uw: str,
    strict: bool,
    used_by: dict[str, str],
    add: Any,
) -> None:
    """A unit's cue references, their order in the stream, and its two values."""
    events = index.events
    refs = [
        ("old_event_id", unit.old_event_id, EventKind.CUE_OLD),
        ("new_event_id", unit.new_event_id, EventKind.CUE_NEW),
    ]
    if unit.transition_event_id is not None:
        refs.append(("transition_event_id", unit.transition_event_id, EventKind.TRANSITION))
    for field, event_id, kind in refs:
        used_by[event_id] = unit.unit_id
        event = events.get(event_id)
        if event is None:
            add(f"{uw}.{field}: unit {unit.unit_id} references missing event {event_id!r}")
            continue
        if event.kind is not kind:
            add(
                f"{uw}.{field}: event {event_id} has kind {event.kind.value!r}, "
                f"expected {kind.value!r}"
            )
        if event.unit_id != unit.unit_id:
            add(
                f"{uw}.{field}: event {event_id} has unit_id {event.unit_id!r}, "
                f"expected {unit.unit_id!r}"
            )
        if strict and event.speaker != profile.subject:
            add(
                f"{uw}.{field}: cue {event_id} is spoken by {event.speaker!r}, "
                f"not the subject {profile.subject!r}"
            )
    _check_cue_order(index, unit, uw, strict, add)
    if not _key(unit.old_value) or not _key(unit.current_value):
        add(f"{uw}: unit {unit.unit_id} has a value with no scorable tokens")
    elif _key(unit.old_value) == _key(unit.current_value):
        add(f"{uw}: unit {unit.unit_id} old and current values are the same after normalization")


def _check_cue_order(index: _EventIndex, unit: LtpUnit, uw: str, strict: bool, add: Any) -> None:
    events, position = index.events, index.position
    old = events.get(unit.old_event_id)
    new = events.get(unit.new_event_id)
    if old is None or new is None:
        return
    if position[old.event_id] >= position[new.event_id]:
        add(f"{uw}: unit {unit.unit_id} old cue does not precede its new cue in the stream")
    if strict and old.timestamp >= new.timestamp:
        add(f"{uw}: unit {unit.unit_id} old cue is not earlier in time than its new cue")
    tid = unit.transition_event_id
    if strict and tid is not None and tid in events:
        if not position[old.event_id] < position[tid] < position[new.event_id]:
            add(f"{uw}: unit {unit.unit_id} transition is not between its old and new cue")


def _check_cue_events(
    profile: LtpProfile, where: str, strict: bool, used_by: dict[str, str], add: Any
) -> None:
    """Every cue event names a unit of the profile that references it."""
    units = {u.unit_id for u in profile.units}
    for n, event in enumerate(profile.events):
        ew = f"{where}.events[{n}]"
        if event.kind is EventKind.DIALOG:
            if strict and event.unit_id is not None:
                add(f"{ew}: dialog event {event.event_id} carries unit_id {event.unit_id!r}")
            continue
        if event.unit_id is None or event.unit_id not in units:
            add(
                f"{ew}: {event.kind.value} event {event.event_id} names unknown unit "
                f"{event.unit_id!r}"
            )
        elif used_by.get(event.event_id) != event.unit_id:
            add(
                f"{ew}: {event.kind.value} event {event.event_id} is not referenced by its unit "
                f"{event.unit_id}"
            )


def _check_probes(profile: LtpProfile, where: str, strict: bool, add: Any) -> None:
    """Each probe's unit, kind, target and alternate; one probe per view and unit."""
    units = {u.unit_id: u for u in profile.units}
    probes_by_unit: dict[str, list[tuple[int, LtpProbe]]] = {}
    for j, probe in enumerate(profile.probes):
        pw = f"{where}.probes[{j}]"
        if probe.unit_id not in units:
            add(f"{pw}: probe {probe.probe_id} names unknown unit {probe.unit_id!r}")
            continue
        probes_by_unit.setdefault(probe.unit_id, []).append((j, probe))
        if _VIEW_KIND[probe.view] is not probe.kind:
            add(
                f"{pw}: probe {probe.probe_id} view {probe.view.value!r} needs kind "
                f"{_VIEW_KIND[probe.view].value!r}, got {probe.kind.value!r}"
            )
        unit = units[probe.unit_id]
        if probe.view is ProbeView.HISTORICAL:
            want_target, want_alt = unit.old_value, unit.current_value
        else:
            want_target, want_alt = unit.current_value, unit.old_value
        if _norm(probe.target) != _norm(want_target) or _norm(probe.alternate) != _norm(want_alt):
            add(
                f"{pw}: probe {probe.probe_id} ({probe.view.value}) has target/alternate "
                f"{probe.target!r}/{probe.alternate!r}, expected {want_target!r}/{want_alt!r}"
            )
        if strict and _leaks(probe.target, probe.question):
            add(f"{pw}: probe {probe.probe_id} question contains its target {probe.target!r}")
    for j, unit in enumerate(profile.units):
        got = probes_by_unit.get(unit.unit_id, [])
        views = Counter(p.view for _, p in got)
        if len(got) != 2 or views[ProbeView.HISTORICAL] != 1 or views[ProbeView.CURRENT] != 1:
            add(
                f"{where}.units[{j}]: unit {unit.unit_id} needs exactly one historical and one "
                f"current probe, found {len(got)} ({dict((k.value, v) for k, v in views.items())})"
            )


def select_profiles(ltp: LtpFile, profiles: Sequence[str] | int | None) -> list[LtpProfile]:
    """The profiles a benchmark run asks for.

    Args:
        ltp: the loaded file.
        profiles: ``None`` = all; an int = that many leading profiles; else ids.

    Raises:
        ConfigError: for a count below 1 or an id not in the file.
    """
    if profiles is None:
        return list(ltp.profiles)
    if isinstance(profiles, int):
        if profiles < 1:
            raise ConfigError("--profiles must be >= 1")
        return list(ltp.profiles[:profiles])
    wanted = list(profiles)
    by_id = {p.profile_id: p for p in ltp.profiles}
    missing = [p for p in wanted if p not in by_id]
    if missing:
        raise ConfigError(f"profile(s) not in the file: {missing}")
    return [by_id[p] for p in wanted]
