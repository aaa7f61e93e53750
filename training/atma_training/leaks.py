"""Evaluation text that must never enter the product, the tests or the corpus.

Three kinds of evaluation source:

* **LoCoMo** (``locomo10.json``, read from the user's copy; CC BY-NC 4.0);
* the **held-out LTP cue sets** (``benchmarks/heldout/*.json``) and held-out
  write-policy turns (``benchmarks/write_policy/*heldout*.jsonl``);
* the **LTP builder** (:mod:`langchain_atma.benchmarks.ltp_build`): its cue and
  question templates and its value pools.

A *leak* is a run of :data:`SHINGLE_WORDS` (8) or more words shared with a
source (after lower-casing and keeping letters, digits and apostrophes; a
template is split at its ``{placeholders}``); a *phrase* of a held-out cue set:
a run of :data:`PHRASE_WORDS` (5) words with at least three content words (not
in :data:`atma_training.diversity.FUNCTION_WORDS`), shared with a held-out file
(these files are short and written for evaluation, so even a phrase of theirs is
kept out); or a *banned name*: a
capitalized value of the builder's pools or name list, a capitalized value of a
held-out unit, or a LoCoMo speaker name, found as a whole word with its
capital letter (a possessive "'s" after it counts). Common nouns of the pools
("nurse", "cat") are not names.

Example:
    >>> sorted(shingles("one two three four five six seven eight nine", 8))
    ['one two three four five six seven eight', 'two three four five six seven eight nine']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "EvalSources",
    "Leak",
    "PHRASE_WORDS",
    "SHINGLE_WORDS",
    "find_leaks",
    "load_eval_sources",
    "repo_root",
    "shingles",
]

SHINGLE_WORDS = 8
"""Length of a shared word run that counts as a leak."""

PHRASE_WORDS = 5
"""Length of a held-out phrase that counts as a leak."""

PHRASE_CONTENT_WORDS = 3
"""Content words a held-out phrase needs (fewer: common English, "for the first time in")."""

_WORD = re.compile(r"[a-z0-9']+")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def repo_root() -> Path:
    """The repository root (the folder holding ``training/``)."""
    return Path(__file__).resolve().parents[2]


def shingles(text: str, n: int = SHINGLE_WORDS) -> Iterator[str]:
    """Every run of ``n`` words of ``text`` (lower-cased, letters, digits, apostrophes)."""
    words = _WORD.findall(text.lower())
    for i in range(len(words) - n + 1):
        yield " ".join(words[i : i + n])


def phrases(text: str, n: int = PHRASE_WORDS) -> Iterator[str]:
    """Every run of ``n`` words of ``text`` with :data:`PHRASE_CONTENT_WORDS` content words."""
    from atma_training.diversity import FUNCTION_WORDS

    for run in shingles(text, n):
        if sum(w not in FUNCTION_WORDS for w in run.split()) >= PHRASE_CONTENT_WORDS:
            yield run


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


@dataclass
class EvalSources:
    """Shingles and banned names of every evaluation source found."""

    shingles: dict[str, str] = field(default_factory=dict)
    """Shingle -> the source it came from."""
    phrases: dict[str, str] = field(default_factory=dict)
    """Held-out phrase -> the held-out file it came from."""
    names: dict[str, str] = field(default_factory=dict)
    """Banned name -> the source it came from."""
    sources: list[str] = field(default_factory=list)
    """The sources that were read."""
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)

    def name_pattern(self) -> re.Pattern[str] | None:
        """One regex matching every banned name as a whole word (built once)."""
        if self._pattern is None and self.names:
            alts = sorted((re.escape(n) for n in self.names), key=len, reverse=True)
            self._pattern = re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")(?!\w)")
        return self._pattern

    def add_text(self, text: str, source: str) -> None:
        """Add every shingle of ``text`` (split at template placeholders)."""
        for part in _PLACEHOLDER.split(text):
            for s in shingles(part):
                self.shingles.setdefault(s, source)

    def add_phrases(self, text: str, source: str) -> None:
        """Add every phrase of a held-out ``text`` (split at template placeholders)."""
        for part in _PLACEHOLDER.split(text):
            for s in phrases(part):
                self.phrases.setdefault(s, source)

    def add_name(self, name: str, source: str) -> None:
        """Ban a capitalized value (ignored unless it starts with a capital letter)."""
        name = name.strip()
        if len(name) >= 2 and name[0].isupper():
            self.names.setdefault(name, source)


def _add_locomo(src: EvalSources, path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for sample in data:
        conv = sample.get("conversation", {})
        for key in ("speaker_a", "speaker_b"):
            if isinstance(conv.get(key), str):
                src.add_name(conv[key], path.name)
        for text in _strings(sample):
            src.add_text(text, path.name)
    src.sources.append(str(path))


def _add_heldout(src: EvalSources, path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    units = data.get("units", []) if isinstance(data, dict) else data
    for text in _strings(data):
        src.add_text(text, path.name)
        src.add_phrases(text, path.name)
    for unit in units if isinstance(units, list) else []:
        if isinstance(unit, dict):
            for key in ("old_value", "current_value"):
                if isinstance(unit.get(key), str):
                    src.add_name(unit[key], path.name)
    src.sources.append(str(path))


def _add_heldout_turns(src: EvalSources, path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            text = json.loads(line).get("text")
            if isinstance(text, str):
                src.add_text(text, path.name)
                src.add_phrases(text, path.name)
    src.sources.append(str(path))


def _add_ltp_builder(src: EvalSources) -> None:
    from langchain_atma.benchmarks import ltp_build as b

    tag = "ltp_build.py"
    for name in b._NAMES:
        src.add_name(name, tag)
    for slot in b._CATALOG:
        for value in slot.pool:
            src.add_name(value, tag)
        for group in (slot.old, slot.new, slot.ask_old, slot.ask_new, slot.trans):
            for text in group:
                src.add_text(text, tag)
    for group in (b._VALUE_TRANS, b._SCOPE_TRANS, b._OPENERS, b._CLOSERS):
        for text in group:
            src.add_text(text, tag)
    src.sources.append("langchain_atma.benchmarks.ltp_build")


def load_eval_sources(root: Path | None = None, locomo: Path | None = None) -> EvalSources:
    """Read every evaluation source that exists (LoCoMo only when its file is there).

    Args:
        root: the repository root (default: :func:`repo_root`).
        locomo: ``locomo10.json`` (default: ``<root>/../shared/data/locomo/locomo10.json``).
    """
    root = root or repo_root()
    src = EvalSources()
    locomo = locomo or root.parent / "shared" / "data" / "locomo" / "locomo10.json"
    if locomo.is_file():
        _add_locomo(src, locomo)
    for path in sorted((root / "benchmarks" / "heldout").glob("*.json")):
        _add_heldout(src, path)
    for path in sorted((root / "benchmarks" / "write_policy").glob("*heldout*.jsonl")):
        _add_heldout_turns(src, path)
    _add_ltp_builder(src)
    return src


@dataclass(frozen=True)
class Leak:
    """One piece of evaluation text found in a target file."""

    path: str
    kind: str
    """``shingle``, ``phrase`` or ``name``."""
    text: str
    source: str


def find_leaks(
    text: str, src: EvalSources, path: str = "", *, names: bool = True, limit: int = 50
) -> list[Leak]:
    """The shared word runs, held-out phrases and banned names in ``text`` (at most ``limit``)."""
    out: list[Leak] = []
    seen: set[str] = set()
    for kind, grams, table in (
        ("shingle", shingles(text), src.shingles),
        ("phrase", phrases(text), src.phrases),
    ):
        for s in grams:
            if s in table and s not in seen:
                seen.add(s)
                out.append(Leak(path, kind, s, table[s]))
                if len(out) >= limit:
                    return out
    pattern = src.name_pattern() if names else None
    if pattern is not None:
        for m in pattern.finditer(text):
            if m.group(0) not in seen:
                seen.add(m.group(0))
                out.append(Leak(path, "name", m.group(0), src.names[m.group(0)]))
                if len(out) >= limit:
                    break
    return out
