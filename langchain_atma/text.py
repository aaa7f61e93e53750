"""The small shared text layer: normalizing, sentences, words, names and numbers.

Every level that reads English without a model imports this module: the write
path (does a record state anything at all, ``MemoryRecord.states_fact``), the
bridge closure of the commit plan (:func:`names_both`) and the offline
answerer (which sentences state something, which clause is about which value).
The bank's judgment of a change is *not* here: it is the learned judge's
(:mod:`langchain_atma.bank.learned_judge`).

Everything is deterministic and cached. The word lists are short and generic:
stop words, reaction openers, and the cue words the answerer's clause choice
reads (:data:`ENDED`, :data:`STILL`, :data:`SHIFT`).

Example:
    >>> cues("How are you?").statement
    False
    >>> sorted(content_words("Where did Ana hear about the workshop flyers?"))
    ['ana', 'flyer', 'hear', 'workshop']
    >>> [sorted(w) for w in statement_words("Wow, nice! I play clarinet. How about you?")]
    [['clarinet', 'play']]
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata

from langchain_atma._checks import positive_int
from langchain_atma.errors import InvalidRecordError

__all__ = [
    "ACTIVITY",
    "ENDED",
    "FILLER",
    "SHIFT",
    "STILL",
    "STOPWORDS",
    "TextCues",
    "about_self",
    "content_words",
    "cues",
    "names_both",
    "normalize",
    "sentences",
    "statement_words",
    "stem",
    "value_roots",
]

STOPWORDS = frozenset(
    "a an the and or of to in on at for with by from as is are was were be been am it its "
    "this that these those there here i me my mine we us our ours you your he she him her "
    "his they them their not no do does did have has had will would can could should shall "
    "may might must so than then too very just also about into over under up down out off "
    "again once all any both each few more most other some such only own same s t what "
    "which who whom whose when where why how because while until if nor but every really "
    "per".split()
)
"""Words that never count as content."""

FILLER = frozenset(
    "like lol haha ha omg yeah ok okay oh wow hey hi hello thanks thank um uh hmm well "
    "honestly literally basically actually totally pretty quite super kind sort thing "
    "things stuff lot lots get got getting go going went gone make made feel felt know "
    "think said say guess mean sure let come came see saw tell told one day time week "
    "month year years days weeks months today yesterday tonight".split()
)
"""Chat words that name no value."""

REACTION = frozenset(
    "that this those these it its wow woah whoa looks look sounds sound nice great awesome "
    "cool amazing so what how congrats congratulations aw aww oh omg yay lovely beautiful "
    "wonderful glad good fantastic incredible haha lol".split()
)
"""First words of a reaction to the listener ("Wow, that looks great!")."""

ENDED = (
    "no longer",
    "not anymore",
    "not any more",
    "no more",
    "quit",
    "stopped",
    "gave up",
    "given up",
    "moved out",
    "broke up",
    "split up",
    "sold",
    "passed away",
    "ended",
    "cancelled",
    "canceled",
    "dropped out",
    "dropped the",
    "dropped my",
    "retired",
    "left my",
    "lost my",
    "got rid of",
    "gave away",
    "said goodbye to",
)
"""Phrases saying that a state ended (a denial such as "won't fix" is not one); "not
... anymore" with up to five words between counts too."""
ACTIVITY = frozenset(
    "play love like enjoy learn lesson class practice live use try eat drink watch "
    "listen read keep own work".split()
)
"""Verbs of doing and liking: never a value ("I play the cello": the value is the cello)."""
STILL = ("still", "always")
"""Continuation wording."""
SHIFT = ENDED + (
    "now",
    "these days",
    "nowadays",
    "lately",
    "recently",
    "switched",
    "switch",
    "started",
    "starting",
    "began",
    "moved",
    "new",
    "instead",
    "anymore",
    "any more",
    "changed",
    "picked up",
    "took up",
    "got into",
    "hooked on",
    "also",
    "too",
    "my old",
    "used to",
    "became",
    "turned",
)
"""Wording saying that something changed, started, ended or was added."""

_CONTRACTIONS = (
    (r"\bcan't\b", "can not"),
    (r"\bwon't\b", "will not"),
    (r"n't\b", " not"),
    (r"'re\b", " are"),
    (r"'ve\b", " have"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
    (r"\bi'm\b", "i am"),
    (r"'s\b", ""),
)
_SPEAKER_PREFIX = re.compile(
    r"^\s*(?:speaker\s+)?[A-Za-z][\w .'\-]{0,40}?\s+says\s*:\s*", re.IGNORECASE
)
_PARENTHETICAL = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9$%]+(?:[.,][0-9]+)*")
_CAPITALIZED = re.compile(r"(?<![\w'])([A-Z][a-zA-Z\-]+)")
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|twenty|thirty|forty|fifty|hundred|thousand|dozen)\b"
)
_SELF = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
_LISTENER = frozenset({"you", "u", "ya", "your", "yours", "congrats", "congratulations"})
_QUESTION_START = frozenset(
    "do does did are is was were have has what where when why how who which can could "
    "would will should any anyone anybody ever".split()
)
_POLITE = frozenset("please pls plz ok okay so hey hi um uh and but also now".split())
_REQUEST = frozenset(
    "tell give show write draft explain help find make list summarize summarise translate "
    "create generate suggest recommend remind pretend imagine describe compare check fix "
    "rewrite send book calculate convert name define outline continue repeat ignore "
    "answer act play roleplay break".split()
)
"""Imperative openers of a request to the listener."""
_HYPOTHETICAL = frozenset("if suppose supposing say hypothetically".split())
"""Openers of a supposition ("If I were ...", "Say I won ..."): nothing to remember."""
_REQUEST_PAIRS = frozenset(
    {
        ("can", "you"),
        ("could", "you"),
        ("would", "you"),
        ("will", "you"),
        ("can", "u"),
        ("let", "us"),
        ("what", "if"),
    }
)
"""Two-word openers of a request ("can you ...", "let's ...")."""
_WANT = frozenset("need want would".split())
_OPINION = frozenset("think wonder believe guess bet suppose reckon heard read".split())
_OWN = frozenset("im ive id ill myself mine".split())
_GREETING = frozenset("hey hi hello thanks thank bye dear yo congrats congratulations".split())
_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march "
    "april may june july august september october november december i".split()
)


def _phrase_regex(phrases: tuple[str, ...]) -> re.Pattern[str]:
    alts = sorted((re.escape(p) for p in phrases), key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")(?!\w)")


_ENDED_RE, _STILL_RE, _SHIFT_RE = (_phrase_regex(p) for p in (ENDED, STILL, SHIFT))
_NOT_ANYMORE = re.compile(r"\bnot(?:\s+\S+){1,5}?\s+any\s?more\b")
_NEGATED_END = re.compile(r"\b(?:not|never|will not|would not)\s+(?:\w+\s+)?$")


def _bounded(text: object, max_chars: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidRecordError(f"{name} must be a str, got {type(text).__name__}")
    return text[: positive_int(max_chars, "max_chars")]


def normalize(text: str) -> str:
    """Lower case, contractions expanded, a leading ``"X says:"`` dropped, one space."""
    t = unicodedata.normalize("NFKC", text)
    t = _SPEAKER_PREFIX.sub("", t, count=1)
    t = t.replace("\u2019", "'").replace("\u2018", "'").replace("`", "'").lower()
    for pat, rep in _CONTRACTIONS:
        t = re.sub(pat, rep, t)
    return " ".join(t.split())


def sentences(text: str) -> list[str]:
    """Sentences of a text; parenthetical asides (photo captions) are dropped."""
    core = _PARENTHETICAL.sub(" ", text)
    parts = [p.strip() for p in _SENTENCE_END.split(core) if p.strip()]
    return parts or [text]


def stem(word: str) -> str:
    """A tiny, predictable suffix stripper (plural and tense forms)."""
    for suf in ("ings", "ing", "ies", "ied", "ed", "es", "s"):
        if len(word) > len(suf) + 2 and word.endswith(suf):
            base = word[: -len(suf)]
            if suf in ("ies", "ied"):
                return base + "y"
            if (
                suf in ("ed", "ing", "ings")
                and len(base) > 2
                and base[-1] == base[-2]
                and base[-1] in "bdgmnprt"
            ):
                return base[:-1]
            return base
    return word


def _tokens(sentence: str) -> list[str]:
    return _WORD.findall(normalize(sentence))


def _names(sentence: str) -> frozenset[str]:
    """Capitalized words that are not the sentence's first word, greeting or month."""
    out = set()
    for m in _CAPITALIZED.finditer(sentence):
        before = sentence[: m.start(1)].rstrip()
        low = m.group(1).lower()
        if not before or before[-1] in ".!?:" or low in _CALENDAR:
            continue
        prev = re.findall(r"([A-Za-z']+)\W*$", before)
        if prev and prev[0].lower() in _GREETING:
            continue  # "Hey Mel": the listener's name
        out.add(stem(low))
    return frozenset(out)


@dataclasses.dataclass(frozen=True)
class _Sentence:
    text: str
    tokens: tuple[str, ...]
    question: bool
    reaction: bool
    self_ref: bool
    to_listener: bool
    names: frozenset[str]
    numbers: bool

    @property
    def statement(self) -> bool:
        return (
            not self.question
            and not self.reaction
            and bool(_long_words(self.tokens) or self.numbers)
        )


@functools.lru_cache(maxsize=8192)
def _sentence(text: str) -> _Sentence:
    tokens = tuple(_tokens(text))
    toks = set(tokens)
    stripped = text.strip()
    self_ref = bool(toks & _SELF)
    first = tokens[0] if tokens else ""
    question = stripped.endswith("?") and (
        first in _QUESTION_START or not self_ref or bool(toks & _LISTENER)
    )
    names = _names(stripped)
    numbers = bool(_NUMBER.search(normalize(stripped)))
    short = len(tokens) <= 3
    opener = next((t for t in tokens if t not in FILLER), first)
    reaction = (
        not self_ref
        and not names
        and not numbers
        and (stripped.endswith("!") or short)
        and (opener in REACTION or first in REACTION or first in _GREETING)
    )
    return _Sentence(
        stripped,
        tokens,
        question,
        reaction,
        self_ref,
        bool(toks & _LISTENER) and not ({"i", "we"} & toks),
        names,
        numbers,
    )


def _long_words(tokens: tuple[str, ...] | list[str]) -> frozenset[str]:
    return frozenset(
        stem(t)
        for t in tokens
        if t.isalpha() and len(t) >= 3 and t not in STOPWORDS and t not in FILLER
    )


@dataclasses.dataclass(frozen=True)
class TextCues:
    """What the shared text layer sees in one text.

    Attributes:
        statement: at least one sentence states something (not only questions,
            greetings or reactions to the listener).
        shift: change, ending or addition wording (:data:`SHIFT`).
        ended: a state ended (:data:`ENDED`, not under "not" / "never").
        still: continuation wording (:data:`STILL`).
        names: stems of the proper names in the speaker's own statements.
        numbers: one of the speaker's own statements gives a number.
    """

    statement: bool
    shift: bool = False
    ended: bool = False
    still: bool = False
    names: frozenset[str] = frozenset()
    numbers: bool = False


def cues(text: str, max_chars: int = 4000) -> TextCues:
    """The cues of a text (cached; deterministic).

    Raises:
        InvalidRecordError: ``text`` is not a string.
        ConfigError: ``max_chars`` is not a positive int.
    """
    return _cues(_bounded(text, max_chars))


def _ended(norm: str) -> bool:
    return bool(_NOT_ANYMORE.search(norm)) or any(
        not _NEGATED_END.search(norm[: m.start()]) for m in _ENDED_RE.finditer(norm)
    )


@functools.lru_cache(maxsize=8192)
def _cues(body: str) -> TextCues:
    parts = [_sentence(s) for s in sentences(body)]
    own = [s for s in parts if s.statement and not s.to_listener]
    norm = normalize(body)
    ended = _ended(norm)
    return TextCues(
        statement=any(s.statement for s in parts),
        shift=bool(_SHIFT_RE.search(norm)) or ended,
        ended=ended,
        still=bool(_STILL_RE.search(norm)),
        names=frozenset(n for s in own for n in s.names),
        numbers=any(s.numbers for s in own),
    )


def about_self(text: str, max_chars: int = 4000) -> bool:
    """Does the text state something about its speaker (a memory worth keeping)?

    True when one sentence is a statement with a first-person word that is not a
    question, a reaction, a request to the listener ("Tell me a story", "can you
    ...", "I need you to ..."), nor an opinion about the world ("I think the ...",
    "I wonder ...") with no further first-person word. The agent integrations' write
    policy (:mod:`langchain_atma.middleware`).

    Example:
        >>> about_self("Just adopted a greyhound, so my mornings are walks now.")
        True
        >>> about_self("Tell me a story about dragons.")
        False

    Raises:
        InvalidRecordError: ``text`` is not a string.
        ConfigError: ``max_chars`` is not a positive int.
    """
    body = _bounded(text, max_chars)
    return any(_self_statement(_sentence(s)) for s in sentences(body))


def _self_statement(s: _Sentence) -> bool:
    if not s.statement or s.question or s.to_listener:
        return False
    words = [t for t in s.tokens if t not in _POLITE]
    if not words or words[0] in _REQUEST or words[0] in _HYPOTHETICAL:
        return False
    if tuple(words[:2]) in _REQUEST_PAIRS or words[0] in ("you", "u"):
        return False  # "can you ...", "let's ...", "you're a sommelier and I ..."
    if words[0] == "i" and len(words) > 1 and words[1] in _WANT and "you" in words[2:7]:
        return False  # "I need you to ...", "I would be grateful if you could ..."
    if words[0] in ("i", "we") and len(words) > 2 and words[1] in _OPINION:
        return bool(set(words[2:]) & _SELF)  # "I think I'm allergic": yes
    return s.self_ref or bool(set(words) & _OWN)


def content_words(text: str, max_chars: int = 4000) -> frozenset[str]:
    """Stems of the words of at least three letters, no stop words, filler or numbers.

    Raises:
        InvalidRecordError: ``text`` is not a string.
        ConfigError: ``max_chars`` is not a positive int.
    """
    return _long_words(_tokens(_bounded(text, max_chars)))


def statement_words(
    text: str, max_chars: int = 4000, *, first_person: bool = False
) -> tuple[frozenset[str], ...]:
    """The content words of each sentence that states something, not to the listener.

    With ``first_person`` only sentences with a first-person word count.

    Raises:
        InvalidRecordError: ``text`` is not a string.
        ConfigError: ``max_chars`` is not a positive int.
    """
    return _statement_words(_bounded(text, max_chars), bool(first_person))


@functools.lru_cache(maxsize=8192)
def _statement_words(body: str, first_person: bool) -> tuple[frozenset[str], ...]:
    out = []
    for s in map(_sentence, sentences(body)):
        if s.statement and not s.to_listener and (s.self_ref or not first_person):
            out.append(_long_words(s.tokens))
    return tuple(out)


_CUE_STEMS = frozenset(stem(w) for p in SHIFT + STILL for w in p.split()) | frozenset(
    stem(w) for w in ACTIVITY
)


def value_roots(text: str, max_chars: int = 4000, *, min_chars: int = 4) -> frozenset[str]:
    """The values a text names: content words and names, not cue or :data:`ACTIVITY` words.

    Compared by their first five letters after stemming ("embroidery" and
    "embroidering" share ``embro``).

    Raises:
        InvalidRecordError: ``text`` is not a string.
        ConfigError: ``max_chars`` or ``min_chars`` is not a positive int.
    """
    positive_int(min_chars, "min_chars")
    return _value_roots(_bounded(text, max_chars), min_chars)


@functools.lru_cache(maxsize=8192)
def _value_roots(body: str, min_chars: int) -> frozenset[str]:
    words = _long_words(_tokens(body)) | frozenset(
        n for s in sentences(body) for n in _sentence(s).names
    )
    return frozenset(w[:5] for w in words if w not in _CUE_STEMS and len(w) >= min_chars)


def names_both(bridge: str, old: str, new: str, max_chars: int = 4000) -> bool:
    """Whether ``bridge`` names a value of ``old`` that ``new`` lacks, and vice versa.

    A record naming the earlier and the later value ("mixing some origami in
    with my usual embroidery") relates the two records that state them.

    Raises:
        InvalidRecordError: a text is not a string.
        ConfigError: ``max_chars`` is not a positive int.
    """
    rb, ro, rn = (
        _value_roots(_bounded(t, max_chars, name), 4)
        for name, t in (("bridge", bridge), ("old", old), ("new", new))
    )
    return bool((ro - rn) & rb) and bool((rn - ro) & rb)
