from __future__ import annotations

import pytest

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.errors import InvalidQueryError, NamespaceError
from langchain_atma.records import Link, LinkType, MemoryRecord, RecordStatus
from langchain_atma.retrieval.packets import Bucket, EvidenceRow, QueryProfile, QueryView
from langchain_atma.retrieval.pool import (
    MAX_QUERY_CHARS,
    build_pool,
    expand_pool,
    seed_rows,
    stable_prerank,
    top_k,
    validate_query,
)

NS = "u1"


def R(content, ns=NS, **kw):
    return MemoryRecord(namespace=ns, content=content, **kw)


def D(action, target):
    return CommitDecision(action=CommitAction(action), target_id=target)


def P(view, query="q?"):
    return QueryProfile(query=query, view=QueryView(view))


def seeds_of(bank, *ids, ns=NS):
    recs = bank.get_many(ns, list(ids))
    return [
        EvidenceRow(record=r, bucket=Bucket.SEED, score=1.0, prerank=i) for i, r in enumerate(recs)
    ]


class CountingBank:
    """Wraps a bank and counts get_many calls (to check batching)."""

    def __init__(self, bank):
        self.bank = bank
        self.calls: list[list[str]] = []

    def get_many(self, namespace, ids):
        self.calls.append(list(ids))
        return self.bank.get_many(namespace, ids)

    def __getattr__(self, name):
        return getattr(self.bank, name)


@pytest.fixture
def chain_bank(mem_bank):
    """A -> B -> C -> D supersession chain, plus a transition chain and partners."""
    b = mem_bank
    ids = {}
    ids["A"] = b.add(R("I live in Ashcombe.", slot="location")).id
    prev = ids["A"]
    for key, city in (("B", "Boston"), ("C", "Chicago"), ("D", "Seattle")):
        ids[key] = b.commit(
            R(f"I moved to {city}.", slot="location"), [D("supersede", prev)]
        ).record.id
        prev = ids[key]
    # job: nurse -> transition -> teacher
    ids["nurse"] = b.add(R("I work as a nurse.", slot="job")).id
    ids["T"] = b.commit(
        R("I'm retraining from nursing to teaching.", slot="job"), [D("transition", ids["nurse"])]
    ).record.id
    ids["teacher"] = b.commit(
        R("I now teach at a school.", slot="job"), [D("supersede", ids["T"])]
    ).record.id
    # hobbies: coexisting, plus a related note
    ids["hike"] = b.add(R("I like hiking.", slot="hobbies")).id
    ids["chess"] = b.commit(
        R("I also like chess.", slot="hobbies"), [D("coexist", ids["hike"])]
    ).record.id
    ids["note"] = b.commit(
        R("The chess club meets on Tuesdays."), [D("related", ids["chess"])]
    ).record.id
    return b, ids


def test_current_view_walks_forward_to_live_head(chain_bank):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["A"]), P("current"))
    assert [r.id for r in pool] == [ids["A"], ids["B"], ids["C"], ids["D"]]
    assert [r.bucket for r in pool] == [Bucket.SEED] + [Bucket.RELATION] * 3
    assert [r.relation for r in pool[1:]] == ["superseded_by"] * 3
    assert [r.via for r in pool[1:]] == [ids["A"], ids["B"], ids["C"]]
    assert [r.prerank for r in pool] == [0, 1, 2, 3]
    assert pool[-1].record.status is RecordStatus.ACTIVE


def test_current_view_does_not_walk_back(chain_bank):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["C"]), P("current"))
    assert [r.id for r in pool] == [ids["C"], ids["D"]]


def test_historical_view_walks_back_not_forward(chain_bank):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["C"]), P("historical"))
    assert [r.id for r in pool] == [ids["C"], ids["B"], ids["A"]]
    assert [r.relation for r in pool[1:]] == ["supersedes", "supersedes"]


@pytest.mark.parametrize("view", ["transition", "neutral"])
def test_transition_and_neutral_views_walk_both_ways(chain_bank, view):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["B"]), P(view))
    assert set(r.id for r in pool) == {ids["A"], ids["B"], ids["C"], ids["D"]}
    assert pool[0].id == ids["B"]


def test_max_hops_bounds_the_walk(chain_bank):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["A"]), P("current"), max_hops=1)
    assert [r.id for r in pool] == [ids["A"], ids["B"]]


def test_transition_links_always_followed_one_hop(chain_bank):
    bank, ids = chain_bank
    # current view from the new state: evolves_from is followed once (the change record),
    # but the walk does not continue back to the old state
    pool = expand_pool(bank, NS, seeds_of(bank, ids["teacher"]), P("current"))
    assert [r.id for r in pool] == [ids["teacher"], ids["T"]]
    assert pool[1].relation == "evolves_from"
    # historical view from the old state: evolves_to is followed once, not to the new head
    pool = expand_pool(bank, NS, seeds_of(bank, ids["nurse"]), P("historical"))
    assert [r.id for r in pool] == [ids["nurse"], ids["T"]]
    assert pool[1].relation == "evolves_to"


def test_current_view_walks_through_transition_to_head(chain_bank):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["nurse"]), P("current"))
    assert [r.id for r in pool] == [ids["nurse"], ids["T"], ids["teacher"]]
    assert [r.relation for r in pool[1:]] == ["evolves_to", "evolves_to"]
    assert pool[2].via == ids["T"]


def test_partners_and_neighbours(chain_bank):
    bank, ids = chain_bank
    pool = expand_pool(bank, NS, seeds_of(bank, ids["chess"]), P("current"))
    assert [r.id for r in pool] == [ids["chess"], ids["hike"], ids["note"]]
    assert pool[1].bucket is Bucket.RELATION and pool[1].relation == "coexists"
    assert pool[2].bucket is Bucket.NEIGHBOUR and pool[2].relation == "related"


def test_neighbours_come_after_relation_rows(chain_bank):
    bank, ids = chain_bank
    seeds = seeds_of(bank, ids["note"], ids["A"])
    pool = expand_pool(bank, NS, seeds, P("current"))
    buckets = [r.bucket for r in pool]
    assert buckets[:2] == [Bucket.SEED, Bucket.SEED]
    assert buckets[-1] is Bucket.NEIGHBOUR and pool[-1].id == ids["chess"]
    assert Bucket.NEIGHBOUR not in buckets[:-1]


def test_dedup_keeps_first_occurrence(chain_bank):
    bank, ids = chain_bank
    seeds = seeds_of(bank, ids["B"], ids["C"], ids["B"])
    pool = expand_pool(bank, NS, seeds, P("current"))
    assert [r.id for r in pool] == [ids["B"], ids["C"], ids["D"]]
    assert pool[1].bucket is Bucket.SEED  # C stays a seed although B links to it
    assert len({r.id for r in pool}) == len(pool)


def test_one_get_many_per_hop_level(chain_bank):
    bank, ids = chain_bank
    spy = CountingBank(bank)
    seeds = seeds_of(bank, ids["A"], ids["nurse"], ids["chess"], ids["note"])
    pool = expand_pool(spy, NS, seeds, P("current"))
    # level 1: B, T, hike (+ neighbour look-up), level 2: C, teacher, level 3: D
    assert len(spy.calls) == 3
    assert {ids["B"], ids["T"], ids["hike"]} <= set(spy.calls[0])
    assert ids["D"] in {r.id for r in pool} and ids["teacher"] in {r.id for r in pool}
    # no look-up of ids already in the pool
    assert ids["A"] not in set(sum(spy.calls, []))


def test_no_lookups_without_links(mem_bank):
    a = mem_bank.add(R("plain memory"))
    spy = CountingBank(mem_bank)
    pool = expand_pool(spy, NS, seeds_of(mem_bank, a.id), P("current"))
    assert [r.id for r in pool] == [a.id] and spy.calls == []


def test_never_crosses_namespace(mem_bank):
    other = mem_bank.add(R("secret of another user", ns="u2"))
    # a (corrupt) row in u1 linking to a record of u2
    rogue = R(
        "I moved.", links=[Link(type=LinkType.SUPERSEDED_BY, target=other.id)], status="superseded"
    )
    seeds = [EvidenceRow(record=rogue, bucket=Bucket.SEED)]
    pool = expand_pool(mem_bank, NS, seeds, P("current"))
    assert [r.id for r in pool] == [rogue.id]


def test_build_pool_with_real_encoder(minilm):
    bank = StateBank.in_memory(embeddings=minilm)
    old = bank.add(R("I live in Boston near the harbor.", slot="location"))
    bank.add(R("My favourite food is ramen."))
    bank.add(R("I have a golden retriever named Max.", slot="pets"))
    new = bank.commit(
        R("We relocated to Seattle in the spring.", slot="location"), [D("supersede", old.id)]
    ).record
    prof = P("current", "Where do I live now? Which city?")
    pool = build_pool(bank, NS, prof, seed_k=2)
    ids = [r.id for r in pool]
    assert new.id in ids and old.id in ids
    seeds = [r for r in pool if r.bucket is Bucket.SEED]
    assert len(seeds) == 2 and all(r.score is not None for r in seeds)
    assert seeds[0].score >= seeds[1].score  # host order kept
    # a precomputed vector gives the same seeds without the encoder
    vec = bank.embed_query(prof.query)
    again = build_pool(bank, NS, prof, seed_k=2, query_vector=vec)
    assert [r.id for r in again] == ids


def test_empty_namespace_gives_empty_pool(mem_bank):
    assert build_pool(mem_bank, "nobody", P("current", "where?")) == []


def test_bad_inputs(mem_bank):
    with pytest.raises(InvalidQueryError):
        validate_query("   ")
    with pytest.raises(InvalidQueryError):
        validate_query(None)
    with pytest.raises(InvalidQueryError, match="limit"):
        validate_query("x" * (MAX_QUERY_CHARS + 1))
    assert validate_query("ok?") == "ok?"
    with pytest.raises(InvalidQueryError):
        seed_rows(mem_bank, NS, "q?", seed_k=0)
    with pytest.raises(InvalidQueryError):
        build_pool(mem_bank, NS, P("current", "  "))
    with pytest.raises(NamespaceError):
        build_pool(mem_bank, "bad namespace!", P("current", "q?"))


def test_stable_prerank_and_top_k():
    def row(i, bucket):
        return EvidenceRow(
            record=R(f"m{i}", id=f"r{i}"),
            bucket=bucket,
            prerank=7,
            selected_by_controller=True,
            controller_rank=1,
        )

    rows = [
        row(0, Bucket.NEIGHBOUR),
        row(1, Bucket.SEED),
        row(2, Bucket.RELATION),
        row(3, Bucket.SEED),
        row(4, Bucket.RELATION),
    ]
    ranked = stable_prerank(rows)
    assert [r.id for r in ranked] == ["r1", "r3", "r2", "r4", "r0"]
    assert [r.prerank for r in ranked] == [0, 1, 2, 3, 4]
    assert not any(r.selected_by_controller for r in ranked)
    assert rows[0].prerank == 7  # inputs untouched
    assert [r.id for r in top_k(ranked, 2)] == ["r1", "r3"]
    assert len(top_k(ranked, 50)) == 5
    for bad in (0, -1, 1.5, True):
        with pytest.raises(InvalidQueryError):
            top_k(ranked, bad)


def test_a_question_naming_a_speaker_costs_one_embedding_per_call(fake_embeddings):
    """The speaker probe vector is computed once per bank, not once per call."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_atma.records import Provenance
    from langchain_atma.retrieval.pool import speaker_seed_rows

    class Counting(DeterministicFakeEmbedding):
        queries: list[str] = []

        def embed_query(self, text: str) -> list[float]:
            type(self).queries.append(text)
            return super().embed_query(text)

    Counting.queries = []
    bank = StateBank.in_memory(embeddings=Counting(size=32))
    bank.commit(R("I swim at dawn.", provenance=Provenance(speaker="Odile")), [])
    for _ in range(3):  # a fresh speaker directory each call, as ask() and the retriever
        rows, info = speaker_seed_rows(bank, NS, "How often does Odile swim?", seed_k=3)
        assert info.speaker == "Odile" and rows
    assert Counting.queries.count("speaker") <= 1
    assert len(Counting.queries) <= 4  # the probe once, then one embedding per question
