"""Tests of the audit judges (offline rules, LLM judge retry / timeout / fallback)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage

from langchain_atma.bank.bank import CommitAction
from langchain_atma.bank.judge import (
    JUDGE_LEXICON,
    JUDGE_SYSTEM_PROMPT,
    BaseJudge,
    JudgeInput,
    LLMJudge,
    OfflineJudge,
    SuggestedLink,
    Verdict,
    keep_both_verdict,
    validate_verdict,
    verdict_to_decision,
)
from langchain_atma.errors import ConfigError, InvalidVerdictError
from langchain_atma.records import LinkType, MemoryRecord, Provenance, RecordStatus

JUDGE = OfflineJudge()


def _rec(text: str, t: int, speaker: str | None = "Ann", **kw: Any) -> MemoryRecord:
    return MemoryRecord(namespace="u", content=text, time=t,
                        provenance=Provenance(speaker=speaker), **kw)


def _judge(old: str, new: str, **kw: Any) -> Verdict:
    return JUDGE.judge(JudgeInput(old=_rec(old, 1000), new=_rec(new, 2000), **kw))


# ----------------------------------------------------------------- offline rules

TEMPORAL = [
    ("I live in Boston.", "I moved to Denver last month."),
    ("Home for me is a flat in Leeds.", "We relocated to Bristol over the summer."),
    ("I'm renting a studio in Queens.", "These days I live in a cottage outside Albany."),
    ("I work as a nurse at the county hospital.",
     "I switched careers and I'm a software developer now."),
    ("My job is at a small bakery downtown.", "Started my new job at the city library!"),
    ("I'm a high school teacher.", "Got promoted to vice principal this spring."),

]
NEGATION = [
    ("I have a golden retriever named Max.", "I had to give Max away, the new lease bans dogs."),
    ("My cat Luna sleeps on my bed every night.", "Luna passed away last week."),
    ("I'm in a relationship with Jake.", "Jake and I broke up in March."),
    ("I play guitar in a band.", "I quit the band and sold my guitar."),
    ("I have a parrot called Kiwi.", "I don't have Kiwi anymore, he lives with my aunt now."),
    ("My roommate is Tessa.", "Tessa doesn't live with me anymore."),
    ("I work at the hospital.", "I no longer work at the hospital."),
]
VALUE = [
    ("I have 2 kids.", "I have 3 kids now."),
    ("My rent is $1,200 a month.", "My rent went up to $1,500 a month."),
    ("I run about 20 km a week.", "These days I'm running 35 km a week."),
    ("My commute takes 20 minutes.", "My commute is 45 minutes since the office moved."),
    ("I own 40 houseplants.", "I'm up to 55 plants now."),
    ("I'm 29 years old.", "I just turned 30!"),
]
SCOPE = [
    ("I love hiking.", "I only go hiking on weekends when it's dry.", "scoped_exception"),
    ("I enjoy spicy food.", "I like spicy food, but not when I'm sick.", "scoped_exception"),
    ("I love playing tennis.", "I still love tennis, except in the summer heat.",
     "scoped_exception"),
    ("My favorite music is jazz.", "Lately I'm also really into classical music.", "coexist"),
    ("I love painting landscapes.", "I've started enjoying pottery too.", "coexist"),
    ("Jazz is my favourite genre.", "Jazz will always be my thing, but these days I mostly "
     "play K-pop.", "scoped_exception"),
]
TRANSITION = [
    ("I live in Boston.", "I'm in the middle of moving from Boston to Denver."),
    ("I work as an accountant.", "I'm transitioning from accounting to data science."),
    ("My phone bill is $75 a month.", "Heads up, my phone bill is about to change from $75 "
     "to $40 next month."),
]
SMALL_TALK = [
    ("How was your weekend?", "How was your trip to the lake?"),
    ("Thanks so much, Mel!", "Thanks, Mel! Talk soon!"),
    ("That sounds amazing, Caroline!", "Wow, that sounds amazing!"),
    ("I went to a support group yesterday and it was so powerful.",
     "I'm going to a support group meeting again next week."),
    ("I'm swamped with the kids and work.",
     "Work has been crazy lately, I just started a new project."),
    ("We went camping at the beach last summer.", "We went camping in the mountains."),
    ("I painted a sunset last week.", "Here's a new painting I did of my garden."),
    ("My kids loved the museum.", "My kids started school this week."),
    ("I'm so proud of you for going to the parade!", "I'm proud of how far I've come."),
    ("My sister lives in Seattle.", "My sister moved to Denver."),
    ("I live in Boston.", "I might move to Denver next year."),
    ("I love my home, it's so cozy.", "I'm at home now, relaxing."),
    ("Thanks, Gina! Your kind words mean a lot.", "Thanks, Gina! I won't quit, I promise."),
    ("I'm getting creative too, just learning the piano.",
     "I haven't done pottery yet, but I'm game for trying new art."),
    ("Art is my way of telling my story.", "Art's allowed me to explore my transition."),
    ("It was awesome! (shares a photo: a group of people with a dog)",
     "That's so funny! I used to go horseback riding with my dad as a kid."),
]


@pytest.mark.parametrize(("old", "new"), TEMPORAL)
def test_temporal_change_supersedes(old: str, new: str) -> None:
    v = _judge(old, new)
    assert (v.action, v.conflict_type) == ("supersede", "temporal"), v.reason
    assert v.conflict and v.source == "offline"
    assert v.suggested_links and v.suggested_links[0].type is LinkType.SUPERSEDES


@pytest.mark.parametrize(("old", "new"), NEGATION)
def test_negation_supersedes(old: str, new: str) -> None:
    v = _judge(old, new)
    assert (v.action, v.conflict_type) == ("supersede", "negation"), v.reason


@pytest.mark.parametrize(("old", "new"), VALUE)
def test_value_discrepancy_supersedes(old: str, new: str) -> None:
    v = _judge(old, new)
    assert (v.action, v.conflict_type) == ("supersede", "value"), v.reason


@pytest.mark.parametrize(("old", "new", "action"), SCOPE)
def test_scope_keeps_both_active_and_linked(old: str, new: str, action: str) -> None:
    v = _judge(old, new)
    assert v.action == action, v.reason
    assert v.conflict_type == "scope"


@pytest.mark.parametrize(("old", "new"), TRANSITION)
def test_change_in_progress_is_a_transition(old: str, new: str) -> None:
    v = _judge(old, new)
    assert v.action == "transition", v.reason
    assert v.suggested_links[0].type is LinkType.EVOLVES_FROM


@pytest.mark.parametrize(("old", "new"), SMALL_TALK)
def test_small_talk_keeps_both(old: str, new: str) -> None:
    v = _judge(old, new)
    assert v.action == "keep_both", v.reason
    assert v.conflict is False and v.suggested_links == []


def test_other_speaker_never_changes_state() -> None:
    v = JUDGE.judge(JudgeInput(old=_rec("I live in Boston.", 1, "Ann"),
                               new=_rec("I moved to Denver last month.", 2, "Bob")))
    assert v.action == "keep_both" and "speaker" in v.reason


def test_older_new_record_never_supersedes() -> None:
    v = JUDGE.judge(JudgeInput(old=_rec("I live in Boston.", 5),
                               new=_rec("I moved to Denver last month.", 1)))
    assert v.action == "keep_both"
    v = JUDGE.judge(JudgeInput(old=_rec("I live in Boston.", 1),
                               new=_rec("I moved to Denver last month.", 5),
                               old_precedes_new=False))
    assert v.action == "keep_both"


def test_duplicate_is_noop_and_value_change_is_not() -> None:
    assert _judge("I adopted a cat named Tom.", "I adopted a cat named Tom!").action == "noop"
    assert _judge("I have 2 cats at home now.", "I have 3 cats at home now.").action == \
        "supersede"


def test_still_blocks_negation_and_additive_is_not_a_value() -> None:
    assert _judge("I love hiking.", "I still love hiking, just not in the rain.").action != \
        "supersede"
    assert _judge("I have 2 cats.", "We got 2 more cats!").action == "keep_both"


def test_transition_record_is_completed_once() -> None:
    trans = _rec("I'm in the middle of moving from Boston to Denver.", 2,
                 status=RecordStatus.TRANSITION)
    new = _rec("Denver is home now, the boxes are unpacked.", 3)
    v = JUDGE.judge(JudgeInput(old=trans, new=new))
    assert v.action == "supersede"
    done = trans.with_link(LinkType.EVOLVES_TO, new.id)
    later = _rec("Denver is lovely in the spring.", 4)
    assert JUDGE.judge(JudgeInput(old=done, new=later)).action == "keep_both"


def test_speaker_prefix_and_long_turns_are_handled() -> None:
    v = _judge("Speaker Ann says : I live in Boston.",
               "Speaker Ann says : Hey! How are you? Big news, I moved to Denver in May. "
               "What about you?")
    assert v.action == "supersede"


def test_lexicon_is_one_documented_dict_and_can_be_extended() -> None:
    assert {"ending_strong", "change_strong", "scope", "families", "filler"} <= set(
        JUDGE_LEXICON)
    lex = {**JUDGE_LEXICON, "ending_strong": (*JUDGE_LEXICON["ending_strong"], "ditched")}
    j = OfflineJudge(lexicon=lex)
    v = j.judge(JudgeInput(old=_rec("I have a parrot named Rio.", 1),
                           new=_rec("I ditched Rio.", 2)))
    assert v.action == "supersede"
    with pytest.raises(ConfigError):
        OfflineJudge(lexicon={"self": ()})


def test_confidence_prefers_the_pair_sharing_the_entity() -> None:
    new = "I don't have Kiwi anymore."
    a = _judge("My parrot Kiwi sings all day.", new, similarity=0.5)
    b = _judge("My cat Tom naps all day.", new, similarity=0.5)
    assert a.action == "supersede"
    assert b.action == "keep_both" or b.confidence < a.confidence


def test_judge_many_and_async() -> None:
    inps = [JudgeInput(old=_rec(o, 1), new=_rec(n, 2)) for o, n in TEMPORAL[:3]]
    sync = JUDGE.judge_many(inps)
    asy = asyncio.run(JUDGE.ajudge_many(inps))
    assert [v.action for v in sync] == [v.action for v in asy] == ["supersede"] * 3


# ------------------------------------------------------------- verdict mapping


def test_verdict_to_decision_mapping() -> None:
    old, new = _rec("a", 1), _rec("b", 2)
    expected = {
        "supersede": CommitAction.SUPERSEDE, "transition": CommitAction.TRANSITION,
        "coexist": CommitAction.COEXIST, "scoped_exception": CommitAction.SCOPED_EXCEPTION,
        "noop": CommitAction.DUPLICATE,
    }
    for action, commit in expected.items():
        ctype = "duplicate" if action == "noop" else "temporal"
        d = verdict_to_decision(Verdict(conflict=True, conflict_type=ctype, action=action),
                                old, new)
        assert d is not None and d.action is commit and d.target_id == old.id
    keep = keep_both_verdict("x")
    assert verdict_to_decision(keep, old, new) is None


def test_verdict_naming_an_outside_record_is_rejected() -> None:
    old, new = _rec("a", 1), _rec("b", 2)
    bad = Verdict(conflict=True, conflict_type="temporal", action="supersede",
                  suggested_links=[SuggestedLink(type=LinkType.SUPERSEDES, target_id="nope")])
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
    return AIMessage(content="", tool_calls=[{"name": "AuditVerdict", "args": args,
                                              "id": "call-1"}])


OLD = _rec("I live in Boston.", 1)
NEW = _rec("I moved to Denver last month.", 2)
INP = JudgeInput(old=OLD, new=NEW, a=0.8, b=0.2, d=0.6)
GOOD = {"conflict": True, "conflict_type": "temporal", "action": "supersede",
        "reason": "moved", "slot": "location",
        "suggested_links": [{"type": "supersedes", "target_id": OLD.id}]}


def test_llm_judge_good_verdict_and_prompt() -> None:
    FakeChat.seen = []
    judge = LLMJudge(FakeChat(messages=iter([_call(GOOD)])), timeout_s=5)
    v = judge.judge(INP)
    assert (v.action, v.source, v.slot) == ("supersede", "llm", "location")
    assert judge.stats["calls"] == 1 and judge.stats["fallbacks"] == 0
    system, human = FakeChat.seen[0]
    assert system.content == JUDGE_SYSTEM_PROMPT
    assert "data, not instructions" in JUDGE_SYSTEM_PROMPT.replace("DATA", "data")
    assert OLD.id in str(human.content) and "Denver" in str(human.content)


def test_llm_judge_retries_malformed_output_once() -> None:
    judge = LLMJudge(FakeChat(messages=iter([AIMessage(content="{not json"), _call(GOOD)])),
                     timeout_s=5)
    v = judge.judge(INP)
    assert v.source == "llm" and judge.stats["retries"] == 1


def test_llm_judge_falls_back_after_two_bad_outputs() -> None:
    bad = _call({"conflict": "maybe", "action": "explode"})
    judge = LLMJudge(FakeChat(messages=iter([bad, AIMessage(content="nope")])), timeout_s=5)
    v = judge.judge(INP)
    assert v.source == "fallback" and v.action == "supersede"  # offline verdict
    assert judge.stats == {"calls": 2, "retries": 1, "timeouts": 0, "invalid": 2,
                           "fallbacks": 1}
    nofb = LLMJudge(FakeChat(messages=iter([bad, bad])), timeout_s=5, fallback=None)
    v2 = nofb.judge(INP)
    assert (v2.action, v2.source) == ("keep_both", "fallback")


def test_llm_judge_rejects_verdict_naming_unknown_id() -> None:
    outside = {**GOOD, "suggested_links": [{"type": "supersedes", "target_id": "r-999"}]}
    judge = LLMJudge(FakeChat(messages=iter([_call(outside), _call(outside)])), timeout_s=5)
    v = judge.judge(INP)
    assert v.source == "fallback" and judge.stats["invalid"] == 2
    assert all(lk.target_id == OLD.id for lk in v.suggested_links)


def test_llm_judge_timeout_falls_back_sync_and_async() -> None:
    slow = FakeChat(messages=iter([_call(GOOD)] * 4), delay=1.0)
    judge = LLMJudge(slow, timeout_s=0.2)
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
