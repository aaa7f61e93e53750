"""Tests of the rule-based query profiler and its lexicon."""

from __future__ import annotations

import time

import pytest

from langchain_atma.errors import ConfigError, InvalidQueryError
from langchain_atma.retrieval.lexicon import (
    DEFAULT_LEXICON,
    HintLexicon,
    normalize_text,
)
from langchain_atma.retrieval.packets import QueryView
from langchain_atma.retrieval.profiler import (
    MAX_ANALYSED_CHARS,
    QueryProfiler,
    profile_query,
)

CURRENT_QUESTIONS = [
    "Which city does Caroline live in now?",
    "Where is Caroline living these days?",
    "What's Melanie's job nowadays?",
    "As of today, what car does Jon drive?",
    "What does Gina do for work right now?",
    "What is Caroline's current address?",
    "Where does Caroline currently work?",
    "Does Melanie still play the violin?",
    "What is her present-day hobby?",
    "What pet does John have at the moment?",
    "What is Caroline's latest project?",
    "What's the most recent phone Tim bought?",
    "Which gym does Joanna go to at present?",
    "What is Caroline's new city?",
    "Where does Nate live after the move?",
    "Following her relocation, where is Jolene based?",
    "What is Audrey's diet like today?",
    "WHERE DOES CAROLINE LIVE NOW",
    "what’s her job at this point",
    "Is Sam no longer vegetarian?",
    "Has Evan's address remained the same up to now?",
]

HISTORICAL_QUESTIONS = [
    "Which city did Caroline live in before her move?",
    "What was Melanie's job before she moved?",
    "Where did Caroline live before?",
    "Where did Jon use to work?",
    "What car did Gina used to drive?",
    "What was Caroline's previous address?",
    "Where did Melanie work previously?",
    "What was her former employer?",
    "Originally, which city was Caroline from?",
    "What did Tim study initially?",
    "What hobby did John have at first?",
    # "first" before a verb of saying: the earliest statement
    "Which snack did Priya first describe as her weakness?",
    "What did Omar first call his favourite band?",
    "How many plants did Lea first mention owning?",
    "Which handmade hobby did Caroline mention first?",
    "Where did Joanna live prior to moving?",
    "What phone did Nate have earlier?",
    "Where did Caroline once live?",
    "What was Audrey's last job?",
    "What was his old phone number?",
    "Which team did Sam support back then?",
    "What did Evan's ex-wife do?",
    "What was Jolene's diet two years ago?",
    "In the past, what did Maria drink in the morning?",
    "Which city does Caroline no longer live in?",
    "What food doesn't Deborah eat anymore?",
]

TRANSITION_QUESTIONS = [
    "How did Caroline's job change?",
    "When did Caroline move from Boston to Denver?",
    "Why did Melanie switch careers?",
    "What did Jon first study and then switch to?",
    "How has Gina's diet evolved?",
    "Since when has Tim been vegetarian?",
    "What has Nate done ever since?",
    "What did John's hobby turn into?",
    "What did Joanna become after college?",
    "What did Audrey replace her laptop with?",
    "Where did Sam live before, and where does he live now?",
    "Does Evan still live where he used to?",
    "What is the difference between Maria's old and current job?",
    "How is Jolene's routine different from last year?",
    "What transition did Deborah go through at work?",
    "Describe how Caroline's living situation changed then and now.",
]

NEUTRAL_QUESTIONS = [
    "What did Caroline research?",
    "When did Melanie paint a sunrise?",
    "What is Caroline's identity?",
    "Where does Caroline live?",
    "How many children does Melanie have?",
    "Who is Jon's best friend?",
    "What kind of art does Gina make?",
    "How old is Tim?",
    "What does Nate do before bed?",
    "What did Joanna do on New Year's Eve?",
    "How many times a week does Audrey run?",
    "What is the name of Melanie's original song?",
    "What is Caroline's last name?",
    "Which books has John read in the past few months?",
    "Why did Sam go to New York?",
    "What did Evan say about the concert?",
    "What does Maria like to cook every now and then?",
]


@pytest.mark.parametrize("question", CURRENT_QUESTIONS)
def test_current_view(question: str) -> None:
    prof = profile_query(question)
    assert prof.view is QueryView.CURRENT, prof.matched
    assert prof.current_hints >= 1


@pytest.mark.parametrize("question", HISTORICAL_QUESTIONS)
def test_historical_view(question: str) -> None:
    prof = profile_query(question)
    assert prof.view is QueryView.HISTORICAL, prof.matched


@pytest.mark.parametrize("question", TRANSITION_QUESTIONS)
def test_transition_view(question: str) -> None:
    prof = profile_query(question)
    assert prof.view is QueryView.TRANSITION, prof.matched


@pytest.mark.parametrize("question", NEUTRAL_QUESTIONS)
def test_neutral_view(question: str) -> None:
    prof = profile_query(question)
    assert prof.view is QueryView.NEUTRAL, prof.matched
    assert prof.historical_hints == prof.current_hints == prof.change_hints == 0


def test_enough_phrasings_per_view() -> None:
    for questions in (CURRENT_QUESTIONS, HISTORICAL_QUESTIONS, TRANSITION_QUESTIONS,
                      NEUTRAL_QUESTIONS):
        assert len(set(questions)) >= 15


# ------------------------------------------------------------------ tricky words
def test_still_is_current() -> None:
    prof = profile_query("Does she still work at the bakery?")
    assert prof.view is QueryView.CURRENT
    assert "current:still" in prof.matched


def test_used_to_is_historical() -> None:
    prof = profile_query("Where did he used to go running?")
    assert prof.view is QueryView.HISTORICAL
    assert "historical:used to" in prof.matched


def test_no_longer_counts_once_as_current_and_sets_negation() -> None:
    prof = profile_query("Is Mark no longer working as a nurse?")
    assert prof.current_hints == 1  # "no longer" counted once, not also "longer"
    assert prof.view is QueryView.CURRENT
    assert prof.negation


def test_anymore_yes_no_is_current_wh_is_historical() -> None:
    yes_no = profile_query("Does Mark drink coffee anymore?")
    wh = profile_query("What drink doesn't Mark have anymore?")
    assert yes_no.view is QueryView.CURRENT and yes_no.negation
    assert wh.view is QueryView.HISTORICAL and wh.negation
    assert wh.current_hints == 1  # counts are reported unchanged


def test_ever_since_is_change() -> None:
    prof = profile_query("What has Lisa been doing ever since?")
    assert prof.change_hints == 1 and prof.view is QueryView.TRANSITION


def test_both_old_and_current_hints_give_transition() -> None:
    prof = profile_query("What did Lisa originally study and what does she study now?")
    assert prof.historical_hints >= 1 and prof.current_hints >= 1
    assert prof.view is QueryView.TRANSITION


def test_change_tie_goes_to_the_state_side() -> None:
    # one change hint against one state hint: change does not dominate
    tie_hist = profile_query("Which old habit did Lisa change?")
    assert (tie_hist.historical_hints, tie_hist.change_hints) == (1, 1)
    assert tie_hist.view is QueryView.HISTORICAL
    tie_cur = profile_query("Which car does Lisa still want to swap?")
    assert (tie_cur.current_hints, tie_cur.change_hints) == (1, 1)
    assert tie_cur.view is QueryView.CURRENT
    # a change event inside a before/after phrase is one state hint
    assert profile_query("What was Lisa's job before the switch?").view is QueryView.HISTORICAL
    assert profile_query("What does Lisa drive after switching?").view is QueryView.CURRENT


def test_change_dominates() -> None:
    prof = profile_query("How did her plans change when she switched jobs?")
    assert prof.change_hints >= 2
    assert prof.view is QueryView.TRANSITION


def test_tense_alone_is_not_a_hint() -> None:
    assert profile_query("What was Lisa's favourite book?").view is QueryView.NEUTRAL
    assert profile_query("When did Lisa go hiking?").view is QueryView.NEUTRAL


def test_word_boundaries() -> None:
    # "know" contains "now", "oldest" contains "old", "stillness" contains "still"
    prof = profile_query("Do you know the oldest stillness technique?")
    assert prof.view is QueryView.NEUTRAL
    assert prof.matched == []


def test_contractions_and_punctuation() -> None:
    assert normalize_text("Didn't she—originally—live in L.A.?") == (
        "did not she originally live in l a"
    )
    prof = profile_query("Where didn't she live, originally?!")
    assert prof.view is QueryView.HISTORICAL and prof.negation


def test_case_and_unicode_quotes() -> None:
    assert profile_query("WHAT’S HER JOB THESE DAYS").view is QueryView.CURRENT


# ------------------------------------------------------------------ guards
def test_guards() -> None:
    neg = profile_query("Which sport does Leo never play now?")
    assert neg.negation and not neg.scope
    scope = profile_query("What does Leo eat only on weekends?")
    assert scope.scope and not scope.negation and not scope.update
    update = profile_query("What is Leo's job after the update?")
    assert update.update
    none = profile_query("What does Leo eat?")
    assert not (none.negation or none.scope or none.update)


def test_guards_do_not_change_the_view() -> None:
    assert profile_query("Where does Leo work at home now?").view is QueryView.CURRENT


def test_matched_lists_hints_in_question_order() -> None:
    prof = profile_query("Before, where did she live, and where does she live now?")
    views = [m for m in prof.matched if m.split(":")[0] in {"historical", "current", "change"}]
    assert views == ["historical:before", "current:now"]


def test_query_kept_in_full() -> None:
    q = "Where does she live now?"
    assert profile_query(q).query == q


# ------------------------------------------------------------------ bad input / long input
@pytest.mark.parametrize("bad", ["", "   ", "\n\t", None, 42, b"now", ["now"]])
def test_bad_input_raises(bad: object) -> None:
    with pytest.raises(InvalidQueryError):
        profile_query(bad)  # type: ignore[arg-type]


def test_long_question_is_truncated_for_analysis() -> None:
    head = "Where does she live " + "really " * 10
    tail = " now" * 5000
    q = head + "x" * (MAX_ANALYSED_CHARS) + tail
    t0 = time.perf_counter()
    prof = profile_query(q)
    assert time.perf_counter() - t0 < 1.0
    assert prof.current_hints == 0  # the hints beyond the first 2,000 chars are ignored
    assert prof.query == q
    assert profile_query("now " * 10_000).view is QueryView.CURRENT


def test_profile_is_deterministic() -> None:
    q = "What was her job before she moved to Denver?"
    assert profile_query(q) == profile_query(q)


# ------------------------------------------------------------------ extensible lexicon
def test_profiler_with_extended_lexicon() -> None:
    q = "Where is Bob as of this quarter?"
    assert profile_query(q).view is QueryView.NEUTRAL
    prof = QueryProfiler(DEFAULT_LEXICON.extend(current=["as of this quarter"]))
    assert prof(q).view is QueryView.CURRENT
    assert profile_query(q).view is QueryView.NEUTRAL  # default lexicon unchanged


def test_lexicon_phrase_syntax() -> None:
    lex = HintLexicon(
        historical=("way* back",), current=("right|just now",), change=("first ... then",),
        cessation=(), negation=(), scope=(), update=(), ignore=(),
    )
    prof = QueryProfiler(lex)
    assert prof("What was it ways back?").historical_hints == 1
    assert prof("Is it there just now?").current_hints == 1
    assert prof("First it was tea, then coffee.").change_hints == 1
    # the gap is bounded
    assert prof("First a b c d e f g h i j then").change_hints == 0


def test_lexicon_validation() -> None:
    with pytest.raises(ConfigError):
        DEFAULT_LEXICON.extend(nonsense=["x"])
    with pytest.raises(ConfigError):
        DEFAULT_LEXICON.extend(current=["bad-token!"])
    with pytest.raises(ConfigError):
        DEFAULT_LEXICON.extend(current=["... now"])
    with pytest.raises(ConfigError):
        DEFAULT_LEXICON.extend(current="now")  # a string, not a list
    with pytest.raises(ConfigError):
        QueryProfiler(max_chars=0)
    with pytest.raises(ConfigError):
        QueryProfiler(lexicon="nope")  # type: ignore[arg-type]
