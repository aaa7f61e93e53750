"""``atma bench ltp``: run methods over an LTP-format file with decoupled metrics.

The runner accepts any file in the format of ``shared/ltp/FORMAT.md`` and works
in three strictly separated phases per profile:

1. **replay** — each profile's events are turned into
   :class:`~langchain_atma.benchmarks.ltp_format.ReplayEvent` objects (event id,
   timestamp, speaker, text: nothing else) and written, in order, into one fresh
   bank per bank variant. ``kind``, ``unit_id`` and every gold field are not
   visible to this phase;
2. **answer** — every probe question (the question text only) is answered after
   the whole stream is replayed, with k = 5 by default; nothing is written;
3. **score** — only now are units, probes, targets and event kinds read.

Methods (all in one run, sharing the replays where the bank is the same):

* ``host`` — plain vector top-k over the same records (the bank replayed without
  audit, so no state roles), same offline answerer, no labels, no expansion;
* ``atma`` — the full overlay with the offline defaults;
* ``atma-no-gate`` — every candidate pair is judged (no proposal gate cap);
* ``atma-no-judge`` — flagged pairs are not audited (no links written);
* ``atma-no-controller`` — stable pre-rank only;
* ``atma-no-labels`` — the answerer sees no state labels.

Metrics follow FORMAT.md (bank_coexist, bank_role, evidence_support,
state_fit_at_1, label_accuracy, qa_acc, conflict_acc, fact_acc), plus
``spurious_supersession_rate`` (share of dialog-event records marked superseded)
and ``judge_calls_per_write``, and counts of each probe's failure level
(``fail_bank``, ``fail_candidates``, ``fail_ranking``, ``fail_qa``). ``views``
(one for the file) is the query profiler's accuracy on the probes' views.
Each method's row also has ``by_update_type``: bank_role, evidence_support,
state_fit_at_1, label_accuracy and qa_acc per gold update type (temporal,
negation, value, scope), computed in the scoring phase like everything else, and
(all but ``host``) ``bank_steps``: for each unit with a wrong bank role, the write
step at which its link was lost (:data:`BANK_STEPS`), read from the
:class:`~langchain_atma.bank.write_graph.WriteAudit` each write recorded during
the replay. ``details`` (``--details FILE``) lists every unit and probe.

The learned judge and the offline controller and answerer are the defaults; any of
them can run on a chat model (``judge_model``, ``controller_model``,
``answer_model``; ``--judge-model`` ... on the command line). A judge model is used
as the product uses it: the pairs the learned judge is unsure of are escalated to
it (:class:`~langchain_atma.bank.judge.EscalatingJudge`).

Example:
    >>> from langchain_atma.benchmarks.ltp_bench import METHODS
    >>> METHODS[:2]
    ('host', 'atma')
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langchain_atma.bank import StateBank
from langchain_atma.bank.judge import BaseJudge, EscalatingJudge, LLMJudge, judge_stats
from langchain_atma.bank.learned_judge import default_judge
from langchain_atma.bank.write_graph import LinkStep, WriteAudit
from langchain_atma.benchmarks.ltp_format import (
    LtpFile,
    LtpProfile,
    UpdateType,
    load_ltp,
    replay_stream,
    select_profiles,
)
from langchain_atma.benchmarks.scoring import ltp_answer_correct
from langchain_atma.embeddings import encode_texts
from langchain_atma.errors import ConfigError
from langchain_atma.qa.answerer import LLMAnswerer, OfflineAnswerer
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus
from langchain_atma.retrieval.attribution import attribute_failure
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.packets import (
    DEFAULT_K,
    DEFAULT_SEED_K,
    Bucket,
    EvidenceLabel,
    EvidenceRow,
)
from langchain_atma.retrieval.profiler import profile_query

__all__ = [
    "BANK_STEPS",
    "METHODS",
    "TYPED_METRICS",
    "MemoEmbeddings",
    "bench_models",
    "main",
    "markdown_bank_steps",
    "markdown_table",
    "markdown_type_table",
    "part_name",
    "run_ltp_bench",
    "unit_bank_step",
    "view_accuracy",
    "write_jsonl",
]

METHODS: tuple[str, ...] = (
    "host",
    "atma",
    "atma-no-gate",
    "atma-no-judge",
    "atma-no-controller",
    "atma-no-labels",
)

# method -> (bank variant, read options)
_READ: dict[str, dict[str, Any]] = {
    "atma": {"controller_mode": "online", "use_labels": True},
    "atma-no-gate": {"controller_mode": "online", "use_labels": True},
    "atma-no-judge": {"controller_mode": "online", "use_labels": True},
    "atma-no-controller": {"controller_mode": "off", "use_labels": True},
    "atma-no-labels": {"controller_mode": "online", "use_labels": False},
}
_BANK_OF = {
    "host": "no-judge",
    "atma": "full",
    "atma-no-gate": "no-gate",
    "atma-no-judge": "no-judge",
    "atma-no-controller": "full",
    "atma-no-labels": "full",
}
_INGEST_OPTS: dict[str, dict[str, Any]] = {
    "full": {"use_gate": True, "use_judge": True},
    "no-gate": {"use_gate": False, "use_judge": True},
    "no-judge": {"use_gate": True, "use_judge": False},
}

METRICS = (
    "bank_coexist",
    "bank_role",
    "evidence_support",
    "state_fit_at_1",
    "label_accuracy",
    "qa_acc",
    "conflict_acc",
    "fact_acc",
    "spurious_supersession_rate",
    "judge_calls_per_write",
)


class MemoEmbeddings(Embeddings):
    """Memoizing wrapper: each distinct text is encoded once per run (keeps ``name``)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self._memo: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts, reusing earlier vectors."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            self._memo.update(zip(todo, encode_texts(self.inner, todo), strict=True))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents."""
        return [list(map(float, v)) for v in self.encode(texts)]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query."""
        return self.embed_documents([text])[0]


# ----------------------------------------------------------------------------- phases


def _replay(
    profile: LtpProfile,
    embeddings: Embeddings,
    variant: str,
    audit: list[WriteAudit] | None = None,
    judge: BaseJudge | None = None,
) -> tuple[StateBank, Any]:
    """Phase 1: write the profile's stream into a fresh bank (no gold visible).

    ``audit`` collects one :class:`WriteAudit` per event (what each write saw and
    decided, by record id); the scoring phase reads it for the bank-step breakdown.
    """
    from langchain_atma.bank.write_graph import ingest_events

    bank = StateBank.in_memory(embeddings=embeddings)
    events = [
        {"event_id": ev.event_id, "timestamp": ev.timestamp, "speaker": ev.speaker, "text": ev.text}
        for ev in replay_stream(profile)
    ]
    report = ingest_events(
        bank, events, namespace=_ns(profile), audit=audit, judge=judge, **_INGEST_OPTS[variant]
    )
    return bank, report


def _ns(profile: LtpProfile) -> str:
    safe = "".join(c if c.isalnum() or c in "_.-" else "-" for c in profile.profile_id)
    return f"ltp-{safe}"[:120]


def _host_answer(
    bank: StateBank, ns: str, question: str, k: int, answerer: Any | None = None
) -> dict[str, Any]:
    hits = bank.search(ns, question, k=k)
    rows = [
        EvidenceRow(record=h.record, bucket=Bucket.SEED, score=h.score, prerank=i)
        for i, h in enumerate(hits)
    ]
    qa = answerer if answerer is not None else OfflineAnswerer(use_labels=False)
    answer = qa.answer(question, profile_query(question), rows)
    return {
        "pool": rows,
        "rows": rows,
        "labels": [None] * len(rows),
        "answer": answer.answer,
        "status": answer.status,
    }


def _atma_answer(graph: Any, ns: str, question: str) -> dict[str, Any]:
    out = graph.invoke({"question": question, "namespace": ns})
    rows = out["packet"].rows
    return {
        "pool": out["pool"],
        "rows": rows,
        "labels": [r.label for r in rows],
        "answer": out["answer"].answer,
        "status": out["answer"].status,
    }


# ----------------------------------------------------------------------------- scoring


def _linked(a: MemoryRecord, b: MemoryRecord, types: set[LinkType]) -> bool:
    return any(lk.target == b.id and lk.type in types for lk in a.links) or any(
        lk.target == a.id and lk.type in types for lk in b.links
    )


_SUPERSESSION = {
    LinkType.SUPERSEDES,
    LinkType.SUPERSEDED_BY,
    LinkType.EVOLVES_FROM,
    LinkType.EVOLVES_TO,
}
_COEXIST = {LinkType.COEXISTS, LinkType.SCOPED_EXCEPTION}

BANK_STEPS: tuple[str, ...] = (
    "not_stored",
    "not_candidate",
    "not_flagged",
    "not_judged",
    "judged_otherwise",
    "not_applied",
    "overridden",
)
"""Where a unit with a wrong bank role was lost on the write path (:func:`unit_bank_step`).

``not_stored`` (a cue record is missing: stored as a duplicate), ``not_candidate``
(the earlier record was not in the new record's candidate pool P_j),
``not_flagged`` (in P_j, the gate passed it over), ``not_judged`` (flagged but
not audited: the no-judge ablation), ``judged_otherwise`` (the judge chose
another action), ``not_applied`` (a right verdict the commit dropped) and
``overridden`` (linked as it should be, but a later write changed a status).
"""

_STEP_RANK: dict[str, int] = {
    "not_stored": 0,
    "not_candidate": 1,
    "not_flagged": 2,
    "not_judged": 3,
    "judged_otherwise": 3,
    "not_applied": 4,
    "linked": 5,
}
_CHANGE_ACTIONS = frozenset({"supersede", "transition"})
_COEXIST_ACTIONS = frozenset({"coexist", "scoped_exception"})


def _pair_step(
    src: MemoryRecord | None,
    dst: MemoryRecord | None,
    actions: frozenset[str],
    audits: dict[str, WriteAudit],
) -> LinkStep | str:
    if src is None or dst is None or dst.id not in audits:
        return "not_stored"
    return audits[dst.id].step(src.id, actions)


def unit_bank_step(
    update_type: str,
    old: MemoryRecord | None,
    new: MemoryRecord | None,
    transition: MemoryRecord | None,
    audits: dict[str, WriteAudit],
) -> str:
    """The write-path step at which a unit with a wrong bank role was lost.

    Scoring phase only (it reads the gold unit). The expected links are old -> new
    (scope: a coexistence; the other types: a supersession), or, for a unit with a
    transition record, old -> transition -> new; the path that got further counts,
    a chain by its weakest link. Each link is looked up in the :class:`WriteAudit`
    of its later record's write.

    Returns:
        One of :data:`BANK_STEPS`.
    """
    if update_type == "scope":
        actions, paths = _COEXIST_ACTIONS, [[(old, new)]]
    else:
        actions, paths = _CHANGE_ACTIONS, [[(old, new)]]
        if transition is not None:
            paths.append([(old, transition), (transition, new)])
    best = "not_stored"
    for path in paths:
        weakest = min(
            (_pair_step(s, d, actions, audits) for s, d in path), key=_STEP_RANK.__getitem__
        )
        if _STEP_RANK[weakest] > _STEP_RANK[best]:
            best = weakest
    return "overridden" if best == "linked" else best


def _role_ok(
    update_type: str, old: MemoryRecord, new: MemoryRecord, transition: MemoryRecord | None
) -> bool:
    if update_type == "scope":
        return (
            old.status is RecordStatus.ACTIVE
            and new.status is RecordStatus.ACTIVE
            and _linked(old, new, _COEXIST)
        )
    if old.status is not RecordStatus.SUPERSEDED or new.status is not RecordStatus.ACTIVE:
        return False
    if _linked(old, new, _SUPERSESSION):
        return True
    # linked through the unit's own transition record (old -> transition -> new)
    return (
        transition is not None
        and _linked(old, transition, _SUPERSESSION)
        and _linked(transition, new, _SUPERSESSION)
    )


def _put(acc: dict[str, list[float]], key: str, update_type: UpdateType, value: float) -> None:
    """Record one unit's or probe's value, overall and under its gold update type."""
    acc[key].append(value)
    acc[f"{key}|{update_type.value}"].append(value)


def _score_profile(
    profile: LtpProfile,
    banks: dict[str, StateBank],
    answers: dict[str, dict[str, dict[str, Any]]],
    methods: Sequence[str],
    audits: dict[str, dict[str, WriteAudit]] | None = None,
    details: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, list[float]]]:
    """Phase 3: read gold and score. Returns method -> metric -> list of values.

    ``audits`` (bank variant -> record id -> :class:`WriteAudit`) adds the bank-step
    count of every unit with a wrong role (``_step_<step>``); ``details`` collects
    one dict per unit and per probe (:func:`run_ltp_bench`'s ``details``).
    """
    ns = _ns(profile)
    kinds = {ev.event_id: ev.kind.value for ev in profile.events}
    units = {u.unit_id: u for u in profile.units}
    out: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in methods}
    for m in methods:
        bank = banks[_BANK_OF[m]]
        by_event = {r.provenance.source_event_id: r for r in bank.records(ns)}
        dialog = [r for e, r in by_event.items() if kinds.get(e or "") == "dialog"]
        out[m]["_dialog_superseded"].append(
            sum(r.status is RecordStatus.SUPERSEDED for r in dialog)
        )
        out[m]["_dialog_total"].append(len(dialog))
        role_ok: dict[str, bool] = {}
        for u in profile.units:
            old, new = by_event.get(u.old_event_id), by_event.get(u.new_event_id)
            tr = by_event.get(u.transition_event_id) if u.transition_event_id else None
            coexist = old is not None and new is not None
            out[m]["bank_coexist"].append(float(coexist))
            ok = (
                old is not None
                and new is not None
                and m != "host"
                and _role_ok(u.update_type.value, old, new, tr)
            )
            role_ok[u.unit_id] = ok
            _put(out[m], "bank_role", u.update_type, float(ok))
            step = None
            if not ok and m != "host" and audits is not None:
                step = unit_bank_step(u.update_type.value, old, new, tr, audits[_BANK_OF[m]])
                out[m][f"_step_{step}"].append(1.0)
            if details is not None:
                details.append(
                    {
                        "record": "unit",
                        "method": m,
                        "profile": profile.profile_id,
                        "unit_id": u.unit_id,
                        "update_type": u.update_type.value,
                        "role_ok": ok,
                        "bank_step": step,
                        "status": {
                            "old": _status(old),
                            "new": _status(new),
                            "transition": _status(tr) if u.transition_event_id else None,
                        },
                    }
                )
        for probe in profile.probes:
            unit = units[probe.unit_id]
            res = answers[m][probe.probe_id]
            tgt_ev = unit.old_event_id if probe.view.value == "historical" else unit.new_event_id
            alt_ev = unit.new_event_id if probe.view.value == "historical" else unit.old_event_id
            target, alternate = by_event.get(tgt_ev), by_event.get(alt_ev)
            unit_events = {unit.old_event_id, unit.new_event_id, unit.transition_event_id}
            rows: list[EvidenceRow] = res["rows"]
            ids = [r.record.id for r in rows]
            in_packet = target is not None and target.id in ids
            _put(out[m], "evidence_support", unit.update_type, float(in_packet))
            unit_rows = [r for r in rows if r.record.provenance.source_event_id in unit_events]
            fit = bool(unit_rows) and target is not None and unit_rows[0].record.id == target.id
            _put(out[m], "state_fit_at_1", unit.update_type, float(fit))
            want = (
                EvidenceLabel.HISTORICAL
                if probe.view.value == "historical"
                else EvidenceLabel.CURRENT
            )
            if in_packet:
                assert target is not None
                label = res["labels"][ids.index(target.id)]
                _put(out[m], "label_accuracy", unit.update_type, float(label == want))
            correct = ltp_answer_correct(res["answer"], probe.target, probe.alternate)
            out[m]["_answer_failed"].append(float(res.get("status") == "failed"))
            _put(out[m], "qa_acc", unit.update_type, float(correct))
            out[m]["conflict_acc" if probe.view.value == "current" else "fact_acc"].append(
                float(correct)
            )
            if correct:
                level = "correct"
            elif m != "host" and not role_ok[unit.unit_id]:
                level = "bank"
            else:
                level = attribute_failure(
                    target_id=target.id if target else None,
                    pool_ids=[r.record.id for r in res["pool"]],
                    packet_ids=ids,
                    packet_labels=[lbl.value if lbl else None for lbl in res["labels"]],
                    answer_correct=False,
                    alternate_id=alternate.id if alternate else None,
                    expected_label=want.value if m != "host" else None,
                )
            out[m][f"fail_{level}"].append(1.0)
            if details is not None:
                pool_ids = [r.record.id for r in res["pool"]]
                details.append(
                    {
                        "record": "probe",
                        "method": m,
                        "profile": profile.profile_id,
                        "probe_id": probe.probe_id,
                        "unit_id": unit.unit_id,
                        "update_type": unit.update_type.value,
                        "view": probe.view.value,
                        "question": probe.question,
                        "target": probe.target,
                        "alternate": probe.alternate,
                        "answer": res["answer"],
                        "correct": correct,
                        "level": level,
                        "target_rank_pool": _rank(target, pool_ids),
                        "target_rank_packet": _rank(target, ids),
                        "packet": [
                            {
                                "event_id": r.record.provenance.source_event_id,
                                "unit_row": r.record.provenance.source_event_id in unit_events,
                                "label": lbl.value if lbl else None,
                                "status": r.record.status.value,
                                "text": r.record.content,
                            }
                            for r, lbl in zip(rows, res["labels"], strict=True)
                        ],
                    }
                )
    return out


def part_name(model: BaseChatModel | None) -> str:
    """``"offline"`` or ``"llm:<model name>"``: how a benchmark's config names a part.

    Example:
        >>> from langchain_atma.benchmarks.ltp_bench import part_name
        >>> part_name(None)
        'offline'
    """
    if model is None:
        return "offline"
    name = getattr(model, "model", None) or getattr(model, "model_name", None)
    return f"llm:{name or type(model).__name__}"


def _status(rec: MemoryRecord | None) -> str | None:
    return rec.status.value if rec is not None else None


def _rank(rec: MemoryRecord | None, ids: list[str]) -> int | None:
    """1-based position of ``rec`` in ``ids`` (None when absent)."""
    return ids.index(rec.id) + 1 if rec is not None and rec.id in ids else None


# ----------------------------------------------------------------------------- driver


def _answers(
    profile: LtpProfile,
    bank: StateBank,
    method: str,
    *,
    k: int,
    seed_k: int,
    controller: Any,
    answer_model: BaseChatModel | None,
) -> dict[str, dict[str, Any]]:
    """One method's answer to every probe of a replayed profile, by probe id."""
    from langchain_atma.retrieval.read_graph import create_read_graph

    ns = _ns(profile)
    answerer = (
        LLMAnswerer(answer_model, use_labels=_READ.get(method, {}).get("use_labels", False))
        if answer_model is not None
        else None
    )
    if method == "host":
        return {p.probe_id: _host_answer(bank, ns, p.question, k, answerer) for p in profile.probes}
    graph = create_read_graph(
        bank,
        namespace=ns,
        k=k,
        seed_k=seed_k,
        controller=controller,
        answerer=answerer,
        **_READ[method],
    )
    return {p.probe_id: _atma_answer(graph, ns, p.question) for p in profile.probes}


def run_ltp_bench(
    ltp: LtpFile,
    *,
    k: int = DEFAULT_K,
    seed_k: int = DEFAULT_SEED_K,
    methods: Sequence[str] = METHODS,
    profiles: Sequence[str] | int | None = None,
    embeddings: Embeddings | None = None,
    progress: bool = True,
    details: list[dict[str, Any]] | None = None,
    judge_model: BaseChatModel | None = None,
    controller_model: BaseChatModel | None = None,
    answer_model: BaseChatModel | None = None,
) -> dict[str, Any]:
    """Run the benchmark; returns ``{"methods": {name: {metric: value}}, "config": {...}}``.

    Every method but ``host`` also gets ``bank_steps``: for the units whose bank
    role is wrong, how many were lost at each write-path step
    (:data:`BANK_STEPS`, from each write's :class:`WriteAudit`).

    Args:
        ltp: the loaded LTP-format file.
        k: evidence packet size.
        seed_k: host seed hits per question.
        methods: methods to run (:data:`METHODS`).
        profiles: profile ids, a count of leading profiles, or None for all.
        embeddings: the encoder (default: the shipped MiniLM).
        progress: show a progress bar.
        details: if given, one dict per (method, unit) and per (method, probe) is
            appended after scoring: bank role and step per unit; question, answer,
            failure level, the target's rank in the pool and the packet, and the
            packet rows (event id, label, status, text) per probe.
        judge_model: a chat model the learned judge escalates its unsure pairs to
            (:class:`~langchain_atma.bank.judge.EscalatingJudge`); None = the
            learned judge alone.
        controller_model: a chat model for the controller of the methods that use
            one (:class:`~langchain_atma.retrieval.controller.LLMController`).
        answer_model: a chat model for EVERY method's answerer, ``host``
            included (:class:`~langchain_atma.qa.answerer.LLMAnswerer`; without
            labels for ``host`` and ``atma-no-labels``).

    The config records which parts ran on a model (``"llm:<model name>"``) and,
    with a judge model, its call statistics (calls, retries, timeouts, fallbacks);
    each method's row counts its failed answers (``answers_failed``).

    Raises:
        ConfigError: an unknown method, k < 1, or unknown profiles.
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ConfigError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    if k < 1:
        raise ConfigError("k must be >= 1")
    selected = select_profiles(ltp, profiles)
    if embeddings is None:
        from langchain_atma.embeddings import default_embeddings

        embeddings = default_embeddings()
    memo = MemoEmbeddings(embeddings)
    # without a judge model the escalation is a dry run: the learned verdicts, and a
    # count of the pairs a model would have been asked about
    judge = EscalatingJudge(
        default_judge(), None if judge_model is None else LLMJudge(judge_model, fallback=None)
    )
    controller = LLMController(controller_model) if controller_model is not None else None
    variants = sorted({_BANK_OF[m] for m in methods})
    agg: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in methods}
    ingest_stats: dict[str, dict[str, float]] = {v: defaultdict(float) for v in variants}
    per_profile: dict[str, dict[str, float]] = {m: {} for m in methods}
    started = time.perf_counter()
    bar = _progress(selected, progress)
    for profile in bar:
        banks: dict[str, StateBank] = {}
        audits: dict[str, dict[str, WriteAudit]] = {}
        for v in variants:
            if progress and hasattr(bar, "set_postfix_str"):
                bar.set_postfix_str(f"{profile.profile_id}: replay {v}")
            audit: list[WriteAudit] = []
            banks[v], rep = _replay(
                profile, memo, v, audit, judge if _INGEST_OPTS[v]["use_judge"] else None
            )
            audits[v] = {a.record_id: a for a in audit if a.record_id and not a.idempotent}
            st = ingest_stats[v]
            st["writes"] += rep.writes + rep.duplicates
            st["judge_calls"] += rep.judge_calls
            st["flagged_pairs"] += rep.flagged_pairs
            st["candidate_pairs"] += rep.candidate_pairs
            st["seconds"] += rep.seconds.get("total", 0.0)
        answers = {}
        for m in methods:
            if progress and hasattr(bar, "set_postfix_str"):
                bar.set_postfix_str(f"{profile.profile_id}: answer {m}")
            answers[m] = _answers(
                profile,
                banks[_BANK_OF[m]],
                m,
                k=k,
                seed_k=seed_k,
                controller=controller,
                answer_model=answer_model,
            )
        scored = _score_profile(profile, banks, answers, methods, audits, details)
        for m in methods:
            for key, vals in scored[m].items():
                agg[m][key].extend(vals)
            per_profile[m][profile.profile_id] = _mean(scored[m]["qa_acc"])
    results: dict[str, dict[str, Any]] = {}
    for m in methods:
        a = agg[m]
        st = ingest_stats[_BANK_OF[m]]
        row: dict[str, Any] = {
            key: _mean(a[key])
            for key in (
                "bank_coexist",
                "bank_role",
                "evidence_support",
                "state_fit_at_1",
                "label_accuracy",
                "qa_acc",
                "conflict_acc",
                "fact_acc",
            )
        }
        row["spurious_supersession_rate"] = sum(a["_dialog_superseded"]) / max(
            1.0, sum(a["_dialog_total"])
        )
        row["judge_calls_per_write"] = (
            0.0
            if m == "host" or _BANK_OF[m] == "no-judge"
            else st["judge_calls"] / max(1.0, st["writes"])
        )
        row["flagged_pairs_per_write"] = st["flagged_pairs"] / max(1.0, st["writes"])
        row["probes"] = len(a["qa_acc"])
        row["units"] = len(a["bank_role"])
        for level in ("correct", "bank", "candidates", "ranking", "qa"):
            row[f"fail_{level}"] = int(sum(a[f"fail_{level}"]))
        if m != "host":
            row["bank_steps"] = {step: int(sum(a[f"_step_{step}"])) for step in BANK_STEPS}
        row["answers_failed"] = int(sum(a["_answer_failed"]))
        row["ingest_seconds"] = st["seconds"]
        row["by_update_type"] = _by_update_type(a)
        row["qa_acc_per_profile"] = per_profile[m]
        results[m] = row
    return {
        "methods": results,
        "views": view_accuracy(selected),
        "config": {
            "file": getattr(ltp, "name", "ltp"),
            "k": k,
            "seed_k": seed_k,
            "methods": list(methods),
            "profiles": [p.profile_id for p in selected],
            "encoder": getattr(embeddings, "name", type(embeddings).__name__),
            "judge": part_name(judge_model),
            "controller": part_name(controller_model),
            "answerer": part_name(answer_model),
            "judge_stats": judge_stats(judge),
            "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_version()}",
            "seconds": round(time.perf_counter() - started, 1),
        },
    }


def view_accuracy(profiles: Sequence[LtpProfile]) -> dict[str, Any]:
    """The query profiler's view against each probe's view (scoring phase).

    Returns:
        ``{"probes", "accuracy", "by_view": {view: {"probes", "accuracy",
        "predicted": {view: count}}}}``.
    """
    by: dict[str, list[str]] = defaultdict(list)
    for profile in profiles:
        for probe in profile.probes:
            by[probe.view.value].append(profile_query(probe.question).view.value)
    n = sum(len(v) for v in by.values())
    right = sum(p == view for view, got in by.items() for p in got)
    return {
        "probes": n,
        "accuracy": round(right / max(n, 1), 4),
        "by_view": {
            view: {
                "probes": len(got),
                "accuracy": round(sum(p == view for p in got) / len(got), 4),
                "predicted": dict(sorted(Counter(got).items())),
            }
            for view, got in sorted(by.items())
        },
    }


TYPED_METRICS = ("bank_role", "evidence_support", "state_fit_at_1", "label_accuracy", "qa_acc")
"""The metrics broken down by the units' gold update type (``by_update_type``)."""


def _by_update_type(a: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per gold update type: the means of :data:`TYPED_METRICS`, with unit/probe counts.

    Read from the scoring phase only (after replay and answering), like every metric.
    A type absent from the file is absent here; ``label_accuracy`` is over the probes
    whose target record is in the packet, as in the overall row.
    """
    out: dict[str, dict[str, float]] = {}
    for t in UpdateType:
        units = a.get(f"bank_role|{t.value}")
        if not units:
            continue
        row = {key: _mean(a.get(f"{key}|{t.value}", [])) for key in TYPED_METRICS}
        row["units"] = len(units)
        row["probes"] = len(a.get(f"qa_acc|{t.value}", []))
        out[t.value] = row
    return out


def _progress(items: list[LtpProfile], enabled: bool) -> Any:
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc="profiles", unit="profile")


def _mean(vals: Sequence[float]) -> float:
    return float(sum(vals) / len(vals)) if vals else 0.0


def markdown_table(results: dict[str, Any]) -> str:
    """The results as a markdown table (one row per method)."""
    cols = [
        "bank_coexist",
        "bank_role",
        "evidence_support",
        "state_fit_at_1",
        "label_accuracy",
        "qa_acc",
        "conflict_acc",
        "fact_acc",
        "spurious_supersession_rate",
        "judge_calls_per_write",
    ]
    head = "| method | " + " | ".join(cols) + " |"
    sep = "|---|" + "---:|" * len(cols)
    lines = [head, sep]
    for name, row in results["methods"].items():
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |")
    views = results.get("views")
    if views:
        lines.append(
            f"\nquery view picked right for {views['accuracy']:.3f} of "
            f"{views['probes']} probes ("
            + ", ".join(f"{v} {r['accuracy']:.3f}" for v, r in views["by_view"].items())
            + ")"
        )
    return "\n".join(lines)


def markdown_type_table(results: dict[str, Any], method: str = "atma") -> str:
    """One method's metrics by gold update type, as a markdown table.

    Where the overall figures hide which kind of change fails (a temporal move, an
    ending, a new number, an added value).
    ``""`` when the method is absent from the results.
    """
    row = results["methods"].get(method)
    if not row or not row.get("by_update_type"):
        return ""
    cols = list(TYPED_METRICS)
    lines = [
        f"| {method}: update type | units | probes | " + " | ".join(cols) + " |",
        "|---|---:|---:|" + "---:|" * len(cols),
    ]
    for t, vals in row["by_update_type"].items():
        lines.append(
            f"| {t} | {int(vals['units'])} | {int(vals['probes'])} | "
            + " | ".join(f"{vals[c]:.3f}" for c in cols)
            + " |"
        )
    return "\n".join(lines)


def markdown_bank_steps(results: dict[str, Any]) -> str:
    """Per method, where the units with a wrong bank role were lost (markdown).

    ``""`` when no method has ``bank_steps`` (only ``host`` ran).
    """
    rows = [
        (name, row["bank_steps"])
        for name, row in results["methods"].items()
        if row.get("bank_steps") is not None
    ]
    if not rows:
        return ""
    lines = [
        "| method: missed units by write step | units | " + " | ".join(BANK_STEPS) + " |",
        "|---|---:|" + "---:|" * len(BANK_STEPS),
    ]
    for name, steps in rows:
        units = int(results["methods"][name].get("units", 0))
        lines.append(
            f"| {name} | {units} | " + " | ".join(str(steps.get(st, 0)) for st in BANK_STEPS) + " |"
        )
    return "\n".join(lines)


def write_jsonl(path: Path, items: Sequence[dict[str, Any]]) -> int:
    """Write one JSON line per item (UTF-8, non-ASCII kept); returns the line count.

    Example:
        >>> import tempfile, pathlib
        >>> from langchain_atma.benchmarks.ltp_bench import write_jsonl
        >>> with tempfile.TemporaryDirectory() as d:
        ...     write_jsonl(pathlib.Path(d) / "x.jsonl", [{"a": 1}, {"b": "é"}])
        2
    """
    with path.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    return len(items)


def bench_models(args: argparse.Namespace) -> dict[str, BaseChatModel | None]:
    """The chat models a benchmark command was given (``--judge-model`` etc.).

    Only the parts named on the command line use a model: model names from the
    environment or a config file are ignored, so a benchmark never changes
    silently. The server URL comes from ``--ollama-base-url``, else
    ``ATMA_OLLAMA_BASE_URL`` or the config file.

    Raises:
        ConfigError: a model is named but no Ollama server URL is set.
    """
    from langchain_atma.config import AtmaConfig

    names = {
        part: getattr(args, f"{part}_model", None) for part in ("judge", "controller", "answer")
    }
    if not any(names.values()):
        return dict.fromkeys(names)
    cfg = AtmaConfig.resolve(
        {
            "ollama_base_url": getattr(args, "ollama_base_url", None),
            **{f"{part}_model": n for part, n in names.items()},
        },
        config_file=getattr(args, "config", None),
    )
    if not cfg.ollama_base_url:
        named = ", ".join(f"--{part}-model" for part, n in names.items() if n)
        raise ConfigError(
            f"{named} needs an Ollama server: pass --ollama-base-url URL or set "
            "ATMA_OLLAMA_BASE_URL"
        )
    return {
        part: cfg.ollama_model(part) if n else None  # type: ignore[arg-type]
        for part, n in names.items()
    }


def _parse_profiles(text: str | None) -> Sequence[str] | int | None:
    if not text:
        return None
    return int(text) if text.isdigit() else [p.strip() for p in text.split(",") if p.strip()]


def main(args: argparse.Namespace) -> int:
    """CLI entry: ``atma bench ltp FILE --out RESULTS.json``."""
    path = Path(args.file)
    ltp = load_ltp(path)
    methods = (
        [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else list(METHODS)
    )
    details: list[dict[str, Any]] | None = [] if getattr(args, "details", None) else None
    models = bench_models(args)
    res = run_ltp_bench(
        ltp,
        k=args.k,
        methods=methods,
        profiles=_parse_profiles(args.profiles),
        progress=True,
        details=details,
        judge_model=models["judge"],
        controller_model=models["controller"],
        answer_model=models["answer"],
    )
    res["config"]["file"] = str(path)
    res["config"]["file_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    print(markdown_table(res))
    for m in methods:
        if m != "host":
            print("\n" + markdown_type_table(res, m))
    steps = markdown_bank_steps(res)
    if steps:
        print("\n" + steps)
    print(f"\nwrote {args.out}")
    if details is not None:
        print(f"wrote {args.details} ({write_jsonl(Path(args.details), details)} lines)")
    if getattr(args, "plot", None):
        from langchain_atma.benchmarks.plots import plot_ltp

        plot_ltp(res, Path(args.plot))
        print(f"wrote {args.plot}")
    return 0
