"""Answerers: turn a question, its profile and the evidence rows into an :class:`Answer`.

* :class:`OfflineAnswerer` needs no model. It picks one row by a fixed rule and
  returns its content; it is the deterministic QA path used by offline tests
  and benchmarks without an LLM server.
* :class:`LLMAnswerer` runs ``prompt | model | StrOutputParser`` on the
  serialized, labelled packet. A model error, timeout or empty output gives
  ``Answer(status="failed", error=...)`` with a readable reason (see
  :func:`failure_message`: timeout, unreachable server, invalid server reply,
  ``empty model output``); it never raises for model failures, so failures stay
  visible in results (and in the read graph's ``answer`` trace entry) instead
  of aborting a run.

Both return ``status="no_evidence"`` with :data:`NOT_AVAILABLE_ANSWER` when the
packet is empty (the LLM is not called then).

Example:
    >>> from langchain_atma.records import MemoryRecord
    >>> from langchain_atma.retrieval.packets import Bucket, EvidenceRow
    >>> from langchain_atma.retrieval.profiler import profile_query
    >>> q = "Where does Corisande live now?"
    >>> rows = [EvidenceRow(record=MemoryRecord(namespace="t", content="I live in Boston.",
    ...                                         status="superseded"), bucket=Bucket.SEED),
    ...         EvidenceRow(record=MemoryRecord(namespace="t", content="Seattle is home now."),
    ...                     bucket=Bucket.RELATION, relation="superseded_by")]
    >>> OfflineAnswerer().answer(q, profile_query(q), rows).answer
    'Seattle is home now.'
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import Runnable, RunnablePassthrough
from pydantic import BaseModel, Field

from langchain_atma._bounded_call import ainvoke_bounded, invoke_bounded
from langchain_atma._checks import optional_non_negative
from langchain_atma.errors import ConfigError, InvalidQueryError, InvalidRecordError
from langchain_atma.qa.labels import project_label
from langchain_atma.qa.prompts import NOT_AVAILABLE_ANSWER, get_answer_prompt, view_note
from langchain_atma.qa.serializer import MAX_ROW_CHARS, clean_text, serialize_packet
from langchain_atma.records import LinkType, RecordStatus
from langchain_atma.retrieval.packets import (
    EvidenceLabel,
    EvidencePacket,
    EvidenceRow,
    QueryProfile,
    QueryView,
)
from langchain_atma.retrieval.profiler import profile_query

__all__ = [
    "DEFAULT_RELEVANCE_MARGIN",
    "Answer",
    "AnswerStatus",
    "LLMAnswerer",
    "OfflineAnswerer",
    "asks_time",
    "can_answer",
    "create_answer_chain",
    "current_clauses",
    "failure_message",
    "other_speaker_row",
    "state_clauses",
    "time_answer",
]

AnswerStatus = Literal["answered", "no_evidence", "abstained", "failed"]

_TIME_ORDER_ROWS = 2
"""How many unlinked current rows the offline answerer's time order decides between."""

DEFAULT_RELEVANCE_MARGIN = 0.10
"""How far below the packet's best seed score a row's match may be and still take part
in the offline answerer's choice (cosine units; see :class:`OfflineAnswerer`)."""

_STATE_RELATION_LINKS = (
    LinkType.SUPERSEDES,
    LinkType.COEXISTS,
    LinkType.SCOPED_EXCEPTION,
    LinkType.EVOLVES_FROM,
    LinkType.EVOLVES_TO,
)
_PAIR_LINKS = (*_STATE_RELATION_LINKS, LinkType.SUPERSEDED_BY)
"""Links that tie two records into one state pair (both directions)."""
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_MAX_QUESTION_CHARS = 2_000


class Answer(BaseModel):
    """The outcome of answering one question."""

    answer: str = Field(description="The answer text ('' when the model failed).")
    view: QueryView = Field(description="The state view the answer was asked to follow.")
    evidence_ids: list[str] = Field(
        default_factory=list,
        description="Record ids of the rows the answer used (offline: the chosen row; "
        "LLM: every row shown to the model).",
    )
    status: AnswerStatus = Field(
        default="answered",
        description="answered | no_evidence | abstained (the evidence is about someone "
        "else) | failed.",
    )
    error: str | None = Field(default=None, description="Why the answer failed, if it did.")


def _check_inputs(
    question: object, profile: QueryProfile | None, rows: object
) -> tuple[str, QueryProfile, list[EvidenceRow]]:
    if not isinstance(question, str) or not question.strip():
        raise InvalidQueryError("question must be a non-empty string")
    if profile is None:
        profile = profile_query(question)
    elif not isinstance(profile, QueryProfile):
        raise InvalidQueryError(f"profile must be a QueryProfile, got {type(profile).__name__}")
    items = rows.rows if isinstance(rows, EvidencePacket) else rows
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise InvalidRecordError("rows must be a sequence of EvidenceRow objects")
    out = list(items)
    for row in out:
        if not isinstance(row, EvidenceRow):
            raise InvalidRecordError(f"expected an EvidenceRow, got {type(row).__name__}")
    return question, profile, out


def _no_evidence(view: QueryView) -> Answer:
    return Answer(answer=NOT_AVAILABLE_ANSWER, view=view, status="no_evidence")


_MIN_SHARED_WORDS = 2
"""Fewest question words another speaker's statement must share (see
:func:`other_speaker_row`): one shared word is often only the topic ("What dance
style has Teodor been doing lately?" over "Our first dance happened in a tiny
candlelit bistro")."""


def other_speaker_row(question: str, rows: Sequence[EvidenceRow]) -> EvidenceRow | None:
    """Another speaker's row that answers a question about one speaker, if any.

    The question must name exactly one of the rows' speakers (``X``). Rows
    are matched to the question sentence by sentence, by shared content words
    (stemmed; the speakers' names do not count), and only sentences that state
    something count (:func:`~langchain_atma.text.statement_words`: no
    questions, reactions or sentences addressed to the listener): ``X``'s rows
    by every such sentence, another speaker's rows only by the sentences in
    which that speaker says something of their own (a first-person word) and
    that do not name ``X``. When such a sentence shares more words with the
    question than any of ``X``'s statements, and at least two (one shared
    word is often only the topic: "dance", "pet"), the packet holds the fact the
    question asks about, but as the other speaker's own: "Where did Caspian see
    the workshop flyer?" over "Dariusz: I saw the workshop flyer at my local pet
    store." and Caspian's rows about something else. That row is returned (the
    earliest in packet order among equals); ``None`` otherwise. Records without
    a speaker never count.

    Example:
        >>> from langchain_atma.records import MemoryRecord, Provenance
        >>> from langchain_atma.retrieval.packets import Bucket, EvidenceRow
        >>> def row(speaker, text):
        ...     rec = MemoryRecord(namespace="t", content=text,
        ...                        provenance=Provenance(speaker=speaker))
        ...     return EvidenceRow(record=rec, bucket=Bucket.SEED)
        >>> rows = [row("Caspian", "Workshops sound fun, but I'm swamped."),
        ...         row("Dariusz", "Ha! I saw the workshop flyer at my local pet store.")]
        >>> other_speaker_row("Where did Caspian see the workshop flyer?", rows).id == rows[1].id
        True
        >>> other_speaker_row("Where did Dariusz see the workshop flyer?", rows) is None
        True

    Raises:
        InvalidQueryError: ``question`` is not a string.
        InvalidRecordError: ``rows`` is not a sequence of EvidenceRow objects.
    """
    if not isinstance(question, str):
        raise InvalidQueryError("question must be a string")
    if (
        isinstance(rows, (str, bytes))
        or not isinstance(rows, Sequence)
        or not all(isinstance(r, EvidenceRow) for r in rows)
    ):
        raise InvalidRecordError("rows must be a sequence of EvidenceRow objects")
    found = _other_speaker(question, rows)
    return found[1] if found is not None else None


def _other_speaker(question: str, rows: Sequence[EvidenceRow]) -> tuple[str, EvidenceRow] | None:
    """``(asked speaker, other speaker's row)`` for :func:`other_speaker_row`."""
    from langchain_atma.retrieval.rewrite import the_named_speaker
    from langchain_atma.text import content_words, statement_words

    speakers = {r.record.provenance.speaker for r in rows if r.record.provenance.speaker}
    # the packet's speakers are known: look for each name (not only the first few
    # capitalized words, as the seed search must), then the seed search's rule for
    # names inside longer ones ("Mary" in "Mary Jane")
    named = sorted(
        s for s in speakers if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", question, re.IGNORECASE)
    )
    subject = the_named_speaker(named) if len(speakers) > 1 else None
    if subject is None:
        return None
    asked = content_words(question[:_MAX_QUESTION_CHARS]) - content_words(" ".join(speakers))
    if not asked:
        return None
    subject_words = content_words(subject)
    best_own = max(
        (
            len(asked & words)
            for r in rows
            if r.record.provenance.speaker == subject
            for words in statement_words(r.record.content)
        ),
        default=0,
    )
    best: EvidenceRow | None = None
    best_n = max(best_own, _MIN_SHARED_WORDS - 1)
    for r in rows:
        speaker = r.record.provenance.speaker
        if not speaker or speaker == subject:
            continue
        for words in statement_words(r.record.content, first_person=True):
            n = len(asked & words)
            if n > best_n and not words & subject_words:
                best, best_n = r, n
    return (subject, best) if best is not None else None


def _abstained(subject: str, other: EvidenceRow, view: QueryView) -> Answer:
    return Answer(
        answer=f"Not mentioned in memory for {subject} (the closest memory is "
        f"{other.record.provenance.speaker}'s own statement).",
        view=view,
        evidence_ids=[other.id],
        status="abstained",
    )


class OfflineAnswerer:
    """Deterministic answerer without a model: answers with one chosen row's content.

    Rule (labels come from ``row.label``, or :func:`project_label` when unset):

    A *state pair* is two rows of the packet tied by a state link
    (``supersedes`` / ``superseded_by``, ``coexists``, ``scoped_exception``,
    ``evolves_from`` / ``evolves_to``): the change the question is about was
    retrieved together. Inside a pair the view follows time order.

    * view **current** -> the first *current memory* row that is the newer
      member of a state pair, else the first *current memory* row in a state
      pair, else the first *current memory* row with any state relation, else
      the first *current memory* row, else the first row whose record is
      ``active``, else the first row;
    * view **historical** -> the first *historical memory* row in a state pair,
      else the first *current memory* row that is the older member of a pair of
      coexisting states (both still true: the one stated first), else the first
      *historical memory* row, else the first row whose record is
      ``superseded``, else the first row;
    * view **transition** -> the first *transition memory* row, else the first row;
    * view **neutral** -> the first row.

    Time order (``time_order``): when no two rows that take part form a state pair
    (the bank has not resolved what the packet holds) and the pick is one of the
    first two *current memory* rows without state links, which are statements of
    the same speaker, the current view takes the later of the two and the
    historical view the earlier. Two unlinked statements that both match the
    question best are often the old and the new value of one fact whose change
    the bank did not catch; time order is the safer guess, as in the offline
    controller's fallback.

    Only rows that can answer the question take part (``answer_types``): a row
    must state a fact (a record whose ``states_fact`` is False, or whose text is
    only questions, greetings and reactions such as "Wow, that looks great!",
    cannot); a question asking for someone ("who", "whom", "whose") needs a row
    that names someone not named in the question; a question asking for a number
    ("how many", "how much", "how old", "how long", "how far", "how often",
    "what number / age / amount / percentage / price") needs a row that gives
    one. When no row fits, every row takes part.

    Only rows about the question's own fact take part (``relevance_margin``): a
    row whose seed score, or the best seed score of its state partners in the
    packet, is more than ``relevance_margin`` below the packet's best seed score
    came in through a weaker match (a state pair pulled in by a seed about
    something else) and is left out of the choice, unless nothing is left. Rows
    without seed scores all take part.

    With ``use_labels=False`` (host baseline, "-QA label" ablation) the first
    row is always used. A question that asks "when" is answered with the time
    the chosen record gives (``time_answers``, :func:`time_answer`: its date,
    or a relative time in its text read against that date, "the week before
    7 May 2023"). Otherwise the answer is the chosen content with control
    characters removed and whitespace collapsed, cut to ``max_chars``. For the
    current and historical views, when the chosen record also says that a value
    of its in-packet state partner ended ("I no longer keep a corn snake. Now
    I've got a gecko"), that clause is dropped (:func:`state_clauses`); for
    the current view, so is a clause about an ended or merely continuing state
    that the question does not name (:func:`current_clauses`): the answer
    follows the requested view, not both.

    Args:
        use_labels: follow state labels (True) or always take the first row.
        max_chars: most characters of the answer.
        state_clauses: drop the clauses about the other state (default True;
            both :func:`state_clauses` and :func:`current_clauses`).
        relevance_margin: rows (with their state partners) whose best seed score
            is more than this below the packet's best seed score do not take part
            in the choice; ``None`` lets every row take part.
        answer_types: only rows that can answer the question take part (a
            fact; a name for "who", a number for "how many"); default True.
        time_answers: a question that asks "when" (or for a year, month or
            date) is answered with the time the chosen row gives
            (:func:`time_answer`), not with its text; default True.
        time_order: for the current and historical views, decide between the first
            two unlinked *current memory* rows of one speaker by time when the
            packet has no state pair (see above); default True.
        speaker_check: abstain when the question asks about one speaker and
            another speaker's own statement in the packet matches it better than
            anything that speaker said (:func:`other_speaker_row`): "Where did
            Caspian see the workshop flyer?" over "Dariusz: I saw the workshop flyer
            at the pet store." gets "Not mentioned in memory for Caspian (the
            closest memory is Dariusz's own statement).", status ``"abstained"``;
            default True.

    Raises:
        ConfigError: for ``max_chars < 1`` or a negative or non-finite
            ``relevance_margin``.
    """

    def __init__(
        self,
        *,
        use_labels: bool = True,
        max_chars: int = MAX_ROW_CHARS,
        state_clauses: bool = True,
        relevance_margin: float | None = DEFAULT_RELEVANCE_MARGIN,
        answer_types: bool = True,
        time_answers: bool = True,
        speaker_check: bool = True,
        time_order: bool = True,
    ) -> None:
        if max_chars < 1:
            raise ConfigError(f"max_chars must be >= 1, got {max_chars}")
        self.relevance_margin = optional_non_negative(relevance_margin, "relevance_margin")
        self.use_labels = use_labels
        self.max_chars = max_chars
        self.state_clauses = state_clauses
        self.answer_types = answer_types
        self.time_answers = time_answers
        self.speaker_check = speaker_check
        self.time_order = time_order

    def _answering(self, question: str, rows: Sequence[EvidenceRow]) -> list[EvidenceRow]:
        """The rows that can answer ``question`` (see ``answer_types``), else all rows."""
        if not self.answer_types:
            return list(rows)
        kept = [
            r
            for r in rows
            if can_answer(question, r.record.content, states_fact=r.record.states_fact)
        ]
        return kept or list(rows)

    def _relevant(self, rows: Sequence[EvidenceRow]) -> list[EvidenceRow]:
        """The rows that take part in the choice (see ``relevance_margin``)."""
        scores = [r.score for r in rows if r.score is not None]
        if self.relevance_margin is None or not scores:
            return list(rows)
        bar = max(scores) - self.relevance_margin
        by_id = {r.id: r for r in rows}

        def best(r: EvidenceRow) -> float:
            own = [x.score for x in (r, *_partners(r, by_id)) if x.score is not None]
            return max(own) if own else float("-inf")

        kept = [r for r in rows if best(r) >= bar]
        return kept or list(rows)

    def choose(
        self, view: QueryView, rows: Sequence[EvidenceRow], question: str | None = None
    ) -> EvidenceRow | None:
        """The row the rule picks for ``view`` (``None`` for no rows).

        With ``question``, only the rows that can answer it take part (see
        ``answer_types``).
        """
        if not rows:
            return None
        if not self.use_labels:
            return rows[0]
        if question is not None:
            rows = self._answering(question, rows)
        rows = self._relevant(rows)
        labels = [r.label if r.label is not None else project_label(r) for r in rows]

        def first(pred: Any) -> EvidenceRow | None:
            return next((r for r, lab in zip(rows, labels, strict=True) if pred(r, lab)), None)

        by_id = {r.id: r for r in rows}
        label_of = {r.id: lab for r, lab in zip(rows, labels, strict=True)}

        def partners(r: EvidenceRow) -> list[EvidenceRow]:
            return _partners(r, by_id)

        def later(a: EvidenceRow, b: EvidenceRow) -> bool:
            return a.record.sort_key > b.record.sort_key

        def newer_of_pair(r: EvidenceRow) -> bool:
            return any(later(r, p) for p in partners(r))

        def older_of_coexisting(r: EvidenceRow) -> bool:
            return any(later(p, r) for p in partners(r) if label_of[p.id] is EvidenceLabel.CURRENT)

        picked: EvidenceRow | None = None
        if view is QueryView.CURRENT:
            picked = (
                first(lambda r, lab: lab is EvidenceLabel.CURRENT and newer_of_pair(r))
                or first(lambda r, lab: lab is EvidenceLabel.CURRENT and bool(partners(r)))
                or first(
                    lambda r, lab: (
                        lab is EvidenceLabel.CURRENT
                        and bool(r.record.targets(*_STATE_RELATION_LINKS))
                    )
                )
                or first(lambda r, lab: lab is EvidenceLabel.CURRENT)
                or first(lambda r, lab: r.record.status is RecordStatus.ACTIVE)
            )
        elif view is QueryView.HISTORICAL:
            picked = (
                first(lambda r, lab: lab is EvidenceLabel.HISTORICAL and bool(partners(r)))
                or first(lambda r, lab: lab is EvidenceLabel.CURRENT and older_of_coexisting(r))
                or first(lambda r, lab: lab is EvidenceLabel.HISTORICAL)
                or first(lambda r, lab: r.record.status is RecordStatus.SUPERSEDED)
            )
        elif view is QueryView.TRANSITION:
            picked = first(lambda r, lab: lab is EvidenceLabel.TRANSITION)
        picked = picked or rows[0]
        if (
            self.time_order
            and view in (QueryView.CURRENT, QueryView.HISTORICAL)
            and not any(partners(r) for r in rows)
        ):
            unlinked = [
                r
                for r, lab in zip(rows, labels, strict=True)
                if lab is EvidenceLabel.CURRENT and not r.record.targets(*_STATE_RELATION_LINKS)
            ][:_TIME_ORDER_ROWS]
            if (
                len(unlinked) == _TIME_ORDER_ROWS
                and picked.id in {r.id for r in unlinked}
                and len({r.record.provenance.speaker for r in unlinked}) == 1
            ):
                pick = max if view is QueryView.CURRENT else min
                picked = pick(unlinked, key=lambda r: r.record.sort_key)
        return picked

    def answer(
        self,
        question: str,
        profile: QueryProfile | None,
        rows: Sequence[EvidenceRow] | EvidencePacket,
    ) -> Answer:
        """Answer from the rows (``profile=None`` profiles the question).

        Raises:
            InvalidQueryError: for a blank question or a bad profile.
            InvalidRecordError: when rows are not EvidenceRow objects.
        """
        q, prof, items = _check_inputs(question, profile, rows)
        if self.speaker_check and items:
            other = _other_speaker(q, items)
            if other is not None:
                return _abstained(*other, prof.view)
        row = self.choose(prof.view, items, question=q)
        if row is None:
            return _no_evidence(prof.view)
        content = row.record.content
        when = time_answer(q, content, row.record.time) if self.time_answers else None
        if when is not None:
            return Answer(answer=when, view=prof.view, evidence_ids=[row.id], status="answered")
        if (
            self.use_labels
            and self.state_clauses
            and prof.view in (QueryView.CURRENT, QueryView.HISTORICAL)
        ):
            partners = _partners(row, {r.id: r for r in items})
            content = state_clauses(content, [p.record.content for p in partners])
            if prof.view is QueryView.CURRENT:
                content = current_clauses(content, question)
        text = clean_text(content, self.max_chars)
        return Answer(answer=text, view=prof.view, evidence_ids=[row.id], status="answered")

    async def aanswer(
        self,
        question: str,
        profile: QueryProfile | None,
        rows: Sequence[EvidenceRow] | EvidencePacket,
    ) -> Answer:
        """Async :meth:`answer` (no I/O; same result)."""
        return self.answer(question, profile, rows)


# what may come before the question word: "According to Johan, who ...", "And when
# ...", "With whom ...", "After how many weeks ..." (never a word of the question's
# body: "What happens when ..." and "Is the friend who ..." ask for no time or name)
_LEAD = (
    r"^\W*(?:according\s+to\s+[^,?]{1,40},\s*)?"
    r"(?:(?:and|so|but|then|also|ok|okay|well)\W+)?"
    r"(?:(?:to|with|for|from|by|of|in|on|at|during|since|until|till|after|before|within)"
    r"\s+)?"
)
_ASKS_NAME = re.compile(_LEAD + r"(?:who|whom|whose)\b", re.IGNORECASE)
_ASKS_NUMBER = re.compile(
    _LEAD + r"(?:how\s+(?:many|much|old|long|far|often)"
    r"|what\s+(?:number|age|amount|percentage|price))\b",
    re.IGNORECASE,
)


def can_answer(question: str, text: str, *, states_fact: bool | None = None) -> bool:
    """Whether ``text`` can answer ``question`` at all (the answerer's type check).

    The text must state a fact (``states_fact``, when known, else the text
    cues: not only questions, greetings and reactions). A question asking for
    someone ("who", "whom", "whose") needs a name the question does not
    contain; a question asking for a number ("how many / much / old / long /
    far / often", "what number / age / amount / percentage / price") needs a
    number. Only the speaker's own statements count.

    Args:
        question: the question.
        text: a record's text.
        states_fact: the record's ``states_fact`` flag, when the write path set it.

    Example:
        >>> can_answer("Who is Dariusz's roommate now?", "My roommate is Dieter now.")
        True
        >>> can_answer("Who is Dariusz's roommate now?", "Wow, that looks cozy!")
        False
        >>> can_answer("How many plants does Teodor have?", "I love my plants.")
        False

    Raises:
        InvalidRecordError: ``question`` or ``text`` is not a string.
    """
    from langchain_atma.text import cues, value_roots

    if not isinstance(question, str) or not isinstance(text, str):
        raise InvalidRecordError("can_answer takes a question and a text")
    if states_fact is False:
        return False
    seen = cues(text)
    if states_fact is None and not seen.statement:
        return False
    if _ASKS_NAME.search(question):
        return bool(seen.names - value_roots(question, min_chars=3))
    if _ASKS_NUMBER.search(question):
        return seen.numbers
    return True


_ASKS_TIME = re.compile(_LEAD + r"(?:when\b|(?:what|which)\s+(?:date|month|year)\b)", re.IGNORECASE)
_ASKS_YEAR = re.compile(r"\b(?:what|which)\s+year\b", re.IGNORECASE)
_ASKS_MONTH = re.compile(r"\b(?:what|which)\s+month\b", re.IGNORECASE)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_YEAR_IN_TEXT = re.compile(r"\b(?:in|since|from|back in)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_YEARS_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"a few|a couple of|several)\s+years?\s+ago\b",
    re.IGNORECASE,
)
# (pattern, phrase) for a relative time said in the text, read against the record's date
_RELATIVE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\byesterday\b", re.IGNORECASE), "the day before {date}"),
    (re.compile(r"\blast\s+night\b", re.IGNORECASE), "the night before {date}"),
    (re.compile(rf"\blast\s+({_WEEKDAYS})\b", re.IGNORECASE), "the {0} before {date}"),
    (re.compile(r"\blast\s+weekend\b", re.IGNORECASE), "the weekend before {date}"),
    (re.compile(r"\b(?:last\s+week|a\s+week\s+ago)\b", re.IGNORECASE), "the week before {date}"),
    (re.compile(r"\b(?:last\s+month|a\s+month\s+ago)\b", re.IGNORECASE), "the month before {date}"),
    (re.compile(r"\bnext\s+week\b", re.IGNORECASE), "the week after {date}"),
    (re.compile(r"\bnext\s+month\b", re.IGNORECASE), "the month after {date}"),
)


def asks_time(question: str) -> bool:
    """Whether the question asks for a time ("When ...", "What year / month / date ...").

    The question word comes first, after at most a leading "and", "so", "According
    to X," or a preposition ("In which year ...", "Since when ..."): "What happens
    when Ana moves?" asks for no time.

    Example:
        >>> asks_time("When did Ana move to Seattle?"), asks_time("Where does Ana live?")
        (True, False)
        >>> asks_time("In which year did Ana move?"), asks_time("What happens when Ana moves?")
        (True, False)

    Raises:
        InvalidQueryError: ``question`` is not a string.
    """
    if not isinstance(question, str):
        raise InvalidQueryError(f"question must be a string, got {type(question).__name__}")
    return bool(_ASKS_TIME.search(question))


def time_answer(question: str, text: str, time: datetime) -> str | None:
    """The time a record gives for a question that asks "when", else ``None``.

    The record's own time is when it was said; a relative time in its text is
    read against it ("we adopted her last week", said on 7 May 2023 -> "the week
    before 7 May 2023"; "yesterday", "last Friday", "last weekend", "last
    month", "next week", "next month", "two years ago" -> 2021, "a few years
    ago" -> "a few years before 2023"); a year the text names ("since 2018")
    answers "what year" and a "when" that the text dates that way. A question
    for the year or the month gets only the year ("2023") or the month
    ("May 2023").

    Args:
        question: the question.
        text: the chosen record's text.
        time: the record's time.

    Example:
        >>> from datetime import datetime
        >>> said = datetime(2023, 5, 7, 13, 56)
        >>> time_answer("When did Ana adopt the cat?", "We adopted her last week!", said)
        'The week before 7 May 2023'
        >>> time_answer("When did Ana go?", "Went to the support group.", said)
        '7 May 2023'
        >>> time_answer("What year did Ana start surfing?", "Surfing since 2018!", said)
        '2018'
        >>> time_answer("Where does Ana live?", "I live in Seattle.", said) is None
        True

    Raises:
        InvalidQueryError: ``question`` is not a string.
        InvalidRecordError: ``text`` is not a string or ``time`` not a datetime.
    """
    if not asks_time(question):
        return None
    if not isinstance(text, str) or not isinstance(time, datetime):
        raise InvalidRecordError("time_answer takes a record's text and its datetime")
    date = f"{time.day} {time.strftime('%B')} {time.year}"
    year = _YEAR_IN_TEXT.search(text)
    ago = _YEARS_AGO.search(text)
    if year:
        phrase = year.group(1)
    elif ago:
        count = ago.group(1).lower()
        n = int(count) if count.isdigit() else _NUMBER_WORDS.get(count)
        phrase = str(time.year - n) if n else f"{count} years before {time.year}"
    elif _ASKS_YEAR.search(question):
        phrase = str(time.year - 1) if re.search(r"\blast\s+year\b", text, re.I) else str(time.year)
    elif _ASKS_MONTH.search(question):
        phrase = f"{time.strftime('%B')} {time.year}"
    else:
        phrase = date
        for pat, template in _RELATIVE:
            m = pat.search(text)
            if m:
                phrase = template.format(*(g.capitalize() for g in m.groups()), date=date)
                break
    return phrase[:1].upper() + phrase[1:]


def _partners(row: EvidenceRow, by_id: dict[str, EvidenceRow]) -> list[EvidenceRow]:
    """Rows of the packet ``row`` is state-linked to (either direction)."""
    return [
        by_id[t]
        for t in dict.fromkeys(row.record.targets(*_PAIR_LINKS))
        if t in by_id and t != row.id
    ]


# clause boundaries: sentence ends, "but", ", and / while / although ...", and commas
_CLAUSE_BOUNDARY = re.compile(
    r"((?<=[.!?;])\s+|,?\s+\bbut\b\s+|,\s+(?:and|while|although|though|whereas)\s+|,\s+)",
    re.IGNORECASE,
)


def state_clauses(text: str, partners: Sequence[str]) -> str:
    """The clauses of ``text`` about its own state, without those restating a partner's.

    A record often names the other state of its pair while stating its own ("I
    no longer keep a corn snake. Now I've got a gecko"). A clause (a sentence,
    or a part after a comma, "but", "and", "while", "although") that names a
    value both records name (:func:`~langchain_atma.text.value_roots`,
    here ``corn``) and says that it ended ("no longer", "no more", "have
    ended"; a denial such as "won't fix the boiler" ends nothing) is about the
    other state: it is dropped, when at least one clause remains that names a
    value of its own. A "still" clause stays: what still holds is part
    of the current state ("I still love sushi, but only on Fridays"). Otherwise
    the text is returned whole.

    Args:
        text: the chosen record's text.
        partners: the texts of the records it is state-linked to.

    Example:
        >>> state_clauses("I no longer keep a corn snake. Now I've got a gecko!",
        ...               ["My corn snake is shedding again."])
        "Now I've got a gecko!"
        >>> state_clauses("I moved to Seattle.", ["I live in Boston."])
        'I moved to Seattle.'

    Raises:
        InvalidRecordError: ``text`` or a partner is not a string.
    """
    from langchain_atma.text import cues, value_roots

    if not isinstance(text, str) or not all(isinstance(p, str) for p in partners):
        raise InvalidRecordError("state_clauses takes a text and a list of texts")
    if not partners:
        return text
    theirs = frozenset().union(*(value_roots(p) for p in partners))
    restated = value_roots(text) & theirs
    if not restated:
        return text
    parts = _CLAUSE_BOUNDARY.split(text)
    clauses, seps = parts[0::2], parts[1::2]
    roots_of = [value_roots(c) for c in clauses]
    drop = {
        i
        for i, (c, roots) in enumerate(zip(clauses, roots_of, strict=True))
        if roots & restated and cues(c).ended
    }
    kept = [i for i in range(len(clauses)) if i not in drop]
    if not drop or not any(roots_of[i] - theirs for i in kept):
        return text
    return _join(clauses, seps, kept)


def _join(clauses: list[str], seps: list[str], kept: list[int]) -> str:
    """The kept clauses, each followed by the separator that followed it in the text."""
    out = clauses[kept[0]]
    for prev, i in zip(kept, kept[1:], strict=False):
        out += seps[prev] + clauses[i]
    return out.strip()


_RESTRICTIVE = re.compile(r"\b(?:only|except|unless|apart from|other than)\b", re.IGNORECASE)


def current_clauses(text: str, question: str) -> str:
    """The clauses of ``text`` that answer a question about the current state.

    A record that states a new state often also names the state it left or the
    one that merely continues ("I still play the accordion, but lately I've
    picked up the bass guitar", "Yusra moved out of the flat. The spare room is
    Malachy's now"). For a question about the current state that does not
    name that other value, a clause that says its state ended, or that only
    says an older state continues while another clause says what changed, is
    not the answer: it is dropped, when a clause that says what changed and
    names a value of its own remains. A question that names the value keeps it
    ("Does Maya still like sushi?" keeps "I still love sushi"). Otherwise the
    text is returned whole.

    Args:
        text: the chosen record's text.
        question: the question being answered.

    Example:
        >>> current_clauses("I still play the accordion, but lately I play the cello.",
        ...                 "What instrument does Ginevra reach for these days?")
        'lately I play the cello.'
        >>> current_clauses("I still love sushi, but only on Fridays now.",
        ...                 "Does Maya still like sushi?")
        'I still love sushi, but only on Fridays now.'

    Raises:
        InvalidRecordError: ``text`` or ``question`` is not a string.
    """
    from langchain_atma.text import cues, value_roots

    if not isinstance(text, str) or not isinstance(question, str):
        raise InvalidRecordError("current_clauses takes a text and a question")
    parts = _CLAUSE_BOUNDARY.split(text)
    clauses, seps = parts[0::2], parts[1::2]
    if len(clauses) < 2:
        return text
    # short values count here ("hip hop", "hiking"): a clause is only compared with
    # the other clauses of the same record and with the question
    asked = value_roots(question, min_chars=3)
    info = [(value_roots(c, min_chars=3), cues(c)) for c in clauses]
    # a clause that says what changed, naming its own value; a restriction ("only on
    # Fridays now") limits the continuing state instead of adding another one
    shifted = [
        i
        for i, (roots, cc) in enumerate(info)
        if roots
        and cc.shift
        and not cc.ended
        and not cc.still
        and not _RESTRICTIVE.search(clauses[i])
    ]
    drop: set[int] = set()
    for i, (roots, cc) in enumerate(info):
        if not roots or roots & asked or not any(j != i for j in shifted):
            continue
        if cc.ended or (cc.still and not cc.shift):
            drop.add(i)
    kept = [i for i in range(len(clauses)) if i not in drop]
    gone = frozenset().union(*(info[j][0] for j in drop)) if drop else frozenset()
    if not drop or not any(info[i][0] - gone for i in kept if i in shifted):
        return text
    return _join(clauses, seps, kept)


def create_answer_chain(model: BaseChatModel, *, with_labels: bool = True) -> Runnable[Any, str]:
    """``{"question", "view", "memories"} -> str`` chain: prompt | model | StrOutputParser.

    ``view`` is a view name (``"current"``...); the chain adds its one-line
    reading. ``memories`` is the serialized packet.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        >>> from langchain_core.messages import AIMessage
        >>> chain = create_answer_chain(
        ...     GenericFakeChatModel(messages=iter([AIMessage(content="Seattle.")])))
        >>> chain.invoke({"question": "Where now?", "view": "current",
        ...               "memories": "[1] current memory | 2023-09-02 | Seattle."})
        'Seattle.'
    """
    prompt = get_answer_prompt(with_labels)
    assign = RunnablePassthrough.assign(view_note=lambda x: view_note(x["view"]))
    return assign | prompt | model | StrOutputParser()


_NETWORK_ERRORS = frozenset(
    {
        "TransportError",
        "NetworkError",
        "ConnectError",
        "ConnectTimeout",
        "RemoteProtocolError",
        "ReadError",
        "WriteError",
    }
)


def failure_message(exc: BaseException, timeout_s: float) -> str:
    """A readable reason for a failed model call (``Answer.error``).

    * a timeout -> ``"timeout: no model output within <t> s"``;
    * the server cannot be reached or dropped the connection (``ConnectionError``,
      httpx transport errors) -> ``"cannot reach the model server (<type>: <msg>)"``;
    * the server's reply is not valid JSON (a broken stream, a proxy error page)
      -> ``"the model server sent an invalid response (<type>: <msg>)"``;
    * anything else -> ``"<type>: <msg>"``.

    Example:
        >>> failure_message(ConnectionRefusedError(111, "Connection refused"), 5)
        'cannot reach the model server (ConnectionRefusedError: [Errno 111] Connection refused)'
    """
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)):
        return f"timeout: no model output within {timeout_s:g} s"
    detail = f"{type(exc).__name__}: {str(exc)[:300]}"
    names = {cls.__name__ for cls in type(exc).__mro__}
    if isinstance(exc, ConnectionError) or names & _NETWORK_ERRORS:
        return f"cannot reach the model server ({detail})"
    if isinstance(exc, json.JSONDecodeError):
        return f"the model server sent an invalid response ({detail})"
    return detail


def _clean_output(text: object) -> str:
    if not isinstance(text, str):
        return ""
    return _THINK.sub(" ", text).strip()


class LLMAnswerer:
    """State-conditioned answerer: labelled packet + rules prompt + a chat model.

    Args:
        model: any LangChain chat model (e.g. ``ChatOllama(model="qwen2.5:3b")``).
        timeout_s: seconds to wait for the model; past it the answer fails.
        use_labels: serialize rows with state labels and use the labelled prompt;
            ``False`` gives the plain baseline / ablation prompt.
        with_time: show record dates in the packet.
        max_chars: most content characters per row.

    Note:
        In the sync path a timed-out call cannot be cancelled; it finishes in a
        background thread and its result is discarded.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        timeout_s: float = 60,
        use_labels: bool = True,
        with_time: bool = True,
        max_chars: int = MAX_ROW_CHARS,
    ) -> None:
        if (
            isinstance(timeout_s, bool)
            or not isinstance(timeout_s, (int, float))
            or not (timeout_s > 0)
        ):
            raise ConfigError(f"timeout_s must be a positive number, got {timeout_s!r}")
        if max_chars < 1:
            raise ConfigError(f"max_chars must be >= 1, got {max_chars}")
        self.model = model
        self.timeout_s = float(timeout_s)
        self.use_labels = use_labels
        self.with_time = with_time
        self.max_chars = max_chars
        self.chain = create_answer_chain(model, with_labels=use_labels)

    def _inputs(
        self, question: str, view: QueryView, rows: Sequence[EvidenceRow]
    ) -> dict[str, str]:
        memories = serialize_packet(
            rows, with_time=self.with_time, with_labels=self.use_labels, max_chars=self.max_chars
        )
        return {
            "question": clean_text(question, _MAX_QUESTION_CHARS),
            "view": view.value,
            "memories": memories,
        }

    def _finish(self, raw: object, view: QueryView, ids: list[str]) -> Answer:
        text = _clean_output(raw)
        if not text:
            return Answer(
                answer="", view=view, evidence_ids=ids, status="failed", error="empty model output"
            )
        return Answer(answer=text, view=view, evidence_ids=ids, status="answered")

    def _failed(self, exc: BaseException, view: QueryView, ids: list[str]) -> Answer:
        return Answer(
            answer="",
            view=view,
            evidence_ids=ids,
            status="failed",
            error=failure_message(exc, self.timeout_s),
        )

    def answer(
        self,
        question: str,
        profile: QueryProfile | None,
        rows: Sequence[EvidenceRow] | EvidencePacket,
    ) -> Answer:
        """Answer with the model (``profile=None`` profiles the question).

        Raises:
            InvalidQueryError: for a blank question or a bad profile.
            InvalidRecordError: when rows are not EvidenceRow objects.
        """
        q, prof, items = _check_inputs(question, profile, rows)
        if not items:
            return _no_evidence(prof.view)
        ids = [r.id for r in items]
        inputs = self._inputs(q, prof.view, items)
        try:
            raw = invoke_bounded(self.chain, inputs, timeout_s=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - every model failure becomes visible
            return self._failed(exc, prof.view, ids)
        return self._finish(raw, prof.view, ids)

    async def aanswer(
        self,
        question: str,
        profile: QueryProfile | None,
        rows: Sequence[EvidenceRow] | EvidencePacket,
    ) -> Answer:
        """Async :meth:`answer` (the model call is cancelled on timeout)."""
        q, prof, items = _check_inputs(question, profile, rows)
        if not items:
            return _no_evidence(prof.view)
        ids = [r.id for r in items]
        inputs = self._inputs(q, prof.view, items)
        try:
            raw = await ainvoke_bounded(self.chain, inputs, timeout_s=self.timeout_s)
        except Exception as exc:  # noqa: BLE001 - every model failure becomes visible
            return self._failed(exc, prof.view, ids)
        return self._finish(raw, prof.view, ids)
