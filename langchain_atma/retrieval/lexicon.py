"""Word lists of the rule-based query profiler (the one place they are defined).

The profiler (:mod:`langchain_atma.retrieval.profiler`) counts *hints* for three
views and sets three boolean *guards*:

=============  ==============================================================
list           meaning
=============  ==============================================================
``historical`` the question asks about an old / earlier / superseded state
``current``    the question asks about the live state now
``change``     the question asks about the change itself (transition view)
``negation``   guard: the question is negated ("not", "never", "no longer")
``scope``      guard: the question is qualified ("only", "at work", "unless")
``update``     guard: the question mentions that something was updated
``ignore``     phrases masked *before* matching, because they contain a hint
               word in a non-temporal sense ("how old", "New York",
               "once a week", "before bed", "past few days")
=============  ==============================================================

Text normalization (applied to questions before matching)
---------------------------------------------------------
1. Unicode NFKC, case folding; curly quotes and backticks become ``'``.
2. Contractions are expanded: ``didn't`` -> ``did not``, ``can't`` -> ``can
   not``, ``won't`` -> ``will not``, ``'re/'ve/'ll/'m/'d`` -> ``are/have/will/
   am/would``; ``'s`` after a wh-word or pronoun is ``is`` (``what's`` -> ``what
   is``); any other ``'s`` is a possessive and becomes the token ``s``
   (``Caroline's new job`` -> ``caroline s new job``, so ``s new`` reads like
   ``her new``). Apostrophe-less forms (``didnt``) are listed in the negation
   guard directly.
3. Every run of non-word characters (punctuation, hyphens, underscores,
   newlines) becomes one space: ``present-day`` -> ``present day``,
   ``ex-boyfriend`` -> ``ex boyfriend``, ``up-to-date`` -> ``up to date``.

Phrase syntax
-------------
A phrase is a sequence of lowercase tokens separated by single spaces. Phrases
match whole words only (``now`` does not match ``know``), case-insensitively.

* ``word``      the exact word;
* ``pre*``      any word starting with ``pre`` (``chang*``: change, changed...);
* ``a|b|c*``    any of the alternatives (``her|his|their last``);
* ``...``       a gap of 0 to 6 words (``first ... then``).

When phrases overlap, the profiler keeps the longest match (``no longer``
counts once, as a current hint, not also as ``longer``), so listing both a word
and a longer phrase that contains it never double counts.

Tricky cases, and how the lists resolve them
--------------------------------------------
* ``still`` ("Does she still live in Boston?") is a **current** hint.
* ``anymore`` / ``any more`` / ``no longer`` are **current** hints and also set
  the **negation** guard. A wh-question whose only hints are these cessation
  phrases ("Which city does she no longer live in?") asks for the value that
  stopped being true; the profiler turns such a question to the historical view
  (see :data:`CESSATION_HINTS`).
* ``used to`` / ``use to`` ("What did she use to do?") are **historical**.
* ``these days`` / ``nowadays`` / ``as of today`` / ``right now`` /
  ``present-day`` are **current**.
* ``originally`` / ``initially`` / ``at first`` / ``prior to`` / ``earlier`` /
  ``once`` / ``former`` / ``previous`` / possessive ``last`` ("her last job")
  are **historical**.
* ``ever since`` / ``since when`` / ``first ... then`` / ``move from`` /
  ``switch`` / ``change`` / ``become`` are **change** hints.
* A change event inside a before/after phrase is one state hint, not a change
  hint: "before her move", "prior to switching", "before she moved" are
  historical; "after the move", "since she moved", "following her relocation"
  are current. "the first ... mentioned", "did she first mention / call /
  describe / say" and "did she mention first" are historical, "the last ...
  mentioned" / "as of her last update" are current.
* Past-tense questions carry their own hint word: "What was X's job *before*
  she moved?" and "Where did X live *before*?" are historical through
  ``before``. Tense alone is *not* a hint: "When did Caroline go to the support
  group?" is an event question, not a request for a superseded state, so a
  question without any hint word is **neutral**.
* Non-temporal senses are masked by ``ignore``: "How old is she now?" keeps
  only ``now``; "once a week", "before bed", "New York", "the past few days",
  "last name", "every now and then" carry no hint.

Users can extend the lists without editing this module::

    lex = DEFAULT_LEXICON.extend(current=["as we speak"], historical=["back in college"])

Example:
    >>> from langchain_atma.retrieval.lexicon import DEFAULT_LEXICON, normalize_text
    >>> normalize_text("What's Caroline's job these days?")
    'what is caroline s job these days'
    >>> [m.phrase for m in DEFAULT_LEXICON.find("current", "Where does she live now?")]
    ['now']
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from langchain_atma.errors import ConfigError

__all__ = [
    "CATEGORIES",
    "CESSATION_HINTS",
    "CHANGE_HINTS",
    "CURRENT_HINTS",
    "DEFAULT_LEXICON",
    "GAP_MAX_WORDS",
    "HISTORICAL_HINTS",
    "HintLexicon",
    "HintMatch",
    "IGNORE_PHRASES",
    "NEGATION_GUARDS",
    "SCOPE_GUARDS",
    "UPDATE_GUARDS",
    "normalize_text",
]

GAP_MAX_WORDS = 6
"""Most words the ``...`` token of a phrase may skip."""

CATEGORIES: tuple[str, ...] = (
    "historical",
    "current",
    "change",
    "negation",
    "scope",
    "update",
)
"""Names of the hint and guard lists, in the order they are reported."""

_PERSON_POSSESSIVE = "her|his|their|my|your|our|s"
"""Possessive determiners; ``s`` is the possessive of a name ("Caroline's" -> "caroline s")."""
_CHANGE_NOUNS = "move|switch|change|relocation|update|transition|breakup|divorce|promotion"
_CHANGE_GERUNDS = "moving|switching|changing|relocating|transitioning"
_CHANGE_PAST = "moved|switched|changed|relocated|transitioned|left|quit"
_SUBJECT = "she|he|they|i|you|we|it"

HISTORICAL_HINTS: tuple[str, ...] = (
    # habitual past
    "used to",
    "use to",  # "didn't use to", "did she use to"
    # before / earlier
    "before",
    "beforehand",
    "earlier",
    "earliest",
    "ago",
    "until",
    "till",
    "up until",
    "prior",
    "prior to",
    "previous",
    "previously",
    "former",
    "formerly",
    "ex",  # ex-boyfriend, ex-employer
    "old",  # "her old job" (ages and "old friend" are masked by IGNORE_PHRASES)
    "once",  # "where did she once live" ("once a week" is masked)
    f"{_PERSON_POSSESSIVE} last",  # "her last job" ("last name" is masked)
    f"{_PERSON_POSSESSIVE} first",  # "his first car" ("first name" is masked)
    "last year",
    # the state before a change event ("before the move" counts once)
    f"before the|{_PERSON_POSSESSIVE} ... {_CHANGE_NOUNS}",  # "before her big move"
    f"before {_CHANGE_GERUNDS}",
    f"before {_SUBJECT} {_CHANGE_PAST}",  # "before she moved"
    f"prior to the|{_PERSON_POSSESSIVE} ... {_CHANGE_NOUNS}",
    f"prior to {_CHANGE_GERUNDS}",
    # beginnings
    "originally",
    "original",
    "initially",
    "initial",
    "at first",
    "at the start",
    "at the beginning",
    "in the beginning",
    "to begin with",
    "to start with",
    "in the first place",
    "at the outset",
    # then / back then
    "back then",
    "back in",
    "back when",
    "back in the day",
    "way back",
    "at the time",
    "at that time",
    "at that point",
    "those days",
    "in those days",
    "the old days",
    "in the past",
    "past",  # "her past job" ("past few days" is masked)
    "historically",
    "historical",
    # earlier life stages
    "as a child",
    "as a kid",
    "as a teen",
    "as a teenager",
    "growing up",
    "younger",
    "older",  # "older information" (siblings and children are masked)
    # "the first ... mentioned", "did she first mention / call / describe / say"
    "first|earliest ... mention|mentioned|mentions|state|stated|say|said|report|reported|"
    "note|noted|describe|described|call|called|name|named|list|listed|tell|told|share|"
    "shared|talk|talked|claim|claimed|pick|picked|choose|chose|plan|planned",
    "mention|mentioned|say|said|name|named|list|listed|describe|described first",
    "childhood",
    f"{_PERSON_POSSESSIVE} youth",
)
"""Hints that the question asks about an earlier / superseded state."""

CURRENT_HINTS: tuple[str, ...] = (
    "now",
    "right now",
    "just now",
    "for now",
    "as of now",
    "by now",
    "now that",
    "from now on",
    "until now",  # a range ending now: current, not "until" + "now"
    "up to now",
    "up until now",
    "till now",
    "currently",
    "current",
    "these days",
    "nowadays",
    "now a days",
    "this day and age",
    "today",
    "as of today",
    "to date",
    "up to date",
    "at the moment",
    "at the minute",
    "at this moment",
    "at this point",
    "at this time",
    "at this stage",
    "at present",
    "presently",
    "present day",  # "present-day"
    "present time",
    "the present",
    f"{_PERSON_POSSESSIVE}|its present",  # "her present job" ("a present" is masked)
    "latest",
    "most recent",
    "most recently",
    "newest",
    f"{_PERSON_POSSESSIVE} new",  # "her new job" ("New York" is masked)
    "brand new",
    "still",
    "anymore",
    "any more",
    "no longer",
    "not any longer",
    "lately",
    "of late",
    "remain",
    "remains",
    "as things stand",
    "as it stands",
    "as we speak",
    "updated",  # "her updated job title"
    # the end point of a conversation or story
    "eventually",
    "ultimately",
    "finally",
    "in the end",
    "at|by the end",
    # the most recent report ("as of her last update", "the last city she mentioned")
    "last|latest update*|message*|conversation*|session*|chat*|mention*|report*|entry|record*",
    "last|latest ... mentioned|mentions|stated|said|reported|noted",
    # the state after a change event ("after the move" counts once, as current)
    f"after|since|following the|{_PERSON_POSSESSIVE} ... {_CHANGE_NOUNS}",
    f"after|since|following {_CHANGE_GERUNDS}",
    f"after|since {_SUBJECT} {_CHANGE_PAST}",  # "since she moved"
)
"""Hints that the question asks about the live state."""

CESSATION_HINTS: tuple[str, ...] = ("anymore", "any more", "no longer", "not any longer")
"""Current hints that describe a state that *stopped*. A wh-question whose only
hints are these ("What does she no longer eat?") asks for the ceased value, so
the profiler gives it the historical view; a yes/no question ("Is she no longer
vegan?") stays current."""

CHANGE_HINTS: tuple[str, ...] = (
    "chang*",  # change, changed, changes, changing
    "switch*",
    "swap*",
    "transition*",
    "transform*",
    "evolv*",
    "evolution",
    "shifted",
    "shifting",
    "become",
    "becomes",
    "became",
    "becoming",
    "turn into",
    "turns into",
    "turned into",
    "turning into",
    "move|moves|moved|moving|went|go|goes|going|gone|came|come|shift from",
    "upgrad*",
    "downgrad*",
    "replac*",
    "converted",
    "converting",
    "instead",
    "instead of",
    "in place of",
    "ever since",
    "since when",
    "first ... then",
    "then and now",
    "before and after",
    "differ",
    "differs",
    "differed",
    "difference",
    "what is different",
    "different|differently from|than before|then|earlier|last year",  # a comparison
    "compared to|with before|then|earlier|last year",
)
"""Hints that the question asks about a change (the transition view)."""

NEGATION_GUARDS: tuple[str, ...] = (
    "not",  # also every expanded "n't"
    "no",
    "never",
    "none",
    "nothing",
    "nobody",
    "no one",
    "neither",
    "nor",
    "without",
    "no longer",
    "anymore",
    "any more",
    "cannot",
    "dont|doesnt|didnt|isnt|arent|wasnt|werent|cant|couldnt|wont|wouldnt",
    "hasnt|havent|hadnt|shouldnt|aint",
    "quit*",
    "stop|stops|stopped|stopping",
    "give|gives|gave|given|giving up",
    "ceas*",
)
"""Guard: negation or cessation wording."""

SCOPE_GUARDS: tuple[str, ...] = (
    "only",
    "except",
    "unless",
    "if",
    "whenever",
    "while",
    "during",
    "besides",
    "apart from",
    "aside from",
    "other than",
    "excluding",
    "specifically",
    "in particular",
    "particularly",
    "sometimes",
    "occasionally",
    "usually",
    "typically",
    "generally",
    "mostly",
    "in some cases",
    "in certain",
    "under certain",
    "depending on",
    "depends on",
    "on weekend*",
    "on the weekend*",
    "on weekday*",
    "at work",
    "at home",
    "at school",
    "at the office",
    "for work",
    "in the morning*|evening*|afternoon*",
    "at night",
    "on vacation*|holiday*|trip*",
    "when travel*|traveling|travelling",
    "in summer|winter|spring|fall|autumn",
    "in the summer|winter|spring|fall|autumn",
    "special occasion*",
    "when she|he|they|i|you|we|it is|are|am|was|were",
)
"""Guard: the question carries a condition or qualifier."""

UPDATE_GUARDS: tuple[str, ...] = (
    "updat*",
    "new",
    "newly",
    "newest",
    "latest",
    "recent",
    "recently",
    "just",
    "chang*",
    "switch*",
    "move|moves|moved|moving",
    "relocat*",
    "replac*",
    "upgrad*",
    "transition*",
    "after",
    "since",
    "anymore",
    "any more",
    "no longer",
    "become|becomes|became",
    "start|starts|started|starting",
    "begin|begins|began|begun|beginning",
    "stop|stops|stopped",
    "quit*",
    "decid*",
    "now that",
)
"""Guard: the question mentions that a state was updated."""

IGNORE_PHRASES: tuple[str, ...] = (
    # ages, not old states
    "how old",
    "year|years|month|months|week|weeks|day|days old",
    "old friend*",
    "old school",
    "older|younger|oldest|eldest|youngest brother*|sister*|sibling*|son*|daughter*|kid*|child*",
    # place and holiday names
    "new york*",
    "new year*",
    "new zealand*",
    "new jersey",
    "new mexico",
    "new orleans",
    "new hampshire",
    "new england",
    "new delhi",
    "new south wales",
    # recent ranges ("in the past few months" means recently)
    "past few",
    "past couple",
    "past several",
    "past hour*|day*|week*|weekend*|month*|year*|decade*",
    # names, frequencies, idioms
    "last name*",
    "first name*",
    "at once",
    "all at once",
    "once a|an|per|again|more|or",
    "once in a while",
    "every once",
    "now and then",
    "now and again",
    "still life",
    # gifts and creative works
    "a present",
    "birthday|christmas|wedding|graduation present*",
    "original song*|music|art|artwork|composition*|painting*|piece*|poem*",
    # routine "before" (habit, not an old state)
    "before bed*|sleep*|breakfast|lunch|dinner|meals|work*|school|class*|exercis*|races",
    "before a workout|race|meal|game|match|performance|show|competition",
    "before going to bed|sleep",
    # non-temporal "current"
    "current events",
    "current affairs",
)
"""Phrases masked before matching (hint words used in a non-temporal sense)."""

_TOKEN_RE = re.compile(r"^(?:\.\.\.|[a-z0-9]+\*?(?:\|[a-z0-9]+\*?)*)$")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'",
                              "\u02bc": "'", "\u2032": "'"})
_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"\bain't\b"), "is not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"'ve\b"), " have"),
    (re.compile(r"'ll\b"), " will"),
    (re.compile(r"'m\b"), " am"),
    (re.compile(r"'d\b"), " would"),
    (
        re.compile(r"\b(what|where|who|how|when|why|which|that|it|there|here|he|she|this)'s\b"),
        r"\1 is",
    ),
    (re.compile(r"'s\b"), " s"),
)
_NON_WORD = re.compile(r"[\W_]+")
_MASK = " \u00a7 "  # a token no phrase can match (section sign survives normalization)


def normalize_text(text: str) -> str:
    """Normalize a question for matching (see the module docstring).

    Example:
        >>> normalize_text("Didn't she live in New-York, before?")
        'did not she live in new york before'
    """
    out = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    for pattern, repl in _CONTRACTIONS:
        out = pattern.sub(repl, out)
    return _NON_WORD.sub(" ", out).strip()


def _compile_phrase(phrase: str) -> re.Pattern[str]:
    """Compile one phrase of the documented syntax to a regex over normalized text."""
    tokens = phrase.split(" ")
    parts: list[str] = []
    for i, tok in enumerate(tokens):
        if tok == "...":
            parts.append(rf"(?:\s+\S+){{0,{GAP_MAX_WORDS}}}")
            continue
        alts = []
        for alt in tok.split("|"):
            alts.append(re.escape(alt[:-1]) + r"\w*" if alt.endswith("*") else re.escape(alt))
        sep = r"\s+" if i > 0 else ""
        parts.append(sep + "(?:" + "|".join(alts) + ")")
    return re.compile(r"(?<!\w)" + "".join(parts) + r"(?!\w)")


def _check_phrases(name: str, phrases: object) -> tuple[str, ...]:
    if isinstance(phrases, str) or not isinstance(phrases, Iterable):
        raise ConfigError(f"lexicon list {name!r} must be a list of phrases, not {phrases!r}")
    out: list[str] = []
    for phrase in phrases:
        if not isinstance(phrase, str):
            raise ConfigError(f"lexicon list {name!r}: phrase {phrase!r} is not a string")
        norm = " ".join(phrase.strip().lower().split())
        tokens = norm.split(" ") if norm else []
        if not tokens or all(t == "..." for t in tokens):
            raise ConfigError(f"lexicon list {name!r}: empty phrase {phrase!r}")
        if tokens[0] == "..." or tokens[-1] == "...":
            raise ConfigError(f"lexicon list {name!r}: phrase {phrase!r} starts or ends with '...'")
        for tok in tokens:
            if not _TOKEN_RE.match(tok):
                raise ConfigError(
                    f"lexicon list {name!r}: bad token {tok!r} in {phrase!r}; use lowercase "
                    "letters/digits, 'pre*', 'a|b' or '...'"
                )
        if norm not in out:
            out.append(norm)
    return tuple(out)


class HintMatch(BaseModel):
    """One phrase occurrence in a normalized question."""

    model_config = ConfigDict(frozen=True)

    category: str = Field(description="Lexicon list the phrase belongs to.")
    phrase: str = Field(description="The matched text (normalized).")
    start: int = Field(description="Start offset in the normalized question.")
    end: int = Field(description="End offset (exclusive) in the normalized question.")


class HintLexicon(BaseModel):
    """The profiler's word lists; immutable, extend with :meth:`extend`.

    Example:
        >>> lex = HintLexicon().extend(current=["as we speak"])
        >>> "as we speak" in lex.current
        True
    """

    model_config = ConfigDict(frozen=True)

    historical: tuple[str, ...] = Field(
        default=HISTORICAL_HINTS, description="Historical-state hints."
    )
    current: tuple[str, ...] = Field(default=CURRENT_HINTS, description="Current-state hints.")
    change: tuple[str, ...] = Field(default=CHANGE_HINTS, description="Change hints.")
    cessation: tuple[str, ...] = Field(
        default=CESSATION_HINTS,
        description="Current hints that describe a stopped state (see CESSATION_HINTS).",
    )
    negation: tuple[str, ...] = Field(default=NEGATION_GUARDS, description="Negation guard.")
    scope: tuple[str, ...] = Field(default=SCOPE_GUARDS, description="Scope guard.")
    update: tuple[str, ...] = Field(default=UPDATE_GUARDS, description="Update guard.")
    ignore: tuple[str, ...] = Field(
        default=IGNORE_PHRASES, description="Phrases masked before matching."
    )

    _compiled: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] | None = PrivateAttr(
        default=None
    )

    def model_post_init(self, __context: object) -> None:
        """Validate every phrase once, at construction."""
        for name in type(self).model_fields:
            _check_phrases(name, getattr(self, name))

    def extend(self, **extra: Iterable[str]) -> HintLexicon:
        """A new lexicon with phrases appended to the named lists.

        Args:
            **extra: list name (``historical``, ``current``, ``change``,
                ``cessation``, ``negation``, ``scope``, ``update``, ``ignore``)
                to the phrases to add.

        Raises:
            ConfigError: for an unknown list name or a malformed phrase.
        """
        fields = type(self).model_fields
        update: dict[str, tuple[str, ...]] = {}
        for name, phrases in extra.items():
            if name not in fields:
                raise ConfigError(
                    f"unknown lexicon list {name!r}; known: {', '.join(fields)}"
                )
            merged = _check_phrases(name, (*getattr(self, name), *_check_phrases(name, phrases)))
            update[name] = merged
        return HintLexicon(**{**{n: getattr(self, n) for n in fields}, **update})

    def _patterns(self, category: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
        if self._compiled is None:
            self._compiled = {
                name: tuple(
                    (p, _compile_phrase(p)) for p in _check_phrases(name, getattr(self, name))
                )
                for name in type(self).model_fields
            }
        if category not in self._compiled:
            raise ConfigError(f"unknown lexicon list {category!r}")
        return self._compiled[category]

    def mask(self, normalized: str) -> str:
        """Replace ``ignore`` phrases in normalized text by a token nothing matches."""
        out = normalized
        for _, pattern in self._patterns("ignore"):
            out = pattern.sub(_MASK, out)
        return out

    def find_normalized(self, category: str, normalized: str) -> list[HintMatch]:
        """All occurrences of a list's phrases in already normalized (and masked) text.

        Overlapping occurrences are all returned; the profiler resolves overlaps.
        """
        found: list[HintMatch] = []
        for _, pattern in self._patterns(category):
            for m in pattern.finditer(normalized):
                found.append(
                    HintMatch(category=category, phrase=m.group(0), start=m.start(), end=m.end())
                )
        found.sort(key=lambda h: (h.start, -(h.end - h.start)))
        return found

    def find(self, category: str, text: str) -> list[HintMatch]:
        """Occurrences of a list's phrases in raw text (normalized and masked first)."""
        return self.find_normalized(category, self.mask(normalize_text(text)))


DEFAULT_LEXICON = HintLexicon()
"""The lexicon :func:`~langchain_atma.retrieval.profiler.profile_query` uses."""
