"""Judge diagnostic on an LTP-format file: the verdict on each update pair, in isolation.

``atma bench judge FILE`` asks a judge (the offline default, or any chat model
through :class:`~langchain_atma.bank.judge.LLMJudge`) about the pairs the bank
level must link, and about pairs it must leave alone, with no bank and no
replay. It measures the judge alone, the third factor of the bank level:

``bank_role  <=  reach (old record among the new one's candidates)
x gate (the pair flagged) x judge (the right verdict)``.

``atma bench gate`` measures the first two; this command measures the third. With
``--judge-model`` it measures a chat-model judge on the same pairs (a few hundred
calls, not the thousands of a full ``atma bench ltp`` replay).

What the judge sees is what the write path would hand it: the two records (text,
time, speaker; every record ``active``, except that a unit's transition record is
``transition`` in its pair with the new cue when the judge itself gave its pair
with the old cue a ``transition`` verdict), their cosine and the gate's centred
score (``JudgeInput.gate_score``: the old record against the new one minus the
mean of every earlier record of the profile, the write-time centroid).

Pairs (the gold is read to choose and score them: this is a component benchmark,
nothing is replayed into a memory):

* **update pairs** of each unit: (old cue, new cue) and, with a transition record,
  (old cue, transition) and (transition, new cue). The right verdict is a
  change (``supersede`` or ``transition``) for temporal, negation and value units
  and a coexistence (``coexist`` or ``scoped_exception``) for scope units, the
  actions :func:`~langchain_atma.benchmarks.ltp_bench.unit_bank_step` accepts;
* **unit accuracy**: a unit is right when its (old, new) pair is, or both pairs of
  its transition chain are (the judge's bound on ``bank_role`` if every pair were
  reached and flagged);
* **hard negatives**: for each cue and transition record, its ``negatives``
  nearest earlier dialog turns of the same speaker; any verdict other than
  ``keep_both`` is a false link (``noop`` too: a duplicate is not stored);
* **cross-unit pairs**: each cue and transition record against the ``negatives``
  nearest earlier cue or transition records of the speaker's *other* units (facts
  of other slots, in the same register): any link is false; in a replay such a
  link supersedes an unrelated fact;
* **dialog pairs**: a seeded sample of dialog turns, each against its nearest
  earlier dialog turn of the same speaker; the false-link rate here is what
  becomes ``spurious_supersession_rate`` in a replay.

Example:
    >>> from langchain_atma.benchmarks.judge_bench import expected_actions
    >>> sorted(expected_actions("scope"))
    ['coexist', 'scoped_exception']
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langchain_atma.bank.gate import centred_query
from langchain_atma.bank.judge import BaseJudge, EscalatingJudge, JudgeInput, LLMJudge, judge_stats
from langchain_atma.bank.learned_judge import default_judge
from langchain_atma.benchmarks.ltp_bench import _CHANGE_ACTIONS, _COEXIST_ACTIONS, part_name
from langchain_atma.benchmarks.ltp_format import (
    EventKind,
    LtpEvent,
    LtpProfile,
    load_ltp,
    select_profiles,
)
from langchain_atma.errors import ConfigError
from langchain_atma.records import MemoryRecord, Provenance, RecordStatus

__all__ = ["expected_actions", "markdown_table", "run_judge_bench"]

_PAIR_KINDS = ("old_new", "old_transition", "transition_new")
_NO_LINK = frozenset({"keep_both"})


def expected_actions(update_type: str) -> frozenset[str]:
    """The verdict actions that give a unit of this update type its gold role.

    Raises:
        ConfigError: an unknown update type.
    """
    if update_type == "scope":
        return _COEXIST_ACTIONS
    if update_type in ("temporal", "negation", "value"):
        return _CHANGE_ACTIONS
    raise ConfigError(f"unknown update type {update_type!r}")


@dataclass
class _Profile:
    """One profile's events, unit vectors and cosine matrix (encoded once)."""

    events: Sequence[LtpEvent]
    vecs: np.ndarray
    sims: np.ndarray
    index: dict[str, int]
    speakers: np.ndarray
    dialog: np.ndarray


class _PairMaker:
    """Builds the :class:`JudgeInput` the write path would build for a pair."""

    def __init__(self, namespace: str) -> None:
        self.ns = namespace

    def record(self, ev: LtpEvent, status: RecordStatus = RecordStatus.ACTIVE) -> MemoryRecord:
        return MemoryRecord(
            namespace=self.ns,
            content=ev.text,
            time=ev.timestamp,
            status=status,
            provenance=Provenance(source_event_id=ev.event_id, speaker=ev.speaker),
        )

    def make(
        self, prof: _Profile, old: int, new: int, old_status: RecordStatus = RecordStatus.ACTIVE
    ) -> JudgeInput:
        ev = prof.events
        centre = prof.vecs[:new].mean(axis=0) if new else None
        score = float(prof.vecs[old] @ centred_query(prof.vecs[new], centre, 1.0))
        return JudgeInput(
            old=self.record(ev[old], old_status),
            new=self.record(ev[new]),
            similarity=float(prof.sims[new, old]),
            gate_score=score,
            old_precedes_new=ev[old].timestamp <= ev[new].timestamp,
        )


def _earlier_of_speaker(prof: _Profile, i: int, dialog_only: bool = False) -> np.ndarray:
    """Earlier records of record ``i``'s speaker, nearest first (stable)."""
    mine = prof.speakers[:i] == prof.speakers[i]
    prior = np.flatnonzero(mine & prof.dialog[:i] if dialog_only else mine)
    return prior[np.argsort(-prof.sims[i, prior], kind="stable")]


def _prepare(profile: LtpProfile, emb: Embeddings) -> _Profile:
    from langchain_atma.embeddings import unit_vectors_by_text

    vec = unit_vectors_by_text(emb, [e.text for e in profile.events])
    mat = np.stack([vec[e.text] for e in profile.events]).astype(np.float32)
    return _Profile(
        events=profile.events,
        vecs=mat,
        sims=mat @ mat.T,
        index={e.event_id: i for i, e in enumerate(profile.events)},
        speakers=np.array([e.speaker for e in profile.events], dtype=object),
        dialog=np.array([e.kind is EventKind.DIALOG for e in profile.events]),
    )


def run_judge_bench(
    path: str | Path,
    *,
    profiles: Sequence[str] | int | None = None,
    judge: BaseJudge | None = None,
    judge_model: BaseChatModel | None = None,
    negatives: int = 3,
    dialog_pairs: int = 200,
    seed: int = 0,
    embeddings: Embeddings | None = None,
    details: list[dict[str, Any]] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """The judge's verdicts on the update pairs and negative pairs of an LTP file.

    Args:
        path: the LTP-format file.
        profiles: profile ids, or a count of leading profiles (default: all).
        judge: the judge to measure (default: the learned judge, escalating its
            unsure pairs to ``judge_model`` when one is given).
        judge_model: a chat model for the escalation (ignored when ``judge`` is given).
        negatives: hard negatives per cue / transition record (nearest earlier
            dialog turns of the speaker).
        dialog_pairs: dialog turns sampled per profile (seeded), each judged against
            its nearest earlier dialog turn of the speaker.
        seed: seed of the dialog sample.
        embeddings: the encoder (default: the package's default encoder).
        details: when a list, one dict per judged pair is appended.
        progress: show a progress bar.

    Returns:
        ``{"update_pairs": {...}, "units": {...}, "hard_negatives": {...},
        "cross_unit": {...}, "dialog_pairs": {...}, "config": {...}}``.

    Raises:
        ConfigError: a negative count, or the file / profile selection is invalid.
    """
    from tqdm.auto import tqdm

    from langchain_atma.embeddings import default_embeddings, encoder_name

    if negatives < 0 or dialog_pairs < 0:
        raise ConfigError(
            f"negatives and dialog_pairs must be >= 0, got {negatives}, {dialog_pairs}"
        )
    t0 = time.perf_counter()
    data = load_ltp(path)
    chosen = select_profiles(data, profiles or None)
    emb = embeddings or default_embeddings()
    if judge is None:  # without a model the escalation is a dry run (it only counts)
        judge = EscalatingJudge(
            default_judge(), None if judge_model is None else LLMJudge(judge_model, fallback=None)
        )
    rng = random.Random(seed)
    run = _BenchRun(judge, details)
    for profile in tqdm(chosen, desc="profiles", disable=not progress):
        prof = _prepare(profile, emb)
        cues = run.units(profile, prof)
        run.negatives(profile, prof, cues, negatives)
        turns = np.flatnonzero(prof.dialog).tolist()
        for i in sorted(rng.sample(turns, min(dialog_pairs, len(turns)))):
            near = _earlier_of_speaker(prof, i, dialog_only=True)
            if near.size:
                run.dia[run.ask("dialog", profile, prof, int(near[0]), i, _NO_LINK)] += 1
    ms = round(1000 * run.judge_s / max(run.n_judged, 1), 3)
    return {
        "update_pairs": {kind: _summary(run.upd[kind]) for kind in _PAIR_KINDS if kind in run.upd},
        "units": _units_summary(run.unit_ok),
        "hard_negatives": _false_links(run.neg),
        "cross_unit": _false_links(run.cross),
        "dialog_pairs": _false_links(run.dia),
        "judge_ms_per_pair": ms,
        "config": {
            "file": str(path),
            "profiles": [p.profile_id for p in chosen],
            "judge": type(
                judge.primary if isinstance(judge, EscalatingJudge) and judge.llm is None else judge
            ).__name__,
            "judge_model": part_name(judge_model) if judge_model is not None else None,
            "judge_stats": judge_stats(judge) or None,
            "negatives": negatives,
            "dialog_pairs": dialog_pairs,
            "seed": seed,
            "encoder": encoder_name(emb),
            "judged_pairs": run.n_judged,
            "judge_ms_per_pair": ms,
            "seconds": round(time.perf_counter() - t0, 1),
        },
    }


class _BenchRun:
    """The tallies of one judge bench run, and the pair judging that fills them."""

    def __init__(self, judge: BaseJudge, details: list[dict[str, Any]] | None) -> None:
        self.judge = judge
        self.details = details
        self.maker = _PairMaker("judge-bench")
        self.upd: dict[str, dict[str, Counter[str]]] = {}  # pair kind -> type -> actions
        self.unit_ok: dict[str, list[int]] = {}
        self.neg: Counter[str] = Counter()
        self.cross: Counter[str] = Counter()
        self.dia: Counter[str] = Counter()
        self.judge_s = 0.0
        self.n_judged = 0

    def ask(
        self,
        kind: str,
        profile: LtpProfile,
        prof: _Profile,
        old: int,
        new: int,
        want: frozenset[str],
        *,
        status: RecordStatus = RecordStatus.ACTIVE,
        **extra: Any,
    ) -> str:
        """Judge one pair, time it, and note it in ``details``; returns the action."""
        inp = self.maker.make(prof, old, new, status)
        t = time.perf_counter()
        verdict = self.judge.judge(inp)
        self.judge_s += time.perf_counter() - t
        self.n_judged += 1
        if self.details is not None:
            self.details.append(
                {
                    "pair": kind,
                    "profile": profile.profile_id,
                    "action": verdict.action,
                    "reason": verdict.reason[:300],
                    "old_event": inp.old.provenance.source_event_id,
                    "new_event": inp.new.provenance.source_event_id,
                    "old": inp.old.content[:300],
                    "new": inp.new.content[:300],
                    "gate_score": inp.gate_score,
                    "correct": verdict.action in want,
                    **extra,
                }
            )
        return verdict.action

    def units(self, profile: LtpProfile, prof: _Profile) -> dict[int, str]:
        """Judge every unit's pairs; returns each cue record's unit."""
        cues: dict[int, str] = {}
        for u in profile.units:
            ut = u.update_type.value
            want = expected_actions(ut)
            old, new = prof.index[u.old_event_id], prof.index[u.new_event_id]
            tr = prof.index.get(u.transition_event_id) if u.transition_event_id else None
            cues.update({i: u.unit_id for i in (old, new, tr) if i is not None})
            pairs = [("old_new", old, new)]
            if tr is not None:
                pairs += [("old_transition", old, tr), ("transition_new", tr, new)]
            acted: dict[str, str] = {}
            for kind, a, b in pairs:
                # the transition record is a `transition` only if the judge said so
                status = (
                    RecordStatus.TRANSITION
                    if kind == "transition_new" and acted["old_transition"] == "transition"
                    else RecordStatus.ACTIVE
                )
                action = acted[kind] = self.ask(
                    kind,
                    profile,
                    prof,
                    a,
                    b,
                    want,
                    status=status,
                    unit_id=u.unit_id,
                    update_type=ut,
                )
                self.upd.setdefault(kind, {}).setdefault(ut, Counter())[action] += 1
            right = {kind: action in want for kind, action in acted.items()}
            ok = right["old_new"] or (
                tr is not None and right["old_transition"] and right["transition_new"]
            )
            self.unit_ok.setdefault(ut, []).append(int(ok))
        return cues

    def negatives(self, profile: LtpProfile, prof: _Profile, cues: dict[int, str], n: int) -> None:
        """Each cue against the speaker's nearest earlier turns and other units' cues."""
        for i in sorted(cues):
            for j in _earlier_of_speaker(prof, i, dialog_only=True)[:n]:
                self.neg[self.ask("hard_negative", profile, prof, int(j), i, _NO_LINK)] += 1
            others = [
                int(j) for j in _earlier_of_speaker(prof, i) if cues.get(int(j), cues[i]) != cues[i]
            ]
            for j in others[:n]:
                self.cross[self.ask("cross_unit", profile, prof, j, i, _NO_LINK)] += 1


def _summary(by_type: dict[str, Counter[str]]) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    for ut, acts in sorted(by_type.items()):
        n = sum(acts.values())
        good = sum(c for a, c in acts.items() if a in expected_actions(ut))
        rows[ut] = {
            "pairs": n,
            "correct": good,
            "accuracy": round(good / max(n, 1), 4),
            "actions": dict(acts.most_common()),
        }
    n = sum(int(r["pairs"]) for r in rows.values())
    good = sum(int(r["correct"]) for r in rows.values())
    return {
        "pairs": n,
        "correct": good,
        "accuracy": round(good / max(n, 1), 4),
        "by_update_type": rows,
    }


def _false_links(acts: Counter[str]) -> dict[str, Any]:
    n = sum(acts.values())
    linked = n - acts.get("keep_both", 0)
    return {
        "pairs": n,
        "false_links": linked,
        "false_link_rate": round(linked / max(n, 1), 4),
        "actions": dict(acts.most_common()),
    }


def _units_summary(unit_ok: dict[str, list[int]]) -> dict[str, Any]:
    units_all = [x for v in unit_ok.values() for x in v]
    return {
        "units": len(units_all),
        "correct": sum(units_all),
        "accuracy": round(sum(units_all) / max(len(units_all), 1), 4),
        "by_update_type": {
            ut: {"units": len(v), "correct": sum(v), "accuracy": round(sum(v) / max(len(v), 1), 4)}
            for ut, v in sorted(unit_ok.items())
        },
    }


def markdown_table(res: dict[str, Any]) -> str:
    """The per-type accuracy on update pairs and the false-link rates as markdown."""
    lines = [
        "| pairs | update type | pairs judged | right verdict | accuracy | actions |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for kind, s in res["update_pairs"].items():
        for ut, r in s["by_update_type"].items():
            acts = ", ".join(f"{a} {c}" for a, c in r["actions"].items())
            lines.append(
                f"| {kind} | {ut} | {r['pairs']} | {r['correct']} | {r['accuracy']:.3f} | {acts} |"
            )
        lines.append(
            f"| {kind} | **all** | {s['pairs']} | {s['correct']} | **{s['accuracy']:.3f}** | |"
        )
    u = res["units"]
    lines += [
        "",
        "| units | " + " | ".join(u["by_update_type"]) + " | all |",
        "| --- |" + " ---: |" * (len(u["by_update_type"]) + 1),
        "| right verdict (old -> new, or the transition chain) | "
        + " | ".join(
            f"{v['correct']}/{v['units']} ({v['accuracy']:.3f})"
            for v in u["by_update_type"].values()
        )
        + f" | {u['correct']}/{u['units']} ({u['accuracy']:.3f}) |",
    ]
    lines += [
        "",
        "| negative pairs | pairs | false links | rate | actions |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for name in ("hard_negatives", "cross_unit", "dialog_pairs"):
        r = res.get(name)
        if r is None:  # results written before cross-unit pairs were measured
            continue
        acts = ", ".join(f"{a} {c}" for a, c in r["actions"].items())
        lines.append(
            f"| {name} | {r['pairs']} | {r['false_links']} | {r['false_link_rate']:.3f} | {acts} |"
        )
    cfg = res["config"]
    lines += [
        "",
        f"{len(cfg['profiles'])} profiles, {cfg['judged_pairs']} pairs judged by "
        f"{cfg['judge_model'] or cfg['judge']} ({cfg['judge_ms_per_pair']} ms per pair), "
        f"encoder {cfg['encoder']}, {cfg['seconds']} s",
    ]
    return "\n".join(lines)


def _earlier_results(paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``{file stem: results}`` of earlier runs of this command (for ``--compare``)."""
    import json

    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        try:
            prev = json.loads(Path(path).read_text(encoding="utf-8"))
            _ = (
                prev["units"]["accuracy"],
                prev["units"]["by_update_type"],
                prev["hard_negatives"]["false_link_rate"],
                prev["dialog_pairs"]["false_link_rate"],
            )
            out.setdefault(Path(prev["config"]["file"]).stem, prev)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"--compare {path}: not a result of atma bench judge ({type(exc).__name__}: {exc})"
            ) from exc
    return out


def main(args: Any) -> int:
    """CLI entry: ``atma bench judge FILE --out RESULTS.json``."""
    import json

    from langchain_atma.benchmarks.ltp_bench import _parse_profiles, bench_models, write_jsonl

    details: list[dict[str, Any]] | None = [] if getattr(args, "details", None) else None
    earlier = _earlier_results(getattr(args, "compare", None) or [])  # fail before the run
    model = bench_models(args)["judge"]
    res = run_judge_bench(
        args.file,
        profiles=_parse_profiles(args.profiles),
        judge_model=model,
        negatives=args.negatives,
        dialog_pairs=args.dialog_pairs,
        seed=args.seed,
        details=details,
    )
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    print(markdown_table(res))
    print(f"\nwrote {args.out}")
    if details is not None:
        print(f"wrote {args.details} ({write_jsonl(Path(args.details), details)} lines)")
    if getattr(args, "plot", None):
        from langchain_atma.benchmarks.plots import plot_judge

        plot_judge({**earlier, Path(args.file).stem: res}, Path(args.plot))  # this run last
        print(f"wrote {args.plot}")
    return 0
