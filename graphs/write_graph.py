"""LangGraph server entry point: the A-TMA bank write graph, configured from the environment.

Settings come from ``AtmaConfig.resolve()`` (``ATMA_PATH`` / ``ATMA_CHROMA_URL``,
``ATMA_NAMESPACE``, ``ATMA_OLLAMA_BASE_URL`` + ``ATMA_JUDGE_MODEL``...). The
learned judge decides; with an Ollama judge model, the pairs it is unsure of go to
that model.

Input (JSON-friendly)::

    {"namespace": "alice",
     "event": {"text": "I moved to Seattle.", "speaker": "alice",
               "timestamp": "2023-06-01T10:00:00", "event_id": "e2"}}

or ``{"record": {...MemoryRecord fields...}}``. The namespace defaults to
``ATMA_NAMESPACE``. The output holds the commit ``result``, the ``decisions``
and the per-node ``trace`` (level ``bank``).

Run it with ``langgraph dev`` (``langgraph.json`` names the factory ``make_graph``:
the bank is opened when the server first needs the graph, not at import) or import
``graph``.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from langchain_atma.bank.write_graph import (
    WriteOutput,
    WriteState,
    create_write_graph,
    event_to_record,
)
from langchain_atma.config import AtmaConfig
from langchain_atma.errors import InvalidRecordError
from langchain_atma.records import MemoryRecord


class WriteInput(TypedDict, total=False):
    namespace: str
    event: dict[str, Any]
    record: Any


class ServerWriteState(WriteState, total=False):
    event: dict[str, Any]


def _prepare(default_namespace: str) -> Any:
    def prepare(state: ServerWriteState) -> dict[str, Any]:
        """Turn the JSON input (an event or a record dict) into a MemoryRecord."""
        ns = state.get("namespace") or default_namespace
        rec: Any = state.get("record")
        if rec is None:
            event = state.get("event")
            if not event:
                raise InvalidRecordError("pass an 'event' ({'text': ...}) or a 'record'")
            rec = event_to_record(event, ns)
        elif not isinstance(rec, MemoryRecord):
            if not isinstance(rec, dict):
                raise InvalidRecordError(f"record must be an object, got {type(rec).__name__}")
            rec = MemoryRecord.from_dict({"namespace": ns, **rec})
        return {"namespace": rec.namespace, "record": rec}

    return prepare


@functools.cache
def build_graph() -> CompiledStateGraph:
    """Build the graph from the environment, once per process (nothing is built at import)."""
    cfg = AtmaConfig.resolve()
    write = create_write_graph(cfg.make_bank(), judge=cfg.make_judge(), gate=cfg.make_gate())
    builder = StateGraph(ServerWriteState, input_schema=WriteInput, output_schema=WriteOutput)
    builder.add_node("prepare", _prepare(cfg.namespace))
    builder.add_node("write", write)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "write")
    builder.add_edge("write", END)
    return builder.compile(name="atma_write")


async def make_graph() -> CompiledStateGraph:
    """The graph factory ``langgraph.json`` names: builds in a worker thread.

    The server calls it on its event loop; opening the bank (files, Chroma) and loading
    models there would block the loop.
    """
    return await asyncio.to_thread(build_graph)


def __getattr__(name: str) -> Any:
    if name == "graph":  # `from graphs.write_graph import graph` builds it on first use
        return build_graph()
    raise AttributeError(name)
