"""Against a real Chroma server (`chroma run`), started by scripts/test.sh / .ci/run."""

from __future__ import annotations

import os
import socket
import uuid

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import ChromaHost, CommitAction, CommitDecision, StateBank
from langchain_atma.errors import HostUnavailableError
from langchain_atma.records import LinkType, MemoryRecord, RecordStatus

pytestmark = pytest.mark.integration

URL = os.environ.get("ATMA_TEST_CHROMA_URL")
needs_server = pytest.mark.skipif(not URL, reason="ATMA_TEST_CHROMA_URL not set")


@needs_server
def test_commit_drop_client_reconnect_state_intact():
    emb = DeterministicFakeEmbedding(size=16)
    coll = f"it_{uuid.uuid4().hex[:10]}"
    bank = StateBank(url=URL, collection_name=coll, embeddings=emb)
    old = bank.add(MemoryRecord(namespace="alice", content="I live in Boston.", slot="location"))
    new = bank.commit(
        MemoryRecord(namespace="alice", content="I moved to Seattle.", slot="location"),
        [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
    ).record
    bank.add(MemoryRecord(namespace="bob", content="I live in Boston.", slot="location"))
    del bank

    again = StateBank(url=URL, collection_name=coll, embeddings=emb)
    o, n = again.get("alice", old.id), again.get("alice", new.id)
    assert o.status is RecordStatus.SUPERSEDED and n.status is RecordStatus.ACTIVE
    assert n.has_link(LinkType.SUPERSEDES, o.id) and o.has_link(LinkType.SUPERSEDED_BY, n.id)
    assert again.verify("alice") == [] and again.count("bob") == 1
    hits = again.search("alice", "Boston", k=5)
    assert {h.record.namespace for h in hits} == {"alice"}


@needs_server
def test_env_var_selects_server(monkeypatch):
    monkeypatch.setenv("ATMA_CHROMA_URL", URL)
    bank = StateBank(collection_name=f"it_{uuid.uuid4().hex[:10]}",
                     embeddings=DeterministicFakeEmbedding(size=8))
    assert isinstance(bank.host, ChromaHost)
    bank.add(MemoryRecord(namespace="n", content="hello there"))
    assert bank.count("n") == 1


def test_server_down_gives_clear_error():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(HostUnavailableError, match="cannot reach the Chroma server"):
        StateBank(url=f"http://127.0.0.1:{port}", embeddings=DeterministicFakeEmbedding(size=8))
