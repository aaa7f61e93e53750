"""The query profiler psi(q): which state view a question asks for (learned).

The view head of the learned state model (:mod:`langchain_atma.state_model`)
reads the question as ``[CLS] question [SEP]`` and gives the probabilities of
the four views:

* **current**: the state as it is now ("these days", "still", present tense);
* **historical**: an earlier state ("before", "used to", "originally", past
  tense about a state that may have changed);
* **transition**: the change itself (when, why, from what to what);
* **neutral**: no state view matters (a one-off event, an opinion).

The most probable view wins. It was trained on the questions of the project's
corpus (``training/``), written with many phrasings of each view; the
measured accuracy per benchmark file is in ``docs/BENCHMARKS.md``. Only the
first :data:`MAX_ANALYSED_CHARS` characters of a question are read (the model
reads at most 160 tokens anyway; when they are blank the view is neutral);
``QueryProfile.query`` keeps the full question. Answers are cached per question
(:data:`CACHE_SIZE` questions).

Example:
    >>> from langchain_atma.retrieval.profiler import profile_query
    >>> profile_query("Where does Ines live these days?").view.value  # doctest: +SKIP
    'current'
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from langchain_atma._checks import positive_int
from langchain_atma.errors import InvalidQueryError
from langchain_atma.retrieval.packets import QueryProfile, QueryView
from langchain_atma.state_model import StateModel, default_model

__all__ = ["CACHE_SIZE", "MAX_ANALYSED_CHARS", "QueryProfiler", "profile_query"]

MAX_ANALYSED_CHARS = 2_000
"""Characters of a question the profiler reads (the rest is ignored)."""
CACHE_SIZE = 4096
"""Questions whose profile a profiler remembers."""


class QueryProfiler:
    """Picks the view of a question with the learned state model.

    Args:
        model: a state model (default: the shipped one, shared with the judge).
        max_chars: characters of the question read (default 2,000).

    Raises:
        JudgeModelError: the shipped model is missing or corrupt.
    """

    def __init__(
        self, model: StateModel | None = None, *, max_chars: int = MAX_ANALYSED_CHARS
    ) -> None:
        self._model = model
        self._max_chars = positive_int(max_chars, "max_chars")
        self._cache: OrderedDict[str, QueryProfile] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def model(self) -> StateModel:
        """The state model in use (loaded on first use)."""
        if self._model is None:
            self._model = default_model()
        return self._model

    @property
    def max_chars(self) -> int:
        """Characters of a question that are read."""
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
        text = query[: self._max_chars]
        if not text.strip():  # nothing to read in the analysed part
            return QueryProfile(query=query, view=QueryView.NEUTRAL)
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
        if hit is None:
            model = self.model
            probs = model.view_probabilities([text])[0]
            hit = QueryProfile(
                query=text,
                view=QueryView(model.views[int(probs.argmax())]),
                probabilities={
                    v: round(float(p), 4) for v, p in zip(model.views, probs, strict=True)
                },
            )
            with self._lock:
                self._cache[text] = hit
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        return hit.model_copy(update={"query": query})

    def __call__(self, query: str) -> QueryProfile:
        """Same as :meth:`profile`."""
        return self.profile(query)


_DEFAULT: QueryProfiler | None = None
_DEFAULT_LOCK = threading.Lock()


def profile_query(query: str) -> QueryProfile:
    """Profile a question with the shipped model (deterministic).

    Raises:
        InvalidQueryError: when ``query`` is not a string or is blank.
    """
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = QueryProfiler()
    return _DEFAULT.profile(query)
