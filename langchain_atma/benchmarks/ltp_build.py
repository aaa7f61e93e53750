"""Build an LTP-format benchmark (a reconstruction of LTP) from LoCoMo.

This is a RECONSTRUCTION of LTP ("LoCoMo Temporal Plus", A-TMA paper, appendix
A.2/A.3), not the original release: the file is named ``"ltp-reconstruction"``
and carries a ``notes`` string and a ``build`` record (seed, counts, source
file hash) beside the documented keys. The output contains LoCoMo turns, so it
inherits LoCoMo's CC BY-NC 4.0 license: write it outside the repository.

Construction
------------
1. Profiles. Profile ``i`` (``p000`` ...) is bound to the ``i``-th LoCoMo
   conversation in file order. Its subject is ``speaker_a`` when
   ``(i + seed)`` is even, else ``speaker_b``.
2. Slots. The catalog below holds 50 mutable state variables in seven
   families: job (title, employer, side gig), location (city, neighbourhood),
   relationship (partner, roommate, gym buddy, mentor), pets (dog, cat, small
   pet), numerical facts (commute minutes, rent, ...), hobbies and likes or
   dislikes. The update type follows the family: job and location ->
   ``temporal``; relationship and pets -> ``negation`` (the new cue says the
   old state no longer holds); numerical facts -> ``value`` (a different
   number); hobbies and preferences -> ``scope`` (the new cue qualifies the
   old one; both stay true). Each profile draws ``units`` distinct slots with
   per-type quotas in the proportions of the paper's release (4 temporal : 10
   negation : 26 value : 40 scope, from its stratified 80-unit audit; for 40
   units: 2/5/13/20), largest remainder, capped by the slots available.
3. Values. Old and current values are drawn from per-slot pools; they differ
   and share no (stemmed) token. Non-numeric values that already occur in the
   conversation (or equal a speaker's name) are skipped when the pool allows,
   and no value is reused within a profile, so the gold values come only from
   the inserted cues.
4. Cues. Each unit gets an old cue and a new cue, first-person from the
   subject, from several casual phrasings per slot (plus optional openers and
   closers like chat turns). The new cue of a negation unit names the old
   value and negates it; a scope cue keeps the old value true.
5. Placement. With ``N`` original turns, old cues get quantiles spread
   (stratified, jittered, shuffled) over ``[0.12, 0.42]`` and new cues over
   ``[0.58, 0.88]``; a cue with quantile ``q`` is inserted after the first
   ``round(q * N)`` turns (at least one turn before it, at least one after),
   so every new cue follows its old cue and the original tail is retained.
   All original turns are kept as ``dialog`` events with their ``dia_id``.
   About 30 % of units (``transition_share``, seeded) also get a
   ``transition`` event describing the change, placed shortly (up to 0.06 of
   the conversation) before the new cue.
6. Timestamps. Original turns keep the loader's times (session start + 30 s
   per turn). Inserted events in a gap are spread evenly between the two
   neighbouring turns, at most 30 s apart, so a cue inserted at a session
   boundary sits just after the session's last turn.
7. Probes. Per unit: a historical probe (kind ``fact``, target old value,
   alternate current value) and a current probe (kind ``conflict``, target
   current value, alternate old value). Questions name the subject, come from
   several phrasings per slot and never contain their target.
8. Checks. :func:`~langchain_atma.benchmarks.ltp_format.validate_ltp` runs in
   strict mode on the result; any problem raises. The same seed gives a
   byte-identical file (string-seeded ``random.Random`` per profile, no
   dependence on hash randomization or wall-clock time).

Example:
    >>> from langchain_atma.benchmarks.ltp_build import build_ltp, write_ltp
    >>> ltp = build_ltp("/work/shared/data/locomo/locomo10.json")  # doctest: +SKIP
    >>> write_ltp(ltp, "/tmp/ltp.json")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from langchain_atma.benchmarks.locomo import (
    LocomoSample,
    answer_tokens,
    load_locomo,
    normalize_answer,
)
from langchain_atma.benchmarks.ltp_format import (
    EventKind,
    LtpEvent,
    LtpFile,
    LtpProbe,
    LtpProfile,
    LtpSource,
    LtpUnit,
    ProbeKind,
    ProbeView,
    UpdateType,
    dump_ltp,
    validate_ltp,
)
from langchain_atma.errors import BenchmarkFormatError, ConfigError

__all__ = [
    "DEFAULT_MIX",
    "NEW_RANGE",
    "OLD_RANGE",
    "build_ltp",
    "slot_catalog",
    "write_ltp",
]

OLD_RANGE = (0.12, 0.42)
"""Quantile range of the conversation's turn positions for old cues."""
NEW_RANGE = (0.58, 0.88)
"""Quantile range for new (current or conflicting) cues."""
DEFAULT_MIX: Mapping[str, float] = {"temporal": 4, "negation": 10, "value": 26, "scope": 40}
"""Default update-type proportions (the paper's release skew)."""

_TRANSITION_LEAD = (0.005, 0.06)
_MAX_STEP = timedelta(seconds=30)

T = UpdateType.TEMPORAL
N = UpdateType.NEGATION
V = UpdateType.VALUE
S = UpdateType.SCOPE


@dataclass(frozen=True)
class _Slot:
    """One mutable state variable with its value pool and phrasings."""

    key: str
    update: UpdateType
    old: tuple[str, ...]
    new: tuple[str, ...]
    ask_old: tuple[str, ...]
    ask_new: tuple[str, ...]
    pool: tuple[str, ...] = ()
    numbers: tuple[int, ...] = ()
    fmt: str = "{:,}"
    direction: int = 0
    topic: str = ""
    trans: tuple[str, ...] = ()

    def values(self) -> list[tuple[str, int]]:
        """(display value, numeric rank) pairs of the pool."""
        if self.numbers:
            return [(self.fmt.format(n), n) for n in self.numbers]
        return [(v, i) for i, v in enumerate(self.pool)]


_NAMES = (
    "Jordan", "Priya", "Marcus", "Elena", "Theo", "Naomi", "Rafael", "Hannah", "Diego",
    "Leila", "Owen", "Sofia", "Malik", "Ingrid", "Caleb", "Yuki", "Tessa", "Andre", "Felix",
    "Mira", "Quentin", "Beatrix", "Tobias", "Esme", "Ravi", "Noor",
)  # fmt: skip

_VALUE_TRANS = (
    "Heads up, my {topic} is about to change: it was {old}, and it's going to be {new}.",
    "Updating my {topic} from {old} to {new} starting next month.",
    "Spent the evening redoing my spreadsheet, {topic} goes from {old} to {new}.",
)
_SCOPE_TRANS = (
    "My taste in {topic} is shifting a bit. Still {old}, but more and more {new} lately.",
    "Been branching out from {old} lately, and {new} keeps catching my attention.",
    "Funny how things change: I've started mixing some {new} in with my usual {old}.",
)

# fmt: off
_CATALOG: tuple[_Slot, ...] = (
    # ------------------------------------------------------------------ job (temporal)
    _Slot(
        key="job.title", update=T,
        pool=("nurse", "accountant", "graphic designer", "paralegal", "sous chef",
              "dental hygienist", "software tester", "librarian", "pharmacist", "electrician",
              "copywriter", "physical therapist", "real estate agent", "flight attendant",
              "veterinary technician", "urban planner", "data analyst", "carpenter",
              "court reporter", "landscape architect", "museum curator", "radio producer"),
        old=("Another long week at work. Being {a_v} is tiring, but I really do like it.",
             "Work update: I'm still {a_v}, and the people I work with are great.",
             "Honestly, being {a_v} suits me, even on the hectic days.",
             "Had a funny moment on the job today. That's life as {a_v}, never boring."),
        new=("Big news: I'm officially working as {a_v}! The first week went better than "
             "I expected.",
             "I finally made the career switch. These days I'm {a_v}, and I'm learning so much.",
             "Started my new role as {a_v} last month, it's a totally different pace.",
             "Can you believe I'm {a_v} now? Still pinching myself about the career change."),
        trans=("I handed in my notice today. My time as {a_old} is wrapping up, and I start "
               "training as {a_new} next month.",
               "Last few shifts as {a_old} this week before I jump into becoming {a_new}. "
               "Nervous but excited!",
               "I got accepted into a program to become {a_new}, so I'm leaving my job as "
               "{a_old}."),
        ask_old=("What did {name} do for work before the career change?",
                 "What was {name}'s job before switching careers?",
                 "Before the new role, what was {name}'s occupation?"),
        ask_new=("What does {name} do for a living now?",
                 "What is {name}'s current job?",
                 "After the career change, what does {name} work as?"),
    ),
    _Slot(
        key="job.employer", update=T,
        pool=("Northwind Logistics", "Bluefield Bank", "Harbor Health Clinic", "Juniper Labs",
              "Copperleaf Media", "Silverline Airlines", "Redwood Insurance", "Orchid Hotels",
              "Summit Outdoor Gear", "Brightpath Tutoring", "Ironbridge Construction",
              "Cobalt Games", "Greenway Grocers", "Lanternfish Studios", "Quarry Hill Brewing",
              "Westmark Realty", "Tidewater Energy", "Kestrel Robotics"),
        old=("I've been at {v} for about two years and it still feels like a good fit.",
             "Lunch break at {v}. The cafeteria there is surprisingly decent.",
             "My manager at {v} finally approved my vacation days!"),
        new=("First week at {v} done! New badge, new desk, new everything.",
             "So I work for {v} now, and the people there are lovely.",
             "Settled in at {v}. Honestly it beats my last workplace by a mile."),
        trans=("Handed in my resignation at {old} today. I start at {new} in two weeks!",
               "Cleaning out my desk at {old}. Next stop: {new}.",
               "{new} offered me a position, so I'm leaving {old} at the end of the month."),
        ask_old=("Which company did {name} work for before switching employers?",
                 "Where was {name} employed before the job change?"),
        ask_new=("Which company does {name} work for now?",
                 "Who is {name}'s current employer?"),
    ),
    _Slot(
        key="job.side_gig", update=T,
        pool=("dog walking", "food delivery", "bartending", "math tutoring",
              "wedding photography", "furniture flipping", "pet sitting", "DJing",
              "house painting", "bike repair", "babysitting", "proofreading", "lawn care",
              "event catering"),
        old=("On weekends I do {v} for some extra cash. It adds up!",
             "My side hustle right now is {v}, which keeps my Saturdays pretty busy.",
             "Picked up another {v} gig this weekend, the extra money is nice."),
        new=("I switched side hustles, it's {v} on the weekends now.",
             "These days my extra income comes from {v}, and I honestly enjoy it more.",
             "New weekend gig: {v}. Way more fun than what I did before."),
        trans=("I'm winding down the {old} on weekends. Going to try {new} instead.",
               "Done with {old} after this month, a friend got me into {new}."),
        ask_old=("What side job did {name} have before switching?",
                 "What did {name} originally do on weekends for extra money?"),
        ask_new=("What side hustle does {name} have now?",
                 "What does {name} currently do on weekends for extra income?"),
    ),
    # ------------------------------------------------------------------ location (temporal)
    _Slot(
        key="location.city", update=T,
        pool=("Denver", "Portland", "Austin", "Pittsburgh", "Minneapolis", "Sacramento",
              "Raleigh", "Tucson", "Milwaukee", "Boise", "Albuquerque", "Richmond", "Omaha",
              "Savannah", "Spokane", "Madison", "Tampa", "Buffalo", "Cincinnati", "Anchorage"),
        old=("Loving the coffee shops here in {v}, I could stay forever.",
             "Summer in {v} is just gorgeous, I never get tired of it.",
             "Rent in {v} keeps going up, but I love my street too much to complain.",
             "There's a little bookstore near me in {v} that's become my happy place."),
        new=("Moving day is done, {v} is home now!",
             "Finally unpacked the last box at my new place in {v}.",
             "Still getting used to life in {v} since the move, but it already feels like home.",
             "Living in {v} now, and the food scene here is unreal."),
        trans=("Packing up my whole life in {old} this week. The truck leaves for {new} on "
               "Saturday!",
               "I signed a lease in {new}! Saying goodbye to {old} is bittersweet.",
               "Got the offer that means leaving {old} for {new}. Moving in a few weeks!"),
        ask_old=("Which city did {name} live in before moving?",
                 "Where was {name} living prior to the move?",
                 "What city was {name}'s home before relocating?"),
        ask_new=("Which city does {name} live in now?",
                 "Where does {name} live these days?",
                 "What city is {name} based in at the moment?"),
    ),
    _Slot(
        key="location.neighbourhood", update=T,
        pool=("Riverside", "Old Town", "Hillcrest", "Maple Heights", "Arts District",
              "Lakeview", "Midtown", "Westgate", "Cedar Park", "Harbor Point", "Elm Grove",
              "Sunnyside", "Fox Hollow", "Brookfield", "Willow Bend", "Stonebridge"),
        old=("My neighbourhood, {v}, has the best farmers market on Sundays.",
             "I love walking around {v} in the evenings, it's so peaceful.",
             "There's a tiny bakery in {v}, right by my place, that I'm obsessed with."),
        new=("We moved across town to {v}! The walk to the park from here is amazing.",
             "Living in {v} now, and I already know half the neighbours.",
             "The new apartment in {v} is smaller, but the light is incredible."),
        trans=("Found a place in {new}, so we're leaving {old} next month.",
               "Last weekend living in {old}. The movers take everything to {new} on Monday."),
        ask_old=("Which neighbourhood did {name} live in before moving across town?",
                 "What part of town did {name} live in originally?"),
        ask_new=("Which neighbourhood does {name} live in now?",
                 "In what part of town is {name}'s current home?"),
    ),
    # ------------------------------------------------------------------ relationship (negation)
    _Slot(
        key="relationship.partner", update=N, pool=_NAMES,
        old=("{v} and I have been together almost a year now. I'm really happy.",
             "Date night with {v} tonight, we're trying that new ramen place.",
             "{v} surprised me with flowers today. My partner is the sweetest."),
        new=("{old} and I split up a while ago. I'm seeing {v} now, and it's going really well.",
             "I'm not with {old} anymore. These days it's {v} and me, and I'm happy.",
             "I'm no longer dating {old}. {v} and I just celebrated three months together!"),
        trans=("Things between {old} and me have been rocky lately. I think we're heading "
               "for a breakup.",
               "Had a long, hard talk with {old} last night. I don't think we're going to "
               "make it."),
        ask_old=("Who was {name} dating before the breakup?",
                 "Who was {name}'s previous partner?"),
        ask_new=("Who is {name} dating now?", "Who is {name}'s current partner?"),
    ),
    _Slot(
        key="relationship.roommate", update=N, pool=_NAMES,
        old=("My roommate {v} made pancakes for the whole apartment this morning.",
             "{v}, my roommate, keeps putting plants on every windowsill we have.",
             "Living with {v} is easy. We split the chores and never argue."),
        new=("{old} doesn't live with me anymore. My new roommate is {v}.",
             "{old} moved out last month, and {v} took the spare room. It's been great.",
             "I don't share the apartment with {old} anymore, {v} lives with me now."),
        trans=("{old} told me they're moving out at the end of the month, so I'm looking "
               "for a new roommate.",
               "Interviewed a possible roommate today since {old} is leaving. {new} seems "
               "really nice."),
        ask_old=("Who was {name}'s roommate before the change?",
                 "Who did {name} share an apartment with originally?"),
        ask_new=("Who is {name}'s roommate now?", "Who does {name} currently live with?"),
    ),
    _Slot(
        key="relationship.gym_buddy", update=N, pool=_NAMES,
        old=("Leg day with {v} this morning. My gym buddy shows no mercy.",
             "{v} and I hit the gym together three times a week.",
             "Couldn't skip a workout today, {v} would never let me hear the end of it."),
        new=("I don't work out with {old} anymore since they switched gyms. {v} is my gym "
             "partner now.",
             "{old} isn't my gym buddy anymore. I train with {v} these days.",
             "No more sessions with {old}. {v} joined me at the gym instead and pushes me "
             "even harder."),
        trans=("{old} is switching to a different gym next month, so I need a new workout "
               "partner.",
               "Looks like my workouts with {old} are ending. {new} offered to train with me."),
        ask_old=("Who did {name} use to work out with?",
                 "Who was {name}'s gym buddy at first?"),
        ask_new=("Who is {name}'s workout partner now?",
                 "Who does {name} go to the gym with these days?"),
    ),
    _Slot(
        key="relationship.mentor", update=N, pool=_NAMES,
        old=("My mentor {v} gave me the best career advice over coffee today.",
             "{v} has been mentoring me at work, and it's made such a difference.",
             "Checked in with {v}, my mentor, about the big presentation. So helpful."),
        new=("{old} isn't my mentor anymore after retiring. {v} mentors me now.",
             "I no longer meet with {old}. My new mentor is {v}, and we really click.",
             "My mentoring sessions with {old} have ended, and {v} has taken over. Great fit "
             "so far."),
        trans=("{old} is retiring soon, so our mentoring sessions are coming to an end.",
               "Work is pairing me with a new mentor because {old} is leaving. Meeting {new} "
               "next week."),
        ask_old=("Who was {name}'s mentor before the change?", "Who used to mentor {name}?"),
        ask_new=("Who mentors {name} now?", "Who is {name}'s current mentor?"),
    ),
    # ------------------------------------------------------------------ pets (negation)
    _Slot(
        key="pets.dog", update=N,
        pool=("Biscuit", "Pepper", "Mochi", "Ziggy", "Waffles", "Juniper", "Rocket",
              "Clementine", "Bruno", "Pickles", "Nacho", "Scout", "Tofu", "Gizmo", "Hazel",
              "Bandit", "Cooper", "Peanut"),
        old=("Took my dog {v} to the beach today. Pure chaos and joy.",
             "{v}, my dog, finally learned to shake hands this week!",
             "My pup {v} stole a whole sandwich off the counter today."),
        new=("{old} doesn't live with us anymore, my parents' farm suits that dog better. "
             "We adopted a new pup named {v}.",
             "I don't have {old} anymore, my sister gave that sweet dog a home. Meet my new "
             "pup, {v}!",
             "No more {old} in the house since the rehoming, but {v}, the new puppy, keeps "
             "me busy."),
        trans=("Having a hard time. {old} needs more space than our place has, so we're "
               "finding that sweet dog a new home.",
               "We're rehoming {old} with my parents and have been looking at puppies. "
               "There's one called {new}."),
        ask_old=("What was the name of {name}'s previous dog?",
                 "What was {name}'s dog called before the new puppy?"),
        ask_new=("What is the name of {name}'s current dog?", "What is {name}'s dog called now?"),
    ),
    _Slot(
        key="pets.cat", update=N,
        pool=("Olive", "Smokey", "Pumpkin", "Miso", "Cleo", "Oscar", "Saffron", "Tigger",
              "Noodle", "Ginger", "Jasper", "Binx", "Marble", "Sprout", "Mittens", "Pixel"),
        old=("{v} the cat knocked my coffee off the table again this morning.",
             "My cat {v} has claimed the laundry basket as a new bed.",
             "Working from home means {v} sits on my keyboard all day. Such a cat."),
        new=("I don't have {old} anymore, my neighbour adopted that cat. I've got a new "
             "kitten, {v}.",
             "{old} lives with my aunt now. My new cat is {v}, and that kitten is a menace.",
             "No more {old} at home, but {v}, my new rescue cat, has settled right in."),
        trans=("My aunt fell in love with {old}, so the cat is probably moving in with her.",
               "The shelter called about a kitten named {new}, and {old} is going to live "
               "with my aunt."),
        ask_old=("What was the name of {name}'s previous cat?",
                 "What was {name}'s cat called before the new one?"),
        ask_new=("What is {name}'s cat called now?", "What is the name of {name}'s current cat?"),
    ),
    _Slot(
        key="pets.small_pet", update=N,
        pool=("hamster", "parrot", "bearded dragon", "goldfish", "rabbit", "guinea pig",
              "tortoise", "ferret", "hedgehog", "cockatiel", "corn snake", "chinchilla", "gecko",
              "canary"),
        old=("My {v} has been so active lately, it's hilarious to watch.",
             "Spent the afternoon giving my {v} a clean new habitat.",
             "Bought a new toy for my {v}, and it's already obsessed."),
        new=("We don't have the {old} anymore, it went to a friend's kids. I got {a_v} instead.",
             "I no longer keep {a_old}. Now I've got {a_v}, and it's adorable.",
             "The {old} found a new home with my cousin. My new pet is {a_v}!"),
        trans=("My cousin keeps asking to adopt my {old}, and I'm thinking about getting "
               "{a_new}.",
               "Looking into getting {a_new}, which means finding a new home for my {old}."),
        ask_old=("What kind of small pet did {name} have before?",
                 "What animal did {name} keep as a pet originally?"),
        ask_new=("What kind of small pet does {name} have now?",
                 "What animal does {name} currently keep as a pet?"),
    ),
    # ------------------------------------------------------------------ numbers (value)
    _Slot(
        key="numbers.commute_minutes", update=V, numbers=tuple(range(15, 95, 5)),
        topic="commute time",
        old=("My commute is about {v} minutes each way, so podcasts are a lifesaver.",
             "It takes me {v} minutes to get to work most mornings.",
             "Door to door, it's {v} minutes to the office for me."),
        new=("With the new bus route, my commute is {v} minutes.",
             "Timed my commute properly this week: it's actually {v} minutes.",
             "These days it takes me {v} minutes to get to work."),
        trans=("My commute is going from {old} to {new} minutes once the new schedule starts.",),
        ask_old=("How many minutes did {name}'s commute take originally?",
                 "What was {name}'s commute time in minutes at first?"),
        ask_new=("How many minutes is {name}'s commute now?",
                 "How long, in minutes, does {name}'s commute take currently?"),
    ),
    _Slot(
        key="numbers.rent", update=V, numbers=tuple(range(950, 3000, 50)), fmt="${:,}",
        direction=1, topic="rent",
        old=("Rent here is {v} a month, which is steep but worth it.",
             "I pay {v} a month for my place, utilities not included.",
             "My landlord charges {v} a month. Could be worse!"),
        new=("The landlord raised my rent to {v} a month. Ugh.",
             "After the lease renewal I'm paying {v} a month.",
             "Rent is {v} a month these days, so I'm budgeting harder."),
        trans=("Just got the renewal letter: rent goes from {old} to {new} next month.",),
        ask_old=("How much rent did {name} pay per month originally?",
                 "What was {name}'s monthly rent at first?"),
        ask_new=("How much is {name}'s monthly rent now?",
                 "What does {name} currently pay in rent each month?"),
    ),
    _Slot(
        key="numbers.running_km", update=V, numbers=tuple(range(10, 62, 2)),
        topic="weekly running distance",
        old=("I'm running about {v} kilometres a week right now.",
             "Logged {v} km of running this week, right at my usual pace.",
             "My weekly running total sits around {v} kilometres."),
        new=("My running is at {v} kilometres a week these days.",
             "I've settled into {v} km of running per week.",
             "Checked my running app: I'm doing {v} kilometres a week lately."),
        ask_old=("How many kilometres a week did {name} run at first?",
                 "What was {name}'s original weekly running distance in kilometres?"),
        ask_new=("How many kilometres does {name} run per week now?",
                 "What is {name}'s weekly running distance these days, in kilometres?"),
    ),
    _Slot(
        key="numbers.houseplants", update=V, numbers=tuple(range(7, 48)),
        topic="plant count",
        old=("I counted my houseplants today: {v}! My apartment is basically a jungle.",
             "I'm up to {v} plants at home, and each one has a name.",
             "Watering all {v} of my plants takes a whole hour."),
        new=("Did a plant count today and I'm at {v}.",
             "My plant collection is at {v} these days.",
             "After the repotting weekend there are {v} plants in my place."),
        ask_old=("How many houseplants did {name} have at first?",
                 "What was {name}'s original houseplant count?"),
        ask_new=("How many houseplants does {name} have now?",
                 "What is {name}'s current number of houseplants?"),
    ),
    _Slot(
        key="numbers.reading_goal", update=V, numbers=tuple(range(12, 62, 2)),
        topic="reading goal",
        old=("My reading goal for the year is {v} books. Wish me luck!",
             "I'm aiming to read {v} books this year.",
             "Set my reading challenge to {v} books on my app."),
        new=("I changed my reading goal to {v} books for the year.",
             "New plan: {v} books this year, that feels more realistic.",
             "My reading challenge is set at {v} books now."),
        ask_old=("What was {name}'s original reading goal, in books?",
                 "How many books did {name} first plan to read this year?"),
        ask_new=("What is {name}'s reading goal now, in books?",
                 "How many books does {name} currently plan to read this year?"),
    ),
    _Slot(
        key="numbers.work_hours", update=V, numbers=tuple(range(20, 61)),
        topic="weekly work hours",
        old=("I'm working about {v} hours a week right now, which is a lot.",
             "Clocked {v} hours at work this week, pretty standard for me.",
             "My usual week is {v} hours on the job."),
        new=("My schedule changed, it's {v} hours a week now.",
             "These days I work about {v} hours a week.",
             "Checked my timesheet: {v} hours a week is my new normal."),
        ask_old=("How many hours a week did {name} originally work?",
                 "What were {name}'s weekly work hours at first?"),
        ask_new=("How many hours per week does {name} work now?",
                 "What are {name}'s weekly work hours these days?"),
    ),
    _Slot(
        key="numbers.daily_steps", update=V, numbers=tuple(range(6000, 15001, 500)),
        topic="daily step goal",
        old=("My step goal is {v} steps a day, and I usually hit it.",
             "I try to walk {v} steps every day.",
             "Hit my {v} daily steps before lunch today!"),
        new=("I changed my daily step goal to {v}.",
             "My watch is set to {v} steps a day now.",
             "New daily target: {v} steps."),
        ask_old=("What was {name}'s daily step goal at first?",
                 "How many steps a day did {name} originally aim for?"),
        ask_new=("What is {name}'s daily step goal now?",
                 "How many steps a day does {name} aim for these days?"),
    ),
    _Slot(
        key="numbers.monthly_savings", update=V, numbers=tuple(range(150, 1550, 50)),
        fmt="${:,}", topic="monthly savings",
        old=("I'm putting {v} a month into savings for a big trip.",
             "Every month {v} goes straight into my savings account.",
             "Saving {v} a month is my rule."),
        new=("I adjusted my budget, so now I save {v} a month.",
             "My monthly savings are {v} now.",
             "Set up an automatic transfer of {v} a month into savings."),
        ask_old=("How much did {name} originally save each month?",
                 "What was {name}'s monthly savings amount at first?"),
        ask_new=("How much does {name} save per month now?",
                 "What is {name}'s current monthly savings amount?"),
    ),
    _Slot(
        key="numbers.practice_minutes", update=V, numbers=tuple(range(15, 125, 5)),
        topic="daily practice time",
        old=("I practice my instrument {v} minutes every day.",
             "Getting my {v} minutes of practice in each evening.",
             "Daily practice: {v} minutes, no excuses."),
        new=("I've changed my practice routine to {v} minutes a day.",
             "These days I practice about {v} minutes daily.",
             "My teacher wants {v} minutes of practice every day now."),
        ask_old=("How many minutes a day did {name} practice at first?",
                 "What was {name}'s original daily practice time in minutes?"),
        ask_new=("How many minutes a day does {name} practice now?",
                 "What is {name}'s daily practice time these days, in minutes?"),
    ),
    _Slot(
        key="numbers.vinyl_records", update=V, numbers=tuple(range(30, 420, 10)),
        topic="record count",
        old=("My vinyl collection is up to {v} records!",
             "I own {v} records, and my shelves are groaning.",
             "Counted my vinyl today: {v} albums."),
        new=("After selling some and buying more, I have {v} records.",
             "My record collection stands at {v} these days.",
             "Recounted the vinyl: {v} records in total."),
        ask_old=("How many vinyl records did {name} have originally?",
                 "What was the size of {name}'s record collection at first?"),
        ask_new=("How many vinyl records does {name} have now?",
                 "How big is {name}'s record collection these days?"),
    ),
    _Slot(
        key="numbers.team_size", update=V, numbers=tuple(range(5, 41)),
        topic="team size",
        old=("My team at work has {v} people, so meetings get hectic.",
             "There are {v} of us on my team.",
             "I work with a team of {v} people."),
        new=("After the reorg, my team is {v} people.",
             "My team is {v} people these days.",
             "We're a team of {v} now at work."),
        ask_old=("How many people were on {name}'s team at work originally?",
                 "What was the size of {name}'s work team at first?"),
        ask_new=("How many people are on {name}'s team now?",
                 "How big is {name}'s work team these days?"),
    ),
    _Slot(
        key="numbers.phone_bill", update=V, numbers=tuple(range(25, 135, 5)), fmt="${:,}",
        topic="phone bill",
        old=("My phone bill is {v} a month.",
             "Paying {v} a month for my phone plan.",
             "{v} a month for phone service, ugh."),
        new=("Switched plans, so my phone bill is {v} a month.",
             "My phone plan costs {v} a month these days.",
             "Phone bill came in at {v} per month on the new plan."),
        ask_old=("How much was {name}'s monthly phone bill at first?",
                 "What did {name} originally pay for their phone plan each month?"),
        ask_new=("How much is {name}'s phone bill per month now?",
                 "What does {name} currently pay for their phone plan each month?"),
    ),
    _Slot(
        key="numbers.five_k_minutes", update=V, numbers=tuple(range(19, 41)),
        topic="5K time",
        old=("My 5K time is {v} minutes, pretty proud of that.",
             "Ran a 5K in {v} minutes this weekend.",
             "I usually finish a 5K in about {v} minutes."),
        new=("New 5K time: {v} minutes!",
             "My 5K is at {v} minutes these days.",
             "Clocked {v} minutes in my latest 5K."),
        ask_old=("What was {name}'s 5K time in minutes at first?",
                 "How many minutes did {name} originally take to run a 5K?"),
        ask_new=("What is {name}'s 5K time in minutes now?",
                 "How many minutes does {name} take to run a 5K these days?"),
    ),
    _Slot(
        key="numbers.grocery_budget", update=V, numbers=tuple(range(60, 310, 10)),
        fmt="${:,}", topic="grocery budget",
        old=("I spend about {v} a week on groceries.",
             "My weekly grocery budget is {v}.",
             "Groceries run me {v} a week."),
        new=("My grocery budget is {v} a week now.",
             "These days groceries cost me about {v} a week.",
             "I reset my weekly grocery budget to {v}."),
        ask_old=("What was {name}'s weekly grocery budget originally?",
                 "How much did {name} first say they spend on groceries each week?"),
        ask_new=("What is {name}'s weekly grocery budget now?",
                 "How much does {name} spend on groceries per week these days?"),
    ),
    _Slot(
        key="numbers.volunteer_hours", update=V, numbers=tuple(range(4, 31)),
        topic="volunteering hours",
        old=("I volunteer {v} hours a month at the food bank.",
             "Volunteering takes {v} hours of my month, and it's worth every one.",
             "I give {v} hours a month to the animal shelter."),
        new=("I'm volunteering {v} hours a month now.",
             "My volunteer schedule is {v} hours a month these days.",
             "Signed up for {v} volunteer hours a month."),
        ask_old=("How many hours a month did {name} volunteer originally?",
                 "What was {name}'s monthly volunteering time in hours at first?"),
        ask_new=("How many hours a month does {name} volunteer now?",
                 "How many volunteer hours does {name} put in each month these days?"),
    ),
    # ------------------------------------------------------------------ likes / hobbies (scope)
    _Slot(
        key="likes.music", update=S, topic="music",
        pool=("jazz", "country", "synth-pop", "bluegrass", "reggae", "classical", "punk rock",
              "K-pop", "hip hop", "folk", "salsa", "heavy metal", "lo-fi", "gospel",
              "bossa nova", "disco", "blues", "opera"),
        old=("I've had {v} on repeat all week, it's my favourite music.",
             "Nothing beats {v} on a long drive.",
             "{v} is basically the soundtrack of my life."),
        new=("I still love {old}, but lately I've been really into {v}.",
             "{old} will always be my thing, but these days my playlists are mostly {v}.",
             "Recently I've gotten hooked on {v}, on top of all the {old} I listen to."),
        ask_old=("What music did {name} first say was their favourite?",
                 "What kind of music did {name} originally say they loved?"),
        ask_new=("What music has {name} been into lately?",
                 "What kind of music is {name} listening to these days?"),
    ),
    _Slot(
        key="likes.cuisine", update=S, topic="food",
        pool=("Thai", "Ethiopian", "Korean", "Peruvian", "Lebanese", "Vietnamese", "Greek",
              "Sichuan", "Moroccan", "Georgian", "Oaxacan", "Filipino", "Basque", "Turkish",
              "Malaysian", "Cuban"),
        old=("{v} food is my absolute favourite, I could eat it every day.",
             "Craving {v} food again. It's my go-to comfort meal.",
             "If I could only eat one cuisine forever, it'd be {v}."),
        new=("I still love {old} food, but lately I keep ordering {v}.",
             "{v} food has become my new obsession, though {old} is still up there.",
             "Recently I've been cooking a lot of {v} dishes at home."),
        ask_old=("What cuisine did {name} first call their favourite?",
                 "Which food did {name} originally say they loved most?"),
        ask_new=("What cuisine has {name} been into recently?",
                 "Which kind of food does {name} keep eating these days?"),
    ),
    _Slot(
        key="likes.books", update=S, topic="books",
        pool=("science fiction", "historical fiction", "true crime", "poetry",
              "graphic novels", "fantasy", "memoirs", "thrillers", "cozy mysteries",
              "romance novels", "horror", "travel writing", "philosophy", "short stories"),
        old=("I'm a huge {v} reader, I always have a book going.",
             "My bookshelf is basically all {v}.",
             "Nothing relaxes me like curling up with some {v}."),
        new=("I still read {old}, but lately I've been tearing through {v}.",
             "My book club got me into {v} recently.",
             "These days my nightstand is stacked with {v}."),
        ask_old=("What kind of books did {name} originally say they read?",
                 "What genre did {name} first describe as their reading favourite?"),
        ask_new=("What kind of books has {name} been reading lately?",
                 "What genre is {name} reading these days?"),
    ),
    _Slot(
        key="likes.films", update=S, topic="movies",
        pool=("documentaries", "westerns", "anime", "romantic comedies", "film noir",
              "musicals", "heist movies", "space operas", "slasher films", "silent films",
              "martial arts films", "period dramas"),
        old=("Movie night again! I picked {v}, as usual.",
             "I could watch {v} all weekend, they're my favourite.",
             "My streaming queue is nothing but {v}."),
        new=("I still love {old}, but lately I've been binging {v}.",
             "Recently my movie nights have been all about {v}.",
             "My watchlist these days is packed with {v}."),
        ask_old=("What kind of movies did {name} originally say they liked?",
                 "Which film genre did {name} first call a favourite?"),
        ask_new=("What kind of movies has {name} been watching lately?",
                 "Which film genre is {name} into these days?"),
    ),
    _Slot(
        key="hobbies.outdoor", update=S, topic="outdoor stuff",
        pool=("hiking", "kayaking", "rock climbing", "trail running", "birdwatching",
              "paddleboarding", "mountain biking", "geocaching", "fly fishing", "snowshoeing",
              "sailing", "disc golf", "orienteering", "canoeing"),
        old=("{v} is my favourite way to spend a Saturday.",
             "I try to fit in some {v} every weekend, rain or shine.",
             "Nothing clears my head like a morning of {v}."),
        new=("I still love {old}, but lately I'm all about {v}.",
             "Recently I've gotten really into {v}. {old} is still great, just less often.",
             "These days my weekends are mostly {v}."),
        ask_old=("What outdoor activity did {name} originally say they loved?",
                 "Which outdoor hobby did {name} mention first?"),
        ask_new=("What outdoor activity has {name} been into lately?",
                 "Which outdoor hobby takes up {name}'s weekends these days?"),
    ),
    _Slot(
        key="hobbies.craft", update=S, topic="crafts",
        pool=("knitting", "woodworking", "pottery", "embroidery", "calligraphy", "origami",
              "candle making", "quilting", "jewelry making", "bookbinding", "leathercraft",
              "macrame", "crochet", "soap making"),
        old=("Got lost in {v} for hours last night, so relaxing.",
             "My hobby at home is {v}, so my friends all get handmade gifts.",
             "I've been getting better at {v}, slowly but surely."),
        new=("I still do {old} sometimes, but lately {v} has taken over my evenings.",
             "New crafty phase: {v}. Can't stop.",
             "These days my craft table is all about {v}."),
        ask_old=("What craft did {name} originally say they did at home?",
                 "Which handmade hobby did {name} mention first?"),
        ask_new=("What craft has {name} been doing lately?",
                 "Which hobby fills {name}'s evenings these days?"),
    ),
    _Slot(
        key="hobbies.sport", update=S, topic="sports",
        pool=("pickleball", "volleyball", "badminton", "squash", "ultimate frisbee",
              "table tennis", "bowling", "fencing", "rowing", "water polo", "handball",
              "lacrosse", "racquetball", "curling"),
        old=("Played {v} with friends tonight, I'm hooked.",
             "My weekly {v} game is the highlight of my week.",
             "I've been playing {v} for years, still love it."),
        new=("I still play {old}, but lately I've joined a {v} league too.",
             "Recently I've switched most of my game nights to {v}.",
             "These days I'm mostly playing {v}."),
        ask_old=("What sport did {name} originally say they played?",
                 "Which sport did {name} first mention playing?"),
        ask_new=("What sport has {name} been playing lately?",
                 "Which sport is {name} mostly playing these days?"),
    ),
    _Slot(
        key="hobbies.board_game", update=S, topic="games",
        pool=("chess", "Catan", "Scrabble", "mahjong", "Ticket to Ride", "backgammon",
              "Pandemic", "Wingspan", "Codenames", "dominoes", "Carcassonne", "cribbage",
              "Azul"),
        old=("Game night tonight! {v} is always the first thing we play.",
             "I'm obsessed with {v}, I play it any chance I get.",
             "Beat my friends at {v} again last night."),
        new=("I still like {old}, but lately our game nights are all {v}.",
             "Recently I've been hooked on {v}.",
             "These days {v} is the game I keep pulling off the shelf."),
        ask_old=("Which game did {name} first say they were obsessed with?",
                 "What tabletop game did {name} originally love playing?"),
        ask_new=("Which game has {name} been playing lately?",
                 "What tabletop game is {name} hooked on these days?"),
    ),
    _Slot(
        key="likes.coffee", update=S, topic="coffee",
        pool=("cold brew", "espresso", "oat latte", "cappuccino", "flat white", "mocha",
              "cortado", "americano", "chai", "macchiato", "affogato"),
        old=("My usual coffee order is {a_v}.",
             "Can't start the day without {a_v}.",
             "The café down the street makes the best {v}, it's my daily treat."),
        new=("I still get {a_old} most mornings, but lately my afternoon drink is {a_v}.",
             "Recently I've been switching to {a_v} in the afternoons.",
             "These days I order {a_v} more than anything."),
        ask_old=("What coffee order did {name} originally mention?",
                 "Which coffee drink did {name} first call their usual?"),
        ask_new=("What has {name} been ordering at the coffee shop lately?",
                 "Which coffee drink does {name} go for these days?"),
    ),
    _Slot(
        key="likes.tea", update=S, topic="tea",
        pool=("chamomile", "earl grey", "matcha", "rooibos", "oolong", "jasmine",
              "peppermint", "hibiscus", "darjeeling", "sencha", "lapsang souchong"),
        old=("A cup of {v} tea every evening is my ritual.",
             "{v} tea is my favourite, I buy it in bulk.",
             "Nothing better than {v} tea on a rainy day."),
        new=("I still drink {old} tea, but lately I've been reaching for {v}.",
             "Recently {v} has become my go-to tea.",
             "These days my evening cup is mostly {v}."),
        ask_old=("Which tea did {name} originally call a favourite?",
                 "What tea did {name} first say they drink every evening?"),
        ask_new=("Which tea has {name} been drinking lately?",
                 "What tea does {name} reach for these days?"),
    ),
    _Slot(
        key="likes.dessert", update=S, topic="desserts",
        pool=("tiramisu", "cheesecake", "baklava", "churros", "key lime pie", "cannoli",
              "panna cotta", "apple crumble", "gelato", "brownies", "pavlova", "carrot cake",
              "flan"),
        old=("{v} is my favourite dessert, no contest.",
             "I'll never say no to {v}.",
             "Treated myself to {v} after dinner. My weakness!"),
        new=("I still love {old}, but lately I can't get enough of {v}.",
             "Recently {v} has become my favourite treat.",
             "These days when I want dessert, it's usually {v}."),
        ask_old=("What dessert did {name} first say was their favourite?",
                 "Which sweet treat did {name} originally call a weakness?"),
        ask_new=("What dessert has {name} been craving lately?",
                 "Which sweet treat does {name} go for these days?"),
    ),
    _Slot(
        key="likes.breakfast", update=S, topic="breakfast food",
        pool=("oatmeal", "avocado toast", "pancakes", "smoothie bowls", "bagels", "granola",
              "omelettes", "congee", "shakshuka", "French toast", "chia pudding", "grits"),
        old=("Breakfast for me is always {v}.",
             "I start every morning with {v}.",
             "Made {v} this morning, my favourite way to start the day."),
        new=("I still have {old} most days, but lately my weekend breakfast is {v}.",
             "Recently I've been starting my mornings with {v}.",
             "These days breakfast is mostly {v} for me."),
        ask_old=("What did {name} originally say they eat for breakfast?",
                 "Which breakfast did {name} first mention as a favourite?"),
        ask_new=("What has {name} been having for breakfast lately?",
                 "What does {name} eat in the mornings these days?"),
    ),
    _Slot(
        key="likes.podcasts", update=S, topic="podcasts",
        pool=("history", "comedy", "personal finance", "astronomy", "true crime", "politics",
              "language learning", "mythology", "design", "psychology", "economics",
              "gardening"),
        old=("I'm hooked on {v} podcasts, they make every commute fly by.",
             "Listening to my favourite {v} podcast while I cook.",
             "{v} podcasts are my thing, I have a huge backlog."),
        new=("I still listen to {old} shows, but lately it's {v} podcasts.",
             "Recently I've switched to mostly {v} podcasts.",
             "These days my podcast queue is all {v}."),
        ask_old=("What kind of podcasts did {name} originally say they liked?",
                 "What podcast topic did {name} first mention being hooked on?"),
        ask_new=("What kind of podcasts has {name} been listening to lately?",
                 "What podcast topic is {name} into these days?"),
    ),
    _Slot(
        key="hobbies.art_medium", update=S, topic="art supplies",
        pool=("watercolor", "charcoal", "oil paint", "acrylics", "linocut", "digital art",
              "gouache", "pastels", "ink", "collage", "clay sculpture"),
        old=("I love working with {v}, it's my creative outlet.",
             "Spent the afternoon making art with {v}.",
             "Set up a little corner at home just for {v}."),
        new=("I still use {old}, but lately I'm experimenting with {v}.",
             "Recently I've fallen for {v}, it's so different to work with.",
             "These days my art is mostly {v}."),
        ask_old=("What art medium did {name} originally say they used?",
                 "Which art medium did {name} first call a creative outlet?"),
        ask_new=("What art medium has {name} been using lately?",
                 "Which art medium is {name} working in these days?"),
    ),
    _Slot(
        key="hobbies.dance", update=S, topic="dance",
        pool=("salsa", "swing", "tango", "ballroom", "line dancing", "contemporary",
              "bachata", "tap", "zumba", "flamenco", "breakdancing", "ballet", "Bollywood"),
        old=("Dance class tonight! {v} is my favourite thing in the world.",
             "I've been taking {v} classes and I love it.",
             "Nothing makes me happier than a night of {v}."),
        new=("I still do {old}, but lately I've been taking {v} classes too.",
             "Recently I signed up for {v}, and I'm hooked.",
             "These days my dance nights are mostly {v}."),
        ask_old=("What dance style did {name} originally say they loved?",
                 "Which dance did {name} first mention taking classes in?"),
        ask_new=("What dance style has {name} been doing lately?",
                 "Which dance is {name} into these days?"),
    ),
    _Slot(
        key="likes.travel", update=S, topic="travel plans",
        pool=("Iceland", "Portugal", "Japan", "Mexico", "Norway", "Vietnam", "Morocco",
              "Peru", "Croatia", "New Zealand", "Costa Rica", "Scotland", "Chile", "Kenya",
              "Estonia"),
        old=("{v} is my dream destination, I've read every guidebook.",
             "If I could travel anywhere, it'd be {v}.",
             "Daydreaming about going to {v} someday."),
        new=("I still want to see {old}, but lately I've been planning a trip to {v}.",
             "Recently {v} jumped to the top of my travel list.",
             "These days I keep looking at flights to {v}."),
        ask_old=("Which country did {name} originally call a dream destination?",
                 "Where did {name} first say they wanted to travel?"),
        ask_new=("Which country has {name} been planning to visit lately?",
                 "Where does {name} want to travel these days?"),
    ),
    _Slot(
        key="hobbies.instrument", update=S, topic="instruments",
        pool=("ukulele", "cello", "drums", "harmonica", "banjo", "saxophone", "violin",
              "trumpet", "mandolin", "flute", "bass guitar", "accordion", "clarinet"),
        old=("Practicing the {v} every night, my neighbours must love me.",
             "I've been learning the {v}, slowly getting there.",
             "Played the {v} for my friends last night!"),
        new=("I still play the {old}, but lately I've picked up the {v} too.",
             "Recently I started lessons on the {v}.",
             "These days the {v} is what I reach for when I want to play."),
        ask_old=("Which instrument did {name} originally say they were learning?",
                 "What instrument did {name} first mention playing?"),
        ask_new=("Which instrument has {name} been playing lately?",
                 "What instrument does {name} reach for these days?"),
    ),
    _Slot(
        key="hobbies.language", update=S, topic="languages",
        pool=("Spanish", "Japanese", "Italian", "Portuguese", "Mandarin", "German", "Swahili",
              "Dutch", "Arabic", "French", "Hindi", "Polish", "Icelandic"),
        old=("I've been learning {v} on my lunch breaks.",
             "My {v} lessons are going well!",
             "Practicing {v} with an app every night."),
        new=("I still practice {old}, but lately I've started learning {v}.",
             "Recently I signed up for {v} classes.",
             "These days my language app is all {v}."),
        ask_old=("Which language did {name} originally say they were learning?",
                 "What language did {name} first mention studying?"),
        ask_new=("Which language has {name} been studying lately?",
                 "What language is {name} learning these days?"),
    ),
    _Slot(
        key="likes.tv", update=S, topic="TV",
        pool=("sitcoms", "cooking competitions", "crime dramas", "reality TV",
              "nature documentaries", "game shows", "soap operas", "sketch comedy",
              "true-story miniseries", "anthology series", "talk shows"),
        old=("Unwinding with some {v} tonight, my favourite kind of TV.",
             "I'm a sucker for {v}.",
             "TV time for me always means {v}."),
        new=("I still watch {old}, but lately I've been binging {v}.",
             "Recently I got hooked on {v}.",
             "These days my TV time is mostly {v}."),
        ask_old=("What kind of TV did {name} originally say they watched?",
                 "Which kind of show did {name} first call a favourite?"),
        ask_new=("What kind of TV has {name} been watching lately?",
                 "Which kind of show is {name} into these days?"),
    ),
    _Slot(
        key="dislikes.food", update=S, topic="food",
        pool=("cilantro", "olives", "mushrooms", "eggplant", "blue cheese", "anchovies",
              "licorice", "beets", "okra", "brussels sprouts", "raisins", "sardines",
              "coconut"),
        old=("No matter how it's cooked, I just can't do {v}.",
             "I've hated {v} since I was a kid.",
             "Ordered a wrap and it came loaded with {v}, my least favourite thing."),
        new=("I still dislike {old}, but lately {v} bothers me even more.",
             "Recently I've realized I really can't stand {v} either.",
             "These days the food I avoid most is {v}."),
        trans=("My list of foods I avoid is growing. {old} was always on it, and {new} might "
               "be next.",
               "Started noticing I don't enjoy {new} anymore, and {old} is still a no for me."),
        ask_old=("What food did {name} originally say they couldn't stand?",
                 "Which food did {name} first mention hating?"),
        ask_new=("What food has {name} been avoiding lately?",
                 "Which food does {name} dislike most these days?"),
    ),
    _Slot(
        key="dislikes.chore", update=S,
        pool=("ironing", "vacuuming", "washing dishes", "folding laundry", "mowing the lawn",
              "cleaning the bathroom", "grocery shopping", "dusting", "meal prep",
              "scrubbing the oven", "shoveling snow", "washing windows"),
        old=("Spent my Saturday {v}. Worst chore ever.",
             "If I could pay someone to handle the {v}, I would.",
             "I put off {v} as long as humanly possible."),
        new=("I still hate {old}, but lately {v} is the chore I dread most.",
             "Recently {v} has become my least favourite chore.",
             "These days I'd do anything to avoid {v}."),
        trans=("Chore rotation update: {old} is still awful, but {new} is catching up fast.",
               "Trying to split chores differently; {new} keeps landing on me and I hate it."),
        ask_old=("Which chore did {name} originally say they hated?",
                 "What chore did {name} first complain about?"),
        ask_new=("Which chore has {name} been dreading lately?",
                 "What chore does {name} most want to avoid these days?"),
    ),
    _Slot(
        key="likes.flowers", update=S, topic="flowers",
        pool=("sunflowers", "tulips", "peonies", "orchids", "lilies", "daisies", "hydrangeas",
              "lavender", "dahlias", "marigolds", "magnolias", "camellias"),
        old=("{v} always make me smile. My favourite flowers by far.",
             "Bought myself a bunch of {v} today, my favourite.",
             "My balcony is full of {v}, I love them."),
        new=("I still adore {old}, but lately I keep buying {v}.",
             "Recently {v} have become my favourite flowers.",
             "These days my vase is usually full of {v}."),
        ask_old=("Which flowers did {name} originally say were their favourite?",
                 "What flowers did {name} first mention loving?"),
        ask_new=("Which flowers has {name} been buying lately?",
                 "What flowers does {name} favour these days?"),
    ),
    _Slot(
        key="hobbies.workout", update=S, topic="workouts",
        pool=("yoga", "pilates", "spin class", "boxing", "CrossFit", "barre", "swimming laps",
              "kickboxing", "tai chi", "aqua aerobics", "HIIT", "weightlifting"),
        old=("{v} is my favourite workout, I never skip it.",
             "Did {v} before work today, feeling great.",
             "My week isn't complete without {v}."),
        new=("I still do {old}, but lately I've been doing {v} a lot.",
             "Recently I got into {v}, it's a great change of pace.",
             "These days my workouts are mostly {v}."),
        ask_old=("What workout did {name} originally say was their favourite?",
                 "Which workout did {name} first mention never skipping?"),
        ask_new=("What kind of workout has {name} been doing lately?",
                 "Which workout is {name} mostly doing these days?"),
    ),
)
# fmt: on

_OPENERS = ("", "", "", "", "Oh, ", "Anyway, ", "Random update: ", "Ha, ", "So, ",
            "By the way, ", "Okay, ", "Guess what? ", "Fun fact: ")  # fmt: skip
_CLOSERS = ("", "", "", "", " How's your week going?", " What about you?", " :)",
            " Life's funny like that.", " Just had to share!")  # fmt: skip


def slot_catalog() -> list[dict[str, str | int]]:
    """A summary of the slot catalog: key, update type and pool size per slot."""
    return [
        {"slot": s.key, "update_type": s.update.value, "values": len(s.values())} for s in _CATALOG
    ]


# --------------------------------------------------------------------------- helpers


def _article(value: str) -> str:
    return f"an {value}" if value[:1].lower() in "aeiou" else f"a {value}"


def _key(value: str) -> tuple[str, ...]:
    return tuple(answer_tokens(value))


def _in_text(value: str, text: str) -> bool:
    needle = normalize_answer(value)
    return bool(needle) and f" {needle} " in text


def _fill(template: str, **values: str) -> str:
    text = template.format(**values)
    return text[:1].upper() + text[1:]


def _chatty(template: str, rng: random.Random, **values: str) -> str:
    """Render a cue template with an optional opener and closer."""
    opener = rng.choice(_OPENERS)
    closer = rng.choice(_CLOSERS)
    body = template.format(**values)
    if opener.endswith(", ") and not template.startswith(("{", "I ", "I'")):
        body = body[:1].lower() + body[1:]
    elif not opener:
        body = body[:1].upper() + body[1:]
    return f"{opener}{body}{closer}"


def _allocate(units: int, mix: Mapping[str, float]) -> dict[UpdateType, int]:
    """Units per update type: largest remainder by weight, capped by the catalog."""
    capacity = {u: sum(1 for s in _CATALOG if s.update is u) for u in UpdateType}
    if units > sum(capacity.values()):
        raise ConfigError(
            f"units={units} exceeds the {sum(capacity.values())} slots of the catalog"
        )
    try:
        weights = {UpdateType(k): float(v) for k, v in mix.items()}
    except ValueError as exc:
        raise ConfigError(f"invalid update-type mix {dict(mix)!r}: {exc}") from exc
    total = sum(max(w, 0.0) for w in weights.values())
    if total <= 0:
        raise ConfigError("the update-type mix needs a positive weight")
    order = list(UpdateType)
    exact = {u: units * max(weights.get(u, 0.0), 0.0) / total for u in order}
    quota = {u: min(int(exact[u]), capacity[u]) for u in order}
    left = units - sum(quota.values())
    for u in sorted(order, key=lambda u: (-(exact[u] - int(exact[u])), u.value)):
        if left and quota[u] < capacity[u] and exact[u] > quota[u]:
            quota[u] += 1
            left -= 1
    for u in sorted(order, key=lambda u: (-exact[u], u.value)):
        take = min(capacity[u] - quota[u], left)
        quota[u] += take
        left -= take
    return quota


def _stratified(n: int, low: float, high: float, rng: random.Random) -> list[float]:
    width = (high - low) / n
    qs = [low + width * (i + rng.uniform(0.1, 0.9)) for i in range(n)]
    rng.shuffle(qs)
    return qs


@dataclass
class _Plan:
    slot: _Slot
    old: str
    new: str
    q_old: float
    q_new: float
    q_trans: float | None
    old_text: str = ""
    new_text: str = ""
    trans_text: str = ""


def _pick_values(
    slot: _Slot, rng: random.Random, convo: str, used: set[tuple[str, ...]], names: set[str]
) -> tuple[str, str]:
    pool = [(v, rank) for v, rank in slot.values() if _key(v) and _key(v) not in used]
    clean = [
        (v, rank)
        for v, rank in pool
        if slot.numbers or (not _in_text(v, convo) and normalize_answer(v) not in names)
    ]
    for candidates in (clean, pool):
        order = list(candidates)
        rng.shuffle(order)
        for old, old_rank in order:
            partners = [
                (v, rank)
                for v, rank in candidates
                if v != old
                and not set(_key(v)) & set(_key(old))
                and (slot.direction == 0 or (rank - old_rank) * slot.direction > 0)
            ]
            if partners:
                return old, rng.choice(partners)[0]
    raise ConfigError(f"slot {slot.key}: not enough distinct values left in its pool")


def _question(options: Sequence[str], name: str, target: str, rng: random.Random) -> str:
    order = list(options)
    rng.shuffle(order)
    for template in order:
        text = _fill(template, name=name)
        needle = answer_tokens(target, stem=False)
        hay = answer_tokens(text, stem=False)
        n = len(needle)
        if not any(hay[i : i + n] == needle for i in range(len(hay) - n + 1)):
            return text
    raise ConfigError(f"every question template leaks the target {target!r}")


def _render_cues(plan: _Plan, rng: random.Random) -> None:
    slot = plan.slot
    base = {
        "old": plan.old,
        "new": plan.new,
        "a_old": _article(plan.old),
        "a_new": _article(plan.new),
        "topic": slot.topic,
    }
    plan.old_text = _chatty(rng.choice(slot.old), rng, v=plan.old, a_v=_article(plan.old), **base)
    plan.new_text = _chatty(rng.choice(slot.new), rng, v=plan.new, a_v=_article(plan.new), **base)
    if plan.q_trans is not None:
        options = slot.trans or (_VALUE_TRANS if slot.update is V else _SCOPE_TRANS)
        plan.trans_text = _fill(rng.choice(options), **base)
    for value, text in ((plan.old, plan.old_text), (plan.new, plan.new_text)):
        if not _in_text(value, f" {normalize_answer(text)} "):
            raise BenchmarkFormatError(f"cue for {slot.key} lost its value {value!r}: {text!r}")


def _timestamps(before: datetime, after: datetime | None, count: int) -> list[datetime]:
    if after is None or after <= before:
        step = _MAX_STEP
    else:
        step = min((after - before) / (count + 1), _MAX_STEP)
    return [(before + step * (j + 1)).replace(microsecond=0) for j in range(count)]


def _build_profile(
    index: int,
    sample: LocomoSample,
    units: int,
    quotas: Mapping[UpdateType, int],
    seed: int,
    transition_share: float,
    dataset: str,
) -> LtpProfile:
    rng = random.Random(f"ltp-reconstruction:{seed}:{index}:{sample.sample_id}")
    pid = f"p{index:03d}"
    subject = sample.speaker_a if (index + seed) % 2 == 0 else sample.speaker_b
    turns = sample.turns
    n_turns = len(turns)
    if n_turns < 4:
        raise ConfigError(f"{sample.sample_id}: too few turns ({n_turns}) to place cues")
    convo = " " + " ".join(normalize_answer(t.text) for t in turns) + " "
    names = {normalize_answer(sample.speaker_a), normalize_answer(sample.speaker_b)}
    names |= {normalize_answer(t.speaker) for t in turns}

    slots: list[_Slot] = []
    for utype in UpdateType:
        family = [s for s in _CATALOG if s.update is utype]
        slots.extend(rng.sample(family, quotas[utype]))
    rng.shuffle(slots)

    used: set[tuple[str, ...]] = set()
    q_old = _stratified(units, *OLD_RANGE, rng)
    q_new = _stratified(units, *NEW_RANGE, rng)
    with_transition = set(rng.sample(range(units), round(units * transition_share)))
    plans: list[_Plan] = []
    for n, slot in enumerate(slots):
        old, new = _pick_values(slot, rng, convo, used, names)
        used.update({_key(old), _key(new)})
        q_trans = None
        if n in with_transition:
            q_trans = q_new[n] - rng.uniform(*_TRANSITION_LEAD)
        plan = _Plan(slot=slot, old=old, new=new, q_old=q_old[n], q_new=q_new[n], q_trans=q_trans)
        _render_cues(plan, rng)
        plans.append(plan)
    plans.sort(key=lambda p: p.q_old)

    def gap(q: float) -> int:
        return min(max(round(q * n_turns), 1), n_turns - 1)

    # (gap, quantile, rank, unit number, kind, text)
    inserts: list[tuple[int, float, int, int, EventKind, str]] = []
    for u, plan in enumerate(plans):
        inserts.append((gap(plan.q_old), plan.q_old, 0, u, EventKind.CUE_OLD, plan.old_text))
        inserts.append((gap(plan.q_new), plan.q_new, 2, u, EventKind.CUE_NEW, plan.new_text))
        if plan.q_trans is not None:
            inserts.append(
                (gap(plan.q_trans), plan.q_trans, 1, u, EventKind.TRANSITION, plan.trans_text)
            )
    inserts.sort(key=lambda item: item[:4])
    by_gap: dict[int, list[tuple[int, float, int, int, EventKind, str]]] = {}
    for item in inserts:
        by_gap.setdefault(item[0], []).append(item)

    width = max(2, len(str(units - 1)))
    unit_ids = [f"{pid}-u{u:0{width}d}" for u in range(len(plans))]
    events: list[LtpEvent] = []
    cue_ids: dict[tuple[int, EventKind], str] = {}

    def next_id() -> str:
        return f"{pid}-e{len(events) + 1:05d}"

    for position, turn in enumerate(turns):
        pending = by_gap.get(position, [])
        if pending:
            stamps = _timestamps(turns[position - 1].timestamp, turn.timestamp, len(pending))
            for stamp, (_, _, _, u, kind, text) in zip(stamps, pending, strict=True):
                event_id = next_id()
                cue_ids[(u, kind)] = event_id
                events.append(
                    LtpEvent(
                        event_id=event_id, timestamp=stamp, speaker=subject, text=text,
                        kind=kind, unit_id=unit_ids[u], dia_id=None,
                    )
                )  # fmt: skip
        events.append(
            LtpEvent(
                event_id=next_id(), timestamp=turn.timestamp, speaker=turn.speaker,
                text=turn.text, kind=EventKind.DIALOG, unit_id=None, dia_id=turn.dia_id,
            )
        )  # fmt: skip

    unit_rows: list[LtpUnit] = []
    probes: list[LtpProbe] = []
    for u, plan in enumerate(plans):
        uid = unit_ids[u]
        unit_rows.append(
            LtpUnit(
                unit_id=uid,
                slot=plan.slot.key,
                update_type=plan.slot.update,
                old_value=plan.old,
                current_value=plan.new,
                old_event_id=cue_ids[(u, EventKind.CUE_OLD)],
                new_event_id=cue_ids[(u, EventKind.CUE_NEW)],
                transition_event_id=cue_ids.get((u, EventKind.TRANSITION)),
            )
        )
        probes.append(
            LtpProbe(
                probe_id=f"{uid}-historical", unit_id=uid, view=ProbeView.HISTORICAL,
                kind=ProbeKind.FACT,
                question=_question(plan.slot.ask_old, subject, plan.old, rng),
                target=plan.old, alternate=plan.new,
            )
        )  # fmt: skip
        probes.append(
            LtpProbe(
                probe_id=f"{uid}-current", unit_id=uid, view=ProbeView.CURRENT,
                kind=ProbeKind.CONFLICT,
                question=_question(plan.slot.ask_new, subject, plan.new, rng),
                target=plan.new, alternate=plan.old,
            )
        )  # fmt: skip
    return LtpProfile(
        profile_id=pid,
        source=LtpSource(dataset=dataset, sample_id=sample.sample_id),
        subject=subject,
        events=tuple(events),
        units=tuple(unit_rows),
        probes=tuple(probes),
    )


# --------------------------------------------------------------------------- public API


def build_ltp(
    locomo_path: str | Path,
    *,
    profiles: int = 10,
    units: int = 40,
    seed: int = 0,
    transition_share: float = 0.3,
    mix: Mapping[str, float] | None = None,
) -> LtpFile:
    """Build an LTP reconstruction from a LoCoMo file (see the module docstring).

    Args:
        locomo_path: path of ``locomo10.json`` (or any LoCoMo-format file).
        profiles: number of profiles, one per conversation in file order.
        units: state units per profile (at most the catalog size, 50).
        seed: random seed; the same seed gives a byte-identical file.
        transition_share: share of units that also get a transition event.
        mix: update-type weights (keys temporal/negation/value/scope); default
            :data:`DEFAULT_MIX`, the paper's release skew.

    Raises:
        ConfigError: for counts the data or the catalog cannot satisfy.
        BenchmarkFormatError: when the LoCoMo file is malformed, or (a bug)
            the built file fails the strict structural validators.
    """
    if not isinstance(profiles, int) or profiles < 1:
        raise ConfigError(f"profiles must be a positive integer, got {profiles!r}")
    if not isinstance(units, int) or units < 1:
        raise ConfigError(f"units must be a positive integer, got {units!r}")
    if not 0.0 <= transition_share <= 1.0:
        raise ConfigError(f"transition_share must be in [0, 1], got {transition_share!r}")
    path = Path(locomo_path)
    samples = load_locomo(path)
    if profiles > len(samples):
        raise ConfigError(f"profiles={profiles} but {path} has only {len(samples)} conversations")
    quotas = _allocate(units, DEFAULT_MIX if mix is None else mix)
    dataset = path.stem
    built = tuple(
        _build_profile(i, samples[i], units, quotas, seed, transition_share, dataset)
        for i in range(profiles)
    )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    ltp = LtpFile(
        name="ltp-reconstruction",
        version=1,
        profiles=built,
        notes=(
            "Reconstruction of LTP (LoCoMo Temporal Plus) following the A-TMA paper's "
            "appendix A.2/A.3; not the original release. Cues, values and questions are "
            "generated by langchain_atma.benchmarks.ltp_build; dialog events are LoCoMo "
            "turns (CC BY-NC 4.0)."
        ),
        build={
            "generator": "langchain_atma.benchmarks.ltp_build",
            "seed": seed,
            "profiles": profiles,
            "units_per_profile": units,
            "transition_share": transition_share,
            "update_type_quota": {u.value: quotas[u] for u in UpdateType},
            "source_file": path.name,
            "source_sha256": digest,
        },
    )
    problems = validate_ltp(ltp, strict=True, expected_profiles=profiles, expected_units=units)
    if problems:
        raise BenchmarkFormatError(
            "the built LTP file failed validation:\n  " + "\n  ".join(problems[:10])
        )
    return ltp


def write_ltp(ltp: LtpFile, out_path: str | Path) -> Path:
    """Write an LTP file as UTF-8 JSON (deterministic bytes); return the path."""
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_ltp(ltp), encoding="utf-8")
    return path
