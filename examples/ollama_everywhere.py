"""Ollama for the three LLM parts: judge (bank), controller (retrieval), answerer (QA).

With ``ATMA_OLLAMA_BASE_URL`` set (e.g. ``http://127.0.0.1:11434``), the judge,
the bounded controller and the answerer are ``ChatOllama`` models
(``ATMA_JUDGE_MODEL``, ``ATMA_CONTROLLER_MODEL``, ``ATMA_ANSWER_MODEL``; each
defaults to ``qwen2.5:3b``). Without it, the example says so and runs the
offline parts (learned judge, offline controller, offline answerer): no network.

Run: ``python examples/ollama_everywhere.py``
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from langchain_atma.bank import StateBank
from langchain_atma.bank.write_graph import ingest_events
from langchain_atma.retrieval.read_graph import ask

DEFAULT_MODEL = "qwen2.5:3b"
EVENTS = [
    {
        "text": "I work as a teacher at a primary school.",
        "timestamp": "2023-01-10",
        "speaker": "Ann",
        "event_id": "e1",
    },
    {
        "text": "I no longer work as a teacher; I now work as a pilot.",
        "timestamp": "2023-08-20",
        "speaker": "Ann",
        "event_id": "e2",
    },
]


def llm_parts() -> dict[str, Any]:
    """Judge / controller / answerer on Ollama, or {} when no server is configured."""
    base_url = os.environ.get("ATMA_OLLAMA_BASE_URL")
    if not base_url:
        return {}
    from langchain_ollama import ChatOllama

    from langchain_atma.bank.judge import LLMJudge
    from langchain_atma.qa.answerer import LLMAnswerer
    from langchain_atma.retrieval.controller import LLMController

    def chat(var: str) -> ChatOllama:
        return ChatOllama(
            model=os.environ.get(var) or DEFAULT_MODEL, base_url=base_url, temperature=0
        )

    return {
        "judge": LLMJudge(chat("ATMA_JUDGE_MODEL")),
        "controller": LLMController(chat("ATMA_CONTROLLER_MODEL")),
        "answerer": LLMAnswerer(chat("ATMA_ANSWER_MODEL")),
    }


def main() -> None:
    parts = llm_parts()
    if parts:
        print(
            f"using Ollama at {os.environ['ATMA_OLLAMA_BASE_URL']} for judge, controller "
            "and answerer"
        )
    else:
        print(
            "ATMA_OLLAMA_BASE_URL is not set: running offline (learned judge, offline "
            "controller, offline answerer)"
        )
    with tempfile.TemporaryDirectory(prefix="atma-ollama-") as bank_dir:
        bank = StateBank(path=bank_dir)
        report = ingest_events(bank, EVENTS, namespace="ann", judge=parts.get("judge"))
        print(
            f"write path: {report.writes} writes, {report.judge_calls} judge call(s), "
            f"{report.supersessions} supersession(s)"
        )
        read_opts = {k: v for k, v in parts.items() if k in ("controller", "answerer")}
        for question in ("What is my job now?", "What job did I have before?"):
            res = ask(bank, "ann", question, **read_opts)
            print(
                f"Q: {question}\nA: {res.answer.answer} "
                f"[view={res.profile.view.value}, controller={res.packet.controller_status}]"
            )


if __name__ == "__main__":
    main()
