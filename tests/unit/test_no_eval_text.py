"""No evaluation text in the product, its tests, its docs or the training corpus.

Evaluation sources (:mod:`atma_training.leaks`): LoCoMo (when its file is
there), the held-out cue sets in ``benchmarks/heldout/`` and the LTP builder's
templates and value pools. A shared run of 8 words, or a banned name (a
capitalized pool value, a held-out value, a LoCoMo speaker), fails the test.
The builder itself is the source of its own templates and names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from atma_training.leaks import EvalSources, find_leaks, load_eval_sources, repo_root

ROOT = repo_root()
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
_SCANNED = ("langchain_atma", "tests", "training", "examples", "graphs", "scripts", "docs")
_EXTS = {".py", ".json", ".jsonl", ".md", ".txt", ".toml", ".yaml", ".yml", ".csv", ".html"}
_BUILDER = ROOT / "langchain_atma" / "benchmarks" / "ltp_build.py"


def _targets() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in _SCANNED:
        files += [
            p
            for p in sorted((ROOT / top).rglob("*"))
            if p.is_file() and p.suffix in _EXTS and ".venv" not in p.parts
        ]
    return files


def _leaks(src: EvalSources) -> list[str]:
    out = []
    for path in _targets():
        text = path.read_text(encoding="utf-8", errors="replace")
        found = find_leaks(text, src, str(path.relative_to(ROOT)))
        if path == _BUILDER:  # the builder's own templates and names are its source
            found = [lk for lk in found if lk.source != "ltp_build.py"]
        out += [f"{lk.path}: {lk.kind} {lk.text!r} (from {lk.source})" for lk in found]
    return out


def test_no_heldout_or_builder_text() -> None:
    src = load_eval_sources(locomo=Path("/nonexistent"))
    assert src.names and src.shingles
    leaks = _leaks(src)
    assert not leaks, "\n".join(leaks[:40])


@pytest.mark.skipif(not LOCOMO.is_file(), reason="LoCoMo is not at ../shared/data/locomo")
def test_no_locomo_text() -> None:
    src = load_eval_sources(locomo=LOCOMO)
    leaks = _leaks(src)
    assert not leaks, "\n".join(leaks[:40])


def test_the_scan_finds_what_it_looks_for(tmp_path: Path) -> None:
    src = EvalSources()
    src.add_text("one two three four five six seven eight nine", "fixture")
    src.add_name("Boston", "fixture")
    hits = find_leaks("x two three four five six seven eight nine y and Boston", src)
    assert {lk.kind for lk in hits} == {"shingle", "name"}
    assert find_leaks("quillmoor two three four five six seven", src) == []
