"""The proposal gate of the write path: which earlier records the judge reads.

A long conversation is full of small talk that sits close to everything in
embedding space ("hubs": thanks, greetings, reactions, photo captions), so the
plain nearest neighbours of a new record are often chatter, while the earlier
record of the same state, written with other words, is further down. The gate
removes what every record of the conversation shares before ranking:

``score_j = <c_j, v - gamma * mu>``

where ``v`` is the new record's vector, ``c_j`` a candidate's and ``mu`` the
**centroid** of the namespace (the mean vector of its records,
:meth:`~langchain_atma.bank.bank.StateBank.centroid`). Subtracting the
centroid is a global form of hubness correction (CSLS, Lample et al. 2018,
subtracts each record's local mean similarity): a candidate that is close
to everything loses what it owes to that closeness. The write path asks the
host for the candidates nearest to the *centred* query ``v - gamma * mu``, so
the pool is already ranked this way; the gate flags the ``max_judged`` best
of the pool (records linked to them included) for the learned judge. Measured in
``docs/BENCHMARKS.md`` (``atma bench gate``): centring lifts the share of true
update pairs among a write's 16 best candidates from 0.75 to 0.90 on the
held-out dev file.

No text rule decides here: whether a pair changes anything is the judge's
question. Deterministic: the same vectors give the same flags.

Example:
    >>> import numpy as np
    >>> from langchain_atma.bank.gate import GateConfig, ProposalGate
    >>> gate = ProposalGate(GateConfig(max_judged=1))
    >>> gate.score(np.array([1.0, 0.1, 0.0]), np.eye(3), centre=np.zeros(3)).flagged.tolist()
    [True, False, False]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from langchain_atma.errors import GateError

__all__ = ["GateConfig", "GateScores", "ProposalGate", "centred_query"]

_EPS = 1e-12


class GateConfig(BaseModel):
    """Settings of :class:`ProposalGate` (defaults measured in ``docs/BENCHMARKS.md``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    centre_weight: float = Field(
        1.0,
        ge=0.0,
        le=4.0,
        description="gamma: how much of the namespace centroid is taken from the query "
        "(0 = plain cosine).",
    )
    max_judged: int | None = Field(
        12,
        ge=1,
        description="At most this many candidates per write go to the judge "
        "(the best centred scores); None = every candidate.",
    )
    min_score: float | None = Field(
        None,
        ge=-2.0,
        le=2.0,
        description="Candidates whose centred score is below this are never judged "
        "(None = no floor).",
    )
    statements_only: bool = Field(
        True,
        description="Judge nothing for a new record that states nothing (only "
        "questions, greetings or reactions: langchain_atma.text.cues), and never a "
        "candidate stored as stating nothing (MemoryRecord.states_fact False): a question "
        "neither changes nor is changed by a state.",
    )


@dataclass(frozen=True)
class GateScores:
    """The gate's view of one write's candidates (one entry per candidate).

    Attributes:
        similarity: cosine of the stored vectors.
        score: the centred score ``<c_j, v - gamma * mu>`` the candidates are ranked by.
        flagged: the candidates that go to the judge.
    """

    similarity: np.ndarray
    score: np.ndarray
    flagged: np.ndarray

    def __len__(self) -> int:
        return int(self.flagged.shape[0])


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, _EPS)


def centred_query(vec: np.ndarray, centre: np.ndarray | None, weight: float) -> np.ndarray:
    """The unit query ``v - weight * mu`` (``v`` itself without a centre)."""
    v = _unit(np.asarray(vec, dtype=np.float32).reshape(-1))
    if centre is None or weight == 0.0:
        return v
    q = v - weight * np.asarray(centre, dtype=np.float32).reshape(-1)
    return v if float(np.linalg.norm(q)) < 1e-6 else _unit(q)


class ProposalGate:
    """Ranks a write's candidates by their centred score and flags the best.

    Args:
        config: gate settings; :class:`GateConfig` defaults when ``None``.
    """

    def __init__(self, config: GateConfig | None = None) -> None:
        self.config = config or GateConfig()

    def score(
        self,
        new_vec: np.ndarray,
        cand_vecs: np.ndarray,
        *,
        centre: np.ndarray | None = None,
        eligible: np.ndarray | None = None,
    ) -> GateScores:
        """Score one new record against its candidates and flag pairs.

        Args:
            new_vec: the new record's vector ``(dim,)``.
            cand_vecs: the candidates' vectors ``(n, dim)``.
            centre: the namespace centroid ``(dim,)`` (``None``: plain cosine).
            eligible: candidates that may be flagged at all (default: every one).

        Raises:
            GateError: the shapes do not match.
        """
        new = np.asarray(new_vec, dtype=np.float32).reshape(-1)
        cands = np.asarray(cand_vecs, dtype=np.float32)
        if cands.size == 0:
            empty = np.zeros(0, dtype=np.float32)
            return GateScores(similarity=empty, score=empty, flagged=np.zeros(0, dtype=bool))
        if cands.ndim != 2 or cands.shape[1] != new.shape[0]:
            raise GateError(
                f"candidate vectors {cands.shape} do not match the new vector {new.shape}"
            )
        if centre is not None and np.asarray(centre).size != new.shape[0]:
            raise GateError(
                f"centre of size {np.asarray(centre).size} for vectors of size {new.shape[0]}"
            )
        units = _unit(cands)
        sims = units @ _unit(new)
        cfg = self.config
        score = units @ centred_query(new, centre, cfg.centre_weight)
        flagged = (
            np.ones(len(score), dtype=bool)
            if eligible is None
            else np.asarray(eligible, dtype=bool).reshape(-1).copy()
        )
        if flagged.shape[0] != len(score):
            raise GateError(f"{flagged.shape[0]} eligibility flags for {len(score)} candidates")
        if cfg.min_score is not None:
            flagged &= score >= cfg.min_score
        if cfg.max_judged is not None and int(flagged.sum()) > cfg.max_judged:
            order = np.argsort(-np.where(flagged, score, -np.inf), kind="stable")
            keep = np.zeros(len(score), dtype=bool)
            keep[order[: cfg.max_judged]] = True
            flagged &= keep
        return GateScores(
            similarity=sims.astype(np.float32), score=score.astype(np.float32), flagged=flagged
        )

    def __repr__(self) -> str:
        return f"ProposalGate({self.config!r})"
