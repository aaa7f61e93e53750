"""Tests of the learned judge and its state model: the shipped file, its card, bad input."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from langchain_atma.bank.judge import JudgeInput
from langchain_atma.bank.learned_judge import LearnedJudge, default_judge
from langchain_atma.errors import ConfigError, InvalidRecordError, JudgeModelError
from langchain_atma.records import MemoryRecord, Provenance
from langchain_atma.state_model import (
    CARD_FORMAT_VERSION,
    DEFAULT_MODEL_PATH,
    MAX_TEXT_CHARS,
    StateModel,
    card_path,
    prepare_text,
    tokenizer_hash,
)

CHANGE_GROUP = {"supersede", "transition"}


def _inp(old: str, new: str, speaker: str = "Ines", **kw: Any) -> JudgeInput:
    return JudgeInput(
        old=MemoryRecord(
            namespace="t", content=old, time=1000, provenance=Provenance(speaker="Ines")
        ),
        new=MemoryRecord(
            namespace="t", content=new, time=2000, provenance=Provenance(speaker=speaker)
        ),
        **kw,
    )


@pytest.fixture(scope="module")
def judge() -> LearnedJudge:
    return default_judge()


def test_the_shipped_card_describes_the_shipped_model() -> None:
    card = json.loads(card_path(DEFAULT_MODEL_PATH).read_text(encoding="utf-8"))
    assert card["format_version"] == CARD_FORMAT_VERSION
    assert card["model_sha256"] == hashlib.sha256(DEFAULT_MODEL_PATH.read_bytes()).hexdigest()
    assert card["tokenizer_sha256"] == tokenizer_hash()
    assert set(card["actions"]) == {
        "supersede",
        "transition",
        "coexist",
        "scoped_exception",
        "keep_both",
        "noop",
    }
    assert card["views"] == ["current", "historical", "transition", "neutral"]
    assert card["input"]["max_text_chars"] == MAX_TEXT_CHARS
    assert DEFAULT_MODEL_PATH.stat().st_size <= 30 * 1024 * 1024
    assert card["val_slots"] and card["corpus_lines"] >= card["train_pairs"] // 4


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Twelve-hour shifts at the bakery again, flour in my hair till midnight.",
            "Handed in my apron for good, the bakery is somebody else's problem now.",
        ),
        (
            "My sedan is in the shop again, third time this winter.",
            "Sold the sedan on Saturday and bought a cargo bike, no more repair bills.",
        ),
        (
            "I pay 900 a month for my room near the station.",
            "Rent on the room went up to 1,050 a month from this summer.",
        ),
    ],
)
def test_clear_changes_are_links(judge: LearnedJudge, old: str, new: str) -> None:
    assert judge.judge(_inp(old, new)).action in CHANGE_GROUP


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Twelve-hour shifts at the bakery again, flour in my hair till midnight.",
            "Did you watch the match last night? What a finish!",
        ),
        (
            "My sedan is in the shop again, third time this winter.",
            "My brother sold his sedan and bought a cargo bike.",
        ),
        (
            "I pay 900 a month for my room near the station.",
            "Thinking about maybe looking for a bigger place some day, who knows.",
        ),
    ],
)
def test_clear_non_changes_keep_both(judge: LearnedJudge, old: str, new: str) -> None:
    assert judge.judge(_inp(old, new)).action == "keep_both"


def test_batch_equals_single_and_is_deterministic(judge: LearnedJudge) -> None:
    inps = [
        _inp("I walk to the office every morning.", t)
        for t in (
            "Bought a scooter, the office is ten minutes away on it.",
            "Walked to the office in the rain again, soaked.",
            "Lovely sunset tonight!",
            "I walk to the office every morning.",
        )
    ]
    batch = judge.judge_many(inps)
    single = [judge.judge(i) for i in inps]
    assert [v.action for v in batch] == [v.action for v in single]
    assert [v.confidence for v in batch] == [v.confidence for v in single]
    assert batch[3].action == "noop" and batch[3].confidence == 1.0  # structural
    again = LearnedJudge(DEFAULT_MODEL_PATH).judge_many(inps)
    assert [v.model_dump() for v in again] == [v.model_dump() for v in batch]
    asy = asyncio.run(judge.ajudge_many(inps))
    assert [v.action for v in asy] == [v.action for v in batch]


def test_verdicts_are_valid_and_probabilities_sum_to_one(judge: LearnedJudge) -> None:
    pa, pt = judge.model.pair_probabilities([("I own two cats.", "We adopted a third cat today!")])
    assert pa.shape == (1, 6) and pt.shape == (1, 6)
    assert pa.sum() == pytest.approx(1.0, abs=1e-4) and pt.sum() == pytest.approx(1.0, abs=1e-4)
    v = judge.judge(_inp("I own two cats.", "We adopted a third cat today!"))
    assert 0.0 <= v.confidence <= 1.0 and v.source == "offline" and "p=" in v.reason
    allowed = {
        "supersede": {"temporal", "negation", "value"},
        "transition": {"temporal", "negation", "value"},
        "coexist": {"scope"},
        "scoped_exception": {"scope"},
        "noop": {"duplicate"},
        "keep_both": {"none"},
    }
    assert v.conflict_type in allowed[v.action]


def test_bad_input_is_handled(judge: LearnedJudge) -> None:
    with pytest.raises(InvalidRecordError):  # nothing empty reaches the judge
        _inp("I live by the sea.", "   \n ")
    assert judge.judge(_inp("I live by the sea.", "Ich wohne jetzt in den Bergen.")).action in {
        "supersede",
        "transition",
        "coexist",
        "scoped_exception",
        "keep_both",
        "noop",
    }
    huge = "blah " * 20_000 + "I sold the house."
    v = judge.judge(_inp("I own a house by the sea.", huge))
    assert v.action in {
        "supersede",
        "transition",
        "coexist",
        "scoped_exception",
        "keep_both",
        "noop",
    }
    assert len(prepare_text(huge)) == MAX_TEXT_CHARS
    assert prepare_text("a\x00b\t\n c") == "a b c"
    assert (
        judge.judge(_inp("I live by the sea.", "I moved inland.", speaker="Bo")).action
        == "keep_both"
    )


def test_link_threshold_only_removes_links(judge: LearnedJudge) -> None:
    inp = _inp("I drive a red hatchback to work.", "Sold the hatchback, I take the tram now.")
    strict = LearnedJudge(link_threshold=1.0)
    assert strict.judge(inp).action == "keep_both"
    assert judge.judge(inp).action != "keep_both"
    assert "LearnedJudge(" in repr(strict)


def _copy_model(tmp_path: Path) -> Path:
    target = tmp_path / "m.onnx"
    shutil.copyfile(DEFAULT_MODEL_PATH, target)
    shutil.copyfile(card_path(DEFAULT_MODEL_PATH), card_path(target))
    return target


def test_missing_or_corrupt_files_name_the_file_and_the_rebuild(tmp_path: Path) -> None:
    with pytest.raises(JudgeModelError, match=r"missing.*atma judge train"):
        LearnedJudge(tmp_path / "nothing.onnx")
    model = _copy_model(tmp_path)
    card_path(model).unlink()
    with pytest.raises(JudgeModelError, match=r"card .*missing"):
        LearnedJudge(model)
    (tmp_path / "b").mkdir()
    model = _copy_model(tmp_path / "b")
    model.write_bytes(model.read_bytes()[:1000])  # truncated
    with pytest.raises(JudgeModelError, match="does not match its card"):
        LearnedJudge(model)
    card = json.loads(card_path(model).read_text())
    card["model_sha256"] = hashlib.sha256(model.read_bytes()).hexdigest()
    card_path(model).write_text(json.dumps(card))
    broken = LearnedJudge(model)  # the card vouches for the bytes: loading fails clearly
    with pytest.raises(JudgeModelError, match=r"cannot be loaded.*atma judge train"):
        broken.judge(_inp("I live by the sea.", "I moved inland."))
    assert card_path(model) == model.with_suffix(".json")
    card_path(model).write_text("{not json")
    with pytest.raises(JudgeModelError, match="unreadable"):
        LearnedJudge(model)


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        LearnedJudge(link_threshold=2.0)
    for threads in (0, True, 1.5):
        with pytest.raises(ConfigError):
            StateModel(threads=threads)  # type: ignore[arg-type]
