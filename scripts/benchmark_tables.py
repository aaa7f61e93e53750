#!/usr/bin/env python
"""Markdown tables of docs/BENCHMARKS.md from the results folder of scripts/benchmarks.sh.

    python scripts/benchmark_tables.py OUT_DIR > /tmp/tables.md

Reads the JSON results (never the benchmark files themselves) and prints one block
per benchmark, in the order of the doc. Standard library only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FILES = (
    ("ltp", "LTP reconstruction"),
    ("heldout_dev", "held-out dev"),
    ("heldout_test", "held-out test"),
    ("heldout_final", "held-out final"),
    ("heldout_fresh", "held-out fresh"),
    ("heldout_fifth", "held-out fifth"),
)


def _load(out: Path, name: str) -> dict[str, Any] | None:
    path = out / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def judge_table(out: Path) -> list[str]:
    """Units right, per update type, and false links, per file."""
    rows = [
        "| file | units right | temporal | negation | value | scope | false links: hard "
        "negatives | false links: cross-unit | false links: dialog pairs | ms per pair | "
        "unsure (escalated / pairs) |",
        "| --- |" + " ---: |" * 10,
    ]
    for name, label in FILES:
        res = _load(out, f"judge_{name}")
        if res is None:
            continue
        u = res["units"]
        by = u["by_update_type"]
        cells = [
            f"{by[t]['accuracy']:.3f}" if t in by else "–"
            for t in ("temporal", "negation", "value", "scope")
        ]
        st = res["config"].get("judge_stats") or {}
        esc = f"{st['escalated']} / {st['pairs']} ({st['escalation_rate']:.3f})" if st else "–"
        rows.append(
            f"| {label} | **{u['accuracy']:.3f}** ({u['correct']}/{u['units']}) | "
            + " | ".join(cells)
            + f" | {res['hard_negatives']['false_link_rate']:.3f} | "
            f"{res['cross_unit']['false_link_rate']:.3f} | "
            f"{res['dialog_pairs']['false_link_rate']:.3f} | "
            f"{res['judge_ms_per_pair']:.2f} | {esc} |"
        )
    return rows


def gate_table(out: Path) -> list[str]:
    """Recall at each budget, plain against centred, per file."""
    rows: list[str] = []
    for name, label in FILES:
        res = _load(out, f"gate_{name}")
        if res is None:
            continue
        pts = res["operating_points"]
        ms = sorted({p["max_judged"] for p in pts})
        if not rows:
            rows = [
                "| file | centre weight | " + " | ".join(f"@{m}" for m in ms) + " |",
                "| --- | ---: |" + " ---: |" * len(ms),
            ]
        for g in sorted({p["centre_weight"] for p in pts} & {0.0, 1.0}):  # plain, default
            by = {p["max_judged"]: p for p in pts if p["centre_weight"] == g}
            rows.append(
                f"| {label} | {g:g} | " + " | ".join(f"{by[m]['recall']:.3f}" for m in ms) + " |"
            )
    return rows


_LTP_COLS = (
    "bank_role",
    "evidence_support",
    "label_accuracy",
    "qa_acc",
    "conflict_acc",
    "spurious_supersession_rate",
    "judge_calls_per_write",
)


def ltp_tables(out: Path) -> list[str]:
    """One table per file (methods as rows) and the view accuracy."""
    lines: list[str] = []
    for name, label in FILES:
        res = _load(out, f"ltp_{name}")
        if res is None:
            continue
        cfg = res["config"]
        lines += [
            f"**{label}** ({len(cfg['profiles'])} profiles, "
            f"{res['methods']['atma']['units']} units, "
            f"{res['methods']['atma']['probes']} probes, {cfg['seconds'] / 60:.0f} min):",
            "",
            "| method | " + " | ".join(_LTP_COLS) + " |",
            "| --- |" + " ---: |" * len(_LTP_COLS),
        ]
        for m, row in res["methods"].items():
            lines.append(f"| {m} | " + " | ".join(f"{row[c]:.3f}" for c in _LTP_COLS) + " |")
        steps = res["methods"]["atma"].get("bank_steps", {})
        lines += [
            "",
            "atma, units with a wrong bank role by write step: "
            + ", ".join(f"{k} {v}" for k, v in steps.items() if v),
            "",
        ]
        v = res.get("views")
        if v:
            lines += [
                f"query view right for {v['accuracy']:.3f} of {v['probes']} probes ("
                + ", ".join(f"{k} {r['accuracy']:.3f}" for k, r in v["by_view"].items())
                + ")",
                "",
            ]
    return lines


def locomo_table(out: Path) -> list[str]:
    """F1, BLEU-1 and evidence recall per method, F1 per question category."""
    res = _load(out, "locomo")
    if res is None:
        return []
    cfg = res["config"]
    k = cfg["k"]
    cats = list(next(iter(res["methods"].values()))["f1_by_category"])
    rows = [
        f"{len(cfg['samples'])} conversations, "
        f"{next(iter(res['methods'].values()))['questions']} questions, k = {k}, "
        f"{cfg['seconds'] / 60:.0f} min:",
        "",
        "| method | F1 | BLEU-1 | evidence recall | " + " | ".join(f"F1 {c}" for c in cats) + " |",
        "| --- |" + " ---: |" * (3 + len(cats)),
    ]
    for m, row in res["methods"].items():
        rows.append(
            f"| {m} | {row['f1']:.4f} | {row['bleu1']:.4f} | "
            f"{row[f'evidence_recall_at_{k}']:.4f} | "
            + " | ".join(f"{row['f1_by_category'][c]:.4f}" for c in cats)
            + " |"
        )
    return rows


_PERF_KEYS = (
    ("ingest_turns_per_s", "ingest, turns per second (end to end, learned judge)"),
    ("ingest_turns_per_s_no_judge", "ingest, turns per second, judge time taken out"),
    ("host_calls_per_write", "host calls per ingested turn"),
    ("judge_calls_per_write", "judge calls per write"),
    ("judge_ms_per_pair", "judge, ms per pair (median, one pair per run)"),
    ("judge_ms_per_write_p50", "judge, ms per write (p50)"),
    ("judge_share_of_ingest", "judge's share of the ingest time"),
    ("view_ms_per_question", "view head, ms per question (median)"),
    ("overhead_ms_p50", "overlay's own read cost, ms (p50, largest bank)"),
    ("overhead_ms_p95", "overlay's own read cost, ms (p95, largest bank)"),
    ("overhead_ms_p50_max", "overlay's own read cost, ms (p50, worst point of the curve)"),
    ("retrieve_ms_p95_100k", "retrieve, ms (p95, 100k records, one namespace)"),
    ("retrieve_ms_p95_100k_server", "the same on a Chroma server"),
    ("retrieve_ms_p95_1m", "retrieve, ms (p95, 1M records over 1,000 namespaces)"),
    ("rss_growth_mb_10k_queries", "RSS growth over 10,000 queries, MB"),
    ("cli_ask_cold_s", "`atma ask` in a fresh process, s (median of 3)"),
    ("ask_warm_ms_p50", "`ask` in a warm process, ms (p50, one encoder thread)"),
    ("peak_rss_mb", "peak RSS, MB"),
)


def perf_table(out: Path) -> list[str]:
    """The flat perf keys, then the cost curve (mode, namespaces, size)."""
    res = _load(out, "perf")
    if res is None:
        return []
    rows = ["| metric | key | value |", "| --- | --- | ---: |"]
    rows += [f"| {label} | `{key}` | {res[key]} |" for key, label in _PERF_KEYS if key in res]
    rows += [
        "",
        "| host | namespaces | records | seed p50 | seed p95 | overlay p50 | overlay p95 | "
        "retrieve p95 | RSS MB | disk B/record |",
        "| --- | ---: | ---: |" + " ---: |" * 7,
    ]
    for r in res["curve"]:
        disk = f"{r['disk_bytes_per_record']:,.0f}" if "disk_bytes_per_record" in r else "–"
        rows.append(
            f"| {r['mode']} | {r['namespaces']:,} | {r['size']:,} | {r['seed_ms_p50']:.1f} | "
            f"{r['seed_ms_p95']:.1f} | {r['overhead_ms_p50']:.2f} | {r['overhead_ms_p95']:.2f} | "
            f"{r['retrieve_ms_p95']:.1f} | {r['rss_mb']:.0f} | {disk} |"
        )
    return rows


def main() -> int:
    """Print every block."""
    out = Path(sys.argv[1])
    for title, rows in (
        ("judge", judge_table(out)),
        ("gate", gate_table(out)),
        ("ltp", ltp_tables(out)),
        ("locomo", locomo_table(out)),
        ("perf", perf_table(out)),
    ):
        print(f"<!-- {title} -->")
        print("\n".join(rows))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
