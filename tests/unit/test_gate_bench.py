"""`atma bench gate` on a tiny hand-made LTP file (real MiniLM, no bank, no judge)."""

from __future__ import annotations

import pytest

from langchain_atma.benchmarks.gate_bench import markdown_table, run_gate_bench
from langchain_atma.cli import build_parser
from langchain_atma.errors import ConfigError
from tests.unit.ltp_docs import write_one_profile

_EVENTS = [
    ("e1", "2023-01-01T10:00:00", "Ana", "Hi Ben, how was your weekend?", "dialog"),
    ("e2", "2023-01-01T10:01:00", "Ben", "Great, we went hiking in the hills.", "dialog"),
    ("e3", "2023-01-02T10:00:00", "Ana", "My commute is about 35 minutes by train.", "cue_old"),
    ("e4", "2023-01-02T10:01:00", "Ben", "That's not bad at all.", "dialog"),
    ("e5", "2023-01-05T10:00:00", "Ana", "Thanks, that means a lot to me!", "dialog"),
    (
        "e6",
        "2023-02-01T10:00:00",
        "Ana",
        "The train line closed, so I started driving.",
        "transition",
    ),
    ("e7", "2023-02-01T10:01:00", "Ben", "Did you see the game last night?", "dialog"),
    (
        "e8",
        "2023-03-01T10:00:00",
        "Ana",
        "My commute is 90 minutes now, with the traffic.",
        "cue_new",
    ),
    ("e9", "2023-03-01T10:01:00", "Ben", "Wow, that sounds exhausting!", "dialog"),
    ("e10", "2023-03-02T10:00:00", "Ana", "Thanks, see you soon!", "dialog"),
]


def _tiny(tmp_path, old="e3", transition="e6"):
    return write_one_profile(
        tmp_path,
        _EVENTS,
        {
            "slot": "commute",
            "update_type": "value",
            "old_value": "35 minutes",
            "current_value": "90 minutes",
            "old_event_id": old,
            "new_event_id": "e8",
            "transition_event_id": transition,
        },
        [
            {
                "probe_id": "p0-u0-c",
                "view": "current",
                "kind": "fact",
                "question": "How long is Ana's commute now?",
                "target": "90 minutes",
                "alternate": "35 minutes",
            }
        ],
    )


def test_gate_bench_structure_and_bounds(tmp_path, minilm):
    res = run_gate_bench(
        _tiny(tmp_path),
        max_judged=(1, 2, 8),
        centre_weights=(0.0, 1.0),
        candidate_k=4,
        embeddings=minilm,
        progress=False,
    )
    assert set(res) == {"operating_points", "per_type", "config"}
    cfg = res["config"]
    assert cfg["writes"] == len(_EVENTS) and cfg["true_pairs"] == 2
    points = res["operating_points"]
    assert [(p["centre_weight"], p["max_judged"]) for p in points] == [
        (0.0, 1),
        (0.0, 2),
        (0.0, 4),
        (1.0, 1),
        (1.0, 2),
        (1.0, 4),
    ]  # M is capped at k
    for gamma in (0.0, 1.0):
        row = [p for p in points if p["centre_weight"] == gamma]
        assert [p["recall"] for p in row] == sorted(p["recall"] for p in row)  # more M, more
        assert [p["judged_per_write"] for p in row] == sorted(p["judged_per_write"] for p in row)
        assert row[-1]["recall"] == 1.0  # Ana has 5 earlier records: all 4 best hold the old
        for p in row:
            assert 0.0 <= p["recall"] <= 1.0 and p["found"] <= p["true_pairs"] == 2
    # per update type is reported at the gate's defaults (not in this sweep)
    assert res["per_type"] == {}
    table = markdown_table(res)
    assert "| centre weight | recall@1 | recall@2 | recall@4 |" in table


def test_gate_bench_reads_gold_only_to_score(tmp_path, minilm):
    a = run_gate_bench(_tiny(tmp_path), embeddings=minilm, progress=False)
    # pointing the unit at a small-talk turn changes recall, never how much is judged
    b = run_gate_bench(
        _tiny(tmp_path, old="e5", transition=None), embeddings=minilm, progress=False
    )
    for pa, pb in zip(a["operating_points"], b["operating_points"], strict=True):
        assert pa["judged_per_write"] == pb["judged_per_write"]
    assert b["config"]["true_pairs"] == 1
    assert set(a["per_type"]) == {"value", "value/transition"}
    for bad in ({"candidate_k": 0}, {"max_judged": ()}, {"centre_weights": (5.0,)}):
        with pytest.raises(ConfigError):
            run_gate_bench(_tiny(tmp_path), embeddings=minilm, progress=False, **bad)


def test_cli_wires_bench_gate():
    args = build_parser().parse_args(
        ["bench", "gate", "f.json", "--out", "o.json", "--profiles", "4"]
    )
    assert (args.bench_command, args.file, args.profiles, args.candidate_k) == (
        "gate",
        "f.json",
        "4",
        32,
    )
