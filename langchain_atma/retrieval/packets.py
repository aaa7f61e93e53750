"""Types shared by the retrieval and QA levels: query profiles and evidence packets.

Example:
    >>> from langchain_atma.retrieval.packets import QueryView, QueryProfile
    >>> QueryProfile(query="Where do I live now?", view=QueryView.CURRENT).view.value
    'current'
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field

from langchain_atma.records import MemoryRecord

DEFAULT_K = 5
"""Rows of an evidence packet, unless asked otherwise."""
DEFAULT_SEED_K = 10
"""Host seed hits of a question, unless asked otherwise (at least ``k``)."""

__all__ = [
    "DEFAULT_K",
    "DEFAULT_SEED_K",
    "Bucket",
    "EvidenceLabel",
    "EvidencePacket",
    "EvidenceRow",
    "QueryProfile",
    "QueryView",
]


class QueryView(str, Enum):
    """Which state a question asks about."""

    CURRENT = "current"
    HISTORICAL = "historical"
    TRANSITION = "transition"
    NEUTRAL = "neutral"


class Bucket(str, Enum):
    """Where a pool row came from."""

    SEED = "seed"
    """Host semantic search hit (A_q)."""
    RELATION = "relation"
    """Reached through a state link (R_q)."""
    NEIGHBOUR = "neighbour"
    """Reached through a weak semantic/related link (N_q)."""


class EvidenceLabel(str, Enum):
    """State labels shown to the answer model."""

    CURRENT = "current memory"
    HISTORICAL = "historical memory"
    TRANSITION = "transition memory"
    TRANSITION_LINKED = "transition linked memory"
    RETRIEVED = "retrieved memory"


class QueryProfile(BaseModel):
    """Output of the query profiler psi(q)."""

    query: str = Field(description="The question as asked.")
    view: QueryView = Field(description="The requested state view v_q.")
    probabilities: dict[str, float] = Field(
        default_factory=dict,
        description="The profiler's probability of each view (empty when the view was set "
        "by the caller).",
    )


class EvidenceRow(BaseModel):
    """One row of the candidate pool / evidence packet."""

    record: MemoryRecord = Field(description="The bank record.")
    bucket: Bucket = Field(description="Pool bucket the row entered through.")
    score: float | None = Field(
        default=None,
        description="Seed score (seeds only): the host similarity, less the other-speaker "
        "penalty for another speaker's turn when the question names one speaker.",
    )
    relation: str | None = Field(
        default=None,
        description="For relation/neighbour rows: the link type followed to reach it "
        "(e.g. 'superseded_by' means: this row supersedes the seed it was reached from).",
    )
    via: str | None = Field(default=None, description="Id of the row it was reached from.")
    prerank: int = Field(default=0, description="Position in the stable pre-rank (0-based).")
    selected_by_controller: bool = Field(
        default=False, description="The bounded controller picked this row."
    )
    controller_rank: int | None = Field(default=None, description="Controller order, if picked.")
    label: EvidenceLabel | None = Field(default=None, description="QA label, once projected.")

    @property
    def id(self) -> str:
        """The record id."""
        return self.record.id


class EvidencePacket(BaseModel):
    """The top-k evidence handed to QA, with its trace."""

    profile: QueryProfile = Field(description="The query profile.")
    rows: list[EvidenceRow] = Field(default_factory=list, description="Packet rows, in order.")
    pool_size: int = Field(default=0, description="Size of the deduplicated pool C_q.")
    controller_applied: bool = Field(default=False, description="Controller order used.")
    controller_status: str = Field(
        default="off", description="off | applied | shadow | fallback:<reason>."
    )
