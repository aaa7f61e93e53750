"""Diversity measures of the corpus: distinct n-grams and sentence frames.

* **distinct-n**: distinct n-grams over all n-grams of a set of texts (1.0 = no
  n-gram repeats); computed over the words of every text.
* **sentence frame**: a text with its content words replaced by ``_`` (the
  function words and punctuation-free word order stay; runs of ``_`` merge).
  Two texts written from one template share a frame ("I moved to _ last _" ->
  "i _ to _ last _"); independently written sentences rarely do once they have
  :data:`FRAME_MIN_WORDS` words. A *pair frame* is the frames of its two texts;
  the corpus brief asks that no two pairs share one.

Example:
    >>> frame("I moved to Lisbon last spring with my sister")
    'i _ to _ last _ with my _'
    >>> round(distinct_n(["a b a b"], 1), 2)
    0.5
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

__all__ = [
    "FRAME_MIN_WORDS",
    "FUNCTION_WORDS",
    "content_words",
    "distinct_n",
    "frame",
    "shared_content",
    "shared_frames",
]

FRAME_MIN_WORDS = 8
"""Texts shorter than this have no frame (short sentences share skeletons by chance)."""

FUNCTION_WORDS = frozenset(
    "a an the and or but nor so yet if then than that this these those there here "
    "i me my mine myself we us our ours you your yours he him his she her hers it its "
    "they them their theirs who whom whose which what when where why how "
    "is am are was were be been being do does did done have has had having "
    "will would shall should can could may might must to of in on at by for with "
    "from about into onto over under after before since until while as up down out off "
    "not no never all any some each every both few more most other such only own same "
    "just too very also again still even ever s t m re ve ll d don didn doesn isn wasn "
    "aren weren haven hasn hadn won wouldn can't couldn shouldn i'm it's i've i'd i'll "
    "that's don't didn't doesn't isn't wasn't won't".split()
)
"""Words a sentence frame keeps (everything else becomes ``_``)."""

_WORD = re.compile(r"[a-z0-9']+")

_CHAT_WORDS = frozenset(
    "lol lmao haha hahaha omg ok okay yeah yep yes nah tbh honestly ugh hey hi oh well "
    "like really u ur im get got go going went make made thing things bit lot way "
    "know think feel want need good great day week today time back one".split()
)
"""Chat filler that says nothing about a topic (ignored by :func:`content_words`)."""


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    """The topical words of ``text``: not function words, chat filler or 1-2 letters.

    A plural ending is dropped so that "plant" / "plants" and "ferry" / "ferries"
    count as one word.

    Example:
        >>> sorted(content_words("lol my two plants are thriving, the plant shop rocks"))
        ['plant', 'rock', 'shop', 'thriving', 'two']
    """
    out: set[str] = set()
    for w in _words(text):
        if len(w) < 3 or w in FUNCTION_WORDS or w in _CHAT_WORDS:
            continue
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def shared_content(texts: Sequence[str]) -> set[str]:
    """Content words shared by any two of ``texts`` (empty: the texts are disjoint)."""
    out: set[str] = set()
    sets = [content_words(t) for t in texts]
    for i, a in enumerate(sets):
        for b in sets[i + 1 :]:
            out |= a & b
    return out


def frame(text: str) -> str | None:
    """The sentence frame of ``text``, or ``None`` when it is too short."""
    words = _words(text)
    if len(words) < FRAME_MIN_WORDS:
        return None
    out: list[str] = []
    for w in words:
        tok = w if w in FUNCTION_WORDS else "_"
        if tok == "_" and out and out[-1] == "_":
            continue
        out.append(tok)
    if out.count("_") < 3:
        return None
    return " ".join(out)


def distinct_n(texts: Iterable[str], n: int) -> float:
    """Distinct n-grams / all n-grams over ``texts`` (0.0 when there are none)."""
    total = 0
    seen: set[tuple[str, ...]] = set()
    for t in texts:
        w = _words(t)
        for i in range(len(w) - n + 1):
            seen.add(tuple(w[i : i + n]))
            total += 1
    return len(seen) / total if total else 0.0


def shared_frames(items: Sequence[tuple[str, Sequence[str]]]) -> dict[str, list[str]]:
    """Frames shared by more than one item.

    Args:
        items: ``(item_id, texts)``; an item's frame is the tuple of its texts'
            frames (an item with a text too short to frame has none).

    Returns:
        frame -> the ids of the items that share it.
    """
    by_frame: dict[str, list[str]] = defaultdict(list)
    for item_id, texts in items:
        frames = [frame(t) for t in texts]
        if any(f is None for f in frames):
            continue
        by_frame[" || ".join(f for f in frames if f)].append(item_id)
    return {f: ids for f, ids in by_frame.items() if len(ids) > 1}


def frame_counts(texts: Iterable[str]) -> Counter[str]:
    """How often each single-text frame occurs."""
    return Counter(f for f in (frame(t) for t in texts) if f)
