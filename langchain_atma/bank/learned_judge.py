"""The learned state-change judge: the default judge of the write path.

:class:`LearnedJudge` reads the two texts of a candidate pair as one input,
``[CLS] old [SEP] new [SEP]``, through the learned state model
(:mod:`langchain_atma.state_model`: a MiniLM cross-encoder trained on the
project's corpus, int8, offline) and takes the fusion action and the conflict
type of the pair from its two pair heads.

Before the model, the structural checks answer without it
(:func:`~langchain_atma.bank.judge.structural_verdict`: a new record that is
not later than the old one, or said by another speaker, changes nothing; the
same normalized text is a duplicate).

Decision: the most probable action wins, except that a link (any action but
``keep_both``) needs at least ``link_threshold`` probability (default from the
card: chosen on the corpus's unseen-slot split); the conflict type is the most
probable one that the action allows. ``Verdict.confidence`` is the chosen
action's probability; :class:`~langchain_atma.bank.judge.EscalatingJudge`
sends verdicts below its ``escalate_below`` to a chat model.

Example:
    >>> from langchain_atma.bank.judge import JudgeInput
    >>> from langchain_atma.bank.learned_judge import LearnedJudge
    >>> from langchain_atma.records import MemoryRecord, Provenance
    >>> old = MemoryRecord(namespace="u", content="I rent a studio above the bakery.",
    ...                    time="2023-01-01", provenance=Provenance(speaker="Ann"))
    >>> new = MemoryRecord(namespace="u", content="We got the keys to our own house today!",
    ...                    time="2023-06-01", provenance=Provenance(speaker="Ann"))
    >>> LearnedJudge().judge(JudgeInput(old=old, new=new)).action  # doctest: +SKIP
    'supersede'
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np

from langchain_atma.bank.judge import (
    BaseJudge,
    ConflictType,
    FusionAction,
    JudgeInput,
    Verdict,
    structural_verdict,
)
from langchain_atma.errors import ConfigError
from langchain_atma.state_model import StateModel, default_model

__all__ = ["LearnedJudge", "default_judge"]

_ALLOWED_TYPES: dict[str, tuple[str, ...]] = {
    "supersede": ("temporal", "negation", "value"),
    "transition": ("temporal", "negation", "value"),
    "coexist": ("scope",),
    "scoped_exception": ("scope",),
    "noop": ("duplicate",),
    "keep_both": ("none",),
}


class LearnedJudge(BaseJudge):
    """The cross-encoder judge (offline, deterministic, a few ms per pair).

    Args:
        model_path: a ``.onnx`` state model (its card beside it); default the
            shipped one, shared with the profiler.
        link_threshold: least probability of a linking action; ``None`` = the card's.

    Raises:
        JudgeModelError: the model or its card is missing, corrupt or unreadable.
        ConfigError: a bad argument.
    """

    def __init__(
        self, model_path: str | Path | None = None, *, link_threshold: float | None = None
    ) -> None:
        if link_threshold is not None and not 0.0 <= float(link_threshold) <= 1.0:
            raise ConfigError(f"link_threshold must be in [0, 1], got {link_threshold!r}")
        self.model: StateModel = default_model() if model_path is None else StateModel(model_path)
        self.link_threshold = float(
            link_threshold
            if link_threshold is not None
            else self.model.card.get("link_threshold", 0.0)
        )

    def __repr__(self) -> str:
        return (
            f"LearnedJudge(model={self.model.path.name!r}, link_threshold={self.link_threshold:g})"
        )

    def _verdict(self, pa: np.ndarray, pt: np.ndarray) -> Verdict:
        actions, types = self.model.actions, self.model.types
        best = int(np.argmax(pa))
        action, top = actions[best], float(pa[best])
        if action != "keep_both" and top < self.link_threshold:
            reason = (
                f"learned judge: {action} p={top:.2f} is below the link threshold "
                f"{self.link_threshold:g}: keep_both"
            )
            action = "keep_both"
        else:
            keep = float(pa[actions.index("keep_both")])
            reason = f"learned judge: {action} p={top:.2f}, keep_both p={keep:.2f}"
        ctype = max(_ALLOWED_TYPES[action], key=lambda c: pt[types.index(c)])
        p = float(pa[actions.index(action)])
        return Verdict(
            conflict=action not in ("keep_both", "noop"),
            conflict_type=cast(ConflictType, ctype),
            action=cast(FusionAction, action),
            reason=reason,
            confidence=round(p, 4),
            source="offline",
        )

    def judge(self, inp: JudgeInput) -> Verdict:
        """Audit one pair."""
        return self.judge_many([inp])[0]

    def judge_many(self, inps: Sequence[JudgeInput]) -> list[Verdict]:
        """Audit several pairs (each runs alone through the model: see the state model)."""
        out: list[Verdict | None] = [structural_verdict(i) for i in inps]
        todo = [k for k, v in enumerate(out) if v is None]
        if todo:
            pa, pt = self.model.pair_probabilities(
                [(inps[k].old.content, inps[k].new.content) for k in todo]
            )
            for row, k in enumerate(todo):
                out[k] = self._verdict(pa[row], pt[row])
        return [v for v in out if v is not None]

    async def ajudge_many(self, inps: Sequence[JudgeInput]) -> list[Verdict]:
        """Audit several pairs off the event loop."""
        return await asyncio.to_thread(self.judge_many, inps)


@functools.lru_cache(maxsize=1)
def default_judge() -> LearnedJudge:
    """The learned judge over the shipped model (one per process)."""
    return LearnedJudge()
