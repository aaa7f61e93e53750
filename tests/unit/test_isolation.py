"""Namespace isolation with many tenants in one bank (offline).

Twenty namespaces hold the SAME conversation (same texts, hence the same
vectors, and the same event ids) plus one private line each, in one Chroma
bank, in both layouts (a collection per namespace, and the single collection
of 0.1). A query, a link hop, a controller choice and a commit in one
namespace never read or change another namespace's records, even when a
foreign id or a foreign link is supplied on purpose (a tampered row, a judge
or controller naming another tenant's id).

``tests/unit/test_bank.py::test_namespaces_never_cross`` covers the two-tenant
basics of the bank API (search, get, get_many, vectors, commit and link
targets, id hijack, clear); this file covers many tenants, the write and
read graphs, the controllers, verify / repair, the store and the retriever.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_atma.bank import ChromaHost, CommitAction, CommitDecision, StateBank
from langchain_atma.bank.judge import BaseJudge, JudgeInput, SuggestedLink, Verdict
from langchain_atma.bank.write_graph import WriteNodes, create_write_graph, ingest_events
from langchain_atma.errors import CommitError, RecordNotFoundError
from langchain_atma.records import LinkType, MemoryRecord, Provenance, RecordStatus
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.read_graph import ask
from langchain_atma.retrievers import AtmaRetriever
from langchain_atma.store import AtmaStore
from tests.unit.scripted_judge import ScriptedJudge

_JUDGE = ScriptedJudge({("I live in Boston.", "I moved to Seattle last month."): "supersede"})

N_TENANTS = 20
TENANTS = [f"user-{i:02d}" for i in range(N_TENANTS)]


def _events(i: int) -> list[dict[str, Any]]:
    return [
        {
            "text": "I live in Boston.",
            "speaker": "Ann",
            "timestamp": "2023-01-01",
            "event_id": "e1",
        },
        {
            "text": "I moved to Seattle last month.",
            "speaker": "Ann",
            "timestamp": "2023-06-01",
            "event_id": "e2",
        },
        {
            "text": f"My locker code is {1000 + i}.",
            "speaker": "Ann",
            "timestamp": "2023-07-01",
            "event_id": "e3",
        },
    ]


def _fill(bank: StateBank, tenants: list[str]) -> None:
    for i, ns in enumerate(tenants):
        ingest_events(bank, _events(i), namespace=ns, use_gate=False, judge=_JUDGE)


def _snapshot(bank: StateBank, tenants: list[str]) -> dict[str, dict[str, tuple[Any, ...]]]:
    return {
        ns: {
            r.id: (
                r.status.value,
                r.content,
                tuple(sorted((lk.type.value, lk.target) for lk in r.links)),
            )
            for r in bank.records(ns)
        }
        for ns in tenants
    }


@pytest.fixture(autouse=True)
def _quiet_cosine_gate_warning() -> Iterator[None]:
    logging.getLogger("langchain_atma.bank.write_graph").setLevel(logging.ERROR)
    yield
    logging.getLogger("langchain_atma.bank.write_graph").setLevel(logging.NOTSET)


def _bank(layout: str) -> StateBank:
    return StateBank(
        host=ChromaHost.ephemeral(layout=layout),  # type: ignore[arg-type]
        embeddings=DeterministicFakeEmbedding(size=16),
    )


# a collection per namespace (the default), and the one shared collection of 0.1
LAYOUTS = ["namespaced", "single"]


@pytest.fixture(scope="module", params=LAYOUTS)
def world(request: pytest.FixtureRequest) -> StateBank:
    """Twenty tenants, one bank (read-only for the tests that use it)."""
    logging.getLogger("langchain_atma.bank.write_graph").setLevel(logging.ERROR)
    bank = _bank(request.param)
    _fill(bank, TENANTS)
    return bank


@pytest.fixture(params=LAYOUTS)
def small(request: pytest.FixtureRequest) -> StateBank:
    """Three tenants in a fresh bank, for the tests that write or tamper."""
    bank = _bank(request.param)
    _fill(bank, TENANTS[:3])
    return bank


def _ids(bank: StateBank, ns: str) -> set[str]:
    return {r.id for r in bank.records(ns)}


# =================================================================== the bank


def test_same_events_in_twenty_namespaces_are_twenty_histories(world: StateBank) -> None:
    all_ids: set[str] = set()
    for ns in TENANTS:
        recs = world.records(ns)
        assert len(recs) == 3 and {r.namespace for r in recs} == {ns}
        by_text = {r.content: r for r in recs}
        boston, denver = by_text["I live in Boston."], by_text["I moved to Seattle last month."]
        assert boston.status is RecordStatus.SUPERSEDED and denver.status is RecordStatus.ACTIVE
        assert denver.has_link(LinkType.SUPERSEDES, boston.id)  # linked inside the tenant
        assert {lk.target for r in recs for lk in r.links} <= {r.id for r in recs}
        found = world.find_by_event(ns, "e1")  # same event id everywhere: per tenant
        assert found is not None and found.id == boston.id
        assert world.verify(ns) == []
        all_ids |= {r.id for r in recs}
    assert len(all_ids) == 3 * N_TENANTS  # no record shared, none overwritten


def test_search_and_reads_stay_in_the_namespace(world: StateBank) -> None:
    own = {ns: _ids(world, ns) for ns in TENANTS}
    everyone = set().union(*own.values())
    for ns in TENANTS:
        hits = world.search(ns, "I live in Boston.", k=50)  # identical vectors elsewhere
        assert hits and {h.record.id for h in hits} <= own[ns]
        foreign = sorted(everyone - own[ns])
        assert world.get_many(ns, foreign) == []  # even with the cache warm
        assert world.vectors(ns, foreign) == {}
        with pytest.raises(RecordNotFoundError):
            world.get(ns, foreign[0])


def test_read_graph_never_shows_another_tenants_memory(world: StateBank) -> None:
    for i, ns in enumerate(TENANTS):
        for question in (
            "Where do I live now?",
            "Where did I live before?",
            "What is my locker code?",
        ):
            res = ask(world, ns, question, k=5)
            assert {r.id for r in res.pool} <= _ids(world, ns)
            leaked = [
                c
                for j, c in enumerate(range(1000, 1000 + N_TENANTS))
                if j != i and str(c) in res.serialized
            ]
            assert leaked == [], (ns, question, leaked)


def test_retriever_is_bound_to_its_namespace(world: StateBank) -> None:
    for ns in TENANTS[:5]:
        docs = AtmaRetriever(bank=world, namespace=ns, k=10).invoke("locker code Boston")
        assert docs and {d.metadata["id"] for d in docs} <= _ids(world, ns)


# ============================================================ write path


class ForeignJudge(BaseJudge):
    """A judge that supersedes and names a record of another tenant (a 'confused' LLM)."""

    def __init__(self, foreign_id: str) -> None:
        self.foreign_id = foreign_id
        self.seen: list[str] = []

    def judge(self, inp: JudgeInput) -> Verdict:
        self.seen.append(inp.old.id)
        return Verdict(
            conflict=True,
            conflict_type="temporal",
            action="supersede",
            reason="told to",
            source="llm",
            suggested_links=[SuggestedLink(type=LinkType.SUPERSEDES, target_id=self.foreign_id)],
        )


def test_a_judge_naming_a_foreign_record_changes_nothing(small: StateBank) -> None:
    a, b = TENANTS[0], TENANTS[1]
    victim = next(r for r in small.records(b) if r.status is RecordStatus.ACTIVE)
    before = _snapshot(small, TENANTS[:3])
    judge = ForeignJudge(victim.id)
    trace: list[dict[str, Any]] = []
    rep = ingest_events(
        small,
        [
            {
                "text": "I moved to Seattle.",
                "speaker": "Ann",
                "timestamp": "2023-09-01",
                "event_id": "e4",
            }
        ],
        namespace=a,
        judge=judge,
        use_gate=False,
        trace=trace,
    )
    assert judge.seen and set(judge.seen) <= _ids(small, a)  # only own candidates judged
    assert rep.supersessions == 0
    after = _snapshot(small, TENANTS[:3])
    assert after[b] == before[b] and after[TENANTS[2]] == before[TENANTS[2]]
    assert {k: after[a][k] for k in before[a]} == before[a]
    entry = next(e for e in trace if e["node"] == "judge")
    assert all(v.startswith("[fallback] keep_both") for v in entry["decided"].values())
    assert all(small.verify(ns) == [] for ns in TENANTS[:3])


def test_commit_with_foreign_targets_or_links_is_rejected(small: StateBank) -> None:
    a, b = TENANTS[0], TENANTS[1]
    victim = next(r for r in small.records(b) if r.status is RecordStatus.ACTIVE)
    before = _snapshot(small, TENANTS[:3])
    with pytest.raises(RecordNotFoundError):
        small.commit(
            MemoryRecord(namespace=a, content="I moved to Paris."),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=victim.id)],
        )
    with pytest.raises(RecordNotFoundError):
        small.add(
            MemoryRecord(
                namespace=a, content="x", links=[{"type": "coexists", "target": victim.id}]
            )
        )
    hijack = MemoryRecord(namespace=a, content="hijack", id=victim.id)
    if small.host.namespaced:  # type: ignore[attr-defined]
        small.add(hijack)  # ids are scoped to the namespace's own collection
        assert small.get(a, victim.id).content == "hijack"
        before[a][victim.id] = ("active", "hijack", ())
    else:
        with pytest.raises(CommitError):  # reusing another tenant's id
            small.add(hijack)
    assert _snapshot(small, TENANTS[:3]) == before


def test_write_graph_candidates_never_cross_even_through_a_planted_link(
    small: StateBank,
) -> None:
    a, b = TENANTS[0], TENANTS[1]
    foreign = next(r for r in small.records(b) if r.status is RecordStatus.ACTIVE)
    _plant_link(small, a, foreign.id)
    nodes = WriteNodes(small, use_gate=False, candidate_k=8)
    out = nodes.propose(
        {"record": MemoryRecord(namespace=a, content="I live in Boston.", time="2023-10-01")}
    )
    cands = {c.id for c in out["candidates"]}
    assert cands and cands <= _ids(small, a) and foreign.id not in cands
    graph_out = create_write_graph(small, use_gate=False).invoke(
        {
            "record": MemoryRecord(
                namespace=a,
                content="We relocated to Seattle this fall.",
                time="2023-10-02",
                provenance=Provenance(speaker="Ann"),
            )
        }
    )
    written = graph_out["result"].record
    assert written is not None and written.namespace == a
    assert {c.id for c in graph_out["candidates"]} <= _ids(small, a)
    assert small.get(b, foreign.id).status is RecordStatus.ACTIVE


# ======================================================== read path, tampered


def _plant_link(bank: StateBank, ns: str, foreign_id: str) -> str:
    """Tamper with the host row of ``ns``'s live head: add a link to another tenant's id."""
    head = next(
        r for r in bank.records(ns) if r.status is RecordStatus.ACTIVE and "Seattle" in r.content
    )
    row = bank.host.get([head.id], namespace=ns)[0]
    links = json.loads(row.metadata["atma_links"])
    links += [["supersedes", foreign_id], ["related", foreign_id]]
    row.metadata["atma_links"] = json.dumps(links)
    bank.host.upsert([row])
    bank._cache_drop(ns, [head.id])  # the process cache would otherwise hide the tampering
    assert foreign_id in bank.get(ns, head.id).targets()  # the planted link is really there
    return head.id


@pytest.mark.parametrize("mode", ["online", "shadow", "off"])
def test_link_hop_to_a_foreign_id_is_ignored(small: StateBank, mode: str) -> None:
    a, b = TENANTS[0], TENANTS[1]
    foreign = {r.id for r in small.records(b)}
    target = next(r for r in small.records(b) if "Boston" in r.content)
    _plant_link(small, a, target.id)
    for question in ("Where did I live before?", "Where do I live now?", "How did my home change?"):
        res = ask(small, a, question, k=5, controller_mode=mode)
        assert not {r.id for r in res.pool} & foreign
        assert {r.record.namespace for r in res.pool} == {a}


def test_llm_controller_choosing_a_foreign_id_falls_back(small: StateBank) -> None:
    a, b = TENANTS[0], TENANTS[1]
    foreign = next(r for r in small.records(b) if "Seattle" in r.content)
    reply = json.dumps(
        {
            "query_mode": "current",
            "confidence": 1.0,
            "selected": [{"candidate_id": foreign.id, "rank": 1}],
        }
    )
    model = GenericFakeChatModel(messages=iter([AIMessage(content=reply)]))
    res = ask(
        small,
        a,
        "Where do I live now?",
        k=3,
        controller=LLMController(model, structured=False, timeout_s=10),
    )
    assert res.packet.controller_status == "fallback:invalid_ids"
    assert foreign.id not in {r.id for r in res.packet.rows}
    assert {r.record.namespace for r in res.packet.rows} == {a}


def test_verify_and_repair_of_one_tenant_leave_the_others_alone(small: StateBank) -> None:
    a, b, c = TENANTS[:3]
    target = next(r for r in small.records(b) if "Boston" in r.content)
    head = _plant_link(small, a, target.id)
    before = _snapshot(small, [b, c])
    problems = small.verify(a)
    assert problems and {v.record_id for v in problems} == {head}
    assert small.verify(b) == [] and small.verify(c) == []
    fixed = small.repair(a)
    assert fixed and small.verify(a) == []
    assert all(lk.target != target.id for lk in small.get(a, head).links)
    assert _snapshot(small, [b, c]) == before
    assert small.clear(c) == 3
    assert _snapshot(small, [b]) == {b: before[b]} and small.count(a) == 3


# ===================================================================== store


def test_store_namespaces_with_the_same_keys_are_isolated() -> None:
    store = AtmaStore(StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16)))
    spaces = [("users", f"u{i:02d}") for i in range(N_TENANTS)]
    for i, ns in enumerate(spaces):
        store.put(ns, "home", {"city": "Boston", "n": i})
        store.put(ns, "home", {"city": "Seattle", "n": i})
        store.put(ns, "code", {"text": f"locker {1000 + i}"})
    store.delete(spaces[3], "home")
    for i, ns in enumerate(spaces):
        home = store.get(ns, "home")
        if i == 3:
            assert home is None
        else:
            assert home is not None and home.value == {"city": "Seattle", "n": i}
        hits = store.search(ns, query="locker code", limit=20)
        assert hits and {h.namespace for h in hits} == {ns}
        assert [h.value for h in hits if h.key == "code"] == [{"text": f"locker {1000 + i}"}]
        assert [h.status for h in store.history(ns, "home")] == (
            ["superseded", "superseded", "deleted"] if i == 3 else ["superseded", "active"]
        )
        assert store.bank.verify(store.bank_namespace(ns)) == []
    listed = store.list_namespaces(prefix=("users",))
    assert sorted(listed) == sorted(spaces)
