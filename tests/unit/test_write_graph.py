"""Tests of the bank write graph (propose -> judge -> commit) and batch ingest."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.graph import END, START, StateGraph

from langchain_atma.bank import StateBank
from langchain_atma.bank.bank import CommitAction, CommitDecision
from langchain_atma.bank.gate import GateConfig, ProposalGate
from langchain_atma.bank.judge import (
    BaseJudge,
    JudgeInput,
    SuggestedLink,
    Verdict,
    keep_both_verdict,
)
from langchain_atma.bank.write_graph import (
    DEFAULT_CANDIDATE_K,
    IngestReport,
    MemoryEvent,
    WriteAudit,
    WriteNodes,
    WriteState,
    aingest_events,
    create_write_graph,
    derived_event_id,
    event_to_record,
    ingest_events,
)
from langchain_atma.errors import InvalidRecordError, NamespaceError
from langchain_atma.records import LinkType, MemoryRecord, Provenance, RecordStatus
from tests.unit.scripted_judge import ScriptedJudge

CONVERSATION = [
    ("Ann", "I live in Boston."),
    ("Bob", "Nice! How long have you been there?"),
    ("Ann", "I work as a nurse at the county hospital."),
    ("Ann", "I have a beagle named Pumble."),
    ("Ann", "I love hiking."),
    ("Bob", "I moved to Seattle last year, you should visit."),
    ("Ann", "I moved to Seattle last month."),
    ("Ann", "I switched careers and I'm a software developer now."),
    ("Ann", "I had to give Pumble away, my new landlord doesn't allow dogs."),
    ("Ann", "I only go hiking on weekends now."),
    ("Ann", "How was your trip, Bob?"),
]
T = [text for _who, text in CONVERSATION]
SCRIPT: dict[object, object] = {
    (T[0], T[6]): ("supersede", 0.9, "location"),
    (T[2], T[7]): ("supersede", 0.9, "job"),
    (T[3], T[8]): ("supersede", 0.9, "pets"),
    (T[4], T[9]): ("scoped_exception", 0.8, "hobbies"),
}


def _judge() -> ScriptedJudge:
    return ScriptedJudge(SCRIPT)


def _events(prefix: str = "e") -> list[dict[str, Any]]:
    return [
        {
            "text": text,
            "speaker": who,
            "timestamp": f"2023-{1 + i // 2:02d}-{1 + i % 2:02d}",
            "event_id": f"{prefix}{i}",
            "session_id": "s1",
        }
        for i, (who, text) in enumerate(CONVERSATION)
    ]


@pytest.fixture(scope="module")
def bank() -> StateBank:
    """One bank (real MiniLM encoder, in-memory Chroma) for the whole module."""
    return StateBank.in_memory()


def _by_event(bank: StateBank, ns: str) -> dict[str, MemoryRecord]:
    return {r.provenance.source_event_id or "": r for r in bank.records(ns)}


def _linked(a: MemoryRecord, b: MemoryRecord, *types: LinkType) -> bool:
    return any(lk.target == b.id and lk.type in types for lk in a.links)


def _check_conversation(bank: StateBank, ns: str) -> None:
    recs = _by_event(bank, ns)
    home, nurse, beagle, hiking = recs["e0"], recs["e2"], recs["e3"], recs["e4"]
    moved, dev, gave, weekends = recs["e6"], recs["e7"], recs["e8"], recs["e9"]
    for old, new in ((home, moved), (nurse, dev), (beagle, gave)):
        assert old.status is RecordStatus.SUPERSEDED, old.content
        assert new.status is RecordStatus.ACTIVE, new.content
        assert _linked(new, old, LinkType.SUPERSEDES)
        assert _linked(old, new, LinkType.SUPERSEDED_BY)
    assert hiking.status is RecordStatus.ACTIVE and weekends.status is RecordStatus.ACTIVE
    assert _linked(weekends, hiking, LinkType.SCOPED_EXCEPTION, LinkType.COEXISTS)
    for ev in ("e1", "e5", "e10"):  # Bob's turns and the question stay untouched
        assert recs[ev].status is RecordStatus.ACTIVE and recs[ev].links == []
    assert moved.slot == "location:ann" and dev.slot == "job:ann"
    # the slot is set after the "states a fact" flag: setting it must keep the flag
    assert moved.states_fact is True and dev.states_fact is True
    assert recs["e10"].states_fact is False  # a question states nothing
    assert bank.verify(ns) == []


def test_conversation_final_statuses_links_and_trace(bank: StateBank) -> None:
    trace: list[dict[str, Any]] = []
    judge = _judge()
    rep = ingest_events(bank, _events(), namespace="conv", use_gate=False, trace=trace, judge=judge)
    assert isinstance(rep, IngestReport)
    assert rep.events == rep.writes == len(CONVERSATION)
    assert rep.supersessions == 3 and rep.coexistences >= 1 and rep.duplicates == 0
    assert rep.judge_calls == rep.flagged_pairs == len(judge.seen) > 0
    # one person's words are never judged against another's state
    speaker = {text: who for who, text in CONVERSATION}
    assert all(speaker[o] == speaker[n] for o, n in judge.seen)
    assert rep.judge_calls_per_write == pytest.approx(rep.judge_calls / rep.writes, abs=1e-3)
    assert set(rep.seconds) >= {"encode", "propose", "judge", "commit", "total"}
    assert len(rep.record_ids) == len(CONVERSATION) and all(rep.record_ids)
    _check_conversation(bank, "conv")
    nodes = [t["node"] for t in trace]
    assert nodes.count("propose") == nodes.count("commit") == len(CONVERSATION)
    assert "judge" in nodes
    for entry in trace:
        assert entry["level"] == "bank" and set(entry) == {"level", "node", "saw", "decided", "ms"}
        assert entry["ms"] >= 0


def test_reingest_is_idempotent(bank: StateBank) -> None:
    ingest_events(bank, _events(), namespace="idem", use_gate=False, judge=_judge())
    before = {r.id: (r.status, r.links) for r in bank.records("idem")}
    rep = ingest_events(bank, _events(), namespace="idem", use_gate=False, judge=_judge())
    assert rep.idempotent == len(CONVERSATION) and rep.writes == 0 and rep.judge_calls == 0
    assert {r.id: (r.status, r.links) for r in bank.records("idem")} == before


def test_async_ingest_matches_sync(bank: StateBank) -> None:
    rep = asyncio.run(
        aingest_events(
            bank,
            [MemoryEvent(**e) for e in _events()],
            namespace="async",
            use_gate=False,
            judge=_judge(),
        )
    )
    assert rep.supersessions == 3
    _check_conversation(bank, "async")


def test_judge_is_skipped_when_nothing_is_flagged(bank: StateBank) -> None:
    judge = _judge()
    trace: list[dict[str, Any]] = []
    nothing = ProposalGate(GateConfig(min_score=2.0))
    rep = ingest_events(bank, _events(), namespace="nogate", gate=nothing, judge=judge, trace=trace)
    assert judge.seen == [] and rep.judge_calls == 0 and rep.flagged_pairs == 0
    assert rep.candidate_pairs > 0
    assert "judge" not in {t["node"] for t in trace}
    assert all(not r.links for r in bank.records("nogate"))


def test_gate_routes_only_flagged_pairs(bank: StateBank) -> None:
    judge = _judge()
    trace: list[dict[str, Any]] = []
    rep = ingest_events(
        bank,
        _events(),
        namespace="gate",
        judge=judge,
        trace=trace,
        gate=ProposalGate(GateConfig(max_judged=1)),
    )
    assert 0 < rep.flagged_pairs < rep.candidate_pairs
    assert len(judge.seen) == rep.judge_calls == rep.flagged_pairs
    assert max(len(t["decided"]["flagged"]) for t in trace if t["node"] == "propose") == 1


def test_ablations(bank: StateBank) -> None:
    rep = ingest_events(bank, _events(), namespace="nojudge", use_gate=False, use_judge=False)
    assert rep.judge_calls == 0 and rep.flagged_pairs > 0 and rep.supersessions == 0
    assert all(not r.links and r.status is RecordStatus.ACTIVE for r in bank.records("nojudge"))
    rep2 = ingest_events(bank, _events(), namespace="allpairs", use_gate=False, judge=_judge())
    assert rep2.flagged_pairs == rep2.candidate_pairs == rep2.judge_calls


class RunNames(BaseCallbackHandler):
    """Collects run names, tags and metadata of chain runs."""

    def __init__(self) -> None:
        self.runs: list[tuple[str | None, list[str], dict[str, Any]]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:  # noqa: D102
        self.runs.append(
            (kw.get("name"), list(kw.get("tags") or []), dict(kw.get("metadata") or {}))
        )


def test_graph_invoke_run_names_and_subgraph(bank: StateBank) -> None:
    judge = ScriptedJudge(
        {"I moved to Seattle last month.": "supersede", "Tom passed away last week.": "supersede"}
    )
    graph = create_write_graph(bank, use_gate=False, judge=judge)
    ns = "graph"
    first = MemoryRecord(
        namespace=ns,
        content="I live in Boston.",
        time="2023-01-01",
        provenance=Provenance(speaker="Ann", source_event_id="g1"),
    )
    out = graph.invoke({"record": first})
    assert out["result"].record.id == first.id and "judge" not in {t["node"] for t in out["trace"]}
    handler = RunNames()
    second = MemoryRecord(
        namespace=ns,
        content="I moved to Seattle last month.",
        time="2023-06-01",
        provenance=Provenance(speaker="Ann", source_event_id="g2"),
    )
    out = graph.invoke({"record": second}, config={"callbacks": [handler]})
    assert [t["node"] for t in out["trace"]] == ["propose", "judge", "commit"]
    assert out["flagged"] == [first.id]
    assert out["verdicts"][0]["verdict"].action == "supersede"
    assert bank.get(ns, first.id).status is RecordStatus.SUPERSEDED
    names = {name: (tags, md) for name, tags, md in handler.runs}
    for node in ("propose", "judge", "commit"):
        tags, md = names[f"atma.bank.{node}"]
        assert {"atma", "atma:bank"} <= set(tags)
        assert md["atma.level"] == "bank" and md["atma.node"] == node

    parent: StateGraph = StateGraph(WriteState)
    parent.add_node("write", graph)
    parent.add_edge(START, "write")
    parent.add_edge("write", END)
    third = MemoryRecord(
        namespace=ns,
        content="I adopted a cat named Tom.",
        time="2023-07-01",
        provenance=Provenance(speaker="Ann"),
    )
    res = parent.compile().invoke({"record": third})
    assert res["result"].record.id == third.id
    fourth = MemoryRecord(
        namespace=ns,
        content="Tom passed away last week.",
        time="2023-09-01",
        provenance=Provenance(speaker="Ann"),
    )
    res = asyncio.run(graph.ainvoke({"record": fourth}))
    assert bank.get(ns, third.id).status is RecordStatus.SUPERSEDED
    assert bank.verify(ns) == []


class StubJudge(BaseJudge):
    """Returns a verdict built by a callback."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def judge(self, inp: JudgeInput) -> Verdict:  # noqa: D102
        return self.fn(inp)


def _sup(
    inp: JudgeInput,
    conf: float = 0.6,
    slot: str | None = "location",
    target: str | None = None,
    entities: list[str] | None = None,
) -> Verdict:
    return Verdict(
        conflict=True,
        conflict_type="temporal",
        action="supersede",
        slot=slot,
        confidence=conf,
        entities=entities or [],
        suggested_links=[SuggestedLink(type=LinkType.SUPERSEDES, target_id=target or inp.old.id)],
    )


def _add(bank: StateBank, ns: str, text: str, t: str, **kw: Any) -> MemoryRecord:
    return bank.add(
        MemoryRecord(namespace=ns, content=text, time=t, provenance=Provenance(speaker="Ann"), **kw)
    )


def test_disappeared_candidate_falls_back_without_half_write(bank: StateBank) -> None:
    ns = "gone"
    old = _add(bank, ns, "I live in Boston.", "2023-01-01")

    def vanish(inp: JudgeInput) -> Verdict:
        bank.host.delete([inp.old.id])  # the candidate disappears before commit
        return _sup(inp)

    trace: list[dict[str, Any]] = []
    rep = ingest_events(
        bank,
        [{"text": "I moved to Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        use_gate=False,
        judge=StubJudge(vanish),
        trace=trace,
    )
    assert rep.writes == 1 and rep.supersessions == 0 and rep.fallbacks >= 1
    commit = [t for t in trace if t["node"] == "commit"][0]
    assert any("missing target" in f for f in commit["decided"]["fallbacks"])
    (new,) = bank.records(ns)
    assert new.id != old.id and new.links == [] and bank.verify(ns) == []


def test_verdict_naming_unknown_id_is_dropped(bank: StateBank) -> None:
    ns = "unknown"
    _add(bank, ns, "I live in Boston.", "2023-01-01")
    rep = ingest_events(
        bank,
        [{"text": "I moved to Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        use_gate=False,
        judge=StubJudge(lambda inp: _sup(inp, target="ghost")),
    )
    assert rep.writes == 1 and rep.supersessions == 0
    assert all(not r.links and r.status is RecordStatus.ACTIVE for r in bank.records(ns))


def test_only_best_supported_supersede_per_slot(bank: StateBank) -> None:
    ns = "best"
    a = _add(bank, ns, "I live in Boston.", "2023-01-01")
    b = _add(bank, ns, "I live near the harbour.", "2023-02-01")
    conf = {a.id: 0.9, b.id: 0.5}
    rep = ingest_events(
        bank,
        [{"text": "I moved to Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        use_gate=False,
        judge=StubJudge(lambda inp: _sup(inp, conf[inp.old.id])),
    )
    assert rep.supersessions == 1
    assert bank.get(ns, a.id).status is RecordStatus.SUPERSEDED
    assert bank.get(ns, b.id).status is RecordStatus.ACTIVE
    # the same entity named by both verdicts: earlier records of one state, both superseded
    ns2 = "best2"
    a2 = _add(bank, ns2, "I live in Boston.", "2023-01-01")
    b2 = _add(bank, ns2, "Boston winters are long.", "2023-02-01")
    conf2 = {a2.id: 0.9, b2.id: 0.5}
    ingest_events(
        bank,
        [{"text": "I left Boston for Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns2,
        use_gate=False,
        judge=StubJudge(lambda inp: _sup(inp, conf2[inp.old.id], entities=["boston"])),
    )
    assert {bank.get(ns2, x.id).status for x in (a2, b2)} == {RecordStatus.SUPERSEDED}
    assert bank.verify(ns2) == []


def test_slot_clash_falls_back_to_no_slot(bank: StateBank) -> None:
    ns = "slots"
    held = _add(bank, ns, "My office is on Main Street.", "2023-01-01", slot="location:ann")
    target = _add(bank, ns, "I live in Boston.", "2023-02-01")

    def only_target(inp: JudgeInput) -> Verdict:
        return _sup(inp) if inp.old.id == target.id else keep_both_verdict("no")

    trace: list[dict[str, Any]] = []
    ingest_events(
        bank,
        [{"text": "I moved to Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        use_gate=False,
        judge=StubJudge(only_target),
        trace=trace,
    )
    recs = _by_event(bank, ns)
    new = [r for r in recs.values() if r.content == "I moved to Seattle."][0]
    assert new.slot is None and bank.get(ns, target.id).status is RecordStatus.SUPERSEDED
    assert bank.get(ns, held.id).status is RecordStatus.ACTIVE
    fb = [t for t in trace if t["node"] == "commit"][0]["decided"]["fallbacks"]
    assert any("without the slot" in f for f in fb)
    assert bank.verify(ns) == []


def test_slot_clash_supersedes_when_the_judge_said_so(bank: StateBank) -> None:
    ns = "slots2"
    held = _add(bank, ns, "My flat is in Leeds.", "2023-01-01", slot="location:ann")
    target = _add(bank, ns, "I live in Boston.", "2023-02-01")
    conf = {held.id: 0.4, target.id: 0.9}
    ingest_events(
        bank,
        [{"text": "I moved to Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        use_gate=False,
        judge=StubJudge(lambda inp: _sup(inp, conf[inp.old.id])),
    )
    new = [r for r in bank.records(ns) if r.content == "I moved to Seattle."][0]
    assert new.slot == "location:ann"
    assert {bank.get(ns, x.id).status for x in (held, target)} == {RecordStatus.SUPERSEDED}
    assert bank.verify(ns) == []


def test_history_supersede_kept_when_no_live_record_is_replaced(bank: StateBank) -> None:
    ns = "hist"
    old = _add(bank, ns, "The allotment keeps me sane.", "2023-01-01")
    first = _add(bank, ns, "The water bill came to $85 last quarter.", "2023-02-01")
    # an earlier write superseded the old record (wrongly, say) ...
    handed_in = "Handed the allotment keys in, no more digging for me."
    bank.commit(
        MemoryRecord(
            namespace=ns, content=handed_in, time="2023-03-01", provenance=Provenance(speaker="Ann")
        ),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    )
    assert bank.get(ns, old.id).status is RecordStatus.SUPERSEDED

    def only_old(inp: JudgeInput) -> Verdict:  # the live candidates are kept apart
        return _sup(inp, slot=None) if inp.old.id == old.id else keep_both_verdict("no")

    ingest_events(
        bank,
        [
            {
                "text": "Dropped the carb counting, meat is off my plate now.",
                "speaker": "Ann",
                "timestamp": "2023-05-01",
            }
        ],
        namespace=ns,
        use_gate=False,
        judge=StubJudge(only_old),
    )
    new = [r for r in bank.records(ns) if r.content.startswith("Dropped the carb")][0]
    # ... the later record that replaces it is still linked to it (history kept)
    assert new.has_link(LinkType.SUPERSEDES, old.id) and new.status is RecordStatus.ACTIVE
    assert new.slot is None and bank.get(ns, old.id).status is RecordStatus.SUPERSEDED
    assert bank.get(ns, first.id).status is RecordStatus.ACTIVE and bank.verify(ns) == []


def test_duplicate_wins_alone(bank: StateBank) -> None:
    ns = "dups"
    _add(bank, ns, "I adopted a cat named Tom.", "2023-01-01")
    rep = ingest_events(
        bank,
        [{"text": "I adopted a cat named Tom!", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        use_gate=False,
        judge=ScriptedJudge({"I adopted a cat named Tom!": "noop"}),
    )
    assert rep.duplicates == 1 and rep.writes == 0 and rep.record_ids == [None]
    assert bank.count(ns) == 1


def test_transition_then_outcome_links_old_and_new(bank: StateBank) -> None:
    ns = "trans"
    events = [
        {"text": "I live in Boston.", "speaker": "Ann", "timestamp": "2023-01-01"},
        {
            "text": "I'm in the middle of moving from Boston to Seattle.",
            "speaker": "Ann",
            "timestamp": "2023-03-01",
        },
        {
            "text": "Seattle is home now, the boxes are finally unpacked.",
            "speaker": "Ann",
            "timestamp": "2023-05-01",
        },
    ]
    judge = ScriptedJudge(
        {
            (events[0]["text"], events[1]["text"]): "transition",
            (events[1]["text"], events[2]["text"]): "supersede",
        }
    )
    rep = ingest_events(bank, events, namespace=ns, use_gate=False, judge=judge)
    old, trans, new = bank.records(ns)
    assert rep.transitions == 1
    assert trans.status is RecordStatus.TRANSITION and old.status is RecordStatus.SUPERSEDED
    assert new.status is RecordStatus.ACTIVE
    assert _linked(new, trans, LinkType.EVOLVES_FROM) and _linked(new, old, LinkType.SUPERSEDES)
    assert bank.verify(ns) == []


def test_events_and_errors(bank: StateBank) -> None:
    rec = event_to_record(
        {
            "text": "hi there",
            "speaker": "Ann",
            "event_id": "x1",
            "timestamp": 0,
            "metadata": {"k": 1, "none": None},
        },
        "ev",
    )
    assert rec.provenance.source_event_id == "x1" and rec.metadata == {"k": 1}
    with pytest.raises(InvalidRecordError):
        event_to_record({"speaker": "Ann"}, "ev")
    with pytest.raises(InvalidRecordError):
        ingest_events(bank, "not events", namespace="ev")  # type: ignore[arg-type]
    with pytest.raises(NamespaceError):
        ingest_events(bank, [], namespace="bad namespace!")
    nodes = WriteNodes(bank, use_gate=False, judge=ScriptedJudge())
    with pytest.raises(NamespaceError):
        nodes.propose({"namespace": "other", "record": MemoryRecord(namespace="ev", content="x")})
    with pytest.raises(InvalidRecordError):
        WriteNodes(bank, candidate_k=0)
    empty = ingest_events(bank, [], namespace="ev")
    assert empty.events == 0 and empty.writes == 0


def test_candidates_are_live_neighbours_plus_one_hop(bank: StateBank) -> None:
    ns = "hop"
    ingest_events(
        bank,
        [
            {"text": "I live in Boston.", "speaker": "Ann", "timestamp": "2023-01-01"},
            {"text": "I moved to Seattle last month.", "speaker": "Ann", "timestamp": "2023-05-01"},
        ],
        namespace=ns,
        use_gate=False,
        judge=ScriptedJudge({"I moved to Seattle last month.": "supersede"}),
    )
    boston, denver = bank.records(ns)
    assert boston.status is RecordStatus.SUPERSEDED
    nodes = WriteNodes(bank, use_gate=False, candidate_k=1, judge=ScriptedJudge())
    rec = MemoryRecord(namespace=ns, content="Seattle has great coffee.", time="2023-06-01")
    out = nodes.propose({"record": rec})
    ids = [c.id for c in out["candidates"]]
    assert ids[0] == denver.id and boston.id in ids  # live hit, then its linked history
    assert all(s["live"] == (s["id"] != boston.id) for s in out["scores"])


def test_throughput_is_reported(bank: StateBank) -> None:
    events = [
        {
            "text": f"Small talk number {i} about the weather.",
            "speaker": "Ann",
            "timestamp": 1_700_000_000 + i,
        }
        for i in range(20)
    ]
    rep = ingest_events(bank, events, namespace="speed", judge=ScriptedJudge())
    assert rep.events == 20 and rep.events_per_s > 0
    assert sum(itertools.chain(rep.seconds.values())) > 0


# ------------------------------------------------------------- the default gate


def test_default_gate_ranks_centred_and_caps_judged_pairs_per_write(bank: StateBank) -> None:
    nodes = WriteNodes(bank, judge=ScriptedJudge())
    assert isinstance(nodes.gate, ProposalGate) and nodes.gate.config == GateConfig()
    assert nodes.candidate_k == DEFAULT_CANDIDATE_K
    trace: list[dict[str, Any]] = []
    events = _events() + [
        {
            "text": f"Small talk number {i}, lovely weather.",
            "speaker": "Ann",
            "timestamp": f"2024-01-{1 + i:02d}",
        }
        for i in range(20)
    ]
    rep = ingest_events(bank, events, namespace="gate-default", trace=trace, judge=_judge())
    proposes = [t for t in trace if t["node"] == "propose"]
    assert max(len(t["decided"]["flagged"]) for t in proposes) == GateConfig().max_judged
    assert rep.flagged_pairs < rep.candidate_pairs
    _check_conversation(bank, "gate-default")  # the scripted updates still land


def test_pool_is_the_speakers_neighbourhood(bank: StateBank) -> None:
    ns = "pool"
    bob = [
        {
            "text": f"I moved to Seattle last month, day {i} of unpacking.",
            "speaker": "Bob",
            "timestamp": f"2023-02-{1 + i:02d}",
            "event_id": f"b{i}",
        }
        for i in range(6)
    ]
    ingest_events(
        bank,
        [
            {
                "text": "I live in Boston.",
                "speaker": "Ann",
                "timestamp": "2023-01-01",
                "event_id": "a0",
            },
            *bob,
        ],
        namespace=ns,
        use_judge=False,
    )
    nodes = WriteNodes(bank, candidate_k=3, use_judge=False, judge=ScriptedJudge())
    rec = MemoryRecord(
        namespace=ns,
        content="I moved to Seattle last month.",
        time="2023-06-01",
        provenance=Provenance(speaker="Ann", source_event_id="a1"),
    )
    out = nodes.propose({"record": rec})
    # Bob's six Seattle records are closer, but they are not Ann's state: the
    # speaker-filtered query still brings Ann's Boston record into the pool
    assert [c.content for c in out["candidates"]] == ["I live in Boston."]
    assert out["flagged"] == [out["candidates"][0].id]
    assert {"similarity", "score", "live", "flagged"} <= set(out["scores"][0])


def test_judge_sees_the_gate_scores_of_each_pair(bank: StateBank) -> None:
    seen: list[JudgeInput] = []

    def record(inp: JudgeInput) -> Verdict:
        seen.append(inp)
        return keep_both_verdict("recorded")

    ingest_events(bank, _events(), namespace="gatescores", use_gate=False, judge=StubJudge(record))
    assert seen
    for inp in seen:  # the gate's centred score and the raw cosine
        assert inp.gate_score is not None and inp.similarity is not None
    # the centred score is the gate's own number, not a copy of the cosine
    assert any(
        abs(inp.gate_score - inp.similarity) > 1e-3
        for inp in seen
        if inp.gate_score is not None and inp.similarity is not None
    )


def _cox(inp: JudgeInput) -> Verdict:
    return Verdict(
        conflict=False,
        conflict_type="scope",
        action="coexist",
        slot="hobbies",
        confidence=0.5,
        suggested_links=[SuggestedLink(type=LinkType.COEXISTS, target_id=inp.old.id)],
    )


def _bridge_events(old: str, bridge: str, new: str) -> list[dict[str, Any]]:
    return [
        {"text": t, "speaker": "Ann", "timestamp": f"2023-0{i + 1}-01", "event_id": f"b{i}"}
        for i, t in enumerate((old, bridge, new))
    ]


@pytest.mark.parametrize(
    ("old", "bridge", "new", "linked"),
    [
        # the bridge names both values: the new record coexists with the old one too
        (
            "Watercolour painting is how I unwind.",
            "Lately I'm easing off watercolour, charcoal sketching keeps pulling me in.",
            "Charcoal sketching fills my evenings.",
            True,
        ),
        # the bridge does not name the old record's value: no closure
        (
            "Watercolour painting is how I unwind.",
            "Lately charcoal sketching keeps pulling me in.",
            "Charcoal sketching fills my evenings.",
            False,
        ),
        # the bridge states no change: it is not a description of one
        (
            "Watercolour painting is how I unwind.",
            "Watercolour and charcoal sketching are both fun.",
            "Charcoal sketching fills my evenings.",
            False,
        ),
        # the "old" record is itself a change description that only shares wording
        (
            "Lately I'm easing off watercolour, pastels keep pulling me in.",
            "Lately I'm easing off watercolour, charcoal sketching keeps pulling me in.",
            "Charcoal sketching fills my evenings.",
            False,
        ),
    ],
)
def test_bridge_closure_links_the_states_a_change_record_names(
    bank: StateBank, old: str, bridge: str, new: str, linked: bool
) -> None:
    ns = f"bridge-{linked}-{abs(hash((old, bridge))) % 10_000}"

    def verdict(inp: JudgeInput) -> Verdict:
        # the judge links each record to the one written just before it, never new-old
        return (
            _cox(inp)
            if (inp.old.content, inp.new.content) in {(old, bridge), (bridge, new)}
            else keep_both_verdict("not this pair")
        )

    trace: list[dict[str, Any]] = []
    rep = ingest_events(
        bank,
        _bridge_events(old, bridge, new),
        namespace=ns,
        use_gate=False,
        judge=StubJudge(verdict),
        trace=trace,
    )
    recs = _by_event(bank, ns)
    o, b, n = recs["b0"], recs["b1"], recs["b2"]
    assert _linked(b, o, LinkType.COEXISTS) and _linked(n, b, LinkType.COEXISTS)
    assert _linked(n, o, LinkType.COEXISTS) is linked
    assert {r.status for r in (o, b, n)} == {RecordStatus.ACTIVE}
    assert rep.coexistences == 2 + linked and bank.verify(ns) == []
    applied = [t for t in trace if t["node"] == "commit"][-1]["decided"]["applied"]
    assert (f"coexist:{o.id}" in applied) is linked


def test_judge_reads_the_centred_score_of_the_pool_query(bank: StateBank) -> None:
    ns = "centred"
    old = _add(bank, ns, "I live in Boston.", "2023-01-01")
    _add(bank, ns, "Lovely weather today!", "2023-02-01")
    seen: list[JudgeInput] = []

    def record(inp: JudgeInput) -> Verdict:
        seen.append(inp)
        return keep_both_verdict("test")

    ingest_events(
        bank,
        [{"text": "I moved to Seattle.", "speaker": "Ann", "timestamp": "2023-05-01"}],
        namespace=ns,
        judge=StubJudge(record),
    )
    inp = next(i for i in seen if i.old.id == old.id)
    new_vec, (old_vec,) = bank.embed(["I moved to Seattle."]), bank.embed([old.content])
    centre = bank.embed([old.content, "Lovely weather today!"]).mean(axis=0)
    gs = ProposalGate().score(new_vec[0], old_vec[None, :], centre=centre)
    assert inp.gate_score == pytest.approx(float(gs.score[0]), abs=1e-4)
    assert inp.similarity == pytest.approx(float(gs.similarity[0]), abs=1e-4)


def test_audit_lists_what_each_write_saw_and_decided(bank: StateBank) -> None:
    audit: list[WriteAudit] = []
    rep = ingest_events(
        bank, _events(), namespace="audit", use_gate=False, audit=audit, judge=_judge()
    )
    assert len(audit) == len(CONVERSATION)
    assert [a.record_id for a in audit] == rep.record_ids
    assert [a.event_id for a in audit] == [e["event_id"] for e in _events()]
    recs = _by_event(bank, "audit")
    boston, denver = recs["e0"], recs["e6"]
    moved = audit[6]
    assert boston.id in moved.candidates and boston.id in moved.flagged
    assert moved.verdicts[boston.id].startswith("supersede/")
    assert moved.applied[boston.id] == "supersede"
    assert moved.step(boston.id, {"supersede", "transition"}) == "linked"
    assert moved.step(boston.id, {"coexist"}) == "judged_otherwise"
    # the first write had nothing to compare with
    assert audit[0].candidates == [] and audit[0].verdicts == {} and audit[0].applied == {}
    assert sum(len(a.verdicts) for a in audit) == rep.judge_calls
    assert sum(len(a.applied) for a in audit) == (
        rep.supersessions + rep.transitions + rep.coexistences
    )
    assert denver.id == moved.record_id
    # a second ingest of the same events is idempotent: the audit says so
    again: list[WriteAudit] = []
    ingest_events(bank, _events(), namespace="audit", use_gate=False, audit=again, judge=_judge())
    assert all(a.idempotent and a.candidates == [] for a in again)
    assert [a.record_id for a in again] == rep.record_ids


def test_async_ingest_fills_the_same_audit(bank: StateBank) -> None:
    sync: list[WriteAudit] = []
    ingest_events(
        bank, _events("s"), namespace="audit-s", use_gate=False, audit=sync, judge=_judge()
    )
    asy: list[WriteAudit] = []
    asyncio.run(
        aingest_events(
            bank, _events("s"), namespace="audit-a", use_gate=False, audit=asy, judge=_judge()
        )
    )

    def shape(audits: list[WriteAudit]) -> list[tuple[int, int, list[str], list[str]]]:
        return [
            (
                len(a.candidates),
                len(a.flagged),
                sorted(a.verdicts.values()),
                sorted(a.applied.values()),
            )
            for a in audits
        ]

    assert shape(sync) == shape(asy)


@pytest.mark.parametrize(
    ("audit", "expected"),
    [
        (WriteAudit(), "not_candidate"),
        (WriteAudit(candidates=["o"]), "not_flagged"),
        (WriteAudit(candidates=["o"], flagged=["o"]), "not_judged"),
        (
            WriteAudit(candidates=["o"], flagged=["o"], verdicts={"o": "keep_both/none"}),
            "judged_otherwise",
        ),
        (
            WriteAudit(candidates=["o"], flagged=["o"], verdicts={"o": "supersede/temporal"}),
            "not_applied",
        ),
        (
            WriteAudit(
                candidates=["o"],
                flagged=["o"],
                verdicts={"o": "supersede/temporal"},
                applied={"o": "coexist"},
            ),
            "not_applied",
        ),
        (
            WriteAudit(
                candidates=["o"],
                flagged=["o"],
                verdicts={"o": "transition/temporal"},
                applied={"o": "transition"},
            ),
            "linked",
        ),
        # another candidate's verdict says nothing about this one
        (
            WriteAudit(
                candidates=["o", "x"],
                flagged=["x"],
                verdicts={"x": "supersede/value"},
                applied={"x": "supersede"},
            ),
            "not_flagged",
        ),
    ],
)
def test_write_audit_step(audit: WriteAudit, expected: str) -> None:
    assert audit.step("o", ["supersede", "transition"]) == expected


def test_events_without_ids_are_idempotent_when_timestamped(bank: StateBank) -> None:
    events = [{k: v for k, v in e.items() if k != "event_id"} for e in _events()]
    ingest_events(bank, events, namespace="noid", use_gate=False, judge=_judge())
    before = {r.id: (r.status, r.links) for r in bank.records("noid")}
    again = [{**e, "text": "  " + e["text"].upper() + " "} for e in events]
    rep = ingest_events(bank, again, namespace="noid", use_gate=False, judge=_judge())
    assert rep.idempotent == len(CONVERSATION) and rep.writes == 0
    assert {r.id: (r.status, r.links) for r in bank.records("noid")} == before
    # another time, speaker, text or namespace is another event
    first = MemoryEvent(**events[0])
    variants = [
        MemoryEvent(**{**events[0], **change})
        for change in (
            {"timestamp": events[1]["timestamp"]},
            {"speaker": "Bob"},
            {"text": "I live in Boston!"},
        )
    ]
    ids = {derived_event_id(ev, "noid") for ev in [first, *variants]}
    assert len(ids) == 4 and derived_event_id(first, "other") not in ids
    # without a timestamp the event is "now": each call is a new event
    untimed = {"text": "Back from the dentist.", "speaker": "Ann"}
    assert event_to_record(untimed, "noid").provenance.source_event_id is None


def test_ingest_reads_the_host_few_times_per_write() -> None:
    """One event lookup (propose and commit share a lock hold), hit vectors reused."""
    from langchain_atma.bank import ChromaHost
    from langchain_atma.benchmarks.perf import _CountingHost

    host = _CountingHost(ChromaHost.ephemeral())
    bank = StateBank(host=host, embeddings=DeterministicFakeEmbedding(size=16))  # type: ignore
    events = [
        {
            "text": f"Note number {i} about the garden.",
            "speaker": "Ann",
            "timestamp": f"2024-01-{i + 1:02d}",
            "event_id": f"e{i}",
        }
        for i in range(12)
    ]
    ingest_events(bank, events, namespace="u", use_judge=False)
    # the source event, once per write, and the centroid's first sample
    assert host.calls["scan"] == 12 + 1
    assert host.calls["get"] <= 12 + 1  # the id clash check; no vector read for hits
    assert host.calls["upsert"] == 12
    host.calls.clear()
    rep = ingest_events(bank, events, namespace="u", use_judge=False)
    assert rep.writes == 0 and host.calls.get("upsert", 0) == 0  # idempotent replay
