from __future__ import annotations

import functools

import pytest
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_atma.bank import CommitAction, CommitDecision, StateBank
from langchain_atma.errors import ConfigError, InvalidQueryError, NamespaceError
from langchain_atma.records import MemoryRecord
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrievers import AtmaRetriever

NS = "std"
META_KEYS = {
    "id",
    "status",
    "label",
    "bucket",
    "relation",
    "prerank",
    "controller_selected",
    "controller_rank",
    "time",
    "slot",
    "source_event_id",
    "speaker",
    "states_fact",
    "view",
}


@functools.lru_cache(maxsize=1)
def _world():
    """One in-memory bank with the real encoder, built once per test session."""
    from langchain_atma.embeddings import MiniLMEmbeddings

    bank = StateBank.in_memory(embeddings=MiniLMEmbeddings())
    add = functools.partial(MemoryRecord, namespace=NS)
    old = bank.add(
        add(
            content="Melisande lives in Portree with her two kids.",
            slot="location",
            time="2023-01-05",
        )
    )
    bank.add(
        add(
            content="Melisande is a pottery teacher at the community center.",
            slot="job",
            time="2023-01-06",
        )
    )
    bank.add(add(content="Melisande's dog Luna loves the beach.", slot="pets", time="2023-01-07"))
    bank.add(add(content="Melisande ran her first marathon in May.", time="2023-05-20"))
    new = bank.commit(
        add(
            content="Melisande moved to Seattle for a new studio.",
            slot="location",
            time="2023-09-01",
        ),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    ).record
    bank.add(MemoryRecord(namespace="other", content="Someone else lives in Seattle too."))
    return bank, old, new


class TestAtmaRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[AtmaRetriever]:
        return AtmaRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"bank": _world()[0], "namespace": NS}

    @property
    def retriever_query_example(self) -> str:
        return "Where does Melisande live now?"


@pytest.fixture(scope="module")
def world():
    return _world()


def test_documents_carry_the_trace(world):
    bank, old, new = world
    docs = AtmaRetriever(bank=bank, namespace=NS, k=3).invoke("Where does Melisande live now?")
    assert all(isinstance(d, Document) for d in docs) and len(docs) == 3
    assert docs[0].id == new.id and docs[0].page_content == new.content
    md = docs[0].metadata
    assert META_KEYS <= set(md)
    assert md["label"] == "current memory" and md["status"] == "active"
    assert md["view"] == "current" and md["slot"] == "location"
    assert md["time"].startswith("2023-09-01")


def test_historical_question_and_packet(world):
    bank, old, _ = world
    ret = AtmaRetriever(bank=bank, namespace=NS, k=2)
    packet = ret.retrieve_packet("Where did Melisande live before she moved?")
    assert packet.rows[0].id == old.id and packet.rows[0].label.value == "historical memory"
    assert packet.controller_status == "applied" and packet.pool_size >= 2
    assert packet.rows[0].selected_by_controller and packet.rows[0].controller_rank == 1


def test_k_larger_than_bank_returns_all_and_stays_in_namespace(world):
    bank, _, _ = world
    docs = AtmaRetriever(bank=bank, namespace=NS, k=50).invoke("Seattle")
    assert len(docs) == 5
    assert all("Someone else" not in d.page_content for d in docs)


def test_invalid_k_and_queries(world):
    bank, _, _ = world
    for bad in (0, -3):
        with pytest.raises(InvalidQueryError):
            AtmaRetriever(bank=bank, namespace=NS, k=bad)
    ret = AtmaRetriever(bank=bank, namespace=NS)
    with pytest.raises(InvalidQueryError):
        ret.invoke("Where?", k=0)
    with pytest.raises(InvalidQueryError):
        ret.invoke("   ")
    with pytest.raises(InvalidQueryError, match="limit"):
        ret.invoke("a" * 100_001)
    with pytest.raises(NamespaceError):
        AtmaRetriever(bank=bank, namespace="no spaces allowed")
    with pytest.raises(ConfigError):
        AtmaRetriever(bank=bank, namespace=NS, controller_mode="sometimes")
    with pytest.raises(ConfigError):
        AtmaRetriever(bank=bank, namespace=NS, controller=object())


def test_empty_namespace_returns_nothing(world):
    bank, _, _ = world
    assert AtmaRetriever(bank=bank, namespace="empty-ns").invoke("Where?") == []


async def test_async_and_llm_controller_fallback(world):
    from langchain_core.language_models import GenericFakeChatModel

    bank, old, new = world
    broken = LLMController(GenericFakeChatModel(messages=iter(["not json"])))
    ret = AtmaRetriever(bank=bank, namespace=NS, k=2, controller=broken)
    res = await ret.aretrieve("Where does Melisande live now?")
    assert res.packet.controller_status == "fallback:parse_error"
    assert len(res.packet.rows) == 2  # the stable pre-rank still answers
    docs = await AtmaRetriever(bank=bank, namespace=NS, k=2).ainvoke(
        "Where did Melisande live before she moved?"
    )
    assert docs[0].id == old.id


def test_labels_can_be_turned_off(world):
    bank, _, _ = world
    docs = AtmaRetriever(bank=bank, namespace=NS, k=2, use_labels=False).invoke("Seattle")
    assert all(d.metadata["label"] is None for d in docs)
