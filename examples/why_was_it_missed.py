"""Why did the memory miss a change? Ask the write audit.

Three facts of one user change. The learned judge links the move from Boston to
Seattle ("I moved to ...") and the new bedtime, told without any change word; it
reads the steak dinner as one evening, not the end of being vegetarian, and keeps
both. ``ingest_events(..., audit=[])`` records, for every write, what the bank
level saw and decided: the candidate pool, the pairs the gate flagged, the judge's
verdicts and the decisions committed. ``WriteAudit.step`` then tells at
which step a link that should exist was lost: not a candidate, not flagged, judged
otherwise, or not applied.

Run: ``python examples/why_was_it_missed.py``
"""

from __future__ import annotations

from langchain_atma.bank import StateBank
from langchain_atma.bank.write_graph import WriteAudit, ingest_events

TURNS = [
    ("e1", "2024-01-05", "I live in Boston, two blocks from the harbour."),
    ("e2", "2024-01-20", "I'm vegetarian, haven't eaten meat in years."),
    ("e3", "2024-01-28", "I'm a night owl, rarely asleep before 2am."),
    ("e4", "2024-02-02", "Made pancakes this morning, the kids loved them."),
    ("e5", "2024-03-15", "I moved to Seattle last month, the mountains are unreal."),
    ("e6", "2024-04-01", "Grilled steaks for everyone last night, best burger of my life."),
    ("e7", "2024-04-09", "Asleep before ten most nights lately, and up with the sun."),
]

CHANGES = [("e1", "e5", "home"), ("e2", "e6", "diet"), ("e3", "e7", "sleep")]


def main() -> None:
    bank = StateBank.in_memory()
    events = [
        {"event_id": eid, "timestamp": ts, "speaker": "Ann", "text": text}
        for eid, ts, text in TURNS
    ]
    audit: list[WriteAudit] = []
    report = ingest_events(bank, events, namespace="ann", audit=audit)
    print(f"writes: {report.writes}, judge calls: {report.judge_calls}")
    by_event = {r.provenance.source_event_id: r for r in bank.records("ann")}
    audit_of = {a.event_id: a for a in audit}
    for old_ev, new_ev, what in CHANGES:
        old, new = by_event[old_ev], by_event[new_ev]
        write = audit_of[new_ev]  # the link old -> new is decided when new is written
        step = write.step(old.id, {"supersede", "transition"})
        verdict = write.verdicts.get(old.id, "no verdict")
        print(f"{what}: {step} ({verdict}); the old record is {old.status.value}")
        print(f"    old: {old.content}")
        print(f"    new: {new.content}")
    # not_candidate / not_flagged: the judge never read the pair; judged_otherwise: it
    # read it and chose another action. With a chat model, the pairs the learned judge
    # is unsure of go to it: EscalatingJudge(LearnedJudge(), LLMJudge(ChatOllama(...))).


if __name__ == "__main__":
    main()
