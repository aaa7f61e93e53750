from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.cli import main
from langchain_atma.inspect_html import render_bank_html
from langchain_atma.records import MemoryRecord


def _bank():
    bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    old = bank.add(MemoryRecord(namespace="u", content="I live in <Boston>.", slot="location"))
    bank.commit(
        MemoryRecord(namespace="u", content="I moved to Seattle.", slot="location"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    )
    bank.add(MemoryRecord(namespace="other", content="secret of another namespace"))
    return bank


def test_page_is_self_contained_and_escaped():
    page = render_bank_html(_bank(), "u")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 1
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    assert "&lt;Boston&gt;" in page and "<Boston>" not in page
    assert "supersedes" in page and "superseded" in page
    assert "another namespace" not in page


def test_cli_verify_and_inspect_html(tmp_path, capsys):
    from langchain_atma.bank import ChromaHost

    bank = StateBank(
        host=ChromaHost.persistent(tmp_path / "b"), embeddings=DeterministicFakeEmbedding(size=16)
    )
    old = bank.add(MemoryRecord(namespace="u", content="I live in Boston.", slot="location"))
    bank.commit(
        MemoryRecord(namespace="u", content="I moved to Seattle.", slot="location"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    )
    del bank
    out = tmp_path / "bank.html"
    code = main(["verify", "--path", str(tmp_path / "b"), "--namespace", "u"])
    assert code == 0 and "invariants hold" in capsys.readouterr().out
    code = main(["inspect", "--path", str(tmp_path / "b"), "--namespace", "u", "--html", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and "chain 1 [location]" in printed and "superseded" in printed
    assert "<svg" in out.read_text(encoding="utf-8")


def test_text_timeline_strips_terminal_control_sequences():
    import io

    from langchain_atma.demo import render_bank

    bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    evil = "I live in Oslo.\x1b[2J\x1b]0;owned\x07\nFAKE: all records deleted"
    old = bank.add(MemoryRecord(namespace="u", content=evil, slot="location"))
    bank.commit(
        MemoryRecord(
            namespace="u", content="I moved to Bergen." + "x" * 500, slot="location\x1b[31m"
        ),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    )
    buf = io.StringIO()
    render_bank(bank, "u", buf)
    text = buf.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "\nFAKE" not in text  # the record's newline cannot start a line of its own
    assert "I live in Oslo." in text and "all records deleted" in text  # content kept
    assert max(len(line) for line in text.splitlines()) < 360  # long texts are cut


def test_page_lists_records_outside_chains_with_their_speaker():
    from langchain_atma.records import Provenance

    bank = _bank()
    bank.add(
        MemoryRecord(
            namespace="u",
            content="Tea over coffee, always.",
            provenance=Provenance(speaker="Odile"),
        )
    )
    page = render_bank_html(bank, "u")
    assert "1 other records" in page and "Other records (1)" in page
    assert "Tea over coffee, always." in page and "<td>Odile</td>" in page
    assert page.count("<th>speaker</th>") == 2  # the chain's table and the others'
