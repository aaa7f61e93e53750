"""The per-record "states a fact" flag: set on the write path, stored, used by the seed search."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_atma.bank import StateBank
from langchain_atma.bank.bank import _optional_bool, _record_to_row, _row_to_record
from langchain_atma.bank.write_graph import create_write_graph, ingest_events
from langchain_atma.errors import ConfigError, InvalidRecordError
from langchain_atma.records import MemoryRecord, Provenance
from langchain_atma.retrieval.pool import (
    DEFAULT_NO_FACT_PENALTY,
    demote_no_fact,
    speaker_seed_rows,
)
from langchain_atma.retrieval.read_graph import create_read_graph
from langchain_atma.retrievers import AtmaRetriever


class TableEmbeddings(Embeddings):
    """Fixed vectors per text (unknown texts get an orthogonal filler)."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def _vec(self, text: str) -> list[float]:
        return self.table.get(text, [0.0, 0.0, 0.0, 1.0])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


QUESTION = "How far do you run these days?"
REACTION = "Wow, running every morning? What got you into running?"
FACT = "I run 5k every morning before work."
OLD = "I used to swim at the lake."


def _unit(v: list[float]) -> list[float]:
    a = np.asarray(v, dtype=np.float64)
    return list(a / np.linalg.norm(a))


@pytest.fixture
def bank() -> StateBank:
    # the reaction repeats the question's words: the encoder puts it closest
    emb = TableEmbeddings(
        {
            QUESTION: [1.0, 0.0, 0.0, 0.0],
            REACTION: _unit([0.95, 0.31, 0.0, 0.0]),
            FACT: _unit([0.90, 0.0, 0.44, 0.0]),
            OLD: _unit([0.50, 0.0, 0.0, 0.87]),
        }
    )
    return StateBank.in_memory(embeddings=emb)


def _put(bank: StateBank, text: str, fact: bool | None) -> MemoryRecord:
    return bank.add(
        MemoryRecord(
            namespace="u", content=text, states_fact=fact, provenance=Provenance(speaker="Ginevra")
        )
    )


def test_write_path_sets_the_flag_once_and_the_bank_keeps_it(mem_bank):
    events = [
        {"event_id": "e1", "text": "How are you doing these days?", "speaker": "A"},
        {"event_id": "e2", "text": "I moved to Seattle last month.", "speaker": "A"},
        {"event_id": "e3", "text": "Wow! What got you into that?", "speaker": "B"},
    ]
    ingest_events(mem_bank, events, namespace="u")
    flags = {r.provenance.source_event_id: r.states_fact for r in mem_bank.records("u")}
    assert flags == {"e1": False, "e2": True, "e3": False}
    # the write graph sets it too, and a value the caller set is not overwritten
    graph = create_write_graph(mem_bank)
    out = graph.invoke({"record": MemoryRecord(namespace="u", content="Any news?")})
    assert out["result"].record.states_fact is False
    out = graph.invoke(
        {"record": MemoryRecord(namespace="u", content="Any news?!", states_fact=True)}
    )
    assert mem_bank.get("u", out["result"].record.id).states_fact is True


def test_flag_round_trips_through_host_metadata():
    for flag in (True, False, None):
        rec = MemoryRecord(namespace="u", content="x", states_fact=flag)
        row = _record_to_row(rec, None, 0)
        assert ("atma_fact" in row.metadata) is (flag is not None)
        assert _row_to_record(row).states_fact is flag
    assert _optional_bool(1) is True and _optional_bool(0) is False
    row = _record_to_row(MemoryRecord(namespace="u", content="x"), None, 0)
    row.metadata["atma_fact"] = "yes"
    with pytest.raises(InvalidRecordError):
        _row_to_record(row)


def test_seeds_that_state_no_fact_rank_lower(bank):
    reaction, fact = _put(bank, REACTION, False), _put(bank, FACT, True)
    plain, _ = speaker_seed_rows(bank, "u", QUESTION, seed_k=2, no_fact_penalty=None)
    assert [r.record.id for r in plain] == [reaction.id, fact.id]
    rows, _ = speaker_seed_rows(bank, "u", QUESTION, seed_k=2)
    assert [r.record.id for r in rows] == [fact.id, reaction.id]
    assert [r.prerank for r in rows] == [0, 1]
    host = {r.record.id: r.score for r in plain}
    assert rows[1].score == pytest.approx(host[reaction.id] - DEFAULT_NO_FACT_PENALTY)
    assert rows[0].score == pytest.approx(host[fact.id])
    # a small penalty keeps a much closer question first; 0 is host order
    small, _ = speaker_seed_rows(bank, "u", QUESTION, seed_k=2, no_fact_penalty=0.01)
    assert small[0].record.id == reaction.id
    zero, _ = speaker_seed_rows(bank, "u", QUESTION, seed_k=2, no_fact_penalty=0.0)
    assert [r.record.id for r in zero] == [r.record.id for r in plain]


def test_records_never_analysed_are_not_demoted(bank):
    reaction, fact = _put(bank, REACTION, None), _put(bank, FACT, None)
    rows, _ = speaker_seed_rows(bank, "u", QUESTION, seed_k=2)
    assert [r.record.id for r in rows] == [reaction.id, fact.id]


def test_demote_no_fact_is_stable():
    a = MemoryRecord(namespace="u", content="a", states_fact=True)
    b = MemoryRecord(namespace="u", content="b?", states_fact=False)
    c = MemoryRecord(namespace="u", content="c")
    out = demote_no_fact([(b, 0.68), (a, 0.6), (c, 0.6)], 0.1)
    assert [(r.content, round(s, 3)) for r, s in out] == [("a", 0.6), ("c", 0.6), ("b?", 0.58)]
    ties = demote_no_fact([(c, 0.6), (a, 0.6)], 0.1)
    assert [r.content for r, _ in ties] == ["c", "a"]


def test_read_graph_and_retriever_use_and_check_the_penalty(bank):
    reaction, fact = _put(bank, REACTION, False), _put(bank, FACT, True)
    _put(bank, OLD, True)
    graph = create_read_graph(bank, namespace="u", k=2, seed_k=2)
    out = graph.invoke({"question": QUESTION, "namespace": "u"})
    assert out["seeds"][0].record.id == fact.id
    off = create_read_graph(bank, namespace="u", k=2, seed_k=2, no_fact_penalty=None)
    assert off.invoke({"question": QUESTION, "namespace": "u"})["seeds"][0].record.id == reaction.id
    docs = AtmaRetriever(bank=bank, namespace="u", k=1, seed_k=2).invoke(QUESTION)
    assert docs[0].page_content == FACT and docs[0].metadata["states_fact"] is True
    for bad in (-0.1, float("inf"), "0.1", True):
        with pytest.raises(ConfigError):
            create_read_graph(bank, namespace="u", no_fact_penalty=bad)
        with pytest.raises(ConfigError):
            AtmaRetriever(bank=bank, namespace="u", no_fact_penalty=bad)
        with pytest.raises(ConfigError):
            speaker_seed_rows(bank, "u", QUESTION, no_fact_penalty=bad)
