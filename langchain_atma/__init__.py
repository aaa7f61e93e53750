"""langchain-atma: state-aware long-term memory (A-TMA) for LangChain and LangGraph.

The three levels live in three subpackages: :mod:`langchain_atma.bank` (records,
state commits, proposal gate, learned judge, write graph), :mod:`langchain_atma.retrieval`
(query profiler, evidence pool, bounded controller, read graph) and
:mod:`langchain_atma.qa` (labels, serializer, answerers). The names below are
imported lazily, so ``import langchain_atma`` stays fast.

Example:
    >>> import langchain_atma
    >>> "StateBank" in langchain_atma.__all__
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from langchain_atma.agent import create_atma_agent
    from langchain_atma.bank.bank import CommitAction, CommitDecision, CommitResult, StateBank
    from langchain_atma.bank.gate import GateConfig, ProposalGate
    from langchain_atma.bank.hosts import ChromaHost, HostStore, VectorStoreHost
    from langchain_atma.bank.judge import EscalatingJudge, LLMJudge, Verdict
    from langchain_atma.bank.learned_judge import LearnedJudge
    from langchain_atma.bank.write_graph import (
        IngestReport,
        MemoryEvent,
        WriteAudit,
        aingest_events,
        create_write_graph,
        ingest_events,
    )
    from langchain_atma.config import AtmaConfig
    from langchain_atma.embeddings import MiniLMEmbeddings, SentenceTransformerEmbeddings
    from langchain_atma.memory import AtmaMemory
    from langchain_atma.middleware import AtmaMemoryMiddleware
    from langchain_atma.qa.answerer import Answer, LLMAnswerer, OfflineAnswerer
    from langchain_atma.records import (
        Link,
        LinkType,
        MemoryRecord,
        Provenance,
        RecordStatus,
        TransitionInfo,
    )
    from langchain_atma.retrieval.controller import LLMController, OfflineController
    from langchain_atma.retrieval.packets import (
        EvidenceLabel,
        EvidencePacket,
        EvidenceRow,
        QueryProfile,
        QueryView,
    )
    from langchain_atma.retrieval.profiler import QueryProfiler, profile_query
    from langchain_atma.retrieval.read_graph import ReadResult, aask, ask, create_read_graph
    from langchain_atma.retrievers import AtmaRetriever
    from langchain_atma.store import AtmaStore
    from langchain_atma.tracing import TraceCollector, export_jsonl

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # LangChain v1 agents (needs the "agents" extra)
    "AtmaMemoryMiddleware": "langchain_atma.middleware",
    # records
    "MemoryRecord": "langchain_atma.records",
    "RecordStatus": "langchain_atma.records",
    "LinkType": "langchain_atma.records",
    "Link": "langchain_atma.records",
    "Provenance": "langchain_atma.records",
    "TransitionInfo": "langchain_atma.records",
    # level 1: bank
    "StateBank": "langchain_atma.bank.bank",
    "CommitAction": "langchain_atma.bank.bank",
    "CommitDecision": "langchain_atma.bank.bank",
    "CommitResult": "langchain_atma.bank.bank",
    "ChromaHost": "langchain_atma.bank.hosts",
    "HostStore": "langchain_atma.bank.hosts",
    "VectorStoreHost": "langchain_atma.bank.hosts",
    "ProposalGate": "langchain_atma.bank.gate",
    "GateConfig": "langchain_atma.bank.gate",
    "LearnedJudge": "langchain_atma.bank.learned_judge",
    "LLMJudge": "langchain_atma.bank.judge",
    "EscalatingJudge": "langchain_atma.bank.judge",
    "Verdict": "langchain_atma.bank.judge",
    "create_write_graph": "langchain_atma.bank.write_graph",
    "ingest_events": "langchain_atma.bank.write_graph",
    "aingest_events": "langchain_atma.bank.write_graph",
    "IngestReport": "langchain_atma.bank.write_graph",
    "WriteAudit": "langchain_atma.bank.write_graph",
    "MemoryEvent": "langchain_atma.bank.write_graph",
    # level 2: retrieval
    "QueryView": "langchain_atma.retrieval.packets",
    "QueryProfile": "langchain_atma.retrieval.packets",
    "EvidenceRow": "langchain_atma.retrieval.packets",
    "EvidencePacket": "langchain_atma.retrieval.packets",
    "EvidenceLabel": "langchain_atma.retrieval.packets",
    "QueryProfiler": "langchain_atma.retrieval.profiler",
    "profile_query": "langchain_atma.retrieval.profiler",
    "OfflineController": "langchain_atma.retrieval.controller",
    "LLMController": "langchain_atma.retrieval.controller",
    "create_read_graph": "langchain_atma.retrieval.read_graph",
    "ask": "langchain_atma.retrieval.read_graph",
    "aask": "langchain_atma.retrieval.read_graph",
    "ReadResult": "langchain_atma.retrieval.read_graph",
    "AtmaRetriever": "langchain_atma.retrievers",
    # level 3: QA
    "Answer": "langchain_atma.qa.answerer",
    "OfflineAnswerer": "langchain_atma.qa.answerer",
    "LLMAnswerer": "langchain_atma.qa.answerer",
    # ecosystem
    "AtmaStore": "langchain_atma.store",
    "AtmaMemory": "langchain_atma.memory",
    "create_atma_agent": "langchain_atma.agent",
    "TraceCollector": "langchain_atma.tracing",
    "export_jsonl": "langchain_atma.tracing",
    "AtmaConfig": "langchain_atma.config",
    "MiniLMEmbeddings": "langchain_atma.embeddings",
    "SentenceTransformerEmbeddings": "langchain_atma.embeddings",
}

__all__ = [
    "Answer",
    "AtmaConfig",
    "AtmaMemory",
    "AtmaMemoryMiddleware",
    "AtmaRetriever",
    "AtmaStore",
    "ChromaHost",
    "CommitAction",
    "CommitDecision",
    "CommitResult",
    "EvidenceLabel",
    "EvidencePacket",
    "EscalatingJudge",
    "EvidenceRow",
    "GateConfig",
    "HostStore",
    "IngestReport",
    "LLMAnswerer",
    "LLMController",
    "LLMJudge",
    "LearnedJudge",
    "Link",
    "LinkType",
    "MemoryEvent",
    "MemoryRecord",
    "MiniLMEmbeddings",
    "OfflineAnswerer",
    "OfflineController",
    "ProposalGate",
    "Provenance",
    "QueryProfile",
    "QueryProfiler",
    "QueryView",
    "ReadResult",
    "RecordStatus",
    "SentenceTransformerEmbeddings",
    "StateBank",
    "TraceCollector",
    "TransitionInfo",
    "VectorStoreHost",
    "Verdict",
    "WriteAudit",
    "__version__",
    "aask",
    "aingest_events",
    "ask",
    "create_atma_agent",
    "create_read_graph",
    "create_write_graph",
    "export_jsonl",
    "ingest_events",
    "profile_query",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_atma' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
