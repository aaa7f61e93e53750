"""Check corpus batches: schema, labels, leaks, duplicates and sentence frames.

Usage::

    python -m atma_training.check training/corpus/pairs/b03.jsonl \
        [--questions training/corpus/questions/b03.jsonl]
    python -m atma_training.check --dialogs training/corpus/dialogs/c03.jsonl
    python -m atma_training.check --disjoint training/corpus/pairs/b17.jsonl

Prints the problems (exit 1 when there is any) and the batch's counts. Every
line is validated (:class:`~atma_training.corpus.CorpusLine`); then:

* evaluation text (:mod:`atma_training.leaks`): 8-word runs shared with
  LoCoMo, the held-out files or the LTP builder, 5-word phrases of the held-out
  files, and banned names;
* texts repeated anywhere in the corpus (the same text in two lines);
* pair frames (:mod:`atma_training.diversity`) shared with any other line of
  the corpus, and single-text frames used more than twice;
* the share of indirect changes among the batch's change and transition lines;
* with ``--disjoint``: a line (other than a duplicate) whose texts share a
  content word (:func:`~atma_training.diversity.content_words`); the batches
  written to be lexically disjoint are checked with it.

Conversations (``--dialogs``) are checked for evaluation text, turns repeated
anywhere in the conversations, and sentence frames used more than twice in the
batch.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from atma_training.corpus import (
    CORPUS_DIR,
    CorpusError,
    CorpusLine,
    DialogLine,
    load_dialogs,
    load_lines,
    load_questions,
)
from atma_training.diversity import distinct_n, frame_counts, shared_content, shared_frames
from atma_training.leaks import find_leaks, load_eval_sources


def _texts(line: CorpusLine) -> list[str]:
    return [line.old] + ([line.transition] if line.transition else []) + [line.new]


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _disjoint_problems(batch: list[CorpusLine]) -> list[str]:
    return [
        f"{ln.id}: texts share content words {sorted(words)}"
        for ln in batch
        if ln.kind != "duplicate" and (words := shared_content(_texts(ln)))
    ]


def _problems(batch: list[CorpusLine], corpus: list[CorpusLine]) -> list[str]:
    out: list[str] = []
    src = load_eval_sources()
    for line in batch:
        for text in _texts(line):
            out += [
                f"{line.id}: evaluation text ({lk.kind} from {lk.source}): {lk.text!r}"
                for lk in find_leaks(text, src)
            ]
    mine = {ln.id for ln in batch}
    owner: dict[str, str] = {}
    for line in corpus:
        for text in _texts(line):
            owner.setdefault(_norm(text), line.id)
    for line in batch:
        for text in _texts(line):
            first = owner[_norm(text)]
            if first != line.id:
                out.append(f"{line.id}: text repeated from {first}: {text[:60]!r}")
    shared = shared_frames([(ln.id, _texts(ln)) for ln in corpus])
    for fr, ids in shared.items():
        if mine & set(ids):
            out.append(f"pair frame shared by {ids}: {fr[:90]!r}")
    counts = frame_counts(t for ln in batch for t in _texts(ln))
    for fr, n in counts.items():
        if n > 2:
            out.append(f"sentence frame used {n} times in the batch: {fr[:90]!r}")
    return out


def _dialog_problems(batch: list[DialogLine], every: list[DialogLine]) -> list[str]:
    out: list[str] = []
    src = load_eval_sources()
    owner: dict[str, str] = {}
    for d in every:
        for k, t in enumerate(d.turns):
            owner.setdefault(_norm(t.text), f"{d.id}#{k}")
    for d in batch:
        for k, t in enumerate(d.turns):
            out += [
                f"{d.id}#{k}: evaluation text ({lk.kind} from {lk.source}): {lk.text!r}"
                for lk in find_leaks(t.text, src)
            ]
            first = owner[_norm(t.text)]
            if first != f"{d.id}#{k}" and len(t.text.split()) > 3:
                out.append(f"{d.id}#{k}: turn repeated from {first}: {t.text[:60]!r}")
        out += [
            f"{d.id}: speaker name is evaluation text: {n!r}" for n in d.speakers if n in src.names
        ]
    counts = frame_counts(t.text for d in batch for t in d.turns)
    out += [
        f"sentence frame used {n} times in the batch: {fr[:90]!r}"
        for fr, n in counts.items()
        if n > 2
    ]
    return out


def _report(batch: list[CorpusLine]) -> list[str]:
    changes = [ln for ln in batch if ln.kind in ("change", "transition")]
    indirect = sum(ln.indirect for ln in changes)
    texts = [t for ln in batch for t in _texts(ln)]
    rows = [
        f"lines {len(batch)}; slots {len({ln.slot for ln in batch})}",
        "kind " + str(dict(Counter(ln.kind for ln in batch))),
        "action " + str(dict(Counter(ln.action for ln in batch))),
        "type " + str(dict(Counter(ln.type for ln in batch))),
        "negative subtype " + str(dict(Counter(ln.subtype for ln in batch if ln.subtype))),
        "style " + str(dict(Counter(ln.style for ln in batch))),
        f"indirect changes {indirect}/{len(changes)}"
        + (f" ({indirect / len(changes):.2f})" if changes else ""),
        f"content-disjoint lines {sum(not shared_content(_texts(ln)) for ln in batch)}"
        f"/{len(batch)}",
        "distinct-1/2/3 " + " / ".join(f"{distinct_n(texts, n):.3f}" for n in (1, 2, 3)),
        "lines per slot " + str(sorted(Counter(ln.slot for ln in batch).items())),
    ]
    return rows


def main(argv: list[str] | None = None) -> int:
    """Check the given batch files; print problems and counts."""
    ap = argparse.ArgumentParser(prog="python -m atma_training.check")
    ap.add_argument("pairs", nargs="*", type=Path, help="pair batch files (.jsonl)")
    ap.add_argument(
        "--questions", nargs="*", type=Path, default=[], help="question batch files (.jsonl)"
    )
    ap.add_argument(
        "--dialogs", nargs="*", type=Path, default=[], help="conversation batch files (.jsonl)"
    )
    ap.add_argument(
        "--disjoint", action="store_true", help="every pair line's texts must share no content word"
    )
    args = ap.parse_args(argv)
    try:
        dialogs = load_dialogs(args.dialogs) if args.dialogs else []
        every_dialog = (
            dialogs
            + [
                d
                for d in load_dialogs([CORPUS_DIR / "dialogs"], strict=False)
                if d.id not in {x.id for x in dialogs}
            ]
            if dialogs
            else []
        )
        batch = load_lines(args.pairs) if args.pairs else []
        mine = {p.resolve() for p in args.pairs}
        others = [
            p for p in sorted((CORPUS_DIR / "pairs").glob("*.jsonl")) if p.resolve() not in mine
        ]
        corpus = batch + load_lines(others, strict=False)
        questions = load_questions(args.questions) if args.questions else []
    except CorpusError as exc:
        print(f"ERROR {exc}")
        return 1
    problems = _problems(batch, corpus) if batch else []
    problems += _disjoint_problems(batch) if args.disjoint else []
    problems += _dialog_problems(dialogs, every_dialog) if dialogs else []
    src = load_eval_sources() if questions else None
    for q in questions:
        if src is not None:
            problems += [
                f"{q.id}: evaluation text ({lk.kind} from {lk.source}): {lk.text!r}"
                for lk in find_leaks(q.question, src)
            ]
    for p in problems:
        print("PROBLEM", p)
    if batch:
        print("\n".join(_report(batch)))
    if questions:
        print(
            f"questions {len(questions)}; views {dict(Counter(q.view for q in questions))}; "
            f"slots {len({q.slot for q in questions})}"
        )
    if dialogs:
        turns = [t for d in dialogs for t in d.turns]
        print(
            f"conversations {len(dialogs)}; turns {len(turns)}; distinct-2 "
            f"{distinct_n([t.text for t in turns], 2):.3f}"
        )
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
