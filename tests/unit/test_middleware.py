"""AtmaMemoryMiddleware on LangChain v1 agents (``langchain.agents.create_agent``)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage

from langchain_atma.agent import OfflineMemoryEchoModel
from langchain_atma.bank import StateBank
from langchain_atma.errors import NamespaceError
from langchain_atma.middleware import AtmaMemoryMiddleware
from langchain_atma.text import about_self
from langchain_atma.tracing import TraceCollector

ROOT = Path(__file__).resolve().parents[2]
WRITE = {"use_gate": False}


@dataclass
class UserContext:
    user_id: str


@pytest.fixture
def bank(minilm) -> StateBank:
    return StateBank.in_memory(embeddings=minilm)


def _say(agent: Any, text: str, config: dict[str, Any] | None = None, **kw: Any) -> str:
    out = agent.invoke(
        {"messages": [HumanMessage(content=text, id=kw.pop("id", None))]}, config, **kw
    )
    return out["messages"][-1].content


def test_remembers_statements_recalls_them_and_skips_requests(bank):
    agent = create_agent(
        OfflineMemoryEchoModel(),
        middleware=[AtmaMemoryMiddleware(bank, namespace="ines", write_options=WRITE)],
    )
    _say(agent, "I keep two hens in the back yard.")
    _say(agent, "Tell me a story about a fox.")
    _say(agent, "What should I cook tonight?")
    texts = [r.content for r in bank.records("ines")]
    assert texts == ["I keep two hens in the back yard."]
    reply = _say(agent, "How many hens do I keep?")
    assert reply.startswith("From memory (current memory)") and "hens" in reply
    assert [r.content for r in bank.records("ines")] == texts  # the reply is not stored


def test_a_change_supersedes_and_a_replayed_message_is_written_once(bank):
    agent = create_agent(
        OfflineMemoryEchoModel(),
        middleware=[AtmaMemoryMiddleware(bank, namespace="teo", write_options=WRITE)],
    )
    _say(agent, "I live in Lisbon.", id="m1")
    _say(agent, "I moved to Porto last month.", id="m2")
    _say(agent, "I moved to Porto last month.", id="m2")
    assert bank.count("teo") == 2
    old = next(r for r in bank.records("teo") if "Lisbon" in r.content)
    assert old.status.value == "superseded"
    assert "Porto" in _say(agent, "Where do I live now?")


def test_namespace_comes_from_the_context_then_the_config(bank):
    middleware = AtmaMemoryMiddleware(bank, write_options=WRITE)
    agent = create_agent(
        OfflineMemoryEchoModel(), middleware=[middleware], context_schema=UserContext
    )
    _say(agent, "My bike is a red fixie.", context=UserContext(user_id="ana"))
    plain = create_agent(OfflineMemoryEchoModel(), middleware=[middleware])
    _say(plain, "My bike is a blue tandem.", {"configurable": {"user_id": "bo"}})
    assert [r.content for r in bank.records("ana")] == ["My bike is a red fixie."]
    assert [r.content for r in bank.records("bo")] == ["My bike is a blue tandem."]
    with pytest.raises(NamespaceError, match="no memory namespace"):
        _say(plain, "My bike is green.")


def test_async_agent_runs_show_the_bank_and_retrieval_levels(bank):
    agent = create_agent(
        OfflineMemoryEchoModel(),
        middleware=[AtmaMemoryMiddleware(bank, namespace="kai", write_options=WRITE)],
    )
    runs = TraceCollector()

    async def chat() -> None:
        for text in ("I teach cello on weekends.", "What do I teach?"):
            await agent.ainvoke({"messages": [("user", text)]}, {"callbacks": [runs]})

    asyncio.run(chat())
    names = {r["name"] for r in runs.runs}
    assert {
        "atma.bank.write",
        "atma.bank.propose",
        "atma.bank.commit",
        "atma.retrieval.profile",
        "atma.retrieval.seed",
    } <= names
    assert bank.count("kai") == 1


def test_write_policy_on_the_labelled_turns():
    """Precision and recall of the default policy (scripts/write_policy_eval.py)."""
    rows = [
        json.loads(line)
        for line in (ROOT / "benchmarks" / "write_policy" / "turns.jsonl").read_text().splitlines()
    ]
    kept = [about_self(r["text"]) for r in rows]
    tp = sum(k and r["remember"] for k, r in zip(kept, rows, strict=True))
    precision = tp / sum(kept)
    recall = tp / sum(r["remember"] for r in rows)
    assert precision >= 0.8 and recall >= 0.7, (precision, recall)
