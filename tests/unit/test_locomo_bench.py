"""The LoCoMo runner on a tiny hand-made conversation (real MiniLM, no LoCoMo data)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_atma.benchmarks.locomo import load_locomo
from langchain_atma.benchmarks.locomo_bench import run_locomo_bench
from langchain_atma.errors import ConfigError

TURNS = [
    ("Ann", "I live in Boston, right by the harbour."),
    ("Bob", "Nice, I have always wanted to visit Boston."),
    ("Ann", "I work as a nurse at the county hospital."),
    ("Bob", "That sounds like hard work, how are the shifts?"),
    ("Ann", "I moved to Seattle last month, the mountains are amazing."),
    ("Bob", "Congrats on the move, send me pictures!"),
]


def _sample(tmp_path: Path) -> Path:
    conv: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    for s in (1, 2):
        conv[f"session_{s}"] = [
            {"speaker": who, "dia_id": f"D{s}:{t}", "text": text}
            for t, (who, text) in enumerate(TURNS[(s - 1) * 3 : s * 3], 1)
        ]
        conv[f"session_{s}_date_time"] = f"1:15 pm on {3 * s} March, 2023"
    qa = [
        {
            "question": "Which city does Ann live in now?",
            "answer": "Seattle",
            "evidence": ["D2:2"],
            "category": 4,
        },
        {
            "question": "What is Bob's cat called?",
            "adversarial_answer": "Tom",
            "evidence": [],
            "category": 5,
        },
    ]
    path = tmp_path / "toy_locomo.json"
    path.write_text(json.dumps([{"sample_id": "toy", "conversation": conv, "qa": qa}]))
    return path


class _ToolFake(GenericFakeChatModel):
    """A fake chat model whose ``bind_tools`` returns itself (structured output works)."""

    def bind_tools(self, tools, **kwargs):  # noqa: ARG002
        return self


def test_offline_run_scores_both_methods(tmp_path):
    res = run_locomo_bench(load_locomo(_sample(tmp_path)), progress=False)
    assert res["config"]["answerer"] == res["config"]["judge"] == "offline"
    for m in ("host", "atma"):
        row = res["methods"][m]
        assert row["questions"] == 2 and row["answers_failed"] == 0
        assert 0.0 <= row["f1"] <= 1.0 and 0.0 <= row["bleu1"] <= 1.0
    atma = res["methods"]["atma"]
    assert atma["evidence_recall_by_category"]["single-hop"] == 1.0
    assert atma["f1_by_category"]["single-hop"] > 0.0  # the answer names Seattle
    with pytest.raises(ConfigError):
        run_locomo_bench(load_locomo(_sample(tmp_path)), methods=["nope"], progress=False)


def test_models_answer_and_judge(tmp_path):
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
    res = run_locomo_bench(
        load_locomo(_sample(tmp_path)), progress=False, judge_model=judge, answer_model=answer
    )
    cfg = res["config"]
    assert (cfg["judge"], cfg["answerer"], cfg["controller"]) == (
        "llm:_ToolFake",
        "llm:GenericFakeChatModel",
        "offline",
    )
    assert cfg["judge_stats"]["writes"] >= 1 and "escalation_rate" in cfg["judge_stats"]
    for m in ("host", "atma"):  # both methods answer with the model
        row = res["methods"][m]
        assert row["f1_by_category"]["single-hop"] == 1.0
        assert row["f1_by_category"]["adversarial"] == 0.0  # "Seattle" is no abstention
        assert row["answers_failed"] == 0


def test_cli_wires_the_model_options():
    from langchain_atma.cli import build_parser

    args = build_parser().parse_args(
        [
            "bench",
            "locomo",
            "l.json",
            "--out",
            "o.json",
            "--answer-model",
            "qwen2.5:3b",
            "--ollama-base-url",
            "http://127.0.0.1:11434",
        ]
    )
    assert (args.answer_model, args.judge_model, args.ollama_base_url) == (
        "qwen2.5:3b",
        None,
        "http://127.0.0.1:11434",
    )


def test_details_list_every_answer_and_the_cli_writes_them(tmp_path, capsys):
    from langchain_atma.benchmarks.locomo_bench import main
    from langchain_atma.cli import build_parser

    details: list[dict] = []
    res = run_locomo_bench(load_locomo(_sample(tmp_path)), progress=False, details=details)
    assert len(details) == 4  # 2 methods x 2 questions
    by = {(d["method"], d["category"]): d for d in details}
    one = by[("atma", "single-hop")]
    assert one["gold"] == "Seattle" and one["evidence"] == ["D2:2"]
    assert one["f1"] == res["methods"]["atma"]["f1_by_category"]["single-hop"]
    assert one["evidence_recall"] == 1.0 and one["status"] == "answered"
    assert any(r["dia_id"] == "D2:2" and r["label"] == "current memory" for r in one["packet"])
    assert all(r["label"] is None for r in by[("host", "single-hop")]["packet"])
    assert by[("atma", "adversarial")]["evidence_recall"] is None  # no gold evidence ids
    out, det = tmp_path / "res.json", tmp_path / "det.jsonl"
    args = build_parser().parse_args(
        ["bench", "locomo", str(_sample(tmp_path)), "--out", str(out), "--details", str(det)]
    )
    assert main(args) == 0
    lines = [json.loads(x) for x in det.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 4 and {d["method"] for d in lines} == {"host", "atma"}
    assert "det.jsonl (4 lines)" in capsys.readouterr().out
