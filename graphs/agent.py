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

from typing import Any

from langchain_atma.agent import OfflineMemoryEchoModel, create_atma_agent
from langchain_atma.config import AtmaConfig

cfg = AtmaConfig.resolve()
bank = cfg.make_bank()
_model = cfg.ollama_model("answer")
model: Any = _model if _model is not None else OfflineMemoryEchoModel()
_write_options = {"judge": cfg.make_judge(), "gate": cfg.make_gate()}

graph = create_atma_agent(
    model,
    bank=bank,
    namespace=cfg.namespace,
    k=cfg.k,
    write_options=_write_options,
)
