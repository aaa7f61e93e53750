from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.errors import ConfigError, InvalidQueryError, NamespaceError
from langchain_atma.qa.answerer import LLMAnswerer, OfflineAnswerer
from langchain_atma.records import MemoryRecord
from langchain_atma.retrieval.attribution import attribute_failure
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.packets import EvidenceLabel
from langchain_atma.retrieval.read_graph import aask, ask, create_read_graph

NS = "caroline"
NODES = ["profile", "seed", "expand", "rank", "serialize", "answer"]
LEVELS = ["retrieval"] * 4 + ["qa"] * 2


def R(content, **kw):
    return MemoryRecord(namespace=NS, content=content, **kw)


@pytest.fixture(scope="module")
def world(minilm):
    bank = StateBank.in_memory(embeddings=minilm)
    old = bank.add(
        R(
            "Corisande lives in Boston, in a flat near the harbor.",
            slot="location",
            time="2023-01-10",
        )
    )
    bank.add(
        R("Corisande works as a nurse at the children's hospital.", slot="job", time="2023-01-12")
    )
    bank.add(R("Corisande adopted a grey cat called Nimbus.", slot="pets", time="2023-02-01"))
    bank.add(
        R("Corisande enjoys painting landscapes on weekends.", slot="hobbies", time="2023-02-03")
    )
    bank.add(R("Corisande's sister visited for Thanksgiving.", time="2023-03-01"))
    new = bank.commit(
        R("Corisande moved to Seattle, lives there.", slot="location", time="2023-08-20"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    ).record
    return bank, old, new


class Recorder(BaseCallbackHandler):
    def __init__(self):
        self.starts: list[dict[str, Any]] = []

    def on_chain_start(
        self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs
    ):
        self.starts.append(
            {"name": kwargs.get("name"), "tags": tags or [], "metadata": metadata or {}}
        )


def test_current_question_foregrounds_new_value(world):
    bank, old, new = world
    res = ask(bank, NS, "Where does Corisande live now?", k=3)
    assert res.profile.view.value == "current"
    first = res.packet.rows[0]
    assert first.id == new.id and first.label is EvidenceLabel.CURRENT
    assert "Seattle" in res.answer.answer and res.answer.status == "answered"
    assert res.serialized.splitlines()[0].startswith("[1] current memory")
    assert new.id in [r.id for r in res.pool] and old.id in [r.id for r in res.pool]


def test_historical_question_foregrounds_old_value(world):
    bank, old, new = world
    res = ask(bank, NS, "Where did Corisande live before she moved?", k=3)
    assert res.profile.view.value == "historical"
    first = res.packet.rows[0]
    assert first.id == old.id and first.label is EvidenceLabel.HISTORICAL
    assert "Boston" in res.answer.answer
    assert res.packet.controller_status == "applied"
    assert "historical memory" in res.serialized.splitlines()[0]


def test_trace_has_one_entry_per_node(world):
    bank, _, _ = world
    res = ask(bank, NS, "Where does Corisande live now?")
    assert [e["node"] for e in res.trace] == NODES
    assert [e["level"] for e in res.trace] == LEVELS
    for e in res.trace:
        assert set(e) == {"level", "node", "saw", "decided", "ms"}
        assert e["ms"] >= 0 and e["saw"] and e["decided"]
    assert "view=current" in res.trace[0]["decided"]
    summary = res.summary
    assert summary["packet_ids"] == [r.id for r in res.packet.rows]
    assert summary["answer"] == res.answer.answer


def test_runs_are_named_tagged_and_carry_the_trace(world):
    bank, _, _ = world
    rec = Recorder()
    res = ask(bank, NS, "Where does Corisande live now?", config={"callbacks": [rec]})
    by_name = {s["name"]: s for s in rec.starts}
    for level, node in zip(LEVELS, NODES, strict=True):
        s = by_name[f"atma.{level}.{node}"]
        assert {"atma", f"atma:{level}"} <= set(s["tags"])
        assert s["metadata"]["atma.level"] == level and s["metadata"]["atma.node"] == node
    trace_run = by_name["atma.trace"]
    attached = trace_run["metadata"]["atma.trace"]
    assert attached["packet_ids"] == [r.id for r in res.packet.rows]
    assert attached["pool_ids"] == [r.id for r in res.pool]
    assert attached["answer"] == res.answer.answer


async def test_async_graph_matches_sync(world):
    bank, old, _ = world
    q = "Where did Corisande live before she moved?"
    sync = ask(bank, NS, q, k=3)
    res = await aask(bank, NS, q, k=3)
    assert [r.id for r in res.packet.rows] == [r.id for r in sync.packet.rows]
    assert res.packet.rows[0].id == old.id
    assert [e["node"] for e in res.trace] == NODES


def test_graph_input_namespace_and_compiled_reuse(world):
    bank, _, new = world
    graph = create_read_graph(bank, k=2)
    out = graph.invoke({"question": "Where does Corisande live now?", "namespace": NS})
    assert {"profile", "pool", "packet", "serialized", "answer", "trace"} <= set(out)
    assert out["packet"].rows[0].id == new.id and len(out["packet"].rows) == 2
    with pytest.raises(NamespaceError):
        graph.invoke({"question": "Where does Corisande live now?"})


def test_modes_and_label_ablation(world):
    bank, old, new = world
    q = "Where did Corisande live before she moved?"
    off = ask(bank, NS, q, k=3, controller_mode="off")
    assert off.packet.controller_status == "off" and off.controller is None
    shadow = ask(bank, NS, q, k=3, controller_mode="shadow")
    assert shadow.packet.controller_status == "shadow"
    assert [r.id for r in shadow.packet.rows] == [r.id for r in off.packet.rows]
    assert shadow.controller is not None and shadow.controller.output.selected  # logged
    plain = ask(bank, NS, q, k=3, use_labels=False)
    assert "memory |" not in plain.serialized
    assert plain.packet.rows[0].label is not None  # labels kept in the trace


def test_empty_namespace_answers_no_evidence(world):
    bank, _, _ = world
    res = ask(bank, "nobody-here", "Where does Corisande live now?")
    assert res.packet.rows == [] and res.pool == []
    assert res.answer.status == "no_evidence"
    assert [e["node"] for e in res.trace] == NODES


def test_bad_inputs(world):
    bank, _, _ = world
    with pytest.raises(InvalidQueryError):
        ask(bank, NS, "   ")
    with pytest.raises(InvalidQueryError):
        ask(bank, NS, "where? " * 20_000)
    with pytest.raises(InvalidQueryError):
        ask(bank, NS, "Where?", k=0)
    with pytest.raises(NamespaceError):
        ask(bank, "bad ns!", "Where?")
    with pytest.raises(ConfigError):
        create_read_graph(bank, controller_mode="maybe")
    with pytest.raises(ConfigError):
        create_read_graph(bank, answerer=object())


def test_attribution_from_a_real_trace(world):
    bank, old, new = world
    q = "Where does Corisande live now?"
    good = ask(bank, NS, q, k=3)
    bad = ask(bank, NS, q, k=3, controller_mode="off", answerer=OfflineAnswerer(use_labels=False))
    for res in (good, bad):
        correct = "Seattle" in res.answer.answer
        level = attribute_failure(
            target_id=new.id,
            pool_ids=[r.id for r in res.pool],
            packet_ids=[r.id for r in res.packet.rows],
            packet_labels=[r.label for r in res.packet.rows],
            answer_correct=correct,
            alternate_id=old.id,
            expected_label=EvidenceLabel.CURRENT,
        )
        assert level in {"correct", "ranking", "qa"}
    assert (
        attribute_failure(
            target_id=new.id,
            pool_ids=[r.id for r in good.pool],
            packet_ids=[r.id for r in good.packet.rows],
            packet_labels=[r.label for r in good.packet.rows],
            answer_correct="Seattle" in good.answer.answer,
        )
        == "correct"
    )


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (
            dict(
                target_id="t",
                pool_ids=["t"],
                packet_ids=["t"],
                packet_labels=None,
                answer_correct=True,
            ),
            "correct",
        ),
        (
            dict(
                target_id=None,
                pool_ids=["a"],
                packet_ids=["a"],
                packet_labels=None,
                answer_correct=False,
            ),
            "bank",
        ),
        (
            dict(
                target_id="t",
                pool_ids=["a", "b"],
                packet_ids=["a"],
                packet_labels=None,
                answer_correct=False,
            ),
            "candidates",
        ),
        (
            dict(
                target_id="t",
                pool_ids=["a", "t"],
                packet_ids=["a"],
                packet_labels=None,
                answer_correct=False,
            ),
            "ranking",
        ),
        (
            dict(
                target_id="t",
                pool_ids=["o", "t"],
                packet_ids=["o", "t"],
                packet_labels=["historical memory", "current memory"],
                answer_correct=False,
                alternate_id="o",
            ),
            "ranking",
        ),
        (
            dict(
                target_id="t",
                pool_ids=["o", "t"],
                packet_ids=["t", "o"],
                packet_labels=["current memory", "historical memory"],
                answer_correct=False,
                alternate_id="o",
                expected_label=EvidenceLabel.CURRENT,
            ),
            "qa",
        ),
        (
            dict(
                target_id="t",
                pool_ids=["o", "t"],
                packet_ids=["t", "o"],
                packet_labels={"t": "retrieved memory", "o": "current memory"},
                answer_correct=False,
                expected_label="current memory",
            ),
            "bank",
        ),
    ],
)
def test_attribute_failure_rules(kwargs, expected):
    assert attribute_failure(**kwargs) == expected


def test_attribute_failure_checks_label_alignment():
    with pytest.raises(InvalidQueryError):
        attribute_failure(
            target_id="t",
            pool_ids=["t"],
            packet_ids=["t", "o"],
            packet_labels=["current memory"],
            answer_correct=False,
        )


class ScriptedControllerModel(GenericFakeChatModel):
    """Reads the controller prompt and selects the candidate mentioning a word."""

    word: str = "Boston"
    prompts: list = []

    def bind_tools(self, tools, **kwargs):  # noqa: ARG002
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        payload = json.loads(messages[-1].content)
        self.prompts.append(payload)
        ids = [c["id"] for c in payload["candidates"] if self.word in c["content"]]
        reply = {
            "query_mode": "historical",
            "confidence": 0.8,
            "fallback_recommended": False,
            "selected": [
                {"candidate_id": i, "rank": n + 1, "role": "historical"} for n, i in enumerate(ids)
            ],
        }
        return ChatResult(generations=[ChatGeneration(message=AIMessage(json.dumps(reply)))])


def test_graph_with_llm_controller_and_llm_answerer(world):
    bank, old, _ = world
    ctl_model = ScriptedControllerModel(messages=iter([]))
    qa_model = GenericFakeChatModel(messages=iter([AIMessage("She lived in Boston.")]))
    rec = Recorder()
    res = ask(
        bank,
        NS,
        "Where did Corisande live before she moved?",
        k=3,
        controller=LLMController(ctl_model),
        answerer=LLMAnswerer(qa_model),
        config={"callbacks": [rec]},
    )
    assert ctl_model.prompts and ctl_model.prompts[0]["task"] == "retrieve_control"
    assert res.packet.controller_status == "applied"
    assert res.packet.rows[0].id == old.id and res.packet.rows[0].selected_by_controller
    assert res.answer.answer == "She lived in Boston." and res.answer.status == "answered"
    assert res.controller.output.selected[0].candidate_id == old.id  # alias mapped back
    assert "atma.retrieval.rank" in {s["name"] for s in rec.starts}
