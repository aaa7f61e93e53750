"""Speaker-aware query rewrite: third-person questions about a speaker -> first person.

Memories of a conversation are what each speaker *said*, in the first person
("I'm running 38 km a week"), while questions about them name the speaker in
the third person ("How far does Corisande run per week now?"). A sentence
encoder scores such a pair poorly: the name and the third-person grammar pull
the question toward records that *mention* Corisande (greetings, the other
speaker's replies) rather than toward what she said about herself.

When a question names exactly one known speaker of the namespace, the seed
search therefore also embeds the question as that speaker would ask it about
themself ("How far do I run per week now?") and fuses both hit lists (best
score per record). The rewrite is purely grammatical:

* the speaker's name -> ``I`` (``me`` after a preposition), a possessive
  ``Name's`` -> ``my``;
* third-person singular pronouns (she/he, her/his, him, herself/himself) -> the
  first person, since they refer to the one person the question is about;
* auxiliary agreement: ``does I`` -> ``do I``, ``I is`` -> ``I am`` ...

Which capitalized words are speakers is decided by the bank (a record of that
speaker exists in the namespace), never by the text alone, so "Boston" or
"Monday" are never rewritten. The original question is still used for the view
profile and for the answer.

Example:
    >>> from langchain_atma.retrieval.rewrite import first_person_query, name_candidates
    >>> name_candidates("Which city does Corisande live in now?")
    ['Corisande']
    >>> first_person_query("Which city does Corisande live in now?", "Corisande")
    'Which city do I live in now?'
    >>> first_person_query("What did Mel's sister give her?", "Mel")
    'What did my sister give me?'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["first_person_query", "name_candidates", "the_named_speaker"]

MAX_CANDIDATES = 4
"""At most this many capitalized words of a question are checked as speakers."""

_NOT_NAMES = frozenset(
    """what which where when who whom whose why how did does do is are was were has have
    had can could would should will shall may might must in on at the a an and or but if
    after before since during for from to with about of i i'm i've i'd my me we our you
    your he she it they them their his her him this that these those there here then
    now today yesterday tomorrow yes no not please tell name list give according""".split()
)
_PREPOSITIONS = frozenset(
    """to with for about from at by of on in into onto toward towards like than without
    behind beside besides near around among between against after before under over
    through via""".split()
)
# after "her": words that do not start a noun phrase ("gave her to ...", "told her that")
_NOT_NOUN_AFTER_HER = frozenset(
    """to and or but that than as for with about from at by of on in if when while
    because so then too yet again before after since until""".split()
)
_CAP = re.compile(r"\b[A-Z][\w\-]*(?:['\u2019]s\b)?")
_AUX_BEFORE = {
    "does": "do",
    "is": "am",
    "has": "have",
    "doesn't": "don't",
    "isn't": "am not",
    "hasn't": "haven't",
    "was": "was",
    "wasn't": "wasn't",
}
_AUX_AFTER = {
    "is": "am",
    "has": "have",
    "does": "do",
    "doesn't": "don't",
    "isn't": "am not",
    "hasn't": "haven't",
    "'s": "'m",
}


def name_candidates(question: str) -> list[str]:
    """Capitalized words and two-word runs of a question that may be a speaker's name.

    Question words, pronouns and other function words are skipped; a trailing
    possessive ``'s`` is removed. Two-word runs ("Mary Jane") come before their
    single words. At most :data:`MAX_CANDIDATES` are returned, in order.

    Args:
        question: the question text.

    Returns:
        Candidate names, deduplicated.
    """
    if not isinstance(question, str):
        return []
    words = [re.sub(r"['\u2019]s$", "", m.group(0)) for m in _CAP.finditer(question[:2_000])]
    spans = [(m.start(), m.end()) for m in _CAP.finditer(question[:2_000])]
    out: list[str] = []
    for i, w in enumerate(words):
        if w.lower() in _NOT_NAMES or len(w) < 2:
            continue
        nxt = i + 1
        if (
            nxt < len(words)
            and words[nxt].lower() not in _NOT_NAMES
            and question[spans[i][1] : spans[nxt][0]] == " "
        ):
            out.append(f"{w} {words[nxt]}")
        out.append(w)
    return list(dict.fromkeys(out))[:MAX_CANDIDATES]


def the_named_speaker(speakers: Sequence[str]) -> str | None:
    """The one speaker a question names, given its candidates that are speakers.

    "Mary Jane" and "Mary" may both be speakers' names found in one question:
    a name inside a longer one is dropped. ``None`` when no name, or more than
    one, is left.

    Example:
        >>> the_named_speaker(["Mary Jane", "Mary"])
        'Mary Jane'
        >>> the_named_speaker(["Ann", "Bob"]) is None
        True
    """
    named = [n for n in speakers if not any(n != m and n in m.split() for m in speakers)]
    return named[0] if len(named) == 1 else None


def _case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def first_person_query(question: str, name: str) -> str:
    """Rewrite a question about ``name`` as that person would ask it about themself.

    Args:
        question: the question.
        name: the speaker's name as it appears in the question.

    Returns:
        The rewritten question (unchanged when ``name`` does not occur).
    """
    if not name or not isinstance(question, str):
        return question
    esc = re.escape(name)
    if not re.search(rf"\b{esc}\b", question):
        return question
    out = re.sub(rf"\b{esc}['\u2019]s\b|\b{esc}['\u2019](?=\s)", "my", question)

    def _name(m: re.Match[str]) -> str:
        before = out[: m.start()].rstrip().split()
        prev = before[-1].lower().strip(",;:") if before else ""
        return "me" if prev in _PREPOSITIONS else "I"

    out = re.sub(rf"\b{esc}\b", _name, out)
    out = re.sub(r"\b(she|he)\b", lambda m: _case("I", m.group(0)), out, flags=re.IGNORECASE)
    out = re.sub(
        r"\b(herself|himself)\b", lambda m: _case("myself", m.group(0)), out, flags=re.IGNORECASE
    )
    out = re.sub(r"\bhis\b", lambda m: _case("my", m.group(0)), out, flags=re.IGNORECASE)
    out = re.sub(r"\bhim\b", lambda m: _case("me", m.group(0)), out, flags=re.IGNORECASE)

    def _her(m: re.Match[str]) -> str:
        nxt = re.match(r"\s+([A-Za-z][\w\-']*)", out[m.end() :])
        possessive = nxt is not None and nxt.group(1).lower() not in _NOT_NOUN_AFTER_HER
        return _case("my" if possessive else "me", m.group(0))

    out = re.sub(r"\bher\b", _her, out, flags=re.IGNORECASE)

    def _before(m: re.Match[str]) -> str:
        return f"{_case(_AUX_BEFORE[m.group(1).lower()], m.group(1))} I"

    out = re.sub(
        r"\b(does|is|has|doesn't|isn't|hasn't|was|wasn't) I\b", _before, out, flags=re.IGNORECASE
    )

    def _after(m: re.Match[str]) -> str:
        aux = m.group(1)
        rep = _AUX_AFTER[aux.lower()]
        return f"I{rep}" if rep.startswith("'") else f"I {rep}"

    out = re.sub(r"\bI (is|has|does|doesn't|isn't|hasn't)\b", _after, out)
    return re.sub(r"\bI('s)\b", _after, out)
