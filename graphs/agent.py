"""LangGraph server entry point: the memory agent, configured from the environment.

The chat model is ``ChatOllama(ATMA_ANSWER_MODEL)`` when ``ATMA_OLLAMA_BASE_URL``
and ``ATMA_ANSWER_MODEL`` are set. Otherwise it is ``OfflineMemoryEchoModel``:
NOT an LLM, it echoes the best-labelled line of the recall packet, so the graph
runs offline (useful to look at the memory behaviour in LangGraph Studio).

The namespace is ``configurable.user_id`` of the run, else ``ATMA_NAMESPACE``.
With ``ATMA_JUDGE_MODEL`` set, the write path sends the pairs the learned judge is
unsure of to that model.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from langchain_atma.agent import OfflineMemoryEchoModel, create_atma_agent
from langchain_atma.config import AtmaConfig


@functools.cache
def _build() -> tuple[Any, CompiledStateGraph]:
    cfg = AtmaConfig.resolve()
    answer_model = cfg.ollama_model("answer")
    model: Any = answer_model if answer_model is not None else OfflineMemoryEchoModel()
    graph = create_atma_agent(
        model,
        bank=cfg.make_bank(),
        namespace=cfg.namespace,
        k=cfg.k,
        write_options={"judge": cfg.make_judge(), "gate": cfg.make_gate()},
    )
    return model, graph


async def make_graph() -> CompiledStateGraph:
    """The graph factory ``langgraph.json`` names: builds once, in a worker thread.

    The server calls it on its event loop; opening the bank and loading models there
    would block the loop.
    """
    return (await asyncio.to_thread(_build))[1]


def __getattr__(name: str) -> Any:
    if name in ("graph", "model"):  # built on first use
        return _build()[name == "graph"]
    raise AttributeError(name)
