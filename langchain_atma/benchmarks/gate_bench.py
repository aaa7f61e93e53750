"""Proposal-gate diagnostic on an LTP-format file: recall of true update pairs vs flags per write.

``atma bench gate FILE`` replays every write of every speaker offline (no
bank, no judge) and asks the shipped proposal gate
(:class:`~langchain_atma.bank.gate.ProposalGate`) which pairs it would send to
the judge:

* the **pool** of a write is the ``candidate_k`` (16) nearest *earlier*
  records of the same speaker by cosine, all treated as live (what the write
  path's speaker-filtered host query returns, without state links);
* a **true pair** is (new cue, old cue) or (transition record, old cue) of a
  unit; gold fields (units) are read only to score;
* **recall** is the share of true pairs the gate flags; **flags per write**
  counts every flagged pair over *all* writes of both speakers (what
  ``judge_calls_per_write`` counts); flags of (new cue, transition) pairs are
  counted as flags and reported as ``chain_flags``, not as recall;
* the **ceiling** is the share of true pairs whose old cue is in the pool.

Operating points: the hub gate (``GateConfig(tau=t)``, other settings at their
defaults, cap and text cues included) for each ``t``, the hub gate without text
cues (:data:`NO_CUES`: no cue bonus, no statement or actionable filter,
``tau = -0.08``, cap 2; the default before the text signals), the hub gate
without the Sentry's topic term (:data:`NO_TOPIC`, ``tau = -0.09``; the default
before it), and the paper rule
(``GateConfig(mode="paper")``) over the 8 nearest. Per update type recall is
given at the default settings. Vectors are encoded once per distinct text;
everything else is numpy.

Example:
    >>> from langchain_atma.benchmarks.gate_bench import DEFAULT_TAUS
    >>> DEFAULT_TAUS
    (-0.07, -0.06, -0.05, -0.04)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_atma.bank.gate import GateConfig, ProposalGate
from langchain_atma.benchmarks.ltp_format import LtpProfile, load_ltp, select_profiles
from langchain_atma.embeddings import unit_vectors_by_text

__all__ = ["DEFAULT_TAUS", "NO_CUES", "NO_TOPIC", "PAPER_CANDIDATES", "markdown_table",
           "run_gate_bench"]

DEFAULT_TAUS: tuple[float, ...] = (-0.07, -0.06, -0.05, -0.04)
NO_CUES = GateConfig(tau=-0.08, cue_bonus=0.0, statements_only=False, actionable_only=False,
                     max_flags=2, topic_weight=0.0)
"""The gate without text cues (the default before the text signals were added)."""
NO_TOPIC = GateConfig(tau=-0.09, topic_weight=0.0)
"""The gate without the Sentry's topic term (the default before it was added)."""
PAPER_CANDIDATES = 8


@dataclass
class _Write:
    """One replayed write: the new record and its pool (indices, nearest first)."""

    new: int
    pool: np.ndarray


@dataclass
class _Replay:
    """A profile prepared for the gate: vectors, texts, times, pools and gold pairs."""

    vecs: np.ndarray
    texts: list[str]
    times: list[datetime]
    writes: list[_Write]
    true: dict[tuple[int, int], str] = field(default_factory=dict)
    chain: set[tuple[int, int]] = field(default_factory=set)


def _replay(profile: LtpProfile, vec: dict[str, np.ndarray], k: int) -> _Replay:
    events = profile.events
    mat = np.stack([vec[e.text] for e in events])
    sims = mat @ mat.T
    speakers = np.array([e.speaker for e in events], dtype=object)
    writes = []
    for i in range(len(events)):
        prior = np.flatnonzero(speakers[:i] == speakers[i])
        pool = prior[np.argsort(-sims[i, prior], kind="stable")[:k]] if prior.size else prior
        writes.append(_Write(new=i, pool=pool))
    rep = _Replay(vecs=mat, texts=[e.text for e in events], times=[e.timestamp for e in events],
                  writes=writes)
    index = {e.event_id: i for i, e in enumerate(events)}
    for u in profile.units:  # gold: read only to score
        old, new = index[u.old_event_id], index[u.new_event_id]
        rep.true[(new, old)] = u.update_type.value
        if u.transition_event_id is not None:
            tr = index[u.transition_event_id]
            rep.true[(tr, old)] = f"{u.update_type.value}/transition"
            rep.chain.add((new, tr))
    return rep


def _evaluate(replays: Sequence[_Replay], gate: ProposalGate, k: int) -> dict[str, Any]:
    found = flags = chain = writes = 0
    by_type: dict[str, list[int]] = {}
    for rep in replays:
        for label in rep.true.values():
            by_type.setdefault(label, [0, 0])[1] += 1
        for w in rep.writes:
            writes += 1
            pool = w.pool[:k]
            if pool.size == 0:
                continue
            gs = gate.score(rep.vecs[w.new], rep.vecs[pool], new_text=rep.texts[w.new],
                            cand_texts=[rep.texts[j] for j in pool],
                            new_time=rep.times[w.new], cand_times=[rep.times[j] for j in pool])
            for pos in np.flatnonzero(gs.flagged):
                flags += 1
                pair = (w.new, int(pool[pos]))
                kind = rep.true.get(pair)
                if kind is not None:
                    found += 1
                    by_type[kind][0] += 1
                chain += pair in rep.chain
    n_true = sum(v[1] for v in by_type.values())
    return {
        "recall": round(found / max(n_true, 1), 4), "found": found, "true_pairs": n_true,
        "flags_per_write": round(flags / max(writes, 1), 4), "flags": flags,
        "chain_flags": chain, "writes": writes,
        "per_type": {t: {"recall": round(v[0] / max(v[1], 1), 4), "found": v[0], "pairs": v[1]}
                     for t, v in sorted(by_type.items())},
    }


def _ceiling(replays: Sequence[_Replay], k: int) -> tuple[float, int]:
    total = missing = 0
    for rep in replays:
        pools = {w.new: set(w.pool[:k].tolist()) for w in rep.writes}
        for new, old in rep.true:
            total += 1
            missing += old not in pools[new]
    return round(1.0 - missing / max(total, 1), 4), missing


def _default_scorer(emb: Embeddings) -> Any:
    """The write path's scorer for this encoder (Sentry heads, else the cosine gate)."""
    from langchain_atma.bank.sentry import Sentry
    from langchain_atma.bank.write_graph import CosineGate
    from langchain_atma.embeddings import encoder_name
    from langchain_atma.errors import SentryError

    try:
        return Sentry.for_encoder(encoder_name(emb))
    except SentryError:
        return CosineGate()


def run_gate_bench(path: str | Path, *, profiles: Sequence[str] | int | None = None,
                   taus: Sequence[float] = DEFAULT_TAUS, candidate_k: int = 16,
                   embeddings: Embeddings | None = None,
                   progress: bool = True) -> dict[str, Any]:
    """Recall of true update pairs and flags per write of the shipped gate.

    Args:
        path: the LTP-format file.
        profiles: profile ids, or a count of leading profiles (default: all).
        taus: hub thresholds to evaluate (other :class:`GateConfig` fields at defaults).
        candidate_k: pool size of the hub gate (the paper rule uses the 8 nearest).
        embeddings: the encoder (default: the package's default encoder).
        progress: show a progress bar.

    Returns:
        ``{"operating_points": [...], "per_type": {...}, "config": {...}}``;
        ``per_type`` is recall per update type at the default ``tau``.

    Raises:
        ConfigError: ``candidate_k < 1`` or no ``taus``.
    """
    from tqdm.auto import tqdm

    from langchain_atma.embeddings import default_embeddings
    from langchain_atma.errors import ConfigError

    if candidate_k < 1:
        raise ConfigError(f"candidate_k must be >= 1, got {candidate_k}")
    if not taus:
        raise ConfigError("at least one tau is needed")
    t0 = time.perf_counter()
    data = load_ltp(path)
    chosen = select_profiles(data, profiles or None)
    emb = embeddings or default_embeddings()
    scorer = _default_scorer(emb)
    pool_k = max(candidate_k, PAPER_CANDIDATES)
    replays = []
    for prof in tqdm(chosen, desc="profiles", disable=not progress):
        vec = unit_vectors_by_text(emb, [e.text for e in prof.events])
        replays.append(_replay(prof, vec, pool_k))
    default_tau = GateConfig().tau
    points: list[dict[str, Any]] = []
    per_type: dict[str, Any] = {}
    runs: list[tuple[str, GateConfig, int]] = [
        (f"paper rule, {PAPER_CANDIDATES} nearest", GateConfig(mode="paper"), PAPER_CANDIDATES),
        ("hub without text cues, tau = -0.08, cap 2", NO_CUES, candidate_k),
        ("hub without the topic term, tau = -0.09", NO_TOPIC, candidate_k)]
    runs += [(f"hub, tau = {t:+.2f}" + (" (default)" if t == default_tau else ""),
              GateConfig(tau=t), candidate_k) for t in taus]
    for name, cfg, k in runs:
        res = _evaluate(replays, ProposalGate(scorer, cfg), k)
        types = res.pop("per_type")
        if cfg == GateConfig(tau=default_tau):
            per_type = types
        ceiling, _ = _ceiling(replays, k)
        points.append({"gate": name, "mode": cfg.mode,
                       "tau": cfg.tau if cfg.mode == "hub" else None,
                       "candidates": k, "ceiling": ceiling, **res})
    if not per_type:
        per_type = _evaluate(replays, ProposalGate(scorer, GateConfig()), candidate_k)["per_type"]
    ceiling, missing = _ceiling(replays, candidate_k)
    defaults = GateConfig().model_dump()
    return {
        "operating_points": points,
        "per_type": per_type,
        "config": {"file": str(path), "profiles": [p.profile_id for p in chosen],
                   "writes": sum(len(r.writes) for r in replays),
                   "true_pairs": sum(len(r.true) for r in replays),
                   "candidate_k": candidate_k, "ceiling": ceiling,
                   "pool_misses": missing, "default_tau": default_tau,
                   "gate_defaults": defaults, "scorer": type(scorer).__name__,
                   "encoder": getattr(emb, "name", type(emb).__name__),
                   "seconds": round(time.perf_counter() - t0, 1)},
    }


def markdown_table(res: dict[str, Any]) -> str:
    """The operating points and the per-type recall as markdown."""
    cfg = res["config"]
    lines = ["| gate | pool | recall | flags/write | chain flags | pool ceiling |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for p in res["operating_points"]:
        lines.append(f"| {p['gate']} | {p['candidates']} | {p['recall']:.3f} "
                     f"({p['found']}/{p['true_pairs']}) | {p['flags_per_write']:.3f} | "
                     f"{p['chain_flags']} | {p['ceiling']:.3f} |")
    lines += ["", f"Per update type at the default tau ({cfg['default_tau']:+.2f}):", "",
              "| update type | recall | found / pairs |", "| --- | ---: | ---: |"]
    for t, v in res["per_type"].items():
        lines.append(f"| {t} | {v['recall']:.3f} | {v['found']}/{v['pairs']} |")
    lines += ["", f"{len(cfg['profiles'])} profiles, {cfg['writes']} writes, "
              f"{cfg['true_pairs']} true pairs, {cfg['pool_misses']} not among the "
              f"{cfg['candidate_k']} nearest (ceiling {cfg['ceiling']:.3f}); "
              f"scorer {cfg['scorer']}, encoder {cfg['encoder']}, {cfg['seconds']} s"]
    return "\n".join(lines)


def main(args: Any) -> int:
    """CLI entry: ``atma bench gate FILE --out RESULTS.json [--profiles N|ids]``."""
    import json

    profiles: list[str] | int | None = None
    if args.profiles:
        profiles = (int(args.profiles) if str(args.profiles).isdigit()
                    else [p.strip() for p in str(args.profiles).split(",") if p.strip()])
    res = run_gate_bench(args.file, profiles=profiles,
                         candidate_k=getattr(args, "candidate_k", 16))
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    print(markdown_table(res))
    print(f"\nwrote {args.out}")
    return 0
