from __future__ import annotations

import json
import re

import pytest
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from langchain_atma.bank import StateBank
from langchain_atma.bank.write_graph import create_write_graph
from langchain_atma.errors import ConfigError
from langchain_atma.records import MemoryRecord, RecordStatus
from langchain_atma.retrieval.read_graph import create_read_graph
from langchain_atma.tracing import TraceCollector, export_jsonl, run_to_dict
from tests.unit.scripted_judge import ScriptedJudge

NAME = re.compile(r"^atma\.(bank|retrieval|qa)\.[a-z_]+$")


@pytest.fixture(scope="module")
def traced(minilm):
    """One write (through the write graph) and one read, both traced offline."""
    bank = StateBank.in_memory(embeddings=minilm)
    judge = ScriptedJudge({"I moved to Seattle last month.": "supersede"})
    write = create_write_graph(bank, use_gate=False, judge=judge)  # every live candidate
    write_runs = TraceCollector(capture_io=True)
    write.invoke(
        {"record": MemoryRecord(namespace="tr", content="I live in Boston.", time="2023-01-01")}
    )
    out = write.invoke(
        {
            "record": MemoryRecord(
                namespace="tr", content="I moved to Seattle last month.", time="2023-06-01"
            )
        },
        {"callbacks": [write_runs]},
    )
    read_runs = TraceCollector()
    tracer = RunCollectorCallbackHandler()
    read = create_read_graph(bank, namespace="tr").invoke(
        {"question": "Where do I live now?"}, {"callbacks": [read_runs, tracer]}
    )
    return {
        "bank": bank,
        "write": write_runs,
        "write_out": out,
        "read": read_runs,
        "read_out": read,
        "tracer": tracer,
    }


def _check_levels(runs: list[dict]) -> None:
    """Every node run ``atma.<level>.<node>`` carries its level in metadata and tags.

    The graph root itself (``atma.bank.write``, parent None) is a LangGraph graph
    run without node metadata, so only runs below a root are checked.
    """
    checked = 0
    for run in runs:
        m = NAME.match(run["name"])
        if m is None or run["parent_id"] is None:
            continue
        checked += 1
        level = m.group(1)
        assert run["metadata"].get("atma.level") == level, run["name"]
        assert run["level"] == level
        assert "atma" in run["tags"] and f"atma:{level}" in run["tags"], run["name"]
        assert run["status"] == "ok" and run["end_time"] is not None
    assert checked >= 3


def _ancestors(col: TraceCollector, run: dict) -> list[str]:
    by_id = {r["id"]: r for r in col.runs}
    names = []
    while run["parent_id"] in by_id:
        run = by_id[run["parent_id"]]
        names.append(run["name"])
    return names


def test_write_runs_are_bank_level(traced):
    col: TraceCollector = traced["write"]
    assert traced["write_out"]["result"].updated[0].status is RecordStatus.SUPERSEDED
    bank_runs = col.atma_runs("bank")
    nodes = [r["name"] for r in bank_runs if r["parent_id"] is not None]
    assert nodes == ["atma.bank.propose", "atma.bank.judge", "atma.bank.commit"]
    _check_levels(col.runs)
    assert col.atma_runs("retrieval") == [] and col.atma_runs("qa") == []
    root = col.roots()
    assert [r["name"] for r in root] == ["atma.bank.write"]
    for run in bank_runs[1:]:
        assert _ancestors(col, run)[-1] == "atma.bank.write"
    assert {r["metadata"]["atma.node"] for r in bank_runs[1:]} == {"propose", "judge", "commit"}
    assert "inputs" in bank_runs[1] and "outputs" in bank_runs[1]  # capture_io


def test_read_runs_are_retrieval_then_qa(traced):
    col: TraceCollector = traced["read"]
    _check_levels(col.runs)
    ret = [r["name"] for r in col.atma_runs("retrieval")]
    qa = [r["name"] for r in col.atma_runs("qa")]
    assert ret == [
        "atma.retrieval.profile",
        "atma.retrieval.seed",
        "atma.retrieval.expand",
        "atma.retrieval.rank",
    ]
    assert qa == ["atma.qa.serialize", "atma.qa.answer"]
    assert col.atma_runs("bank") == []
    order = [r["name"] for r in col.atma_runs()]
    assert max(order.index(n) for n in ret) < min(order.index(n) for n in qa)
    # the T_q summary run hangs under the answer node and carries the answer
    summary = [r for r in col.runs if r["name"] == "atma.trace"]
    assert len(summary) == 1 and summary[0]["level"] == "qa"
    assert "atma.qa.answer" in _ancestors(col, summary[0])
    answer = traced["read_out"]["answer"].answer
    assert summary[0]["metadata"]["atma.trace"]["answer"] == answer
    assert "Seattle" in answer
    assert [r["name"] for r in col.roots()] == ["atma.read"]
    with pytest.raises(ConfigError):
        col.atma_runs("storage")


def test_langchain_tracer_sees_the_same_levels(traced):
    runs = [d for root in traced["tracer"].traced_runs for d in run_to_dict(root)]
    _check_levels(runs)
    names = {r["name"] for r in runs}
    assert {"atma.retrieval.seed", "atma.qa.answer"} <= names
    ours = {r["name"] for r in traced["read"].runs}
    assert names == ours


def test_export_jsonl(traced, tmp_path):
    path = tmp_path / "out" / "trace.jsonl"
    n = export_jsonl(traced["write"], path)
    n += export_jsonl(traced["read"], path, append=True)
    n += export_jsonl(traced["read_out"]["trace"], path, append=True)
    n += export_jsonl(traced["tracer"].traced_runs, path, append=True)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == n > 0
    rows = [json.loads(line) for line in lines]
    assert {r.get("level") for r in rows} >= {"bank", "retrieval", "qa"}
    entries = [r for r in rows if "node" in r and "saw" in r]
    assert [e["node"] for e in entries] == [
        "profile",
        "seed",
        "expand",
        "rank",
        "serialize",
        "answer",
    ]
    with pytest.raises(ConfigError):
        export_jsonl("not runs", path)
    with pytest.raises(ConfigError):
        export_jsonl([object()], path)


def _llm_parents(col: TraceCollector) -> list[list[str]]:
    return [_ancestors(col, r) for r in col.runs if r["run_type"] in ("llm", "chat_model")]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_llm_runs_nest_under_their_level_node(minilm, mode):
    """Sync calls run in a worker thread: the run context must go with them (issue 25)."""
    import asyncio

    from langchain_core.messages import AIMessage

    from langchain_atma.bank.judge import LLMJudge
    from langchain_atma.qa.answerer import LLMAnswerer
    from tests.unit.test_judge import GOOD, FakeChat, _call

    FakeChat.seen = []
    bank = StateBank.in_memory(embeddings=minilm)
    old = MemoryRecord(namespace="nest", content="I live in Boston.", time="2023-01-01")
    bank.commit(old, [])
    verdict = {**GOOD, "suggested_links": [{"type": "supersedes", "target_id": old.id}]}
    judge = LLMJudge(FakeChat(messages=iter([_call(verdict)])), timeout_s=10, fallback=None)
    write = create_write_graph(bank, use_gate=False, judge=judge)
    answerer = LLMAnswerer(FakeChat(messages=iter([AIMessage(content="Seattle.")])), timeout_s=10)
    read = create_read_graph(bank, namespace="nest", answerer=answerer)
    new = {
        "record": MemoryRecord(
            namespace="nest", content="I moved to Seattle last month.", time="2023-06-01"
        )
    }
    question = {"question": "Where do I live now?"}
    runs = TraceCollector()
    cfg = {"callbacks": [runs]}
    if mode == "sync":
        write.invoke(new, cfg)
        read.invoke(question, cfg)
    else:

        async def both() -> None:
            await write.ainvoke(new, cfg)
            await read.ainvoke(question, cfg)

        asyncio.run(both())
    parents = _llm_parents(runs)
    assert len(parents) == 2, parents  # one judge call, one answer call
    assert sum("atma.bank.judge" in p for p in parents) == 1, parents
    assert sum("atma.qa.answer" in p for p in parents) == 1, parents
    assert bank.get("nest", old.id).status is RecordStatus.SUPERSEDED


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_ingest_events_emits_one_write_run_per_event_with_level_children(minilm, mode):
    import asyncio

    from langchain_atma.bank.write_graph import aingest_events, ingest_events

    bank = StateBank.in_memory(embeddings=minilm)
    judge = ScriptedJudge({"I moved to Seattle last month.": "supersede"})
    events = [
        {"text": "I live in Boston.", "timestamp": "2023-01-01"},
        {"text": "I moved to Seattle last month.", "timestamp": "2023-06-01"},
    ]
    runs = TraceCollector()
    kwargs = {
        "namespace": "ing",
        "use_gate": False,
        "judge": judge,
        "config": {"callbacks": [runs], "tags": ["mine"]},
    }
    if mode == "sync":
        rep = ingest_events(bank, events, **kwargs)
    else:
        rep = asyncio.run(aingest_events(bank, events, **kwargs))
    assert rep.supersessions == 1
    writes = [r for r in runs.runs if r["name"] == "atma.bank.write"]
    assert len(writes) == 2 and all(r["parent_id"] is None for r in writes)
    assert all("mine" in r["tags"] for r in writes)
    children = {
        w["id"]: sorted(r["name"] for r in runs.runs if r["parent_id"] == w["id"]) for w in writes
    }
    assert sorted(children.values()) == [
        ["atma.bank.commit", "atma.bank.judge", "atma.bank.propose"],
        ["atma.bank.commit", "atma.bank.propose"],
    ]
    _check_levels(runs.runs)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_retriever_runs_show_the_retrieval_steps_and_take_a_namespace_per_call(traced, mode):
    import asyncio

    from langchain_atma.retrievers import AtmaRetriever

    retriever = AtmaRetriever(bank=traced["bank"], namespace="nobody", k=2)
    runs = TraceCollector()
    cfg = {"callbacks": [runs], "configurable": {"namespace": "tr"}}
    docs = (
        retriever.invoke("Where do I live now?", cfg)
        if mode == "sync"
        else asyncio.run(retriever.ainvoke("Where do I live now?", cfg))
    )
    assert docs and "Seattle" in docs[0].page_content  # namespace "tr", not "nobody"
    root = next(r for r in runs.runs if r["parent_id"] is None)
    assert root["run_type"] == "retriever"
    steps = [r["name"] for r in runs.runs if r["parent_id"] == root["id"]]
    assert steps == [
        "atma.retrieval.profile",
        "atma.retrieval.seed",
        "atma.retrieval.expand",
        "atma.retrieval.rank",
    ]
    _check_levels(runs.runs)
    assert retriever.invoke("Where do I live now?") == []  # its own (empty) namespace
