"""langchain-atma: state-aware long-term memory (A-TMA) for LangChain and LangGraph."""

from __future__ import annotations
