"""Bank level: records, state commits, the proposal gate, the judges and the write graph."""

from __future__ import annotations

from langchain_atma.bank.bank import (
    DEFAULT_MULTI_VALUED_SLOTS,
    CommitAction,
    CommitDecision,
    CommitResult,
    ScoredRecord,
    StateBank,
    Violation,
)
from langchain_atma.bank.hosts import ChromaHost, HostFilter, HostRow, HostStore, VectorStoreHost

__all__ = [
    "DEFAULT_MULTI_VALUED_SLOTS",
    "ChromaHost",
    "CommitAction",
    "CommitDecision",
    "CommitResult",
    "HostFilter",
    "HostRow",
    "HostStore",
    "ScoredRecord",
    "StateBank",
    "VectorStoreHost",
    "Violation",
]
