"""The default proposal gate: hubness normalization, the per-write cap, units, modes."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest
from pydantic import ValidationError

from langchain_atma.bank.gate import (
    GateConfig,
    GateScores,
    ProposalGate,
    hub_scores,
    numbers_with_units,
    shares_changed_quantity,
)
from langchain_atma.bank.sentry import Sentry
from langchain_atma.bank.write_graph import CosineGate
from langchain_atma.errors import SentryError

DIM = 16


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def _hub_pool() -> tuple[np.ndarray, np.ndarray]:
    """A pool with a hub cluster (5 records near direction e0) and one specific record.

    The new record is closer to the hub H (index 0) than to the specific record
    (index 5) by raw cosine; H is close to the 4 other cluster members, the
    specific record to nothing.
    """
    e = np.eye(DIM, dtype=np.float32)
    hub = [_unit(e[0] + 0.25 * e[1 + i]) for i in range(5)]
    specific = _unit(0.7 * e[8] + 0.71 * e[9])
    other = _unit(e[10] + 0.2 * e[11])
    pool = np.stack([*hub, specific, other])
    new = _unit(0.75 * e[0] + 0.66 * e[8])
    return new, pool


def test_hub_scores_rank_the_specific_record_above_the_hub() -> None:
    new, pool = _hub_pool()
    t, cos, r_new, r_old = hub_scores(new, pool, gamma=1.5, neighbours=5)
    assert int(np.argmax(cos)) in range(5)  # raw cosine prefers a hub member
    assert cos[0] > cos[5]
    assert int(np.argmax(t)) == 5  # the hubness-normalized score prefers the specific one
    assert r_old[0] > 0.5 > r_old[5]
    assert np.all(r_new == r_new[0])
    # gamma = 0 is raw cosine
    t0, *_ = hub_scores(new, pool, gamma=0.0)
    np.testing.assert_allclose(t0, cos, atol=1e-6)


def test_gate_flags_the_specific_pair_and_not_the_hub() -> None:
    new, pool = _hub_pool()
    hub_gate = ProposalGate(CosineGate(), GateConfig(tau=-0.1, max_flags=1))
    s = hub_gate.score(new, pool)
    assert isinstance(s, GateScores)
    assert s.flagged.tolist() == [False] * 5 + [True, False]
    # a plain cosine threshold that admits the specific record also admits all hubs
    assert (s.similarity >= s.similarity[5]).sum() >= 6


def test_cap_keeps_the_highest_scores() -> None:
    rng = np.random.default_rng(0)
    new = _unit(rng.normal(size=DIM))
    pool = np.stack([_unit(new + 0.05 * k * rng.normal(size=DIM)) for k in range(1, 7)])
    loose = GateConfig(tau=-2.0, max_flags=None)
    capped = GateConfig(tau=-2.0, max_flags=2)
    all_flags = ProposalGate(CosineGate(), loose).score(new, pool)
    two = ProposalGate(CosineGate(), capped).score(new, pool)
    assert all_flags.flagged.all()
    assert int(two.flagged.sum()) == 2
    top2 = set(np.argsort(-two.t)[:2].tolist())
    assert set(np.flatnonzero(two.flagged).tolist()) == top2
    np.testing.assert_array_equal(all_flags.t, two.t)  # the cap changes flags, not scores


def test_scores_are_deterministic_and_follow_the_candidates() -> None:
    rng = np.random.default_rng(1)
    new = _unit(rng.normal(size=384))
    pool = np.stack([_unit(new + rng.normal(size=384)) for _ in range(9)])
    gate = ProposalGate(Sentry.default(), GateConfig(tau=-0.5))
    s1, s2 = gate.score(new, pool), gate.score(new, pool)
    for name in ("a", "b", "d", "t", "r_old", "flagged"):
        np.testing.assert_array_equal(getattr(s1, name), getattr(s2, name))
    perm = rng.permutation(9)
    s3 = gate.score(new, pool[perm])
    np.testing.assert_allclose(s3.t, s1.t[perm], atol=1e-6)
    np.testing.assert_array_equal(s3.flagged, s1.flagged[perm])


def test_paper_mode_uses_the_sentry_rule() -> None:
    rng = np.random.default_rng(2)
    new = _unit(rng.normal(size=384))
    pool = np.stack([_unit(new + 0.6 * rng.normal(size=384)) for _ in range(12)])
    sentry = Sentry.default()
    paper = ProposalGate(sentry, GateConfig(mode="paper")).score(new, pool)
    bare = sentry.score(new, pool)
    np.testing.assert_array_equal(paper.flagged, bare.flagged)
    np.testing.assert_array_equal(paper.a, bare.a)


def test_small_pools_still_flag_a_close_record() -> None:
    # one record in the bank: nothing to normalize against, a close pair is flagged
    new = _unit(np.arange(1, DIM + 1, dtype=np.float32))
    old = _unit(new + 0.1)
    far = _unit(-new + 0.05)
    gate = ProposalGate(CosineGate(), GateConfig())
    assert gate.score(new, old[None, :]).flagged.tolist() == [True]
    assert gate.score(new, far[None, :]).flagged.tolist() == [False]
    assert len(gate.score(new, np.zeros((0, DIM), np.float32))) == 0


def test_numbers_with_shared_units() -> None:
    rent_old = numbers_with_units("I pay $1,900 a month for my place.")
    rent_new = numbers_with_units("After the renewal I'm paying $2,050 a month.")
    assert rent_old[0] == {"1900"} and "month" in rent_old[1]
    assert shares_changed_quantity(rent_new, rent_old)
    same = numbers_with_units("Still $1,900 a month, thankfully.")
    assert not shares_changed_quantity(same, rent_old)  # same number: no change
    dogs = numbers_with_units("I have 2 dogs.")
    run = numbers_with_units("I ran 5 km today.")
    assert not shares_changed_quantity(dogs, run)  # no shared word
    assert not shares_changed_quantity(numbers_with_units("no numbers here"), rent_old)


def test_unit_bonus_lifts_a_changed_quantity() -> None:
    new, pool = _hub_pool()
    texts = ["ok"] * 6 + ["My commute is 35 minutes."]
    plain = ProposalGate(CosineGate(), GateConfig(unit_bonus=0.0))
    bonus = ProposalGate(CosineGate(), GateConfig(unit_bonus=0.1))
    kw = {"new_text": "My commute is 90 minutes now.", "cand_texts": texts}
    s0, s1 = plain.score(new, pool, **kw), bonus.score(new, pool, **kw)
    assert s1.units.tolist() == [0.0] * 6 + [1.0]
    assert s1.t[6] == pytest.approx(s0.t[6] + 0.1)
    np.testing.assert_array_equal(s1.t[:6], s0.t[:6])
    with pytest.raises(SentryError, match="candidate texts"):
        bonus.score(new, pool, new_text="x", cand_texts=["a"])


def test_min_gap_blocks_recent_candidates_only_when_set() -> None:
    new, pool = _hub_pool()
    now = datetime(2024, 1, 2, 12, 0)
    times = [now - timedelta(days=30)] * 5 + [now - timedelta(minutes=5), now - timedelta(days=1)]
    kw = {"new_time": now, "cand_times": times}
    off = ProposalGate(CosineGate(), GateConfig(tau=-0.1)).score(new, pool, **kw)
    on = ProposalGate(CosineGate(), GateConfig(tau=-0.1, min_gap_s=3600)).score(new, pool, **kw)
    assert off.flagged[5] and not on.flagged[5]
    assert on.t[5] == -np.inf


def test_config_is_validated() -> None:
    with pytest.raises(ValidationError):
        GateConfig(mode="loose")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        GateConfig(neighbours=0)
    with pytest.raises(ValidationError):
        GateConfig(max_flags=0)
    with pytest.raises(ValidationError):
        GateConfig(taux=0.1)  # type: ignore[call-arg]
    with pytest.raises(SentryError):
        ProposalGate(object())  # type: ignore[arg-type]


def test_real_text_hub_is_not_flagged(minilm) -> None:  # noqa: ANN001 - session fixture
    pool = [
        "Thanks so much, that means a lot to me!",
        "Aw, thank you! You're the best.",
        "Thank you, I really appreciate it!",
        "Thanks! That's so sweet of you.",
        "Haha thanks, you always make me smile!",
        "I live in Boston with my sister.",
        "The weather has been lovely this week.",
    ]
    new = "Thanks! Big news: I moved to Denver last month."
    vecs = np.asarray(minilm.encode([*pool, new]), dtype=np.float32)
    s = ProposalGate(Sentry.default()).score(vecs[-1], vecs[:-1], new_text=new, cand_texts=pool)
    boston = 5
    assert s.similarity[boston] < max(s.similarity[:5])  # raw cosine prefers a "thanks" hub
    assert int(np.argmax(s.t)) == boston
    assert s.flagged[boston] and not s.flagged[:5].any()  # no "thanks" hub is flagged
    plain = ProposalGate(Sentry.default(), GateConfig(cue_bonus=0.0)).score(
        vecs[-1], vecs[:-1], new_text=new, cand_texts=pool)
    assert plain.flagged.tolist() == [i == boston for i in range(len(pool))]


def test_text_cues_read_statements_and_change_wording() -> None:
    from langchain_atma.bank.judge import text_cues

    assert text_cues("How are you?") == text_cues("How was the trip?")
    assert not text_cues("How are you?").statement
    assert not text_cues("Wow, that's great!").statement
    plain = text_cues("I love painting with watercolors.")
    assert plain.statement and not plain.change
    for changed in ("I switched to a Motorola last month.", "We no longer keep chickens.",
                    "These days I mostly cycle to work.", "I also started learning Greek."):
        assert text_cues(changed).change, changed


def test_statements_only_never_flags_a_pair_with_a_question() -> None:
    new, pool = _hub_pool()
    texts = ["ok"] * 5 + ["Did you ever go to Lisbon?", "I work at a bakery."]
    on = ProposalGate(CosineGate(), GateConfig(tau=-0.1, max_flags=None))
    off = ProposalGate(CosineGate(), GateConfig(tau=-0.1, max_flags=None,
                                                 statements_only=False))
    kw = {"new_text": "I moved to Lisbon last year.", "cand_texts": texts}
    s_on, s_off = on.score(new, pool, **kw), off.score(new, pool, **kw)
    assert s_off.flagged[5] and not s_on.flagged[5]  # the specific record is a question
    assert s_on.eligible is not None and s_on.eligible.tolist() == [False] * 6 + [True]
    np.testing.assert_array_equal(s_on.t, s_off.t)  # eligibility changes flags, not scores
    # a new record that states nothing is never flagged against anything
    q = on.score(new, pool, new_text="Did you move?", cand_texts=["I moved."] * 7)
    assert not q.flagged.any()


def test_cue_bonus_lifts_a_new_record_with_change_wording() -> None:
    new, pool = _hub_pool()
    texts = ["I bake bread."] * 5 + ["I work at the bakery.", "I drink green tea."]
    probe = ProposalGate(CosineGate(), GateConfig(tau=-2.0, max_flags=None, cue_bonus=0.0))
    base = probe.score(new, pool, new_text="I work at the library.", cand_texts=texts).t
    tau = float(base[6]) + 0.1  # candidate 6 sits 0.1 below the threshold
    gate = ProposalGate(CosineGate(), GateConfig(tau=tau, max_flags=None, cue_bonus=0.2))
    calm = gate.score(new, pool, new_text="I work at the library.", cand_texts=texts)
    moved = gate.score(new, pool, new_text="I work at the library now.", cand_texts=texts)
    assert calm.cue is not None and not calm.cue.any()
    assert moved.cue is not None and moved.cue.all()
    np.testing.assert_allclose(moved.t, calm.t + 0.2)
    assert not calm.flagged[6] and moved.flagged[6]


def test_cap_counts_only_eligible_pairs() -> None:
    new, pool = _hub_pool()
    # the two highest-scoring candidates are questions: the cap must not be spent on them
    order = np.argsort(-ProposalGate(CosineGate(), GateConfig(tau=-2.0, max_flags=None))
                       .score(new, pool).t, kind="stable")
    texts = ["I like tea."] * 7
    for i in order[:2]:
        texts[int(i)] = "Any news?"
    gate = ProposalGate(CosineGate(), GateConfig(tau=-2.0, max_flags=2))
    s = gate.score(new, pool, new_text="I moved.", cand_texts=texts)
    assert set(np.flatnonzero(s.flagged).tolist()) == {int(order[2]), int(order[3])}


def test_actionable_only_spends_no_flag_on_a_record_with_nothing_to_act_on() -> None:
    new, pool = _hub_pool()
    texts = ["I bake bread."] * 5 + ["I work at the bakery.", "I drink green tea."]
    on = ProposalGate(CosineGate(), GateConfig(tau=-0.1, max_flags=None))
    off = ProposalGate(CosineGate(), GateConfig(tau=-0.1, max_flags=None,
                                                 actionable_only=False))
    calm = "I work at the library."  # no change wording, number, qualifier or process
    assert not on.score(new, pool, new_text=calm, cand_texts=texts).flagged.any()
    assert off.score(new, pool, new_text=calm, cand_texts=texts).flagged[5]
    for acting in ("I work at the library now.", "I work 30 hours at the library.",
                   "I only work at the library on weekends."):
        assert on.score(new, pool, new_text=acting, cand_texts=texts).flagged[5], acting


def test_only_the_speakers_own_statements_are_actionable() -> None:
    from langchain_atma.bank.judge import text_cues

    # change wording or numbers addressed to the listener change nothing of the speaker's
    for about_you in ("Wow, congrats on the new job! How are the people there?",
                      "Your new place sounds amazing. You moved at the perfect time.",
                      "Thanks, Deb! Your support now means a lot."):
        cues = text_cues(about_you)
        assert cues.change and not cues.actionable, about_you
    # the speaker's own sentence next to one about the listener still counts
    for mine in ("Congrats on the new job! I switched teams too.",
                 "You won't believe it, I moved to Leeds last month.",
                 "Thanks! Rent here is $1,400 a month now."):
        assert text_cues(mine).actionable, mine


def test_text_cues_rejects_bad_input_with_library_errors() -> None:
    from langchain_atma.bank.judge import text_cues
    from langchain_atma.errors import ConfigError, InvalidRecordError

    for bad in (None, 12, b"I moved.", ["I moved."]):
        with pytest.raises(InvalidRecordError):
            text_cues(bad)  # type: ignore[arg-type]
    for limit in (0, -1, 2.5, True):
        with pytest.raises(ConfigError):
            text_cues("I moved.", limit)  # type: ignore[arg-type]
    assert text_cues("", 10).statement is False  # empty text states nothing
    assert text_cues("I moved to Oslo. " * 1000, 20).change  # only the start is read


@pytest.mark.parametrize(("text", "ended"), [
    # handed over to someone else: the old state ended
    ("Rex lives with my parents now.", True),
    ("The canary found a new home with my cousin.", True),
    ("Hannah has taken over.", True),
    ("My brother took over my lease.", True),
    # handed to the speaker, or something fills the speaker's own time: nothing ended
    ("Omar lives with us now.", False),
    ("Sofia lives with me now.", False),
    ("Pottery has taken over my evenings.", False),
    ("Climbing took over my weekends.", False),
])
def test_a_handover_to_the_speaker_is_not_an_ending(text: str, ended: bool) -> None:
    from langchain_atma.bank.judge import text_cues

    assert text_cues(text).ended is ended


class _TopicScorer:
    """A pair scorer whose topic agreement ``a`` is given per candidate."""

    def __init__(self, a: list[float]) -> None:
        self.a = np.asarray(a, dtype=np.float32)

    def score(self, new_vec: np.ndarray, cand_vecs: np.ndarray):  # noqa: ANN201
        from langchain_atma.bank.sentry import PairScores

        a = self.a[: len(cand_vecs)]
        return PairScores(a=a, b=a.copy(), d=np.zeros_like(a), flagged=np.zeros(len(a), bool))


def test_topic_term_adds_the_sentry_topic_agreement_to_the_flag_score() -> None:
    new, pool = _hub_pool()
    a = [0.1, 0.1, 0.1, 0.1, 0.1, 0.2, 0.95]  # the topic head: only the last one is the slot
    off = ProposalGate(_TopicScorer(a), GateConfig(tau=-2.0, max_flags=None, topic_weight=0.0))
    on = ProposalGate(_TopicScorer(a), GateConfig(tau=-2.0, max_flags=None, topic_weight=1.0))
    s_off, s_on = off.score(new, pool), on.score(new, pool)
    assert s_off.hub is not None and s_on.hub is not None
    np.testing.assert_allclose(s_off.t, s_off.hub)  # no topic term: t is the hub score
    np.testing.assert_allclose(s_on.hub, s_off.hub)  # the hub score never reads a
    np.testing.assert_allclose(s_on.t, s_on.hub + 1.0 * np.asarray(a), rtol=1e-6)
    assert int(np.argmax(s_off.t)) == 5 and int(np.argmax(s_on.t)) == 6  # the ranking moves
    # with a cap of one flag, the topic term decides which pair the judge sees
    one = {"tau": -2.0, "max_flags": 1}
    assert ProposalGate(_TopicScorer(a), GateConfig(**one, topic_weight=0.0)).score(
        new, pool).flagged.tolist() == [i == 5 for i in range(7)]
    assert ProposalGate(_TopicScorer(a), GateConfig(**one, topic_weight=1.0)).score(
        new, pool).flagged.tolist() == [i == 6 for i in range(7)]
    with pytest.raises(ValidationError):
        GateConfig(topic_weight=-0.1)
    with pytest.raises(ValidationError):
        GateConfig(topic_weight=1.5)
    # the paper rule has no hub score
    assert ProposalGate(_TopicScorer(a), GateConfig(mode="paper")).score(new, pool).hub is None


@pytest.mark.parametrize("reaction", [
    "Wow, that looks great!", "Sounds fun!", "Looks fun! What games did you all play?",
    "Nice workspace! When do you usually work?", "It was an awesome time, Caroline!",
    "So cool!", "Aww, that's adorable! What's her name?",
])
def test_reactions_to_the_listener_state_no_fact(reaction: str) -> None:
    from langchain_atma.bank.judge import text_cues

    assert not text_cues(reaction).statement


@pytest.mark.parametrize("fact", [
    "Wow, I moved to Denver!", "That bakery is my favourite!", "Great news: I got the job!",
    "This weekend I ran 10k!", "That is the best pizza in Boston!",
    "Oh no, the car broke down again!", "Sounds like Denver is great!",
    "These days my art is mostly pastels.",
])
def test_exclamations_with_a_fact_still_state_one(fact: str) -> None:
    from langchain_atma.bank.judge import text_cues

    assert text_cues(fact).statement


def test_reaction_list_is_optional_in_a_custom_lexicon() -> None:
    from langchain_atma.bank.judge import JUDGE_LEXICON, OfflineJudge, _analyze, _compile

    lex = {k: v for k, v in JUDGE_LEXICON.items() if k != "reaction"}
    OfflineJudge(lexicon=lex)  # older lexicons without the key still load
    assert _analyze("Sounds fun!", _compile(lex)).statement  # no list: no reactions
    assert not _analyze("Sounds fun!", _compile(JUDGE_LEXICON)).statement


def test_text_cues_names_and_numbers_of_own_statements() -> None:
    from langchain_atma.bank.judge import text_cues

    cues = text_cues("Thanks, Maria! Rafael moved out and Diego took the spare room.")
    assert cues.names == {"rafae", "diego"} and not cues.numbers  # "Maria" is addressed
    assert text_cues("We're a team of 17 now.").numbers
    assert not text_cues("How many of you are there, 17?").numbers  # a question
