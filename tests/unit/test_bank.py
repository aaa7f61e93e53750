from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_atma.bank import (
    CommitAction,
    CommitDecision,
    StateBank,
    VectorStoreHost,
)
from langchain_atma.errors import (
    CommitError,
    InvalidQueryError,
    InvalidRecordError,
    NamespaceError,
    RecordNotFoundError,
)
from langchain_atma.records import LinkType, MemoryRecord, Provenance, RecordStatus


def R(content, ns="u1", **kw):
    return MemoryRecord(namespace=ns, content=content, **kw)


def D(action, target):
    return CommitDecision(action=CommitAction(action), target_id=target)


@pytest.fixture(params=["chroma", "inmemory-vectorstore"])
def bank(request):
    emb = DeterministicFakeEmbedding(size=32)
    if request.param == "chroma":
        return StateBank.in_memory(embeddings=emb)
    return StateBank(host=VectorStoreHost(InMemoryVectorStore(emb)), embeddings=emb)


def test_supersede_sets_status_and_reciprocal_links(bank):
    old = bank.add(R("I live in Boston.", slot="location"))
    res = bank.commit(R("I moved to Seattle.", slot="location"), [D("supersede", old.id)])
    new = res.record
    o, n = bank.get("u1", old.id), bank.get("u1", new.id)
    assert o.status is RecordStatus.SUPERSEDED and n.status is RecordStatus.ACTIVE
    assert n.has_link(LinkType.SUPERSEDES, o.id) and o.has_link(LinkType.SUPERSEDED_BY, n.id)
    assert [u.id for u in res.updated] == [old.id]
    assert bank.verify("u1") == []


def test_superseded_records_stay_retrievable(bank):
    old = bank.add(R("My dog is called Rex.", slot="pets"))
    bank.commit(R("Rex passed away, I have no dog now.", slot="pets"), [D("supersede", old.id)])
    hits = bank.search("u1", "My dog is called Rex.", k=5)
    assert old.id in [h.record.id for h in hits]
    assert bank.count("u1") == 2


def test_transition_then_new_state_chain(bank):
    old = bank.add(R("I work as a nurse.", slot="job"))
    tr = bank.commit(
        R("I'm retraining from nursing to teaching."), [D("transition", old.id)]
    ).record
    assert tr.status is RecordStatus.TRANSITION
    assert bank.get("u1", old.id).status is RecordStatus.SUPERSEDED
    new = bank.commit(
        R("I teach at the high school now.", slot="job"),
        [D("supersede", old.id), D("supersede", tr.id)],
    ).record
    n = bank.get("u1", new.id)
    assert n.has_link(LinkType.SUPERSEDES, old.id)
    assert n.has_link(LinkType.EVOLVES_FROM, tr.id)
    assert bank.get("u1", tr.id).status is RecordStatus.TRANSITION
    assert bank.get("u1", tr.id).has_link(LinkType.EVOLVES_TO, new.id)
    assert bank.verify("u1") == []
    chains = bank.chains("u1")
    assert len(chains) == 1 and {r.id for r in chains[0]} == {old.id, tr.id, new.id}


@pytest.mark.parametrize(
    "action,link", [("coexist", LinkType.COEXISTS), ("scoped_exception", LinkType.SCOPED_EXCEPTION)]
)
def test_coexisting_records_both_active(bank, action, link):
    a = bank.add(R("I love sushi.", slot="likes:food"))
    b = bank.commit(R("I only eat sushi on Fridays.", slot="likes:food"), [D(action, a.id)]).record
    assert bank.get("u1", a.id).status is RecordStatus.ACTIVE
    assert bank.get("u1", b.id).has_link(link, a.id)
    assert bank.get("u1", a.id).has_link(link, b.id)


def test_single_valued_slot_invariant_enforced(bank):
    bank.add(R("I live in Boston.", slot="location"))
    with pytest.raises(CommitError, match="two active"):
        bank.add(R("I live in Seattle.", slot="location"))
    assert bank.count("u1") == 1  # nothing half-written


def test_coexist_link_allows_two_actives_in_single_slot(bank):
    a = bank.add(R("I live in Boston during the week.", slot="location"))
    bank.commit(R("I live in Maine on weekends.", slot="location"), [D("scoped_exception", a.id)])
    assert bank.verify("u1") == []


def test_multi_valued_slot_may_hold_several_actives(bank):
    bank.add(R("I play chess.", slot="hobbies"))
    bank.add(R("I go climbing.", slot="hobbies"))
    assert len(bank.records("u1", statuses=[RecordStatus.ACTIVE])) == 2


def test_idempotent_by_source_event(bank):
    old = bank.add(
        R("I live in Boston.", slot="location", provenance=Provenance(source_event_id="e1"))
    )
    r1 = bank.commit(
        R("I moved to Seattle.", slot="location", provenance=Provenance(source_event_id="e2")),
        [D("supersede", old.id)],
    )
    r2 = bank.commit(
        R("I moved to Seattle.", slot="location", provenance=Provenance(source_event_id="e2")),
        [D("supersede", old.id)],
    )
    assert r2.idempotent and r2.record.id == r1.record.id
    assert bank.count("u1") == 2
    assert bank.get("u1", old.id).targets(LinkType.SUPERSEDED_BY) == [r1.record.id]


def test_duplicate_is_noop(bank):
    a = bank.add(R("I live in Boston."))
    res = bank.commit(R("I live in Boston!"), [D("duplicate", a.id)])
    assert res.duplicate_of == a.id and res.record is None
    assert bank.count("u1") == 1


def test_links_to_missing_ids_rejected_and_nothing_written(bank):
    bank.add(R("I live in Boston."))
    with pytest.raises(RecordNotFoundError):
        bank.commit(R("I moved."), [D("supersede", "no-such-id")])
    with pytest.raises(RecordNotFoundError):
        bank.commit(R("x y", links=[{"type": "supersedes", "target": "ghost"}]))
    assert bank.count("u1") == 1


def test_record_links_become_reciprocal_decisions(bank):
    a = bank.add(R("I live in Boston.", slot="location"))
    b = bank.add(
        R("I moved to Seattle.", slot=None, links=[{"type": "supersedes", "target": a.id}])
    )
    assert bank.get("u1", a.id).status is RecordStatus.SUPERSEDED
    assert bank.get("u1", a.id).has_link(LinkType.SUPERSEDED_BY, b.id)
    with pytest.raises(CommitError):
        bank.add(R("bad", links=[{"type": "superseded_by", "target": a.id}]))


def test_conflicting_decisions_rejected(bank):
    a = bank.add(R("I live in Boston."))
    with pytest.raises(CommitError, match="conflicting"):
        bank.commit(R("x"), [D("supersede", a.id), D("coexist", a.id)])
    with pytest.raises(CommitError):
        b = bank.add(R("y"))
        bank.commit(R("z"), [D("duplicate", a.id), D("supersede", b.id)])


def test_namespaces_never_cross(bank):
    a = bank.add(R("I live in Boston.", ns="alice", slot="location"))
    bank.add(R("I live in Boston.", ns="bob", slot="location"))
    # search, get, link expansion, commit, inspection are all namespace-bound
    assert all(h.record.namespace == "bob" for h in bank.search("bob", "Boston", k=10))
    with pytest.raises(RecordNotFoundError):
        bank.get("bob", a.id)
    assert bank.get_many("bob", [a.id]) == []
    with pytest.raises(RecordNotFoundError):
        bank.commit(R("I moved to Seattle.", ns="bob"), [D("supersede", a.id)])
    with pytest.raises(RecordNotFoundError):
        bank.commit(R("x", ns="bob", links=[{"type": "related", "target": a.id}]))
    assert bank.get("alice", a.id).status is RecordStatus.ACTIVE
    assert {r.namespace for r in bank.records("bob")} == {"bob"}
    assert bank.vectors("bob", [a.id]) == {}
    # an id already used in another namespace never overwrites that record: a host
    # with a collection per namespace scopes ids to it, a single collection refuses
    if getattr(bank.host, "namespaced", False):
        assert bank.add(R("hijack", ns="bob", id=a.id)).namespace == "bob"
        assert bank.get("bob", a.id).content == "hijack"
    else:
        with pytest.raises(CommitError):
            bank.add(R("hijack", ns="bob", id=a.id))
    assert bank.get("alice", a.id).content == "I live in Boston."
    bank.clear("bob")
    assert bank.count("bob") == 0 and bank.count("alice") == 1


def test_bad_query_inputs(bank):
    with pytest.raises(InvalidQueryError):
        bank.search("u1", "   ")
    with pytest.raises(InvalidQueryError):
        bank.search("u1", "hi", k=0)
    with pytest.raises(NamespaceError):
        bank.search("bad ns", "hi")
    assert bank.search("u1", "hi", k=3) == []


def test_commit_rejects_non_record(bank):
    with pytest.raises(InvalidRecordError):
        bank.commit({"content": "x"})  # type: ignore[arg-type]


def test_plain_vector_search_of_host_collection_still_works():
    emb = DeterministicFakeEmbedding(size=32)
    bank = StateBank.in_memory(embeddings=emb)
    old = bank.add(R("I live in Boston.", slot="location"))
    bank.commit(R("I moved to Seattle.", slot="location"), [D("supersede", old.id)])
    col = bank.host.collection_for(old.namespace)  # type: ignore[attr-defined]
    res = col.query(query_embeddings=[emb.embed_query("I live in Boston.")], n_results=2)
    assert "I live in Boston." in res["documents"][0]
    assert {m["atma_status"] for m in res["metadatas"][0]} == {"active", "superseded"}


def test_verify_detects_tampering(bank):
    a = bank.add(R("I live in Boston.", slot="location"))
    b = bank.commit(R("I moved to Seattle.", slot="location"), [D("supersede", a.id)]).record
    row = bank.host.get([a.id])[0]
    row.metadata["atma_links"] = "[]"
    row.metadata["atma_status"] = "active"
    bank.host.upsert([row])
    kinds = {v.kind for v in bank.verify("u1")}
    assert "missing_reciprocal" in kinds and "double_active" in kinds
    assert b.id


def test_repair_fixes_every_violation_kind_without_deleting(bank):
    a = bank.add(R("I live in Boston.", slot="location"))
    b = bank.commit(R("I moved to Seattle.", slot="location"), [D("supersede", a.id)]).record
    c = bank.add(R("My cat is Tom.", slot="pets"))
    # tamper: drop b's forward link (a becomes orphan-superseded, a's back link dangles
    # as a non-reciprocal), add a dangling link to c, and a second active pet record
    rb = bank.host.get([b.id])[0]
    rb.metadata["atma_links"] = "[]"
    rc = bank.host.get([c.id])[0]
    rc.metadata["atma_links"] = '[["related", "ghost"]]'
    bank.host.upsert([rb, rc])
    d = bank.host.get([c.id])[0]
    d.id = "second-pet"
    d.metadata = dict(d.metadata, atma_links="[]", atma_seq=d.metadata["atma_seq"] + 1)
    bank.host.upsert([d])
    assert bank.verify("u1")
    fixed = bank.repair("u1")
    assert {v.kind for v in fixed} >= {"dangling_link", "missing_reciprocal", "double_active"}
    assert bank.verify("u1") == []
    assert bank.count("u1") == 4


@pytest.mark.parametrize(
    "url",
    [
        "http//localhost:8000",
        "http://localhost:notaport",
        "http://",
        "localhost:8000/x",
        "ftp://h:1",
        "http://h:70000",
        "http://user:pw@h:1",
        "h:0",
        " ",
        "http://h:1 2",
    ],
)
def test_a_malformed_chroma_url_is_a_config_error_before_any_connection(url: str) -> None:
    from langchain_atma.bank.hosts import ChromaHost
    from langchain_atma.errors import ConfigError

    with pytest.raises(ConfigError, match="invalid Chroma URL"):
        ChromaHost.server(url)
