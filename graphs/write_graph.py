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

Run it with ``langgraph dev`` (see ``langgraph.json``) or import ``graph``.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from langchain_atma.bank.write_graph import WriteState, create_write_graph, event_to_record
from langchain_atma.config import AtmaConfig
from langchain_atma.errors import InvalidRecordError
from langchain_atma.records import MemoryRecord

cfg = AtmaConfig.resolve()
bank = cfg.make_bank()
write = create_write_graph(bank, judge=cfg.make_judge(), gate=cfg.make_gate())


class WriteInput(TypedDict, total=False):
    namespace: str
    event: dict[str, Any]
    record: Any


class ServerWriteState(WriteState, total=False):
    event: dict[str, Any]


def prepare(state: ServerWriteState) -> dict[str, Any]:
    """Turn the JSON input (an event or a record dict) into a MemoryRecord."""
    ns = state.get("namespace") or cfg.namespace
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


_builder = StateGraph(ServerWriteState, input_schema=WriteInput)
_builder.add_node("prepare", prepare)
_builder.add_node("write", write)
_builder.add_edge(START, "prepare")
_builder.add_edge("prepare", "write")
_builder.add_edge("write", END)
graph = _builder.compile(name="atma_write")
