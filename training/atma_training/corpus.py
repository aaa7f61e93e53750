"""The state-change corpus: schema, loading, expansion to labelled pairs, checks.

Files (JSON lines, one object per line), written in batches from
``training/BRIEF.md``:

* ``corpus/pairs/bNN.jsonl``: :class:`CorpusLine` objects, each an (old, new)
  statement pair of one speaker with the judge's verdict (fusion action and
  conflict type), or a transition chain (old -> transition -> new);
* ``corpus/questions/bNN.jsonl``: :class:`QuestionLine` objects, a question
  with the state view it asks for;
* ``corpus/dialogs/cNN.jsonl``: :class:`DialogLine` objects, whole conversations
  between two friends in which no personal fact changes (``DIALOGS.md``): any two
  turns of one speaker are a ``keep_both`` pair (:func:`dialog_pairs`).

:func:`expand` turns a line into the judge's training pairs: a transition
chain gives three (old -> transition: ``transition``; transition -> new and
old -> new: ``supersede``).

Example:
    >>> line = CorpusLine(id="b00-0001", slot="home.city", kind="change",
    ...                   old="Renting a tiny flat by the harbour.",
    ...                   new="Signed for a house inland, the sea is an hour away.",
    ...                   action="supersede", type="temporal", indirect=True, style="terse")
    >>> [(p.action, p.type) for p in expand(line)]
    [('supersede', 'temporal')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "ACTIONS",
    "CHANGE_WORDS",
    "CONFLICT_TYPES",
    "CORPUS_DIR",
    "CorpusError",
    "CorpusLine",
    "DialogLine",
    "DialogTurn",
    "LabelledPair",
    "NEGATIVE_SUBTYPES",
    "QuestionLine",
    "STYLES",
    "VIEWS",
    "change_words_in",
    "expand",
    "dialog_pairs",
    "load_dialogs",
    "load_lines",
    "load_questions",
]

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
"""``training/corpus`` (pairs/ and questions/)."""

ACTIONS = ("supersede", "transition", "coexist", "scoped_exception", "keep_both", "noop")
CONFLICT_TYPES = ("temporal", "negation", "value", "scope", "duplicate", "none")
VIEWS = ("current", "historical", "transition", "neutral")
STYLES = ("casual", "terse", "typos", "emoji", "rambling", "listener", "formal", "voice")
NEGATIVE_SUBTYPES = (
    "compatible",
    "other_person",
    "irrealis",
    "question",
    "negated_plan",
    "joke",
    "past_report",
    "episode",
    "unrelated",
)

Kind = Literal["change", "transition", "scope", "duplicate", "negative"]

_KIND_LABELS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "change": (frozenset({"supersede"}), frozenset({"temporal", "negation", "value"})),
    "transition": (frozenset({"transition"}), frozenset({"temporal", "negation", "value"})),
    "scope": (frozenset({"coexist", "scoped_exception"}), frozenset({"scope"})),
    "duplicate": (frozenset({"noop"}), frozenset({"duplicate"})),
    "negative": (frozenset({"keep_both"}), frozenset({"none"})),
}

CHANGE_WORDS = (
    "now",
    "nowadays",
    "these days",
    "anymore",
    "any more",
    "no longer",
    "no more",
    "new",
    "newly",
    "move",
    "moved",
    "moving",
    "relocated",
    "relocating",
    "switch",
    "switched",
    "switching",
    "change",
    "changed",
    "changing",
    "start",
    "started",
    "starting",
    "began",
    "begun",
    "quit",
    "quitting",
    "stop",
    "stopped",
    "stopping",
    "used to",
    "finally",
    "instead",
    "replace",
    "replaced",
    "former",
    "formerly",
    "ex",
    "previous",
    "previously",
    "lately",
    "recently",
    "currently",
    "became",
    "become",
    "gave up",
    "give up",
    "giving up",
    "went from",
    "turned into",
    "upgraded",
    "swapped",
    "transferred",
    "promoted",
    "retired",
    "resigned",
    "since",
    "anymore",
    "not anymore",
)
"""Words an *indirect* change may not use in its new (or transition) text."""

_CHANGE_RE = re.compile(
    r"(?<![\w'])(?:"
    + "|".join(sorted((re.escape(w) for w in set(CHANGE_WORDS)), key=len, reverse=True))
    + r")(?![\w'])",
    re.IGNORECASE,
)


def change_words_in(text: str) -> list[str]:
    """The :data:`CHANGE_WORDS` found in ``text`` (lower-cased, in order)."""
    return [m.group(0).lower() for m in _CHANGE_RE.finditer(text)]


class CorpusError(ValueError):
    """A corpus file or line is malformed."""


class CorpusLine(BaseModel):
    """One written pair (or transition chain) with the judge's verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^b\d\d-\d{4}$", description="Batch and line number: b03-0042.")
    slot: str = Field(
        pattern=r"^[a-z_]+\.[a-z_]+$",
        description="domain.slot, the state variable the pair is about.",
    )
    kind: Kind = Field(description="change | transition | scope | duplicate | negative.")
    subtype: str | None = Field(
        default=None, description="For negatives: which kind of hard negative."
    )
    old: str = Field(min_length=3, max_length=700, description="The earlier statement.")
    new: str = Field(min_length=3, max_length=700, description="The later statement.")
    transition: str | None = Field(
        default=None,
        min_length=3,
        max_length=700,
        description="For transition chains: the statement of the change in progress, "
        "between old and new.",
    )
    action: str = Field(
        description="The judge's fusion action for (old, new), or for "
        "(old, transition) in a transition chain."
    )
    type: str = Field(description="The conflict type.")
    indirect: bool = Field(
        default=False,
        description="Only world knowledge links the two; the new text uses no change word.",
    )
    style: str = Field(description="Register of the pair (one of STYLES).")

    @model_validator(mode="after")
    def _consistent(self) -> CorpusLine:
        actions, types = _KIND_LABELS[self.kind]
        if self.action not in actions or self.type not in types:
            raise ValueError(
                f"kind {self.kind!r} needs action in {sorted(actions)} and type "
                f"in {sorted(types)}, got {self.action!r} / {self.type!r}"
            )
        if self.style not in STYLES:
            raise ValueError(f"style {self.style!r} is not one of {STYLES}")
        if (self.kind == "transition") != (self.transition is not None):
            raise ValueError("a transition text is required for, and only for, kind 'transition'")
        if self.kind == "negative" and self.subtype not in NEGATIVE_SUBTYPES:
            raise ValueError(f"a negative needs a subtype in {NEGATIVE_SUBTYPES}")
        if self.kind != "negative" and self.subtype is not None:
            raise ValueError("only negatives have a subtype")
        if self.indirect and self.kind not in ("change", "transition", "scope"):
            raise ValueError("only changes, transitions and scope pairs can be indirect")
        if self.indirect:
            found = change_words_in(self.new) + change_words_in(self.transition or "")
            if found:
                raise ValueError(f"an indirect pair uses change words {found}")
        texts = [self.old, self.new] + ([self.transition] if self.transition else [])
        if len({t.strip().lower() for t in texts}) < len(texts):
            raise ValueError("the texts of a line must differ")
        if any("{" in t or "}" in t for t in texts):
            raise ValueError("texts must not contain template braces")
        return self

    @property
    def batch(self) -> str:
        """The batch id (``b03``)."""
        return self.id.split("-")[0]

    @property
    def domain(self) -> str:
        """The life domain (the slot's prefix)."""
        return self.slot.split(".")[0]


class QuestionLine(BaseModel):
    """A question with the state view it asks for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^b\d\d-q\d{4}$", description="Batch and number: b03-q0007.")
    slot: str = Field(pattern=r"^[a-z_]+\.[a-z_]+$", description="The slot asked about.")
    question: str = Field(min_length=5, max_length=400, description="The question.")
    view: str = Field(description="current | historical | transition | neutral.")
    style: str = Field(description="Register (one of STYLES).")

    @model_validator(mode="after")
    def _known(self) -> QuestionLine:
        if self.view not in VIEWS:
            raise ValueError(f"view {self.view!r} is not one of {VIEWS}")
        if self.style not in STYLES:
            raise ValueError(f"style {self.style!r} is not one of {STYLES}")
        return self


class DialogTurn(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    speaker: str = Field(min_length=1, max_length=40, description="Who says it.")
    text: str = Field(min_length=1, max_length=1200, description="What is said.")


class DialogLine(BaseModel):
    """A conversation between two friends in which no personal fact changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^c\d\d-\d{3}$", description="Batch and number: c03-017.")
    topic: str = Field(pattern=r"^chat\.[a-z_]+$", description="chat.<topic>.")
    speakers: tuple[str, str] = Field(description="The two speakers.")
    style: str = Field(min_length=2, max_length=30, description="The conversation's tone.")
    turns: tuple[DialogTurn, ...] = Field(
        min_length=20, max_length=60, description="The turns, in order."
    )

    @model_validator(mode="after")
    def _speakers(self) -> DialogLine:
        if self.speakers[0] == self.speakers[1]:
            raise ValueError("the two speakers must differ")
        unknown = {t.speaker for t in self.turns} - set(self.speakers)
        if unknown:
            raise ValueError(f"turns by {sorted(unknown)}, not one of the speakers")
        if any("{" in t.text or "}" in t.text for t in self.turns):
            raise ValueError("texts must not contain template braces")
        return self

    @property
    def batch(self) -> str:
        """The batch id (``c03``)."""
        return self.id.split("-")[0]


def dialog_pairs(
    dialog: DialogLine, nearest: dict[int, list[int]] | None = None
) -> list[LabelledPair]:
    """``keep_both`` pairs (earlier turn, later turn) of one speaker of a conversation.

    Args:
        dialog: the conversation.
        nearest: per turn index, the earlier turn indexes to pair it with (for example
            the nearest by embedding); default every earlier turn of the speaker.
    """
    out: list[LabelledPair] = []
    for j, turn in enumerate(dialog.turns):
        earlier = [i for i in range(j) if dialog.turns[i].speaker == turn.speaker]
        chosen = earlier if nearest is None else [i for i in nearest.get(j, []) if i in earlier]
        for i in chosen:
            out.append(
                LabelledPair(
                    dialog.turns[i].text,
                    turn.text,
                    "keep_both",
                    "none",
                    slot=dialog.topic,
                    line_id=f"{dialog.id}:{i}-{j}",
                    kind="negative",
                    subtype="dialog",
                    indirect=False,
                    style="chat",
                )
            )
    return out


@dataclass(frozen=True)
class LabelledPair:
    """One (old, new) training pair for the judge."""

    old: str
    new: str
    action: str
    type: str
    slot: str
    line_id: str
    kind: str
    subtype: str | None
    indirect: bool
    style: str
    role: str = "pair"
    """``pair``, or for chains ``old_transition`` / ``transition_new`` / ``old_new``."""


def expand(line: CorpusLine) -> list[LabelledPair]:
    """The judge's training pairs of one line (three for a transition chain)."""
    common = {
        "slot": line.slot,
        "line_id": line.id,
        "kind": line.kind,
        "subtype": line.subtype,
        "indirect": line.indirect,
        "style": line.style,
    }
    if line.transition is None:
        return [LabelledPair(line.old, line.new, line.action, line.type, **common)]
    return [
        LabelledPair(
            line.old, line.transition, "transition", line.type, role="old_transition", **common
        ),
        LabelledPair(
            line.transition, line.new, "supersede", line.type, role="transition_new", **common
        ),
        LabelledPair(line.old, line.new, "supersede", line.type, role="old_new", **common),
    ]


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as fh:
        for no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{path}:{no}: not JSON ({exc})") from exc
            if not isinstance(obj, dict):
                raise CorpusError(f"{path}:{no}: not a JSON object")
            yield no, obj


def _files(paths: Iterable[Path] | None, sub: str) -> list[Path]:
    if paths is None:
        return sorted((CORPUS_DIR / sub).glob("*.jsonl"))
    out: list[Path] = []
    for p in paths:
        out += sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    return out


def load_lines(paths: Iterable[Path] | None = None, *, strict: bool = True) -> list[CorpusLine]:
    """Read and validate pair lines (default: every file of ``corpus/pairs``).

    Args:
        paths: files or folders of ``.jsonl`` files.
        strict: raise on the first bad line; ``False`` skips bad lines and
            repeated ids (for reading other writers' files while they work).

    Raises:
        CorpusError: (strict) a line is malformed, or two lines share an id.
    """
    return _load(CorpusLine, paths, "pairs", strict)


def load_dialogs(paths: Iterable[Path] | None = None, *, strict: bool = True) -> list[DialogLine]:
    """Read and validate conversations (default: every file of ``corpus/dialogs``).

    Raises:
        CorpusError: (strict) a line is malformed, or two lines share an id.
    """
    return _load(DialogLine, paths, "dialogs", strict)


_Line = TypeVar("_Line", CorpusLine, DialogLine)


def _load(
    model: type[_Line], paths: Iterable[Path] | None, folder: str, strict: bool
) -> list[_Line]:
    out: list[_Line] = []
    ids: set[str] = set()
    for path in _files(paths, folder):
        try:
            rows = list(_read_jsonl(path))
        except CorpusError:
            if strict:
                raise
            continue
        for no, obj in rows:
            try:
                line = model.model_validate(obj)
            except ValidationError as exc:
                if strict:
                    raise CorpusError(f"{path}:{no}: {exc.errors()[0]['msg']}") from exc
                continue
            if line.id in ids:
                if strict:
                    raise CorpusError(f"{path}:{no}: duplicate id {line.id}")
                continue
            ids.add(line.id)
            out.append(line)
    return out


def load_questions(paths: Iterable[Path] | None = None) -> list[QuestionLine]:
    """Read and validate question lines (default: every file of ``corpus/questions``).

    Raises:
        CorpusError: a line is malformed, or two lines share an id.
    """
    out: list[QuestionLine] = []
    ids: set[str] = set()
    for path in _files(paths, "questions"):
        for no, obj in _read_jsonl(path):
            try:
                q = QuestionLine.model_validate(obj)
            except ValidationError as exc:
                raise CorpusError(f"{path}:{no}: {exc.errors()[0]['msg']}") from exc
            if q.id in ids:
                raise CorpusError(f"{path}:{no}: duplicate id {q.id}")
            ids.add(q.id)
            out.append(q)
    return out
