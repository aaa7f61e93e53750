"""Seed-search diagnostic on an LTP-format file: how often does the host search reach a unit?

``atma bench seeds FILE`` embeds every event of each profile and every probe
question, then asks, for each probe, whether a plain top-``k`` cosine search
over the profile's events returns:

* ``unit_hit``: any record of the probe's unit (old cue, new cue or
  transition): the state links can reach the rest from there;
* ``target_hit``: the target-state record itself.

Five ways of searching are compared (see :mod:`langchain_atma.retrieval.rewrite`):

* ``as_asked``: the question as written;
* ``first_person``: the question rewritten in the first person of the one
  speaker it names (speakers are the ``speaker`` values of the profile's
  events, which is what the bank knows; nothing gold is read for the search);
* ``fused_max``: both searches, each record keeping its best score;
* ``speaker_first``: ``first_person``, with another speaker's turns scoring
  :data:`~langchain_atma.retrieval.pool.DEFAULT_OTHER_SPEAKER_PENALTY` lower
  when the question names one speaker;
* ``facts_first``: ``speaker_first``, with the turns that state no fact (only a
  question, greeting or reaction: what the write path stores as
  ``states_fact=False``, from the same text cues) scoring
  :data:`~langchain_atma.retrieval.pool.DEFAULT_NO_FACT_PENALTY` lower among
  the read path's ``seed_k`` (10) seeds, of which the first ``k`` are scored (the
  read path's default; the other modes' top ``k`` is a plain top-``k``).

Gold fields (units, event kinds) are read only to score. This isolates the
retrieval level's first step from the bank: no state links are used.

Example:
    >>> from langchain_atma.benchmarks.seed_bench import SEARCH_MODES
    >>> SEARCH_MODES
    ('as_asked', 'first_person', 'fused_max', 'speaker_first', 'facts_first')
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_atma.benchmarks.ltp_format import LtpProfile, load_ltp, select_profiles
from langchain_atma.embeddings import unit_vectors_by_text
from langchain_atma.retrieval.packets import DEFAULT_K, DEFAULT_SEED_K
from langchain_atma.retrieval.pool import DEFAULT_NO_FACT_PENALTY, DEFAULT_OTHER_SPEAKER_PENALTY
from langchain_atma.retrieval.rewrite import (
    first_person_query,
    name_candidates,
    the_named_speaker,
)
from langchain_atma.text import cues

__all__ = ["SEARCH_MODES", "run_seed_bench"]

SEARCH_MODES = ("as_asked", "first_person", "fused_max", "speaker_first", "facts_first")


def _named(question: str, speakers: set[str]) -> str | None:
    return the_named_speaker([n for n in name_candidates(question) if n in speakers])


def _profile_rows(
    profile: LtpProfile, emb: Embeddings, k: int, seed_k: int = DEFAULT_SEED_K
) -> list[dict[str, Any]]:
    speakers = {e.speaker for e in profile.events}
    questions = [p.question for p in profile.probes]
    names = [_named(q, speakers) for q in questions]
    rewrites = [first_person_query(q, n) if n else q for q, n in zip(questions, names, strict=True)]
    vec = unit_vectors_by_text(emb, [e.text for e in profile.events] + questions + rewrites)
    mat = np.stack([vec[e.text] for e in profile.events])
    event_speakers = np.array([e.speaker for e in profile.events], dtype=object)
    # what the write path stores per record (states_fact), from the same text cues
    no_fact = np.array([not cues(e.text).statement for e in profile.events])
    index = {e.event_id: i for i, e in enumerate(profile.events)}
    units = {u.unit_id: u for u in profile.units}
    rows = []
    for probe, q, rw, name in zip(profile.probes, questions, rewrites, names, strict=True):
        unit = units[probe.unit_id]
        members = {
            index[i]
            for i in (unit.old_event_id, unit.new_event_id, unit.transition_event_id)
            if i in index
        }
        target_id = unit.new_event_id if probe.view.value == "current" else unit.old_event_id
        target = index.get(target_id, -1)
        s_raw, s_rw = mat @ vec[q], mat @ vec[rw]
        s_own = s_rw - (DEFAULT_OTHER_SPEAKER_PENALTY * (event_speakers != name) if name else 0.0)
        row: dict[str, Any] = {"probe_id": probe.probe_id, "rewritten": rw != q}
        # the read path's seed_k seeds re-sorted with the penalty; the first k are scored
        kept = np.argsort(-s_own, kind="stable")[: max(seed_k, k)]
        s_fact = s_own[kept] - DEFAULT_NO_FACT_PENALTY * no_fact[kept]
        tops = {
            mode: set(np.argsort(-scores, kind="stable")[:k].tolist())
            for mode, scores in (
                ("as_asked", s_raw),
                ("first_person", s_rw),
                ("fused_max", np.maximum(s_raw, s_rw)),
                ("speaker_first", s_own),
            )
        }
        tops["facts_first"] = set(kept[np.argsort(-s_fact, kind="stable")][:k].tolist())
        for mode, top in tops.items():
            row[f"{mode}_unit_hit"] = bool(top & members)
            row[f"{mode}_target_hit"] = target in top
        rows.append(row)
    return rows


def run_seed_bench(
    path: str | Path,
    *,
    profiles: Sequence[str] | int | None = None,
    k: int = DEFAULT_K,
    embeddings: Embeddings | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Score the seed searches (:data:`SEARCH_MODES`) on an LTP-format file.

    Args:
        path: the LTP-format file.
        profiles: profile ids, or a count of leading profiles (default: all).
        k: top-k of the search.
        embeddings: the encoder (default: the package's default encoder).
        progress: show a progress bar.

    Returns:
        ``{"modes": {mode: {"unit_hit": ..., "target_hit": ...}}, "config": {...}}``.
    """
    from tqdm.auto import tqdm

    from langchain_atma.embeddings import default_embeddings

    t0 = time.perf_counter()
    data = load_ltp(path)
    chosen = select_profiles(data, profiles or None)
    emb = embeddings or default_embeddings()
    rows: list[dict[str, Any]] = []
    for prof in tqdm(chosen, desc="profiles", disable=not progress):
        rows += _profile_rows(prof, emb, k)
    n = max(len(rows), 1)
    modes = {
        m: {
            "unit_hit": round(sum(r[f"{m}_unit_hit"] for r in rows) / n, 4),
            "target_hit": round(sum(r[f"{m}_target_hit"] for r in rows) / n, 4),
        }
        for m in SEARCH_MODES
    }
    return {
        "modes": modes,
        "config": {
            "file": str(path),
            "k": k,
            "probes": len(rows),
            "profiles": [p.profile_id for p in chosen],
            "rewritten_share": round(sum(r["rewritten"] for r in rows) / n, 4),
            "encoder": getattr(emb, "name", type(emb).__name__),
            "seconds": round(time.perf_counter() - t0, 1),
        },
    }


def main(args: Any) -> int:
    """CLI entry: ``atma bench seeds FILE --out RESULTS.json [--profiles ...] [--k 5]``."""
    import json

    from langchain_atma.errors import ConfigError

    if args.k < 1:
        raise ConfigError(f"--k must be >= 1, got {args.k}")
    profiles: list[str] | int | None = None
    if args.profiles:
        profiles = (
            int(args.profiles)
            if str(args.profiles).isdigit()
            else [p.strip() for p in str(args.profiles).split(",") if p.strip()]
        )
    res = run_seed_bench(args.file, profiles=profiles, k=args.k)
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    print(f"| search | unit_hit@{args.k} | target_hit@{args.k} |\n|---|---:|---:|")
    for mode, m in res["modes"].items():
        print(f"| {mode} | {m['unit_hit']:.3f} | {m['target_hit']:.3f} |")
    print(
        f"\n{res['config']['probes']} probes, {res['config']['rewritten_share']:.0%} "
        f"rewritten; wrote {args.out}"
    )
    return 0
