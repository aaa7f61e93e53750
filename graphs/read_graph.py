"""LangGraph server entry point: the A-TMA read graph, configured from the environment.

Settings come from ``AtmaConfig.resolve()``: the bank (``ATMA_PATH`` or
``ATMA_CHROMA_URL``), ``ATMA_K``, ``ATMA_SEED_K``, ``ATMA_CONTROLLER_MODE`` and,
when ``ATMA_OLLAMA_BASE_URL`` is set, ``ATMA_CONTROLLER_MODEL`` /
``ATMA_ANSWER_MODEL``; otherwise the offline controller and answerer run.

Input: ``{"question": "Where does Ann live now?", "namespace": "ann"}`` (the
namespace defaults to ``ATMA_NAMESPACE``). Output: profile, pool, labelled
packet, serialized packet, answer and the per-node trace.
"""

from __future__ import annotations

from langchain_atma.config import AtmaConfig
from langchain_atma.qa.answerer import LLMAnswerer
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.read_graph import create_read_graph

cfg = AtmaConfig.resolve()
bank = cfg.make_bank()
_controller_model = cfg.ollama_model("controller")
_answer_model = cfg.ollama_model("answer")

graph = create_read_graph(
    bank,
    namespace=cfg.namespace,
    k=cfg.k,
    seed_k=cfg.seed_k,
    controller=LLMController(_controller_model) if _controller_model is not None else None,
    controller_mode=cfg.controller_mode,
    answerer=LLMAnswerer(_answer_model) if _answer_model is not None else None,
)
