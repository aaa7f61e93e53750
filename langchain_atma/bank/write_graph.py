"""The bank write path as a LangGraph graph: propose -> (judge) -> commit.

For every new memory (paper, Algorithm 1, lines 2-7):

1. **propose** embeds the record ONCE and reuses that vector for the host
   search, the gate and the commit. The candidate set P_j is the host's
   ``candidate_k`` (32) nearest *live* records (status active or transition) in
   the same namespace to the record's vector *centred* on the namespace's mean
   (:meth:`StateBank.centroid`; see :mod:`langchain_atma.bank.gate`), plus the
   records state-linked to them (one hop, any status); the bank is never
   scanned. When the new record has a speaker, only candidates of the same
   speaker (or of no known speaker) are kept: a person's state is changed by
   what that person says; the speaker's candidates come from a second,
   speaker-filtered host query. The gate
   (:class:`~langchain_atma.bank.gate.ProposalGate`) ranks them by their centred
   score and flags the ``max_judged`` (12) best; a new record that states nothing
   (only questions, greetings or reactions) flags none, and a candidate stored as
   stating nothing is never flagged.
2. **judge** runs only for flagged pairs, in one batch
   (:class:`~langchain_atma.bank.learned_judge.LearnedJudge` by default); when
   nothing is flagged the graph goes straight to commit (conditional edge).
3. **commit** turns verdicts into ONE consistent decision set and calls
   ``bank.commit`` once (atomic: journaled single write):

   * a duplicate (``noop``) wins alone: nothing is written;
   * at most one supersede/transition target per slot (the verdict's slot
     family; verdicts without a slot form one group): the best supported
     (highest confidence) wins; other supersede targets of that slot are kept
     only when their verdict names the same entity (``Verdict.entities``: the
     same person, pet, place or number), i.e. they are earlier records of the
     same state; if both supersede and transition verdicts remain, only the best
     one is kept;
   * at most :data:`MAX_SIDE_LINKS` coexist / scoped_exception decisions (the
     best supported), each about a target not already decided;
   * decisions about records outside the candidate set are dropped; a record
     that is already history (superseded, reached through a link) only gets a
     ``supersedes`` link (its status is unchanged), and only when it is the
     direct predecessor of a record this write supersedes, or, when this write
     supersedes and links no live record at all, for the best-supported such
     verdict (an earlier write may have superseded that record first: "handed the
     keys in" still replaces "the allotment keeps me sane");
   * superseding a transition record that was not completed yet also links
     the new record to the state that transition evolved from (``supersedes``),
     so the old and the new state are directly linked;
   * bridge closure: coexisting with a record that says something changed and
     names both a value of an older coexisting record and a value of the new
     one ("mixing some origami in with my usual embroidery") also links the new
     record and that older one as coexisting (:meth:`WriteNodes._bridged`);
   * the slot: if the best kept verdict names a slot family and the record has
     no slot, the record gets ``"<family>:<speaker>"`` (or ``"<family>"``).

   Fallbacks (never a half-written commit; the bank writes all or nothing):
   a target that disappeared meanwhile (``RecordNotFoundError``) -> its
   decision is dropped and the commit retried; a ``CommitError`` from the
   single-active-per-slot invariant -> the other same-slot active candidates
   are superseded only when the judge said so, otherwise the record is stored
   without the slot it was given; if the commit still fails, the record is
   stored with no decisions. Every fallback is listed in the trace: commit
   fallbacks under the commit entry's ``fallbacks``, and every verdict with
   ``source="fallback"`` (a failed LLM judge, a rejected verdict) under the
   judge entry's ``decided`` as ``"[fallback] <action> (<reason>)"``, even a
   ``keep_both``; the write's ``metrics["judge_fallbacks"]`` counts them.

Every node appends ``{"level": "bank", "node", "saw", "decided", "ms"}`` to
``trace`` and runs as a runnable named ``atma.bank.<node>`` with tags
``["atma", "atma:bank"]`` and metadata ``{"atma.level": "bank", "atma.node": ...}``.

Batch ingest (:func:`ingest_events`, :func:`aingest_events`) encodes all events
up front with one ``bank.embed`` call and then calls the SAME node functions in
a loop (no per-event ``graph.invoke``: that saves the graph machinery, several
milliseconds per event). The graph and the loop share :class:`WriteNodes`.

Ablations: ``use_gate=False`` judges every candidate (no ranking cap);
``use_judge=False`` audits nothing (flagged pairs are counted, nothing is
linked: a plain append).

Example:
    >>> from langchain_atma.bank import StateBank
    >>> from langchain_atma.bank.write_graph import create_write_graph, ingest_events
    >>> bank = StateBank.in_memory()                                  # doctest: +SKIP
    >>> report = ingest_events(bank, [
    ...     {"text": "I live in Boston.", "timestamp": "2023-01-01", "speaker": "Ann",
    ...      "event_id": "e1"},
    ...     {"text": "I moved to Seattle last month.", "timestamp": "2023-06-01",
    ...      "speaker": "Ann", "event_id": "e2"}], namespace="ann")   # doctest: +SKIP
    >>> report.supersessions                                          # doctest: +SKIP
    1
    >>> graph = create_write_graph(bank)                              # doctest: +SKIP
    >>> from langchain_atma.records import MemoryRecord
    >>> out = graph.invoke({"record": MemoryRecord(namespace="ann",
    ...                     content="I adopted a cat.")})              # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import operator
import time
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

import numpy as np
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel, Field, field_validator
from typing_extensions import TypedDict

from langchain_atma.bank.bank import (
    CommitAction,
    CommitDecision,
    CommitResult,
    StateBank,
)
from langchain_atma.bank.gate import ProposalGate, centred_query
from langchain_atma.bank.judge import (
    BaseJudge,
    JudgeInput,
    Verdict,
    keep_both_verdict,
    validate_verdict,
    verdict_to_decision,
)
from langchain_atma.errors import (
    CommitError,
    InvalidRecordError,
    InvalidVerdictError,
    NamespaceError,
    RecordNotFoundError,
)
from langchain_atma.records import (
    LinkType,
    MemoryRecord,
    MetadataValue,
    Provenance,
    RecordStatus,
    normalize_metadata,
    parse_time,
    validate_namespace,
)
from langchain_atma.text import cues, names_both

__all__ = [
    "DEFAULT_CANDIDATE_K",
    "IngestReport",
    "LIVE_STATUSES",
    "LinkStep",
    "MAX_SIDE_LINKS",
    "MemoryEvent",
    "WriteAudit",
    "WriteNodes",
    "WriteOutput",
    "WriteState",
    "aingest_events",
    "create_write_graph",
    "derived_event_id",
    "event_to_record",
    "ingest_events",
]

logger = logging.getLogger(__name__)

LIVE_STATUSES: tuple[RecordStatus, ...] = (RecordStatus.ACTIVE, RecordStatus.TRANSITION)
"""Statuses a candidate must have to be judged (superseded records are history)."""

_STATE_LINKS = frozenset(
    {
        LinkType.SUPERSEDES,
        LinkType.SUPERSEDED_BY,
        LinkType.EVOLVES_FROM,
        LinkType.EVOLVES_TO,
        LinkType.COEXISTS,
        LinkType.SCOPED_EXCEPTION,
    }
)
_CHAIN_ACTIONS = frozenset({CommitAction.SUPERSEDE, CommitAction.TRANSITION})
MAX_SIDE_LINKS = 2
"""At most this many coexist / scoped-exception links per write (the best supported)."""
DEFAULT_CANDIDATE_K = 32
"""Nearest live records of the same speaker fetched per write (the gate's pool)."""
_Route = Literal["judge", "commit", "__end__"]


# ======================================================================== state


class WriteOutput(TypedDict, total=False):
    """What the write graph returns: its state without the record's vector."""

    namespace: str
    """Namespace of the write (defaults to ``record.namespace``; must match it)."""
    record: MemoryRecord
    """The new record."""
    candidates: list[MemoryRecord]
    """P_j: live nearest neighbours plus one-hop state-linked records."""
    scores: list[dict[str, Any]]
    """Per candidate: ``id, similarity, score (centred), live, flagged``."""
    flagged: list[str]
    """Ids of the pairs routed to the judge."""
    verdicts: list[dict[str, Any]]
    """``{"target_id": id, "verdict": Verdict}`` per judged pair."""
    decisions: list[CommitDecision]
    """The decisions actually committed."""
    result: CommitResult | None
    """The bank's commit result."""
    trace: Annotated[list[dict[str, Any]], operator.add]
    """One entry per node: ``{level, node, saw, decided, ms}``."""
    metrics: dict[str, Any]
    """Counters of this write (candidates, flagged, judge_calls, ms per stage...)."""


class WriteState(WriteOutput, total=False):
    """State of the write graph (every key but ``record`` is filled by the nodes)."""

    embedding: list[float] | None
    """The record's vector (computed once by propose when absent)."""


class MemoryEvent(BaseModel):
    """One event to write (a dialog turn, a message, a fact)."""

    text: str = Field(description="The memory text.")
    timestamp: datetime | None = Field(
        default=None,
        description="When it was said (ISO string, datetime or epoch); now if omitted.",
    )
    speaker: str | None = Field(default=None, description="Who said it.")
    event_id: str | None = Field(
        default=None,
        description="Stable id; re-ingesting the same event id is a no-op. "
        "Derived from namespace, speaker, timestamp and text when omitted and the event "
        "has a timestamp.",
    )
    session_id: str | None = Field(default=None, description="Session or conversation id.")
    metadata: dict[str, MetadataValue] = Field(
        default_factory=dict, description="Host metadata (scalars only)."
    )

    @field_validator("timestamp", mode="before")
    @classmethod
    def _time(cls, v: object) -> datetime | None:
        return None if v is None else parse_time(v)

    @field_validator("metadata", mode="before")
    @classmethod
    def _md(cls, v: object) -> dict[str, MetadataValue]:
        return normalize_metadata(v)


def derived_event_id(event: MemoryEvent, namespace: str) -> str | None:
    """A stable id for a timestamped event that has none, so re-ingesting it is a no-op.

    The id hashes the namespace, the speaker, the timestamp (UTC, ISO) and the text
    with Unicode (NFKC), case and whitespace folded. An event without a timestamp is
    stamped *now* and is a new event each time: it gets no derived id.

    Example:
        >>> ev = MemoryEvent(text="I live in Boston.", speaker="Maya",
        ...                  timestamp="2024-01-08T09:00:00")
        >>> derived_event_id(ev, "maya") == derived_event_id(
        ...     ev.model_copy(update={"text": "  i live in  BOSTON. "}), "maya")
        True
        >>> derived_event_id(ev.model_copy(update={"timestamp": None}), "maya") is None
        True
    """
    if event.timestamp is None:
        return None
    text = " ".join(unicodedata.normalize("NFKC", event.text).casefold().split())
    key = "\x1f".join((namespace, event.speaker or "", event.timestamp.isoformat(), text))
    return "auto:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def event_to_record(event: MemoryEvent | dict[str, Any], namespace: str) -> MemoryRecord:
    """Build the record of an event (provenance: event id, speaker, session).

    An event without ``event_id`` but with a timestamp gets :func:`derived_event_id`.

    Raises:
        InvalidRecordError: the event is malformed (missing or empty text...).
    """
    try:
        ev = event if isinstance(event, MemoryEvent) else MemoryEvent.model_validate(event)
    except (ValueError, TypeError) as exc:
        raise InvalidRecordError(f"invalid memory event: {exc}") from exc
    kwargs: dict[str, Any] = {}
    if ev.timestamp is not None:
        kwargs["time"] = ev.timestamp
    return MemoryRecord(
        namespace=namespace,
        content=ev.text,
        provenance=Provenance(
            source_event_id=ev.event_id or derived_event_id(ev, namespace),
            speaker=ev.speaker,
            session_id=ev.session_id,
        ),
        metadata=dict(ev.metadata),
        **kwargs,
    )


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def _slot_key(family: str, speaker: str | None) -> str:
    fam = family.strip().lower().replace(":", "_") or "state"
    if not speaker:
        return fam
    who = "".join(ch if ch.isalnum() else "_" for ch in speaker.strip().lower()) or "_"
    return f"{fam}:{who}"


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)


# ======================================================================= nodes


_Judged = tuple[Verdict, CommitDecision, MemoryRecord]


def _by_support(t: _Judged) -> tuple[float, float, str]:
    """Order of verdicts: most confident first, then the newest target, then its id."""
    return (-t[0].confidence, -t[2].time.timestamp(), t[2].id)


def _ranked_verdicts(
    state: WriteState, by_id: dict[str, MemoryRecord]
) -> tuple[list[_Judged], list[_Judged]]:
    """Valid verdicts on live candidates, and supersessions of records already history.

    Verdicts on ids outside the candidate set, invalid ones and ``keep_both`` are
    dropped; both lists are in :func:`_by_support` order.
    """
    rec = state["record"]
    ranked: list[_Judged] = []
    history: list[_Judged] = []
    for item in state.get("verdicts", []):
        v: Verdict = item["verdict"]
        cand = by_id.get(item["target_id"])
        if cand is None:
            continue  # outside the candidate set: dropped
        try:
            d = verdict_to_decision(v, cand, rec)
        except InvalidVerdictError:
            continue
        if d is None:
            continue
        if cand.status in LIVE_STATUSES:
            ranked.append((v, d, cand))
        elif d.action is CommitAction.SUPERSEDE:
            history.append((v, d, cand))  # an older state: link it, status unchanged
    return sorted(ranked, key=_by_support), sorted(history, key=_by_support)


def _chain_targets(ranked: list[_Judged]) -> list[_Judged]:
    """The records whose state this write ends: one per slot, plus the same entity's.

    The best-supported target of each slot is kept, with earlier records of the same
    entity it also supersedes; when supersessions and transitions mix, only the best
    one stays. The result follows the order of ``ranked``.
    """
    chains: dict[str, list[_Judged]] = {}
    for t in ranked:
        if t[1].action not in _CHAIN_ACTIONS:
            continue
        key = (t[0].slot or "").lower()
        group = chains.get(key)
        if group is None:
            chains[key] = [t]  # the best-supported target of this slot
        elif (
            t[1].action is CommitAction.SUPERSEDE
            and group[0][1].action is CommitAction.SUPERSEDE
            and set(t[0].entities) & set(group[0][0].entities)
        ):
            group.append(t)  # an earlier record of the same entity: same history
    kept = [t for group in chains.values() for t in group]
    if len({t[1].action for t in kept}) > 1:  # supersede and transition: best one only
        kept = kept[:1]
    return kept


def _side_links(ranked: list[_Judged], used: set[str]) -> list[CommitDecision]:
    """Coexistence and scoped exceptions, at most ``MAX_SIDE_LINKS``; marks them used."""
    out: list[CommitDecision] = []
    for _v, d, _c in ranked:
        if (
            d.action in (CommitAction.COEXIST, CommitAction.SCOPED_EXCEPTION)
            and d.target_id not in used
            and len(out) < MAX_SIDE_LINKS
        ):
            out.append(d)
            used.add(d.target_id)
    return out


def _transition_closure(kept: list[_Judged], used: set[str]) -> list[CommitDecision]:
    """Superseding a transition record also supersedes the state it evolved from.

    So the old and the new state are directly linked; marks the added targets used.
    """
    extra: list[CommitDecision] = []
    for _v, d, cand in kept:
        if (
            d.action is CommitAction.SUPERSEDE
            and cand.status is RecordStatus.TRANSITION
            and not cand.targets(LinkType.EVOLVES_TO)
        ):
            for src in cand.targets(LinkType.EVOLVES_FROM):
                if src not in used:
                    extra.append(
                        CommitDecision(
                            action=CommitAction.SUPERSEDE,
                            target_id=src,
                            reason="state the transition evolved from",
                        )
                    )
                    used.add(src)
    return extra


class WriteNodes:
    """The node functions shared by the graph and the batch ingest loop.

    Args:
        bank: the state bank.
        gate: the proposal gate; ``None`` = :class:`ProposalGate` with its defaults.
        judge: the audit judge; ``None`` = the shipped :class:`LearnedJudge`
            (:func:`~langchain_atma.bank.learned_judge.default_judge`).
        candidate_k: live records fetched per write (of the same speaker when the
            record has one).
        use_gate: ``False`` = ablation, judge every candidate.
        use_judge: ``False`` = ablation, audit nothing (plain append).
    """

    def __init__(
        self,
        bank: StateBank,
        *,
        gate: ProposalGate | None = None,
        judge: BaseJudge | None = None,
        candidate_k: int = DEFAULT_CANDIDATE_K,
        use_gate: bool = True,
        use_judge: bool = True,
    ) -> None:
        if not isinstance(candidate_k, int) or isinstance(candidate_k, bool) or candidate_k < 1:
            raise InvalidRecordError(f"candidate_k must be a positive integer, got {candidate_k!r}")
        if gate is not None and not isinstance(gate, ProposalGate):
            raise InvalidRecordError(f"gate must be a ProposalGate, got {type(gate).__name__}")
        self.bank = bank
        self.gate = gate or ProposalGate()
        if judge is None:
            from langchain_atma.bank.learned_judge import default_judge

            judge = default_judge()
        self.judge_impl: BaseJudge = judge
        self.candidate_k = candidate_k
        self.use_gate = use_gate
        self.use_judge = use_judge
        # set by ingest_events, whose propose and commit share one writer-lock hold:
        # the commit then need not look the source event up again
        self._one_hold = False

    # ------------------------------------------------------------------ propose
    def propose(self, state: WriteState) -> dict[str, Any]:
        """Embed once, collect P_j, rank it with the gate, flag pairs."""
        t0 = time.perf_counter()
        rec = state["record"]
        if not isinstance(rec, MemoryRecord):
            raise InvalidRecordError(f"record must be a MemoryRecord, got {type(rec).__name__}")
        ns = validate_namespace(state.get("namespace") or rec.namespace)
        if ns != rec.namespace:
            raise NamespaceError(f"record namespace {rec.namespace!r} differs from {ns!r}")
        event = rec.provenance.source_event_id
        if event:
            existing = self.bank.find_by_event(ns, event)
            if existing is not None:
                res = CommitResult(commit_id="", record=existing, idempotent=True)
                return {
                    "namespace": ns,
                    "candidates": [],
                    "scores": [],
                    "flagged": [],
                    "verdicts": [],
                    "decisions": [],
                    "result": res,
                    "metrics": {"idempotent": True, "propose_ms": _ms(t0)},
                    "trace": [
                        self._trace("propose", {"event": event}, {"idempotent": existing.id}, t0)
                    ],
                }
        emb = state.get("embedding")
        encode_ms = 0.0
        if emb is None:
            t_enc = time.perf_counter()
            vec = self.bank.embed([rec.content])[0]
            encode_ms = _ms(t_enc)
        else:
            vec = np.asarray(emb, dtype=np.float32).reshape(-1)
        centre = self.bank.centroid(ns)
        cands, vectors = self._candidates(
            ns, rec, centred_query(vec, centre, self.gate.config.centre_weight)
        )
        missing = [c.id for c in cands if c.id not in vectors]
        if missing:  # link hops: hits came with their vectors
            vectors.update(self.bank.vectors(ns, missing))
        cands = [c for c in cands if c.id in vectors]  # a row without a vector cannot be scored
        scores: list[dict[str, Any]] = []
        flagged: list[str] = []
        if cands:
            eligible = None
            if self.gate.config.statements_only:
                states = cues(rec.content).statement
                eligible = np.array([states and c.states_fact is not False for c in cands])
            gs = self.gate.score(
                vec, np.stack([vectors[c.id] for c in cands]), centre=centre, eligible=eligible
            )
            for i, c in enumerate(cands):
                flag = bool(gs.flagged[i]) if self.use_gate else True
                scores.append(
                    {
                        "id": c.id,
                        "similarity": round(float(gs.similarity[i]), 6),
                        "score": round(float(gs.score[i]), 6),
                        "live": c.status in LIVE_STATUSES,
                        "flagged": flag,
                    }
                )
                if flag:
                    flagged.append(c.id)
        metrics = {
            "candidates": len(cands),
            "flagged": len(flagged),
            "encode_ms": encode_ms,
            "propose_ms": _ms(t0),
        }
        return {
            "namespace": ns,
            "embedding": [float(x) for x in vec],
            "candidates": cands,
            "scores": scores,
            "flagged": flagged,
            "metrics": metrics,
            "trace": [
                self._trace(
                    "propose",
                    {"record": rec.id, "candidates": len(cands)},
                    {"flagged": flagged},
                    t0,
                )
            ],
        }

    def _candidates(
        self, ns: str, rec: MemoryRecord, query: np.ndarray
    ) -> tuple[list[MemoryRecord], dict[str, np.ndarray]]:
        """P_j: the live records nearest to the centred query, plus one state-link hop.

        Returns:
            The candidates, and the stored vectors that came with the search hits.
        """
        speaker = rec.provenance.speaker
        hits = self.bank.search_by_vector(ns, query, self.candidate_k, statuses=LIVE_STATUSES)
        if speaker:
            # State belongs to its speaker: another person's statement never changes
            # this speaker's state, so it is not a candidate (records with no known
            # speaker stay candidates). One more query, restricted to the speaker, so
            # the pool holds the speaker's k nearest records even when the other
            # speakers' records are closer.
            own = self.bank.search_by_vector(
                ns, query, self.candidate_k, statuses=LIVE_STATUSES, speaker=speaker
            )
            merged = {h.record.id: h for h in own}
            for h in hits:
                if not h.record.provenance.speaker:
                    merged.setdefault(h.record.id, h)
            hits = sorted(merged.values(), key=lambda h: (-h.score, h.record.id))
            hits = hits[: self.candidate_k]
        cands = [h.record for h in hits if h.record.id != rec.id]
        vectors = {
            h.record.id: np.asarray(h.vector, dtype=np.float32)
            for h in hits
            if h.vector is not None
        }
        seen = {c.id for c in cands}
        hop = [
            lk.target
            for c in cands
            for lk in c.links
            if lk.type in _STATE_LINKS and lk.target not in seen
        ]
        if hop:
            cands += [r for r in self.bank.get_many(ns, list(dict.fromkeys(hop))) if r.id != rec.id]
        if speaker:
            cands = [
                c for c in cands if not c.provenance.speaker or c.provenance.speaker == speaker
            ]
        return cands, vectors

    async def apropose(self, state: WriteState) -> dict[str, Any]:
        """Async :meth:`propose`, run in a worker thread (embedding and host calls block)."""
        return await asyncio.to_thread(self.propose, state)

    def route(self, state: WriteState) -> _Route:
        """After propose: end (idempotent), judge (something flagged), or commit."""
        if state.get("result") is not None:
            return "__end__"
        if state.get("flagged") and self.use_judge:
            return "judge"
        return "commit"

    # -------------------------------------------------------------------- judge
    def _inputs(self, state: WriteState) -> list[JudgeInput]:
        rec = state["record"]
        by_id = {c.id: c for c in state.get("candidates", [])}
        sc = {s["id"]: s for s in state.get("scores", [])}
        out = []
        for cid in state.get("flagged", []):
            cand = by_id.get(cid)
            if cand is None:
                continue
            s = sc.get(cid, {})
            out.append(
                JudgeInput(
                    old=cand,
                    new=rec,
                    similarity=s.get("similarity"),
                    gate_score=s.get("score"),
                    old_precedes_new=cand.time <= rec.time,
                )
            )
        return out

    def _judged(
        self, state: WriteState, inputs: list[JudgeInput], verdicts: list[Verdict], t0: float
    ) -> dict[str, Any]:
        out: list[dict[str, Any]] = []
        for inp, v in zip(inputs, verdicts, strict=True):
            try:
                v = validate_verdict(v, inp.old, inp.new)
            except InvalidVerdictError as exc:
                v = keep_both_verdict(f"verdict rejected: {exc}", source="fallback")
            out.append({"target_id": inp.old.id, "verdict": v})
        n_fallback = sum(o["verdict"].source == "fallback" for o in out)
        metrics = dict(state.get("metrics") or {})
        metrics.update(
            {"judge_calls": len(inputs), "judge_fallbacks": n_fallback, "judge_ms": _ms(t0)}
        )
        # a fallback verdict is always listed, even keep_both: a failed judge stays visible
        decided = {
            o["target_id"]: ("[fallback] " if o["verdict"].source == "fallback" else "")
            + f"{o['verdict'].action} ({o['verdict'].reason})"
            for o in out
            if o["verdict"].action != "keep_both" or o["verdict"].source == "fallback"
        }
        return {
            "verdicts": out,
            "metrics": metrics,
            "trace": [self._trace("judge", {"pairs": len(inputs)}, decided, t0)],
        }

    def judge(self, state: WriteState) -> dict[str, Any]:
        """Audit the flagged pairs."""
        t0 = time.perf_counter()
        inputs = self._inputs(state)
        return self._judged(state, inputs, self.judge_impl.judge_many(inputs), t0)

    async def ajudge(self, state: WriteState) -> dict[str, Any]:
        """Audit the flagged pairs (async, concurrently)."""
        t0 = time.perf_counter()
        inputs = self._inputs(state)
        return self._judged(state, inputs, await self.judge_impl.ajudge_many(inputs), t0)

    # ------------------------------------------------------------------- commit
    def plan(
        self, state: WriteState
    ) -> tuple[list[CommitDecision], dict[str, Verdict], str | None]:
        """Turn verdicts into one consistent decision set (see module docstring).

        Returns:
            ``(decisions, verdict_by_target, slot_family)``.
        """
        rec = state["record"]
        by_id = {c.id: c for c in state.get("candidates", [])}
        ranked, history = _ranked_verdicts(state, by_id)
        verdict_by = {d.target_id: v for v, d, _ in ranked}
        if not ranked:
            # this write replaces no live record: the best-supported verdict that it
            # replaces a record that is already history is kept (one link, no status
            # change, no slot): an earlier write may have superseded that record first
            return [d for _v, d, _c in history[:1]], verdict_by, None
        dups = [t for t in ranked if t[1].action is CommitAction.DUPLICATE]
        if dups:
            return [dups[0][1]], verdict_by, dups[0][0].slot
        kept = _chain_targets(ranked)
        decisions = [t[1] for t in kept]
        used = {d.target_id for d in decisions}
        decisions += _side_links(ranked, used)
        decisions += _transition_closure(kept, used)
        decisions += self._bridged(rec, decisions, by_id, used)
        decisions += [
            d for d in self._history([t[2] for t in kept], history) if d.target_id not in used
        ]
        best = kept[0][0] if kept else ranked[0][0]
        return decisions, verdict_by, best.slot

    @staticmethod
    def _bridged(
        rec: MemoryRecord,
        decisions: list[CommitDecision],
        by_id: dict[str, MemoryRecord],
        used: set[str],
    ) -> list[CommitDecision]:
        """Coexistence through a record that names both values (bridge closure).

        When the new record coexists with a bridge record B, B coexists with an
        older active record O, and B's text names a value of O that the new
        record lacks and a value of the new record that O lacks
        (:func:`~langchain_atma.text.names_both`: "mixing some origami in
        with my usual embroidery"), the new record also coexists with O: B
        describes how the two relate. B must say that something changed (it
        describes a change: ``TextCues.shift``) and O must not (O is a plain
        earlier state, not another change description that merely shares B's
        wording). One link per bridge, no judge call.
        """
        out: list[CommitDecision] = []
        for d in decisions:
            bridge = by_id.get(d.target_id)
            if (
                bridge is None
                or d.action not in (CommitAction.COEXIST, CommitAction.SCOPED_EXCEPTION)
                or not cues(bridge.content).shift
            ):
                continue
            for src in bridge.targets(LinkType.COEXISTS, LinkType.SCOPED_EXCEPTION):
                old = by_id.get(src)
                if (
                    old is None
                    or src in used
                    or src == rec.id
                    or old.status is not RecordStatus.ACTIVE
                    or old.sort_key > bridge.sort_key
                    or cues(old.content).shift
                    or not names_both(bridge.content, old.content, rec.content)
                ):
                    continue
                out.append(
                    CommitDecision(
                        action=CommitAction.COEXIST,
                        target_id=src,
                        reason=f"coexists through {bridge.id}, which names both values",
                    )
                )
                used.add(src)
                break
        return out

    @staticmethod
    def _history(
        chain_targets: list[MemoryRecord],
        history: list[tuple[Verdict, CommitDecision, MemoryRecord]],
    ) -> list[CommitDecision]:
        """Supersede links to records that are already history (one hop away).

        Kept only when the judge said so AND the record is the direct predecessor of
        a record this write supersedes, so the new state is linked to the states it
        replaces (never to unrelated history).
        """
        preds = {
            t for x in chain_targets for t in x.targets(LinkType.SUPERSEDES, LinkType.EVOLVES_FROM)
        }
        return [d for _v, d, cand in history if cand.id in preds]

    def _commit(self, state: WriteState) -> dict[str, Any]:
        t0 = time.perf_counter()
        rec = state["record"]
        ns = state.get("namespace") or rec.namespace
        emb = state.get("embedding")
        decisions, verdict_by, family = self.plan(state) if self.use_judge else ([], {}, None)
        update: dict[str, Any] = {}
        if rec.states_fact is None:  # once, at write time: the read path ranks with it
            update["states_fact"] = cues(rec.content).statement
        slot_set = False
        if (
            family
            and not rec.slot
            and decisions
            and decisions[0].action is not CommitAction.DUPLICATE
        ):
            update["slot"] = _slot_key(family, rec.provenance.speaker)
            slot_set = True
        new = rec.model_copy(update=update) if update else rec
        fallbacks: list[str] = []
        result: CommitResult | None = None
        for _attempt in range(4):
            try:
                result = self.bank.commit(
                    new, decisions, embedding=emb, event_checked=self._one_hold
                )
                break
            except RecordNotFoundError as exc:
                present = {r.id for r in self.bank.get_many(ns, [d.target_id for d in decisions])}
                kept = [d for d in decisions if d.target_id in present]
                fallbacks.append(f"missing target dropped: {exc}")
                if len(kept) == len(decisions):
                    decisions = []
                else:
                    decisions = kept
            except CommitError as exc:
                fallbacks.append(f"commit rejected: {exc}")
                if slot_set and new.slot:
                    # the judge said these same-slot records are superseded too?
                    chosen = {d.target_id for d in decisions}
                    extra = [
                        CommitDecision(
                            action=CommitAction.SUPERSEDE,
                            target_id=c.id,
                            reason="same-slot active record the judge superseded",
                        )
                        for c in state.get("candidates", [])
                        if c.id not in chosen
                        and c.slot == new.slot
                        and c.status is RecordStatus.ACTIVE
                        and verdict_by.get(c.id) is not None
                        and verdict_by[c.id].action == "supersede"
                    ]
                    if extra and not any(f.startswith("slot") for f in fallbacks):
                        decisions = decisions + extra
                        fallbacks.append("slot: superseded same-slot records")
                    else:
                        new = new.model_copy(update={"slot": None})
                        slot_set = False
                        fallbacks.append("slot: stored without the slot")
                else:
                    decisions = []
        if result is None:
            raise CommitError(f"could not commit record {rec.id}: {'; '.join(fallbacks)}")
        metrics = dict(state.get("metrics") or {})
        applied = result.applied
        metrics.update(
            {
                "commit_ms": _ms(t0),
                "supersessions": sum(d.action is CommitAction.SUPERSEDE for d in applied),
                "transitions": sum(d.action is CommitAction.TRANSITION for d in applied),
                "coexistences": sum(
                    d.action in (CommitAction.COEXIST, CommitAction.SCOPED_EXCEPTION)
                    for d in applied
                ),
                "duplicate": result.duplicate_of is not None,
                "idempotent": result.idempotent,
                "fallbacks": len(fallbacks),
            }
        )
        decided = {
            "record": None if result.record is None else result.record.id,
            "applied": [f"{d.action.value}:{d.target_id}" for d in applied],
            "duplicate_of": result.duplicate_of,
            "fallbacks": fallbacks,
        }
        return {
            "decisions": list(applied),
            "result": result,
            "metrics": metrics,
            "trace": [self._trace("commit", {"decisions": len(decisions)}, decided, t0)],
        }

    def commit(self, state: WriteState) -> dict[str, Any]:
        """Build the decision set and write it with one ``bank.commit``."""
        return self._commit(state)

    async def acommit(self, state: WriteState) -> dict[str, Any]:
        """Async :meth:`commit`, run in a worker thread (host writes block)."""
        return await asyncio.to_thread(self._commit, state)

    # -------------------------------------------------------------------- trace
    @staticmethod
    def _trace(node: str, saw: Any, decided: Any, t0: float) -> dict[str, Any]:
        return {"level": "bank", "node": node, "saw": saw, "decided": decided, "ms": _ms(t0)}


# ======================================================================= graph


def _node(name: str, func: Any, afunc: Any) -> Any:
    return RunnableLambda(func, afunc=afunc, name=f"atma.bank.{name}").with_config(
        run_name=f"atma.bank.{name}",
        tags=["atma", "atma:bank"],
        metadata={"atma.level": "bank", "atma.node": name},
    )


def _steps(nodes: WriteNodes) -> dict[str, Any]:
    """The write steps as traced runnables, named as the write graph's nodes."""
    return {
        name: _node(name, getattr(nodes, name), getattr(nodes, f"a{name}"))
        for name in ("propose", "judge", "commit")
    }


def _write_run(body: Any) -> Any:
    """One event's write as one ``atma.bank.write`` run (a sync or an async body)."""
    return RunnableLambda(body, name="atma.bank.write").with_config(
        run_name="atma.bank.write", tags=["atma", "atma:bank"], metadata={"atma.level": "bank"}
    )


def create_write_graph(
    bank: StateBank,
    *,
    gate: ProposalGate | None = None,
    judge: BaseJudge | None = None,
    candidate_k: int = DEFAULT_CANDIDATE_K,
    use_gate: bool = True,
    use_judge: bool = True,
) -> CompiledStateGraph:
    """Compile the bank write graph ``propose -> [judge] -> commit``.

    Args:
        bank: the state bank to write to.
        gate: proposal gate (default: :class:`ProposalGate`).
        judge: audit judge (default: :class:`LearnedJudge`).
        candidate_k: nearest live neighbours per write.
        use_gate: ``False`` = ablation "judge every candidate".
        use_judge: ``False`` = ablation "no audit" (plain append).

    Returns:
        A compiled graph; input ``{"record": MemoryRecord}`` (optionally
        ``namespace`` and ``embedding``); usable as a subgraph.
    """
    nodes = WriteNodes(
        bank,
        gate=gate,
        judge=judge,
        candidate_k=candidate_k,
        use_gate=use_gate,
        use_judge=use_judge,
    )
    g: StateGraph = StateGraph(WriteState, output_schema=WriteOutput)
    for name, f, af in (
        ("propose", nodes.propose, nodes.apropose),
        ("judge", nodes.judge, nodes.ajudge),
        ("commit", nodes.commit, nodes.acommit),
    ):
        g.add_node(name, _node(name, f, af), metadata={"atma.level": "bank", "atma.node": name})
    g.add_edge(START, "propose")
    g.add_conditional_edges(
        "propose", nodes.route, {"judge": "judge", "commit": "commit", "__end__": END}
    )
    g.add_edge("judge", "commit")
    g.add_edge("commit", END)
    return g.compile(name="atma.bank.write")


# ====================================================================== ingest


class IngestReport(BaseModel):
    """What a batch ingest did."""

    events: int = Field(default=0, description="Events processed.")
    writes: int = Field(default=0, description="New records written.")
    idempotent: int = Field(default=0, description="Events already in the bank (skipped).")
    duplicates: int = Field(default=0, description="Events judged duplicates (not stored).")
    candidate_pairs: int = Field(default=0, description="(new, candidate) pairs scored.")
    flagged_pairs: int = Field(default=0, description="Pairs the gate routed to the judge.")
    judge_calls: int = Field(default=0, description="Pairs the judge audited.")
    judge_calls_per_write: float = Field(
        default=0.0, description="judge_calls / (writes + duplicates)."
    )
    supersessions: int = Field(default=0, description="Supersede decisions applied.")
    transitions: int = Field(default=0, description="Transition decisions applied.")
    coexistences: int = Field(default=0, description="Coexist + scoped-exception decisions.")
    fallbacks: int = Field(default=0, description="Commit fallbacks taken (see trace).")
    seconds: dict[str, float] = Field(
        default_factory=dict,
        description="Seconds per stage: encode, propose, judge, commit, total.",
    )
    events_per_s: float = Field(default=0.0, description="Throughput over the whole ingest.")
    record_ids: list[str | None] = Field(
        default_factory=list, description="Per event, the id of its record (None for duplicates)."
    )


LinkStep = Literal[
    "not_candidate", "not_flagged", "not_judged", "judged_otherwise", "not_applied", "linked"
]
"""How far one expected state link got in a write (:meth:`WriteAudit.step`)."""


class WriteAudit(BaseModel):
    """What the bank level of ONE write saw and decided, by record id.

    Collected by :func:`ingest_events` / :func:`aingest_events` when they are given
    an ``audit`` list (one entry per event, in order). It is the attribution
    record of the write path: for an earlier record that should have been linked
    to this one, it tells at which step the link was lost (not in the candidate
    pool P_j, not flagged by the gate, judged otherwise, or dropped at commit).
    The LTP benchmark reads it for its bank-step breakdown.

    Example:
        >>> from langchain_atma.bank.write_graph import WriteAudit
        >>> a = WriteAudit(candidates=["r1", "r2"], flagged=["r1"],
        ...                verdicts={"r1": "keep_both/none"})
        >>> a.step("r2", {"supersede"}), a.step("r1", {"supersede"})
        ('not_flagged', 'judged_otherwise')

        Filled by a batch ingest:

        >>> from langchain_atma.bank import StateBank
        >>> from langchain_atma.bank.write_graph import ingest_events
        >>> bank = StateBank.in_memory()                              # doctest: +SKIP
        >>> audit = []
        >>> _ = ingest_events(bank, [{"text": "I live in Boston.", "timestamp": 1},
        ...                          {"text": "I moved to Seattle.", "timestamp": 2}],
        ...                   namespace="ann", audit=audit)           # doctest: +SKIP
        >>> audit[1].applied                                          # doctest: +SKIP
        {'...': 'supersede'}
    """

    event_id: str | None = Field(default=None, description="Source event id of the write.")
    record_id: str | None = Field(
        default=None,
        description="Id of the record (None for a duplicate that was not stored; "
        "the existing record for an event already in the bank).",
    )
    idempotent: bool = Field(
        default=False, description="The event was already in the bank: nothing ran."
    )
    duplicate_of: str | None = Field(
        default=None, description="Set when the write was judged a duplicate."
    )
    candidates: list[str] = Field(
        default_factory=list, description="The candidate pool P_j (record ids)."
    )
    flagged: list[str] = Field(
        default_factory=list, description="Candidates the gate routed to the judge."
    )
    verdicts: dict[str, str] = Field(
        default_factory=dict,
        description="Per judged candidate: '<action>/<conflict_type>' (keep_both included).",
    )
    applied: dict[str, str] = Field(
        default_factory=dict, description="Per committed decision: target id -> action."
    )

    def step(self, source_id: str, actions: Iterable[str]) -> LinkStep:
        """How far the link from an earlier record ``source_id`` to this write got.

        Args:
            source_id: id of the earlier record that should have been linked.
            actions: the fusion actions that would have been right (e.g.
                ``{"supersede", "transition"}``).

        Returns:
            ``"not_candidate"`` (not in P_j), ``"not_flagged"`` (the gate passed
            it over), ``"not_judged"`` (flagged, no verdict: the no-judge
            ablation), ``"judged_otherwise"`` (the verdict's action is not one of
            ``actions``), ``"not_applied"`` (a right verdict the commit dropped,
            e.g. for a better one of the same slot) or ``"linked"``.
        """
        want = {str(a) for a in actions}
        if source_id not in self.candidates:
            return "not_candidate"
        if source_id not in self.flagged:
            return "not_flagged"
        verdict = self.verdicts.get(source_id)
        if verdict is None:
            return "not_judged"
        if verdict.split("/", 1)[0] not in want:
            return "judged_otherwise"
        if self.applied.get(source_id) not in want:
            return "not_applied"
        return "linked"


def _audit_of(state: WriteState) -> WriteAudit:
    """The :class:`WriteAudit` of one finished write state."""
    res = state.get("result")
    rec = state.get("record")
    verdicts: dict[str, str] = {}
    for o in state.get("verdicts") or []:
        v = o["verdict"]
        verdicts[str(o["target_id"])] = f"{v.action}/{v.conflict_type}"
    return WriteAudit(
        event_id=rec.provenance.source_event_id if rec is not None else None,
        record_id=res.record.id if res is not None and res.record is not None else None,
        idempotent=bool(res is not None and res.idempotent),
        duplicate_of=res.duplicate_of if res is not None else None,
        candidates=[c.id for c in state.get("candidates") or []],
        flagged=list(state.get("flagged") or []),
        verdicts=verdicts,
        applied={d.target_id: d.action.value for d in state.get("decisions") or []},
    )


class _Accumulator:
    def __init__(self, n: int) -> None:
        self.rep = IngestReport(events=n)
        self.sec = {"encode": 0.0, "propose": 0.0, "judge": 0.0, "commit": 0.0}

    def add(
        self,
        state: WriteState,
        trace: list[dict[str, Any]] | None = None,
        audit: list[WriteAudit] | None = None,
    ) -> None:
        if trace is not None:
            trace.extend(state.get("trace", []))
        if audit is not None:
            audit.append(_audit_of(state))
        m = state.get("metrics") or {}
        res = state.get("result")
        rep = self.rep
        self.sec["propose"] += float(m.get("propose_ms", 0.0)) / 1000
        self.sec["judge"] += float(m.get("judge_ms", 0.0)) / 1000
        self.sec["commit"] += float(m.get("commit_ms", 0.0)) / 1000
        self.sec["encode"] += float(m.get("encode_ms", 0.0)) / 1000
        rep.record_ids.append(res.record.id if res is not None and res.record else None)
        if res is None:
            return
        if res.idempotent:
            rep.idempotent += 1
            return
        if res.duplicate_of is not None:
            rep.duplicates += 1
        else:
            rep.writes += 1
        rep.candidate_pairs += int(m.get("candidates", 0))
        rep.flagged_pairs += int(m.get("flagged", 0))
        rep.judge_calls += int(m.get("judge_calls", 0))
        rep.supersessions += int(m.get("supersessions", 0))
        rep.transitions += int(m.get("transitions", 0))
        rep.coexistences += int(m.get("coexistences", 0))
        rep.fallbacks += int(m.get("fallbacks", 0))

    def finish(self, t_start: float) -> IngestReport:
        rep = self.rep
        total = time.perf_counter() - t_start
        done = rep.writes + rep.duplicates
        rep.judge_calls_per_write = round(rep.judge_calls / done, 4) if done else 0.0
        rep.seconds = {k: round(v, 4) for k, v in self.sec.items()}
        rep.seconds["total"] = round(total, 4)
        rep.events_per_s = round(rep.events / total, 2) if total > 0 else 0.0
        return rep


def _merge(state: WriteState, update: dict[str, Any]) -> None:
    for key, val in update.items():
        if key == "trace":
            state["trace"] = [*state.get("trace", []), *val]
        else:
            state[key] = val  # type: ignore[literal-required]


def _prepare(
    bank: StateBank, events: Iterable[MemoryEvent | dict[str, Any]], namespace: str
) -> list[MemoryRecord]:
    validate_namespace(namespace)
    if isinstance(events, (str, bytes)):
        raise InvalidRecordError("events must be an iterable of events, not a string")
    return [event_to_record(e, namespace) for e in events]


def _states(
    records: Sequence[MemoryRecord], vecs: Any, namespace: str, progress: bool
) -> Iterable[WriteState]:
    """One fresh write state per record, in order (with the batch-encoded vector)."""
    for i in _iter(records, progress):
        yield {"namespace": namespace, "record": records[i], "embedding": vecs[i], "trace": []}


def _iter(records: Sequence[MemoryRecord], progress: bool) -> Iterable[int]:
    if progress:
        from tqdm.auto import tqdm

        return tqdm(range(len(records)), desc="atma ingest", unit="event")
    return range(len(records))


def ingest_events(
    bank: StateBank,
    events: Iterable[MemoryEvent | dict[str, Any]],
    *,
    namespace: str,
    gate: ProposalGate | None = None,
    judge: BaseJudge | None = None,
    progress: bool = False,
    use_gate: bool = True,
    use_judge: bool = True,
    candidate_k: int = DEFAULT_CANDIDATE_K,
    trace: list[dict[str, Any]] | None = None,
    audit: list[WriteAudit] | None = None,
    config: RunnableConfig | None = None,
) -> IngestReport:
    """Write events in order through the write path (batch-encoded up front).

    Each event's propose -> judge -> commit runs under the namespace's writer lock
    (:meth:`StateBank.writer_lock`), so concurrent writers of the same namespace
    (threads, or processes sharing a Chroma server) never plan on stale state.
    :func:`aingest_events` and the compiled graph lock only the commit itself; a
    plan made stale meanwhile is caught by the slot invariant or, on a server, by
    the revision check (``ConcurrentWriteError``, nothing written).

    Args:
        bank: the state bank.
        events: dicts or :class:`MemoryEvent` objects, in chronological order.
        namespace: namespace of every record.
        gate: proposal gate (default: :class:`ProposalGate`).
        judge: audit judge (default: :class:`LearnedJudge`).
        progress: show a tqdm progress bar.
        use_gate: ``False`` = ablation "judge every candidate".
        use_judge: ``False`` = ablation "no audit".
        candidate_k: nearest live neighbours per write.
        trace: if given, every node's trace entry is appended to it.
        audit: if given, one :class:`WriteAudit` per event is appended to it
            (candidates, flags, verdicts and applied decisions by record id).
        config: the caller's run config (callbacks, tags, metadata): each event is
            one ``atma.bank.write`` run with ``atma.bank.propose`` / ``judge`` /
            ``commit`` children, as in the write graph.

    Returns:
        An :class:`IngestReport`.

    Raises:
        InvalidRecordError: an event is malformed (nothing after it is written).
        NamespaceError: the namespace is malformed.
    """
    t_start = time.perf_counter()
    records = _prepare(bank, events, namespace)
    nodes = WriteNodes(
        bank,
        gate=gate,
        judge=judge,
        candidate_k=candidate_k,
        use_gate=use_gate,
        use_judge=use_judge,
    )
    nodes._one_hold = True  # write_one holds the lock from propose to commit
    acc = _Accumulator(len(records))
    t_enc = time.perf_counter()
    vecs: Any = bank.embed([r.content for r in records]) if records else []
    acc.sec["encode"] += time.perf_counter() - t_enc
    steps = _steps(nodes)

    def write_one(state: WriteState, config: RunnableConfig) -> WriteState:
        # propose -> judge -> commit under the namespace's writer lock, so another
        # writer (thread, or process on the same Chroma server) cannot commit between
        # the read that planned this write and the write itself
        with bank.writer_lock(namespace):
            _merge(state, steps["propose"].invoke(state, config))
            route = nodes.route(state)
            if route == "judge":
                _merge(state, steps["judge"].invoke(state, config))
            if route != "__end__":
                _merge(state, steps["commit"].invoke(state, config))
        return state

    write = _write_run(write_one)
    for state in _states(records, vecs, namespace, progress):
        acc.add(write.invoke(state, config), trace, audit)
    return acc.finish(t_start)


async def aingest_events(
    bank: StateBank,
    events: Iterable[MemoryEvent | dict[str, Any]],
    *,
    namespace: str,
    gate: ProposalGate | None = None,
    judge: BaseJudge | None = None,
    progress: bool = False,
    use_gate: bool = True,
    use_judge: bool = True,
    candidate_k: int = DEFAULT_CANDIDATE_K,
    trace: list[dict[str, Any]] | None = None,
    audit: list[WriteAudit] | None = None,
    config: RunnableConfig | None = None,
) -> IngestReport:
    """Async :func:`ingest_events` (events stay strictly in order; the judge is awaited)."""
    t_start = time.perf_counter()
    records = _prepare(bank, events, namespace)
    nodes = WriteNodes(
        bank,
        gate=gate,
        judge=judge,
        candidate_k=candidate_k,
        use_gate=use_gate,
        use_judge=use_judge,
    )
    acc = _Accumulator(len(records))
    t_enc = time.perf_counter()
    vecs: Any = await asyncio.to_thread(bank.embed, [r.content for r in records]) if records else []
    acc.sec["encode"] += time.perf_counter() - t_enc
    steps = _steps(nodes)

    async def write_one(state: WriteState, config: RunnableConfig) -> WriteState:
        _merge(state, await steps["propose"].ainvoke(state, config))
        route = nodes.route(state)
        if route == "judge":
            _merge(state, await steps["judge"].ainvoke(state, config))
        if route != "__end__":
            _merge(state, await steps["commit"].ainvoke(state, config))
        return state

    write = _write_run(write_one)
    for state in _states(records, vecs, namespace, progress):
        acc.add(await write.ainvoke(state, config), trace, audit)
    return acc.finish(t_start)
