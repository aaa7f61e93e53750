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
    ("e6", "2023-02-01T10:00:00", "Ana", "The train line closed, so I started driving.",
     "transition"),
    ("e7", "2023-02-01T10:01:00", "Ben", "Did you see the game last night?", "dialog"),
    ("e8", "2023-03-01T10:00:00", "Ana", "My commute is 90 minutes now, with the traffic.",
     "cue_new"),
    ("e9", "2023-03-01T10:01:00", "Ben", "Wow, that sounds exhausting!", "dialog"),
    ("e10", "2023-03-02T10:00:00", "Ana", "Thanks, see you soon!", "dialog"),
]


def _tiny(tmp_path, old="e3", transition="e6"):
    return write_one_profile(
        tmp_path, _EVENTS,
        {"slot": "commute", "update_type": "value", "old_value": "35 minutes",
         "current_value": "90 minutes", "old_event_id": old, "new_event_id": "e8",
         "transition_event_id": transition},
        [{"probe_id": "p0-u0-c", "view": "current", "kind": "fact",
          "question": "How long is Ana's commute now?", "target": "90 minutes",
          "alternate": "35 minutes"}])


def test_gate_bench_structure_and_bounds(tmp_path, minilm):
    taus = (-0.3, -0.1, -0.05, 0.0, 0.3)
    res = run_gate_bench(_tiny(tmp_path), taus=taus, embeddings=minilm, progress=False)
    assert set(res) == {"operating_points", "per_type", "config"}
    cfg = res["config"]
    assert cfg["writes"] == len(_EVENTS) and cfg["true_pairs"] == 2
    assert cfg["ceiling"] == 1.0 and cfg["pool_misses"] == 0  # Ana has 5 earlier records
    points = res["operating_points"]
    assert [p["mode"] for p in points] == ["paper"] + ["hub"] * (len(taus) + 2)
    for p in points:
        assert 0.0 <= p["recall"] <= 1.0
        assert p["ceiling"] >= p["recall"]
        assert p["flags_per_write"] >= 0.0
        assert p["found"] <= p["true_pairs"] == 2
    assert points[1]["gate"].startswith("hub without text cues") and points[1]["tau"] == -0.08
    assert points[2]["gate"].startswith("hub without the topic term") and points[2]["tau"] == -0.09
    hub = points[3:]
    assert [p["tau"] for p in hub] == list(taus)
    flags = [p["flags"] for p in hub]
    assert flags == sorted(flags, reverse=True)  # a lower tau never flags less
    assert flags[0] > flags[-1]  # and the sweep is not flat on this file
    assert hub[0]["recall"] == 1.0  # the changed number is found at a low tau
    assert set(res["per_type"]) == {"value", "value/transition"}
    assert "| hub, tau = -0.05 (default) |" in markdown_table(res)


def test_gate_bench_reads_gold_only_to_score(tmp_path, minilm):
    a = run_gate_bench(_tiny(tmp_path), taus=(-0.08,), embeddings=minilm, progress=False)
    # pointing the unit at a small-talk turn changes recall, never what is flagged
    b = run_gate_bench(_tiny(tmp_path, old="e5", transition=None), taus=(-0.08,),
                       embeddings=minilm, progress=False)
    for pa, pb in zip(a["operating_points"], b["operating_points"], strict=True):
        assert pa["flags"] == pb["flags"]
    assert b["config"]["true_pairs"] == 1
    with pytest.raises(ConfigError):
        run_gate_bench(_tiny(tmp_path), candidate_k=0, embeddings=minilm, progress=False)


def test_cli_wires_bench_gate():
    args = build_parser().parse_args(["bench", "gate", "f.json", "--out", "o.json",
                                      "--profiles", "4"])
    assert (args.bench_command, args.file, args.profiles, args.candidate_k) == \
        ("gate", "f.json", "4", 16)
