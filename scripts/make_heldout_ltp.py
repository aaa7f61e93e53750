#!/usr/bin/env python
"""Build a held-out LTP-format benchmark file from LoCoMo conversations and unit specs.

The unit specs (``benchmarks/heldout/units_*.json``) are hand-written cue sets whose
phrasing is independent of the project's own LTP generator; this script only
weaves them into LoCoMo conversations and writes the result in the LTP format
(see FORMAT.md): one profile per conversation, bound to one speaker (the
subject), with the conversation's turns as ``dialog`` events and each unit's
old cue, optional transition and new cue inserted as turns spoken by the
subject.

Placement (positions are quantiles of the conversation's turns, i.e. of its
timestamp distribution): old cue after a random turn in the 0.12-0.42 band,
transition in the 0.44-0.56 band, new cue in the 0.58-0.88 band. A cue's
timestamp is the preceding turn's plus 30 seconds, so the stream stays
chronological. Everything random is drawn from ``--seed``.

Unit spec fields: ``slot``, ``update_type`` (temporal|negation|value|scope),
``old_text``, ``new_text``, ``transition_text`` (or null),
``historical_question``, ``current_question``, ``old_value``,
``current_value``. ``{S}`` in questions (and cue texts) becomes the subject's
first name; ``{F}`` in cue texts becomes the other speaker's first name.

Usage:
    python scripts/make_heldout_ltp.py --locomo ../shared/data/locomo/locomo10.json \
        --units benchmarks/heldout/units_dev.json --out /tmp/heldout_dev.json \
        [--profiles 3] [--units-per-profile 20] [--seed 0] [--name NAME]

Only the standard library is used.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import string
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

UPDATE_TYPES = ("temporal", "negation", "value", "scope")
REQUIRED_TEXT_FIELDS = (
    "slot",
    "update_type",
    "old_text",
    "new_text",
    "historical_question",
    "current_question",
    "old_value",
    "current_value",
)
OLD_BAND = (0.12, 0.42)
TRANSITION_BAND = (0.44, 0.56)
NEW_BAND = (0.58, 0.88)
CUE_DELAY = timedelta(seconds=30)
CUE_STEP = timedelta(seconds=5)
DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
_ARTICLES = {"a", "an", "the"}
_FILLER = {"and", "of", "in", "on", "at", "to"}
_PUNCT = str.maketrans("", "", string.punctuation)


class UnitSpecError(ValueError):
    """A unit spec file or a LoCoMo file is malformed."""


@dataclass(frozen=True)
class UnitSpec:
    """One hand-written state unit (cue texts, questions and gold values)."""

    index: int
    slot: str
    update_type: str
    old_text: str
    new_text: str
    transition_text: str | None
    historical_question: str
    current_question: str
    old_value: str
    current_value: str


@dataclass(frozen=True)
class Turn:
    """One LoCoMo dialogue turn with its synthesized timestamp."""

    speaker: str
    text: str
    dia_id: str | None
    timestamp: datetime


# --------------------------------------------------------------------------- unit specs


def norm_tokens(text: str) -> list[str]:
    """Lowercase, strip punctuation and articles, split (LoCoMo-style, no stemming)."""
    words = text.casefold().translate(_PUNCT).split()
    return [w for w in words if w not in _ARTICLES]


def _contains_run(needle: list[str], hay: list[str]) -> bool:
    n = len(needle)
    return bool(needle) and any(hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def _check_spec(raw: dict[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    for key in REQUIRED_TEXT_FIELDS:
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{where}.{key}: expected a non-empty string")
    trans = raw.get("transition_text")
    if trans is not None and (not isinstance(trans, str) or not trans.strip()):
        problems.append(f"{where}.transition_text: expected null or a non-empty string")
    if problems:
        return problems
    if raw["update_type"] not in UPDATE_TYPES:
        problems.append(f"{where}.update_type: {raw['update_type']!r} not in {UPDATE_TYPES}")
    old, cur = raw["old_value"], raw["current_value"]
    for key, text, value in (
        ("old_text", raw["old_text"], old),
        ("new_text", raw["new_text"], cur),
    ):
        if value.casefold() not in text.casefold():
            problems.append(f"{where}.{key}: does not contain its value {value!r}")
    old_tok, cur_tok = norm_tokens(old), norm_tokens(cur)
    if not old_tok or not cur_tok:
        problems.append(f"{where}: a value has no scorable tokens")
    elif set(old_tok) & set(cur_tok):
        problems.append(f"{where}: old and current values share tokens ({old!r} / {cur!r})")
    if old.casefold() in cur.casefold() or cur.casefold() in old.casefold():
        problems.append(f"{where}: one value is a substring of the other")
    for key in ("historical_question", "current_question"):
        question = raw[key]
        if "{S}" not in question:
            problems.append(f"{where}.{key}: no {{S}} placeholder")
        hay = norm_tokens(question.replace("{S}", " "))
        for value in (old, cur):
            if _contains_run(norm_tokens(value), hay):
                problems.append(f"{where}.{key}: question contains the value {value!r}")
    return problems


def load_units(path: Path) -> list[UnitSpec]:
    """Load and check a unit spec file.

    Raises:
        UnitSpecError: when the file is not a list of valid unit specs, or two
            units share a slot.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnitSpecError(f"{path}: cannot read unit specs: {exc}") from exc
    if not isinstance(data, list) or not data:
        raise UnitSpecError(f"{path}: expected a non-empty JSON list of unit specs")
    problems: list[str] = []
    specs: list[UnitSpec] = []
    for i, raw in enumerate(data):
        where = f"{path.name}[{i}]"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected an object")
            continue
        found = _check_spec(raw, where)
        problems.extend(found)
        if not found:
            specs.append(
                UnitSpec(
                    index=i,
                    slot=raw["slot"],
                    update_type=raw["update_type"],
                    old_text=raw["old_text"],
                    new_text=raw["new_text"],
                    transition_text=raw.get("transition_text"),
                    historical_question=raw["historical_question"],
                    current_question=raw["current_question"],
                    old_value=raw["old_value"],
                    current_value=raw["current_value"],
                )
            )
    slots = Counter(s.slot for s in specs)
    problems.extend(f"{path.name}: slot {k!r} used {n} times" for k, n in slots.items() if n > 1)
    if problems:
        raise UnitSpecError(f"{path}: invalid unit specs:\n  " + "\n  ".join(problems))
    return specs


def value_overlaps(specs: list[UnitSpec]) -> list[str]:
    """Warnings for values of different units that share a normalized token."""
    owners: dict[str, list[str]] = {}
    for spec in specs:
        for value in (spec.old_value, spec.current_value):
            for tok in set(norm_tokens(value)) - _FILLER:
                owners.setdefault(tok, []).append(f"{spec.slot}:{value}")
    return [f"token {t!r} in {', '.join(v)}" for t, v in sorted(owners.items()) if len(v) > 1]


# --------------------------------------------------------------------------- LoCoMo


def parse_session_time(text: str) -> datetime:
    """Parse a LoCoMo session stamp like ``1:56 pm on 8 May, 2023``."""
    cleaned = " ".join(text.split())
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt)
        except ValueError:
            continue
    raise UnitSpecError(f"unrecognized LoCoMo session time {text!r}")


def conversation_turns(conversation: dict[str, Any], rng: random.Random) -> list[Turn]:
    """The conversation's turns in order, each stamped session start + a few minutes."""
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conversation[key], list)
    )
    turns: list[Turn] = []
    previous: datetime | None = None
    for number, key in sessions:
        stamp = conversation.get(f"session_{number}_date_time")
        if not isinstance(stamp, str):
            raise UnitSpecError(f"{key}: missing session_{number}_date_time")
        clock = parse_session_time(stamp)
        for turn in conversation[key]:
            text = str(turn.get("text", "")).strip()
            speaker = str(turn.get("speaker", "")).strip()
            if not text or not speaker:
                continue
            if previous is not None and clock <= previous:
                clock = previous + timedelta(minutes=1)
            dia_id = turn.get("dia_id")
            turns.append(Turn(speaker, text, str(dia_id) if dia_id else None, clock))
            previous = clock
            clock = clock + timedelta(minutes=rng.randint(1, 4))
    return turns


# --------------------------------------------------------------------------- assembly


def interleaved_order(specs: list[UnitSpec], rng: random.Random) -> list[int]:
    """A shuffled order of spec indices with update types spread evenly through it."""
    groups: dict[str, list[int]] = {}
    for spec in specs:
        groups.setdefault(spec.update_type, []).append(spec.index)
    keyed: list[tuple[float, float, int]] = []
    for members in groups.values():
        rng.shuffle(members)
        for rank, idx in enumerate(members):
            keyed.append(((rank + rng.random()) / len(members), rng.random(), idx))
    return [idx for _, _, idx in sorted(keyed)]


def assign_units(
    specs: list[UnitSpec], profiles: int, per_profile: int, rng: random.Random
) -> list[list[int]]:
    """Deal spec indices to profiles: distinct within a profile, reused across only when needed."""
    stream: list[int] = []
    out: list[list[int]] = []
    for _ in range(profiles):
        chosen: list[int] = []
        skipped: list[int] = []
        while len(chosen) < per_profile:
            if not stream:
                stream = interleaved_order(specs, rng)
            idx = stream.pop(0)
            (skipped if idx in chosen else chosen).append(idx)
        stream = skipped + stream
        out.append(chosen)
    return out


def band_positions(
    n_turns: int, band: tuple[float, float], count: int, rng: random.Random
) -> list[int]:
    """``count`` turn indices (cue goes right after that turn) inside a quantile band."""
    low = max(0, math.ceil(band[0] * n_turns))
    high = min(n_turns - 2, math.floor(band[1] * n_turns))
    if high < low:
        raise UnitSpecError(f"conversation too short ({n_turns} turns) to place cues")
    pool = list(range(low, high + 1))
    if count <= len(pool):
        return rng.sample(pool, count)
    return [rng.choice(pool) for _ in range(count)]


def first_name(name: str) -> str:
    """The first word of a speaker name."""
    return name.split()[0] if name.split() else name


def fill(text: str, subject: str, friend: str) -> str:
    """Replace the ``{S}`` / ``{F}`` placeholders."""
    return text.replace("{S}", first_name(subject)).replace("{F}", first_name(friend))


def build_profile(
    pnum: int,
    sample: dict[str, Any],
    specs: list[UnitSpec],
    seed: int,
) -> dict[str, Any]:
    """One LTP profile: the sample's turns with the given units' cues woven in."""
    pid = f"p{pnum:03d}"
    rng = random.Random(f"heldout-{seed}-{pid}")
    conversation = sample["conversation"]
    speaker_a, speaker_b = conversation["speaker_a"], conversation["speaker_b"]
    subject, friend = (speaker_a, speaker_b) if pnum % 2 == 0 else (speaker_b, speaker_a)
    turns = conversation_turns(conversation, rng)
    n = len(turns)

    old_pos = band_positions(n, OLD_BAND, len(specs), rng)
    new_pos = band_positions(n, NEW_BAND, len(specs), rng)
    with_transition = [j for j, s in enumerate(specs) if s.transition_text]
    trans_pos = dict(
        zip(
            with_transition,
            band_positions(n, TRANSITION_BAND, len(with_transition), rng),
            strict=True,
        )
    )

    # (turn index, kind, unit number, text); cues sharing a gap keep unit order.
    inserts: list[tuple[int, str, int, str]] = []
    for j, spec in enumerate(specs):
        inserts.append((old_pos[j], "cue_old", j, spec.old_text))
        inserts.append((new_pos[j], "cue_new", j, spec.new_text))
        if j in trans_pos and spec.transition_text:
            inserts.append((trans_pos[j], "transition", j, spec.transition_text))
    by_gap: dict[int, list[tuple[str, int, str]]] = {}
    for pos, kind, j, text in sorted(inserts):
        by_gap.setdefault(pos, []).append((kind, j, text))

    unit_ids = [f"{pid}-u{j + 1:02d}" for j in range(len(specs))]
    events: list[dict[str, Any]] = []
    cue_ids: dict[tuple[int, str], str] = {}

    def add(
        ts: datetime, speaker: str, text: str, kind: str, unit: str | None, dia: str | None
    ) -> str:
        eid = f"{pid}-e{len(events) + 1:05d}"
        events.append(
            {
                "event_id": eid,
                "timestamp": ts.isoformat(),
                "speaker": speaker,
                "text": text,
                "kind": kind,
                "unit_id": unit,
                "dia_id": dia,
            }
        )
        return eid

    for k, turn in enumerate(turns):
        add(turn.timestamp, turn.speaker, turn.text, "dialog", None, turn.dia_id)
        for step, (kind, j, text) in enumerate(by_gap.get(k, [])):
            ts = turn.timestamp + CUE_DELAY + step * CUE_STEP
            cue_ids[(j, kind)] = add(
                ts, subject, fill(text, subject, friend), kind, unit_ids[j], None
            )

    units: list[dict[str, Any]] = []
    probes: list[dict[str, Any]] = []
    name = first_name(subject)
    for j, spec in enumerate(specs):
        uid = unit_ids[j]
        units.append(
            {
                "unit_id": uid,
                "slot": spec.slot,
                "update_type": spec.update_type,
                "old_value": spec.old_value,
                "current_value": spec.current_value,
                "old_event_id": cue_ids[(j, "cue_old")],
                "new_event_id": cue_ids[(j, "cue_new")],
                "transition_event_id": cue_ids.get((j, "transition")),
            }
        )
        probes.append(
            {
                "probe_id": f"{uid}-historical",
                "unit_id": uid,
                "view": "historical",
                "kind": "fact",
                "question": spec.historical_question.replace("{S}", name),
                "target": spec.old_value,
                "alternate": spec.current_value,
            }
        )
        probes.append(
            {
                "probe_id": f"{uid}-current",
                "unit_id": uid,
                "view": "current",
                "kind": "conflict",
                "question": spec.current_question.replace("{S}", name),
                "target": spec.current_value,
                "alternate": spec.old_value,
            }
        )
    return {
        "profile_id": pid,
        "source": {"dataset": "locomo10", "sample_id": sample.get("sample_id")},
        "subject": subject,
        "events": events,
        "units": units,
        "probes": probes,
    }


def build(
    locomo: Path,
    units_path: Path,
    *,
    profiles: int,
    units_per_profile: int,
    seed: int,
    name: str,
) -> dict[str, Any]:
    """Build the whole LTP document.

    Raises:
        UnitSpecError: for malformed inputs or impossible sizes.
    """
    specs = load_units(units_path)
    try:
        samples = json.loads(locomo.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnitSpecError(f"{locomo}: cannot read LoCoMo file: {exc}") from exc
    if not isinstance(samples, list):
        raise UnitSpecError(f"{locomo}: expected a list of samples")
    if not 1 <= profiles <= len(samples):
        raise UnitSpecError(f"--profiles must be 1..{len(samples)}, got {profiles}")
    if not 1 <= units_per_profile <= len(specs):
        raise UnitSpecError(f"--units-per-profile must be 1..{len(specs)}, got {units_per_profile}")
    rng = random.Random(f"heldout-assign-{seed}")
    assignment = assign_units(specs, profiles, units_per_profile, rng)
    built = [
        build_profile(i, samples[i], [specs[k] for k in assignment[i]], seed)
        for i in range(profiles)
    ]
    return {
        "name": name,
        "version": 1,
        "notes": {
            "generator": "scripts/make_heldout_ltp.py",
            "units_file": units_path.name,
            "seed": seed,
            "units_per_profile": units_per_profile,
            "assignment": {p["profile_id"]: assignment[i] for i, p in enumerate(built)},
        },
        "profiles": built,
    }


def summarize(doc: dict[str, Any]) -> str:
    """A short human-readable summary of a built document."""
    profiles = doc["profiles"]
    kinds = Counter(e["kind"] for p in profiles for e in p["events"])
    types = Counter(u["update_type"] for p in profiles for u in p["units"])
    distinct = {i for ids in doc["notes"]["assignment"].values() for i in ids}
    lines = [
        f"{doc['name']}: {len(profiles)} profiles, "
        f"{sum(len(p['units']) for p in profiles)} units ({len(distinct)} distinct specs), "
        f"{sum(len(p['probes']) for p in profiles)} probes",
        "events: " + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())),
        "update types: " + ", ".join(f"{k}={v}" for k, v in sorted(types.items())),
    ]
    for p in profiles:
        lines.append(
            f"  {p['profile_id']} {p['source']['sample_id']} subject={p['subject']} "
            f"events={len(p['events'])} units={len(p['units'])}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, required=True, help="locomo10.json")
    parser.add_argument("--units", type=Path, required=True, help="unit spec JSON file")
    parser.add_argument("--out", type=Path, required=True, help="output LTP JSON file")
    parser.add_argument("--profiles", type=int, default=3, help="profiles (LoCoMo samples)")
    parser.add_argument("--units-per-profile", type=int, default=20, help="units per profile")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--name", default=None, help="benchmark name (default from --units)")
    args = parser.parse_args(argv)
    stem = args.units.stem
    name = (
        args.name or f"ltp-heldout-{stem[len('units_') :] if stem.startswith('units_') else stem}"
    )
    try:
        doc = build(
            args.locomo,
            args.units,
            profiles=args.profiles,
            units_per_profile=args.units_per_profile,
            seed=args.seed,
            name=name,
        )
    except UnitSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in value_overlaps(load_units(args.units)):
        print(f"warning: values share a {warning}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(summarize(doc))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
