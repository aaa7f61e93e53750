"""AtmaRetriever: the A-TMA read path as a LangChain retriever.

One call runs the retrieval level of A-TMA over a :class:`StateBank` namespace:
profile the question (learned view), take the host's semantic seeds, expand
them along state links for that view, keep the stable pre-rank, let the bounded
controller foreground up to 3 rows (offline rule by default), cut to ``k`` and
project the QA state labels. Documents carry the trace in their metadata.

Input handling:

* an empty / whitespace question, or one longer than 100,000 characters,
  raises :class:`~langchain_atma.errors.InvalidQueryError` (not truncated: a
  document sent as a question is a caller bug);
* ``k <= 0`` (constructor or ``invoke(..., k=...)``) raises
  ``InvalidQueryError``; a ``k`` larger than the namespace returns every
  record reachable (the host is asked for ``max(seed_k, k)`` seeds);
* an empty namespace returns ``[]``.

Example:
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> from langchain_atma.bank import StateBank
    >>> from langchain_atma.records import MemoryRecord
    >>> bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    >>> _ = bank.add(MemoryRecord(namespace="u", content="I live in Boston."))
    >>> retriever = AtmaRetriever(bank=bank, namespace="u", k=2)
    >>> docs = retriever.invoke("Where do I live now?")
    >>> docs[0].page_content, docs[0].metadata["label"]
    ('I live in Boston.', 'current memory')
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from langchain_atma.bank.bank import StateBank
from langchain_atma.errors import ConfigError
from langchain_atma.qa.labels import label_rows
from langchain_atma.records import validate_namespace
from langchain_atma.retrieval.controller import (
    CONTROLLER_MODES,
    ControllerRun,
    OfflineController,
    RetrieveController,
    apply_controller,
)
from langchain_atma.retrieval.packets import (
    DEFAULT_K,
    DEFAULT_SEED_K,
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
    top_k,
    validate_k,
    validate_no_fact_penalty,
    validate_query,
    validate_speaker_penalty,
)
from langchain_atma.retrieval.profiler import QueryProfiler
from langchain_atma.tracing import level_config

__all__ = [
    "AtmaRetriever",
    "RetrievalResult",
    "assemble_packet",
    "row_to_document",
]


class RetrievalResult(BaseModel):
    """The retrieval-level trace of one question."""

    profile: QueryProfile = Field(description="psi(q), the query profile.")
    pool: list[EvidenceRow] = Field(description="C_q in stable pre-rank order.")
    controller: ControllerRun | None = Field(
        default=None, description="The controller call (None when the mode is off)."
    )
    packet: EvidencePacket = Field(description="E_q, the top-k packet with labels.")
    timings_ms: dict[str, float] = Field(
        default_factory=dict,
        description="Wall time per step: profile, rewrite (speaker check and first-person "
        "rewrite), embed (the question's one embedding; 0 for a precomputed vector), seed "
        "(the host search), expand, rank, label.",
    )


def assemble_packet(
    profile: QueryProfile,
    pool: Sequence[EvidenceRow],
    run: ControllerRun | None,
    *,
    k: int,
    mode: str,
    use_labels: bool = True,
) -> EvidencePacket:
    """Apply the controller (per ``mode``), cut to ``k`` and project labels.

    Labels are always projected into ``row.label`` when ``use_labels`` is true;
    with ``use_labels=False`` rows keep ``label=None``.
    """
    output = run.output if run is not None else None
    error = run.error if run is not None else None
    if run is None and mode != "off":
        error = "no_output"
    ordered, status = apply_controller(pool, output, k=k, mode=mode, error=error)
    rows = top_k(ordered, k)
    if use_labels:
        rows = label_rows(rows, view=profile.view, context=pool)
    return EvidencePacket(
        profile=profile,
        rows=rows,
        pool_size=len(pool),
        controller_applied=status == "applied",
        controller_status=status,
    )


def row_to_document(row: EvidenceRow, view: str) -> Document:
    """A LangChain Document for one packet row (content + trace metadata)."""
    rec = row.record
    return Document(
        id=rec.id,
        page_content=rec.content,
        metadata={
            "id": rec.id,
            "status": rec.status.value,
            "label": row.label.value if row.label is not None else None,
            "bucket": row.bucket.value,
            "relation": row.relation,
            "via": row.via,
            "score": row.score,
            "prerank": row.prerank,
            "controller_selected": row.selected_by_controller,
            "controller_rank": row.controller_rank,
            "time": rec.time.isoformat(),
            "slot": rec.slot,
            "source_event_id": rec.provenance.source_event_id,
            "speaker": rec.provenance.speaker,
            "states_fact": rec.states_fact,
            "view": view,
        },
    )


class AtmaRetriever(BaseRetriever):
    """State-aware retriever over one namespace of a :class:`StateBank`.

    Args:
        bank: the state bank.
        namespace: the namespace searched (never crossed).
        k: number of documents returned (override per call with
            ``invoke(query, k=3)``).
        seed_k: host seeds asked for (at least ``k`` are always asked).
        profiler: the query profiler (learned view head).
        controller: the bounded controller (default :class:`OfflineController`).
        controller_mode: ``"online"`` (apply valid picks), ``"shadow"`` (log
            only) or ``"off"``.
        use_labels: project QA state labels into the documents' metadata.
        rewrite_speaker: when the question names one speaker of the namespace,
            also search it in that speaker's first person (see
            :mod:`langchain_atma.retrieval.rewrite`).
        other_speaker_penalty: when the question names one speaker, other
            speakers' turns score this much lower among the host's hits, so the
            speaker's own turns come first (``None``: plain host order; see
            :func:`~langchain_atma.retrieval.pool.speaker_seed_rows`).
        no_fact_penalty: seeds whose record states no fact (a question or a
            reaction, ``states_fact`` False) score this much lower (``None`` or
            0: host order).

    Raises:
        InvalidQueryError: for ``k`` or ``seed_k`` below 1.
        ConfigError: for an unknown controller mode or a bad controller.
        NamespaceError: for a malformed namespace.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bank: StateBank
    namespace: str
    k: int = DEFAULT_K
    seed_k: int = DEFAULT_SEED_K
    profiler: QueryProfiler = Field(default_factory=QueryProfiler)
    controller: Any = Field(default_factory=OfflineController)
    controller_mode: Literal["off", "shadow", "online"] = "online"
    use_labels: bool = True
    rewrite_speaker: bool = True
    other_speaker_penalty: float | None = DEFAULT_OTHER_SPEAKER_PENALTY
    no_fact_penalty: float | None = DEFAULT_NO_FACT_PENALTY
    _speakers: SpeakerDirectory = PrivateAttr(default_factory=SpeakerDirectory)

    def __init__(self, **data: Any) -> None:
        if "k" in data:
            validate_k(data["k"])
        if "seed_k" in data:
            validate_k(data["seed_k"], "seed_k")
        if "namespace" in data:
            validate_namespace(data["namespace"])
        if "other_speaker_penalty" in data:
            validate_speaker_penalty(data["other_speaker_penalty"])
        if "no_fact_penalty" in data:
            validate_no_fact_penalty(data["no_fact_penalty"])
        mode = data.get("controller_mode", "online")
        if mode not in CONTROLLER_MODES:
            raise ConfigError(f"controller_mode must be one of {CONTROLLER_MODES}, got {mode!r}")
        ctl = data.get("controller")
        if ctl is not None and not isinstance(ctl, RetrieveController):
            raise ConfigError(
                "controller must provide name, run() and arun() (e.g. OfflineController or "
                f"LLMController), got {type(ctl).__name__}"
            )
        if ctl is None:
            data.pop("controller", None)
        super().__init__(**data)

    def __repr_args__(self) -> Any:
        yield from (
            (name, getattr(self, name))
            for name in ("bank", "namespace", "k", "seed_k", "controller_mode")
        )

    # ------------------------------------------------------------------ helpers
    def _sizes(self, k: int | None, seed_k: int | None) -> tuple[int, int]:
        kk = validate_k(self.k if k is None else k)
        sk = validate_k(self.seed_k if seed_k is None else seed_k, "seed_k")
        return kk, max(sk, kk)

    def _profile(self, query: str) -> QueryProfile:
        return self.profiler.profile(validate_query(query))

    def _finish(
        self,
        profile: QueryProfile,
        pool: list[EvidenceRow],
        run: ControllerRun | None,
        k: int,
        timings: dict[str, float],
    ) -> RetrievalResult:
        t0 = time.perf_counter()
        packet = assemble_packet(
            profile, pool, run, k=k, mode=self.controller_mode, use_labels=self.use_labels
        )
        timings["label"] = (time.perf_counter() - t0) * 1000.0
        return RetrievalResult(
            profile=profile, pool=pool, controller=run, packet=packet, timings_ms=timings
        )

    def _seeds(
        self,
        namespace: str,
        query: str,
        seed_k: int,
        query_vector: Sequence[float] | np.ndarray | None,
        timings: dict[str, float],
    ) -> list[EvidenceRow]:
        directory = self._speakers
        directory.enabled = self.rewrite_speaker
        rows, info = speaker_seed_rows(
            self.bank,
            namespace,
            query,
            seed_k=seed_k,
            speakers=directory,
            query_vector=query_vector,
            other_speaker_penalty=self.other_speaker_penalty,
            no_fact_penalty=self.no_fact_penalty,
        )
        timings["seed"] = info.host_ms  # the host's own search
        timings["rewrite"] = info.rewrite_ms  # the overlay's speaker check and rewrite
        timings["embed"] = info.embed_ms  # the question's embedding (of the rewrite)
        return rows

    def _namespace(self, namespace: str | None) -> str:
        return self.namespace if namespace is None else validate_namespace(namespace)

    def _steps(
        self,
        query: str,
        namespace: str,
        sk: int,
        kk: int,
        query_vector: Sequence[float] | np.ndarray | None,
        timings: dict[str, float],
    ) -> tuple[dict[str, Any], list[tuple[str, RunnableLambda[Any, Any]]]]:
        """The four retrieval steps, each run on the previous step's output.

        Returns:
            ``(found, steps)``: ``found`` gets the profile and the pool as the steps
            run; the last step's output is the controller run.
        """
        found: dict[str, Any] = {}

        def profile(q: str) -> QueryProfile:
            found["profile"] = self._profile(q)
            return found["profile"]

        def seed(_: QueryProfile) -> list[EvidenceRow]:
            return self._seeds(namespace, query, sk, query_vector, timings)

        def expand(seeds: list[EvidenceRow]) -> list[EvidenceRow]:
            found["pool"] = expand_pool(self.bank, namespace, seeds, found["profile"])
            return found["pool"]

        def rank(pool: list[EvidenceRow], config: RunnableConfig) -> ControllerRun | None:
            if self.controller_mode == "off" or not pool:
                return None
            return self.controller.run(found["profile"], pool, k=kk, config=config)

        async def arank(pool: list[EvidenceRow], config: RunnableConfig) -> ControllerRun | None:
            if self.controller_mode == "off" or not pool:
                return None
            return await self.controller.arun(found["profile"], pool, k=kk, config=config)

        return found, [
            ("profile", RunnableLambda(profile, name="profile")),
            ("seed", RunnableLambda(seed, name="seed")),
            ("expand", RunnableLambda(expand, name="expand")),
            ("rank", RunnableLambda(rank, afunc=arank, name="rank")),
        ]

    # ------------------------------------------------------------------ public API
    def retrieve(
        self,
        query: str,
        *,
        k: int | None = None,
        seed_k: int | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
        config: RunnableConfig | None = None,
        namespace: str | None = None,
    ) -> RetrievalResult:
        """Run the read path up to the packet and return the whole trace.

        Each step (profile, seed, expand, rank) is an ``atma.retrieval.<step>`` run
        under ``config``'s parent, as in the read graph.

        Args:
            query: the question.
            k: documents kept (default ``self.k``).
            seed_k: host seeds asked for (default ``self.seed_k``).
            query_vector: a precomputed embedding of ``query``.
            config: the caller's run config.
            namespace: search this namespace instead of ``self.namespace``.

        Raises:
            InvalidQueryError: for a bad question, ``k`` or ``seed_k``.
            NamespaceError: for a malformed namespace.
        """
        kk, sk = self._sizes(k, seed_k)
        timings: dict[str, float] = {}
        found, steps = self._steps(query, self._namespace(namespace), sk, kk, query_vector, timings)
        out: Any = query
        for name, step in steps:
            t0 = time.perf_counter()
            out = step.invoke(out, level_config(config, "retrieval", name))
            timings.setdefault(name, (time.perf_counter() - t0) * 1e3)
        return self._finish(found["profile"], found["pool"], out, kk, timings)

    async def aretrieve(
        self,
        query: str,
        *,
        k: int | None = None,
        seed_k: int | None = None,
        query_vector: Sequence[float] | np.ndarray | None = None,
        config: RunnableConfig | None = None,
        namespace: str | None = None,
    ) -> RetrievalResult:
        """Async :meth:`retrieve`: model and bank calls run in worker threads."""
        kk, sk = self._sizes(k, seed_k)
        timings: dict[str, float] = {}
        found, steps = self._steps(query, self._namespace(namespace), sk, kk, query_vector, timings)
        out: Any = query
        for name, step in steps:
            t0 = time.perf_counter()
            out = await step.ainvoke(out, level_config(config, "retrieval", name))
            timings.setdefault(name, (time.perf_counter() - t0) * 1e3)
        return self._finish(found["profile"], found["pool"], out, kk, timings)

    def retrieve_packet(
        self, query: str, *, k: int | None = None, namespace: str | None = None
    ) -> EvidencePacket:
        """The labelled evidence packet E_q for a question."""
        return self.retrieve(query, k=k, namespace=namespace).packet

    async def aretrieve_packet(
        self, query: str, *, k: int | None = None, namespace: str | None = None
    ) -> EvidencePacket:
        """Async :meth:`retrieve_packet`."""
        return (await self.aretrieve(query, k=k, namespace=namespace)).packet

    # ------------------------------------------------------------------ BaseRetriever
    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Documents for a question; ``configurable.namespace`` picks the namespace per call.

        One retriever can serve many users:
        ``retriever.invoke(q, {"configurable": {"namespace": user_id}})``.
        """
        return super().invoke(input, config, **_namespace_kwargs(config, kwargs))

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async :meth:`invoke`."""
        return await super().ainvoke(input, config, **_namespace_kwargs(config, kwargs))

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        seed_k: int | None = None,
        namespace: str | None = None,
    ) -> list[Document]:
        config: RunnableConfig = {"callbacks": run_manager.get_child()}
        res = self.retrieve(query, k=k, seed_k=seed_k, config=config, namespace=namespace)
        view = res.profile.view.value
        return [row_to_document(r, view) for r in res.packet.rows]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        seed_k: int | None = None,
        namespace: str | None = None,
    ) -> list[Document]:
        config: RunnableConfig = {"callbacks": run_manager.get_child()}
        res = await self.aretrieve(query, k=k, seed_k=seed_k, config=config, namespace=namespace)
        view = res.profile.view.value
        return [row_to_document(r, view) for r in res.packet.rows]


def _namespace_kwargs(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` plus the namespace of ``config["configurable"]`` (when not given)."""
    ns = ((config or {}).get("configurable") or {}).get("namespace")
    if ns is None or "namespace" in kwargs:
        return kwargs
    return {**kwargs, "namespace": ns}
