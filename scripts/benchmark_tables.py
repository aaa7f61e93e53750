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

FILES = (("ltp", "LTP reconstruction"), ("heldout_dev", "held-out dev"),
         ("heldout_test", "held-out test"), ("heldout_final", "held-out final"))


def _load(out: Path, name: str) -> dict[str, Any] | None:
    path = out / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def judge_table(out: Path) -> list[str]:
    """Units right, per update type, and false links, per file."""
    rows = ["| file | units right | temporal | negation | value | scope | false links: hard "
            "negatives | false links: dialog pairs | ms per pair | unsure (escalated / pairs) |",
            "| --- |" + " ---: |" * 9]
    for name, label in FILES:
        res = _load(out, f"judge_{name}")
        if res is None:
            continue
        u = res["units"]
        by = u["by_update_type"]
        cells = [f"{by[t]['accuracy']:.3f}" if t in by else "–"
                 for t in ("temporal", "negation", "value", "scope")]
        st = res["config"].get("judge_stats") or {}
        esc = (f"{st['escalated']} / {st['pairs']} ({st['escalation_rate']:.3f})"
               if st else "–")
        rows.append(f"| {label} | **{u['accuracy']:.3f}** ({u['correct']}/{u['units']}) | "
                    + " | ".join(cells)
                    + f" | {res['hard_negatives']['false_link_rate']:.3f} | "
                    f"{res['dialog_pairs']['false_link_rate']:.3f} | "
                    f"{res['judge_ms_per_pair']:.2f} | {esc} |")
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
            rows = ["| file | centre weight | " + " | ".join(f"@{m}" for m in ms) + " |",
                    "| --- | ---: |" + " ---: |" * len(ms)]
        for g in sorted({p["centre_weight"] for p in pts}):
            by = {p["max_judged"]: p for p in pts if p["centre_weight"] == g}
            rows.append(f"| {label} | {g:g} | "
                        + " | ".join(f"{by[m]['recall']:.3f}" for m in ms) + " |")
    return rows


_LTP_COLS = ("bank_role", "evidence_support", "state_fit_at_1", "label_accuracy", "qa_acc",
             "conflict_acc", "fact_acc", "spurious_supersession_rate", "judge_calls_per_write")


def ltp_tables(out: Path) -> list[str]:
    """One table per file (methods as rows) and the view accuracy."""
    lines: list[str] = []
    for name, label in FILES:
        res = _load(out, f"ltp_{name}")
        if res is None:
            continue
        cfg = res["config"]
        lines += [f"**{label}** ({len(cfg['profiles'])} profiles, "
                  f"{res['methods']['atma']['units']} units, "
                  f"{res['methods']['atma']['probes']} probes, {cfg['seconds'] / 60:.0f} min):",
                  "", "| method | " + " | ".join(_LTP_COLS) + " |",
                  "| --- |" + " ---: |" * len(_LTP_COLS)]
        for m, row in res["methods"].items():
            lines.append(f"| {m} | " + " | ".join(f"{row[c]:.3f}" for c in _LTP_COLS) + " |")
        steps = res["methods"]["atma"].get("bank_steps", {})
        lines += ["", "atma, units with a wrong bank role by write step: "
                  + ", ".join(f"{k} {v}" for k, v in steps.items() if v), ""]
        v = res.get("views")
        if v:
            lines += [f"query view right for {v['accuracy']:.3f} of {v['probes']} probes ("
                      + ", ".join(f"{k} {r['accuracy']:.3f}" for k, r in v["by_view"].items())
                      + ")", ""]
    return lines


def main() -> int:
    """Print every block."""
    out = Path(sys.argv[1])
    for title, rows in (("judge", judge_table(out)), ("gate", gate_table(out)),
                        ("ltp", ltp_tables(out))):
        print(f"<!-- {title} -->")
        print("\n".join(rows))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
