"""LangGraph server entry point: the A-TMA read graph, configured from the environment.

Settings come from ``AtmaConfig.resolve()``: the bank (``ATMA_PATH`` or
``ATMA_CHROMA_URL``), ``ATMA_K``, ``ATMA_SEED_K``, ``ATMA_CONTROLLER_MODE`` and,
when ``ATMA_OLLAMA_BASE_URL`` is set, ``ATMA_CONTROLLER_MODEL`` /
``ATMA_ANSWER_MODEL``; otherwise the offline controller and answerer run.

Input: ``{"question": "Where does Ann live now?", "namespace": "ann"}`` (the
namespace defaults to ``ATMA_NAMESPACE``). Output: profile, pool, labelled
packet, serialized packet, answer and the per-node trace.

``langgraph.json`` names the factory ``make_graph``: the bank is opened when the
server first needs the graph, not when this module is imported.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from langchain_atma.config import AtmaConfig
from langchain_atma.qa.answerer import LLMAnswerer
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.read_graph import create_read_graph


@functools.cache
def build_graph() -> CompiledStateGraph:
    """Build the graph from the environment, once per process (nothing is built at import)."""
    cfg = AtmaConfig.resolve()
    controller_model = cfg.ollama_model("controller")
    answer_model = cfg.ollama_model("answer")
    return create_read_graph(
        cfg.make_bank(),
        namespace=cfg.namespace,
        k=cfg.k,
        seed_k=cfg.seed_k,
        controller=LLMController(controller_model) if controller_model is not None else None,
        controller_mode=cfg.controller_mode,
        answerer=LLMAnswerer(answer_model) if answer_model is not None else None,
    )


async def make_graph() -> CompiledStateGraph:
    """The graph factory ``langgraph.json`` names: builds in a worker thread.

    The server calls it on its event loop; opening the bank (files, Chroma) and loading
    models there would block the loop.
    """
    return await asyncio.to_thread(build_graph)


def __getattr__(name: str) -> Any:
    if name == "graph":  # `from graphs.read_graph import graph` builds it on first use
        return build_graph()
    raise AttributeError(name)
