"""The prebuilt memory agent with a checkpointer: threads + long-term memory.

* the checkpointer (``MemorySaver``) keeps each thread's messages;
* the state bank keeps the user's long-term memory across threads, with the
  state of every fact (a changed fact supersedes the old one).

Offline, the chat model is ``OfflineMemoryEchoModel`` (no LLM: it echoes the
best labelled memory). With Ollama, use a tool-calling model instead::

    from langchain_ollama import ChatOllama
    model = ChatOllama(model="qwen2.5:3b", temperature=0)

Run: ``python examples/agent_with_checkpointer.py``
"""

from __future__ import annotations

import tempfile

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import MemorySaver

from langchain_atma.agent import OfflineMemoryEchoModel, create_atma_agent
from langchain_atma.bank import StateBank


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="atma-agent-") as bank_dir:
        bank = StateBank(path=bank_dir)
        agent = create_atma_agent(OfflineMemoryEchoModel(), bank=bank, checkpointer=MemorySaver())
        first: RunnableConfig = {"configurable": {"thread_id": "monday", "user_id": "ann"}}
        for text in (
            "I work as a teacher at a primary school.",
            "I no longer work as a teacher; I now work as a pilot.",
            "What is my job now?",
        ):
            out = agent.invoke({"messages": [("user", text)]}, first)
            print(f"[monday] user: {text}\n[monday] agent: {out['messages'][-1].content}")
        print("recall packet of the last turn:")
        for line in out["memory_context"].splitlines():
            print("   ", line)

        second: RunnableConfig = {"configurable": {"thread_id": "friday", "user_id": "ann"}}
        out = agent.invoke({"messages": [("user", "What job did I have before?")]}, second)
        print(f"[friday] agent: {out['messages'][-1].content}")

        monday = agent.get_state(first).values["messages"]
        friday = agent.get_state(second).values["messages"]
        print(f"checkpointed messages: monday={len(monday)}, friday={len(friday)}")
        print("bank:", [(r.status.value, r.content) for r in bank.records("ann")])


if __name__ == "__main__":
    main()
