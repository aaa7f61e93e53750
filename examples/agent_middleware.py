"""State-aware memory for a LangChain v1 agent: ``create_agent`` + ``AtmaMemoryMiddleware``.

The middleware recalls the labelled memories of the latest user message before the
model runs (current / historical / transition memory, fenced in the system message)
and, after the turn, stores the user's own statements through the A-TMA write path:
a change supersedes the old fact, history is kept. Requests, questions and the
assistant's replies are not stored. One bank serves every user: the namespace comes
from the run's context (``context_schema`` with a ``user_id``).

The chat model here is ``OfflineMemoryEchoModel`` (no LLM: it echoes the best
labelled memory) so the example runs offline; pass any chat model instead, e.g.
``create_agent("ollama:qwen2.5:3b", ...)``.

Run: ``python examples/agent_middleware.py``
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain.agents import create_agent

from langchain_atma import StateBank
from langchain_atma.agent import OfflineMemoryEchoModel
from langchain_atma.middleware import AtmaMemoryMiddleware


@dataclass
class Context:
    user_id: str


def main() -> None:
    bank = StateBank.in_memory()
    agent = create_agent(
        OfflineMemoryEchoModel(),
        context_schema=Context,
        middleware=[AtmaMemoryMiddleware(bank, k=3)],
    )
    theo = Context(user_id="theo")
    for text in [
        "I work as a teacher at a primary school.",
        "Tell me a joke about teachers.",
        "I no longer work as a teacher; I now work as a pilot.",
        "What is my job now?",
    ]:
        out = agent.invoke({"messages": [("user", text)]}, context=theo)
        print(f"user: {text}\n  agent: {out['messages'][-1].content}")
    for rec in bank.records("theo"):
        print(f"stored: [{rec.status.value}] {rec.content}")


if __name__ == "__main__":
    main()
