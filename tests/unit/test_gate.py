"""Tests of the proposal gate: centred ranking, the judged cap, the namespace centroid."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from langchain_atma.bank import StateBank
from langchain_atma.bank.gate import GateConfig, ProposalGate, centred_query
from langchain_atma.errors import GateError
from langchain_atma.records import MemoryRecord


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def test_centring_demotes_a_hub_that_plain_cosine_ranks_first() -> None:
    style, topic = np.eye(8, dtype=np.float32)[:2]  # what every turn shares / the state
    hub = style  # small talk: style only
    old = _unit(0.6 * style + 0.8 * topic)
    new = _unit(0.95 * style + 0.31 * topic)
    centre = 0.9 * style  # a conversation's mean is mostly style
    cands = np.stack([hub, old])
    plain = ProposalGate(GateConfig(centre_weight=0.0, max_judged=1))
    centred = ProposalGate(GateConfig(centre_weight=1.0, max_judged=1))
    assert plain.score(new, cands, centre=centre).flagged.tolist() == [True, False]
    assert centred.score(new, cands, centre=centre).flagged.tolist() == [False, True]
    gs = centred.score(new, cands, centre=centre)
    np.testing.assert_allclose(gs.similarity, cands @ new, atol=1e-6)
    assert gs.score[1] > gs.score[0]


def test_cap_floor_and_ties_keep_pool_order() -> None:
    cands = np.eye(4, dtype=np.float32)
    new = np.array([1.0, 1.0, 1.0, 0.0], dtype=np.float32)
    gs = ProposalGate(GateConfig(max_judged=2)).score(new, cands)
    assert gs.flagged.tolist() == [True, True, False, False] and len(gs) == 4
    assert ProposalGate(GateConfig(max_judged=None)).score(new, cands).flagged.sum() == 4
    floor = ProposalGate(GateConfig(max_judged=None, min_score=0.1)).score(new, cands)
    assert floor.flagged.tolist() == [True, True, True, False]


def test_centred_query_and_degenerate_inputs() -> None:
    v = np.array([3.0, 4.0], dtype=np.float32)
    np.testing.assert_allclose(centred_query(v, None, 1.0), [0.6, 0.8], atol=1e-6)
    np.testing.assert_allclose(
        centred_query(v, np.array([0.6, 0.8]), 1.0), [0.6, 0.8], atol=1e-6
    )  # the query would vanish: keep the plain vector
    q = centred_query(v, np.array([0.6, 0.0]), 1.0)
    assert np.isclose(np.linalg.norm(q), 1.0) and q[0] < 0.6
    empty = ProposalGate().score(v, np.zeros((0, 2), dtype=np.float32))
    assert len(empty) == 0 and empty.flagged.dtype == bool


def test_bad_shapes_and_settings() -> None:
    with pytest.raises(GateError):
        ProposalGate().score(np.ones(3), np.ones((2, 4)))
    with pytest.raises(GateError):
        ProposalGate().score(np.ones(3), np.ones((2, 3)), centre=np.ones(2))
    for bad in ({"max_judged": 0}, {"centre_weight": -1.0}, {"unknown": 1}):
        with pytest.raises(ValidationError):
            GateConfig(**bad)


def test_bank_centroid_is_seeded_from_the_store_then_follows_commits(fake_embeddings) -> None:
    bank = StateBank.in_memory(embeddings=fake_embeddings)
    assert bank.centroid("c") is None
    for i, text in enumerate(("one", "two", "three")):
        bank.add(MemoryRecord(namespace="c", content=text, time=i + 1))
    vecs = bank.embed(["one", "two", "three"])
    fresh = StateBank(host=bank.host, embeddings=fake_embeddings)  # another process's view
    np.testing.assert_allclose(fresh.centroid("c"), vecs.mean(axis=0), atol=1e-5)
    np.testing.assert_allclose(bank.centroid("c"), vecs.mean(axis=0), atol=1e-5)
    bank.add(MemoryRecord(namespace="c", content="four", time=9))
    vecs = bank.embed(["one", "two", "three", "four"])
    np.testing.assert_allclose(bank.centroid("c"), vecs.mean(axis=0), atol=1e-5)
    assert bank.centroid("other") is None
    bank.clear("c")
    assert bank.centroid("c") is None


def test_ineligible_candidates_are_never_flagged() -> None:
    cands = np.eye(3, dtype=np.float32)
    new = np.array([1.0, 0.5, 0.2], dtype=np.float32)
    gs = ProposalGate(GateConfig(max_judged=2)).score(
        new, cands, eligible=np.array([False, True, True])
    )
    assert gs.flagged.tolist() == [False, True, True]
    with pytest.raises(GateError):
        ProposalGate().score(new, cands, eligible=np.array([True]))


def test_a_write_that_states_nothing_judges_nothing(fake_embeddings) -> None:
    from langchain_atma.bank.write_graph import ingest_events
    from tests.unit.scripted_judge import ScriptedJudge

    bank = StateBank.in_memory(embeddings=fake_embeddings)
    judge = ScriptedJudge()
    events = [
        {"text": t, "speaker": "Ann", "timestamp": i + 1}
        for i, t in enumerate(
            (
                "I keep bees on the roof.",
                "How was your trip?",
                "Wow, that looks great!",
                "The bees swarmed, so the hive went to a farm.",
            )
        )
    ]
    rep = ingest_events(bank, events, namespace="q", judge=judge)
    assert [n for _o, n in judge.seen] == [events[3]["text"]] * 1  # only the statement,
    assert rep.flagged_pairs == 1  # against the only statement
    everything = ingest_events(
        bank,
        events,
        namespace="q2",
        judge=ScriptedJudge(),
        gate=ProposalGate(GateConfig(statements_only=False)),
    )
    assert everything.flagged_pairs == 6
