"""The LTP runner on a tiny hand-made file (real MiniLM, offline judge)."""

from __future__ import annotations

import pytest

from langchain_atma.benchmarks.ltp_bench import METRICS, markdown_table, run_ltp_bench
from langchain_atma.benchmarks.ltp_format import load_ltp
from langchain_atma.errors import ConfigError
from tests.unit.ltp_docs import write_one_profile


def _tiny(tmp_path, kind_of_dialog="dialog"):
    events = [
        ("e1", "2023-01-01T10:00:00", "Ana", "Hi Ben, how was your weekend?", kind_of_dialog),
        ("e2", "2023-01-01T10:01:00", "Ben", "Great, we went hiking in the hills.",
         kind_of_dialog),
        ("e3", "2023-01-02T10:00:00", "Ana", "I live in Boston, in a flat near the river.",
         "cue_old"),
        ("e4", "2023-02-01T10:00:00", "Ben", "Did you see the game last night?", kind_of_dialog),
        ("e5", "2023-03-01T10:00:00", "Ana", "I moved to Denver last month, that's home now.",
         "cue_new"),
        ("e6", "2023-03-01T10:01:00", "Ben", "Wow, congratulations on the move!", kind_of_dialog),
    ]
    return load_ltp(write_one_profile(
        tmp_path, events,
        {"slot": "location", "update_type": "temporal", "old_value": "Boston",
         "current_value": "Denver", "old_event_id": "e3", "new_event_id": "e5",
         "transition_event_id": None},
        [{"probe_id": "p0-u0-h", "view": "historical", "kind": "fact",
          "question": "Which city did Ana live in before her move?", "target": "Boston",
          "alternate": "Denver"},
         {"probe_id": "p0-u0-c", "view": "current", "kind": "conflict",
          "question": "Which city does Ana live in now?", "target": "Denver",
          "alternate": "Boston"}]))


def test_runner_scores_every_metric(tmp_path, minilm):
    res = run_ltp_bench(_tiny(tmp_path), methods=["host", "atma", "atma-no-judge"],
                        embeddings=minilm, progress=False)
    for m in ("host", "atma", "atma-no-judge"):
        row = res["methods"][m]
        assert set(METRICS) <= set(row)
        assert row["probes"] == 2 and row["units"] == 1 and row["bank_coexist"] == 1.0
        assert all(0.0 <= row[k] <= 1.0 for k in METRICS if k != "judge_calls_per_write")
        assert sum(row[f"fail_{lvl}"] for lvl in
                   ("correct", "bank", "candidates", "ranking", "qa")) == 2
    assert res["methods"]["host"]["bank_role"] == 0.0  # no state roles without the overlay
    assert res["methods"]["atma-no-judge"]["bank_role"] == 0.0
    atma = res["methods"]["atma"]
    assert atma["bank_role"] == 1.0  # Boston superseded by Denver, linked
    assert atma["spurious_supersession_rate"] == 0.0
    assert atma["conflict_acc"] == 1.0 and atma["fact_acc"] == 1.0
    assert "| atma |" in markdown_table(res)


def test_replay_never_reads_gold(tmp_path, minilm):
    # relabelling gold-only fields must not change what was replayed or answered
    a = run_ltp_bench(_tiny(tmp_path), methods=["atma"], embeddings=minilm, progress=False)
    b = run_ltp_bench(_tiny(tmp_path, kind_of_dialog="transition"), methods=["atma"],
                      embeddings=minilm, progress=False)
    for key in ("bank_role", "evidence_support", "qa_acc", "judge_calls_per_write"):
        assert a["methods"]["atma"][key] == b["methods"]["atma"][key]


def test_bad_options(tmp_path):
    ltp = _tiny(tmp_path)
    with pytest.raises(ConfigError):
        run_ltp_bench(ltp, methods=["nope"], progress=False)
    with pytest.raises(ConfigError):
        run_ltp_bench(ltp, profiles=["missing"], progress=False)


def test_seed_bench_scores_the_searches(tmp_path, minilm):
    from langchain_atma.benchmarks.seed_bench import SEARCH_MODES, run_seed_bench

    _tiny(tmp_path)
    res = run_seed_bench(tmp_path / "tiny.json", k=1, embeddings=minilm, progress=False)
    assert set(res["modes"]) == set(SEARCH_MODES)
    assert res["config"]["probes"] == 2 and res["config"]["rewritten_share"] == 1.0
    for m in res["modes"].values():
        assert 0.0 <= m["target_hit"] <= m["unit_hit"] <= 1.0
    # in first person ("Which city do I live in now?") the top-1 event is a unit cue
    assert res["modes"]["first_person"]["unit_hit"] == 1.0
    assert res["modes"]["speaker_first"]["unit_hit"] == 1.0
    wide = run_seed_bench(tmp_path / "tiny.json", k=6, embeddings=minilm, progress=False)
    assert all(m["unit_hit"] == 1.0 and m["target_hit"] == 1.0 for m in wide["modes"].values())
