#!/usr/bin/env python
"""Precision and recall of the agent write policy on labelled user turns.

    python scripts/write_policy_eval.py [benchmarks/write_policy/turns.jsonl] [--errors]

Each line of the file is ``{"id", "text", "remember": bool, "kind"}`` (written for the
project from a brief, independently of the policy). The policy is
``langchain_atma.text.about_self``, the default of ``AtmaMemoryMiddleware``.
Prints one JSON object: precision and recall of "remember", accuracy, and the share
kept per kind; ``--errors`` also lists the turns it gets wrong.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from langchain_atma.text import about_self

DEFAULT = Path(__file__).resolve().parents[1] / "benchmarks" / "write_policy" / "turns.jsonl"


def evaluate(path: Path) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The scores of the policy on one file, and the turns it gets wrong."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    tp = fp = fn = 0
    kept: dict[str, list[bool]] = defaultdict(list)
    wrong = []
    for row in rows:
        keep = about_self(row["text"])
        kept[row["kind"]].append(keep)
        tp += keep and row["remember"]
        fp += keep and not row["remember"]
        fn += (not keep) and row["remember"]
        if keep != row["remember"]:
            wrong.append({**row, "kept": keep})
    base_kept = [not r["text"].rstrip().endswith("?") for r in rows]
    base_tp = sum(k and r["remember"] for k, r in zip(base_kept, rows, strict=True))
    scores = {
        "turns": len(rows),
        "baseline_not_question": {  # the policy before: every turn not ending with "?"
            "precision": round(base_tp / max(sum(base_kept), 1), 3),
            "recall": round(base_tp / max(sum(r["remember"] for r in rows), 1), 3),
        },
        "precision": round(tp / max(tp + fp, 1), 3),
        "recall": round(tp / max(tp + fn, 1), 3),
        "accuracy": round(1 - len(wrong) / max(len(rows), 1), 3),
        "kept_share_by_kind": {k: round(sum(v) / len(v), 3) for k, v in sorted(kept.items())},
    }
    return scores, wrong


def main(argv: list[str]) -> int:
    """Entry point."""
    args = [a for a in argv if not a.startswith("--")]
    scores, wrong = evaluate(Path(args[0]) if args else DEFAULT)
    print(json.dumps(scores, indent=2))
    if "--errors" in argv:
        for row in wrong:
            print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
