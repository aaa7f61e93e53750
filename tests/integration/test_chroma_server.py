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
    bank = StateBank(
        collection_name=f"it_{uuid.uuid4().hex[:10]}", embeddings=DeterministicFakeEmbedding(size=8)
    )
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


def _chains(bank: StateBank, spaces: list[str]) -> dict[str, object]:
    return {
        ns: sorted(
            (
                r.id,
                r.content,
                r.status.value,
                tuple(sorted((lk.type.value, lk.target) for lk in r.links)),
            )
            for r in bank.records(ns)
        )
        for ns in spaces
    }


@needs_server
def test_a_collection_per_namespace_on_the_server():
    emb = DeterministicFakeEmbedding(size=16)
    coll = f"it_{uuid.uuid4().hex[:10]}"
    bank = StateBank(url=URL, collection_name=coll, embeddings=emb)
    spaces = ["alice", "user:42@team.x"]
    for ns in spaces:
        old = bank.add(MemoryRecord(namespace=ns, content="I live in Boston.", slot="home"))
        bank.commit(
            MemoryRecord(namespace=ns, content="I moved to Lisbon.", slot="home"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
        )
    host = bank.host
    assert isinstance(host, ChromaHost) and host.layout == "namespaced"
    names = {getattr(c, "name", c) for c in host.client.list_collections()}
    assert {f"{coll}-ns-alice", f"{coll}-ns-user_42_team_x"} <= {n.rsplit("-", 1)[0] for n in names}
    assert host.collection.count() == 0  # nothing in the bank's own collection
    again = StateBank(url=URL, collection_name=coll, embeddings=emb)
    for ns in spaces:
        assert again.verify(ns) == [] and len(again.records(ns)) == 2
        hits = again.search(ns, "Boston", k=5)
        assert {h.record.namespace for h in hits} == {ns}
    assert again.namespaces() == sorted(spaces) and again.layout_problems() == []


@needs_server
def test_a_server_bank_of_0_1_migrates():
    emb = DeterministicFakeEmbedding(size=16)
    coll = f"it_{uuid.uuid4().hex[:10]}"
    legacy = StateBank(host=ChromaHost.server(URL, coll, layout="single"), embeddings=emb)
    spaces = ["a", "b"]
    for ns in spaces:
        old = legacy.add(MemoryRecord(namespace=ns, content="I own a bike.", slot="ride"))
        legacy.commit(
            MemoryRecord(namespace=ns, content="I sold the bike.", slot="ride"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
        )
    before = _chains(legacy, spaces)
    bank = StateBank(url=URL, collection_name=coll, embeddings=emb)
    assert bank.migrate() == {"namespaces": 2, "rows": 4, "left_over": 4}
    after = StateBank(url=URL, collection_name=coll, embeddings=emb)
    assert after.host.layout == "namespaced"  # type: ignore[attr-defined]
    assert _chains(after, spaces) == before and after.layout_problems() == []
