"""LoCoMo loader and the deterministic LoCoMo scorers.

The LoCoMo release (``locomo10.json``, CC BY-NC 4.0) is read from wherever the
user keeps it; nothing from it is copied into this package.

Loader
------
:func:`load_locomo` returns one :class:`LocomoSample` per conversation with its
two speakers, its sessions (sorted by their ``session_N_date_time``) and its QA
items. Each turn gets a timestamp: the session start parsed from strings like
``"1:56 pm on 8 May, 2023"`` plus :data:`TURN_SPACING_SECONDS` per turn, kept
strictly increasing across the whole conversation. A turn with a
``blip_caption`` has ``" (shares a photo: CAPTION)"`` appended to its text.
QA answers are normalized to ``str`` (a few are integers); adversarial items
(category 5) keep their trap answer in ``adversarial_answer`` and have
``answer=None`` when the file gives none. Evidence ids are parsed robustly from
malformed strings (``"D8:6; D9:17"`` gives two ids, ``"D:11:26"`` gives
``D11:26``, a bare ``"D"`` gives none).

Scorers (LoCoMo conventions)
----------------------------
* :func:`normalize_answer`: lowercase, drop punctuation, drop the articles
  a/an/the, collapse whitespace. :func:`answer_tokens` also Porter-stems.
* :func:`f1_score`: token F1 over stemmed tokens.
* :func:`multi_hop_f1` (category 1): split prediction and gold on commas; for
  each gold part the best F1 over predicted parts; the mean over gold parts.
* category 3 golds are cut at the first ``;``.
* :func:`is_abstention` (category 5): the prediction says the information is
  not available; such an answer scores 1, anything else 0.
* :func:`score_locomo_answer` dispatches on the category.
* :func:`bleu1`: clipped unigram precision times the brevity penalty, over
  normalized (unstemmed) tokens.
* :func:`evidence_recall`: share of gold evidence dia_ids retrieved.

Example:
    >>> round(f1_score("He moved to Seattle in 2023", "Seattle"), 3)
    0.286
    >>> multi_hop_f1("hiking, painting", "painting, hiking")
    1.0
    >>> score_locomo_answer("That is not mentioned in the conversation.", None, 5)
    1.0
    >>> parse_evidence("D8:6; D9:17")
    ['D8:6', 'D9:17']
"""

from __future__ import annotations

import json
import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from nltk.stem import PorterStemmer
from pydantic import BaseModel, ConfigDict, Field

from langchain_atma.errors import BenchmarkFormatError

__all__ = [
    "TURN_SPACING_SECONDS",
    "LocomoQA",
    "LocomoSample",
    "LocomoSession",
    "LocomoTurn",
    "answer_tokens",
    "bleu1",
    "conversation_events",
    "evidence_recall",
    "f1_score",
    "is_abstention",
    "load_locomo",
    "multi_hop_f1",
    "normalize_answer",
    "parse_evidence",
    "parse_session_datetime",
    "score_locomo_answer",
]

TURN_SPACING_SECONDS = 30
"""Seconds between two consecutive turns of one session."""

_MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

_DATE_RE = re.compile(
    r"^\s*(?:(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap])\.?\s*m\.?\s*"
    r"(?:on\s+)?)?(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?P<month>[A-Za-z]+)\.?,?\s+"
    r"(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)
_EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_SESSION_RE = re.compile(r"^session_(\d+)$")
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_PUNCT_TABLE = str.maketrans("", "", string.punctuation + "‘’“”–—…")
_STEMMER = PorterStemmer()

# Phrases that mark an answer as "the information is not available". Matched on
# lowercase text with apostrophes removed and whitespace collapsed.
_ABSTENTION_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"\bnot (?:been |being )?(?:mentioned|stated|specified|provided|given|"
        r"discussed|indicated|known|available|included|recorded|disclosed|addressed|shared)\b",
        r"\bno (?:information|info|mention|record|details?|evidence|data|indication)\b",
        r"\b(?:un ?known|unanswerable|unclear|undetermined|unspecified)\b",
        r"\b(?:can ?not|cant|could not|couldnt|unable to) (?:be )?"
        r"(?:determined?|answered?|answer|tell|say|know|find|confirm|infer)\b",
        r"\b(?:does|do|did)(?: not|nt) (?:say|mention|specify|state|indicate|know)\b",
        r"\bdont know\b",
        r"\bnot (?:in|from|part of) the (?:conversation|memories|memory|context|records?)\b",
        r"\bnowhere (?:in|mentioned)\b",
        r"\bnot enough (?:information|info|context|evidence)\b",
        r"\binsufficient (?:information|info|evidence|context)\b",
    )
)


class LocomoTurn(BaseModel):
    """One conversation turn with its parsed timestamp."""

    model_config = ConfigDict(frozen=True)

    dia_id: str = Field(description="LoCoMo dialogue id, e.g. 'D1:3'.")
    speaker: str = Field(description="Speaker name as given in the file.")
    text: str = Field(
        description="Turn text; ' (shares a photo: CAPTION)' appended when a caption exists."
    )
    timestamp: datetime = Field(description="Naive timestamp: session start + spacing per turn.")
    session: int = Field(description="Session number N of 'session_N'.")
    blip_caption: str | None = Field(default=None, description="Image caption, when present.")


class LocomoSession(BaseModel):
    """One session: its number, start time and ordered turns."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(description="Session number N of 'session_N'.")
    date_time: datetime = Field(description="Parsed 'session_N_date_time' (naive).")
    turns: tuple[LocomoTurn, ...] = Field(description="Turns in file order.")


class LocomoQA(BaseModel):
    """One QA item."""

    model_config = ConfigDict(frozen=True)

    question: str = Field(description="The question text.")
    answer: str | None = Field(
        description="Gold answer as a string; None when the item has no 'answer' "
        "(adversarial items carry 'adversarial_answer' instead)."
    )
    category: int = Field(
        description="1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial."
    )
    evidence: tuple[str, ...] = Field(description="Evidence dia_ids, cleaned ('D8:6').")
    adversarial_answer: str | None = Field(
        default=None, description="The trap answer of an adversarial item, when present."
    )


class LocomoSample(BaseModel):
    """One LoCoMo conversation with its QA items."""

    model_config = ConfigDict(frozen=True)

    sample_id: str = Field(description="Sample id, e.g. 'conv-26'.")
    speaker_a: str = Field(description="First speaker's name.")
    speaker_b: str = Field(description="Second speaker's name.")
    sessions: tuple[LocomoSession, ...] = Field(description="Sessions sorted by start time.")
    qa: tuple[LocomoQA, ...] = Field(description="QA items in file order.")

    @property
    def turns(self) -> list[LocomoTurn]:
        """All turns in chronological order."""
        return [turn for session in self.sessions for turn in session.turns]


# --------------------------------------------------------------------------- loader


def parse_session_datetime(value: str) -> datetime:
    """Parse a LoCoMo session date like ``"1:56 pm on 8 May, 2023"``.

    The time part is optional (midnight then); month names may be abbreviated.

    Raises:
        BenchmarkFormatError: when the string is not such a date.

    Example:
        >>> parse_session_datetime("1:56 pm on 8 May, 2023").isoformat()
        '2023-05-08T13:56:00'
    """
    match = _DATE_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise BenchmarkFormatError(
            f"unparseable session date {value!r}: expected e.g. '1:56 pm on 8 May, 2023'"
        )
    month = _MONTHS.get(match["month"].lower())
    if month is None:
        raise BenchmarkFormatError(f"unparseable session date {value!r}: unknown month")
    hour = 0
    minute = 0
    if match["hour"] is not None:
        hour = int(match["hour"])
        minute = int(match["minute"] or 0)
        if not 1 <= hour <= 12 or minute > 59:
            raise BenchmarkFormatError(f"unparseable session date {value!r}: bad clock time")
        hour = hour % 12 + (12 if match["ampm"].lower() == "p" else 0)
    try:
        return datetime(int(match["year"]), month, int(match["day"]), hour, minute)
    except ValueError as exc:
        raise BenchmarkFormatError(f"unparseable session date {value!r}: {exc}") from exc


def parse_evidence(value: object) -> list[str]:
    """Extract clean dia_ids from a LoCoMo evidence field (string or list).

    Example:
        >>> parse_evidence(["D:11:26", "D", "D1:2 D1:3"])
        ['D11:26', 'D1:2', 'D1:3']
    """
    items: Iterable[object]
    if value is None:
        return []
    if isinstance(value, (str, int)):
        items = [value]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return []
    found: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        for session, turn in _EVIDENCE_RE.findall(item):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id not in found:
                found.append(dia_id)
    return found


def _answer_to_str(value: object, where: str) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(str(v) for v in value)
    raise BenchmarkFormatError(f"{where}: answer must be a string or number, got {value!r}")


def _require(mapping: Any, key: str, kind: type, where: str) -> Any:
    if not isinstance(mapping, dict):
        raise BenchmarkFormatError(f"{where}: expected an object")
    if key not in mapping:
        raise BenchmarkFormatError(f"{where}: missing key {key!r}")
    value = mapping[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BenchmarkFormatError(
            f"{where}.{key}: expected {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _shift(start: datetime, seconds: int, where: str) -> datetime:
    """``start + seconds``; a turn time past year 9999 is a format error, not a crash."""
    try:
        return start + timedelta(seconds=seconds)
    except OverflowError:
        raise BenchmarkFormatError(
            f"{where}: turn timestamp out of range ({start.isoformat()} + {seconds} s)"
        ) from None


def _parse_sample(raw: Any, where: str) -> LocomoSample:
    sample_id = _require(raw, "sample_id", str, where)
    conv = _require(raw, "conversation", dict, where)
    cwhere = f"{where}.conversation"
    speaker_a = _require(conv, "speaker_a", str, cwhere)
    speaker_b = _require(conv, "speaker_b", str, cwhere)
    sessions: list[LocomoSession] = []
    for key in conv:
        match = _SESSION_RE.match(key)
        if match is None:
            continue
        index = int(match.group(1))
        turns_raw = conv[key]
        if not isinstance(turns_raw, list):
            raise BenchmarkFormatError(f"{cwhere}.{key}: expected a list of turns")
        if not turns_raw:
            continue
        date_key = f"{key}_date_time"
        date_raw = _require(conv, date_key, str, cwhere)
        try:
            start = parse_session_datetime(date_raw)
        except BenchmarkFormatError as exc:
            raise BenchmarkFormatError(f"{cwhere}.{date_key}: {exc}") from exc
        turns: list[LocomoTurn] = []
        for pos, turn in enumerate(turns_raw):
            twhere = f"{cwhere}.{key}[{pos}]"
            text = _require(turn, "text", str, twhere)
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption.strip():
                caption = caption.strip()
                text = f"{text} (shares a photo: {caption})".strip()
            else:
                caption = None
            turns.append(
                LocomoTurn(
                    dia_id=_require(turn, "dia_id", str, twhere),
                    speaker=_require(turn, "speaker", str, twhere),
                    text=text,
                    timestamp=_shift(start, TURN_SPACING_SECONDS * pos, twhere),
                    session=index,
                    blip_caption=caption,
                )
            )
        sessions.append(LocomoSession(index=index, date_time=start, turns=tuple(turns)))
    sessions.sort(key=lambda s: (s.date_time, s.index))
    # Keep timestamps strictly increasing across the conversation, even when a
    # session would overlap the next one.
    fixed: list[LocomoSession] = []
    previous: datetime | None = None
    seen: set[str] = set()
    for session in sessions:
        new_turns = []
        for turn in session.turns:
            if turn.dia_id in seen:
                raise BenchmarkFormatError(
                    f"{cwhere}.session_{session.index}: duplicate dia_id {turn.dia_id!r}"
                )
            seen.add(turn.dia_id)
            stamp = turn.timestamp
            if previous is not None and stamp <= previous:
                stamp = _shift(previous, 1, f"{cwhere}.session_{session.index}")
            previous = stamp
            new_turns.append(turn.model_copy(update={"timestamp": stamp}))
        fixed.append(session.model_copy(update={"turns": tuple(new_turns)}))
    qa_raw = raw.get("qa", [])
    if not isinstance(qa_raw, list):
        raise BenchmarkFormatError(f"{where}.qa: expected a list")
    qa: list[LocomoQA] = []
    for pos, item in enumerate(qa_raw):
        qwhere = f"{where}.qa[{pos}]"
        question = _require(item, "question", str, qwhere)
        category = _require(item, "category", int, qwhere)
        answer = _answer_to_str(item["answer"], qwhere) if "answer" in item else None
        adversarial = item.get("adversarial_answer")
        qa.append(
            LocomoQA(
                question=question,
                answer=answer,
                category=category,
                evidence=tuple(parse_evidence(item.get("evidence"))),
                adversarial_answer=(
                    None if adversarial is None else _answer_to_str(adversarial, qwhere)
                ),
            )
        )
    return LocomoSample(
        sample_id=sample_id,
        speaker_a=speaker_a,
        speaker_b=speaker_b,
        sessions=tuple(fixed),
        qa=tuple(qa),
    )


def load_locomo(path: str | Path) -> list[LocomoSample]:
    """Load a LoCoMo-format JSON file (a list of samples).

    Raises:
        BenchmarkFormatError: when the file is missing, not UTF-8 JSON, or a
            sample lacks a required field (the message names the JSON path).
    """
    file = Path(path)
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except FileNotFoundError as exc:
        raise BenchmarkFormatError(f"LoCoMo file not found: {file}") from exc
    except OSError as exc:  # a directory, no permission...
        raise BenchmarkFormatError(
            f"cannot read LoCoMo file {file}: {exc.strerror or exc}"
        ) from exc
    except UnicodeDecodeError as exc:
        raise BenchmarkFormatError(f"{file}: not valid UTF-8 at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(
            f"{file}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from exc
    except RecursionError:
        raise BenchmarkFormatError(f"{file}: JSON nested too deeply") from None
    if not isinstance(data, list):
        raise BenchmarkFormatError(f"{file}: $ must be a list of samples")
    samples = [_parse_sample(raw, f"$[{i}]") for i, raw in enumerate(data)]
    ids = Counter(s.sample_id for s in samples)
    dupes = sorted(k for k, n in ids.items() if n > 1)
    if dupes:
        raise BenchmarkFormatError(f"{file}: duplicate sample_id {dupes[0]!r}")
    return samples


def conversation_events(sample: LocomoSample) -> list[dict[str, str]]:
    """The replay stream of a sample: one dict per turn, chronological.

    Each dict has ``event_id`` (``"SAMPLE:DIA_ID"``), ``timestamp`` (ISO 8601,
    no zone), ``speaker``, ``text`` and ``dia_id``.
    """
    return [
        {
            "event_id": f"{sample.sample_id}:{turn.dia_id}",
            "timestamp": turn.timestamp.isoformat(),
            "speaker": turn.speaker,
            "text": turn.text,
            "dia_id": turn.dia_id,
        }
        for turn in sample.turns
    ]


# --------------------------------------------------------------------------- scorers


def normalize_answer(text: object) -> str:
    """Lowercase, drop punctuation and the articles a/an/the, collapse spaces.

    Example:
        >>> normalize_answer("The Seattle, WA area!")
        'seattle wa area'
    """
    lowered = str(text).lower().translate(_PUNCT_TABLE)
    return " ".join(_ARTICLES_RE.sub(" ", lowered).split())


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return str(_STEMMER.stem(word))


def answer_tokens(text: object, *, stem: bool = True) -> list[str]:
    """Tokens of :func:`normalize_answer`, Porter-stemmed unless ``stem=False``."""
    words = normalize_answer(text).split()
    return [_stem(w) for w in words] if stem else words


def f1_score(prediction: object, gold: object) -> float:
    """Token F1 between prediction and gold (normalized, Porter-stemmed).

    Example:
        >>> f1_score("went hiking", "hiking")
        0.6666666666666666
    """
    pred = answer_tokens(prediction)
    ref = answer_tokens(gold)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_hop_f1(prediction: object, gold: object) -> float:
    """Multi-hop F1: comma-split both sides, best partial F1 per gold part, mean.

    Example:
        >>> multi_hop_f1("pottery", "pottery, camping")
        0.5
    """
    preds = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",") if g.strip()]
    if not golds:
        return 0.0
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def is_abstention(prediction: object) -> bool:
    """Whether an answer says the information is not available.

    Example:
        >>> is_abstention("There is no information about that."), is_abstention("Paris")
        (True, False)
    """
    text = str(prediction).lower().replace("'", "").replace("’", "")
    text = " ".join(text.split())
    return any(p.search(text) for p in _ABSTENTION_PATTERNS)


def score_locomo_answer(prediction: object, gold: str | None, category: int) -> float:
    """Score one LoCoMo answer by the category's rule.

    Category 1: :func:`multi_hop_f1`; 3: gold cut at the first ``;`` then F1;
    5: 1.0 when :func:`is_abstention`, else 0.0 (gold ignored); others F1.
    A missing gold for a non-adversarial category scores 0.0.
    """
    if category == 5:
        return 1.0 if is_abstention(prediction) else 0.0
    if gold is None:
        return 0.0
    if category == 1:
        return multi_hop_f1(prediction, gold)
    if category == 3:
        gold = gold.split(";")[0].strip()
    return f1_score(prediction, gold)


def bleu1(prediction: object, gold: object) -> float:
    """BLEU-1: clipped unigram precision times the brevity penalty.

    Tokens are those of :func:`normalize_answer` (not stemmed). The brevity
    penalty is 1 when the prediction is longer than the gold, else
    ``exp(1 - gold_len / pred_len)``; an empty prediction scores 0.

    Example:
        >>> round(bleu1("moved to Seattle", "Seattle"), 3)
        0.333
    """
    pred = answer_tokens(prediction, stem=False)
    ref = answer_tokens(gold, stem=False)
    if not pred or not ref:
        return 0.0
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    penalty = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return precision * penalty


def evidence_recall(retrieved: Sequence[str], gold: Sequence[str]) -> float | None:
    """Share of gold evidence dia_ids that were retrieved; None when gold is empty.

    Ids are cleaned with :func:`parse_evidence`, so ``"D:1:3"`` matches ``"D1:3"``.

    Example:
        >>> evidence_recall(["D1:3", "D2:1"], ["D1:3", "D4:4"])
        0.5
    """
    gold_ids = set(parse_evidence(list(gold)))
    if not gold_ids:
        return None
    got = set(parse_evidence(list(retrieved)))
    return len(gold_ids & got) / len(gold_ids)
