"""The LTP runner on a tiny hand-made file (real MiniLM, offline judge)."""

from __future__ import annotations

import itertools

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_atma.benchmarks.ltp_bench import METRICS, markdown_table, run_ltp_bench
from langchain_atma.benchmarks.ltp_format import load_ltp
from langchain_atma.errors import ConfigError
from langchain_atma.records import MemoryRecord, RecordStatus
from tests.unit.ltp_docs import write_one_profile

MOVE_UNIT = {
    "slot": "location",
    "update_type": "temporal",
    "old_value": "Boston",
    "current_value": "Seattle",
    "old_event_id": "e3",
    "new_event_id": "e5",
    "transition_event_id": None,
}
CURRENT_PROBE = {
    "probe_id": "p0-u0-c",
    "view": "current",
    "kind": "conflict",
    "question": "Which city does Ana live in now?",
    "target": "Seattle",
    "alternate": "Boston",
}


def _tiny(tmp_path, kind_of_dialog="dialog"):
    events = [
        ("e1", "2023-01-01T10:00:00", "Ana", "Hi Ben, how was your weekend?", kind_of_dialog),
        ("e2", "2023-01-01T10:01:00", "Ben", "Great, we went hiking in the hills.", kind_of_dialog),
        (
            "e3",
            "2023-01-02T10:00:00",
            "Ana",
            "I live in Boston, in a flat near the river.",
            "cue_old",
        ),
        ("e4", "2023-02-01T10:00:00", "Ben", "Did you see the game last night?", kind_of_dialog),
        (
            "e5",
            "2023-03-01T10:00:00",
            "Ana",
            "I moved to Seattle last month, that's home now.",
            "cue_new",
        ),
        ("e6", "2023-03-01T10:01:00", "Ben", "Wow, congratulations on the move!", kind_of_dialog),
    ]
    return load_ltp(
        write_one_profile(
            tmp_path,
            events,
            MOVE_UNIT,
            [
                {
                    "probe_id": "p0-u0-h",
                    "view": "historical",
                    "kind": "fact",
                    "question": "Which city did Ana live in before her move?",
                    "target": "Boston",
                    "alternate": "Seattle",
                },
                CURRENT_PROBE,
            ],
        )
    )


def test_runner_scores_every_metric(tmp_path, minilm):
    res = run_ltp_bench(
        _tiny(tmp_path),
        methods=["host", "atma", "atma-no-judge"],
        embeddings=minilm,
        progress=False,
    )
    for m in ("host", "atma", "atma-no-judge"):
        row = res["methods"][m]
        assert set(METRICS) <= set(row)
        assert row["probes"] == 2 and row["units"] == 1 and row["bank_coexist"] == 1.0
        assert all(0.0 <= row[k] <= 1.0 for k in METRICS if k != "judge_calls_per_write")
        assert (
            sum(row[f"fail_{lvl}"] for lvl in ("correct", "bank", "candidates", "ranking", "qa"))
            == 2
        )
    assert res["methods"]["host"]["bank_role"] == 0.0  # no state roles without the overlay
    assert res["methods"]["atma-no-judge"]["bank_role"] == 0.0
    atma = res["methods"]["atma"]
    assert atma["bank_role"] == 1.0  # Boston superseded by Seattle, linked
    assert atma["spurious_supersession_rate"] == 0.0
    assert atma["conflict_acc"] == 1.0 and atma["fact_acc"] == 1.0
    assert "| atma |" in markdown_table(res)


def test_replay_never_reads_gold(tmp_path, minilm):
    # relabelling gold-only fields must not change what was replayed or answered
    a = run_ltp_bench(_tiny(tmp_path), methods=["atma"], embeddings=minilm, progress=False)
    b = run_ltp_bench(
        _tiny(tmp_path, kind_of_dialog="transition"),
        methods=["atma"],
        embeddings=minilm,
        progress=False,
    )
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


def test_metrics_by_update_type(tmp_path, minilm):
    from langchain_atma.benchmarks.ltp_bench import TYPED_METRICS, markdown_type_table

    res = run_ltp_bench(
        _tiny(tmp_path), methods=["host", "atma"], embeddings=minilm, progress=False
    )
    atma = res["methods"]["atma"]
    # the tiny file has one temporal unit: only that type is reported, and its
    # figures are the overall ones (same units, same probes)
    assert list(atma["by_update_type"]) == ["temporal"]
    typed = atma["by_update_type"]["temporal"]
    assert typed["units"] == 1 and typed["probes"] == 2
    for key in TYPED_METRICS:
        assert typed[key] == atma[key], key
    assert res["methods"]["host"]["by_update_type"]["temporal"]["bank_role"] == 0.0
    table = markdown_type_table(res, "atma")
    assert "| temporal | 1 | 2 | 1.000 |" in table
    assert markdown_type_table(res, "atma-no-judge") == ""  # not run


def test_update_types_partition_the_overall_figures(tmp_path, minilm):
    import json

    from langchain_atma.benchmarks.ltp_bench import TYPED_METRICS

    path = tmp_path / "tiny.json"
    _tiny(tmp_path)  # writes tiny.json (one temporal unit p0-u0)
    doc = json.loads(path.read_text())
    prof = doc["profiles"][0]
    prof["events"] += [
        {
            "event_id": "e7",
            "timestamp": "2023-01-03T10:00:00",
            "speaker": "Ana",
            "text": "Jazz is my favourite music, I play it every evening.",
            "kind": "cue_old",
            "unit_id": "p0-u1",
            "dia_id": None,
        },
        {
            "event_id": "e8",
            "timestamp": "2023-03-02T10:00:00",
            "speaker": "Ana",
            "text": "I still love jazz, but these days I also listen to a lot of synthwave.",
            "kind": "cue_new",
            "unit_id": "p0-u1",
            "dia_id": None,
        },
    ]
    prof["units"].append(
        {
            "unit_id": "p0-u1",
            "slot": "likes.music",
            "update_type": "scope",
            "old_value": "jazz",
            "current_value": "synthwave",
            "old_event_id": "e7",
            "new_event_id": "e8",
            "transition_event_id": None,
        }
    )
    prof["probes"] += [
        {
            "unit_id": "p0-u1",
            "probe_id": "p0-u1-h",
            "view": "historical",
            "kind": "fact",
            "question": "Which music did Ana first call her favourite?",
            "target": "jazz",
            "alternate": "synthwave",
        },
        {
            "unit_id": "p0-u1",
            "probe_id": "p0-u1-c",
            "view": "current",
            "kind": "conflict",
            "question": "Which music has Ana been listening to lately?",
            "target": "synthwave",
            "alternate": "jazz",
        },
    ]
    path.write_text(json.dumps(doc))
    res = run_ltp_bench(load_ltp(path), methods=["atma"], embeddings=minilm, progress=False)
    atma = res["methods"]["atma"]
    by = atma["by_update_type"]
    assert set(by) == {"temporal", "scope"}
    assert all(v["units"] == 1 and v["probes"] == 2 for v in by.values())
    # each overall figure is the unit/probe-weighted mean of the per-type figures
    assert atma["bank_role"] == (by["temporal"]["bank_role"] + by["scope"]["bank_role"]) / 2
    for key in ("evidence_support", "state_fit_at_1", "qa_acc"):
        assert abs(atma[key] - (by["temporal"][key] + by["scope"][key]) / 2) < 1e-9, key
    assert set(TYPED_METRICS) <= set(by["scope"])


def test_seed_bench_facts_first_pushes_questions_down(tmp_path, minilm):
    from langchain_atma.benchmarks.seed_bench import run_seed_bench

    events = [
        ("e1", "2023-01-01T10:00:00", "Ana", "Is the city nice?", "dialog"),
        ("e2", "2023-01-01T10:01:00", "Ana", "Have you been to the city lately?", "dialog"),
        (
            "e3",
            "2023-01-02T10:00:00",
            "Ana",
            "I live in Boston, in a flat near the river.",
            "cue_old",
        ),
        ("e5", "2023-03-01T10:00:00", "Ana", "I live in Seattle now.", "cue_new"),
    ]
    path = write_one_profile(tmp_path, events, MOVE_UNIT, [CURRENT_PROBE])
    res = run_seed_bench(path, k=1, embeddings=minilm, progress=False)["modes"]
    # the two questions are a little closer to the probe: plain top-1 is a question
    assert res["speaker_first"]["unit_hit"] == 0.0
    # with the questions 0.10 lower, a statement of the unit comes first
    assert res["facts_first"]["unit_hit"] == 1.0


def test_bank_steps_and_details(tmp_path, minilm):
    from langchain_atma.benchmarks.ltp_bench import BANK_STEPS, markdown_bank_steps

    details: list[dict] = []
    res = run_ltp_bench(
        _tiny(tmp_path),
        methods=["host", "atma", "atma-no-judge"],
        embeddings=minilm,
        progress=False,
        details=details,
    )
    rows = res["methods"]
    assert "bank_steps" not in rows["host"]
    assert set(rows["atma"]["bank_steps"]) == set(BANK_STEPS)
    assert sum(rows["atma"]["bank_steps"].values()) == 0  # the one unit is right
    # without the judge the flagged pair is never audited
    assert rows["atma-no-judge"]["bank_steps"]["not_judged"] == 1
    assert sum(rows["atma-no-judge"]["bank_steps"].values()) == 1
    table = markdown_bank_steps(res)
    assert "| atma-no-judge | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 0 |" in table
    units = [d for d in details if d["record"] == "unit"]
    probes = [d for d in details if d["record"] == "probe"]
    assert len(units) == 3 and len(probes) == 6
    by = {(d["method"], d["probe_id"]): d for d in probes}
    cur = by[("atma", "p0-u0-c")]
    assert cur["correct"] and cur["level"] == "correct" and cur["view"] == "current"
    assert cur["target_rank_packet"] is not None and cur["target_rank_pool"] is not None
    assert any(
        r["event_id"] == "e5" and r["label"] == "current memory" and r["unit_row"]
        for r in cur["packet"]
    )
    nj = next(d for d in units if d["method"] == "atma-no-judge")
    assert nj["bank_step"] == "not_judged" and nj["status"]["old"] == "active"
    assert next(d for d in units if d["method"] == "host")["bank_step"] is None
    assert markdown_bank_steps({"methods": {"host": rows["host"]}}) == ""


def _rec(content: str, status: RecordStatus = RecordStatus.ACTIVE) -> MemoryRecord:
    return MemoryRecord(namespace="u", content=content, time=1, status=status)


def test_unit_bank_step_takes_the_path_that_got_further():
    from langchain_atma.bank.write_graph import WriteAudit
    from langchain_atma.benchmarks.ltp_bench import unit_bank_step

    old, tr, new = _rec("old"), _rec("tr"), _rec("new")
    linked = {
        "candidates": [old.id],
        "flagged": [old.id],
        "verdicts": {old.id: "transition/temporal"},
        "applied": {old.id: "transition"},
    }
    # direct pair never a candidate; the chain old -> tr linked, tr -> new not flagged
    audits = {
        tr.id: WriteAudit(record_id=tr.id, **linked),
        new.id: WriteAudit(record_id=new.id, candidates=[tr.id]),
    }
    assert unit_bank_step("temporal", old, new, tr, audits) == "not_flagged"
    assert unit_bank_step("temporal", old, new, None, audits) == "not_candidate"
    # scope units need the direct coexistence; the chain does not count
    assert unit_bank_step("scope", old, new, tr, audits) == "not_candidate"
    # a missing cue record (stored as a duplicate)
    assert unit_bank_step("value", old, None, None, audits) == "not_stored"
    # linked as it should be, yet the role is wrong: a later write changed it
    audits[new.id] = WriteAudit(
        record_id=new.id,
        candidates=[old.id],
        flagged=[old.id],
        verdicts={old.id: "supersede/value"},
        applied={old.id: "supersede"},
    )
    assert unit_bank_step("value", old, new, None, audits) == "overridden"
    assert unit_bank_step("scope", old, new, None, audits) == "judged_otherwise"


def test_cli_writes_results_and_details(tmp_path, minilm, capsys):
    import json

    from langchain_atma.benchmarks.ltp_bench import main
    from langchain_atma.cli import build_parser

    _tiny(tmp_path)  # writes tmp_path / "tiny.json"
    src = tmp_path / "tiny.json"
    out, det = tmp_path / "res.json", tmp_path / "details.jsonl"
    args = build_parser().parse_args(
        ["bench", "ltp", str(src), "--out", str(out), "--methods", "atma", "--details", str(det)]
    )
    assert main(args) == 0
    res = json.loads(out.read_text())
    assert res["methods"]["atma"]["bank_steps"]["not_candidate"] == 0
    lines = [json.loads(x) for x in det.read_text().splitlines()]
    assert [d["record"] for d in lines].count("probe") == 2
    assert {d["method"] for d in lines} == {"atma"}
    printed = capsys.readouterr().out
    assert "missed units by write step" in printed and "details.jsonl (3 lines)" in printed


class _ToolFake(GenericFakeChatModel):
    """A fake chat model whose ``bind_tools`` returns itself (structured output works)."""

    def bind_tools(self, tools, **kwargs):  # noqa: ARG002
        return self


class _BrokenChat(GenericFakeChatModel):
    def _generate(self, *args, **kwargs):
        raise RuntimeError("server down")


def test_models_replace_the_offline_parts(tmp_path, minilm):
    verdict = {
        "conflict": True,
        "conflict_type": "temporal",
        "action": "supersede",
        "reason": "moved",
        "slot": "location",
    }
    judge = _ToolFake(
        messages=itertools.cycle(
            [
                AIMessage(
                    content="",
                    tool_calls=[{"name": "AuditVerdict", "args": verdict, "id": "call-1"}],
                )
            ]
        )
    )
    answer = GenericFakeChatModel(messages=itertools.cycle([AIMessage("Seattle")]))
    res = run_ltp_bench(
        _tiny(tmp_path),
        methods=["host", "atma", "atma-no-judge"],
        embeddings=minilm,
        progress=False,
        judge_model=judge,
        answer_model=answer,
    )
    cfg = res["config"]
    assert (cfg["judge"], cfg["answerer"]) == ("llm:_ToolFake", "llm:GenericFakeChatModel")
    assert cfg["controller"] == "offline"
    st = cfg["judge_stats"]  # the learned judge escalates its unsure pairs, within budget
    assert st["writes"] >= 1 and st["escalated"] <= 0.25 * st["writes"] + 1
    assert st["llm"]["calls"] == st["escalated"] and st["llm"]["fallbacks"] == 0
    rows = res["methods"]
    assert rows["atma"]["judge_calls_per_write"] > 0
    for m in ("host", "atma", "atma-no-judge"):  # every method answers with the model
        assert rows[m]["conflict_acc"] == 1.0 and rows[m]["fact_acc"] == 0.0, m
        assert rows[m]["answers_failed"] == 0


def test_a_failing_answer_model_is_counted(tmp_path, minilm):
    res = run_ltp_bench(
        _tiny(tmp_path),
        methods=["atma"],
        embeddings=minilm,
        progress=False,
        answer_model=_BrokenChat(messages=iter([])),
    )
    row = res["methods"]["atma"]
    assert row["answers_failed"] == 2 and row["qa_acc"] == 0.0
    assert row["fail_correct"] == 0


def test_bench_models_from_the_command_line(monkeypatch, tmp_path):
    from langchain_atma.benchmarks.ltp_bench import bench_models
    from langchain_atma.cli import build_parser

    monkeypatch.delenv("ATMA_OLLAMA_BASE_URL", raising=False)
    monkeypatch.setenv("ATMA_JUDGE_MODEL", "from-env")  # ignored: not named on the line
    monkeypatch.delenv("ATMA_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./atma.toml
    parse = build_parser().parse_args
    assert bench_models(parse(["bench", "ltp", "f.json", "--out", "o.json"])) == {
        "judge": None,
        "controller": None,
        "answer": None,
    }
    with pytest.raises(ConfigError, match="--answer-model needs an Ollama server"):
        bench_models(
            parse(["bench", "ltp", "f.json", "--out", "o.json", "--answer-model", "qwen2.5:3b"])
        )
    models = bench_models(
        parse(
            [
                "bench",
                "ltp",
                "f.json",
                "--out",
                "o.json",
                "--answer-model",
                "qwen2.5:3b",
                "--ollama-base-url",
                "http://127.0.0.1:11434",
            ]
        )
    )
    assert models["judge"] is None and models["controller"] is None
    assert models["answer"].model == "qwen2.5:3b"
