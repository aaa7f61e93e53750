"""Rule-based query profiler psi(q): which state view a question asks for.

No model is involved: the profiler normalizes the question, masks non-temporal
senses of hint words, counts hint phrases from
:mod:`langchain_atma.retrieval.lexicon`, and decides the view:

1. **transition** when change hints dominate (``change > max(historical,
   current)``), or when both historical and current hints appear ("Where did
   she live before, and where does she live now?");
2. otherwise **historical** or **current**, whichever count is larger;
3. **neutral** when no view hint appears (tense alone is not a hint).

A tie between change hints and one side goes to that side: "Which old habit
did she change?" asks for the historical value. One refinement is
documented in :data:`~langchain_atma.retrieval.lexicon.CESSATION_HINTS`: a
wh-question whose only hints are cessation phrases ("Which city does she no
longer live in?") asks for the value that stopped, so it gets the historical
view; the hint counts are reported unchanged.

Guards (``negation``, ``scope``, ``update``) are set when any phrase of the
matching guard list appears; they do not change the view. ``matched`` lists the
hint and guard phrases found, in question order, as ``"<list>:<phrase>"``.

Only the first :data:`MAX_ANALYSED_CHARS` characters of a question are analysed
(hint words sit at the start of real questions, and this bounds the cost of
pathological inputs); ``QueryProfile.query`` keeps the full question.

Example:
    >>> from langchain_atma.retrieval.profiler import profile_query
    >>> profile_query("Where does Caroline live now?").view.value
    'current'
    >>> profile_query("Which city did Caroline live in before her move?").view.value
    'historical'
    >>> profile_query("When did Caroline move from Boston to Denver?").view.value
    'transition'
    >>> profile_query("What did Caroline research?").view.value
    'neutral'
"""

from __future__ import annotations

import re

from langchain_atma._checks import positive_int
from langchain_atma.errors import ConfigError, InvalidQueryError
from langchain_atma.retrieval.lexicon import (
    DEFAULT_LEXICON,
    HintLexicon,
    HintMatch,
    normalize_text,
)
from langchain_atma.retrieval.packets import QueryProfile, QueryView

__all__ = ["MAX_ANALYSED_CHARS", "QueryProfiler", "profile_query"]

MAX_ANALYSED_CHARS = 2_000
"""Characters of a question the profiler analyses (the rest is ignored)."""

_VIEW_LISTS = ("historical", "current", "change")
_GUARD_LISTS = ("negation", "scope", "update")
_WH_START = re.compile(r"^(?:\S+\s+){0,3}?(?:what|which|where|who|whom|whose|how many|how much)\b")


def _resolve_overlaps(matches: list[HintMatch]) -> list[HintMatch]:
    """Keep the longest of overlapping matches (ties: earliest), in text order."""
    chosen: list[HintMatch] = []
    for m in sorted(matches, key=lambda h: (-(h.end - h.start), h.start)):
        if all(m.end <= c.start or m.start >= c.end for c in chosen):
            chosen.append(m)
    return sorted(chosen, key=lambda h: h.start)


def _only_cessation(view_hits: list[HintMatch], cessation_hits: list[HintMatch]) -> bool:
    """Whether every view hint is a current hint that is also a cessation phrase."""
    spans = {(h.start, h.end) for h in cessation_hits}
    return bool(view_hits) and all(
        h.category == "current" and (h.start, h.end) in spans for h in view_hits
    )


class QueryProfiler:
    """A rule-based profiler bound to one :class:`HintLexicon`.

    Args:
        lexicon: the word lists (default: ``DEFAULT_LEXICON``); use
            ``DEFAULT_LEXICON.extend(...)`` to add phrases.
        max_chars: characters of the question analysed (default 2,000).

    Example:
        >>> from langchain_atma.retrieval.lexicon import DEFAULT_LEXICON
        >>> prof = QueryProfiler(DEFAULT_LEXICON.extend(current=["as we speak"]))
        >>> prof("Where is Bob as we speak?").view.value
        'current'
    """

    def __init__(
        self, lexicon: HintLexicon | None = None, *, max_chars: int = MAX_ANALYSED_CHARS
    ) -> None:
        if lexicon is not None and not isinstance(lexicon, HintLexicon):
            raise ConfigError(f"lexicon must be a HintLexicon, got {type(lexicon).__name__}")
        self._lexicon = lexicon if lexicon is not None else DEFAULT_LEXICON
        self._max_chars = positive_int(max_chars, "max_chars")

    @property
    def lexicon(self) -> HintLexicon:
        """The word lists in use."""
        return self._lexicon

    @property
    def max_chars(self) -> int:
        """Characters of a question that are analysed."""
        return self._max_chars

    def profile(self, query: str) -> QueryProfile:
        """Profile one question.

        Raises:
            InvalidQueryError: when ``query`` is not a string or is blank.
        """
        if not isinstance(query, str):
            raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
        if not query.strip():
            raise InvalidQueryError("query is empty or whitespace")
        lex = self._lexicon
        text = lex.mask(normalize_text(query[: self._max_chars]))

        view_hits = _resolve_overlaps(
            [m for name in _VIEW_LISTS for m in lex.find_normalized(name, text)]
        )
        counts = {name: sum(1 for m in view_hits if m.category == name) for name in _VIEW_LISTS}
        hist, cur, chg = counts["historical"], counts["current"], counts["change"]

        guard_hits: list[HintMatch] = []
        for name in _GUARD_LISTS:
            guard_hits.extend(_resolve_overlaps(lex.find_normalized(name, text)))

        if chg > 0 and chg > max(hist, cur):
            view = QueryView.TRANSITION
        elif hist > 0 and cur > 0:
            view = QueryView.TRANSITION
        elif hist > cur:
            view = QueryView.HISTORICAL
        elif cur > hist:
            view = QueryView.CURRENT
            if _only_cessation(view_hits, lex.find_normalized("cessation", text)) and (
                _WH_START.search(text)
            ):
                view = QueryView.HISTORICAL
        else:
            view = QueryView.NEUTRAL

        all_hits = sorted([*view_hits, *guard_hits], key=lambda h: (h.start, h.category))
        return QueryProfile(
            query=query,
            view=view,
            historical_hints=hist,
            current_hints=cur,
            change_hints=chg,
            negation=any(h.category == "negation" for h in guard_hits),
            scope=any(h.category == "scope" for h in guard_hits),
            update=any(h.category == "update" for h in guard_hits),
            matched=[f"{h.category}:{h.phrase}" for h in all_hits],
        )

    def __call__(self, query: str) -> QueryProfile:
        """Same as :meth:`profile`."""
        return self.profile(query)


_DEFAULT_PROFILER = QueryProfiler()


def profile_query(query: str) -> QueryProfile:
    """Profile a question with the default lexicon (pure, deterministic).

    Raises:
        InvalidQueryError: when ``query`` is not a string or is blank.
    """
    return _DEFAULT_PROFILER.profile(query)
