"""Seeded generator of labelled pairs for training the Sentry gate.

Each *interaction* is one person, one state slot (where they live, their job,
their pet, how long their commute is...), an old value and a new value. It
yields several labelled ``(new, old)`` sentence pairs with the paper's label
map ``(y_top, y_log)``:

* same slot and **conflicting** -> ``(1, 0)``: the new sentence replaces the
  value ("I moved to Denver"), ends or negates it ("we broke up", "no more
  cat"), changes a number ("now it's 45 minutes") or scopes / qualifies it
  ("only on weekends now"). Scope pairs count as *needs audit*: the Judge
  decides whether they become a scoped exception.
* same slot and **consistent** -> ``(1, 1)``: a restatement or paraphrase, an
  arrival statement with the same value ("I moved to Boston two years ago"
  against "I live in Boston"), casual narrative that mentions the fact
  without changing it ("work at the bakery was crazy today"), and, for
  multi-valued slots (hobbies, likes, pets, languages, clubs...), a value
  that is *added* rather than swapped ("I took up pottery" against "I love
  painting"); an explicit swap or ending there is still a conflict.
* **another slot** or unrelated talk -> ``(0, 0)``: a fact of another slot of
  the same person (slots that describe one state from two sides, such as
  job and employer, are never used as each other's negatives), hard
  negatives that share words with the slot but talk about something else
  ("my dog's vet moved to Denver" or "my sister lives in Boston" against "I
  live in Boston"), questions about the slot ("is Boston still your home
  city?"), one-off episodes on the same everyday topic ("I burned the
  lasagna again" against "I made pancakes for my sister") and small talk.

Sentences are rendered from slot templates in one of several named
**phrasing families** (:data:`FAMILIES`): ``plain`` declaratives, ``casual``
chat (fillers, slang, contractions, speaker prefixes), ``reported`` speech
("Maya told me she..."), ``story`` (the fact embedded in a longer narrative
sentence) and ``terse`` note style ("home city: Denver (was Boston)"). A
family can be kept out of training entirely (``families=``) and used only for
evaluation (``new_families=``).

Template mini-language (used by the slot tables below): ``{S}``, ``{O}``,
``{P}``, ``{R}`` are the subject, object, possessive and reflexive of the
person (first person, a name on first mention, or a pronoun); ``[a|b]``
picks ``a`` in the first person and ``b`` in the third; other ``{field}``
placeholders are values (``{v}`` the value, ``{av}`` with an indefinite
article, ``{old}`` the previous value) or interaction extras (``{when}``,
``{rel}``, ``{pet}``...).

Everything is deterministic from the seed (Python's ``random.Random``).
No benchmark data or benchmark templates are used.

Example:
    >>> from langchain_atma.bank.sentry_data import generate_pairs
    >>> pairs = generate_pairs(20, seed=0)
    >>> sorted({(p.y_top, p.y_log) for p in pairs})
    [(0, 0), (1, 0), (1, 1)]
    >>> generate_pairs(20, seed=0) == pairs
    True
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_atma.errors import ConfigError

__all__ = [
    "FAMILIES",
    "PAIR_KINDS",
    "PairKind",
    "SentryPair",
    "generate_pairs",
    "slot_names",
    "slots_linked",
    "smalltalk_sentences",
]

FAMILIES: tuple[str, ...] = ("plain", "casual", "reported", "story", "terse")
"""Names of the phrasing families."""

PairKind = Literal[
    "replace",
    "update",
    "scope",
    "contrast",
    "conflict_vs_consistent",
    "restate",
    "mention",
    "arrival",
    "addition",
    "other_slot",
    "hard_negative",
    "chitchat",
    "smalltalk",
    "mined_chitchat",
    "mined_other_slot",
]
PAIR_KINDS: tuple[str, ...] = (
    "replace",
    "update",
    "scope",
    "contrast",
    "conflict_vs_consistent",
    "restate",
    "mention",
    "arrival",
    "addition",
    "other_slot",
    "hard_negative",
    "chitchat",
    "smalltalk",
    "mined_chitchat",
    "mined_other_slot",
)
"""Pair kinds: five conflicting ``(1, 0)``, four consistent ``(1, 1)``, six ``(0, 0)``.

The two ``mined_*`` kinds are added by the trainer (nearest neighbours in the
encoder's space, see :mod:`langchain_atma.bank.sentry_train`), not by
:func:`generate_pairs`.
"""


class SentryPair(BaseModel):
    """One labelled training pair ``(new, old)`` with its provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    interaction_id: str = Field(description="Interaction the pair belongs to (split key).")
    new_text: str = Field(description="The new statement u_k.")
    old_text: str = Field(description="The prior (profile) statement p_k.")
    y_top: int = Field(ge=0, le=1, description="Topic target: 1 when both are about one slot.")
    y_log: int = Field(ge=0, le=1, description="Logic target: 1 when same slot and consistent.")
    kind: PairKind = Field(description="How the pair was built (see PAIR_KINDS).")
    slot: str = Field(
        description="Slot of the old statement ('chitchat:<topic>' / 'smalltalk' for chat, "
        "'<slot>:other' for a hard negative)."
    )
    new_slot: str = Field(description="Slot of the new statement (same conventions).")
    new_family: str = Field(description="Phrasing family of the new statement.")
    old_family: str = Field(description="Phrasing family of the old statement.")

    @property
    def needs_audit(self) -> bool:
        """True for the conflicting label ``(1, 0)``: the gate should flag it."""
        return self.y_top == 1 and self.y_log == 0


# ============================================================== people & extras

_FEMALE = (
    "Maya",
    "Sofia",
    "Priya",
    "Hannah",
    "Chloe",
    "Amara",
    "Lucia",
    "Emma",
    "Grace",
    "Aisha",
    "Nora",
    "Zoe",
    "Mei",
    "Olivia",
    "Fatima",
    "Ingrid",
    "Rosa",
    "Leila",
    "Jess",
    "Tanya",
    "Keiko",
    "Bea",
    "Nadia",
    "Claire",
    "Imani",
    "Yara",
    "Elena",
    "Ruth",
    "Sasha",
    "Hana",
)
_MALE = (
    "Liam",
    "Omar",
    "Daniel",
    "Mateo",
    "Ethan",
    "Kwame",
    "Ravi",
    "Jonas",
    "Marcus",
    "Leo",
    "Hiro",
    "Ben",
    "Tariq",
    "Diego",
    "Sam",
    "Felix",
    "Andre",
    "Noah",
    "Tom",
    "Ivan",
    "Kofi",
    "Luca",
    "Arjun",
    "Pete",
    "Chris",
    "Dev",
    "Malik",
    "Owen",
    "Yusuf",
    "Erik",
)
_PARTNERS = (
    "Alex",
    "Jordan",
    "Taylor",
    "Casey",
    "Riley",
    "Morgan",
    "Jamie",
    "Robin",
    "Avery",
    "Quinn",
    "Sara",
    "Mark",
    "Julia",
    "Kevin",
    "Anna",
    "David",
    "Laura",
    "Nick",
    "Emily",
    "Ryan",
    "Carmen",
    "Jin",
    "Fiona",
    "Paolo",
    "Lena",
    "Victor",
    "Tessa",
    "Hugo",
    "Ines",
    "Marco",
)
_PET_NAMES = (
    "Luna",
    "Milo",
    "Bella",
    "Max",
    "Oliver",
    "Daisy",
    "Charlie",
    "Coco",
    "Biscuit",
    "Pepper",
    "Rocky",
    "Nala",
    "Ziggy",
    "Mochi",
    "Simba",
    "Olive",
    "Bruno",
    "Pickles",
    "Ginger",
    "Otis",
)
_RELATIVES = (
    "sister",
    "brother",
    "cousin",
    "mom",
    "dad",
    "aunt",
    "uncle",
    "roommate",
    "coworker",
    "neighbour",
    "best friend",
    "grandma",
    "boss",
    "niece",
    "nephew",
    "brother-in-law",
)
_WHEN = (
    "last month",
    "last week",
    "a couple of weeks ago",
    "over the summer",
    "in the spring",
    "recently",
    "a few days ago",
    "back in March",
    "in January",
    "this year",
    "yesterday",
    "at the start of the month",
    "two months ago",
    "over the holidays",
    "in the fall",
)
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DURATIONS = (
    "two years",
    "a few months",
    "ages",
    "about five years",
    "a while now",
    "three years",
    "over a decade",
    "six months",
    "a long time",
)
_CITIES = (
    "Boston",
    "Denver",
    "Chicago",
    "Seattle",
    "Austin",
    "Portland",
    "Atlanta",
    "Miami",
    "Phoenix",
    "San Diego",
    "Minneapolis",
    "Nashville",
    "Philadelphia",
    "Pittsburgh",
    "Baltimore",
    "Detroit",
    "Cleveland",
    "Sacramento",
    "Salt Lake City",
    "Raleigh",
    "Charlotte",
    "Tampa",
    "New Orleans",
    "Kansas City",
    "St. Louis",
    "Milwaukee",
    "Madison",
    "Boise",
    "Albuquerque",
    "Tucson",
    "Honolulu",
    "Anchorage",
    "Toronto",
    "Vancouver",
    "Montreal",
    "Calgary",
    "Ottawa",
    "London",
    "Manchester",
    "Edinburgh",
    "Glasgow",
    "Dublin",
    "Bristol",
    "Leeds",
    "Paris",
    "Lyon",
    "Marseille",
    "Berlin",
    "Munich",
    "Hamburg",
    "Vienna",
    "Zurich",
    "Amsterdam",
    "Brussels",
    "Copenhagen",
    "Stockholm",
    "Oslo",
    "Helsinki",
    "Lisbon",
    "Porto",
    "Madrid",
    "Barcelona",
    "Valencia",
    "Seville",
    "Rome",
    "Milan",
    "Naples",
    "Florence",
    "Athens",
    "Prague",
    "Warsaw",
    "Krakow",
    "Budapest",
    "Istanbul",
    "Tel Aviv",
    "Cairo",
    "Nairobi",
    "Lagos",
    "Cape Town",
    "Mumbai",
    "Bangalore",
    "Delhi",
    "Singapore",
    "Bangkok",
    "Hanoi",
    "Seoul",
    "Tokyo",
    "Osaka",
    "Sydney",
    "Melbourne",
    "Brisbane",
    "Perth",
    "Auckland",
    "Wellington",
    "Mexico City",
    "Guadalajara",
    "Bogota",
    "Lima",
    "Santiago",
    "Buenos Aires",
    "Sao Paulo",
    "Houston",
    "Dallas",
    "San Francisco",
    "Los Angeles",
    "Oakland",
    "Brooklyn",
    "Queens",
    "Richmond",
    "Savannah",
    "Asheville",
    "Burlington",
    "Spokane",
    "Tallahassee",
    "Omaha",
    "Des Moines",
)


@dataclass(frozen=True)
class _Person:
    name: str
    subj: str
    obj: str
    poss: str
    refl: str


def _person(rng: random.Random) -> _Person:
    if rng.random() < 0.5:
        return _Person(rng.choice(_FEMALE), "she", "her", "her", "herself")
    return _Person(rng.choice(_MALE), "he", "him", "his", "himself")


# ==================================================================== slot tables


@dataclass(frozen=True)
class _Num:
    """A numeric slot value: integers ``lo..hi`` by ``step``, shown through ``units``."""

    lo: int
    hi: int
    step: int
    units: tuple[str, ...]
    min_diff: int
    words_ok: bool = False


@dataclass(frozen=True)
class _Slot:
    name: str
    group: str
    labels: tuple[str, ...]
    values: tuple[str, ...] | _Num
    state: tuple[str, ...]
    replace: tuple[str, ...]
    update: tuple[str, ...] = ()
    scope: tuple[str, ...] = ()
    mention: tuple[str, ...] = ()
    hard: tuple[str, ...] = ()
    add: tuple[str, ...] = ()
    multi: bool = False
    extra: Callable[[random.Random], dict[str, str]] | None = field(default=None)


_RESIDENCE = _Slot(
    name="residence",
    group="home",
    labels=("home city", "city", "location", "current city", "lives in", "based in"),
    values=_CITIES
    + (
        "a small town in Vermont",
        "the suburbs of Dallas",
        "a village near York",
        "rural Oregon",
        "a beach town in North Carolina",
        "the countryside outside Lyon",
        "Sweden",
        "Canada",
        "Germany",
        "Spain",
        "Japan",
        "Australia",
        "Ireland",
        "Mexico",
        "Brazil",
        "New Zealand",
        "the Netherlands",
        "Texas",
        "Florida",
        "California",
        "Ohio",
        "upstate New York",
        "the Bay Area",
        "the Midwest",
        "Scotland",
        "Portugal",
        "Norway",
    ),
    state=(
        "{S} [live|lives] in {v}",
        "{S} [am|is] based in {v}",
        "{S} [have|has] been living in {v} for {dur}",
        "home for {O} is {v}",
        "{P} place is in {v}",
        "{S} [rent|rents] an apartment in {v}",
        "{S} [call|calls] {v} home",
        "{S} [live|lives] over in {v}",
        "{P} home base is {v}",
        "{S} [have|has] a little flat in {v}",
        "{S} [am|is] settled in {v}",
        "{S} [am|is] living in {v}",
        "{S} [have|has] lived in {v} for {dur}",
        "{P} address is in {v}",
    ),
    replace=(
        "{S} moved to {v} {when}",
        "{S} just relocated to {v}",
        "{S} [am|is] living in {v} now",
        "{S} packed up and moved to {v}",
        "{S} finally made the move to {v}",
        "{S} left {old} and moved to {v}",
        "{S} [have|has] a new place in {v}",
        "home is {v} now",
        "{S} signed a lease in {v} and moved in {when}",
        "{S} [am|is] in {v} these days, not {old} anymore",
        "after years in {old}, {S} moved to {v}",
        "{S} bought a house in {v}, so that's home now",
        "the move to {v} is done and {S} started unpacking",
        "{S} [have|has] been settling into {P} new apartment in {v}",
        "{S} got a transfer and [live|lives] in {v} now",
        "{S} relocated to {v} with {P} family",
        "[we|they] moved the whole family to {v}",
        "{S} [am|is] officially a {v} resident now",
        "{S} just finished moving to {v}",
    ),
    update=(
        "{S} moved out of {old}",
        "{S} [don't|doesn't] live in {old} anymore",
        "{S} left {old} for good",
        "{S} gave up {P} apartment in {old}",
        "{S} [am|is] no longer in {old}",
        "{S} [am|is] moving away from {old} at the end of the month",
        "{S} sold {P} place in {old}",
        "{S} had to leave {old} {when}",
        "{S} [am|is] done with {old}, the lease ended and {S} moved out",
    ),
    scope=(
        "{S} only [stay|stays] in {old} during the week now",
        "{S} [split|splits] {P} time between {old} and {city2} now",
        "{S} still [keep|keeps] a place in {old} but [spend|spends] most months in {city2}",
        "{S} [am|is] only in {old} for the summers now",
        "{S} [am|is] in {old} on weekdays only, weekends are at {P} parents' place in {city2}",
        "{S} [live|lives] in {old} part of the year and in {city2} the rest",
    ),
    mention=(
        "it snowed all day here in {v}",
        "{P} neighbours here in {v} had a block party",
        "{S} went for a walk around {P} neighbourhood in {v} after dinner",
        "rent in {v} keeps going up and {S} [was|was] just grumbling about it",
        "the new bakery near {P} place in {v} makes amazing croissants",
        "{S} [love|loves] the coffee shops near {P} apartment in {v}",
        "traffic in {v} was terrible on {P} way home",
        "{S} showed {P} {rel} around {v} when they came to visit",
        "another rainy evening at home in {v}",
        "{S} still [love|loves] living in {v}",
        "the farmers market here in {v} was packed this morning",
        "summer in {v} is way too hot, {S} spent the day inside with the fan on",
    ),
    hard=(
        "{P} {rel} just moved to {v}",
        "{S} flew to {v} for a work conference",
        "{P} flight had a long layover in {v}",
        "{P} dog's vet moved to {v}",
        "{S} [am|is] reading a novel set in {v}",
        "{P} favourite team is from {v}",
        "{S} [want|wants] to visit {v} someday",
        "{P} best friend grew up in {v}",
        "{S} watched a documentary about {v}",
        "{P} company opened a new office in {v}",
        "{P} {rel} lives in {v}",
        "{S} [have|has] never been to {v}",
    ),
)

_NEIGHBOURHOOD = _Slot(
    name="neighbourhood",
    group="home",
    labels=("neighbourhood", "area", "part of town", "district"),
    values=(
        "downtown",
        "the east side",
        "the west end",
        "the old town",
        "uptown",
        "the university district",
        "the waterfront",
        "a quiet suburb",
        "the north side",
        "Midtown",
        "the arts district",
        "the historic quarter",
        "the harbour area",
        "Little Italy",
        "Chinatown",
        "the financial district",
        "a leafy suburb",
        "the hills above the city",
        "the riverside",
        "the city centre",
        "a village just outside town",
        "the south end",
        "the old mill district",
    ),
    state=(
        "{S} [live|lives] in {v}",
        "{P} apartment is in {v}",
        "{S} [have|has] a place in {v}",
        "{S} [rent|rents] a room in {v}",
        "{P} flat is right in {v}",
    ),
    replace=(
        "{S} moved across town to {v}",
        "{S} [am|is] in {v} now",
        "{S} switched apartments and [am|is] now in {v}",
        "{S} found a new flat in {v}",
        "{S} left {old} for a place in {v}",
    ),
    update=("{S} moved out of {old}", "{S} [am|is] not living in {old} anymore"),
    scope=("{S} only [stay|stays] in {old} on weeknights now",),
    mention=(
        "the cafes in {v} were packed this morning",
        "{S} [walk|walks] {P} dog around {v} every evening",
        "there's a new noodle place opening near {P} flat in {v}",
    ),
    hard=(
        "{S} had lunch in {v} with a coworker",
        "there was a street festival in {v}",
        "{P} gym is over in {v}",
        "{P} {rel} works in {v}",
    ),
)

_HOUSING = _Slot(
    name="housing",
    group="home",
    labels=("housing", "home", "type of home"),
    values=(
        "studio apartment",
        "two-bedroom flat",
        "house with a big yard",
        "townhouse",
        "tiny apartment",
        "basement suite",
        "condo",
        "farmhouse",
        "houseboat",
        "shared house",
        "loft",
        "cabin in the woods",
        "duplex",
        "trailer",
        "one-bedroom apartment",
    ),
    state=(
        "{S} [live|lives] in {av}",
        "{S} [rent|rents] {av}",
        "home is {av}",
        "{S} [own|owns] {av}",
        "{S} [share|shares] {av} with two friends",
    ),
    replace=(
        "{S} moved into {av}",
        "{S} bought {av}",
        "{S} [live|lives] in {av} now",
        "{S} upgraded to {av}",
        "{S} downsized to {av}",
    ),
    update=("{S} sold {P} {old}", "{S} moved out of {P} {old}"),
    scope=("{S} only [use|uses] the {old} on weekends now",),
    mention=(
        "{P} {v} gets amazing light in the mornings",
        "{S} repainted the kitchen of {P} {v}",
        "the heating in {P} {v} broke again",
    ),
    hard=("{P} {rel} is looking for {av}", "{S} watched a show about people renovating {av}"),
)

_JOB = _Slot(
    name="job",
    group="work",
    labels=("job", "occupation", "profession", "works as", "role"),
    values=(
        "nurse",
        "teacher",
        "software engineer",
        "baker",
        "accountant",
        "graphic designer",
        "electrician",
        "lawyer",
        "chef",
        "barista",
        "paramedic",
        "firefighter",
        "dentist",
        "pharmacist",
        "architect",
        "journalist",
        "photographer",
        "plumber",
        "mechanic",
        "social worker",
        "data analyst",
        "project manager",
        "real estate agent",
        "veterinarian",
        "physical therapist",
        "librarian",
        "marketing manager",
        "sales rep",
        "web developer",
        "carpenter",
        "police officer",
        "flight attendant",
        "pilot",
        "truck driver",
        "hairdresser",
        "personal trainer",
        "counselor",
        "translator",
        "financial advisor",
        "UX designer",
        "research scientist",
        "lab technician",
        "construction worker",
        "farmer",
        "florist",
        "tattoo artist",
        "video editor",
        "school principal",
        "dental hygienist",
        "HR manager",
        "event planner",
        "bartender",
        "waiter",
        "cashier",
        "receptionist",
        "nanny",
        "music teacher",
        "professor",
        "yoga instructor",
        "radio host",
        "park ranger",
        "copywriter",
        "optometrist",
    ),
    state=(
        "{S} [am|is] {av}",
        "{S} [work|works] as {av}",
        "{S} [have|has] been {av} for {dur}",
        "by trade {S} [am|is] {av}",
        "{S} [make|makes] a living as {av}",
        "{P} job is being {av}",
        "{S} [am|is] working as {av}",
        "{S} [am|is] {av} by profession",
    ),
    replace=(
        "{S} [am|is] {av} now",
        "{S} started a new job as {av}",
        "{S} switched careers and became {av}",
        "{S} left {P} {old} job to become {av}",
        "{S} got hired as {av} {when}",
        "{S} [have|has] been working as {av} since {month}",
        "{S} [am|is] not {aold} anymore, {S} [work|works] as {av} now",
        "{S} retrained and [am|is] {av} these days",
        "{P} new job is {v}",
        "{S} finally landed a job as {av}",
    ),
    update=(
        "{S} quit {P} job as {aold}",
        "{S} got laid off {when}",
        "{S} [am|is] not {aold} anymore",
        "{S} retired {when}",
        "{S} [am|is] between jobs right now",
        "{S} [am|is] on leave from work for a while",
        "{S} walked away from being {aold}",
        "{S} lost {P} {old} job",
        "{S} stopped working as {aold}",
    ),
    scope=(
        "{S} [am|is] only {aold} part-time now",
        "{S} still [work|works] as {aold} but only on weekends",
        "{S} only [do|does] {old} work in the summer now",
        "{S} [am|is] {aold} just two days a week now, the rest is freelance",
    ),
    mention=(
        "another busy day as {av}, {S} barely had time for lunch",
        "{S} [love|loves] being {av}",
        "one of the perks of being {av} is the people",
        "{S} had a crazy shift today, the life of {av}",
        "{P} coworkers threw {O} a party for {P} fifth year as {av}",
        "{S} [was|was] exhausted after work, being {av} is tiring",
        "{S} [am|is] still enjoying working as {av}",
        "work at {wp} was busy today",
        "things at {wp} were hectic this morning",
        "{S} stayed late at {wp} again",
        "{S} had a long shift at {wp} today",
        "{P} coworkers at {wp} threw a little party",
    ),
    hard=(
        "{P} {rel} is {av}",
        "{S} watched a show about {av}",
        "{S} [am|is] thinking of hiring {av} to help with the house",
        "{S} met {av} at the party last night",
        "{P} {rel} wants to become {av}",
        "{S} had to call {av} this morning",
    ),
)

_EMPLOYER = _Slot(
    name="employer",
    group="work",
    labels=("employer", "workplace", "works at", "company"),
    values=(
        "a bakery downtown",
        "the hospital",
        "a law firm",
        "a tech startup",
        "the public library",
        "a coffee shop",
        "an elementary school",
        "a bank",
        "the city council",
        "a marketing agency",
        "a hotel",
        "a restaurant",
        "a construction company",
        "the university",
        "an airline",
        "a pharmacy",
        "a car dealership",
        "a nonprofit",
        "a bookstore",
        "a gym",
        "a vet clinic",
        "a grocery store",
        "a museum",
        "an architecture firm",
        "the post office",
        "a call centre",
        "a hair salon",
        "a dental office",
        "a warehouse",
        "an insurance company",
        "a newspaper",
        "a game studio",
        "a brewery",
        "a children's hospital",
        "Brightline Logistics",
        "Northwind Foods",
        "a solar panel company",
        "the zoo",
        "a recording studio",
        "a shipping company",
        "a daycare",
        "a climbing gym",
        "an accounting firm",
    ),
    state=(
        "{S} [work|works] at {v}",
        "{S} [have|has] a job at {v}",
        "{S} [am|is] employed at {v}",
        "{S} [have|has] been working at {v} for {dur}",
        "{P} job is at {v}",
        "{S} [am|is] on staff at {v}",
    ),
    replace=(
        "{S} started at {v} {when}",
        "{S} [work|works] at {v} now",
        "{S} moved from {old} to {v}",
        "{S} took a job at {v}",
        "{S} got hired at {v}",
        "{P} new job is at {v}",
        "{S} left {old} and joined {v}",
    ),
    update=(
        "{S} left {old}",
        "{S} quit {P} job at {old}",
        "{S} [don't|doesn't] work at {old} anymore",
        "{old} closed down, so {S} [am|is] out of work",
        "{S} got let go from {old}",
        "{S} handed in {P} notice at {old}",
    ),
    scope=(
        "{S} still [work|works] at {old} but only two days a week now",
        "{S} only [pick|picks] up shifts at {old} during the holidays now",
    ),
    mention=(
        "work at {v} was busy today",
        "things at {v} were crazy this morning",
        "{S} brought cookies for {P} coworkers at {v}",
        "{P} boss at {v} gave {O} a shoutout",
        "it was a slow afternoon at {v}, {S} reorganised the whole storeroom",
        "{S} stayed late at {v} again to finish a project",
    ),
    hard=(
        "{P} {rel} works at {v}",
        "{S} [was|was] at {v} yesterday to pick something up",
        "there was a fire drill at {v} near {P} place",
        "{S} had an appointment at {v}",
        "{S} applied to {v} but never heard back",
    ),
)

_WORK_HOURS = _Slot(
    name="work_hours",
    group="schedule",
    labels=("work schedule", "hours", "shift", "schedule"),
    values=(
        "nine to five",
        "nights",
        "early shifts",
        "part-time",
        "full-time",
        "weekends",
        "the late shift",
        "four days a week",
        "twelve-hour shifts",
        "from home",
        "from home three days a week",
        "split shifts",
        "the overnight shift",
        "mornings only",
    ),
    state=(
        "{S} [work|works] {v}",
        "{P} schedule is {v}",
        "{S} usually [work|works] {v}",
        "{S} [am|is] on {v} at work",
    ),
    replace=(
        "{S} [work|works] {v} now",
        "{S} switched to {v}",
        "{P} schedule changed, {S} [work|works] {v} now",
        "{S} got moved to {v}",
        "starting {when} {S} [work|works] {v}",
    ),
    update=(
        "{S} [am|is] not working {old} anymore",
        "{S} stopped doing {old}",
        "no more {old} for {O}",
    ),
    scope=(
        "{S} only [work|works] {old} during the holidays now",
        "{S} [work|works] {old} except every other week now",
    ),
    mention=(
        "another long day at work, typical with {P} {v} schedule",
        "working {v} means {S} [miss|misses] most family dinners",
    ),
    hard=("{P} {rel} works {v}", "the pharmacy near {P} place is open {v}"),
)

_WAKE = _Slot(
    name="wake_time",
    group="schedule",
    labels=("wake-up time", "alarm", "morning routine"),
    values=(
        "5:30",
        "six",
        "6:45",
        "seven",
        "7:30",
        "eight",
        "half past five",
        "nine",
        "4:45",
        "ten",
    ),
    state=(
        "{S} [get|gets] up at {v} every day",
        "{P} alarm goes off at {v}",
        "{S} [wake|wakes] up at {v}",
        "{S} [am|is] up by {v} most mornings",
    ),
    replace=(
        "{S} [get|gets] up at {v} now",
        "{S} [have|has] started waking up at {v}",
        "{P} alarm is set for {v} these days",
        "{S} moved {P} wake-up time to {v}",
    ),
    update=("{S} [don't|doesn't] set an alarm anymore",),
    scope=("{S} only [get|gets] up at {old} on workdays now",),
    mention=("up at {v} again, coffee first", "{S} watched the sunrise after getting up at {v}"),
    hard=("{P} flight leaves at {v}", "the store opens at {v}", "{P} {rel} gets up at {v}"),
)

_GYM = _Slot(
    name="gym",
    group="schedule",
    labels=("gym schedule", "gym days", "workouts"),
    values=(
        "on Mondays and Thursdays",
        "every weekday morning",
        "three times a week",
        "on weekends",
        "on Tuesdays, Thursdays and Saturdays",
        "every other day",
        "once a week",
        "on Monday, Wednesday and Friday",
        "every morning before work",
        "twice a week",
        "every evening after work",
    ),
    state=(
        "{S} [go|goes] to the gym {v}",
        "{S} [hit|hits] the gym {v}",
        "{S} [work|works] out {v}",
        "{S} [train|trains] {v}",
    ),
    replace=(
        "{S} switched {P} gym days, {S} [go|goes] {v} now",
        "{S} [go|goes] to the gym {v} now",
        "{S} [work|works] out {v} these days",
        "{P} new routine is the gym {v}",
    ),
    update=(
        "{S} cancelled {P} gym membership",
        "{S} [haven't|hasn't] been to the gym in months",
        "{S} gave up on the gym",
        "{S} stopped working out",
    ),
    scope=(
        "{S} only [go|goes] to the gym on weekends now",
        "{S} still [work|works] out but only when work is quiet",
    ),
    mention=(
        "leg day at the gym this morning, {S} can barely walk",
        "{S} got a new personal best on the bench press",
        "the gym was packed this morning but {S} still got {P} workout in",
    ),
    hard=(
        "{P} {rel} goes to the gym {v}",
        "the pool is closed {v}",
        "{P} kids have swim class {v}",
        "{S} [walk|walks] the dog {v}",
    ),
)

_RELATIONSHIP = _Slot(
    name="relationship",
    group="relationship",
    labels=("partner", "relationship", "dating"),
    values=_PARTNERS,
    state=(
        "{S} [am|is] dating {v}",
        "[{v} and I have|{S} and {v} have] been together for {dur}",
        "{S} [am|is] in a relationship with {v}",
        "{P} partner is {v}",
        "{S} [am|is] seeing {v}",
        "{S} [live|lives] with {P} partner {v}",
        "{S} [am|is] happily taken, {v} is the one",
    ),
    replace=(
        "{S} [am|is] seeing someone new, {v}",
        "{S} started dating {v}",
        "[{v} and I|{S} and {v}] just got together",
        "{S} [have|has] a new partner, {v}",
        "{S} [am|is] with {v} now",
        "{S} met {v} {when} and [we're|they're] official",
        "after splitting with {old}, {S} started seeing {v}",
    ),
    update=(
        "[{old} and I|{S} and {old}] broke up",
        "{S} [am|is] single again",
        "{S} split up with {old}",
        "[{old} and I|{S} and {old}] called it quits",
        "[{old} and I|{S} and {old}] got engaged",
        "[{old} and I|{S} and {old}] got married {when}",
        "[{old} and I are|{S} and {old} are] taking a break",
        "[{old} and I|{S} and {old}] got divorced",
        "{S} ended things with {old}",
    ),
    scope=(
        "[{old} and I are|{S} and {old} are] doing long distance now",
        "{S} only [see|sees] {old} on weekends now",
        "[{old} and I are|{S} and {old} are] keeping it casual now",
    ),
    mention=(
        "[{v} and I|{S} and {v}] went hiking on Saturday",
        "{v} cooked dinner for {O} last night",
        "{S} [am|is] planning a surprise for {v}'s birthday",
        "[{v} and I|{S} and {v}] binged a whole series this weekend",
        "[my partner {v} and I are|{S} and {P} partner {v} are] thinking of getting a dog",
        "{v} surprised {O} with flowers after work",
    ),
    hard=(
        "{P} {rel} is dating someone named {v}",
        "{P} coworker {v} got promoted",
        "{S} ran into {P} old teacher {v} at the store",
        "{P} {rel}'s new baby is called {v}",
    ),
)

_HOUSEHOLD = _Slot(
    name="household",
    group="relationship",
    labels=("household", "lives with", "living situation"),
    values=(
        "alone",
        "with two roommates",
        "with {P} parents",
        "with {P} partner",
        "with {P} sister",
        "with a friend from college",
        "with {P} grandmother",
        "with three housemates",
        "on {P} own",
        "with {P} kids",
        "with {P} brother and his wife",
    ),
    state=(
        "{S} [live|lives] {v}",
        "{S} [have|has] been living {v} for {dur}",
        "{S} [share|shares] a place {v}",
    ),
    replace=(
        "{S} moved in {v}",
        "{S} [live|lives] {v} now",
        "{S} [am|is] living {v} these days",
        "{S} [have|has] been living {v} since {month}",
    ),
    update=(
        "{S} moved out and [am|is] no longer living {old}",
        "{S} [don't|doesn't] live {old} anymore",
    ),
    scope=("{S} only [live|lives] {old} during the school year now",),
    mention=("dinner at home {v} was chaotic as usual", "{S} [love|loves] living {v}"),
    hard=("{P} {rel} lives {v}", "{S} watched a movie about a guy who lives {v}"),
)

_KIDS = _Slot(
    name="kids",
    group="family",
    labels=("kids", "children", "number of kids"),
    values=(
        "one kid",
        "two kids",
        "three kids",
        "a baby",
        "twins",
        "four kids",
        "a son",
        "a daughter",
        "no kids",
    ),
    state=("{S} [have|has] {v}", "{S} [am|is] a parent of {v}", "at home {S} [have|has] {v}"),
    replace=(
        "{S} [have|has] {v} now since the baby arrived",
        "{S} now [have|has] {v}",
        "with the new baby {S} [have|has] {v}",
    ),
    update=("{S} [am|is] an empty nester now, the kids moved out",),
    scope=("{S} only [have|has] the kids every other weekend now",),
    mention=("juggling {v} and work is exhausting", "{S} took {P} {v} to the park"),
    hard=("{P} {rel} has {v}", "the family next door has {v}"),
)

_KID_AGE = _Slot(
    name="kid_age",
    group="family",
    labels=("kid's age", "age of child"),
    values=_Num(1, 17, 1, ("{n}",), 1, words_ok=True),
    state=(
        "{P} {kid} {kname} is {v}",
        "{P} {kid} is {v} years old",
        "{kname}, {P} {kid}, is {v}",
        "{S} [have|has] a {v}-year-old {kid}",
    ),
    replace=(
        "{P} {kid} just turned {v}",
        "{kname} turned {v} on {day}",
        "{P} {kid} is {v} now, time flies",
        "{S} threw a party because {kname} turned {v}",
    ),
    mention=(
        "{P} {v}-year-old {kid} lost a tooth today",
        "{kname} drew a picture of the whole family",
        "at {v}, {P} {kid} already beats {O} at chess",
    ),
    hard=("{P} nephew just turned {v}", "{P} {kid}'s best friend is {v}", "{P} {rel}'s dog is {v}"),
    extra=lambda rng: {"kid": rng.choice(("daughter", "son")), "kname": rng.choice(_PARTNERS)},
)

_SIBLINGS = _Slot(
    name="siblings",
    group="family",
    labels=("siblings", "brothers and sisters"),
    values=(
        "one brother",
        "two sisters",
        "a brother and a sister",
        "three siblings",
        "no siblings",
        "an older sister",
        "a younger brother",
        "four brothers",
        "a twin sister",
        "two half-brothers",
    ),
    state=("{S} [have|has] {v}", "{S} grew up with {v}", "in {P} family {S} [have|has] {v}"),
    replace=(
        "turns out {S} [have|has] {v}, not {old}",
        "correction: {S} [have|has] {v}, not {old}",
        "{S} actually [have|has] {v}, not {old}",
    ),
    mention=("{S} spent the weekend with {P} {v}", "{S} [am|is] close with {P} {v}"),
    hard=("{P} partner has {v}", "{P} best friend has {v}"),
)

_PETS = _Slot(
    name="pets",
    group="pets",
    labels=("pet", "pets", "animal at home"),
    values=(
        "cat",
        "dog",
        "golden retriever",
        "rabbit",
        "parrot",
        "hamster",
        "tabby cat",
        "beagle",
        "border collie",
        "guinea pig",
        "turtle",
        "goldfish",
        "corgi",
        "labrador",
        "husky",
        "bearded dragon",
        "ferret",
        "pug",
        "cockatiel",
        "kitten",
        "puppy",
        "German shepherd",
        "black cat",
        "rescue greyhound",
        "Maine Coon",
    ),
    state=(
        "{S} [have|has] {av} named {pet}",
        "{S} [have|has] {av}",
        "{S} [am|is] a proud {v} owner",
        "{S} [live|lives] with {P} {v}, {pet}",
        "{pet}, {P} {v}, is the boss of the house",
        "{S} [have|has] had {P} {v} {pet} for {dur}",
    ),
    replace=(
        "{S} [have|has] {av} now instead of {P} {old}",
        "{S} rehomed {P} {old} and adopted {av}",
    ),
    multi=True,
    add=(
        "{S} adopted {av}",
        "{S} got {av} named {pet2}",
        "there's a new {v} in {P} life, {pet2}",
        "{S} brought home {av} from the shelter",
        "{S} [have|has] {av} too now",
    ),
    update=(
        "{P} {old} {pet} passed away",
        "no more {old}, {S} had to rehome {pet}",
        "{S} gave {P} {old} to {P} {rel}",
        "{S} [don't|doesn't] have a pet anymore",
        "{pet} ran away {when}",
        "{S} had to give up {pet} because of the new lease",
        "{S} lost {P} {old} {pet} {when}",
    ),
    scope=(
        "{pet} lives with {P} parents now, {S} only [see|sees] {pet} on weekends",
        "{S} only [have|has] {pet} every other week now, {P} ex has the {old} the rest of the time",
    ),
    mention=(
        "{S} took {pet} to the vet this morning",
        "{pet} chewed up {P} favourite shoes",
        "{P} {v} knocked a plant off the shelf again",
        "{S} walked {pet} in the rain today",
        "{pet} was curled up on {P} lap all evening",
        "{S} bought a new bed for {P} {v}",
    ),
    hard=(
        "{P} {rel} just got {av}",
        "{S} [am|is] pet-sitting a neighbour's {v}",
        "{P} dog's vet moved to {city2}",
        "{S} watched a video of {av} playing the piano",
        "{S} [am|is] allergic to {P} {rel}'s {v}",
        "the shelter downtown has so many {v}s",
    ),
    extra=lambda rng: {"pet": rng.choice(_PET_NAMES), "pet2": rng.choice(_PET_NAMES)},
)

_HOBBY = _Slot(
    name="hobby",
    group="leisure",
    labels=("hobby", "pastime", "free time"),
    values=(
        "painting",
        "pottery",
        "rock climbing",
        "knitting",
        "chess",
        "gardening",
        "baking",
        "photography",
        "birdwatching",
        "surfing",
        "woodworking",
        "salsa dancing",
        "hiking",
        "cycling",
        "fishing",
        "yoga",
        "journaling",
        "calligraphy",
        "sewing",
        "board games",
        "video games",
        "skateboarding",
        "scuba diving",
        "camping",
        "bouldering",
        "crocheting",
        "film photography",
        "sketching",
        "baking sourdough",
        "kayaking",
        "archery",
        "stand-up comedy",
        "community theatre",
        "poetry writing",
        "model trains",
        "cooking Thai food",
        "embroidery",
        "running trails",
        "ballroom dancing",
    ),
    state=(
        "{S} [love|loves] {v}",
        "{S} [am|is] really into {v}",
        "{P} favourite hobby is {v}",
        "{S} [spend|spends] most weekends on {v}",
        "{S} [do|does] a lot of {v}",
        "in {P} free time {S} [do|does] {v}",
        "{v} is {P} thing",
    ),
    replace=(
        "{S} [am|is] all about {v} now, {old} is history",
        "{S} swapped {old} for {v}",
        "{S} [have|has] switched from {old} to {v}",
        "these days {S} [spend|spends] {P} free time on {v} instead of {old}",
        "{S} replaced {old} with {v}",
    ),
    multi=True,
    add=(
        "{S} took up {v}",
        "{S} [have|has] gotten into {v} lately",
        "{P} new hobby is {v}",
        "{S} also [do|does] {v} now",
        "{S} started {v} on top of everything else",
        "{S} signed up for a {v} class",
        "{S} [am|is] trying {v} for the first time",
    ),
    update=(
        "{S} gave up {old}",
        "{S} [don't|doesn't] do {old} anymore",
        "{S} lost interest in {old}",
        "{S} stopped {old} after hurting {P} back",
        "{S} [have|has] quit {old} for good",
    ),
    scope=(
        "{S} only [do|does] {old} on holidays now",
        "{S} still [do|does] {old} but just once a month",
    ),
    mention=(
        "{S} spent the whole afternoon on {v}",
        "{S} had a great {v} session this weekend",
        "{S} bought new gear for {v}",
        "{S} showed {P} {rel} some of {P} {v} stuff",
        "{S} [am|is] still hooked on {v}",
    ),
    hard=(
        "{P} {rel} is into {v}",
        "{S} saw a documentary about {v}",
        "there's a {v} class at the library",
        "{S} [don't|doesn't] get why people like {v}",
    ),
)

_INSTRUMENT = _Slot(
    name="instrument",
    group="leisure",
    labels=("instrument", "plays"),
    values=(
        "guitar",
        "piano",
        "violin",
        "drums",
        "cello",
        "ukulele",
        "bass",
        "saxophone",
        "flute",
        "trumpet",
        "harmonica",
        "banjo",
        "clarinet",
        "harp",
        "accordion",
        "keyboard",
    ),
    state=(
        "{S} [play|plays] the {v}",
        "{S} [have|has] been playing the {v} since school",
        "{S} [am|is] learning the {v}",
        "{S} [play|plays] {v} in a band",
    ),
    replace=(
        "{S} switched from {old} to {v}",
        "{S} gave up the {old} for the {v}",
        "{S} [play|plays] the {v} now instead of the {old}",
    ),
    multi=True,
    add=(
        "{S} [am|is] learning the {v} now",
        "{S} picked up the {v}",
        "{P} new instrument is the {v}",
        "{S} started taking {v} lessons too",
    ),
    update=(
        "{S} sold {P} {old}",
        "{S} [don't|doesn't] play the {old} anymore",
        "{S} quit {old} lessons",
        "the band split up, so {S} [don't|doesn't] really play {old} anymore",
        "{S} [haven't|hasn't] touched {P} {old} in months",
    ),
    scope=("{S} only [play|plays] the {old} at church now",),
    mention=(
        "{S} practiced {v} for two hours tonight",
        "{P} {v} teacher says {S} [am|is] improving",
        "{S} bought new strings for {P} {v}",
    ),
    hard=("{P} {rel} plays the {v}", "{S} heard an amazing {v} solo at the concert"),
)

_SPORT = _Slot(
    name="sport",
    group="sport",
    labels=("sport", "plays", "team sport"),
    values=(
        "soccer",
        "basketball",
        "tennis",
        "volleyball",
        "baseball",
        "rugby",
        "hockey",
        "badminton",
        "pickleball",
        "golf",
        "cricket",
        "water polo",
        "table tennis",
        "ultimate frisbee",
        "softball",
        "squash",
        "lacrosse",
        "netball",
    ),
    state=(
        "{S} [play|plays] {v} every week",
        "{S} [am|is] on a {v} team",
        "{S} [play|plays] in a {v} league",
        "{S} [play|plays] {v}",
    ),
    replace=(
        "{S} switched from {old} to {v}",
        "{S} [play|plays] {v} now instead of {old}",
        "{S} dropped {old} and joined a {v} team",
    ),
    multi=True,
    add=(
        "{S} joined a {v} league",
        "{S} [have|has] been playing {v} since {month}",
        "{S} started playing {v} with coworkers",
        "{S} [am|is] also playing {v} now",
    ),
    update=(
        "{S} quit {P} {old} team",
        "{S} [don't|doesn't] play {old} anymore",
        "{S} hung up {P} {old} boots for good",
    ),
    scope=("{S} only [play|plays] {old} in the summer now",),
    mention=(
        "{P} {v} game got rained out",
        "{S} scored twice in {P} {v} match",
        "{v} practice ran late",
    ),
    hard=(
        "{S} watched the {v} final on TV",
        "{P} {rel} coaches {v}",
        "{S} [don't|doesn't] understand {v} rules",
    ),
)

_TEAM = _Slot(
    name="team",
    group="sport",
    labels=("favourite team", "supports"),
    values=(
        "the Red Sox",
        "the Lakers",
        "Arsenal",
        "Liverpool",
        "the Yankees",
        "the Packers",
        "Barcelona",
        "Real Madrid",
        "the Celtics",
        "the Cowboys",
        "the Maple Leafs",
        "Manchester United",
        "Juventus",
        "the Warriors",
        "the Cubs",
        "the Seahawks",
    ),
    state=("{S} [am|is] a huge {v} fan", "{S} [support|supports] {v}", "{S} [root|roots] for {v}"),
    replace=("{S} [root|roots] for {v} now", "{S} switched allegiance to {v}"),
    update=("{S} [have|has] given up on {old}", "{S} [am|is] done supporting {old}"),
    mention=("{S} watched {v} win last night", "{v} lost again and {S} [am|is] devastated"),
    hard=("{P} {rel} has season tickets for {v}", "{S} saw {v} fans celebrating downtown"),
)

_FOOD = _Slot(
    name="food_like",
    group="food",
    labels=("favourite food", "loves eating"),
    values=(
        "sushi",
        "pizza",
        "tacos",
        "ramen",
        "pad thai",
        "curry",
        "lasagna",
        "dumplings",
        "pho",
        "burgers",
        "falafel",
        "paella",
        "fried chicken",
        "pasta carbonara",
        "dim sum",
        "biryani",
        "pierogi",
        "tamales",
        "steak",
        "fish and chips",
        "kimchi stew",
        "mac and cheese",
        "bibimbap",
        "shakshuka",
        "poke bowls",
        "banh mi",
        "enchiladas",
        "chocolate cake",
        "spicy wings",
        "Greek salad",
        "empanadas",
        "jollof rice",
    ),
    state=(
        "{S} [love|loves] {v}",
        "{P} favourite food is {v}",
        "{S} could eat {v} every day",
        "{S} [am|is] obsessed with {v}",
        "nothing beats {v} for {O}",
    ),
    replace=(
        "{P} new favourite food is {v}, not {old}",
        "these days {S} [prefer|prefers] {v} over {old}",
        "{v} has replaced {old} as {P} favourite",
    ),
    multi=True,
    add=(
        "{S} [am|is] all about {v} these days",
        "{S} [have|has] been craving {v} nonstop lately",
        "{S} discovered {v} and [love|loves] it",
        "{S} [am|is] also a big fan of {v}",
    ),
    update=(
        "{S} [am|is] kind of over {old}",
        "{S} can't stand {old} anymore",
        "{S} [don't|doesn't] eat {old} anymore",
        "{S} got food poisoning from {old} and [am|is] done with it",
    ),
    scope=("{S} only [eat|eats] {old} on special occasions now",),
    mention=(
        "{S} had {v} for dinner again, no regrets",
        "{S} found an amazing {v} place near work",
        "{S} tried making {v} at home",
        "{S} ordered {v} to celebrate",
    ),
    hard=(
        "{P} {rel} hates {v}",
        "the restaurant ran out of {v}",
        "{S} saw a cooking show about {v}",
    ),
)

_FOOD_DISLIKE = _Slot(
    name="food_dislike",
    group="food",
    labels=("least favourite food", "dislikes", "won't eat"),
    values=(
        "mushrooms",
        "olives",
        "cilantro",
        "blue cheese",
        "anchovies",
        "liver",
        "tofu",
        "eggplant",
        "raisins",
        "spicy food",
        "seafood",
        "beets",
        "coconut",
        "pickles",
        "brussels sprouts",
    ),
    state=(
        "{S} [hate|hates] {v}",
        "{S} can't stand {v}",
        "{S} never [eat|eats] {v}",
        "{v} are the worst for {O}",
    ),
    replace=("these days it's {v} {S} can't stand, not {old}",),
    multi=True,
    add=("{S} also can't stand {v}", "{S} [have|has] started to dislike {v} too"),
    update=(
        "{S} actually [like|likes] {old} now",
        "{S} tried {old} again and loved it",
        "{S} [have|has] come around on {old}",
    ),
    mention=("{S} picked all the {v} off {P} plate again", "{S} asked for the salad without {v}"),
    hard=("{P} {rel} loves {v}", "the market had a sale on {v}"),
)

_DRINK = _Slot(
    name="drink",
    group="food",
    labels=("drink", "morning drink", "coffee order"),
    values=(
        "black coffee",
        "oat milk lattes",
        "green tea",
        "espresso",
        "chai",
        "decaf",
        "matcha",
        "cold brew",
        "herbal tea",
        "hot chocolate",
        "flat whites",
        "kombucha",
    ),
    state=(
        "{S} [drink|drinks] {v} every morning",
        "{S} can't start the day without {v}",
        "{P} go-to drink is {v}",
        "{S} [live|lives] on {v}",
    ),
    replace=("{S} switched to {v}", "{S} [drink|drinks] {v} now", "{S} [have|has] moved on to {v}"),
    update=(
        "{S} quit caffeine completely",
        "{S} [don't|doesn't] drink {old} anymore",
        "{S} gave up {old}",
    ),
    scope=("{S} only [have|has] {old} on weekends now",),
    mention=(
        "{S} [was|was] sipping {P} usual {v} while working",
        "the cafe messed up {P} {v} order again",
    ),
    hard=("{P} {rel} drinks {v}", "the new cafe downtown sells {v}"),
)

_DIET = _Slot(
    name="diet",
    group="health",
    labels=("diet", "eating habits"),
    values=(
        "vegetarian",
        "vegan",
        "pescatarian",
        "keto",
        "gluten-free",
        "dairy-free",
        "paleo",
        "low-carb",
        "plant-based",
        "sugar-free",
        "intermittent fasting",
        "halal",
        "kosher",
    ),
    state=(
        "{S} [am|is] {v}",
        "{S} [have|has] been {v} for {dur}",
        "{S} [follow|follows] a {v} diet",
        "{S} [eat|eats] {v}",
        "{S} [stick|sticks] to a {v} diet",
    ),
    replace=(
        "{S} went {v} {when}",
        "{S} [am|is] {v} now",
        "{S} switched from {old} to {v}",
        "{S} [have|has] been trying a {v} diet since {month}",
    ),
    update=(
        "{S} [am|is] not {old} anymore",
        "{S} started eating meat again",
        "{S} gave up on being {old}",
        "{S} quit the {old} diet",
        "{S} [am|is] back to eating everything",
    ),
    scope=(
        "{S} [am|is] only {old} during the week now",
        "{S} [am|is] {old} except when eating out",
    ),
    mention=(
        "{S} made a {v} lasagna for dinner",
        "{S} found a great {v} restaurant downtown",
        "{S} meal-prepped {v} lunches for the week",
    ),
    hard=("{P} {rel} is {v}", "the cafe has a new {v} menu", "{S} read an article about {v} diets"),
)

_HEALTH = _Slot(
    name="health",
    group="health",
    labels=("health", "condition", "medical"),
    values=(
        "a bad knee",
        "asthma",
        "migraines",
        "a peanut allergy",
        "a broken wrist",
        "back pain",
        "high blood pressure",
        "a sprained ankle",
        "insomnia",
        "type 2 diabetes",
        "lactose intolerance",
        "a shoulder injury",
        "hay fever",
        "anemia",
        "a torn ACL",
        "chronic fatigue",
        "a bad cough",
        "tennis elbow",
    ),
    state=(
        "{S} [have|has] {v}",
        "{S} [am|is] dealing with {v}",
        "{S} [struggle|struggles] with {v}",
        "{S} [have|has] had {v} for {dur}",
    ),
    replace=(
        "{S} [was|was] just diagnosed with {v}",
        "now {S} [have|has] {v} on top of everything",
    ),
    update=(
        "{S} [have|has] fully recovered from {old}",
        "{S} [don't|doesn't] have {old} anymore",
        "{P} doctor says {S} [am|is] finally over {old}",
        "the surgery fixed {P} {old}",
    ),
    scope=(
        "{old} only bothers {O} in the winter now",
        "{S} only [notice|notices] {old} after long runs now",
    ),
    mention=(
        "{S} had to skip the hike because of {v}",
        "{S} [was|was] up all night, {v} acting up again",
    ),
    hard=("{P} {rel} has {v}", "{S} read an article about {v}"),
)

_STUDIES = _Slot(
    name="studies",
    group="education",
    labels=("studies", "major", "degree", "field of study"),
    values=(
        "nursing",
        "computer science",
        "law",
        "architecture",
        "biology",
        "psychology",
        "graphic design",
        "accounting",
        "history",
        "mechanical engineering",
        "economics",
        "music theory",
        "marine biology",
        "social work",
        "film",
        "philosophy",
        "chemistry",
        "data science",
        "journalism",
        "fine art",
        "education",
        "medicine",
        "physics",
        "linguistics",
        "hospitality",
        "nutrition",
    ),
    state=(
        "{S} [am|is] studying {v}",
        "{S} [major|majors] in {v}",
        "{S} [am|is] doing a degree in {v}",
        "{S} [am|is] in {P} second year of {v}",
        "{S} [am|is] a {v} student",
    ),
    replace=(
        "{S} switched {P} major to {v}",
        "{S} [am|is] studying {v} now",
        "{S} transferred into the {v} program",
        "{S} dropped {old} and started {v}",
    ),
    update=(
        "{S} dropped out of {P} {old} program",
        "{S} graduated in {old} {when}",
        "{S} [am|is] taking a break from {P} {old} degree",
        "{S} finished {P} {old} degree",
    ),
    scope=(
        "{S} [am|is] only doing {old} part-time now",
        "{S} only [take|takes] {old} classes online now",
    ),
    mention=(
        "{S} pulled an all-nighter for {P} {v} exam",
        "{P} {v} professor assigned a huge project",
        "{S} [was|was] in the library all day working on {P} {v} thesis",
    ),
    hard=("{P} {rel} teaches {v}", "{S} watched a documentary about {v}", "{P} {rel} studied {v}"),
)

_SCHOOL = _Slot(
    name="school",
    group="education",
    labels=("school", "university", "college"),
    values=(
        "the community college",
        "State University",
        "an online program",
        "night school",
        "a coding bootcamp",
        "the local university",
        "Berkeley",
        "Oxford",
        "McGill",
        "the art institute",
        "a nursing school",
        "the technical college",
    ),
    state=(
        "{S} [go|goes] to {v}",
        "{S} [am|is] enrolled at {v}",
        "{S} [take|takes] classes at {v}",
    ),
    replace=(
        "{S} transferred to {v}",
        "{S} [am|is] at {v} now",
        "{S} got into {v} and started {when}",
    ),
    update=("{S} left {old}", "{S} dropped out of {old}", "{S} graduated from {old}"),
    mention=(
        "{S} [was|was] on campus at {v} until late",
        "the library at {v} is {P} favourite spot",
    ),
    hard=("{P} {rel} teaches at {v}", "{S} toured {v} with {P} {rel}"),
)

_CAR = _Slot(
    name="car",
    group="vehicle",
    labels=("car", "vehicle", "drives"),
    values=(
        "Honda Civic",
        "Toyota Corolla",
        "old Volvo",
        "Tesla Model 3",
        "Ford pickup",
        "Subaru Outback",
        "Mini Cooper",
        "VW Golf",
        "Jeep Wrangler",
        "minivan",
        "Prius",
        "motorbike",
        "scooter",
        "Mazda 3",
        "Kia Soul",
        "BMW",
        "vintage Mustang",
        "electric bike",
    ),
    state=(
        "{S} [drive|drives] {av}",
        "{P} car is {av}",
        "{S} [have|has] {av}",
        "{S} [get|gets] around in {av}",
        "{S} [have|has] had {P} {v} for {dur}",
    ),
    replace=(
        "{S} traded in {P} {old} for {av}",
        "{S} bought {av}",
        "{S} [drive|drives] {av} now",
        "{P} new ride is {av}",
        "{S} finally replaced {P} {old} with {av}",
    ),
    update=(
        "{S} sold {P} {old}",
        "{S} [don't|doesn't] have a car anymore",
        "{P} {old} got totalled",
        "{S} got rid of {P} {old}",
        "{P} {old} was stolen {when}",
    ),
    scope=("{S} only [drive|drives] the {old} on weekends now",),
    mention=(
        "{S} took {P} {v} in for an oil change",
        "{P} {v} barely started this morning in the cold",
        "{S} drove {P} {v} up the coast",
        "{S} washed {P} {v} for the first time in months",
    ),
    hard=(
        "{P} {rel} drives {av}",
        "{S} saw {av} parked outside the bakery",
        "{S} rented {av} on holiday",
    ),
)

_COMMUTE_MODE = _Slot(
    name="commute_mode",
    group="commute",
    labels=("commute", "gets to work"),
    values=(
        "by bus",
        "by bike",
        "by car",
        "on foot",
        "by train",
        "by subway",
        "by ferry",
        "by scooter",
        "by carpool",
    ),
    state=(
        "{S} [get|gets] to work {v}",
        "{S} [commute|commutes] {v}",
        "{S} usually [go|goes] to work {v}",
    ),
    replace=(
        "{S} [commute|commutes] {v} now",
        "these days {S} [go|goes] to work {v}",
        "{S} switched to going in {v}",
    ),
    update=("{S} stopped commuting since {S} [work|works] from home now",),
    scope=("{S} only [commute|commutes] {old} when it's not raining",),
    mention=("{S} got soaked commuting {v} this morning",),
    hard=("{P} {rel} gets to school {v}", "{S} went to the beach {v}"),
)

_COMMUTE = _Slot(
    name="commute_time",
    group="commute",
    labels=("commute time", "commute", "time to work"),
    values=_Num(5, 95, 5, ("{n} minutes",), 10, words_ok=False),
    state=(
        "{P} commute is {v}",
        "it takes {O} {v} to get to work",
        "{S} [spend|spends] {v} getting to the office",
        "the drive to work is {v}",
        "{P} ride to work takes {v}",
    ),
    replace=(
        "{P} commute is {v} now",
        "now it takes {O} {v} to get to work",
        "since the move the trip to work is {v}",
        "the new bus route cut {P} commute to {v}",
        "{P} commute went up to {v}",
        "with the roadworks it takes {v} now",
    ),
    update=("{S} [don't|doesn't] have a commute anymore",),
    scope=(
        "{P} commute is only {old} when there's no traffic",
        "it's {old} on a good day but that's rare now",
    ),
    mention=(
        "{S} listened to a podcast during {P} {v} commute",
        "{S} used {P} {v} train ride to finish a book",
    ),
    hard=(
        "{P} gym is {v} away",
        "{S} waited {v} for a table at brunch",
        "the movie started {v} late",
        "the pasta needs {v} in the oven",
    ),
)

_RENT = _Slot(
    name="rent",
    group="money",
    labels=("rent", "monthly rent", "housing cost"),
    values=_Num(600, 4000, 50, ("${n} a month", "{n} dollars a month", "{n} a month"), 150),
    state=(
        "{P} rent is {v}",
        "{S} [pay|pays] {v} for {P} apartment",
        "{P} place costs {v}",
        "rent is {v} for {O}",
    ),
    replace=(
        "{P} landlord raised the rent to {v}",
        "{P} rent went up to {v}",
        "{S} [pay|pays] {v} now",
        "the new lease is {v}",
        "{P} rent dropped to {v} after the renegotiation",
    ),
    update=("{S} [don't|doesn't] pay rent anymore since moving in with {P} parents",),
    scope=("{S} only [pay|pays] {old} because {P} roommate covers the rest now",),
    mention=("another {v} rent payment gone", "paying {v} for this tiny place still hurts"),
    hard=("{P} car payment is {v}", "{P} {rel} pays {v} for daycare", "the gym membership is {v}"),
)

_SALARY = _Slot(
    name="salary",
    group="money",
    labels=("salary", "income", "pay"),
    values=_Num(25, 250, 5, ("${n}k a year", "{n} thousand a year"), 10),
    state=("{S} [make|makes] {v}", "{P} salary is {v}", "{S} [earn|earns] about {v}"),
    replace=(
        "{S} got a raise to {v}",
        "{P} new job pays {v}",
        "{S} [make|makes] {v} now",
        "{P} salary went up to {v}",
        "{S} took a pay cut and [make|makes] {v} now",
    ),
    update=("{S} [have|has] no income right now",),
    mention=("{S} [am|is] budgeting carefully on {v}",),
    hard=("{P} {rel} makes {v}", "the job ad said {v}"),
)

_WEIGHT = _Slot(
    name="weight",
    group="body",
    labels=("weight",),
    values=_Num(110, 260, 5, ("{n} pounds", "{n} lbs"), 10),
    state=("{S} [weigh|weighs] {v}", "{S} [am|is] at {v}", "{P} weight is {v}"),
    replace=(
        "{S} [am|is] down to {v}",
        "{S} lost some weight and [am|is] {v} now",
        "{S} put on a few pounds, {S} [am|is] {v} now",
        "the scale said {v} this morning",
    ),
    mention=("{S} [have|has] been at {v} for a while and [feel|feels] good",),
    hard=("{P} suitcase weighed {v}", "{P} dog weighs {v}", "{P} {rel} lost weight and is {v}"),
)

_RUNNING = _Slot(
    name="running",
    group="body",
    labels=("running", "weekly mileage", "run distance"),
    values=_Num(2, 60, 2, ("{n} km", "{n} miles"), 4, words_ok=True),
    state=(
        "{S} [run|runs] {v} a week",
        "{P} usual run is {v}",
        "{S} [do|does] {v} every Sunday",
        "{S} [jog|jogs] about {v} most days",
    ),
    replace=(
        "{S} [am|is] up to {v} a week now",
        "{S} cut back to {v} a week",
        "{P} long run is {v} now",
        "{S} [have|has] been doing {v} since the marathon training started",
    ),
    update=("{S} stopped running after {P} knee injury", "{S} [don't|doesn't] run anymore"),
    scope=("{S} only [run|runs] {old} on weekends now",),
    mention=(
        "{S} did {P} usual {v} loop this morning",
        "{P} {v} run by the river was lovely today",
    ),
    hard=(
        "{P} drive to the lake is {v}",
        "the hike was {v} round trip",
        "{P} {rel} runs {v} a week",
    ),
)

_LANGUAGE = _Slot(
    name="language",
    group="language",
    labels=("language", "learning", "languages"),
    values=(
        "Spanish",
        "French",
        "Japanese",
        "German",
        "Italian",
        "Mandarin",
        "Korean",
        "Portuguese",
        "Arabic",
        "Russian",
        "Hindi",
        "Dutch",
        "Greek",
        "Swedish",
        "Turkish",
        "Vietnamese",
        "Polish",
        "Hebrew",
        "sign language",
        "Swahili",
        "Tagalog",
    ),
    state=(
        "{S} [am|is] learning {v}",
        "{S} [speak|speaks] {v}",
        "{S} [take|takes] {v} classes",
        "{S} [practice|practices] {v} every day",
    ),
    replace=("{S} switched from {old} to {v}", "{S} dropped {old} to focus on {v}"),
    multi=True,
    add=(
        "{S} started learning {v}",
        "{S} [am|is] taking {v} lessons now",
        "{P} new language project is {v}",
        "{S} [am|is] picking up some {v} too",
    ),
    update=(
        "{S} gave up on {old}",
        "{S} stopped {P} {old} classes",
        "{S} [have|has] forgotten most of {P} {old}",
    ),
    scope=("{S} only [practice|practices] {old} when {S} [travel|travels] now",),
    mention=(
        "{S} ordered dinner in {v} and the waiter understood",
        "{P} {v} tutor says {S} [am|is] improving",
        "{S} watched a movie in {v} without subtitles",
    ),
    hard=("{P} {rel} speaks {v}", "{S} heard people speaking {v} on the train"),
)

_TRAVEL = _Slot(
    name="travel",
    group="travel",
    labels=("trip", "travel plans", "vacation", "next holiday"),
    values=(
        "Japan",
        "Italy",
        "Iceland",
        "Mexico",
        "Portugal",
        "Thailand",
        "Peru",
        "Greece",
        "Morocco",
        "Costa Rica",
        "New Zealand",
        "Vietnam",
        "Croatia",
        "Scotland",
        "Kenya",
        "the Grand Canyon",
        "Yellowstone",
        "Bali",
        "Norway",
        "Egypt",
        "Turkey",
        "Colombia",
        "Argentina",
        "Ireland",
        "Hawaii",
        "the Alps",
        "Patagonia",
    ),
    state=(
        "{S} [am|is] going to {v} in {month}",
        "{S} [have|has] a trip to {v} planned for {month}",
        "{S} booked flights to {v} for {month}",
        "{P} next vacation is in {v}",
    ),
    replace=(
        "{S} changed {P} trip to {v} instead",
        "{S} [am|is] going to {v} instead of {old}",
        "{S} switched {P} vacation plans to {v}",
        "the trip is now to {v}, not {old}",
    ),
    update=(
        "{S} cancelled {P} trip to {old}",
        "the {old} trip is off",
        "{S} postponed {P} {old} trip indefinitely",
        "{S} [am|is] not going to {old} after all",
    ),
    scope=(
        "the {old} trip got pushed back to {month2}",
        "{S} [am|is] only going to {old} for a long weekend now",
    ),
    mention=(
        "{S} [am|is] counting the days until {v}",
        "{S} bought a guidebook for {v}",
        "{S} [have|has] been practicing phrases for the {v} trip",
        "{S} packed for {v} already",
    ),
    hard=(
        "{P} {rel} just got back from {v}",
        "{S} watched a travel show about {v}",
        "{P} coworker grew up in {v}",
    ),
)

_PHONE = _Slot(
    name="phone",
    group="tech",
    labels=("phone", "device"),
    values=(
        "iPhone",
        "Android phone",
        "Pixel",
        "Samsung Galaxy",
        "flip phone",
        "Mac",
        "Windows laptop",
        "Chromebook",
        "iPad",
    ),
    state=("{S} [use|uses] {av}", "{S} [have|has] {av}", "{S} [am|is] an {v} person"),
    replace=("{S} switched to {av}", "{S} got {av}", "{S} [use|uses] {av} now"),
    update=("{S} ditched {P} {old}", "{S} [don't|doesn't] use {av} anymore"),
    mention=(
        "{P} {v} died in the middle of the call",
        "{S} dropped {P} {v} and cracked the screen",
    ),
    hard=("{P} {rel} has {av}", "{S} saw an ad for the new {v}"),
)

_VOLUNTEER = _Slot(
    name="volunteer",
    group="community",
    labels=("volunteering", "volunteers at"),
    values=(
        "the animal shelter",
        "a food bank",
        "the local library",
        "a soup kitchen",
        "the hospital",
        "a youth soccer club",
        "a community garden",
        "a crisis hotline",
        "a homeless shelter",
        "an after-school program",
        "the fire department",
    ),
    state=("{S} [volunteer|volunteers] at {v}", "{S} [help|helps] out at {v} every Saturday"),
    replace=(
        "{S} [volunteer|volunteers] at {v} now instead of {old}",
        "{S} moved from {old} to volunteering at {v}",
    ),
    multi=True,
    add=("{S} started volunteering at {v}", "{S} also [help|helps] out at {v} now"),
    update=("{S} stopped volunteering at {old}", "{S} [don't|doesn't] help at {old} anymore"),
    scope=("{S} only [volunteer|volunteers] at {old} once a month now",),
    mention=("{S} spent Saturday morning at {v} again", "{S} [had|had] a rewarding shift at {v}"),
    hard=("{P} {rel} runs {v}", "{S} donated old clothes to {v}"),
)

_CLUB = _Slot(
    name="club",
    group="community",
    labels=("club", "group", "member of"),
    values=(
        "a book club",
        "a running club",
        "a choir",
        "a hiking group",
        "a chess club",
        "a board game night",
        "a community theatre group",
        "a cycling club",
        "a knitting circle",
        "a wine club",
        "a writing group",
    ),
    state=("{S} [am|is] in {v}", "{S} [go|goes] to {v} every week", "{S} [am|is] a member of {v}"),
    replace=("{S} swapped {old} for {v}", "{S} left {old} and joined {v} instead"),
    multi=True,
    add=("{S} joined {v}", "{S} [am|is] in {v} now", "{S} also signed up for {v}"),
    update=(
        "{S} quit {old}",
        "{S} dropped out of {old}",
        "{S} [don't|doesn't] go to {old} anymore",
    ),
    scope=("{S} only [make|makes] it to {old} once a month now",),
    mention=("{S} [was|was] at {v} last night", "{S} hosted {v} at {P} place"),
    hard=("{P} {rel} started {v}", "{S} saw a flyer for {v}"),
)

_MEDIA = _Slot(
    name="media",
    group="media",
    labels=("favourite show", "watching", "favourite movies"),
    values=(
        "horror movies",
        "rom-coms",
        "documentaries",
        "anime",
        "Star Wars",
        "Marvel movies",
        "The Office",
        "Friends",
        "Breaking Bad",
        "reality TV",
        "true crime shows",
        "old westerns",
        "Studio Ghibli films",
        "Game of Thrones",
        "cooking shows",
        "K-dramas",
        "Grey's Anatomy",
        "The Crown",
        "nature documentaries",
        "sitcoms",
        "Stranger Things",
        "Ted Lasso",
        "The Sopranos",
        "Bollywood films",
    ),
    state=(
        "{S} [love|loves] {v}",
        "{S} [am|is] obsessed with {v}",
        "{S} [watch|watches] {v} every weekend",
        "{P} favourite thing to watch is {v}",
        "{S} [am|is] a huge fan of {v}",
    ),
    replace=("{S} moved on from {old} to {v}", "{S} dropped {old} and [watch|watches] {v} now"),
    multi=True,
    add=("{S} [am|is] into {v} now", "{P} new obsession is {v}", "{S} just started watching {v}"),
    update=(
        "{S} [am|is] over {old}",
        "{S} stopped watching {old}",
        "{S} can't stand {old} anymore",
    ),
    scope=("{S} only [watch|watches] {old} with {P} {rel} now",),
    mention=(
        "{S} watched {v} all night",
        "{S} [was|was] up late watching {v} again",
        "{S} rewatched {v} with a friend",
    ),
    hard=("{P} {rel} won't stop talking about {v}", "{S} saw an ad for {v} on the bus"),
)

_MUSIC = _Slot(
    name="music",
    group="music",
    labels=("music taste", "favourite music", "listens to"),
    values=(
        "jazz",
        "hip hop",
        "country music",
        "classical music",
        "K-pop",
        "heavy metal",
        "indie rock",
        "reggae",
        "techno",
        "folk music",
        "Taylor Swift",
        "Beyonce",
        "the Beatles",
        "Radiohead",
        "Kendrick Lamar",
        "punk rock",
        "opera",
        "R&B",
        "bluegrass",
        "salsa music",
        "lo-fi beats",
        "Bad Bunny",
        "Adele",
        "Fleetwood Mac",
        "gospel",
        "the blues",
    ),
    state=(
        "{S} [love|loves] {v}",
        "{S} [listen|listens] to {v} all the time",
        "{P} favourite music is {v}",
        "{S} [am|is] a big {v} fan",
        "{S} [have|has] always been into {v}",
    ),
    replace=(
        "{S} [have|has] moved on from {old} to {v}",
        "these days it's all {v} in {P} headphones, no more {old}",
        "{S} traded {old} for {v}",
    ),
    multi=True,
    add=(
        "{S} [have|has] been really into {v} lately",
        "{S} discovered {v} and [love|loves] it",
        "{S} [am|is] also getting into {v}",
        "{S} added a lot of {v} to {P} playlists",
    ),
    update=(
        "{S} [am|is] totally over {old}",
        "{S} [don't|doesn't] listen to {old} anymore",
        "{S} can't stand {old} these days",
    ),
    scope=("{S} only [listen|listens] to {old} when driving now",),
    mention=(
        "{S} had {v} on repeat the whole drive",
        "{S} went to a {v} show last night",
        "{S} made a new {v} playlist",
    ),
    hard=(
        "{P} {rel} plays {v} way too loud",
        "the cafe was playing {v}",
        "{S} [don't|doesn't] get {v} at all",
    ),
)

_BOOKS = _Slot(
    name="books",
    group="books",
    labels=("reading", "favourite books", "books"),
    values=(
        "mystery novels",
        "fantasy",
        "sci-fi",
        "romance novels",
        "historical fiction",
        "thrillers",
        "poetry",
        "biographies",
        "graphic novels",
        "self-help books",
        "Stephen King",
        "Jane Austen",
        "Agatha Christie",
        "Tolkien",
        "Haruki Murakami",
        "true crime",
        "manga",
        "Toni Morrison",
        "horror novels",
        "cozy mysteries",
    ),
    state=(
        "{S} [love|loves] reading {v}",
        "{S} mostly [read|reads] {v}",
        "{S} [am|is] a huge {v} fan",
        "{S} [devour|devours] {v}",
        "{S} [read|reads] {v} every night before bed",
    ),
    replace=(
        "{S} [have|has] switched from {old} to reading {v}",
        "{S} moved on from {old} to {v}",
        "lately {S} [read|reads] only {v}, no more {old}",
    ),
    multi=True,
    add=(
        "{S} [am|is] into {v} now too",
        "{S} started reading {v} as well",
        "{S} picked up {P} first {v} book and loved it",
    ),
    update=(
        "{S} [have|has] stopped reading {old}",
        "{S} [don't|doesn't] really read anymore",
        "{S} [am|is] bored of {old}",
    ),
    scope=("{S} only [read|reads] {old} on holiday now",),
    mention=(
        "{S} stayed up way too late reading {v} again",
        "{S} picked up some {v} at the used bookstore",
        "{S} [am|is] halfway through another {v} book",
    ),
    hard=("{P} {rel} writes {v}", "there's a {v} section at the library near work"),
)

_JOB_PLACES: dict[str, str] = {
    "nurse": "the hospital",
    "teacher": "school",
    "software engineer": "the office",
    "baker": "the bakery",
    "accountant": "the firm",
    "graphic designer": "the studio",
    "electrician": "the job site",
    "lawyer": "the firm",
    "chef": "the restaurant",
    "barista": "the cafe",
    "paramedic": "the station",
    "firefighter": "the fire station",
    "dentist": "the clinic",
    "pharmacist": "the pharmacy",
    "architect": "the studio",
    "journalist": "the newsroom",
    "photographer": "the studio",
    "plumber": "the job site",
    "mechanic": "the garage",
    "social worker": "the agency",
    "data analyst": "the office",
    "project manager": "the office",
    "real estate agent": "the agency",
    "veterinarian": "the vet clinic",
    "physical therapist": "the clinic",
    "librarian": "the library",
    "marketing manager": "the agency",
    "sales rep": "the showroom",
    "web developer": "the office",
    "carpenter": "the workshop",
    "police officer": "the station",
    "flight attendant": "the airport",
    "pilot": "the airport",
    "truck driver": "the depot",
    "hairdresser": "the salon",
    "personal trainer": "the gym",
    "counselor": "the clinic",
    "translator": "the agency",
    "financial advisor": "the bank",
    "UX designer": "the studio",
    "research scientist": "the lab",
    "lab technician": "the lab",
    "construction worker": "the site",
    "farmer": "the farm",
    "florist": "the flower shop",
    "tattoo artist": "the shop",
    "video editor": "the studio",
    "school principal": "school",
    "dental hygienist": "the dental office",
    "HR manager": "the office",
    "event planner": "the venue",
    "bartender": "the bar",
    "waiter": "the restaurant",
    "cashier": "the store",
    "receptionist": "the front desk",
    "nanny": "the family's house",
    "music teacher": "the music school",
    "professor": "the university",
    "yoga instructor": "the studio",
    "radio host": "the station",
    "park ranger": "the park",
    "copywriter": "the agency",
    "optometrist": "the clinic",
}
"""Where each job in the ``job`` slot happens (for narrative mentions)."""

# Slots that describe one state from two sides: never used as each other's negatives.
_LINKED: tuple[frozenset[str], ...] = (
    frozenset({"job", "employer", "work_hours", "salary"}),
    frozenset({"residence", "neighbourhood", "housing", "household", "rent"}),
    frozenset({"food_like", "food_dislike", "diet"}),
    frozenset({"studies", "school"}),
    frozenset({"commute_mode", "commute_time", "car"}),
    frozenset({"kids", "kid_age"}),
    frozenset({"relationship", "household"}),
    frozenset({"running", "gym", "health", "weight"}),
    frozenset({"sport", "team"}),
)


def slots_linked(a: str, b: str) -> bool:
    """True when two slot names describe one state (same slot, or linked like job/employer)."""
    return a == b or any(a in group and b in group for group in _LINKED)


_SLOTS: tuple[_Slot, ...] = (
    _RESIDENCE,
    _NEIGHBOURHOOD,
    _HOUSING,
    _JOB,
    _EMPLOYER,
    _WORK_HOURS,
    _WAKE,
    _GYM,
    _RELATIONSHIP,
    _HOUSEHOLD,
    _KIDS,
    _KID_AGE,
    _SIBLINGS,
    _PETS,
    _HOBBY,
    _INSTRUMENT,
    _SPORT,
    _TEAM,
    _FOOD,
    _FOOD_DISLIKE,
    _DRINK,
    _DIET,
    _HEALTH,
    _STUDIES,
    _SCHOOL,
    _CAR,
    _COMMUTE_MODE,
    _COMMUTE,
    _RENT,
    _SALARY,
    _WEIGHT,
    _RUNNING,
    _LANGUAGE,
    _TRAVEL,
    _PHONE,
    _VOLUNTEER,
    _CLUB,
    _MEDIA,
    _MUSIC,
    _BOOKS,
)
# Slots weighted towards the common, mutable ones (residence, job, partner...).
_SLOT_WEIGHTS: tuple[float, ...] = tuple(
    2.0
    if s.name
    in {
        "residence",
        "job",
        "employer",
        "relationship",
        "pets",
        "hobby",
        "commute_time",
        "diet",
        "studies",
        "travel",
    }
    else 1.0
    for s in _SLOTS
)

# ================================================================ small talk pool

_SMALLTALK: tuple[str, ...] = (
    "That sounds like so much fun!",
    "How was your weekend?",
    "I totally get what you mean.",
    "Thanks for asking, it's been a good week.",
    "Haha, that's hilarious.",
    "Wow, congrats!",
    "Take care and talk soon!",
    "The sunset last night was unreal.",
    "Did you catch the game?",
    "I hope you feel better soon.",
    "What are you up to this weekend?",
    "That's such a good idea.",
    "I can't believe how fast this year is going.",
    "Let me know how it goes!",
    "It was great catching up with you.",
    "Oh no, that sounds stressful.",
    "You deserve a break.",
    "I'm so proud of you!",
    "Send me a picture!",
    "That's a really good point.",
    "Honestly same.",
    "Good luck tomorrow!",
    "The weather has been so weird lately.",
    "I had the best cup of coffee this morning.",
    "Anyway, enough about me, how are you?",
    "That made my day.",
    "I know, right?",
    "It's been a long week.",
    "Happy birthday!",
    "What did you think of the ending?",
    "We should hang out soon.",
    "I'm running a bit late.",
    "That's wild.",
    "I'll think about it and get back to you.",
    "Have you tried the new place on Main Street?",
    "Thanks, that means a lot.",
    "I'm so sorry to hear that.",
    "How's your family doing?",
    "It rained the entire day.",
    "I need a vacation.",
    "I watched a funny video earlier.",
    "Time flies!",
    "Same here, I'm exhausted.",
    "Yeah, it was a crazy day.",
    "Can't wait to see you!",
    "That's amazing news.",
    "Did you sleep well?",
    "What's your plan for the holidays?",
    "I'm just chilling at home tonight.",
    "The traffic was awful this morning.",
    "I love that for you.",
    "You always know what to say.",
    "Keep me posted!",
    "That's exactly what I needed to hear.",
    "I laughed so hard at that.",
    "Sounds like you had a blast.",
    "Let's grab lunch next week.",
    "Hope the meeting went well.",
    "Oh wow, I didn't know that.",
    "Tell me everything!",
    "Fingers crossed for you.",
    "That's a tough one.",
    "I'm here if you need to talk.",
    "The fireworks were beautiful.",
    "My phone almost died today.",
    "The new episode comes out Friday.",
    "I'm so hungry right now.",
    "It's freezing outside.",
    "Spring is finally here.",
    "What a beautiful day.",
    "I should probably go to bed.",
    "I'm really looking forward to it.",
    "Who else is coming?",
    "That's so thoughtful of you.",
    "I made pancakes this morning.",
    "It was a nice surprise.",
    "I'm not sure yet.",
    "Maybe next time!",
    "How did the interview go?",
    "We had a picnic in the park.",
    "The kids had a great time at the fair.",
    "I finally cleaned my room.",
    "That's the spirit!",
    "Thanks for the recommendation.",
    "I'll definitely check it out.",
    "It's nice to slow down sometimes.",
    "We stayed up talking until midnight.",
    "I'm grateful for friends like you.",
    "That picture is gorgeous.",
    "What a small world!",
    "I totally forgot about that.",
    "Let's do it again soon.",
    "Good morning! Hope you slept well.",
    "Ugh, Mondays.",
    "Sounds good to me.",
    "Drive safe!",
    "I'm so excited for you.",
    "That's a great question.",
)
_SMALLTALK_OPEN = ("", "", "", "Haha ", "Oh ", "Aw, ", "Yeah, ", "Honestly, ", "Wow, ", "Hey! ")
_ST_THING = (
    "the trip",
    "the interview",
    "the game",
    "the party",
    "your presentation",
    "the concert",
    "the wedding",
    "the hike",
    "the show",
    "your weekend",
    "the exam",
    "the recital",
    "the dinner",
    "the meeting",
    "your first day",
    "the festival",
    "the visit",
    "the race",
)
_ST_ADJ = (
    "amazing",
    "hilarious",
    "so sweet",
    "wild",
    "impressive",
    "adorable",
    "a bit scary",
    "exciting",
    "rough",
    "lovely",
    "inspiring",
    "so cool",
    "a lot",
    "beautiful",
    "unreal",
)
_ST_TEMPLATES = (
    "How was {thing}?",
    "Did you enjoy {thing}?",
    "What did you think of {thing}?",
    "How did {thing} go?",
    "Any plans for the weekend?",
    "What's next for you?",
    "That's {adj}!",
    "Wow, that sounds {adj}.",
    "Aw, that's {adj}.",
    "No way, that's {adj}!",
    "Good luck with {thing}!",
    "I'm sure {thing} will go great.",
    "Hope {thing} goes well!",
    "Thanks, I really appreciate it.",
    "Haha yeah, it was {adj}.",
    "Totally agree, it was {adj}.",
    "What inspired you to do that?",
    "How long did it take you?",
    "Who did you go with?",
    "That must have been {adj}.",
    "I bet {thing} was {adj}.",
    "Tell me more about {thing}!",
    "Can't wait to hear about {thing}.",
    "You must be so proud.",
    "Was it hard?",
    "Where was that picture taken?",
    "What's your favorite part?",
    "That's really {adj} of you.",
    "I'm glad you had fun.",
    "Sorry you had to deal with that.",
    "Let me know if you need anything.",
    "Keep me updated on {thing}!",
    "How are you feeling about {thing}?",
    "Did anything fun happen?",
)

# ============================================================ episodic chit-chat
# One-off events and feelings: topical like the slots, but they state no lasting
# fact, so two of them on the same topic are not a state pair (label (0, 0)).
# Each topic lists the slot groups it overlaps with (never paired with those).

_EP_FILL: dict[str, tuple[str, ...]] = {
    "dish": (
        "lasagna",
        "banana bread",
        "chili",
        "dumplings",
        "a curry",
        "pancakes",
        "risotto",
        "tacos",
        "a lemon tart",
        "soup",
        "stir-fry",
        "homemade pizza",
        "cinnamon rolls",
        "paella",
    ),
    "cuisine": (
        "Thai",
        "Ethiopian",
        "Korean",
        "Mexican",
        "Italian",
        "Lebanese",
        "Peruvian",
        "Greek",
    ),
    "venue": (
        "museum",
        "aquarium",
        "zoo",
        "beach",
        "lake",
        "farmers market",
        "botanical garden",
        "planetarium",
        "county fair",
        "flea market",
        "science center",
        "pumpkin patch",
    ),
    "event": (
        "concert",
        "street festival",
        "play",
        "comedy show",
        "art fair",
        "fireworks show",
        "parade",
        "food truck festival",
        "open mic night",
        "film screening",
        "trivia night",
    ),
    "genre": ("horror", "action", "animated", "romantic", "sci-fi", "mystery", "comedy", "war"),
    "item": (
        "rug",
        "lamp",
        "pair of boots",
        "coffee maker",
        "backpack",
        "winter coat",
        "blender",
        "bookshelf",
        "desk chair",
        "set of plates",
        "raincoat",
        "air fryer",
    ),
    "plant": (
        "tomatoes",
        "tulips",
        "sunflowers",
        "herbs",
        "roses",
        "peppers",
        "strawberries",
        "lavender",
    ),
    "kidrel": ("daughter", "son", "kids", "niece", "nephew", "little brother", "godson"),
    "topic": (
        "octopuses",
        "the ocean",
        "ancient Rome",
        "space travel",
        "bees",
        "volcanoes",
        "chess history",
        "a famous chef",
        "mountain climbers",
        "the moon landing",
    ),
    "friend": _PARTNERS,
    "feeling": (
        "so relaxed",
        "a bit overwhelmed",
        "really grateful",
        "exhausted",
        "weirdly nostalgic",
        "super motivated",
        "kind of restless",
        "proud",
    ),
}

_EPISODES: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "cooking": (
        (
            "{S} tried a new recipe for {dish} and it turned out great",
            "{S} burned the {dish} again",
            "{S} made {dish} for {P} {rel} last night",
            "the {dish} {S} cooked yesterday was a disaster",
            "{S} baked cookies with the kids this afternoon",
            "dinner tonight was leftover {dish}",
            "{S} found a recipe for {dish} online and [want|wants] to try it",
            "{S} spent the whole evening in the kitchen making {dish}",
        ),
        frozenset({"food", "health"}),
    ),
    "eating_out": (
        (
            "{S} went to a new {cuisine} restaurant downtown",
            "brunch with {friend} was so good",
            "{S} waited an hour for a table but it was worth it",
            "{S} grabbed {cuisine} food with coworkers",
            "the dessert at that {cuisine} place was unreal",
            "{S} tried {cuisine} food for the first time",
        ),
        frozenset({"food"}),
    ),
    "weather": (
        (
            "it's been raining all week",
            "the sunset last night was unreal",
            "the first snow came early this year",
            "it's way too hot to do anything today",
            "a thunderstorm knocked out the power for hours",
            "the weather finally feels like spring",
            "the wind was so strong it knocked over the bins",
            "there was a gorgeous rainbow after the storm",
        ),
        frozenset(),
    ),
    "home_chores": (
        (
            "{S} spent Sunday cleaning out the garage",
            "{S} repainted the fence",
            "{S} finally fixed the leaky faucet",
            "{S} rearranged the living room furniture",
            "{S} planted {plant} in the backyard",
            "the {plant} are finally coming up",
            "{S} did five loads of laundry today",
            "{S} organised the closet and found old letters",
        ),
        frozenset({"home", "leisure"}),
    ),
    "outing": (
        (
            "{S} went to the {venue} with {friend}",
            "the {event} downtown was packed",
            "{S} saw a great {event} on {day}",
            "{S} spent the afternoon at the {venue}",
            "we took the kids to the {venue} and they loved it",
            "{S} got tickets to a {event} for {day}",
            "the {venue} was way more fun than {S} expected",
        ),
        frozenset({"leisure", "music", "media"}),
    ),
    "screen": (
        (
            "{S} watched a {genre} movie last night",
            "the finale of that show was wild",
            "{S} binge-watched a whole season this weekend",
            "{S} cried at the end of the movie",
            "{S} saw the new {genre} film at the cinema",
            "{S} fell asleep halfway through the movie",
        ),
        frozenset({"media"}),
    ),
    "reading": (
        (
            "{S} just finished a book about {topic}",
            "{S} couldn't put down the book {S} started on {day}",
            "{S} borrowed a stack of books from the library",
            "{S} listened to a podcast about {topic}",
            "{S} read an article about {topic} that blew {P} mind",
        ),
        frozenset({"books", "media"}),
    ),
    "music_event": (
        (
            "the band at the bar last night was great",
            "{S} heard a street musician playing on the corner",
            "{S} sang karaoke for the first time",
            "the song at the wedding made everyone cry",
            "{S} had that song stuck in {P} head all day",
        ),
        frozenset({"music", "leisure"}),
    ),
    "sport_event": (
        (
            "{S} watched the game with friends",
            "the home team lost in overtime",
            "{S} went bowling with coworkers",
            "{S} tried paddleboarding for the first time",
            "the match last night was so tense",
            "{S} played frisbee at the park with {friend}",
        ),
        frozenset({"sport", "leisure", "body"}),
    ),
    "family_event": (
        (
            "{P} {kidrel} had a school play today",
            "{P} {kidrel} learned to ride a bike",
            "{S} helped {P} {kidrel} with homework",
            "{P} parents came over for dinner",
            "{P} {rel} called to catch up",
            "{S} took {P} {kidrel} to the playground",
            "{P} {kidrel} made {O} a card",
            "{P} {kidrel} lost a tooth today",
        ),
        frozenset({"family", "relationship"}),
    ),
    "animals": (
        (
            "a squirrel got into the attic",
            "the neighbour's dog barked all night",
            "{S} saw the cutest puppy at the park",
            "a stray cat showed up on the porch",
            "there were ducklings by the pond",
            "{S} watched a video of a goat yelling",
        ),
        frozenset({"pets"}),
    ),
    "work_event": (
        (
            "{S} had a long meeting that could have been an email",
            "{S} gave a presentation today and it went well",
            "the office had a potluck",
            "{P} laptop crashed during a call",
            "{S} finished a big project at work",
            "{S} [have|has] a deadline on {day}",
            "{P} boss brought donuts this morning",
        ),
        frozenset({"work", "schedule", "tech"}),
    ),
    "errands": (
        (
            "{S} bought a new {item}",
            "{S} found a great deal on a {item}",
            "{S} returned the {item} {S} ordered",
            "the grocery store was out of eggs",
            "{S} spent the morning running errands",
            "{S} finally picked up the package from the post office",
        ),
        frozenset(),
    ),
    "feelings": (
        (
            "{S} [am|is] feeling {feeling} this week",
            "{S} slept in and it was glorious",
            "{S} [have|has] been so tired lately",
            "{S} took a day off just to recharge",
            "today was one of those good days",
            "{S} [am|is] {feeling} after such a long week",
        ),
        frozenset({"health"}),
    ),
    "memories": (
        (
            "{S} found old photos from a trip years ago",
            "{S} [remember|remembers] {P} first concert so clearly",
            "{S} [was|was] looking at flights just for fun",
            "{S} [am|is] daydreaming about beaches",
            "{S} found {P} old diary from high school",
        ),
        frozenset({"travel", "home"}),
    ),
    "social": (
        (
            "{S} had a game night with friends",
            "{S} hosted a small dinner party",
            "{S} went to {friend}'s birthday party",
            "{S} caught up with an old friend over coffee",
            "we stayed up talking until two in the morning",
            "{friend} surprised everyone with a cake",
        ),
        frozenset({"community"}),
    ),
    "appointments": (
        (
            "{S} had a dentist appointment this morning",
            "{S} got {P} flu shot",
            "{S} [have|has] a bit of a cold",
            "{S} got a haircut and [love|loves] it",
            "{S} finally went for {P} annual checkup",
        ),
        frozenset({"health"}),
    ),
    "commute_event": (
        (
            "traffic was awful this morning",
            "the train was delayed again",
            "{S} missed the bus by seconds",
            "the roads were icy on the way in",
        ),
        frozenset({"commute", "vehicle"}),
    ),
    "celebration": (
        (
            "{S} decorated the house for the holidays",
            "{S} carved pumpkins with the kids",
            "we celebrated {P} {rel}'s birthday",
            "the fireworks were beautiful",
            "{S} wrapped presents all night",
        ),
        frozenset({"family"}),
    ),
}
_EP_TOPICS: tuple[str, ...] = tuple(_EPISODES)

# ================================================================ family styling

_CASUAL_OPEN_NEWS = (
    "guess what, ",
    "big news: ",
    "so, update: ",
    "omg ",
    "ok so ",
    "fun fact, ",
    "update: ",
    "well, ",
    "so yeah, ",
    "news flash: ",
    "oh btw ",
    "hey! so ",
)
_CASUAL_OPEN = (
    "",
    "",
    "",
    "haha ",
    "lol ",
    "yeah ",
    "honestly ",
    "ngl ",
    "oh and ",
    "btw ",
    "ugh, ",
    "so ",
    "tbh ",
    "yep, ",
    "hey, ",
    "oh ",
    "anyway, ",
)
_CASUAL_CLOSE = (
    "",
    "",
    "!",
    "!!",
    " lol",
    " haha",
    ", it's been a lot",
    " tbh",
    "...",
    ", crazy right?",
    " btw",
    ", anyway",
    ", how about you?",
    "!! can't believe it",
    " honestly",
    ", kinda wild",
    " haha, you know how it is",
    ", just saying",
)
_CONTRACTIONS = (
    (r"\bI am\b", "I'm"),
    (r"\bdo not\b", "don't"),
    (r"\bdoes not\b", "doesn't"),
    (r"\bhave not\b", "haven't"),
    (r"\bis not\b", "isn't"),
    (r"\bcannot\b", "can't"),
    (r"\bI have\b(?= (been|had|got|gotten|moved|switched|started|finally))", "I've"),
)
_SLANG = (
    (r"\bgoing to\b", "gonna"),
    (r"\bwant to\b", "wanna"),
    (r"\bbecause\b", "cuz"),
    (r"\breally\b", "super"),
    (r"\bvery\b", "so"),
    (r"\bthough\b", "tho"),
)
_REPORT_FRAMES = (
    "{N} told me {X}",
    "{N} mentioned that {X}",
    "according to {N}, {X}",
    "{N} said {X}",
    "apparently {X}",
    "I heard from {N}'s {rel} that {X}",
    "{N} was telling us {X}",
    "talked to {N} today, {X}",
    "{N} let us know that {X}",
    "from what {N} says, {X}",
    "{N} brought up that {X}",
    "{N} let slip that {X}",
    "in the group chat {N} said {X}",
    "{N}'s {rel} says {X}",
    "{N} wrote that {X}",
    "{N} confirmed {X}",
    "when I called {N}, {N2} said {X}",
    "{N} keeps reminding everyone that {X}",
)
_STORY_PREFIX = (
    "After a long week of back-to-back meetings, ",
    "Over dinner with friends last night it came up that ",
    "Long story short, ",
    "Catching up on everything since we last talked: ",
    "So the big picture right now is that ",
    "It's been a strange few weeks, and ",
    "When my aunt called this morning asking for news, I told her ",
    "Between the rain and the endless errands it was a slow Saturday, but ",
    "We were sitting on the porch with lemonade when I remembered to tell everyone that ",
    "Funny how things go: ",
    "On the drive back from the lake I was thinking about how ",
    "Quick life update before I forget: ",
    "While the pasta was boiling I was telling my roommate that ",
    "It came up at the barbecue on Sunday that ",
    "You'll laugh, but after all this time ",
    "Between work, family and everything else, ",
)
_STORY_SUFFIX = (
    ", and we ended up talking about it for ages.",
    ", which honestly still feels a bit surreal.",
    ", so that's been the main news around here.",
    " - anyway, I'll tell you more when we grab coffee.",
    ", and the dog was thrilled with all the attention.",
    ", which made for a pretty eventful weekend.",
    ", and then we went out for tacos to celebrate the end of the week.",
    ", and my mom had a lot of opinions about it, as usual.",
    ", so life has been pretty full lately.",
    ", and I still need to update my friends about everything.",
    ".",
    ", which is partly why I've been so quiet in the group chat.",
    ", and it was one of those weeks where everything happened at once.",
)
_TERSE_PREFIX = ("", "", "", "{N}: ", "{N} - ", "user ", "note: ", "- ", "fact: ")
_TERSE_LABELS: dict[str, tuple[str, ...]] = {
    "state": ("{L}: {tv}", "{L} = {tv}", "{L}: {tv}."),
    "restate": ("{L}: still {tv}", "{L} unchanged ({tv})", "{L}: {tv} (same as before)"),
    "replace": (
        "{L}: {tv} (was {told})",
        "{L} changed to {tv}",
        "new {L}: {tv}",
        "{L} now {tv}",
        "{L}: {told} -> {tv}",
        "{L} updated: {tv}",
        "{L}: {tv} as of {when}",
    ),
    "update": (
        "{L}: no longer {told}",
        "{L}: {told} (ended)",
        "{L}: not {told} anymore",
        "ex-{L}: {told}",
    ),
}

# Questions about a slot state nothing: hard (0, 0) negatives for that slot's facts.
_ASK_TEMPLATES = (
    "what's your {L} these days?",
    "how's the {L} situation going?",
    "any news on the {L} front?",
    "did anything change with your {L}?",
    "tell me more about your {L}!",
    "is {tv} still your {L}?",
    "how do you like {tv}?",
    "what made you choose {tv}?",
    "wait, {tv}? since when?",
    "do you still think about {tv}?",
    "how long have you had that {L}?",
    "what do you think about {tv}?",
    "have you ever considered {tv}?",
)

_ALT_RE = re.compile(r"\[([^\[\]|]*)\|([^\[\]|]*)\]")
_PH_RE = re.compile(r"\{(\w+)\}")
_DOUBLE_ARTICLE_RE = re.compile(r"\b(the|a|an) (the|a|an) ", re.IGNORECASE)
_PERSON_KEYS = frozenset({"S", "O", "P", "R"})
_FIRST = {"S": "I", "O": "me", "P": "my", "R": "myself"}
_NUM_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
)
_Voice = Literal["first", "name", "pronoun"]


def _article(word: str) -> str:
    w = word.strip()
    low = w.lower()
    if low.startswith(("a ", "an ", "the ")):
        return w
    vowel = low[:1] in "aeiou" and not low.startswith(("uni", "use", "eu", "one"))
    vowel = vowel or low.startswith(("hour", "honest", "ux ", "hr ", "mba"))
    return ("an " if vowel else "a ") + w


def _render(
    template: str,
    voice: _Voice,
    person: _Person,
    fields: dict[str, str],
    *,
    introduced: bool = False,
) -> str:
    """Fill a slot template for a person in a voice (see the module docstring)."""
    third = voice != "first"
    text = _ALT_RE.sub(lambda m: m.group(2) if third else m.group(1), template)

    def _field(m: re.Match[str]) -> str:
        key = m.group(1)
        if key in _PERSON_KEYS:
            return m.group(0)
        if key not in fields:
            raise ConfigError(f"sentry template {template!r} needs field {key!r}")
        return fields[key]

    text = _PH_RE.sub(_field, text)
    named = introduced or voice == "pronoun"

    def _pers(m: re.Match[str]) -> str:
        nonlocal named
        key = m.group(1)
        if key not in _PERSON_KEYS:
            return m.group(0)
        if not third:
            return _FIRST[key]
        if not named:
            named = True
            return {"S": person.name, "O": person.name, "P": person.name + "'s", "R": person.refl}[
                key
            ]
        return {"S": person.subj, "O": person.obj, "P": person.poss, "R": person.refl}[key]

    text = _PH_RE.sub(_pers, text)
    text = _DOUBLE_ARTICLE_RE.sub(r"\2 ", text)
    return re.sub(r"\s+", " ", text).strip()


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _end(text: str, mark: str = ".") -> str:
    text = text.rstrip()
    return text if text[-1:] in ".!?" else text + mark


def _casualize(rng: random.Random, text: str) -> str:
    for pat, rep in _CONTRACTIONS:
        text = re.sub(pat, rep, text)
    for pat, rep in _SLANG:
        if rng.random() < 0.35:
            text = re.sub(pat, rep, text)
    return text


# ================================================================ the generator


def _terse_finish(rng: random.Random, text: str, name: str) -> str:
    prefix = rng.choice(_TERSE_PREFIX).replace("{N}", name)
    text = text.rstrip(".")
    if not prefix and rng.random() < 0.5:
        text = text[:1].lower() + text[1:]
    elif rng.random() < 0.5:
        text = _cap(text)
    return prefix + text


def _realize(
    rng: random.Random,
    template: str,
    family: str,
    person: _Person,
    fields: dict[str, str],
    *,
    news: bool = False,
) -> str:
    """Render a template as one sentence of a phrasing family."""
    if family == "plain":
        voice: _Voice = rng.choices(("first", "name", "pronoun"), (0.55, 0.33, 0.12))[0]
        return _end(_cap(_render(template, voice, person, fields)))
    if family == "casual":
        voice = "first" if rng.random() < 0.85 else "name"
        text = _casualize(rng, _render(template, voice, person, fields))
        opener = rng.choice(_CASUAL_OPEN_NEWS if news and rng.random() < 0.5 else _CASUAL_OPEN)
        text = opener + text + rng.choice(_CASUAL_CLOSE)
        if rng.random() < 0.5:
            text = _cap(text)
        if voice == "first" and rng.random() < 0.2:
            text = f"{person.name}: {_cap(text)}"
        return text
    if family == "reported":
        frame = rng.choice(_REPORT_FRAMES)
        introduced = "{N}" in frame.split("{X}")[0]
        clause = _render(template, "name", person, fields, introduced=introduced)
        text = frame.replace("{N2}", person.subj).replace("{N}", person.name)
        text = text.replace("{rel}", fields["rel"]).replace("{X}", clause)
        return _end(_cap(text))
    if family == "story":
        voice = rng.choices(("first", "name", "pronoun"), (0.6, 0.3, 0.1))[0]
        clause = _render(template, voice, person, fields)
        if rng.random() < 0.7:
            text = rng.choice(_STORY_PREFIX) + clause
            if rng.random() < 0.5:
                text = text + rng.choice(_STORY_SUFFIX)
        else:
            text = _cap(clause) + rng.choice(_STORY_SUFFIX)
        return _end(_cap(text))
    if family == "terse":
        body = template[4:] if template.startswith("{S} ") else template
        text = _render(body, "pronoun", person, fields, introduced=True)
        return _terse_finish(rng, text, person.name)
    raise ConfigError(f"unknown phrasing family {family!r}; known: {', '.join(FAMILIES)}")


_NEWS_WORDS = (
    "moved",
    "new",
    "now",
    "quit",
    "broke",
    "switched",
    "started",
    "got",
    "left",
    "no more",
    "anymore",
    "gave up",
    "stopped",
    "sold",
    "only",
)


class _Interaction:
    """One person, one slot, an old and a new value; renders sentences in families."""

    def __init__(self, rng: random.Random, slot: _Slot, person: _Person | None = None) -> None:
        self.rng = rng
        self.slot = slot
        self.person = person or _person(rng)
        self.old, self.new, self.told, self.tnew = self._values()
        self.base: dict[str, str] = {
            "when": rng.choice(_WHEN),
            "month": rng.choice(_MONTHS),
            "month2": rng.choice(_MONTHS),
            "day": rng.choice(_DAYS),
            "dur": rng.choice(_DURATIONS),
            "city2": rng.choice(_CITIES),
            "rel": rng.choice(_RELATIVES),
            "N": self.person.name,
            "L": rng.choice(slot.labels),
        }
        if slot.extra is not None:
            self.base.update(slot.extra(rng))

    def _values(self) -> tuple[str, str, str, str]:
        rng, vals = self.rng, self.slot.values
        if isinstance(vals, _Num):
            steps = (vals.hi - vals.lo) // vals.step
            a = vals.lo + vals.step * rng.randint(0, steps)
            b = a
            while abs(a - b) < vals.min_diff:
                b = vals.lo + vals.step * rng.randint(0, steps)
            unit = rng.choice(vals.units)

            def show(n: int) -> str:
                if vals.words_ok and n <= 20 and rng.random() < 0.4:
                    return unit.format(n=_NUM_WORDS[n])
                return unit.format(n=n)

            return show(a), show(b), unit.format(n=a), unit.format(n=b)
        old = rng.choice(vals)
        new = rng.choice(vals)
        while new == old:
            new = rng.choice(vals)
        return old, new, old, new

    def ask(self, *, new_value: bool = False) -> str:
        """A chatty question about the slot (second person; no state asserted)."""
        rng = self.rng
        fields = dict(self.base)
        fields["tv"] = self.tnew if new_value else self.told
        fields["L"] = self.slot.labels[0]
        text = _render(rng.choice(_ASK_TEMPLATES), "first", self.person, fields)
        text = rng.choice(("", "", "Oh ", "Haha ", "Wow, ", "Hey, ", "Nice! ", "Wait, ")) + text
        return _cap(text)

    def names_old(self, text: str) -> bool:
        """True when ``text`` mentions the old value."""
        low = text.lower()
        return self.told.lower() in low or self.old.lower() in low

    def sentence(self, kind: str, family: str, *, new_value: bool = False) -> str:
        """Render one sentence of ``kind`` in ``family``.

        Kinds: state, restate, replace, arrival (a replace template with the old
        value), update, scope, mention, hard. ``replace`` uses the new value;
        the others the old one unless ``new_value``.
        """
        rng, slot = self.rng, self.slot
        use_new = new_value or kind in ("replace", "add")
        value, tvalue = (self.new, self.tnew) if use_new else (self.old, self.told)
        pool: tuple[str, ...]
        if kind in ("state", "restate"):
            pool = slot.state
        elif kind == "replace":
            pool = slot.replace
        elif kind == "arrival":
            pool = tuple(
                t for t in slot.replace + slot.add if "{old}" not in t and "{aold}" not in t
            )
            pool = pool or slot.state
        elif kind == "add":
            pool = slot.add or slot.state
        elif kind in ("update", "scope"):
            pool = getattr(slot, kind) or slot.replace
        elif kind == "mention":
            pool = slot.mention or slot.state
        elif kind == "hard":
            pool = slot.hard
        elif kind == "ask":
            pool = _ASK_TEMPLATES
        else:  # pragma: no cover - internal
            raise ConfigError(f"unknown sentence kind {kind!r}")
        fields = dict(self.base)
        fields.update(
            v=value,
            av=_article(value),
            tv=tvalue,
            old=self.old,
            aold=_article(self.old),
            told=self.told,
            wp=_JOB_PLACES.get(value, "work"),
        )
        if "pet" in fields:  # a new pet has its own name; an arrival names the old pet
            if kind == "arrival":
                fields["pet2"] = fields["pet"]
            elif use_new and kind != "replace":
                fields["pet"] = fields["pet2"]
        if family == "terse":
            label_kind = "restate" if kind in ("restate", "arrival") else kind
            if label_kind in _TERSE_LABELS and rng.random() < 0.35:
                text = _render(
                    rng.choice(_TERSE_LABELS[label_kind]), "pronoun", self.person, fields
                )
                return _terse_finish(rng, text, self.person.name)
            template = rng.choice(pool)
            text = _realize(rng, template, "terse", self.person, fields)
            if kind == "replace" and rng.random() < 0.3:
                text += f" ({fields['when']})"
            return text
        template = rng.choice(pool)
        news = any(w in template for w in _NEWS_WORDS)
        return _realize(rng, template, family, self.person, fields, news=news)


def _episode(rng: random.Random, topic: str, family: str, person: _Person) -> str:
    """A one-off event / feeling sentence on ``topic`` (no lasting state)."""
    templates, _ = _EPISODES[topic]
    fields = {k: rng.choice(v) for k, v in _EP_FILL.items()}
    fields.update(rel=rng.choice(_RELATIVES), day=rng.choice(_DAYS), N=person.name)
    return _realize(rng, rng.choice(templates), family, person, fields)


def _smalltalk(rng: random.Random) -> str:
    if rng.random() < 0.55:
        text = rng.choice(_ST_TEMPLATES).format(
            thing=rng.choice(_ST_THING), adj=rng.choice(_ST_ADJ)
        )
    else:
        text = rng.choice(_SMALLTALK)
    opener = rng.choice(_SMALLTALK_OPEN)
    if opener:
        text = opener + text[:1].lower() + text[1:]
    if rng.random() < 0.2:
        text = text.rstrip(".!?") + rng.choice((" lol", " haha", "!", "!!"))
    return text


def smalltalk_sentences() -> tuple[str, ...]:
    """The generator's pool of slot-free small-talk sentences (before styling)."""
    return _SMALLTALK


def slot_names() -> tuple[str, ...]:
    """Names of the state slots the generator knows."""
    return tuple(s.name for s in _SLOTS)


def _check_families(names: Sequence[str] | None, what: str) -> tuple[str, ...]:
    if names is None:
        return FAMILIES
    out = tuple(names)
    if not out:
        raise ConfigError(f"{what} must name at least one phrasing family")
    unknown = [n for n in out if n not in FAMILIES]
    if unknown:
        raise ConfigError(
            f"unknown phrasing family in {what}: {', '.join(unknown)}; known: {', '.join(FAMILIES)}"
        )
    return out


def generate_pairs(
    n_interactions: int,
    seed: int = 0,
    *,
    families: Sequence[str] | None = None,
    new_families: Sequence[str] | None = None,
    id_prefix: str = "i",
) -> list[SentryPair]:
    """Generate labelled Sentry pairs, deterministically from ``seed``.

    Each interaction yields about six pairs: one conflicting ``(1, 0)`` pair
    (replace / update / scope / contrast), sometimes a second one against a
    consistent mention, one consistent ``(1, 1)`` pair (restate / mention /
    arrival), and ``(0, 0)`` pairs against a fact of another slot family,
    a hard negative sharing the slot's words, and small talk.

    Args:
        n_interactions: number of interactions (``>= 1``).
        seed: random seed; the same seed gives the same pairs.
        families: phrasing families used for the old statements (and the new
            ones when ``new_families`` is ``None``); all by default.
        new_families: phrasing families used for the *new* statements (the
            conflicting and consistent statements, hard negatives, episodes),
            e.g. one held-out family for evaluation; negatives between two
            old-side statements keep the old families.
        id_prefix: prefix of the interaction ids (``"<prefix><seed>-<k>"``).

    Returns:
        The pairs, grouped by interaction in generation order.

    Raises:
        ConfigError: bad counts or unknown family names.
    """
    if n_interactions < 1:
        raise ConfigError("n_interactions must be >= 1")
    old_fams = _check_families(families, "families")
    new_fams = (
        _check_families(new_families, "new_families") if new_families is not None else old_fams
    )
    rng = random.Random(f"atma-sentry-data:{seed}:{','.join(old_fams)}|{','.join(new_fams)}")
    pairs: list[SentryPair] = []
    for k in range(n_interactions):
        iid = f"{id_prefix}{seed}-{k}"
        slot = rng.choices(_SLOTS, _SLOT_WEIGHTS)[0]
        it = _Interaction(rng, slot)
        same_group = [
            s for s in _SLOTS if s.group == slot.group and not slots_linked(s.name, slot.name)
        ]
        if same_group and rng.random() < 0.4:
            other_slot = rng.choice(same_group)
        else:
            other_slot = rng.choice([s for s in _SLOTS if not slots_linked(s.name, slot.name)])
        other = _Interaction(rng, other_slot, it.person)

        def add(
            new: str,
            old: str,
            yt: int,
            yl: int,
            kind: PairKind,
            new_slot: str,
            nf: str,
            of: str,
            iid: str = iid,
            slot_name: str = slot.name,
        ) -> None:
            pairs.append(
                SentryPair(
                    interaction_id=iid,
                    new_text=new,
                    old_text=old,
                    y_top=yt,
                    y_log=yl,
                    kind=kind,
                    slot=slot_name,
                    new_slot=new_slot,
                    new_family=nf,
                    old_family=of,
                )
            )

        f_old = rng.choice(old_fams)
        p = it.sentence("state", f_old)

        # --- conflicting: the new statement replaces / ends / scopes the old one
        options: list[PairKind] = ["replace"] if slot.multi else ["replace", "contrast"]
        weights = [0.5] if slot.multi else [0.5, 0.1]
        if slot.update:
            options.append("update")
            weights.append(0.25)
        if slot.scope:
            options.append("scope")
            weights.append(0.15)
        ckind = rng.choices(options, weights)[0]
        f_c = rng.choice(new_fams)
        if ckind == "contrast":
            u_c = it.sentence("state", f_c, new_value=True)
        else:
            u_c = it.sentence(ckind, f_c)
        add(u_c, p, 1, 0, ckind, slot.name, f_c, f_old)

        # --- consistent: restatement, narrative mention, arrival with the same value
        consistent: list[tuple[str, str]] = []
        for _ in range(3):
            skind: PairKind = rng.choices(
                ("restate", "mention", "arrival", "addition"),
                (0.45, 0.35, 0.2, 0.35 if slot.multi else 0.0),
            )[0]
            f_s = rng.choice(new_fams)
            for _attempt in range(2):
                if skind == "addition":  # multi-valued slot: another value coexists
                    u_s = it.sentence(
                        rng.choice(("add", "add", "state", "mention")), f_s, new_value=True
                    )
                else:
                    u_s = it.sentence(skind, f_s)
                if u_s != p and all(u_s != c for c, _ in consistent):
                    break
            add(u_s, p, 1, 1, skind, slot.name, f_s, f_old)
            for prev, f_prev in consistent:
                add(u_s, prev, 1, 1, skind, slot.name, f_s, f_prev)
            consistent.append((u_s, f_s))
            # the conflicting statement also contradicts a consistent one that names
            # the old value (an ending contradicts any of them)
            if skind != "addition" and (
                ckind == "update" or (ckind in ("replace", "contrast") and it.names_old(u_s))
            ):
                add(u_c, u_s, 1, 0, "conflict_vs_consistent", slot.name, f_c, f_s)

        # --- another slot of the same person (a different topic group)
        f_q = rng.choice(old_fams)
        q = other.sentence(rng.choice(("state", "state", "replace", "mention")), f_q)
        add(u_c, q, 0, 0, "other_slot", slot.name, f_c, f_q, slot_name=other_slot.name)
        add(
            consistent[0][0],
            q,
            0,
            0,
            "other_slot",
            slot.name,
            consistent[0][1],
            f_q,
            slot_name=other_slot.name,
        )
        add(q, p, 0, 0, "other_slot", other_slot.name, f_q, f_old)

        # --- hard negative: shares the slot's words, talks about something else
        if slot.hard and rng.random() < 0.6:
            f_h = rng.choice(new_fams)
            h = it.sentence("hard", f_h, new_value=rng.random() < 0.6)
            add(h, p, 0, 0, "hard_negative", slot.name + ":other", f_h, f_old)
            add(h, u_c, 0, 0, "hard_negative", slot.name + ":other", f_h, f_c)
        # a question about the slot states nothing
        if rng.random() < 0.35:
            ask = it.ask(new_value=rng.random() < 0.5)
            add(
                ask,
                rng.choice((p, u_c)),
                0,
                0,
                "hard_negative",
                slot.name + ":question",
                "smalltalk",
                f_old,
            )

        # --- episodic chit-chat: same-topic events are not a state pair
        episodes: list[str] = []
        f_e1, ep_tag = "plain", "chitchat"
        if rng.random() < 0.8:
            topic = rng.choice(_EP_TOPICS)
            ep_tag = "chitchat:" + topic
            f_e1, f_e2 = rng.choice(new_fams), rng.choice(old_fams)
            e1 = _episode(rng, topic, f_e1, it.person)
            e2 = _episode(rng, topic, f_e2, it.person)
            episodes = [e1, e2]
            if e1 != e2:
                add(
                    e1,
                    e2,
                    0,
                    0,
                    "chitchat",
                    "chitchat:" + topic,
                    f_e1,
                    f_e2,
                    slot_name="chitchat:" + topic,
                )
            add(e2, q, 0, 0, "chitchat", "chitchat:" + topic, f_e2, f_q, slot_name=other_slot.name)
            if slot.group not in _EPISODES[topic][1]:
                add(e1, p, 0, 0, "chitchat", "chitchat:" + topic, f_e1, f_old)

        # --- small talk: against the fact, the new statement, an episode, other small talk
        if rng.random() < 0.6:
            st = _smalltalk(rng)
            target, tf = rng.choice(((p, f_old), (u_c, f_c), (consistent[0][0], consistent[0][1])))
            add(st, target, 0, 0, "smalltalk", "smalltalk", "smalltalk", tf)
            st2 = _smalltalk(rng)
            if st2 != st:
                add(
                    st2,
                    st,
                    0,
                    0,
                    "smalltalk",
                    "smalltalk",
                    "smalltalk",
                    "smalltalk",
                    slot_name="smalltalk",
                )
            if episodes:
                add(
                    st,
                    episodes[0],
                    0,
                    0,
                    "smalltalk",
                    "smalltalk",
                    "smalltalk",
                    f_e1,
                    slot_name=ep_tag,
                )
    return pairs
