from __future__ import annotations

import asyncio
import time
from typing import TypedDict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from langchain_atma.bank import StateBank
from langchain_atma.errors import (
    ConfigError,
    InvalidQueryError,
    InvalidRecordError,
    NamespaceError,
)
from langchain_atma.records import LinkType, RecordStatus
from langchain_atma.store import (
    HISTORY_FILTER_KEY,
    AtmaSearchItem,
    AtmaStore,
    decode_namespace,
    encode_namespace,
)

NS = ("users", "ann")


@pytest.fixture
def bank(minilm):
    return StateBank.in_memory(embeddings=minilm)


@pytest.fixture
def store(bank):
    return AtmaStore(bank)


# ------------------------------------------------------------------ namespace mapping


def test_namespace_mapping_escapes_and_round_trips():
    ns = ("users", "ann b", "a:b", "x@y", "ünï", "we/ird")
    mapped = encode_namespace(ns)
    assert mapped.startswith("lgstore.users.")
    assert " " not in mapped and "@" not in mapped
    assert decode_namespace(mapped) == ns
    # a literal escape-looking label does not collide with an escaped one
    assert encode_namespace(("a:20b",)) != encode_namespace(("a b",))
    assert decode_namespace(encode_namespace(("a:20b",))) == ("a:20b",)
    assert encode_namespace(("u",), "custom") == "custom.u"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4))
def test_namespace_mapping_is_reversible(labels):
    ns = tuple(labels)
    safe = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
    size = len("lgstore") + sum(
        1 + sum(1 if ch in safe else 3 * len(ch.encode()) for ch in lbl) for lbl in labels
    )
    if size > 128:
        with pytest.raises(NamespaceError, match="128"):
            encode_namespace(ns)
        return
    mapped = encode_namespace(ns)
    assert len(mapped) == size
    assert decode_namespace(mapped) == ns


def test_namespace_mapping_rejects_bad_input():
    with pytest.raises(NamespaceError, match="non-empty tuple"):
        encode_namespace(())
    with pytest.raises(NamespaceError, match="non-empty string"):
        encode_namespace(("a", ""))
    with pytest.raises(NamespaceError, match="128"):
        encode_namespace(("x" * 60, "y" * 70))
    with pytest.raises(NamespaceError, match="128"):
        encode_namespace(("ü" * 30,))  # 6 chars per character once escaped
    with pytest.raises(NamespaceError):
        decode_namespace("other.users")
    with pytest.raises(ConfigError):
        encode_namespace(("a",), prefix="bad.prefix")


# ---------------------------------------------------------------------- put / get


def test_put_get_and_timestamps(store):
    assert store.get(NS, "home") is None
    store.put(NS, "home", {"city": "Boston", "since": 2019})
    item = store.get(NS, "home")
    assert item is not None
    assert item.value == {"city": "Boston", "since": 2019}
    assert item.key == "home" and item.namespace == NS
    assert item.created_at == item.updated_at
    time.sleep(0.002)
    store.put(NS, "home", {"city": "Seattle", "since": 2023})
    new = store.get(NS, "home")
    assert new.value["city"] == "Seattle"
    assert new.created_at == item.created_at  # first version of the lineage
    assert new.updated_at > item.updated_at


def test_identical_put_is_a_noop(store, bank):
    store.put(NS, "home", {"city": "Boston", "tags": ["a", "b"]})
    before = store.get(NS, "home")
    n = bank.count(store.bank_namespace(NS))
    store.put(NS, "home", {"tags": ["a", "b"], "city": "Boston"})  # same value, other order
    assert bank.count(store.bank_namespace(NS)) == n
    assert store.get(NS, "home").updated_at == before.updated_at


def test_supersession_keeps_history_with_links(store, bank):
    store.put(NS, "home", {"city": "Boston"})
    store.put(NS, "home", {"city": "Seattle"})
    store.put(NS, "home", {"city": "Chicago"})
    recs = bank.records(store.bank_namespace(NS))
    assert [r.status for r in recs] == [
        RecordStatus.SUPERSEDED,
        RecordStatus.SUPERSEDED,
        RecordStatus.ACTIVE,
    ]
    assert recs[0].has_link(LinkType.SUPERSEDED_BY, recs[1].id)
    assert recs[2].has_link(LinkType.SUPERSEDES, recs[1].id)
    assert all(r.slot == "home" for r in recs)
    assert "city: Chicago" == recs[2].content
    assert bank.verify(store.bank_namespace(NS)) == []
    hist = store.history(NS, "home")
    assert [h.value["city"] for h in hist] == ["Boston", "Seattle", "Chicago"]
    assert [h.status for h in hist] == ["superseded", "superseded", "active"]
    assert hist[0].superseded_at == hist[1].updated_at
    assert hist[2].superseded_at is None
    assert all(isinstance(h, AtmaSearchItem) for h in hist)
    assert hist[0].dict()["status"] == "superseded"


def test_delete_writes_a_tombstone_and_keeps_history(store, bank):
    store.put(NS, "pet", {"kind": "cat"})
    store.delete(NS, "pet")
    assert store.get(NS, "pet") is None
    store.delete(NS, "pet")  # deleting again: no-op
    store.delete(NS, "never-set")  # unknown key: no-op
    recs = bank.records(store.bank_namespace(NS))
    assert [r.status for r in recs] == [RecordStatus.SUPERSEDED, RecordStatus.TRANSITION]
    assert recs[0].has_link(LinkType.EVOLVES_TO, recs[1].id)
    assert recs[1].transition is not None and recs[1].transition.transition_type == "delete"
    assert bank.verify(store.bank_namespace(NS)) == []
    assert store.search(NS) == []
    time.sleep(0.002)
    store.put(NS, "pet", {"kind": "dog"})
    item = store.get(NS, "pet")
    assert item.value == {"kind": "dog"}
    assert item.created_at > recs[0].time  # a new lineage after the delete
    assert [h.status for h in store.history(NS, "pet")] == ["superseded", "deleted", "active"]
    assert bank.verify(store.bank_namespace(NS)) == []


def test_bad_values_and_namespaces_are_rejected(store):
    with pytest.raises(InvalidRecordError, match="dict"):
        store.put(NS, "k", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(InvalidRecordError, match="JSON"):
        store.put(NS, "k", {"when": object()})
    with pytest.raises(InvalidRecordError, match="JSON"):
        store.put(NS, "k", {"x": float("nan")})
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "x"), "k", {"a": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", {"a": 1})])
    with pytest.raises(NamespaceError, match="128"):
        store.put(("x" * 130,), "k", {"a": 1})
    with pytest.raises(NotImplementedError):
        store.put(NS, "k", {"a": 1}, ttl=5)
    store.put(NS, "k", {"a": 1})
    with pytest.raises(InvalidQueryError, match="operator"):
        store.search(NS, filter={"a": {"$regex": "x"}})
    with pytest.raises(ConfigError, match="prefix"):
        AtmaStore(store.bank, prefix="bad.prefix")
    with pytest.raises(ConfigError, match="embed"):
        AtmaStore(store.bank, index={"embed": lambda texts: [[0.0]], "dims": 1})


# ------------------------------------------------------------------------- search


@pytest.fixture
def filled(store):
    store.put(("docs", "ann"), "pet", {"text": "I adopted a cat named Tom.", "n": 1})
    store.put(("docs", "ann"), "food", {"text": "My favourite food is sushi.", "n": 2})
    store.put(("docs", "ann"), "job", {"text": "I work as a nurse in a hospital.", "n": 3})
    store.put(("docs", "bob"), "pet", {"text": "Bob has a parrot.", "n": 4, "meta": {"lang": "en"}})
    store.put(("other",), "x", {"text": "Unrelated note about taxes.", "n": 5})
    return store


def test_search_semantic_ranks_and_scores(filled):
    hits = filled.search(("docs", "ann"), query="pets and animals", limit=3)
    assert [h.key for h in hits][0] == "pet"
    assert all(h.namespace == ("docs", "ann") for h in hits)
    scores = [h.score for h in hits]
    assert all(isinstance(s, float) for s in scores)
    assert scores == sorted(scores, reverse=True)
    both = filled.search(("docs",), query="a pet animal", limit=2)
    assert {h.namespace for h in both} == {("docs", "ann"), ("docs", "bob")}
    assert filled.search(("docs",), query="pet", limit=2, offset=1)[0] == both[1]


def test_search_filters_like_inmemorystore(filled):
    assert {h.key for h in filled.search(("docs",), filter={"n": {"$gte": 3}})} == {"job", "pet"}
    assert [h.namespace for h in filled.search((), filter={"meta": {"lang": "en"}})] == [
        ("docs", "bob")
    ]
    assert {h.key for h in filled.search(("docs", "ann"), filter={"n": {"$ne": 1}})} == {
        "food",
        "job",
    }
    assert filled.search(("docs",), filter={"text": "nope"}) == []
    everything = filled.search((), limit=100)
    assert len(everything) == 5
    page = filled.search((), limit=2, offset=1)
    assert page == everything[1:3]
    # without a query: most recently updated first, no score
    assert everything[0].key == "x" and everything[0].score is None


def test_search_defaults_to_live_values_and_can_include_history(store):
    store.put(NS, "home", {"city": "Boston"})
    store.put(NS, "home", {"city": "Seattle"})
    live = store.search(NS, query="which city")
    assert [h.value["city"] for h in live] == ["Seattle"]
    hist = store.search(NS, query="which city", filter={HISTORY_FILTER_KEY: True})
    assert sorted(h.value["city"] for h in hist) == ["Boston", "Seattle"]
    assert {h.value["city"]: h.status for h in hist} == {
        "Boston": "superseded",
        "Seattle": "active",
    }
    filtered = store.search(NS, filter={HISTORY_FILTER_KEY: True, "city": "Boston"})
    assert [h.status for h in filtered] == ["superseded"]


def test_unindexed_items_come_last_without_score(store):
    store.put(NS, "a", {"text": "cats are great pets"}, index=False)
    store.put(NS, "b", {"text": "I like dogs"})
    hits = store.search(NS, query="cats")
    assert [h.key for h in hits] == ["b", "a"]
    assert hits[0].score is not None and hits[1].score is None


def test_index_fields_choose_the_embedded_text(bank):
    store = AtmaStore(bank, index={"fields": ["memory"], "dims": 384})
    store.put(NS, "m1", {"memory": "Ann plays the cello.", "source": "chat 7"})
    rec = bank.records(store.bank_namespace(NS))[0]
    assert rec.content == "Ann plays the cello."
    store.put(NS, "m2", {"memory": "x", "notes": "y"}, index=["notes"])
    assert bank.records(store.bank_namespace(NS))[-1].content == "y"


# ---------------------------------------------------------------- list_namespaces


def test_list_namespaces(filled):
    assert filled.list_namespaces() == [("docs", "ann"), ("docs", "bob"), ("other",)]
    assert filled.list_namespaces(prefix=("docs",)) == [("docs", "ann"), ("docs", "bob")]
    assert filled.list_namespaces(suffix=("bob",)) == [("docs", "bob")]
    assert filled.list_namespaces(prefix=("*", "ann")) == [("docs", "ann")]
    assert filled.list_namespaces(max_depth=1) == [("docs",), ("other",)]
    assert filled.list_namespaces(limit=1, offset=1) == [("docs", "bob")]


def test_namespaces_and_items_survive_a_reopen(tmp_path, minilm):
    first = AtmaStore(StateBank(path=tmp_path / "bank", embeddings=minilm))
    first.put(("prefs", "ann"), "theme", {"mode": "dark"})
    first.put(("prefs", "ann"), "theme", {"mode": "light"})
    again = AtmaStore(StateBank(path=tmp_path / "bank", embeddings=minilm))
    assert again.list_namespaces() == [("prefs", "ann")]
    assert again.get(("prefs", "ann"), "theme").value == {"mode": "light"}
    assert len(again.history(("prefs", "ann"), "theme")) == 2


# ------------------------------------------------------------------------- batch


def test_batch_runs_ops_in_order(store):
    results = store.batch(
        [
            PutOp(NS, "a", {"v": 1}),
            GetOp(NS, "a"),
            PutOp(NS, "a", {"v": 2}),
            SearchOp(NS, filter={"v": 2}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("users",)),)),
            PutOp(NS, "a", None),
            GetOp(NS, "a"),
        ]
    )
    assert results[0] is None
    assert results[1].value == {"v": 1}
    assert [i.value for i in results[3]] == [{"v": 2}]
    assert results[4] == [NS]
    assert results[6] is None
    assert [h.status for h in store.history(NS, "a")] == ["superseded", "superseded", "deleted"]


def test_abatch_and_async_api(store):
    async def run():
        await store.aput(NS, "k", {"v": "async"})
        item = await store.aget(NS, "k")
        found = await store.asearch(NS, query="async value")
        spaces = await store.alist_namespaces()
        await store.adelete(NS, "k")
        return item, found, spaces, await store.aget(NS, "k")

    item, found, spaces, gone = asyncio.run(run())
    assert item.value == {"v": "async"}
    assert [f.key for f in found] == ["k"]
    assert spaces == [NS]
    assert gone is None


def test_same_results_as_inmemorystore_for_live_values(store):
    ref = InMemoryStore()
    ops = [
        ("put", ("a", "b"), "k1", {"x": 1}),
        ("put", ("a", "b"), "k2", {"x": 2, "tag": "t"}),
        ("put", ("a", "c"), "k1", {"x": 3}),
        ("put", ("a", "b"), "k1", {"x": 10}),
        ("del", ("a", "b"), "k2", None),
        ("put", ("z",), "k9", {"x": 9, "tag": "t"}),
    ]
    for s in (ref, store):
        for kind, ns, key, val in ops:
            if kind == "put":
                s.put(ns, key, val)
            else:
                s.delete(ns, key)
    for ns, key in [(("a", "b"), "k1"), (("a", "b"), "k2"), (("a", "c"), "k1"), (("z",), "k9")]:
        a, b = ref.get(ns, key), store.get(ns, key)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.value == b.value
    for prefix, flt in [(("a",), None), ((), {"tag": "t"}), ((), {"x": {"$gt": 2}})]:
        assert sorted((i.namespace, i.key) for i in ref.search(prefix, filter=flt)) == sorted(
            (i.namespace, i.key) for i in store.search(prefix, filter=flt)
        )
    assert ref.list_namespaces() == store.list_namespaces()
    assert ref.list_namespaces(max_depth=1) == store.list_namespaces(max_depth=1)


# -------------------------------------------------------------- inside LangGraph


class _S(TypedDict, total=False):
    user: str
    city: str
    previous: str | None


def test_graph_node_reads_and_writes_through_the_store(store):
    def save(state: _S, *, store: BaseStore) -> dict:
        ns = ("profiles", state["user"])
        old = store.get(ns, "home")
        store.put(ns, "home", {"city": state["city"]})
        return {"previous": old.value["city"] if old else None}

    def check(state: _S, runtime: Runtime) -> dict:
        assert runtime.store is not None
        item = runtime.store.get(("profiles", state["user"]), "home")
        assert item is not None and item.value["city"] == state["city"]
        return {}

    g = StateGraph(_S)
    g.add_node("save", save)
    g.add_node("check", check)
    g.add_edge(START, "save")
    g.add_edge("save", "check")
    g.add_edge("check", END)
    graph = g.compile(store=store)
    first = graph.invoke({"user": "ann", "city": "Boston"})
    second = graph.invoke({"user": "ann", "city": "Seattle"})
    assert first["previous"] is None
    assert second["previous"] == "Boston"
    assert [h.value["city"] for h in store.history(("profiles", "ann"), "home")] == [
        "Boston",
        "Seattle",
    ]
    assert store.list_namespaces(prefix=("profiles",)) == [("profiles", "ann")]
