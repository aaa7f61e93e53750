"""Offline judge on independently phrased updates (issue #3).

Each case is a pair of first-person statements written in styles the project's
own LTP generator does not use (casual chat, dropped subjects, shouting, names
in apposition, the change stated in a second sentence). The judge runs without
an encoder, as in the rest of the unit tests; ``similarity`` is passed where a
rule reads it.
"""

from __future__ import annotations

from typing import Any

import pytest

from langchain_atma.bank.judge import JudgeInput, OfflineJudge, Verdict
from langchain_atma.records import MemoryRecord, Provenance

JUDGE = OfflineJudge()


def _judge(old: str, new: str, **kw: Any) -> Verdict:
    def rec(text: str, t: int) -> MemoryRecord:
        return MemoryRecord(namespace="u", content=text, time=t,
                            provenance=Provenance(speaker="Ann"))

    return JUDGE.judge(JudgeInput(old=rec(old, 1000), new=rec(new, 2000), **kw))


# (old, new, extra JudgeInput fields, expected action, expected slot or None)
SUPERSEDES: list[tuple[str, str, dict[str, Any], str | None]] = [
    # an occupation replaced: "first week as" starts the new state (demo: nurse -> teacher)
    ("ugh another double at the hospital. being a nurse is slowly killing me haha",
     "SURVIVED my first week as a teacher. third graders are feral", {}, "job"),
    # a named home replaced ("life in Raleigh since the move" after "summer in Sacramento")
    ("Oh, summer in Sacramento is just gorgeous, I never get tired of it.",
     "Still getting used to life in Raleigh since the move, but it already feels like home.",
     {}, "location"),
    # a named employer replaced
    ("Oh, I've been at Silverline Airlines for about two years and it still feels right.",
     "So I work for Ironbridge Construction now, and the people there are lovely.", {}, "job"),
    # the ending sits in the second sentence, next to the old record's name
    ("Jordan and I hit the gym together three times a week.",
     "So, no more sessions with Jordan. Priya joined me at the gym instead.", {}, None),
    # a name in apposition ("Rafael, my roommate,") is not a vocative
    ("Anyway, Rafael, my roommate, keeps putting plants on every windowsill we have.",
     "Random update: Rafael moved out last month, and Diego took the spare room.", {}, None),
    # "living with Tessa" hands nothing over; "we split the chores" ends nothing
    ("Living with Tessa is easy. We split the chores and never argue.",
     "I don't share the apartment with Tessa anymore, Sofia lives with me now.", {}, None),
    # "Quentin would never let me" is someone else's habit, not the speaker's plan
    ("Ha, couldn't skip a workout today, Quentin would never let me hear the end of it.",
     "So, I don't work out with Quentin anymore. Tessa is my gym partner now.", {}, None),
    # "dropped the class" ends a course (education family)
    ("my spanish class is tuesdays, the profe is so strict lol",
     "dropped the tuesday class, doing japanese instead", {}, "education"),
]

VALUES: list[tuple[str, str, dict[str, Any], float, float]] = [
    # "savings" and "save" are one word ("-ings" is stripped like "-ing")
    ("every month $650 goes straight into my savings account.",
     "I adjusted my budget, so now I save $350 a month.", {"similarity": 0.5}, 650, 350),
    # two measurements of the same kind; "did 36 laps" has no subject, it is no question
    ("swam 20 laps today and that's my absolute limit, my arms are noodles",
     "did 36 laps this morning!! the lifeguard gave me a little nod",
     {"similarity": 0.5}, 20, 36),
    # "11k steps" counts thousands; "4,000" loses its separator
    ("my watch says i average 4,000 steps a day which is honestly embarrassing",
     "averaging 11k steps since i started walking at lunch", {}, 4000, 11000),
    # "thirty-one" is one number; the measured thing sits past function words
    ("i own 14 plants and my sister says that's too many",
     "the plant count is at thirty-one. i have a problem.", {}, 14, 31),
    # the number stands alone in its sentence: the whole record says what it measures
    ("stepped on the scale this morning. 212. ok time to actually do something",
     "the scale said 188 today and my jeans keep falling down", {"similarity": 0.55},
     212, 188),
    # an age stated without "turned" or "years old": a name and a bare number
    ("my daughter Ava turned 4 in march, still can't believe it",
     "Ava is 5 now and already bossing her little brother around", {}, 4, 5),
    # two hourly amounts of money, topically close by the gate's hub score
    ("freelance editing pays me $40 an hour, not bad for side work",
     "a new agency signed me at $55 an hour!", {"gate_score": 0.0, "similarity": 0.35},
     40, 55),
    # "is at 12" is a level, not a time of day
    ("our book club has 8 members right now", "the book club is at 12 after the summer",
     {}, 8, 12),
    # a dated reading ("counted ... yesterday") of a standing quantity is its new value
    ("I own about 40 vinyl records, mostly jazz",
     "counted the vinyl shelf yesterday: 52 records", {"similarity": 0.5}, 40, 52),
]

COEXISTS: list[tuple[str, str, dict[str, Any]]] = [
    # the sentences that share a value ("horror") are compared, not the first ones
    # that only share family words ("film night" / "taste in films")
    ("Film night at home! Went with a horror movie, like always.",
     "My taste in films is changing a bit. Horror movies still, though more and more "
     "comedies lately.", {}),
    # a standing habit and a new one, no family word on either side
    ("Anyway, I start every morning with oatmeal.",
     "Recently I've been starting my mornings with pancakes.", {}),
    # "can't stand ... either" is a taste, not a negated statement
    ("Fun fact: I've hated raisins since I was a kid.",
     "Random update: Recently I've realized I really can't stand okra either.", {}),
    # a wish stated as a current taste may coexist, never replace
    ("Random update: If I could travel anywhere, it'd be Vietnam.",
     "I still want to see Vietnam, but lately I've been planning a trip to Portugal.", {}),
    # "i'm hooked" after trying something new
    ("yoga at 6am every day, it's the only thing keeping me sane",
     "tried bouldering with Priya on thursday and i'm hooked, my forearms are toast", {}),
]

KEEPS: list[tuple[str, str, dict[str, Any]]] = [
    # R14: unrelated topics are never linked (demo: sushi vs. the mountains)
    ("Yes! I absolutely love sushi, I could eat it every day.",
     "We finally made the move, Denver is home now and I love the mountains.",
     {"similarity": 0.04}),
    # a job word that states no job ("fired up my passion") is not replaced
    ("I just talked to someone. It really fired up my passion to make education better.",
     "SURVIVED my first week as a teacher. third graders are feral", {}),
    # a workplace "at St. Mary's" is not a home replaced by "Boston"
    ("I work as a nurse at St. Mary's hospital, night shifts again.",
     "I love it. I live in Boston now, in a small flat near the river.", {}),
    # a trip is not a move
    ("Thanks! We explored the coast up in the Pacific Northwest and hit some parks.",
     "I'm planning a trip to the East Coast.", {}),
    # an ending that names someone else ends nothing here
    ("Hey John! Great to meet you. Been discussing collaborations for a new project.",
     "Oh, I no longer meet with Mira. My new mentor is Naomi.", {}),
    # a pet handed over must be the old record's pet
    ("Hey John! Look how cute it is. My dog came to me today while I was playing.",
     "By the way, the guinea pig found a new home with my cousin.", {}),
    # two amounts of money a month about different things (no encoder to compare them)
    ("By the way, paying $55 a month for my phone plan.",
     "Random update: My monthly savings are $600 now.", {"similarity": 0.5}),
    # a capitalized sentence opener ("Check this out") is not a new place
    ("Sounds like an amazing plan! I can't wait for your trip to Boston.",
     "That's so cool! Check this out, I took this picture last month.", {}),
]


def test_compound_number_and_background_number_are_no_values() -> None:
    """"six-string" names a guitar; "since I was 12" is a time reference."""
    v = _judge("been playing guitar since i was 12, it's basically my therapy",
               "honestly the ukulele is all i play lately lol, the poor six-string is "
               "neglected")
    assert v.action in ("coexist", "keep_both"), v.reason  # gold: a scope update


@pytest.mark.parametrize(("old", "new", "kw", "slot"), SUPERSEDES)
def test_state_replaced(old: str, new: str, kw: dict[str, Any], slot: str | None) -> None:
    v = _judge(old, new, **kw)
    assert v.action == "supersede", v.reason
    assert v.conflict_type in ("temporal", "negation"), v.reason
    if slot is not None:
        assert v.slot == slot, v.reason


@pytest.mark.parametrize(("old", "new", "kw", "before", "after"), VALUES)
def test_value_changed(old: str, new: str, kw: dict[str, Any], before: float,
                       after: float) -> None:
    v = _judge(old, new, **kw)
    assert (v.action, v.conflict_type) == ("supersede", "value"), v.reason
    assert f"{before:g} -> {after:g}" in v.reason


@pytest.mark.parametrize(("old", "new", "kw"), COEXISTS)
def test_taste_coexists(old: str, new: str, kw: dict[str, Any]) -> None:
    v = _judge(old, new, **kw)
    assert v.action in ("coexist", "scoped_exception"), v.reason
    assert v.conflict_type == "scope"


@pytest.mark.parametrize(("old", "new", "kw"), KEEPS)
def test_no_state_change(old: str, new: str, kw: dict[str, Any]) -> None:
    v = _judge(old, new, **kw)
    assert v.action == "keep_both", (v.action, v.reason)


def test_scoped_preference_from_the_demo() -> None:
    """The demo's sushi update: the old taste still holds, only on Fridays."""
    v = _judge("Yes! I absolutely love sushi, I could eat it every day.",
               "I still love sushi, but these days only on Fridays as a treat.",
               similarity=0.78)
    assert (v.action, v.slot) == ("scoped_exception", "likes"), v.reason


def test_link_floor_needs_a_similarity() -> None:
    """Without a known cosine the floor (R14) does not apply."""
    old, new = ("Yes! I absolutely love sushi, I could eat it every day.",
                "I still love sushi, but these days only on Fridays as a treat.")
    assert _judge(old, new).action == "scoped_exception"
    assert _judge(old, new, similarity=0.1).action == "keep_both"


# R16: pairs no word list ties to one slot; the gate's hub score says they are close.
# (old, new, expected action)
CLOSE_CHANGES: list[tuple[str, str, str]] = [
    ("my Nokia keeps freezing whenever i open the camera",
     "switched to a Motorola, the battery lasts forever", "supersede"),
    ("the book club meets at Hannah's place on thursdays",
     "i quit the book club, the thursday commute was too much", "supersede"),
    ("i get to work on the 7:10 ferry",
     "been taking the tram instead, it drops me right at the door", "supersede"),
    ("weekends are for the climbing wall with my cousins",
     "also doing a pottery class on sundays now, my hands are all clay", "coexist"),
]


@pytest.mark.parametrize(("old", "new", "action"), CLOSE_CHANGES)
def test_close_change_needs_the_gate_score(old: str, new: str, action: str) -> None:
    close = _judge(old, new, gate_score=0.05)
    assert close.action == action, close.reason
    if action != "keep_both":
        assert close.suggested_links and close.suggested_links[0].target_id
    # without the gate's score (a caller that did not run the gate), or when the gate
    # found the pair no closer than its neighbourhood, the rule stays off
    for kw in ({}, {"gate_score": -0.2}):
        far = _judge(old, new, **kw)
        assert "close record" not in far.reason, (kw, far.reason)


@pytest.mark.parametrize(("old", "new"), [
    # no change wording: two close statements of one topic are not an update
    ("my Nokia keeps freezing whenever i open the camera",
     "the camera on my phone takes lovely night shots"),
    # someone else's change
    ("my usual ride to work is the 7:10 ferry", "my sister switched to the tram"),
    # a plan is not a state
    ("my usual ride to work is the 7:10 ferry",
     "i might switch to the tram next month"),
    # nothing new named: the same words back
    ("i take the ferry to work", "i take the ferry to work now"),
])
def test_close_change_needs_a_first_hand_current_change(old: str, new: str) -> None:
    v = _judge(old, new, gate_score=0.05)
    assert "close record" not in v.reason, v.reason


@pytest.mark.parametrize(("old", "new"), [
    # different rates: hours a month (volunteering) against hours a week (work)
    ("i spend 5 hours a month helping at the animal shelter",
     "right now i'm working about 38 hours a week"),
    # money against a duration
    ("my grocery bill is around $120 a week", "right now i'm working about 38 hours a week"),
    # a duration without a rate against hours a night
    ("the bus to campus takes 25 minutes", "right now i'm sleeping about 6 hours a night"),
])
def test_close_change_skips_numbers_that_measure_different_things(old: str, new: str) -> None:
    v = _judge(old, new, gate_score=0.05, similarity=0.5)
    assert "close record" not in v.reason, v.reason
    assert v.action != "supersede", v.reason


def test_close_change_keeps_numbers_that_may_measure_the_same_thing() -> None:
    # the same kind of number (minutes, no rate on either side): closeness still decides
    v = _judge("the walk to the studio is 12 minutes, door to door",
               "since the move it takes me 40 minutes now", gate_score=0.05, similarity=0.5)
    assert v.action == "supersede", v.reason


def test_close_change_reads_what_money_pays_for(minilm) -> None:  # noqa: ANN001
    judge = OfflineJudge(embeddings=minilm)

    def v(old: str, new: str) -> Verdict:
        return judge.judge(JudgeInput(
            old=MemoryRecord(namespace="u", content=old, time=1),
            new=MemoryRecord(namespace="u", content=new, time=2),
            gate_score=0.05, similarity=0.5))

    # two amounts of money for different things: closeness says nothing
    assert "close record" not in v("i put $300 a month into my retirement fund",
                                   "switched carriers, my phone bill is $35 a month now").reason
    # without an encoder the judge cannot tell what money pays for: it stays out
    assert "close record" not in JUDGE.judge(JudgeInput(
        old=MemoryRecord(namespace="u", content="my rent is $900 a month", time=1),
        new=MemoryRecord(namespace="u", content="switched flats, i pay $1,250 a month now",
                         time=2),
        gate_score=0.05, similarity=0.5)).reason


def test_value_rule_compares_what_is_measured_not_the_rate(minilm) -> None:  # noqa: ANN001
    judge = OfflineJudge(embeddings=minilm)

    def v(old: str, new: str) -> Verdict:
        def rec(text: str, t: int) -> MemoryRecord:
            return MemoryRecord(namespace="u", content=text, time=t,
                                provenance=Provenance(speaker="Ann"))

        return judge.judge(JudgeInput(old=rec(old, 1000), new=rec(new, 2000), similarity=0.5))

    # the same rate ("a month", "a week") and the same kind of number (money, hours)
    # do not make two quantities the same
    assert v("I pay $1,700 a month for my place, utilities not included.",
             "Paying $130 a month for my phone plan.").action == "keep_both"
    assert v("I give 4 hours a month to the animal shelter.",
             "I am working about 41 hours a week right now.").action == "keep_both"
    # the words around the numbers name the same thing
    assert v("I pay $1,700 a month for my place.",
             "Rent is $2,200 a month these days.").action == "supersede"
    assert v("I volunteer 4 hours a month at the shelter.",
             "My volunteer schedule is 19 hours a month these days.").action == "supersede"


@pytest.mark.parametrize(("old", "new", "action"), [
    # the old record describes a change and names the value the new one states: coexist
    ("Started swapping some of my yoga sessions for pilates.",
     "Pilates twice a week keeps me sane.", "coexist"),
    ("lately i keep trading my usual espresso for matcha, matcha is winning",
     "matcha is my go-to drink now, honestly", "coexist"),
    # someone else's habit, a denial, a plan, one episode: no link
    ("Started swapping some of my yoga sessions for pilates.",
     "My sister does pilates twice a week.", "keep_both"),
    ("Started swapping some of my yoga sessions for pilates.", "I never do pilates.",
     "keep_both"),
    ("Started swapping some of my yoga sessions for pilates.",
     "I might try pilates next year.", "keep_both"),
    ("Started swapping some of my yoga sessions for pilates.",
     "Pilates class was brutal today.", "keep_both"),
    # the old record describes no change: this rule does not apply
    ("Yoga and pilates are both fun.", "Pilates twice a week keeps me sane.", "keep_both"),
])
def test_outcome_of_a_described_change(old: str, new: str, action: str) -> None:
    v = _judge(old, new, similarity=0.6)
    assert v.action == action, v.reason
    if action == "coexist":
        assert "change brought in" in v.reason
        assert v.suggested_links and v.suggested_links[0].type.value == "coexists"


def test_names_both_values() -> None:
    from langchain_atma.bank.judge import names_both
    from langchain_atma.errors import ConfigError, InvalidRecordError

    bridge = "Lately I'm easing off watercolour, charcoal sketching keeps pulling me in."
    assert names_both(bridge, "Watercolour is how I unwind.", "Charcoal fills my evenings.")
    # only one side named, or the two sides share every named value
    assert not names_both(bridge, "Pottery is how I unwind.", "Charcoal fills my evenings.")
    assert not names_both(bridge, "Watercolour is how I unwind.", "Watercolour again today.")
    # a hobby or pet the lexicon knows ("chess", "hamster") is a value too; category
    # words ("game", "pet", "playing") are not
    assert names_both("Been easing off chess lately, and Azul keeps pulling me in.",
                      "Lost at chess again last night.", "Azul every evening now.")
    assert names_both("Our hamster went to my niece, and a gecko moved in.",
                      "The hamster chewed the cage door again.", "Feeding the gecko now.")
    assert not names_both("Easing off games lately, and Azul keeps pulling me in.",
                          "Playing games again last night.", "Azul every evening now.")
    with pytest.raises(InvalidRecordError):
        names_both(bridge, None, "x")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        names_both(bridge, "a", "b", max_chars=0)


@pytest.mark.parametrize(("old", "new", "kw"), [
    # two people's ages
    ("Leo turned 6 last week, we did a dinosaur party", "Mia is 4 now and loves dinosaurs",
     {"similarity": 0.5}),
    # a duration, not an age
    ("my sister turned 30 last week", "I am 5 minutes away from the station", {}),
    # a time of day after "at" is no quantity
    ("I wake up at 7 most days", "these days I get up at 6 for the gym", {}),
    # a number that counts an addition is a delta, not the new total
    ("I have 3 cats and a very tired vacuum", "adopted two more cats from the shelter", {}),
])
def test_no_value_change(old: str, new: str, kw: dict[str, Any]) -> None:
    v = _judge(old, new, **kw)
    assert v.conflict_type != "value", v.reason


def test_a_number_beside_an_addition_can_still_be_the_total() -> None:
    """ "buying more" is an addition, but "I have 360 records" states the total."""
    v = _judge("counted my records last week: 380 of them",
               "after selling some and buying more, I have 360 records")
    assert (v.action, v.conflict_type) == ("supersede", "value"), v.reason
