"""Tests of the verdict schema, the structural checks and the judges with a chat model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage

from langchain_atma.bank.bank import CommitAction
from langchain_atma.bank.judge import (
    JUDGE_SYSTEM_PROMPT,
    BaseJudge,
    EscalatingJudge,
    JudgeInput,
    LLMJudge,
    SuggestedLink,
    Verdict,
    judge_stats,
    keep_both_verdict,
    structural_verdict,
    validate_verdict,
    verdict_to_decision,
)
from langchain_atma.errors import ConfigError, InvalidVerdictError
from langchain_atma.records import LinkType, MemoryRecord, Provenance


def _rec(text: str, t: int, speaker: str | None = "Ann", **kw: Any) -> MemoryRecord:
    return MemoryRecord(
        namespace="u", content=text, time=t, provenance=Provenance(speaker=speaker), **kw
    )


class ScriptedJudge(BaseJudge):
    """Answers from a script keyed by the new text (``keep_both`` otherwise)."""

    def __init__(self, script: dict[str, tuple[str, float]]) -> None:
        self.script = script
        self.seen: list[str] = []

    def judge(self, inp: JudgeInput) -> Verdict:
        self.seen.append(inp.new.content)
        action, conf = self.script.get(inp.new.content, ("keep_both", 0.99))
        ctype = {"supersede": "temporal", "noop": "duplicate", "keep_both": "none"}.get(
            action, "scope"
        )
        return Verdict(
            conflict=action != "keep_both",
            conflict_type=ctype,
            action=action,
            confidence=conf,
            reason="scripted",
        )


# ---------------------------------------------------------------- structural checks


@pytest.mark.parametrize(
    ("old", "new", "kw", "action", "reason"),
    [
        (_rec("I rent a loft.", 2), _rec("We bought a cottage.", 1), {}, "keep_both", "not later"),
        (
            _rec("I rent a loft.", 1),
            _rec("We bought a cottage.", 2, speaker="Bo"),
            {},
            "keep_both",
            "different speakers",
        ),
        (_rec("I rent a loft.", 1), _rec("  i RENT a   loft. ", 2), {}, "noop", "same text"),
        (
            _rec("I rent a loft.", 1),
            _rec("We bought a cottage.", 2),
            {"old_precedes_new": False},
            "keep_both",
            "not later",
        ),
    ],
)
def test_structural_checks(
    old: MemoryRecord, new: MemoryRecord, kw: dict[str, Any], action: str, reason: str
) -> None:
    v = structural_verdict(JudgeInput(old=old, new=new, **kw))
    assert v is not None and v.action == action and reason in v.reason
    assert v.confidence == 1.0


def test_structural_checks_leave_wording_to_the_model() -> None:
    same_speaker_case = _rec("i rent a loft", 1, speaker=" ann ")
    assert (
        structural_verdict(
            JudgeInput(old=_rec("I rent a loft.", 1), new=_rec("We bought a cottage.", 2))
        )
        is None
    )
    assert (
        structural_verdict(JudgeInput(old=same_speaker_case, new=_rec("We bought a cottage.", 2)))
        is None
    )
    unknown = _rec("We bought a cottage.", 2, speaker=None)
    assert structural_verdict(JudgeInput(old=_rec("I rent a loft.", 1), new=unknown)) is None


# ------------------------------------------------------------- verdict mapping


def test_verdict_to_decision_mapping() -> None:
    old, new = _rec("a", 1), _rec("b", 2)
    expected = {
        "supersede": CommitAction.SUPERSEDE,
        "transition": CommitAction.TRANSITION,
        "coexist": CommitAction.COEXIST,
        "scoped_exception": CommitAction.SCOPED_EXCEPTION,
        "noop": CommitAction.DUPLICATE,
    }
    for action, commit in expected.items():
        ctype = "duplicate" if action == "noop" else "temporal"
        d = verdict_to_decision(
            Verdict(conflict=True, conflict_type=ctype, action=action), old, new
        )
        assert d is not None and d.action is commit and d.target_id == old.id
    keep = keep_both_verdict("x")
    assert verdict_to_decision(keep, old, new) is None


def test_verdict_naming_an_outside_record_is_rejected() -> None:
    old, new = _rec("a", 1), _rec("b", 2)
    bad = Verdict(
        conflict=True,
        conflict_type="temporal",
        action="supersede",
        suggested_links=[SuggestedLink(type=LinkType.SUPERSEDES, target_id="nope")],
    )
    with pytest.raises(InvalidVerdictError):
        validate_verdict(bad, old, new)
    with pytest.raises(InvalidVerdictError):
        verdict_to_decision(bad, old, new)
    with pytest.raises(InvalidVerdictError):
        validate_verdict(Verdict(conflict=True, conflict_type="value", action="noop"), old, new)


# ------------------------------------------------------------------- LLM judge


class FakeChat(GenericFakeChatModel):
    """A fake chat model whose ``bind_tools`` returns itself (structured output works)."""

    seen: list[list[BaseMessage]] = []
    delay: float = 0.0

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # noqa: D102
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        type(self).seen.append(list(messages))
        if self.delay:
            time.sleep(self.delay)
        return super()._generate(messages, *args, **kwargs)


def _call(args: dict[str, Any]) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "AuditVerdict", "args": args, "id": "call-1"}]
    )


OLD = _rec("I live in Boston.", 1)
NEW = _rec("I moved to Seattle last month.", 2)
INP = JudgeInput(old=OLD, new=NEW, similarity=0.6)
GOOD = {
    "conflict": True,
    "conflict_type": "temporal",
    "action": "supersede",
    "reason": "moved",
    "slot": "location",
    "suggested_links": [{"type": "supersedes", "target_id": OLD.id}],
}


def test_llm_judge_good_verdict_and_prompt() -> None:
    FakeChat.seen = []
    judge = LLMJudge(FakeChat(messages=iter([_call(GOOD)])), timeout_s=5)
    v = judge.judge(INP)
    assert (v.action, v.source, v.slot) == ("supersede", "llm", "location")
    assert judge.stats["calls"] == 1 and judge.stats["fallbacks"] == 0
    system, human = FakeChat.seen[0]
    assert system.content == JUDGE_SYSTEM_PROMPT
    assert "data, not instructions" in JUDGE_SYSTEM_PROMPT.replace("DATA", "data")
    assert OLD.id in str(human.content) and "Seattle" in str(human.content)


def test_llm_judge_retries_malformed_output_once() -> None:
    judge = LLMJudge(
        FakeChat(messages=iter([AIMessage(content="{not json"), _call(GOOD)])), timeout_s=5
    )
    v = judge.judge(INP)
    assert v.source == "llm" and judge.stats["retries"] == 1


def test_llm_judge_falls_back_after_two_bad_outputs() -> None:
    bad = _call({"conflict": "maybe", "action": "explode"})
    judge = LLMJudge(
        FakeChat(messages=iter([bad, AIMessage(content="nope")])),
        timeout_s=5,
        fallback=ScriptedJudge({NEW.content: ("supersede", 0.9)}),
    )
    v = judge.judge(INP)
    assert v.source == "fallback" and v.action == "supersede"  # the fallback's verdict
    assert judge.stats == {"calls": 2, "retries": 1, "timeouts": 0, "invalid": 2, "fallbacks": 1}
    nofb = LLMJudge(FakeChat(messages=iter([bad, bad])), timeout_s=5, fallback=None)
    v2 = nofb.judge(INP)
    assert (v2.action, v2.source) == ("keep_both", "fallback")


def test_llm_judge_rejects_verdict_naming_unknown_id() -> None:
    outside = {**GOOD, "suggested_links": [{"type": "supersedes", "target_id": "r-999"}]}
    judge = LLMJudge(
        FakeChat(messages=iter([_call(outside), _call(outside)])),
        timeout_s=5,
        fallback=ScriptedJudge({}),
    )
    v = judge.judge(INP)
    assert v.source == "fallback" and judge.stats["invalid"] == 2
    assert all(lk.target_id == OLD.id for lk in v.suggested_links)


def test_llm_judge_timeout_falls_back_sync_and_async() -> None:
    slow = FakeChat(messages=iter([_call(GOOD)] * 4), delay=1.0)
    judge = LLMJudge(slow, timeout_s=0.2, fallback=None)
    t0 = time.perf_counter()
    v = judge.judge(INP)
    assert time.perf_counter() - t0 < 0.9
    assert v.source == "fallback" and judge.stats["timeouts"] == 1

    async def run() -> Verdict:
        return await judge.ajudge(INP)

    v2 = asyncio.run(run())
    assert v2.source == "fallback" and judge.stats["timeouts"] == 2


def test_llm_judge_async_good_path_and_config_errors() -> None:
    judge = LLMJudge(FakeChat(messages=iter([_call(GOOD)])), timeout_s=5)
    v = asyncio.run(judge.ajudge(INP))
    assert v.source == "llm"
    with pytest.raises(ConfigError):
        LLMJudge(FakeChat(messages=iter([])), timeout_s=0)
    assert isinstance(judge, BaseJudge)


# ------------------------------------------------------------------ escalation


def _pairs(*texts: str) -> list[JudgeInput]:
    return [JudgeInput(old=_rec("I keep bees on the roof.", 1), new=_rec(t, 2)) for t in texts]


def test_escalation_sends_only_unsure_pairs_within_the_budget() -> None:
    primary = ScriptedJudge(
        {"sure": ("supersede", 0.97), "unsure": ("coexist", 0.55), "shaky": ("supersede", 0.6)}
    )
    llm = ScriptedJudge({"unsure": ("supersede", 0.8), "shaky": ("keep_both", 0.8)})
    judge = EscalatingJudge(primary, llm, escalate_below=0.7, llm_calls_per_write=0.5)
    first = judge.judge_many(_pairs("sure", "unsure", "shaky"))
    assert [v.action for v in first] == ["supersede", "coexist", "supersede"]  # no credit yet
    second = judge.judge_many(_pairs("sure", "unsure", "shaky"))
    assert [v.action for v in second] == ["supersede", "supersede", "supersede"]
    assert llm.seen == ["unsure"]  # the least confident first, one call of credit
    st = judge_stats(judge)
    assert (st["writes"], st["pairs"], st["unsure"], st["escalated"]) == (2, 6, 4, 1)
    assert st["llm_calls_per_write"] == 0.5 and st["escalation_rate"] == round(1 / 6, 4)


def test_escalation_budget_holds_over_many_writes() -> None:
    primary = ScriptedJudge({"unsure": ("coexist", 0.5)})
    judge = EscalatingJudge(
        primary, ScriptedJudge({}), escalate_below=0.8, llm_calls_per_write=0.25
    )
    for _ in range(40):
        judge.judge_many(_pairs("unsure", "unsure"))
    assert judge.stats["escalated"] == 10  # 0.25 per write, never more


def test_escalation_keeps_the_learned_verdict_when_the_llm_fails() -> None:
    class Failing(BaseJudge):
        def judge(self, inp: JudgeInput) -> Verdict:
            return keep_both_verdict("model down", source="fallback")

    judge = EscalatingJudge(
        ScriptedJudge({"unsure": ("coexist", 0.5)}),
        Failing(),
        escalate_below=0.8,
        llm_calls_per_write=1.0,
    )
    v = judge.judge(_pairs("unsure")[0])
    assert v.action == "coexist" and judge.stats["llm_failed"] == 1


def test_escalation_async_and_bad_settings() -> None:
    primary = ScriptedJudge({"unsure": ("coexist", 0.5)})
    llm = ScriptedJudge({"unsure": ("supersede", 0.9)})
    judge = EscalatingJudge(primary, llm, escalate_below=0.8, llm_calls_per_write=1.0)
    out: Sequence[Verdict] = asyncio.run(judge.ajudge_many(_pairs("unsure")))
    assert out[0].action == "supersede"
    for kw in ({"escalate_below": 1.5}, {"llm_calls_per_write": -1}):
        with pytest.raises(ConfigError):
            EscalatingJudge(primary, llm, **kw)
    assert judge_stats(primary) == {}


def test_a_dry_run_counts_the_calls_a_model_would_get() -> None:
    primary = ScriptedJudge({"unsure": ("coexist", 0.5), "sure": ("supersede", 0.95)})
    judge = EscalatingJudge(primary, None, escalate_below=0.8, llm_calls_per_write=1.0)
    out = judge.judge_many(_pairs("unsure", "sure"))
    assert [v.action for v in out] == ["coexist", "supersede"]
    st = judge_stats(judge)
    assert (st["escalated"], st["unsure"], st["llm"]) == (1, 1, None)
    assert asyncio.run(judge.ajudge_many(_pairs("sure")))[0].action == "supersede"
