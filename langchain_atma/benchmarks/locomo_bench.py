"""``atma bench locomo``: LoCoMo QA for ``host`` and ``atma``.

For each sample the conversation turns are replayed in order into a fresh bank
(event id = ``sample:dia_id``; the QA items are not visible then), then every
question is answered with k = 5:

* ``host`` — plain vector top-k over the same records, offline answerer, no labels;
* ``atma`` — the full overlay with the offline defaults.

Scores (categories use the file's numbering: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial):

* F1 with LoCoMo's normalization (lowercase, punctuation and articles stripped,
  Porter stems); multi-hop splits both sides on commas and averages partial F1;
  category 3's gold is cut at the first ``;``; adversarial items score 1 when the
  answer says the information is not available;
* BLEU-1;
* evidence recall@k of the gold ``dia_id`` s among the packet's source events.

Example:
    >>> from langchain_atma.benchmarks.locomo_bench import CATEGORY_NAMES
    >>> CATEGORY_NAMES[2]
    'temporal'
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from langchain_atma.bank import StateBank
from langchain_atma.bank.judge import EscalatingJudge, LLMJudge, judge_stats
from langchain_atma.bank.learned_judge import default_judge
from langchain_atma.benchmarks.locomo import (
    LocomoSample,
    bleu1,
    conversation_events,
    evidence_recall,
    load_locomo,
    score_locomo_answer,
)
from langchain_atma.benchmarks.ltp_bench import (
    MemoEmbeddings,
    bench_models,
    part_name,
    write_jsonl,
)
from langchain_atma.errors import ConfigError
from langchain_atma.qa.answerer import LLMAnswerer, OfflineAnswerer
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.packets import DEFAULT_K, DEFAULT_SEED_K, Bucket, EvidenceRow
from langchain_atma.retrieval.profiler import profile_query

__all__ = ["CATEGORY_NAMES", "main", "run_locomo_bench"]

CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
LOCOMO_METHODS = ("host", "atma")


def _dia_ids(rows: Sequence[EvidenceRow], sample_id: str) -> list[str]:
    prefix = f"{sample_id}:"
    out = []
    for r in rows:
        ev = r.record.provenance.source_event_id or ""
        out.append(ev[len(prefix) :] if ev.startswith(prefix) else ev)
    return out


def run_locomo_bench(
    samples: Sequence[LocomoSample],
    *,
    k: int = DEFAULT_K,
    seed_k: int = DEFAULT_SEED_K,
    methods: Sequence[str] = LOCOMO_METHODS,
    progress: bool = True,
    judge_model: BaseChatModel | None = None,
    controller_model: BaseChatModel | None = None,
    answer_model: BaseChatModel | None = None,
    details: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run LoCoMo QA; returns ``{"methods": {...}, "config": {...}}``.

    Args:
        samples: the LoCoMo samples (conversations with their QA).
        k: evidence packet size.
        seed_k: host seed hits per question.
        methods: ``host`` and/or ``atma``.
        progress: show a progress bar.
        judge_model: a chat model the learned judge escalates its unsure pairs to
            (:class:`EscalatingJudge`); None = the learned judge alone.
        controller_model: a chat model for ``atma``'s controller.
        answer_model: a chat model for both methods' answers (:class:`LLMAnswerer`;
            ``host`` without labels). The paper's LoCoMo figures are LLM-answered.
        details: if given, one dict per (method, question) is appended: sample,
            category, question, gold, answer, answer status, F1, BLEU-1, evidence
            recall and the packet rows (dia_id, label, text).

    Raises:
        ConfigError: an unknown method.
    """
    from tqdm.auto import tqdm

    from langchain_atma.bank.write_graph import ingest_events
    from langchain_atma.embeddings import default_embeddings
    from langchain_atma.retrieval.read_graph import create_read_graph

    bad = [m for m in methods if m not in LOCOMO_METHODS]
    if bad:
        raise ConfigError(f"unknown method(s) {bad}; choose from {LOCOMO_METHODS}")
    memo = MemoEmbeddings(default_embeddings())
    # without a judge model the escalation is a dry run: the learned verdicts, and a
    # count of the pairs a model would have been asked about
    judge = EscalatingJudge(
        default_judge(), None if judge_model is None else LLMJudge(judge_model, fallback=None)
    )
    controller = LLMController(controller_model) if controller_model is not None else None
    failed: dict[str, int] = dict.fromkeys(methods, 0)
    scores: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in methods}
    started = time.perf_counter()
    for sample in tqdm(samples, desc="samples", disable=not progress):
        ns = "locomo-" + "".join(c if c.isalnum() else "-" for c in sample.sample_id)
        events = [
            {k2: v for k2, v in ev.items() if k2 != "dia_id"} for ev in conversation_events(sample)
        ]
        banks: dict[str, StateBank] = {}
        for m in methods:
            bank = StateBank.in_memory(embeddings=memo)
            ingest_events(
                bank,
                events,
                namespace=ns,
                use_judge=(m != "host"),
                judge=judge if m != "host" else None,
            )
            banks[m] = bank
        graph = (
            create_read_graph(
                banks["atma"],
                namespace=ns,
                k=k,
                seed_k=seed_k,
                controller=controller,
                answerer=LLMAnswerer(answer_model) if answer_model is not None else None,
            )
            if "atma" in banks
            else None
        )
        plain: Any = (
            LLMAnswerer(answer_model, use_labels=False)
            if answer_model is not None
            else OfflineAnswerer(use_labels=False)
        )
        for qa in sample.qa:
            gold = qa.answer if qa.category != 5 else (qa.answer or qa.adversarial_answer)
            for m in methods:
                if m == "host":
                    hits = banks[m].search(ns, qa.question, k=k)
                    rows = [
                        EvidenceRow(record=h.record, bucket=Bucket.SEED, score=h.score, prerank=i)
                        for i, h in enumerate(hits)
                    ]
                    ans = plain.answer(qa.question, profile_query(qa.question), rows)
                else:
                    assert graph is not None
                    out = graph.invoke({"question": qa.question, "namespace": ns})
                    rows, ans = out["packet"].rows, out["answer"]
                pred = ans.answer
                failed[m] += ans.status == "failed"
                cat = CATEGORY_NAMES.get(qa.category, str(qa.category))
                f1 = score_locomo_answer(pred, gold, qa.category)
                b1 = (
                    score_locomo_answer(pred, gold, 5)
                    if qa.category == 5
                    else bleu1(pred, gold or "")
                )
                scores[m]["f1"].append(f1)
                scores[m][f"f1:{cat}"].append(f1)
                scores[m]["bleu1"].append(b1)
                scores[m][f"bleu1:{cat}"].append(b1)
                dia = _dia_ids(rows, sample.sample_id)
                rec = evidence_recall(dia, list(qa.evidence))
                if rec is not None:
                    scores[m]["evidence_recall"].append(rec)
                    scores[m][f"evidence_recall:{cat}"].append(rec)
                if details is not None:
                    details.append(
                        {
                            "method": m,
                            "sample": sample.sample_id,
                            "category": cat,
                            "question": qa.question,
                            "gold": gold,
                            "evidence": list(qa.evidence),
                            "answer": pred,
                            "status": ans.status,
                            "f1": f1,
                            "bleu1": b1,
                            "evidence_recall": rec,
                            "packet": [
                                {
                                    "dia_id": d,
                                    "label": r.label.value if r.label else None,
                                    "text": r.record.content,
                                }
                                for d, r in zip(dia, rows, strict=True)
                            ],
                        }
                    )
    results: dict[str, Any] = {}
    for m in methods:
        s = scores[m]
        cats = [CATEGORY_NAMES[c] for c in sorted(CATEGORY_NAMES)]
        results[m] = {
            "f1": _mean(s["f1"]),
            "bleu1": _mean(s["bleu1"]),
            f"evidence_recall_at_{k}": _mean(s["evidence_recall"]),
            "f1_by_category": {c: _mean(s[f"f1:{c}"]) for c in cats},
            "bleu1_by_category": {c: _mean(s[f"bleu1:{c}"]) for c in cats},
            "evidence_recall_by_category": {c: _mean(s[f"evidence_recall:{c}"]) for c in cats},
            "questions": len(s["f1"]),
            "answers_failed": failed[m],
        }
    return {
        "methods": results,
        "config": {
            "samples": [s.sample_id for s in samples],
            "k": k,
            "seed_k": seed_k,
            "answerer": part_name(answer_model),
            "judge": part_name(judge_model),
            "controller": part_name(controller_model),
            "judge_stats": judge_stats(judge),
            "machine": f"{platform.machine()} {os.cpu_count()} cores",
            "seconds": round(time.perf_counter() - started, 1),
        },
    }


def _mean(vals: Sequence[float]) -> float:
    return float(sum(vals) / len(vals)) if vals else 0.0


def main(args: argparse.Namespace) -> int:
    """CLI entry: ``atma bench locomo PATH --out RESULTS.json``."""
    samples = load_locomo(args.path)
    if args.samples:
        if args.samples.isdigit():
            samples = samples[: int(args.samples)]
        else:
            wanted = [s.strip() for s in args.samples.split(",") if s.strip()]
            known = {s.sample_id for s in samples}
            missing = [w for w in wanted if w not in known]
            if missing:
                raise ConfigError(f"sample(s) not in the file: {missing}")
            samples = [s for s in samples if s.sample_id in wanted]
    models = bench_models(args)
    details: list[dict[str, Any]] | None = [] if getattr(args, "details", None) else None
    res = run_locomo_bench(
        samples,
        k=args.k,
        judge_model=models["judge"],
        controller_model=models["controller"],
        answer_model=models["answer"],
        details=details,
    )
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    cats = list(CATEGORY_NAMES.values())
    print("| method | F1 | BLEU-1 | ev. recall | " + " | ".join(f"F1 {c}" for c in cats) + " |")
    print("|---|" + "---:|" * (3 + len(cats)))
    for m, row in res["methods"].items():
        rec = row[f"evidence_recall_at_{args.k}"]
        print(
            f"| {m} | {row['f1']:.4f} | {row['bleu1']:.4f} | {rec:.4f} | "
            + " | ".join(f"{row['f1_by_category'][c]:.4f}" for c in cats)
            + " |"
        )
    print(f"\nwrote {args.out}")
    if details is not None:
        print(f"wrote {args.details} ({write_jsonl(Path(args.details), details)} lines)")
    if getattr(args, "plot", None):
        from langchain_atma.benchmarks.plots import plot_locomo

        plot_locomo(res, Path(args.plot))
        print(f"wrote {args.plot}")
    return 0
