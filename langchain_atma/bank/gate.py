"""The default proposal gate of the write path: hubness-normalized Sentry.

The paper's Sentry (:mod:`langchain_atma.bank.sentry`) flags a pair when the
topic head agrees and the logic head disagrees:
``a > tau_top and (b < tau_log or d > tau_gap)``. On replayed long
conversations (LTP-format files) that rule is both too wide and too narrow: a
conversation is full of small talk that is topically close to many earlier
turns ("hubs": thanks, greetings, reactions), so plain topic agreement flags
about one hub pair per write, while the real update pairs (a new value for an
old state: "my commute is 90 minutes now" vs "my commute is about 35
minutes") often have a high logic agreement and are missed.

:class:`ProposalGate` keeps the Sentry's two heads and its pair scores
``a, b, d`` (they are still computed, reported in the trace and handed to the
judge) but decides with a **hubness-normalized topic agreement** computed over
the candidate pool, which is the speaker's local neighbourhood of the new
record (the host's nearest live records of the same speaker):

``t_j = cos(new, c_j) - gamma * (r_new + r_j) / 2 + topic_weight * a_j
+ unit_bonus * units_j + cue_bonus * cue``

* ``r_new`` is the mean of the ``neighbours`` largest similarities of the new
  record to the pool: how close the new record is to *everything* nearby;
* ``r_j`` is the mean of the ``neighbours`` largest similarities of candidate
  ``j`` to the *other* pool members: how much of a hub the candidate is;
  (missing neighbours of a small pool count as similarity 0);
* ``a_j`` is the Sentry's topic agreement (its trained topic head: "same state
  slot"), which ranks two values of one slot ("acrylics" / "oil paint") above
  two turns that only share words; with a cosine scorer (no heads) it is the
  cosine again;
* ``units_j`` is 1 when both texts state a number next to the same word
  ("35 minutes" / "90 minutes", "$1,900 a month" / "$2,050 a month") and the
  numbers differ: a changed quantity is a state update the encoder barely sees;
* ``cue`` is 1 when the new text has change wording ("now", "switched", "also").

``gamma = 1`` is CSLS (cross-domain similarity local scaling, Lample et al.
2018); ``gamma > 1`` penalizes hubs more. A pair is flagged when
``t_j >= tau``, and at most ``max_flags`` pairs per write are flagged (the
highest ``t``). Everything is numpy on vectors the bank already stores: no
extra encoder pass. ``mode="paper"`` keeps the paper's rule (the Sentry's own
flags), for ablations and comparison.

Deterministic: same inputs, same flags (ties keep pool order).

Example:
    >>> import numpy as np
    >>> from langchain_atma.bank.gate import GateConfig, ProposalGate
    >>> from langchain_atma.bank.write_graph import CosineGate
    >>> gate = ProposalGate(CosineGate(), GateConfig(max_flags=1))
    >>> vecs = np.eye(4, dtype=np.float32)
    >>> new = np.array([1.0, 0.1, 0.0, 0.0], dtype=np.float32)
    >>> gate.score(new, vecs).flagged.tolist()
    [True, False, False, False]
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from langchain_atma.bank.sentry import PairScores, Sentry, SentryThresholds
from langchain_atma.errors import SentryError

__all__ = [
    "GateConfig",
    "GateScores",
    "PairScorer",
    "ProposalGate",
    "hub_scores",
    "numbers_with_units",
    "shares_changed_quantity",
]

_EPS = 1e-12


class PairScorer(Protocol):
    """Anything that scores a new vector against candidates (Sentry, CosineGate)."""

    thresholds: SentryThresholds

    def score(self, new_vec: np.ndarray, cand_vecs: np.ndarray) -> PairScores:
        """Pair scores ``a, b, d, flagged`` of one new vector against candidates."""
        ...


class GateConfig(BaseModel):
    """Settings of :class:`ProposalGate` (defaults measured in ``docs/SENTRY.md``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["hub", "paper"] = Field(
        "hub", description="'hub': hubness-normalized topic agreement (default); 'paper': the "
        "Sentry's own rule a > tau_top and (b < tau_log or d > tau_gap), no cap.")
    tau: float = Field(
        -0.05, ge=-2.0, le=2.0,
        description="Flag a pair when its flag score t (hub score, text bonuses and topic "
        "term) reaches this value (cosine units of the bank's encoder; calibrated on "
        "all-MiniLM-L6-v2).")
    gamma: float = Field(
        1.5, ge=0.0, le=4.0,
        description="Weight of the hubness terms (1 = CSLS; larger penalizes hubs more).")
    neighbours: int = Field(
        5, ge=1, le=64, description="Neighbours averaged for r_new and r_j.")
    max_flags: int | None = Field(
        3, ge=1, description="At most this many flagged pairs per write (highest t first); "
        "None = no cap.")
    topic_weight: float = Field(
        0.10, ge=0.0, le=1.0,
        description="Weight of the Sentry's topic agreement a added to t (its trained "
        "topic head says whether two records speak about the same state slot; 0 = the "
        "hub score alone).")
    unit_bonus: float = Field(
        0.10, ge=0.0, le=1.0,
        description="Added to t when both texts give different numbers next to a shared word.")
    cue_bonus: float = Field(
        0.06, ge=0.0, le=1.0,
        description="Added to t when the new text has change, ending, addition or "
        "continuation wording (the offline judge's lexicon: 'now', 'switched', 'no longer', "
        "'also', 'still'): an update usually says that something changed.")
    statements_only: bool = Field(
        True,
        description="Never flag a pair in which one text states no fact (only questions, "
        "greetings or reactions); the offline judge keeps such pairs apart anyway, so "
        "judging them only spends the budget.")
    actionable_only: bool = Field(
        True,
        description="Never flag a pair whose new text has nothing the offline judge's "
        "change rules act on (no change wording, number, qualifier or change in progress in "
        "one of the speaker's own statements; sentences about the listener do not count): "
        "such a pair can only be found a duplicate. Set False with an LLM judge that reads "
        "changes without such wording.")
    min_gap_s: float | None = Field(
        None, ge=0.0,
        description="Off by default. When set, candidates written less than this many seconds "
        "before the new record are never flagged (same-conversation restatements).")


@dataclass(frozen=True)
class GateScores(PairScores):
    """Pair scores of the gate (one entry per candidate).

    Attributes:
        similarity: cosine of the stored vectors.
        t: flag score, the hub score plus the text bonuses and the topic term
            (``-inf`` where a pair can never be flagged: ``min_gap_s``); in
            ``paper`` mode it equals ``a``.
        r_new: hubness of the new record (the same value for every pair).
        r_old: hubness of each candidate inside the pool.
        units: 1.0 where the two texts give different numbers for a shared word.
        cue: 1.0 where the new text has change wording (the same for every pair).
        eligible: False where one text states no fact (never flagged with
            ``statements_only``).
        hub: ``t`` without the topic term (hub score plus the text bonuses): how
            much closer the pair is than its neighbourhood, which the offline
            judge's close-change rule reads; ``None`` in ``paper`` mode.
    """

    similarity: np.ndarray
    t: np.ndarray
    r_new: np.ndarray
    r_old: np.ndarray
    units: np.ndarray
    cue: np.ndarray | None = None
    eligible: np.ndarray | None = None
    hub: np.ndarray | None = None


# ---------------------------------------------------------------------- scores


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    return x / np.maximum(norms, _EPS)[:, None]


def _top_mean(values: np.ndarray, m: int) -> np.ndarray:
    """Row-wise mean of the ``m`` largest entries (``-inf`` entries are absent, count 0)."""
    cols = values.shape[1]
    if cols == 0:
        return np.zeros(values.shape[0], dtype=np.float64)
    if cols > m:
        values = np.partition(values, cols - m, axis=1)[:, cols - m:]
    part = np.where(np.isfinite(values), values, 0.0)
    return part.sum(axis=1, dtype=np.float64) / m


def hub_scores(
    new_vec: np.ndarray, cand_vecs: np.ndarray, *, gamma: float = 1.5, neighbours: int = 5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hubness-normalized similarity of a new vector to each candidate of a pool.

    Args:
        new_vec: the new record's vector ``(dim,)``.
        cand_vecs: the candidate pool ``(n, dim)``.
        gamma: weight of the hubness terms (1 = CSLS).
        neighbours: how many nearest neighbours define a record's hubness.

    Returns:
        ``(t, cos, r_new, r_old)``, each of shape ``(n,)``:
        ``t = cos - gamma * (r_new + r_old) / 2``.
    """
    new = np.asarray(new_vec, dtype=np.float32).reshape(1, -1)
    cands = np.asarray(cand_vecs, dtype=np.float32).reshape(-1, new.shape[1])
    n = cands.shape[0]
    if n == 0:
        empty = np.zeros(0, dtype=np.float64)
        return empty, empty, empty, empty
    u = _unit_rows(cands)
    cos = (u @ _unit_rows(new)[0]).astype(np.float64)
    r_new = float(_top_mean(cos[None, :], neighbours)[0])
    among = u @ u.T
    np.fill_diagonal(among, -np.inf)
    r_old = _top_mean(among, neighbours)
    t = cos - gamma * (r_new + r_old) / 2.0
    return t, cos, np.full(n, r_new), r_old


# -------------------------------------------------------- numbers next to words

_TOKEN = re.compile(r"\$?\d[\d,]*(?:\.\d+)?[k%]?|[a-z]+")
_NUMBER = re.compile(r"^\$?(\d[\d,]*(?:\.\d+)?)([k%]?)$")
_FUNCTION_WORDS = frozenset("""
a about above after again against all also am an and any are as at be been before being
below between both but by can could did do does doing down during each either else ever
every few for from further had has have having he her here hers herself him himself his
how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own per same she should so some such than
that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves around almost nearly roughly exactly only like still
""".split())
_WINDOW = 3
_UNIT_CACHE_SIZE = 8192


def numbers_with_units(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Numbers a text gives and the words next to them.

    A number is a token of digits (``12``, ``1,450``, ``$70``, ``81k``, ``3.5``,
    ``20%``); its *unit words* are the content words (not function words, at
    least 3 letters, a plural ``s`` removed) within 3 tokens of it.

    Returns:
        ``(numbers, unit_words)``; numbers are normalized (``"1,450"`` -> ``"1450"``).
    """
    tokens = _TOKEN.findall(text.lower())
    numbers: set[str] = set()
    units: set[str] = set()
    for i, tok in enumerate(tokens):
        m = _NUMBER.match(tok)
        if m is None:
            continue
        numbers.add(m.group(1).replace(",", "") + m.group(2))
        for j in range(max(0, i - _WINDOW), min(len(tokens), i + _WINDOW + 1)):
            w = tokens[j]
            if j == i or not w.isalpha() or len(w) < 3 or w in _FUNCTION_WORDS:
                continue
            units.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(numbers), frozenset(units)


def shares_changed_quantity(
    a: tuple[frozenset[str], frozenset[str]], b: tuple[frozenset[str], frozenset[str]]
) -> bool:
    """Both texts give numbers next to a shared word, and the numbers differ."""
    return bool(a[0] and b[0] and (a[1] & b[1]) and a[0] != b[0])


# ------------------------------------------------------------------------ gate


class ProposalGate:
    """The write path's default proposal gate (hubness-normalized Sentry).

    Args:
        scorer: the pair scorer giving ``a, b, d`` (a :class:`Sentry`, or a
            cosine gate when no heads match the encoder); its own flags are
            used only in ``paper`` mode.
        config: gate settings; :class:`GateConfig` defaults when ``None``.
    """

    def __init__(self, scorer: PairScorer | Sentry, config: GateConfig | None = None) -> None:
        if not callable(getattr(scorer, "score", None)):
            raise SentryError(f"scorer must have a score() method, got {type(scorer).__name__}")
        self.scorer = scorer
        self.config = config or GateConfig()
        self._units: OrderedDict[str, tuple[frozenset[str], frozenset[str]]] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def thresholds(self) -> SentryThresholds:
        """The paper thresholds of the underlying scorer (used in ``paper`` mode)."""
        th = getattr(self.scorer, "thresholds", None)
        return th if isinstance(th, SentryThresholds) else SentryThresholds()

    def _units_of(self, text: str) -> tuple[frozenset[str], frozenset[str]]:
        with self._lock:
            hit = self._units.get(text)
            if hit is not None:
                self._units.move_to_end(text)
                return hit
        val = numbers_with_units(text)
        with self._lock:
            self._units[text] = val
            while len(self._units) > _UNIT_CACHE_SIZE:
                self._units.popitem(last=False)
        return val

    def score(
        self,
        new_vec: np.ndarray,
        cand_vecs: np.ndarray,
        *,
        new_text: str | None = None,
        cand_texts: Sequence[str] | None = None,
        new_time: datetime | None = None,
        cand_times: Sequence[datetime] | None = None,
    ) -> GateScores:
        """Score one new record against its candidate pool and flag pairs.

        Args:
            new_vec: the new record's vector.
            cand_vecs: the pool's vectors ``(n, dim)`` (the speaker's nearest
                live records plus linked ones).
            new_text: the new record's text (for the number/unit signal).
            cand_texts: the candidates' texts, in pool order.
            new_time: the new record's time (for ``min_gap_s``).
            cand_times: the candidates' times, in pool order.

        Returns:
            :class:`GateScores` with one entry per candidate.

        Raises:
            SentryError: shapes do not match, or texts/times do not match the pool.
        """
        ps = self.scorer.score(new_vec, cand_vecs)
        cands = np.asarray(cand_vecs, dtype=np.float32)
        n = len(ps)
        cands = cands.reshape(n, -1) if n else cands.reshape(0, np.asarray(new_vec).size)
        cfg = self.config
        t, cos, r_new, r_old = hub_scores(new_vec, cands, gamma=cfg.gamma,
                                          neighbours=cfg.neighbours)
        units = np.zeros(n, dtype=np.float64)
        if cand_texts is not None and new_text is not None and n:
            if len(cand_texts) != n:
                raise SentryError(f"{len(cand_texts)} candidate texts for {n} candidates")
            mine = self._units_of(new_text)
            units = np.array([float(shares_changed_quantity(mine, self._units_of(txt)))
                              for txt in cand_texts])
        if cfg.mode == "paper":
            return GateScores(a=ps.a, b=ps.b, d=ps.d, flagged=ps.flagged,
                              similarity=cos.astype(np.float32), t=ps.a.astype(np.float64),
                              r_new=r_new, r_old=r_old, units=units)
        cue = np.zeros(n, dtype=np.float64)
        eligible = np.ones(n, dtype=bool)
        if new_text is not None and n and (cfg.cue_bonus or cfg.statements_only
                                           or cfg.actionable_only):
            from langchain_atma.bank.judge import text_cues

            mine_cues = text_cues(new_text)
            cue[:] = float(mine_cues.change)
            if cfg.statements_only or cfg.actionable_only:
                eligible[:] = (mine_cues.statement or not cfg.statements_only) and (
                    mine_cues.actionable or not cfg.actionable_only)
                if cfg.statements_only and cand_texts is not None and eligible.any():
                    eligible = np.array([text_cues(txt).statement for txt in cand_texts],
                                        dtype=bool)
        hub = t + cfg.unit_bonus * units + cfg.cue_bonus * cue
        t = hub + cfg.topic_weight * np.asarray(ps.a, dtype=np.float64)
        if cfg.min_gap_s is not None and new_time is not None and cand_times is not None:
            if len(cand_times) != n:
                raise SentryError(f"{len(cand_times)} candidate times for {n} candidates")
            close = np.array([(new_time - ct).total_seconds() < cfg.min_gap_s
                              for ct in cand_times], dtype=bool)
            t = np.where(close, -np.inf, t)
            hub = np.where(close, -np.inf, hub)
        flagged = (t >= cfg.tau) & eligible
        if cfg.max_flags is not None and int(flagged.sum()) > cfg.max_flags:
            order = np.argsort(-np.where(flagged, t, -np.inf), kind="stable")[: cfg.max_flags]
            keep = np.zeros(n, dtype=bool)
            keep[order] = True
            flagged &= keep
        return GateScores(a=ps.a, b=ps.b, d=ps.d, flagged=flagged,
                          similarity=cos.astype(np.float32), t=t, r_new=r_new, r_old=r_old,
                          units=units, cue=cue, eligible=eligible, hub=hub)

    def __repr__(self) -> str:
        return f"ProposalGate(scorer={type(self.scorer).__name__}, config={self.config!r})"
