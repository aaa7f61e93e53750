"""Proposal-gate diagnostic on an LTP-format file: how often the judge gets to see a change.

``atma bench gate FILE`` replays every write of every speaker offline (no bank,
no judge) and asks, for each true update pair, whether the earlier record is
among the candidates the gate would hand to the judge:

* the **pool** of a write is the ``candidate_k`` (32) earlier records of the same
  speaker ranked by the gate's score, ``<c_j, v - gamma * mu>`` with ``mu`` the
  mean vector of every earlier record of the profile (the write-time namespace
  centroid, :meth:`~langchain_atma.bank.bank.StateBank.centroid`); ``gamma = 0``
  is plain cosine;
* a **true pair** is (new cue, old cue) or (transition record, old cue) of a
  unit; gold fields (units) are read only to score;
* **recall at M** is the share of true pairs whose old record is among the ``M``
  best of the pool (the gate's ``max_judged``); ``judged_per_write`` is the
  mean number of pairs the judge would read per write (every write of both
  speakers); the **ceiling** is recall at ``M = candidate_k``.

Operating points: each ``gamma`` in ``centre_weights`` times each ``M`` in
``max_judged``. Per update type recall is given at the defaults. Vectors are
encoded once per distinct text; everything else is numpy.

Example:
    >>> from langchain_atma.benchmarks.gate_bench import DEFAULT_MAX_JUDGED
    >>> DEFAULT_MAX_JUDGED
    (4, 8, 12, 16, 24, 32)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_atma.bank.gate import GateConfig
from langchain_atma.bank.write_graph import DEFAULT_CANDIDATE_K
from langchain_atma.benchmarks.ltp_format import LtpProfile, load_ltp, select_profiles
from langchain_atma.embeddings import unit_vectors_by_text
from langchain_atma.errors import ConfigError

__all__ = ["DEFAULT_CENTRE_WEIGHTS", "DEFAULT_MAX_JUDGED", "markdown_table", "run_gate_bench"]

DEFAULT_MAX_JUDGED: tuple[int, ...] = (4, 8, 12, 16, 24, 32)
DEFAULT_CENTRE_WEIGHTS: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5)


@dataclass
class _Replay:
    """A profile prepared for the gate: vectors, speakers and gold pairs."""

    vecs: np.ndarray
    speakers: np.ndarray
    true: dict[tuple[int, int], str] = field(default_factory=dict)


def _prepare(profile: LtpProfile, vec: dict[str, np.ndarray]) -> _Replay:
    events = profile.events
    rep = _Replay(
        vecs=np.stack([vec[e.text] for e in events]).astype(np.float32),
        speakers=np.array([e.speaker for e in events], dtype=object),
    )
    index = {e.event_id: i for i, e in enumerate(events)}
    for u in profile.units:  # gold: read only to score
        old, new = index[u.old_event_id], index[u.new_event_id]
        rep.true[(new, old)] = u.update_type.value
        if u.transition_event_id is not None:
            rep.true[(index[u.transition_event_id], old)] = f"{u.update_type.value}/transition"
    return rep


def _pools(rep: _Replay, gamma: float, k: int) -> list[np.ndarray]:
    """Per write, the ``k`` earlier records of its speaker, best gate score first."""
    out = []
    running = np.cumsum(rep.vecs, axis=0, dtype=np.float64)
    for i in range(len(rep.vecs)):
        prior = np.flatnonzero(rep.speakers[:i] == rep.speakers[i])
        if not prior.size:
            out.append(prior)
            continue
        q = rep.vecs[i] - gamma * (running[i - 1] / i).astype(np.float32)
        score = rep.vecs[prior] @ q
        out.append(prior[np.argsort(-score, kind="stable")[:k]])
    return out


def _evaluate(
    replays: Sequence[_Replay], pools: Sequence[list[np.ndarray]], m: int
) -> dict[str, Any]:
    found = judged = writes = 0
    by_type: dict[str, list[int]] = {}
    for rep, pool in zip(replays, pools, strict=True):
        writes += len(pool)
        judged += sum(min(m, p.size) for p in pool)
        for (new, old), label in rep.true.items():
            hit = old in pool[new][:m]
            found += hit
            slot = by_type.setdefault(label, [0, 0])
            slot[0] += hit
            slot[1] += 1
    n_true = sum(v[1] for v in by_type.values())
    return {
        "recall": round(found / max(n_true, 1), 4),
        "found": found,
        "true_pairs": n_true,
        "judged_per_write": round(judged / max(writes, 1), 3),
        "per_type": {
            t: {"recall": round(v[0] / max(v[1], 1), 4), "found": v[0], "pairs": v[1]}
            for t, v in sorted(by_type.items())
        },
    }


def run_gate_bench(
    path: str | Path,
    *,
    profiles: Sequence[str] | int | None = None,
    candidate_k: int = DEFAULT_CANDIDATE_K,
    max_judged: Sequence[int] = DEFAULT_MAX_JUDGED,
    centre_weights: Sequence[float] = DEFAULT_CENTRE_WEIGHTS,
    embeddings: Embeddings | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Recall of true update pairs among the candidates the judge would read.

    Args:
        path: the LTP-format file.
        profiles: profile ids, or a count of leading profiles (default: all).
        candidate_k: pool size (the write path's ``candidate_k``).
        max_judged: the ``M`` values to evaluate (capped at ``candidate_k``).
        centre_weights: the ``gamma`` values to evaluate (0 = plain cosine).
        embeddings: the encoder (default: the package's default encoder).
        progress: show a progress bar.

    Returns:
        ``{"operating_points": [...], "per_type": {...}, "config": {...}}``;
        ``per_type`` is recall per update type at the default gate settings.

    Raises:
        ConfigError: ``candidate_k < 1``, or an empty or invalid ``max_judged`` /
            ``centre_weights``.
    """
    from tqdm.auto import tqdm

    from langchain_atma.embeddings import default_embeddings

    if candidate_k < 1:
        raise ConfigError(f"candidate_k must be >= 1, got {candidate_k}")
    if not max_judged or any(m < 1 for m in max_judged):
        raise ConfigError("max_judged needs positive integers")
    if not centre_weights or any(not 0.0 <= g <= 4.0 for g in centre_weights):
        raise ConfigError("centre_weights need values in [0, 4]")
    t0 = time.perf_counter()
    chosen = select_profiles(load_ltp(path), profiles or None)
    emb = embeddings or default_embeddings()
    replays = [
        _prepare(p, unit_vectors_by_text(emb, [e.text for e in p.events]))
        for p in tqdm(chosen, desc="profiles", disable=not progress)
    ]
    default = GateConfig()
    ms = sorted({min(m, candidate_k) for m in max_judged})
    points: list[dict[str, Any]] = []
    per_type: dict[str, Any] = {}
    for gamma in centre_weights:
        pools = [_pools(r, gamma, candidate_k) for r in replays]
        for m in ms:
            res = _evaluate(replays, pools, m)
            types = res.pop("per_type")
            if gamma == default.centre_weight and m == default.max_judged:
                per_type = types
            points.append({"centre_weight": gamma, "max_judged": m, **res})
    return {
        "operating_points": points,
        "per_type": per_type,
        "config": {
            "file": str(path),
            "profiles": [p.profile_id for p in chosen],
            "writes": sum(len(r.vecs) for r in replays),
            "true_pairs": sum(len(r.true) for r in replays),
            "candidate_k": candidate_k,
            "gate_defaults": default.model_dump(),
            "encoder": getattr(emb, "name", type(emb).__name__),
            "seconds": round(time.perf_counter() - t0, 1),
        },
    }


def markdown_table(res: dict[str, Any]) -> str:
    """Recall at each operating point (rows: gamma, columns: M) and per update type."""
    cfg = res["config"]
    ms = sorted({p["max_judged"] for p in res["operating_points"]})
    gammas = sorted({p["centre_weight"] for p in res["operating_points"]})
    by = {(p["centre_weight"], p["max_judged"]): p for p in res["operating_points"]}
    lines = [
        "| centre weight | " + " | ".join(f"recall@{m}" for m in ms) + " |",
        "| ---: |" + " ---: |" * len(ms),
    ]
    for g in gammas:
        lines.append(f"| {g:g} | " + " | ".join(f"{by[(g, m)]['recall']:.3f}" for m in ms) + " |")
    lines.append(
        "| judged pairs per write | "
        + " | ".join(f"{by[(gammas[0], m)]['judged_per_write']:.1f}" for m in ms)
        + " |"
    )
    d = cfg["gate_defaults"]
    if res["per_type"]:
        lines += [
            "",
            f"Per update type at the defaults (centre weight "
            f"{d['centre_weight']:g}, {d['max_judged']} judged):",
            "",
            "| update type | recall | found / pairs |",
            "| --- | ---: | ---: |",
        ]
        for t, v in res["per_type"].items():
            lines.append(f"| {t} | {v['recall']:.3f} | {v['found']}/{v['pairs']} |")
    lines += [
        "",
        f"{len(cfg['profiles'])} profiles, {cfg['writes']} writes, "
        f"{cfg['true_pairs']} true pairs, pools of {cfg['candidate_k']}; "
        f"encoder {cfg['encoder']}, {cfg['seconds']} s",
    ]
    return "\n".join(lines)


def main(args: Any) -> int:
    """CLI entry: ``atma bench gate FILE --out RESULTS.json [--profiles N|ids]``."""
    import json

    from langchain_atma.benchmarks.ltp_bench import _parse_profiles

    res = run_gate_bench(
        args.file, profiles=_parse_profiles(args.profiles), candidate_k=args.candidate_k
    )
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    print(markdown_table(res))
    print(f"\nwrote {args.out}")
    return 0
