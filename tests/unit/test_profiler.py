"""Tests of the learned query profiler (view head of the state model)."""

from __future__ import annotations

import pytest

from langchain_atma.errors import ConfigError, InvalidQueryError
from langchain_atma.retrieval.packets import QueryView
from langchain_atma.retrieval.profiler import MAX_ANALYSED_CHARS, QueryProfiler, profile_query


@pytest.mark.parametrize(
    ("question", "view"),
    [
        ("Which gym does Ines go to these days?", QueryView.CURRENT),
        ("What car is Tobiah driving at the moment?", QueryView.CURRENT),
        ("Which gym did Ines use to go to, before the current one?", QueryView.HISTORICAL),
        ("Which firm employed Tobiah originally, prior to his retraining?", QueryView.HISTORICAL),
        ("When did Ines switch gyms, and why?", QueryView.TRANSITION),
    ],
)
def test_clear_questions_get_their_view(question: str, view: QueryView) -> None:
    assert profile_query(question).view is view


def test_profile_carries_probabilities_and_is_cached() -> None:
    prof = QueryProfiler()
    a = prof("Which gym does Ines go to these days?")
    assert set(a.probabilities) == {"current", "historical", "transition", "neutral"}
    assert sum(a.probabilities.values()) == pytest.approx(1.0, abs=1e-3)
    assert a.probabilities[a.view.value] == max(a.probabilities.values())
    b = prof.profile("Which gym does Ines go to these days?")
    assert b == a and len(prof._cache) == 1


def test_only_the_first_chars_are_read_but_the_query_is_kept() -> None:
    prof = QueryProfiler(max_chars=40)
    long_q = "Which gym does Ines go to these days? " + "and also " * 500
    p = prof.profile(long_q)
    assert p.query == long_q and prof.max_chars == 40
    assert p.view == prof.profile(long_q[:40]).view
    assert QueryProfiler().max_chars == MAX_ANALYSED_CHARS


def test_bad_input() -> None:
    for bad in ("", "   ", None, 3):
        with pytest.raises(InvalidQueryError):
            profile_query(bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        QueryProfiler(max_chars=0)
