"""`atma bench judge` on a tiny hand-made LTP file (no bank, no replay)."""

from __future__ import annotations

import itertools
import json

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_atma.bank.judge import BaseJudge, JudgeInput, Verdict
from langchain_atma.benchmarks.judge_bench import (
    expected_actions,
    markdown_table,
    run_judge_bench,
)
from langchain_atma.cli import build_parser, main
from langchain_atma.errors import ConfigError
from langchain_atma.records import RecordStatus
from tests.unit.ltp_docs import write_one_profile
from tests.unit.test_gate_bench import _EVENTS


def _tiny(tmp_path, update_type="value", transition="e6"):
    return write_one_profile(
        tmp_path,
        _EVENTS,
        {
            "slot": "commute",
            "update_type": update_type,
            "old_value": "35 minutes",
            "current_value": "90 minutes",
            "old_event_id": "e3",
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


class _Scripted(BaseJudge):
    """Answers every pair with one action, or per (old event, new event)."""

    def __init__(self, action="keep_both", by_pair=None):
        self.action, self.by_pair, self.seen = action, by_pair or {}, []

    def judge(self, inp: JudgeInput) -> Verdict:
        self.seen.append(inp)
        pair = (inp.old.provenance.source_event_id, inp.new.provenance.source_event_id)
        action = self.by_pair.get(pair, self.action)
        return Verdict(
            conflict=action != "keep_both",
            conflict_type="none" if action == "keep_both" else "value",
            action=action,
            reason="scripted",
        )


# Ana's records: e1, e3 (old cue), e5, e6 (transition), e8 (new cue), e10.
# Hard negatives = the nearest earlier dialog turns of Ana before each cue:
# e3 -> e1; e6 -> e1, e5; e8 -> e1, e5 (5 pairs). Dialog pairs: every dialog turn
# with an earlier dialog turn of its speaker: e4, e5, e7, e9, e10 (5 pairs).


def test_scores_follow_the_judge(tmp_path, fake_embeddings):
    path = _tiny(tmp_path)
    everything = run_judge_bench(
        path, judge=_Scripted("supersede"), embeddings=fake_embeddings, progress=False
    )
    nothing = run_judge_bench(
        path, judge=_Scripted("keep_both"), embeddings=fake_embeddings, progress=False
    )
    assert set(everything["update_pairs"]) == {"old_new", "old_transition", "transition_new"}
    for kind, s in everything["update_pairs"].items():
        assert (s["pairs"], s["accuracy"]) == (1, 1.0), kind
        assert nothing["update_pairs"][kind]["accuracy"] == 0.0
    assert everything["units"]["accuracy"] == 1.0 and nothing["units"]["accuracy"] == 0.0
    assert everything["hard_negatives"]["pairs"] == 5
    assert everything["dialog_pairs"]["pairs"] == 5
    assert everything["hard_negatives"]["false_link_rate"] == 1.0
    assert everything["dialog_pairs"]["actions"] == {"supersede": 5}
    assert nothing["hard_negatives"]["false_links"] == 0
    assert everything["config"]["judged_pairs"] == 3 + 5 + 5
    table = markdown_table(everything)
    assert "| old_new | value | 1 | 1 | 1.000 | supersede 1 |" in table
    assert "| hard_negatives | 5 | 5 | 1.000 | supersede 5 |" in table


def test_a_unit_is_right_through_its_transition_chain(tmp_path, fake_embeddings):
    judge = _Scripted(by_pair={("e3", "e6"): "transition", ("e6", "e8"): "supersede"})
    res = run_judge_bench(
        _tiny(tmp_path),
        judge=judge,
        embeddings=fake_embeddings,
        progress=False,
        negatives=0,
        dialog_pairs=0,
    )
    assert res["update_pairs"]["old_new"]["accuracy"] == 0.0
    assert res["units"]["correct"] == 1  # old -> transition -> new
    # the transition record is a `transition` in its pair with the new cue, since the
    # judge said so for its pair with the old cue (as the bank would have committed)
    (chain,) = [i for i in judge.seen if i.old.provenance.source_event_id == "e6"]
    assert chain.old.status is RecordStatus.TRANSITION
    judge = _Scripted(by_pair={("e3", "e6"): "supersede"})
    run_judge_bench(
        _tiny(tmp_path),
        judge=judge,
        embeddings=fake_embeddings,
        progress=False,
        negatives=0,
        dialog_pairs=0,
    )
    (chain,) = [i for i in judge.seen if i.old.provenance.source_event_id == "e6"]
    assert chain.old.status is RecordStatus.ACTIVE


def test_what_the_judge_sees(tmp_path, fake_embeddings):
    judge = _Scripted()
    run_judge_bench(_tiny(tmp_path), judge=judge, embeddings=fake_embeddings, progress=False)
    first = judge.seen[0]
    assert (first.old.content, first.new.content) == (_EVENTS[2][3], _EVENTS[7][3])
    assert first.old_precedes_new and first.gate_score is not None
    assert first.similarity is not None and first.gate_score != first.similarity
    for inp in judge.seen:  # no gold reaches the judge: only text, time and speaker
        assert inp.old.provenance.speaker == inp.new.provenance.speaker
        assert inp.old.metadata == inp.new.metadata == {}


def test_gold_is_read_only_to_score(tmp_path, minilm):
    value = run_judge_bench(
        _tiny(tmp_path), embeddings=minilm, progress=False, negatives=1, dialog_pairs=2
    )
    scope = run_judge_bench(
        _tiny(tmp_path, update_type="scope"),
        embeddings=minilm,
        progress=False,
        negatives=1,
        dialog_pairs=2,
    )
    # the judge gives the same verdicts whatever the unit's label says...
    assert (
        value["update_pairs"]["old_new"]["by_update_type"]["value"]["actions"]
        == scope["update_pairs"]["old_new"]["by_update_type"]["scope"]["actions"]
    )
    assert value["hard_negatives"] == scope["hard_negatives"]
    # ...and the changed commute is a supersession: right for value, wrong for scope
    assert value["update_pairs"]["old_new"]["accuracy"] == 1.0
    assert scope["update_pairs"]["old_new"]["accuracy"] == 0.0
    assert value["config"]["judge"] == "LearnedJudge"
    assert value["judge_ms_per_pair"] > 0


def test_dialog_sample_is_seeded(tmp_path, fake_embeddings):
    path = _tiny(tmp_path)

    def sample(seed):
        details: list[dict] = []
        run_judge_bench(
            path,
            judge=_Scripted(),
            embeddings=fake_embeddings,
            progress=False,
            negatives=0,
            dialog_pairs=2,
            seed=seed,
            details=details,
        )
        return [d["new_event"] for d in details if d["pair"] == "dialog"]

    assert sample(0) == sample(0) and len(sample(0)) <= 2
    assert len({tuple(sample(s)) for s in range(6)}) > 1  # the seed picks the sample
    details: list[dict] = []
    run_judge_bench(
        _tiny(tmp_path),
        judge=_Scripted(),
        embeddings=fake_embeddings,
        progress=False,
        details=details,
    )
    assert [d["pair"] for d in details].count("dialog") == 5
    assert {d["reason"] for d in details} == {"scripted"}
    assert {d["pair"] for d in details} == {
        "old_new",
        "old_transition",
        "transition_new",
        "hard_negative",
        "dialog",
    }
    assert all(
        d["correct"] is (d["action"] == "keep_both")
        for d in details
        if d["pair"] in ("hard_negative", "dialog")
    )


class _ToolFake(GenericFakeChatModel):
    """A fake chat model whose ``bind_tools`` returns itself (structured output works)."""

    def bind_tools(self, tools, **kwargs):  # noqa: ARG002
        return self


def test_a_chat_model_judge(tmp_path, fake_embeddings):
    verdict = {
        "conflict": True,
        "conflict_type": "value",
        "action": "supersede",
        "reason": "new number",
    }
    model = _ToolFake(
        messages=itertools.cycle(
            [
                AIMessage(
                    content="",
                    tool_calls=[{"name": "AuditVerdict", "args": verdict, "id": "call-1"}],
                )
            ]
        )
    )
    res = run_judge_bench(
        _tiny(tmp_path),
        judge_model=model,
        embeddings=fake_embeddings,
        progress=False,
        negatives=1,
        dialog_pairs=1,
    )
    cfg = res["config"]
    assert (cfg["judge"], cfg["judge_model"]) == ("EscalatingJudge", "llm:_ToolFake")
    st = cfg["judge_stats"]  # each judged pair is one write: the LLM gets 0.25 per write
    assert st["writes"] == st["pairs"] == cfg["judged_pairs"]
    assert st["escalated"] <= st["writes"] * 0.25 + 1 and st["escalated"] <= st["unsure"]
    assert st["llm"]["calls"] == st["escalated"] and st["llm"]["fallbacks"] == 0


def test_bad_input(tmp_path, fake_embeddings):
    with pytest.raises(ConfigError):
        run_judge_bench(_tiny(tmp_path), negatives=-1, embeddings=fake_embeddings)
    with pytest.raises(ConfigError):
        run_judge_bench(_tiny(tmp_path), profiles=["nope"], embeddings=fake_embeddings)
    with pytest.raises(ConfigError):
        expected_actions("sideways")
    assert expected_actions("negation") == frozenset({"supersede", "transition"})


def test_cli(tmp_path, monkeypatch, capsys):
    args = build_parser().parse_args(["bench", "judge", "f.json", "--out", "o.json"])
    assert (args.bench_command, args.negatives, args.dialog_pairs, args.seed, args.judge_model) == (
        "judge",
        3,
        200,
        0,
        None,
    )
    monkeypatch.delenv("ATMA_OLLAMA_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    out, det = tmp_path / "o.json", tmp_path / "d.jsonl"
    rc = main(
        [
            "bench",
            "judge",
            str(_tiny(tmp_path)),
            "--out",
            str(out),
            "--details",
            str(det),
            "--negatives",
            "1",
            "--dialog-pairs",
            "1",
        ]
    )
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["units"]["units"] == 1
    assert len(det.read_text().splitlines()) == res["config"]["judged_pairs"]
    assert "right verdict" in capsys.readouterr().out


def test_cli_plot_compares_runs(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.delenv("ATMA_OLLAMA_BASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    path = str(_tiny(tmp_path))
    first, second, png = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "j.png"
    assert (
        main(
            ["bench", "judge", path, "--out", str(first), "--negatives", "0", "--dialog-pairs", "0"]
        )
        == 0
    )
    assert (
        main(
            [
                "bench",
                "judge",
                path,
                "--out",
                str(second),
                "--negatives",
                "0",
                "--dialog-pairs",
                "0",
                "--plot",
                str(png),
                "--compare",
                str(first),
            ]
        )
        == 0
    )
    assert png.read_bytes().startswith(b"\x89PNG")
    bad = tmp_path / "bad.json"
    bad.write_text('{"methods": {}}')
    out = tmp_path / "never.json"
    assert (
        main(["bench", "judge", path, "--out", str(out), "--plot", str(png), "--compare", str(bad)])
        == 2
    )  # a clear error, before the run
    assert not out.exists()


def test_cross_unit_pairs_are_false_links(tmp_path, fake_embeddings):
    path = _tiny(tmp_path)
    doc = json.loads(path.read_text())
    prof = doc["profiles"][0]
    for ev in prof["events"]:  # e5 and e10 become a second unit of Ana's
        if ev["event_id"] in ("e5", "e10"):
            ev["kind"] = "cue_old" if ev["event_id"] == "e5" else "cue_new"
            ev["unit_id"] = "p0-u1"
    prof["units"].append(
        {
            **prof["units"][0],
            "unit_id": "p0-u1",
            "slot": "thanks",
            "old_event_id": "e5",
            "new_event_id": "e10",
            "transition_event_id": None,
        }
    )
    path.write_text(json.dumps(doc))
    judge = _Scripted("supersede")
    res = run_judge_bench(
        path, judge=judge, embeddings=fake_embeddings, progress=False, dialog_pairs=0
    )
    # e5 <- e3; e6 <- e5; e8 <- e5; e10 <- e3, e6, e8: never a pair of one unit
    assert res["cross_unit"]["pairs"] == 6
    assert res["cross_unit"]["false_link_rate"] == 1.0
    seen = {
        (i.old.provenance.source_event_id, i.new.provenance.source_event_id)
        for i in judge.seen
        if i.old.provenance.source_event_id in ("e3", "e6", "e8")
        and i.new.provenance.source_event_id in ("e5", "e10")
    }
    assert seen == {("e3", "e5"), ("e3", "e10"), ("e6", "e10"), ("e8", "e10")}
    clean = run_judge_bench(
        path,
        judge=_Scripted("keep_both"),
        embeddings=fake_embeddings,
        progress=False,
        dialog_pairs=0,
    )
    assert clean["cross_unit"]["false_links"] == 0
    assert "| cross_unit | 6 | 0 | 0.000 | keep_both 6 |" in markdown_table(clean)
