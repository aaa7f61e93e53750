"""Tests of the training package: corpus schema, expansion, split, diversity, checker, report."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from atma_training import check, corpus, diversity, report
from atma_training.corpus import CorpusError, CorpusLine, LabelledPair, expand, load_lines
from atma_training.judge_train import (
    _context_pool,
    _cross_slot,
    _decide,
    _false_write_rate,
    _threshold,
    _with_context,
    _write_group,
    split_by_slot,
)
from pydantic import ValidationError

BASE: dict[str, Any] = {
    "id": "b98-0001",
    "slot": "home.city",
    "kind": "change",
    "old": "Renting a small flat by the harbour, gulls at five.",
    "new": "Signed for a house inland, the sea is an hour's drive away.",
    "action": "supersede",
    "type": "temporal",
    "indirect": True,
    "style": "terse",
}


def _line(**kw: Any) -> CorpusLine:
    return CorpusLine.model_validate({**BASE, **kw})


@pytest.mark.parametrize(
    "bad",
    [
        {"action": "coexist"},  # a change supersedes
        {"kind": "scope", "action": "coexist"},  # scope needs type scope
        {"kind": "negative", "action": "keep_both", "type": "none"},  # no subtype
        {"kind": "transition", "action": "transition"},  # no transition text
        {"transition": "Boxes packed."},  # only chains have one
        {"new": "I moved inland last month."},  # indirect with a change word
        {"style": "shouty"},
        {"new": BASE["old"]},  # texts must differ
        {"old": "my {city} flat"},  # template braces
        {"id": "03-1"},
        {"kind": "duplicate", "action": "noop", "type": "duplicate"},  # indirect duplicate
    ],
)
def test_schema_rejects_inconsistent_lines(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _line(**bad)


def test_change_words_are_whole_words() -> None:
    assert corpus.change_words_in("I moved, now!") == ["moved", "now"]
    assert corpus.change_words_in("Snowy nowhere, anew") == []


def test_a_transition_chain_expands_to_three_pairs() -> None:
    chain = _line(
        kind="transition",
        action="transition",
        indirect=False,
        transition="Half the boxes are packed, the van comes Friday.",
    )
    pairs = expand(chain)
    assert [(p.role, p.action, p.type) for p in pairs] == [
        ("old_transition", "transition", "temporal"),
        ("transition_new", "supersede", "temporal"),
        ("old_new", "supersede", "temporal"),
    ]
    assert pairs[0].new == pairs[1].old == chain.transition
    assert [p.line_id for p in pairs] == [chain.id] * 3
    assert chain.batch == "b98" and chain.domain == "home"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_loader_strict_and_lenient(tmp_path: Path) -> None:
    good = _write(tmp_path / "b98.jsonl", [BASE])
    _write(
        tmp_path / "b97.jsonl",
        [{**BASE, "id": "b97-0001"}, {**BASE, "id": "b97-0002", "action": "noop"}],
    )
    with pytest.raises(CorpusError, match="b97.jsonl:2"):
        load_lines([tmp_path])
    assert [ln.id for ln in load_lines([tmp_path], strict=False)] == ["b97-0001", "b98-0001"]
    _write(tmp_path / "b96.jsonl", [BASE])
    with pytest.raises(CorpusError, match="duplicate id"):
        load_lines([good, tmp_path / "b96.jsonl"])
    (tmp_path / "x.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="not JSON"):
        load_lines([tmp_path / "x.jsonl"])


def _corpus(n_batches: int = 3, slots: int = 4) -> list[CorpusLine]:
    out = []
    for b in range(n_batches):
        for s in range(slots):
            for i in range(3):
                out.append(
                    _line(
                        id=f"b{b:02d}-{s * 10 + i:04d}",
                        slot=f"d_{chr(97 + b)}.s_{chr(97 + s)}",
                        old=f"earlier text {b} {s} {i} about the flat",
                        new=f"later text {b} {s} {i} about the house",
                    )
                )
    return out


def test_split_is_by_slot_seeded_and_per_batch() -> None:
    lines = _corpus()
    train, val = split_by_slot(lines, 1, seed=0)
    assert {ln.slot for ln in train}.isdisjoint({ln.slot for ln in val})
    assert len(train) + len(val) == len(lines)
    assert sorted({ln.batch for ln in val}) == ["b00", "b01", "b02"]  # one slot per batch
    assert split_by_slot(lines, 1, seed=0) == (train, val)
    assert split_by_slot(lines, 1, seed=1) != (train, val)
    assert split_by_slot(lines, 9, seed=0)[0]  # never every slot of a batch


def test_cross_slot_negatives_pair_other_slots() -> None:
    lines = _corpus()
    negs = _cross_slot(lines, 40, random.Random(0))
    assert len(negs) == 40 and {n.action for n in negs} == {"keep_both"}
    by_id = {ln.id: ln for ln in lines}
    sides = set()
    for n in negs:
        a, b = (by_id[x] for x in n.line_id.split("+"))
        assert a.slot != b.slot
        assert n.old in (a.old, a.new, a.transition) and n.new in (b.old, b.new, b.transition)
        sides.add((n.old == a.old, n.new == b.new))
    assert len(sides) > 1  # any statement of either line, not only old against new
    assert _cross_slot(lines, 40, random.Random(0)) == negs


def test_context_wraps_facts_and_keeps_labels() -> None:
    lines = _corpus()
    pool = _context_pool(lines, [])
    assert {slot for slot, _ in pool} == {ln.slot for ln in lines}
    pairs = [p for ln in lines for p in expand(ln)]
    pairs += [
        LabelledPair(
            "same thing",
            "same thing",
            "noop",
            "duplicate",
            "d_a.s_a",
            "b00-0900",
            "duplicate",
            None,
            False,
            "terse",
        ),
        LabelledPair(
            "hi there",
            "how are you",
            "keep_both",
            "none",
            "chat.x",
            "c01-001:0-2",
            "negative",
            "dialog",
            False,
            "chat",
        ),
    ]
    out = _with_context(pairs, 1.0, pool, random.Random(0))
    assert [(p.action, p.type, p.slot) for p in out] == [(p.action, p.type, p.slot) for p in pairs]
    slot_of = {text: slot for slot, text in pool}
    for before, after in zip(pairs, out, strict=True):
        if before.subtype == "dialog":
            assert after == before  # conversation pairs stay as written
            continue
        assert before.old in after.old and before.new in after.new
        assert (after.old, after.new) != (before.old, before.new)
        if before.action == "noop":
            assert after.new == before.new  # a restatement with news is no duplicate
        for side in (after.old.replace(before.old, ""), after.new.replace(before.new, "")):
            added = [t for t in slot_of if t in side]
            assert all(slot_of[t] != before.slot for t in added)  # never its own slot
    assert _with_context(pairs, 0.0, pool, random.Random(0)) == pairs


def test_decision_rule_and_threshold_choice() -> None:
    import numpy as np

    keep = corpus.ACTIONS.index("keep_both")
    pa = np.full((4, 6), 0.02, dtype=np.float32)
    for row, (i, p) in enumerate([(0, 0.9), (0, 0.6), (keep, 0.9), (2, 0.7)]):
        pa[row, i] = p
    assert _decide(pa.copy(), 0.0).tolist() == [0, 0, keep, 2]
    assert _decide(pa.copy(), 0.65).tolist() == [0, keep, keep, 2]
    pairs = [
        LabelledPair("o", "n", a, "none", "s.x", "b00-0001", "negative", "episode", False, "terse")
        for a in ("keep_both", "keep_both", "keep_both", "supersede")
    ]
    # rows 0, 1 are negatives predicted as links (0.9, 0.6): the threshold must pass 0.9
    assert _threshold(pa, pairs, 0.0) == 0.95
    assert _threshold(pa, pairs, 0.5) == 0.65  # one of the three negatives may link
    # the write bound: rows 0 and 1 are two candidates of one write, row 3 another write
    groups = [_write_group(x) for x in ("c01-002:0-5", "c01-002:3-5", "c01-002:1-6", "c01-002:4-6")]
    assert groups == ["c01-002:5", "c01-002:5", "c01-002:6", "c01-002:6"]
    assert _false_write_rate(pa, groups, 0.0) == 1.0  # both writes have a link
    assert _false_write_rate(pa, groups, 0.75) == 0.5  # only the 0.9 link is left
    assert _threshold(pa, pairs, 1.0, (pa, groups, 0.5)) == 0.75
    assert _threshold(pa, pairs, 1.0, (pa, groups, 0.0)) == 0.95


def test_frames_and_distinct_n() -> None:
    assert diversity.frame("Moved to a flat by the sea last spring") == "_ to a _ by the _"
    assert diversity.frame("too short") is None
    shared = diversity.shared_frames(
        [
            (
                "a",
                [
                    "I moved to Tarnby last spring with my sister",
                    "We sold the old car in March to a neighbour",
                ],
            ),
            (
                "b",
                [
                    "I moved to Esk last autumn with my brother",
                    "We sold the red van in June to a cousin",
                ],
            ),
            ("c", ["I moved to Esk last autumn with my brother", "Short one"]),
        ]
    )
    assert list(shared.values()) == [["a", "b"]]
    assert diversity.distinct_n(["a a a a"], 1) == 0.25 and diversity.distinct_n([], 2) == 0.0


def test_checker_flags_a_repeated_frame_and_evaluation_names(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    pairs = tmp_path / "corpus" / "pairs"
    rows = [
        BASE,
        {
            **BASE,
            "id": "b98-0002",
            "old": "Renting a big loft by the harbour, bells at six.",
            "new": "Signed for a cottage uphill, the sea is an hour's ride away.",
        },
    ]
    _write(pairs / "b98.jsonl", rows)
    monkeypatch.setattr(check, "CORPUS_DIR", tmp_path / "corpus")
    assert check.main([str(pairs / "b98.jsonl")]) == 1
    assert "pair frame shared" in capsys.readouterr().out
    from atma_training.leaks import load_eval_sources

    banned = sorted(load_eval_sources(locomo=Path("/nonexistent")).names)[0]
    _write(pairs / "b98.jsonl", [{**BASE, "new": f"Signed with {banned}, inland at last."}])
    assert check.main([str(pairs / "b98.jsonl")]) == 1
    assert "name from" in capsys.readouterr().out
    _write(pairs / "b98.jsonl", [BASE])
    assert check.main([str(pairs / "b98.jsonl")]) == 0


def test_content_words_and_the_disjoint_check(tmp_path: Path, monkeypatch, capsys) -> None:
    assert diversity.content_words("lol the two ferries were late, ok?") == {"two", "ferry", "late"}
    assert diversity.shared_content(["the ferry was late", "Late again!", "a quiet bus"]) == {
        "late"
    }
    assert diversity.shared_content(["the ferry was late", "cycling to the office"]) == set()
    pairs = tmp_path / "corpus" / "pairs"
    overlapping = {
        **BASE,
        "id": "b98-0002",
        "old": "My bike lives in the hall, squeaky chain.",
        "new": "Sold the bike to a student on Tuesday, walking everywhere.",
    }
    _write(pairs / "b98.jsonl", [BASE, overlapping])
    monkeypatch.setattr(check, "CORPUS_DIR", tmp_path / "corpus")
    assert check.main([str(pairs / "b98.jsonl")]) == 0  # sharing words is fine by default
    assert "content-disjoint lines 1/2" in capsys.readouterr().out
    assert check.main(["--disjoint", str(pairs / "b98.jsonl")]) == 1
    assert "b98-0002: texts share content words ['bike']" in capsys.readouterr().out


def test_held_out_phrases_are_leaks_and_common_runs_are_not() -> None:
    from atma_training.leaks import EvalSources, find_leaks, phrases

    src = EvalSources()
    src.add_phrases("the {S} kept winning every chess tournament in Lisbon", "units_x.json")
    assert sorted(phrases("winning every chess tournament in")) == [
        "winning every chess tournament in"
    ]
    assert list(phrases("for the first time in")) == []  # two content words: common English
    hits = find_leaks("I kept winning every chess tournament, remember?", src)
    assert [(h.kind, h.text) for h in hits] == [("phrase", "kept winning every chess tournament")]
    assert find_leaks("winning a chess match every week", src) == []


def test_the_corpus_meets_its_brief() -> None:
    lines = load_lines()
    questions = corpus.load_questions()
    pairs = [p for ln in lines for p in expand(ln)]
    changes = [ln for ln in lines if ln.kind in ("change", "transition")]
    assert len(pairs) >= 15_000 and len({ln.slot for ln in lines}) >= 300
    assert sum(ln.indirect for ln in changes) / len(changes) >= 0.40
    assert {ln.subtype for ln in lines if ln.subtype} == set(corpus.NEGATIVE_SUBTYPES)
    assert {ln.style for ln in lines} == set(corpus.STYLES)
    assert {q.view for q in questions} == set(corpus.VIEWS) and len(questions) >= 3000
    texts = [(ln.id, [ln.old, *([ln.transition] if ln.transition else []), ln.new]) for ln in lines]
    assert diversity.shared_frames(texts) == {}  # no two pairs share a sentence frame
    md = report.report(lines, questions)
    assert "| b14 |" in md and "pair frames shared by two or more lines: **0**" in md


def _dialog(id_: str = "c98-001", n: int = 24, **kw: Any) -> dict[str, Any]:
    turns = [
        {
            "speaker": "Odile" if i % 2 == 0 else "Kwame",
            "text": f"turn {i} of a chat about gardens and the weather and tea",
        }
        for i in range(n)
    ]
    return {
        "id": id_,
        "topic": "chat.garden_tea",
        "speakers": ["Odile", "Kwame"],
        "style": "warm",
        "turns": turns,
        **kw,
    }


def test_dialog_schema_and_pairs() -> None:
    d = corpus.DialogLine.model_validate(_dialog())
    for bad in (
        {"speakers": ["Odile", "Odile"]},
        {"topic": "garden"},
        {"turns": [{"speaker": "Zed", "text": "hi"}] * 24},
        {"id": "c1-1"},
    ):
        with pytest.raises(ValidationError):
            corpus.DialogLine.model_validate(_dialog(**bad))
    pairs = corpus.dialog_pairs(d)
    assert {p.action for p in pairs} == {"keep_both"} and {p.subtype for p in pairs} == {"dialog"}
    assert len(pairs) == 2 * sum(range(12))  # every earlier turn of the same speaker
    for p in pairs:
        i, j = (int(x) for x in p.line_id.split(":")[1].split("-"))
        assert i < j and d.turns[i].speaker == d.turns[j].speaker
    near = corpus.dialog_pairs(d, {5: [1, 3, 4], 4: [0]})  # 4 is the other speaker's
    assert [p.line_id for p in near] == ["c98-001:0-4", "c98-001:1-5", "c98-001:3-5"]


def test_dialog_split_is_per_batch() -> None:
    from atma_training.judge_train import split_dialogs

    ds = [
        corpus.DialogLine.model_validate(_dialog(f"c9{b}-00{i}"))
        for b in (7, 8)
        for i in range(1, 4)
    ]
    train, val = split_dialogs(ds, 1, seed=0)
    assert sorted(d.batch for d in val) == ["c97", "c98"] and len(train) == 4
    assert split_dialogs(ds, 1, seed=0) == (train, val)


def test_the_conversations_are_as_briefed() -> None:
    dialogs = corpus.load_dialogs()
    assert len(dialogs) >= 100 and len({d.batch for d in dialogs}) >= 6
    assert all(20 <= len(d.turns) <= 60 for d in dialogs)
    assert len({t.text for d in dialogs for t in d.turns}) > 0.99 * sum(
        len(d.turns) for d in dialogs
    )
