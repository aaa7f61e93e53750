"""The A-TMA read path as a LangGraph graph.

Nodes: profile -> seed -> expand -> rank -> serialize -> answer.

Each node does one step of Algorithm 1 (retrieval and QA sides) and appends one
trace entry ``{level, node, saw, decided, ms}``; ``level`` is ``"retrieval"``
for profile / seed / expand / rank and ``"qa"`` for serialize / answer. Each
node's work runs as a child run named ``atma.<level>.<node>`` with tags
``["atma", "atma:<level>"]`` and metadata ``{"atma.level", "atma.node"}``, so a
tracer (LangSmith, a callback handler) shows the levels separately.

The graph output holds the full trace T_q = (profile, pool, packet, serialized
packet, answer) plus the controller call and the per-node entries. The answer
node also emits a child run ``atma.trace`` whose metadata ``"atma.trace"`` is a
JSON summary of T_q (ids, labels, statuses, answer), so the trace is attached
to the LangChain run tree.

Example:
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> from langchain_atma.bank import StateBank
    >>> from langchain_atma.records import MemoryRecord
    >>> bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    >>> _ = bank.add(MemoryRecord(namespace="u", content="I live in Boston."))
    >>> res = ask(bank, "u", "Where do I live now?")
    >>> res.answer.answer, [e["node"] for e in res.trace]
    ('I live in Boston.', ['profile', 'seed', 'expand', 'rank', 'serialize', 'answer'])
"""

from __future__ import annotations

import inspect
import json
import operator
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs, run_in_executor
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from langchain_atma.bank.bank import StateBank
from langchain_atma.errors import ConfigError, NamespaceError
from langchain_atma.qa.answerer import Answer, OfflineAnswerer
from langchain_atma.qa.labels import label_rows
from langchain_atma.qa.serializer import serialize_packet
from langchain_atma.records import validate_namespace
from langchain_atma.retrieval.controller import (
    CONTROLLER_MODES,
    ControllerRun,
    OfflineController,
    RetrieveController,
)
from langchain_atma.retrieval.packets import (
    DEFAULT_K,
    DEFAULT_SEED_K,
    Bucket,
    EvidencePacket,
    EvidenceRow,
    QueryProfile,
)
from langchain_atma.retrieval.pool import (
    DEFAULT_NO_FACT_PENALTY,
    DEFAULT_OTHER_SPEAKER_PENALTY,
    SpeakerDirectory,
    expand_pool,
    speaker_seed_rows,
    validate_k,
    validate_no_fact_penalty,
    validate_query,
    validate_speaker_penalty,
)
from langchain_atma.retrieval.profiler import QueryProfiler
from langchain_atma.retrievers import assemble_packet
from langchain_atma.tracing import level_config

__all__ = [
    "ReadInput",
    "ReadResult",
    "ReadState",
    "aask",
    "ask",
    "create_read_graph",
    "trace_summary",
]

_NODES = (
    ("retrieval", "profile"),
    ("retrieval", "seed"),
    ("retrieval", "expand"),
    ("retrieval", "rank"),
    ("qa", "serialize"),
    ("qa", "answer"),
)


class ReadInput(TypedDict, total=False):
    """Graph input: the question and (unless bound at build time) the namespace."""

    question: str
    namespace: str


class ReadState(TypedDict, total=False):
    """Graph state; every key but ``question`` / ``namespace`` is produced by a node."""

    question: str
    namespace: str
    profile: QueryProfile
    seeds: list[EvidenceRow]
    pool: list[EvidenceRow]
    controller: ControllerRun | None
    packet: EvidencePacket
    serialized: str
    answer: Answer
    trace: Annotated[list[dict[str, Any]], operator.add]


class ReadResult(BaseModel):
    """What :func:`ask` returns: the answer and the full trace T_q."""

    question: str = Field(description="The question.")
    namespace: str = Field(description="The namespace read.")
    profile: QueryProfile = Field(description="psi(q).")
    pool: list[EvidenceRow] = Field(description="C_q in stable pre-rank order.")
    controller: ControllerRun | None = Field(default=None, description="The controller call.")
    packet: EvidencePacket = Field(description="E_q with labels.")
    serialized: str = Field(description="The serialized packet shown to QA.")
    answer: Answer = Field(description="The answer.")
    trace: list[dict[str, Any]] = Field(description="One entry per node.")

    @property
    def summary(self) -> dict[str, Any]:
        """JSON-friendly summary of T_q (see :func:`trace_summary`)."""
        return trace_summary(dict(self))


def trace_summary(state: dict[str, Any]) -> dict[str, Any]:
    """A JSON-serializable summary of T_q = (profile, pool, packet, serialized, answer)."""
    profile: QueryProfile | None = state.get("profile")
    pool: list[EvidenceRow] = state.get("pool") or []
    packet: EvidencePacket | None = state.get("packet")
    answer: Answer | None = state.get("answer")
    rows = packet.rows if packet is not None else []
    return {
        "question": state.get("question"),
        "namespace": state.get("namespace"),
        "profile": profile.model_dump(mode="json") if profile is not None else None,
        "pool_ids": [r.id for r in pool],
        "packet_ids": [r.id for r in rows],
        "packet_labels": [r.label.value if r.label else None for r in rows],
        "controller_status": packet.controller_status if packet is not None else None,
        "serialized": state.get("serialized"),
        "answer": answer.answer if answer is not None else None,
        "answer_status": answer.status if answer is not None else None,
        "answer_error": answer.error if answer is not None else None,
        "nodes": [{k: e.get(k) for k in ("level", "node", "ms")} for e in state.get("trace") or []],
    }


_Work = Callable[[ReadState, RunnableConfig], tuple[dict[str, Any], str, str]]
_AWork = Callable[[ReadState, RunnableConfig], Awaitable[tuple[dict[str, Any], str, str]]]


def _wrap(level: str, node: str, work: _Work, awork: _AWork) -> RunnableLambda[Any, Any]:
    """A graph node running ``work`` as a named child run and adding its trace entry."""
    inner: RunnableLambda[Any, Any] = RunnableLambda(work, afunc=awork, name=f"atma.{level}.{node}")

    def _entry(saw: str, decided: str, start: float) -> dict[str, Any]:
        return {
            "level": level,
            "node": node,
            "saw": saw,
            "decided": decided,
            "ms": round((time.perf_counter() - start) * 1000.0, 3),
        }

    def call(state: ReadState, config: RunnableConfig) -> dict[str, Any]:
        start = time.perf_counter()
        update, saw, decided = inner.invoke(state, level_config(config, level, node))
        return {**update, "trace": [_entry(saw, decided, start)]}

    async def acall(state: ReadState, config: RunnableConfig) -> dict[str, Any]:
        start = time.perf_counter()
        update, saw, decided = await inner.ainvoke(state, level_config(config, level, node))
        return {**update, "trace": [_entry(saw, decided, start)]}

    return RunnableLambda(call, afunc=acall, name=node)


def _ids(rows: list[EvidenceRow], n: int = 5) -> str:
    head = ", ".join(r.id[:8] for r in rows[:n])
    return head + (", ..." if len(rows) > n else "")


class _ReadNodes:
    """The read graph's node functions, over one bank and one configuration."""

    def __init__(
        self,
        bank: StateBank,
        *,
        namespace: str | None,
        k: int,
        seed_k: int,
        ctl: RetrieveController,
        controller_mode: str,
        qa: Any,
        use_labels: bool,
        prof: QueryProfiler,
        rewrite_speaker: bool,
        other_speaker_penalty: float | None,
        no_fact_penalty: float | None,
    ) -> None:
        self.bank = bank
        self.namespace = namespace
        self.k = k
        self.sk = seed_k
        self.ctl = ctl
        self.controller_mode = controller_mode
        self.qa = qa
        self.use_labels = use_labels
        self.prof = prof
        self.qa_takes_config = _accepts_config(qa.answer) and _accepts_config(qa.aanswer)
        self.speakers = SpeakerDirectory(enabled=rewrite_speaker)
        self.other_speaker_penalty = other_speaker_penalty
        self.no_fact_penalty = no_fact_penalty

    # -------------------------------------------------------------- retrieval level
    def profile_work(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        question = validate_query(state.get("question"))
        ns = state.get("namespace") or self.namespace
        if ns is None:
            raise NamespaceError("no namespace: pass one in the input or to create_read_graph")
        validate_namespace(ns)
        p = self.prof.profile(question)
        decided = f"view={p.view.value} " + json.dumps(p.probabilities, sort_keys=True)
        return {"namespace": ns, "profile": p}, f"question of {len(question)} chars", decided

    async def profile_awork(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        # the first question loads the state model from disk: never on the event loop
        return await run_in_executor(config, self.profile_work, state, config)

    def seed_work(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        ns = state["namespace"]
        seeds, info = speaker_seed_rows(
            self.bank,
            ns,
            state["profile"].query,
            seed_k=self.sk,
            speakers=self.speakers,
            other_speaker_penalty=self.other_speaker_penalty,
            no_fact_penalty=self.no_fact_penalty,
        )
        how = (
            f"; speaker {info.speaker!r}, also searched as {info.rewritten!r}"
            if info.rewritten
            else ""
        )
        if info.preferred:
            how += f"; {info.own_hits} of {info.preferred!r}'s own turns"
        return (
            {"seeds": seeds},
            f"namespace={ns}, seed_k={self.sk}",
            f"{len(seeds)} host seeds{how}: {_ids(seeds)}",
        )

    async def seed_awork(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        return await run_in_executor(config, self.seed_work, state, config)

    def expand_work(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        seeds = state.get("seeds") or []
        pool = expand_pool(self.bank, state["namespace"], seeds, state["profile"])
        n_rel = sum(1 for r in pool if r.bucket is Bucket.RELATION)
        n_nbr = sum(1 for r in pool if r.bucket is Bucket.NEIGHBOUR)
        return (
            {"pool": pool},
            f"{len(seeds)} seeds, view={state['profile'].view.value}",
            f"pool of {len(pool)}: {len(pool) - n_rel - n_nbr} seed, {n_rel} relation, "
            f"{n_nbr} neighbour",
        )

    async def expand_awork(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        return await run_in_executor(config, self.expand_work, state, config)

    def _rank_finish(
        self, state: ReadState, run: ControllerRun | None
    ) -> tuple[dict[str, Any], str, str]:
        pool = state.get("pool") or []
        packet = assemble_packet(
            state["profile"], pool, run, k=self.k, mode=self.controller_mode, use_labels=False
        )
        picks = [r.id[:8] for r in packet.rows if r.selected_by_controller]
        return (
            {"controller": run, "packet": packet},
            f"pool of {len(pool)}, k={self.k}, controller={self.ctl.name} ({self.controller_mode})",
            f"status={packet.controller_status}, picks=[{', '.join(picks)}], "
            f"packet=[{_ids(packet.rows, self.k)}]",
        )

    def rank_work(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        pool = state.get("pool") or []
        run = None
        if self.controller_mode != "off" and pool:
            run = self.ctl.run(state["profile"], pool, k=self.k, config=config)
        return self._rank_finish(state, run)

    async def rank_awork(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        pool = state.get("pool") or []
        run = None
        if self.controller_mode != "off" and pool:
            run = await self.ctl.arun(state["profile"], pool, k=self.k, config=config)
        return self._rank_finish(state, run)

    # -------------------------------------------------------------------- QA level
    def serialize_work(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        packet = state["packet"]
        rows = label_rows(packet.rows, view=packet.profile.view, context=state.get("pool"))
        labelled = packet.model_copy(update={"rows": rows})
        text = serialize_packet(rows, with_time=True, with_labels=self.use_labels)
        labels = ", ".join(r.label.value if r.label else "-" for r in rows)
        return (
            {"packet": labelled, "serialized": text},
            f"{len(rows)} packet rows, labels {'on' if self.use_labels else 'off'}",
            f"labels=[{labels}]",
        )

    async def serialize_awork(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        return self.serialize_work(state, config)

    def _answer_out(self, answer: Answer, state: ReadState) -> tuple[dict[str, Any], str, str]:
        shown = len(state["packet"].rows)
        used = ", ".join(i[:8] for i in answer.evidence_ids)
        failure = f" ({answer.error})" if answer.error else ""  # a failed model stays visible
        return (
            {"answer": answer},
            f"{shown} rows, view={state['profile'].view.value}",
            f"status={answer.status}{failure}, evidence=[{used}]",
        )

    def answer_work(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        extra = {"config": config} if self.qa_takes_config else {}
        answer = self.qa.answer(state["question"], state["profile"], state["packet"].rows, **extra)
        summary = trace_summary({**state, "answer": answer})
        RunnableLambda(_identity, name="atma.trace").invoke(
            summary, merge_configs(config, {"metadata": {"atma.trace": summary}})
        )
        return self._answer_out(answer, state)

    async def answer_awork(
        self, state: ReadState, config: RunnableConfig
    ) -> tuple[dict[str, Any], str, str]:
        extra = {"config": config} if self.qa_takes_config else {}
        answer = await self.qa.aanswer(
            state["question"], state["profile"], state["packet"].rows, **extra
        )
        summary = trace_summary({**state, "answer": answer})
        await RunnableLambda(_identity, name="atma.trace").ainvoke(
            summary, merge_configs(config, {"metadata": {"atma.trace": summary}})
        )
        return self._answer_out(answer, state)

    def works(self) -> dict[str, tuple[_Work, _AWork]]:
        """Each node's sync and async work function."""
        return {
            "profile": (self.profile_work, self.profile_awork),
            "seed": (self.seed_work, self.seed_awork),
            "expand": (self.expand_work, self.expand_awork),
            "rank": (self.rank_work, self.rank_awork),
            "serialize": (self.serialize_work, self.serialize_awork),
            "answer": (self.answer_work, self.answer_awork),
        }


def create_read_graph(
    bank: StateBank,
    *,
    namespace: str | None = None,
    k: int = DEFAULT_K,
    seed_k: int = DEFAULT_SEED_K,
    controller: RetrieveController | None = None,
    controller_mode: str = "online",
    answerer: Any | None = None,
    use_labels: bool = True,
    profiler: QueryProfiler | None = None,
    rewrite_speaker: bool = True,
    other_speaker_penalty: float | None = DEFAULT_OTHER_SPEAKER_PENALTY,
    no_fact_penalty: float | None = DEFAULT_NO_FACT_PENALTY,
) -> Any:
    """Build and compile the read graph over ``bank``.

    Args:
        bank: the state bank.
        namespace: default namespace (the input's ``namespace`` overrides it).
        k: packet size.
        seed_k: host seeds (at least ``k``).
        controller: the bounded controller (default :class:`OfflineController`).
        controller_mode: ``"online"``, ``"shadow"`` or ``"off"``.
        answerer: an object with ``answer`` / ``aanswer(question, profile, rows)``
            (default ``OfflineAnswerer(use_labels=use_labels)``); when both accept
            a ``config`` keyword the node's run config is passed, so the model
            call nests under ``atma.qa.answer``.
        use_labels: show state labels to QA (labels are always kept in the
            packet rows for the trace).
        profiler: the query profiler (default rule-based profiler).
        rewrite_speaker: when the question names one speaker of the namespace,
            also search it in that speaker's first person and fuse the hits
            (:mod:`langchain_atma.retrieval.rewrite`); ``False`` = search the
            question as asked only.
        other_speaker_penalty: when the question names one speaker, other
            speakers' turns score this much lower among the host's hits, so the
            speaker's own turns come first
            (:func:`~langchain_atma.retrieval.pool.speaker_seed_rows`); ``None`` =
            plain host order.
        no_fact_penalty: seeds whose record states no fact (a question or a
            reaction, ``states_fact`` False) score this much lower; ``None`` or 0
            = host order.

    Returns:
        A compiled LangGraph graph; input ``{"question", "namespace"}``.

    Raises:
        InvalidQueryError: for ``k`` / ``seed_k`` below 1.
        ConfigError: for an unknown controller mode, controller or answerer, or a
            bad ``other_speaker_penalty`` or ``no_fact_penalty``.
    """
    kk = validate_k(k)
    validate_speaker_penalty(other_speaker_penalty)
    validate_no_fact_penalty(no_fact_penalty)
    sk = max(validate_k(seed_k, "seed_k"), kk)
    if namespace is not None:
        validate_namespace(namespace)
    if controller_mode not in CONTROLLER_MODES:
        raise ConfigError(
            f"controller_mode must be one of {CONTROLLER_MODES}, got {controller_mode!r}"
        )
    ctl: RetrieveController = controller if controller is not None else OfflineController()
    if not isinstance(ctl, RetrieveController):
        raise ConfigError(f"controller must provide run() and arun(), got {type(ctl).__name__}")
    qa = answerer if answerer is not None else OfflineAnswerer(use_labels=use_labels)
    if not (callable(getattr(qa, "answer", None)) and callable(getattr(qa, "aanswer", None))):
        raise ConfigError(f"answerer must provide answer() and aanswer(), got {type(qa).__name__}")
    prof = profiler if profiler is not None else QueryProfiler()

    nodes = _ReadNodes(
        bank,
        namespace=namespace,
        k=kk,
        seed_k=sk,
        ctl=ctl,
        controller_mode=controller_mode,
        qa=qa,
        use_labels=use_labels,
        prof=prof,
        rewrite_speaker=rewrite_speaker,
        other_speaker_penalty=other_speaker_penalty,
        no_fact_penalty=no_fact_penalty,
    )
    works = nodes.works()
    graph = StateGraph(ReadState, input_schema=ReadInput)
    prev = START
    for level, node in _NODES:
        work, awork = works[node]
        graph.add_node(
            node, _wrap(level, node, work, awork), metadata={"atma.level": level, "atma.node": node}
        )
        graph.add_edge(prev, node)
        prev = node
    graph.add_edge(prev, END)
    return graph.compile(name="atma.read")


def _identity(x: Any) -> Any:
    return x


def _accepts_config(fn: Callable[..., Any]) -> bool:
    """Whether an answerer method takes a ``config`` keyword (to nest its model run)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "config" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _result(out: dict[str, Any]) -> ReadResult:
    return ReadResult(
        question=out["question"],
        namespace=out["namespace"],
        profile=out["profile"],
        pool=out.get("pool") or [],
        controller=out.get("controller"),
        packet=out["packet"],
        serialized=out.get("serialized", ""),
        answer=out["answer"],
        trace=out.get("trace") or [],
    )


def ask(
    bank: StateBank,
    namespace: str,
    question: str,
    *,
    config: RunnableConfig | None = None,
    **opts: Any,
) -> ReadResult:
    """Answer one question from a namespace through the read graph.

    Args:
        bank: the state bank.
        namespace: the namespace read.
        question: the question.
        config: a LangChain run config (callbacks, tags, metadata).
        **opts: options of :func:`create_read_graph` (``k``, ``seed_k``,
            ``controller``, ``controller_mode``, ``answerer``, ``use_labels``,
            ``profiler``).

    Raises:
        InvalidQueryError: for a bad question or options.
        NamespaceError: for a malformed namespace.
    """
    validate_namespace(namespace)
    validate_query(question)
    graph = create_read_graph(bank, namespace=namespace, **opts)
    return _result(graph.invoke({"question": question, "namespace": namespace}, config))


async def aask(
    bank: StateBank,
    namespace: str,
    question: str,
    *,
    config: RunnableConfig | None = None,
    **opts: Any,
) -> ReadResult:
    """Async :func:`ask`."""
    validate_namespace(namespace)
    validate_query(question)
    graph = create_read_graph(bank, namespace=namespace, **opts)
    return _result(await graph.ainvoke({"question": question, "namespace": namespace}, config))
