"""Candidate pool C_q = Dedup(A_q + R_q + N_q) and the stable pre-rank.

The pool is built in two steps (paper, section 4.4, eq. 9-10):

1. **Seeds** ``A_q``: the host's own semantic search (bucket ``seed``), in host
   order, with the host score kept (:func:`speaker_seed_rows`: for a question
   about one speaker, that speaker's own turns first and another speaker's
   scores lowered by ``other_speaker_penalty``).
2. **Hops**, view-conditioned, following the typed links of the bank:

   * relation hops ``R_q`` (bucket ``relation``):

     - when the view is **not historical**: from every seed holding a forward
       link (``superseded_by`` / ``evolves_to``), walk forward to the live head
       of the chain, adding every record on the way;
     - when the view is **not current**: walk backward (``supersedes`` /
       ``evolves_from``) to the oldest predecessor;
     - always: the transition links (``evolves_to`` / ``evolves_from``) of a
       seed (one hop when the view does not walk that direction), and the
       ``coexists`` / ``scoped_exception`` partners of every seed and of every
       record reached by a walk (one hop, partners are not expanded further);

   * neighbour hops ``N_q`` (bucket ``neighbour``): the weaker ``related``
     links of the seeds, one hop, used as support only.

``Dedup`` keeps the first occurrence, so the order is seeds, then relation
rows level by level (parent order, then link order), then neighbours;
``prerank`` is the position in that order. The stable pre-rank is also the
fallback packet order when the controller is off or fails.

Cost: no record is re-embedded; each hop level costs one ``get_many`` call
(ids already in the pool are never fetched again), whatever the number of rows.
Every read is scoped to the namespace, so a link can never pull a record of
another namespace into the pool.

Example:
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> from langchain_atma.bank import StateBank, CommitDecision, CommitAction
    >>> from langchain_atma.records import MemoryRecord
    >>> from langchain_atma.retrieval.packets import QueryProfile, QueryView
    >>> bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    >>> old = bank.add(MemoryRecord(namespace="u", content="I live in Boston.", slot="loc"))
    >>> new = bank.commit(MemoryRecord(namespace="u", content="I moved to Tarnby.", slot="loc"),
    ...     [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)]).record
    >>> prof = QueryProfile(query="Where do I live now?", view=QueryView.CURRENT)
    >>> pool = build_pool(bank, "u", prof, seed_k=1)
    >>> sorted(r.id for r in pool) == sorted([old.id, new.id])
    True
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from langchain_atma._checks import optional_non_negative
from langchain_atma.errors import InvalidQueryError
from langchain_atma.records import LinkType, MemoryRecord, validate_namespace
from langchain_atma.retrieval.packets import (
    DEFAULT_SEED_K,
    Bucket,
    EvidenceRow,
    QueryProfile,
    QueryView,
)
from langchain_atma.retrieval.rewrite import (
    first_person_query,
    name_candidates,
    the_named_speaker,
)

if TYPE_CHECKING:  # pragma: no cover
    from langchain_atma.bank.bank import ScoredRecord, StateBank

__all__ = [
    "DEFAULT_MAX_HOPS",
    "DEFAULT_NO_FACT_PENALTY",
    "DEFAULT_OTHER_SPEAKER_PENALTY",
    "MAX_QUERY_CHARS",
    "SeedSearch",
    "SpeakerDirectory",
    "build_pool",
    "demote_no_fact",
    "expand_pool",
    "seed_rows",
    "speaker_seed_rows",
    "stable_prerank",
    "top_k",
    "validate_k",
    "validate_no_fact_penalty",
    "validate_query",
    "validate_speaker_penalty",
]

MAX_QUERY_CHARS = 100_000
"""Longest question accepted (characters). Longer input raises InvalidQueryError.

The encoder only reads the first few hundred tokens anyway; rejecting absurd
input keeps the read path bounded instead of silently answering a question the
caller did not mean to send.
"""

DEFAULT_MAX_HOPS = 8
"""Longest walk along a supersession / transition chain, in links."""

_WIDEN = 3
"""With a preferred speaker, the host is asked for ``3 * seed_k`` hits to re-rank."""

DEFAULT_OTHER_SPEAKER_PENALTY = 0.05
"""Seed-score penalty for another speaker's turn when the question names one speaker.

A question about one speaker ("Who is Ginevra's mentor now?") is answered from that
speaker's own statements; the other speaker's turns that talk *about* the topic
("your one-on-one mentoring will push dancers") are close in the encoder and
crowd the seeds. They are kept, a little lower: a hard filter lost LoCoMo's
adversarial questions, whose evidence is the other speaker's turn (seed search and
LoCoMo sections of docs/BENCHMARKS.md).
"""

DEFAULT_NO_FACT_PENALTY = 0.10
"""Seed-score penalty for a record that states no fact (``states_fact`` False).

Questions and reactions ("What got you into running?", "Wow, that's awesome! How
did it feel?") repeat the words of the topic they ask about, so the encoder puts
them close to a question on that topic, where they take the places of the
statements that hold the answer. They stay seeds (a question can still be the
closest match), ranked 0.10 lower. The flag is set once by the write path, so the
read path reads no text (seed search section of docs/BENCHMARKS.md).
"""

_FORWARD = (LinkType.SUPERSEDED_BY, LinkType.EVOLVES_TO)
_BACKWARD = (LinkType.SUPERSEDES, LinkType.EVOLVES_FROM)
_PARTNERS = (LinkType.COEXISTS, LinkType.SCOPED_EXCEPTION)
_BUCKET_ORDER = {Bucket.SEED: 0, Bucket.RELATION: 1, Bucket.NEIGHBOUR: 2}

# A pending hop: (parent id, link followed, target id, walk direction of the target).
# Direction "fwd"/"back" continues the walk; "" stops at the target.
_Hop = tuple[str, LinkType, str, str]


def validate_query(query: object) -> str:
    """Check a question and return it unchanged.

    Raises:
        InvalidQueryError: when the question is not a string, is empty or only
            whitespace, or is longer than :data:`MAX_QUERY_CHARS`.
    """
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    if not query.strip():
        raise InvalidQueryError("query is empty or whitespace")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(
            f"query has {len(query)} characters; the limit is {MAX_QUERY_CHARS}. "
            "Send the question itself, not a document."
        )
    return query


def validate_k(k: object, name: str = "k") -> int:
    """Check a result count and return it.

    Raises:
        InvalidQueryError: when ``k`` is not a positive integer.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or int(k) < 1:
        raise InvalidQueryError(f"{name} must be a positive integer, got {k!r}")
    return int(k)


def seed_rows(
    bank: StateBank,
    namespace: str,
    query: str,
    *,
    seed_k: int = DEFAULT_SEED_K,
    query_vector: Sequence[float] | np.ndarray | None = None,
) -> list[EvidenceRow]:
    """A_q: the host's semantic hits, in host order, with their scores.

    Args:
        bank: the state bank.
        namespace: the namespace searched (never crossed).
        query: the question (embedded unless ``query_vector`` is given).
        seed_k: number of seeds asked from the host.
        query_vector: a precomputed query embedding (skips the encoder).

    Raises:
        InvalidQueryError: for a bad question or ``seed_k``.
        NamespaceError: for a malformed namespace.
    """
    validate_namespace(namespace)
    seed_k = validate_k(seed_k, "seed_k")
    if query_vector is None:
        validate_query(query)
        query_vector = bank.embed_query(query)
    hits = bank.search_by_vector(namespace, query_vector, seed_k)
    return [
        EvidenceRow(record=h.record, bucket=Bucket.SEED, score=float(h.score), prerank=i)
        for i, h in enumerate(hits)
    ]


# one probe vector per bank (weakly held: a dropped bank drops its probe)
_PROBES: weakref.WeakKeyDictionary[StateBank, np.ndarray] = weakref.WeakKeyDictionary()
_PROBES_LOCK = threading.Lock()


class SpeakerDirectory:
    """Which names are speakers of a namespace (asked from the bank, cached).

    A name is a speaker when the namespace holds at least one record whose
    provenance speaker is exactly that name (one filtered host query, top-1).
    Positive answers are cached for good; negative ones for ``negative_ttl_s``
    seconds, so a speaker written later (by another process, too) is found.

    Args:
        negative_ttl_s: how long "not a speaker" is remembered.
        max_entries: cache size (oldest entries are dropped first).
        enabled: ``False`` = know no speaker (turns the rewrite off).
    """

    def __init__(
        self, negative_ttl_s: float = 60.0, max_entries: int = 4096, *, enabled: bool = True
    ) -> None:
        self.enabled = enabled
        self.negative_ttl_s = negative_ttl_s
        self.max_entries = max_entries
        self._known: dict[tuple[str, str], tuple[bool, float]] = {}
        self._lock = threading.Lock()

    def probe_vector(
        self, bank: StateBank, hint: Sequence[float] | np.ndarray | None = None
    ) -> np.ndarray:
        """Any vector of the bank's dimension, for the top-1 speaker checks.

        The check only asks whether a row exists, so the vector's direction does
        not matter; it is computed once per bank and process (from ``hint`` when
        given) and reused by every directory and call.
        """
        with _PROBES_LOCK:
            vec = _PROBES.get(bank)
        if vec is None:
            vec = np.asarray(
                hint if hint is not None else bank.embed_query("speaker"), dtype=np.float32
            )
            with _PROBES_LOCK:
                _PROBES[bank] = vec
        return vec

    def is_speaker(
        self, bank: StateBank, namespace: str, name: str, vector: Sequence[float] | np.ndarray
    ) -> bool:
        """True when ``name`` speaks in ``namespace``."""
        if not self.enabled:
            return False
        key = (namespace, name)
        now = time.monotonic()
        with self._lock:
            hit = self._known.get(key)
        if hit is not None and (hit[0] or now - hit[1] < self.negative_ttl_s):
            return hit[0]
        found = bool(bank.search_by_vector(namespace, vector, 1, speaker=name))
        with self._lock:
            if len(self._known) >= self.max_entries:
                for old in list(self._known)[: self.max_entries // 4]:
                    del self._known[old]
            self._known[key] = (found, now)
        return found


@dataclass
class SeedSearch:
    """What the seed step searched with (for the trace)."""

    speaker: str | None = None
    """The speaker the question was rewritten for (first person)."""
    rewritten: str | None = None
    candidates: list[str] = field(default_factory=list)
    preferred: str | None = None
    """The one speaker the question names, whose own turns were ranked ahead of
    other speakers' turns (``None``: plain host order)."""
    own_hits: int = 0
    """Seeds that are the preferred speaker's own turns."""
    host_ms: float = 0.0
    """Time of the host search (the host's own cost)."""
    rewrite_ms: float = 0.0
    """Time of the name candidates, speaker checks and rewrite (overlay)."""
    embed_ms: float = 0.0
    """Time of the question's embedding (of the rewrite when there is one); 0 when
    a precomputed vector was used as is."""


def speaker_seed_rows(
    bank: StateBank,
    namespace: str,
    query: str,
    *,
    seed_k: int = DEFAULT_SEED_K,
    speakers: SpeakerDirectory | None = None,
    query_vector: Sequence[float] | np.ndarray | None = None,
    other_speaker_penalty: float | None = DEFAULT_OTHER_SPEAKER_PENALTY,
    no_fact_penalty: float | None = DEFAULT_NO_FACT_PENALTY,
) -> tuple[list[EvidenceRow], SeedSearch]:
    """A_q with a speaker-aware rewrite (see :mod:`langchain_atma.retrieval.rewrite`).

    When the question names exactly one speaker of the namespace, the host is
    searched with the question in that speaker's first person instead of the
    question as asked (still one embedding and one host search). The host is
    then asked for ``3 * seed_k`` hits; another speaker's turn scores
    ``other_speaker_penalty`` below its host similarity, and the best
    ``seed_k`` are kept (score order, host order breaking ties). A question
    about one speaker's state is answered from that speaker's statements,
    while a turn of the other speaker that is much closer still gets in.
    Without a speaker this is :func:`seed_rows`. Searching the rewrite alone beat fusing
    both hit lists (best score per record) on held-out questions: the plain
    question's hits are mostly turns that merely name the speaker, and their
    scores crowd the fused list (docs/BENCHMARKS.md).

    Args:
        bank: the state bank.
        namespace: the namespace searched (never crossed).
        query: the question.
        seed_k: number of seeds kept.
        speakers: the speaker cache (a fresh one when ``None``).
        query_vector: a precomputed embedding of ``query``, used when no rewrite
            is made (a rewrite is embedded here).
        other_speaker_penalty: how much lower another speaker's turn scores
            when the question names one speaker (``None``: plain host order, no
            preference). The rows' ``score`` is the adjusted score.
        no_fact_penalty: how much lower a seed scores when its record states no
            fact (``states_fact`` is False: only a question, greeting or
            reaction); the seeds are re-sorted by the adjusted score, host order
            breaking ties. ``None`` or 0: no change. Records with ``states_fact``
            ``None`` (not analysed) are never demoted.

    Returns:
        ``(rows, info)``: the seeds and what was searched.

    Raises:
        InvalidQueryError: for a bad question or ``seed_k``.
        ConfigError: for a negative or non-finite ``other_speaker_penalty`` or
            ``no_fact_penalty``.
        NamespaceError: for a malformed namespace.
    """
    validate_namespace(namespace)
    seed_k = validate_k(seed_k, "seed_k")
    validate_query(query)
    validate_speaker_penalty(other_speaker_penalty)
    validate_no_fact_penalty(no_fact_penalty)
    t0 = time.perf_counter()
    embed_s = 0.0
    info = SeedSearch(candidates=name_candidates(query))
    directory = speakers if speakers is not None else SpeakerDirectory()
    name: str | None = None
    if info.candidates and directory.enabled:
        probe = directory.probe_vector(bank, query_vector)
        name = the_named_speaker(
            [n for n in info.candidates if directory.is_speaker(bank, namespace, n, probe)]
        )
    text = query
    if name is not None:
        rewritten = first_person_query(query, name)
        if rewritten != query:
            info.speaker, info.rewritten = name, rewritten
            text = rewritten
    if text is query and query_vector is not None:
        svec: Sequence[float] | np.ndarray = query_vector
    else:  # the question's one embedding (of the rewrite when there is one)
        te = time.perf_counter()
        svec = bank.embed_query(text)
        embed_s = time.perf_counter() - te
    preferred = name if other_speaker_penalty is not None else None
    t1 = time.perf_counter()
    hits = bank.search_by_vector(namespace, svec, seed_k * (_WIDEN if preferred else 1))
    info.host_ms = (time.perf_counter() - t1) * 1e3
    info.embed_ms = embed_s * 1e3
    t2 = time.perf_counter()
    if preferred is None:
        ranked = [(h.record, float(h.score)) for h in hits]
    else:
        assert other_speaker_penalty is not None
        ranked = _prefer_speaker(hits, preferred, other_speaker_penalty, seed_k)
        info.preferred = preferred
        info.own_hits = sum(1 for rec, _ in ranked if rec.provenance.speaker == preferred)
    if no_fact_penalty:
        ranked = demote_no_fact(ranked, no_fact_penalty)
    info.rewrite_ms = (t1 - t0 - embed_s + time.perf_counter() - t2) * 1e3
    rows = [
        EvidenceRow(record=rec, bucket=Bucket.SEED, score=score, prerank=i)
        for i, (rec, score) in enumerate(ranked)
    ]
    return rows, info


def validate_speaker_penalty(value: object) -> float | None:
    """Check an ``other_speaker_penalty`` (a finite number >= 0, or ``None``).

    Raises:
        ConfigError: for anything else.
    """
    return optional_non_negative(value, "other_speaker_penalty")


def validate_no_fact_penalty(value: object) -> float | None:
    """Check a ``no_fact_penalty`` (a finite number >= 0, or ``None``).

    Raises:
        ConfigError: for anything else.
    """
    return optional_non_negative(value, "no_fact_penalty")


def demote_no_fact(
    ranked: Sequence[tuple[MemoryRecord, float]],
    penalty: float,
) -> list[tuple[MemoryRecord, float]]:
    """Scores of records that state no fact lowered by ``penalty``, then re-sorted.

    Only ``states_fact is False`` counts (``None`` = not analysed, kept as is);
    the sort is stable, so equal scores keep their order.

    Example:
        >>> from langchain_atma.records import MemoryRecord
        >>> q = MemoryRecord(namespace="u", content="How was it?", states_fact=False)
        >>> f = MemoryRecord(namespace="u", content="I run 5k.", states_fact=True)
        >>> [(r.content, round(s, 2)) for r, s in demote_no_fact([(q, 0.6), (f, 0.55)], 0.1)]
        [('I run 5k.', 0.55), ('How was it?', 0.5)]
    """
    scored = [
        (rec, score - penalty if rec.states_fact is False else score) for rec, score in ranked
    ]
    return sorted(scored, key=lambda p: -p[1])


def _prefer_speaker(
    hits: Sequence[ScoredRecord],
    speaker: str,
    penalty: float,
    seed_k: int,
) -> list[tuple[MemoryRecord, float]]:
    """Another speaker's hits score ``penalty`` lower; the best ``seed_k`` are kept."""
    scored = [
        (h.record, float(h.score) - (penalty if h.record.provenance.speaker != speaker else 0.0))
        for h in hits
    ]
    return sorted(scored, key=lambda p: -p[1])[:seed_k]  # stable: host order breaks ties


def _seed_hops(rec: MemoryRecord, view: QueryView) -> tuple[list[_Hop], list[_Hop]]:
    """Relation and neighbour hops leaving one seed."""
    walk_fwd = view is not QueryView.HISTORICAL
    walk_back = view is not QueryView.CURRENT
    rel: list[_Hop] = []
    nbr: list[_Hop] = []
    for lk in rec.links:
        t = lk.type
        if t in _FORWARD:
            if walk_fwd:
                rel.append((rec.id, t, lk.target, "fwd"))
            elif t is LinkType.EVOLVES_TO:
                rel.append((rec.id, t, lk.target, ""))
        elif t in _BACKWARD:
            if walk_back:
                rel.append((rec.id, t, lk.target, "back"))
            elif t is LinkType.EVOLVES_FROM:
                rel.append((rec.id, t, lk.target, ""))
        elif t in _PARTNERS:
            rel.append((rec.id, t, lk.target, ""))
        elif t is LinkType.RELATED:
            nbr.append((rec.id, t, lk.target, ""))
    return rel, nbr


def _walk_hops(rec: MemoryRecord, direction: str) -> list[_Hop]:
    """Hops leaving a record reached by a forward or backward walk."""
    links = _FORWARD if direction == "fwd" else _BACKWARD
    out: list[_Hop] = []
    for lk in rec.links:
        if lk.type in links:
            out.append((rec.id, lk.type, lk.target, direction))
        elif lk.type in _PARTNERS:
            out.append((rec.id, lk.type, lk.target, ""))
    return out


def expand_pool(
    bank: StateBank,
    namespace: str,
    seeds: Sequence[EvidenceRow],
    profile: QueryProfile,
    *,
    max_hops: int = DEFAULT_MAX_HOPS,
) -> list[EvidenceRow]:
    """C_q: seeds followed by their relation and neighbour hops, deduplicated.

    Args:
        bank: the state bank.
        namespace: the namespace (link targets of other namespaces are ignored).
        seeds: ``A_q`` rows, in host order.
        profile: the query profile (its view conditions the walk).
        max_hops: longest chain walk, in links.

    Returns:
        The pool in stable pre-rank order (``prerank`` = position).
    """
    validate_namespace(namespace)
    view = profile.view
    pool: list[EvidenceRow] = []
    seen: set[str] = set()
    for s in seeds:
        if s.id not in seen:
            seen.add(s.id)
            pool.append(s)

    frontier: list[_Hop] = []
    neighbour_hops: list[_Hop] = []
    for s in pool:
        rel, nbr = _seed_hops(s.record, view)
        frontier.extend(rel)
        neighbour_hops.extend(nbr)

    relation_rows: list[EvidenceRow] = []
    neighbour_cache: dict[str, MemoryRecord] = {}
    depth = 0
    while frontier and depth < max_hops:
        depth += 1
        wanted = [h for h in frontier if h[2] not in seen]
        # the neighbour look-up rides on the first relation level's call
        extra = [h[2] for h in neighbour_hops if h[2] not in seen] if depth == 1 else []
        ids = list(dict.fromkeys([h[2] for h in wanted] + extra))
        fetched = {r.id: r for r in bank.get_many(namespace, ids)} if ids else {}
        if depth == 1:
            neighbour_cache = {i: fetched[i] for i in extra if i in fetched}
        nxt: list[_Hop] = []
        for parent, link, target, direction in wanted:
            rec = fetched.get(target)
            if rec is None or target in seen:
                continue
            seen.add(target)
            relation_rows.append(
                EvidenceRow(record=rec, bucket=Bucket.RELATION, relation=link.value, via=parent)
            )
            if direction:
                nxt.extend(_walk_hops(rec, direction))
        frontier = nxt
    if depth == 0 and neighbour_hops:
        ids = list(dict.fromkeys(h[2] for h in neighbour_hops if h[2] not in seen))
        neighbour_cache = {r.id: r for r in bank.get_many(namespace, ids)} if ids else {}

    neighbour_rows: list[EvidenceRow] = []
    for parent, link, target, _ in neighbour_hops:
        rec = neighbour_cache.get(target)
        if rec is None or target in seen:
            continue
        seen.add(target)
        neighbour_rows.append(
            EvidenceRow(record=rec, bucket=Bucket.NEIGHBOUR, relation=link.value, via=parent)
        )

    out = pool + relation_rows + neighbour_rows
    for i, row in enumerate(out):
        if row.prerank != i:
            if i < len(pool):  # a caller's seed row: never mutated
                row = out[i] = row.model_copy()
            row.prerank = i
    return out


def build_pool(
    bank: StateBank,
    namespace: str,
    profile: QueryProfile,
    *,
    seed_k: int = DEFAULT_SEED_K,
    query_vector: Sequence[float] | np.ndarray | None = None,
    max_hops: int = DEFAULT_MAX_HOPS,
) -> list[EvidenceRow]:
    """Seeds plus view-conditioned hops: the candidate pool C_q in pre-rank order.

    Args:
        bank: the state bank.
        namespace: the namespace searched (never crossed).
        profile: the query profile; ``profile.query`` is embedded unless
            ``query_vector`` is given.
        seed_k: number of host seeds.
        query_vector: a precomputed query embedding.
        max_hops: longest chain walk, in links.

    Raises:
        InvalidQueryError: for a bad question or ``seed_k``.
        NamespaceError: for a malformed namespace.
    """
    seeds = seed_rows(bank, namespace, profile.query, seed_k=seed_k, query_vector=query_vector)
    return expand_pool(bank, namespace, seeds, profile, max_hops=max_hops)


def stable_prerank(rows: Iterable[EvidenceRow]) -> list[EvidenceRow]:
    """The stable pre-rank pi_0: bucket order (seed, relation, neighbour), ties kept.

    Returns copies with ``prerank`` set to the position and controller marks
    cleared; on a pool from :func:`build_pool` the order is unchanged.
    """
    ordered = sorted(enumerate(rows), key=lambda p: (_BUCKET_ORDER.get(p[1].bucket, 3), p[0]))
    return [
        row.model_copy(
            update={"prerank": i, "selected_by_controller": False, "controller_rank": None}
        )
        for i, (_, row) in enumerate(ordered)
    ]


def top_k(rows: Sequence[EvidenceRow], k: int) -> list[EvidenceRow]:
    """The first ``k`` rows of an ordered list (all of them when fewer).

    Raises:
        InvalidQueryError: when ``k`` is not a positive integer.
    """
    return list(rows[: validate_k(k)])
