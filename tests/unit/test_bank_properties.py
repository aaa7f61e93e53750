"""Property test: any sequence of events and judge decisions keeps the bank consistent."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.bank.judge import BaseJudge, JudgeInput, SuggestedLink, Verdict
from langchain_atma.bank.write_graph import ingest_events
from langchain_atma.errors import CommitError, RecordNotFoundError
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus

BANK = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
_NS = itertools.count()

TEXTS = [
    "I live in Boston.",
    "I moved to Seattle.",
    "I have a cat named Tom.",
    "Tom passed away.",
    "I love hiking.",
    "I only hike on weekends.",
    "Hello!",
    "I work as a nurse.",
    "I'm a developer now.",
    "My rent is $900 a month.",
]
ACTIONS = ["supersede", "transition", "coexist", "scoped_exception", "keep_both", "noop"]
LINK = {
    "supersede": LinkType.SUPERSEDES,
    "transition": LinkType.EVOLVES_FROM,
    "coexist": LinkType.COEXISTS,
    "scoped_exception": LinkType.SCOPED_EXCEPTION,
}


class ScriptedJudge(BaseJudge):
    """Plays back a random script of verdicts (any action, slot, confidence, bad ids)."""

    def __init__(self, script: list[tuple[str, str | None, float, bool]]) -> None:
        self.script = itertools.cycle(script)

    def judge(self, inp: JudgeInput) -> Verdict:  # noqa: D102
        action, slot, conf, bad_id = next(self.script)
        ctype = (
            "duplicate" if action == "noop" else ("none" if action == "keep_both" else "temporal")
        )
        links = (
            [SuggestedLink(type=LINK[action], target_id="ghost" if bad_id else inp.old.id)]
            if action in LINK
            else []
        )
        return Verdict(
            conflict=action != "keep_both",
            conflict_type=ctype,
            action=action,
            slot=slot,
            confidence=conf,
            suggested_links=links,
            entities=["x"] if conf > 0.5 else [],
        )


events_st = st.lists(
    st.tuples(st.sampled_from(TEXTS), st.sampled_from(["Ann", "Bob", None])),
    min_size=1,
    max_size=10,
)
script_st = st.lists(
    st.tuples(
        st.sampled_from(ACTIONS),
        st.sampled_from([None, "location", "pets", "job"]),
        st.floats(0, 1),
        st.booleans(),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=events_st, script=script_st, k=st.integers(1, 4))
def test_random_write_sequences_keep_the_invariants(
    events: list[tuple[str, str | None]], script: list[Any], k: int
) -> None:
    ns = f"prop{next(_NS)}"
    evs = [
        {"text": t, "speaker": s, "timestamp": 1_700_000_000 + i, "event_id": f"e{i % 7}"}
        for i, (t, s) in enumerate(events)
    ]
    rep = ingest_events(
        BANK, evs, namespace=ns, use_gate=False, candidate_k=k, judge=ScriptedJudge(script)
    )
    assert rep.events == len(evs)
    assert BANK.verify(ns) == []
    recs = BANK.records(ns)
    assert len({r.provenance.source_event_id for r in recs}) == len(recs)  # idempotent
    for r in recs:
        if r.status is RecordStatus.SUPERSEDED:
            assert r.targets(LinkType.SUPERSEDED_BY, LinkType.EVOLVES_TO)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(TEXTS),
            st.sampled_from([None, "location", "hobbies"]),
            st.lists(st.tuples(st.sampled_from(list(CommitAction)), st.integers(0, 9)), max_size=3),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_random_direct_commits_keep_the_invariants(
    ops: list[tuple[str, str | None, list[tuple[CommitAction, int]]]],
) -> None:
    ns = f"direct{next(_NS)}"
    ids: list[str] = []
    for text, slot, decs in ops:
        decisions = [
            CommitDecision(action=a, target_id=ids[i % len(ids)] if ids else "none")
            for a, i in decs
        ]
        rec = MemoryRecord(namespace=ns, content=text, slot=slot)
        try:
            res = BANK.commit(rec, decisions)
        except (CommitError, RecordNotFoundError):
            continue  # rejected before anything was written
        if res.record is not None and res.duplicate_of is None:
            ids.append(res.record.id)
        assert BANK.verify(ns) == []
    assert BANK.count(ns) == len(ids)
