"""One collection per namespace: naming, registry, filtered search, migration, repair."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import ChromaHost, CommitAction, CommitDecision, StateBank
from langchain_atma.bank.hosts import HostFilter, HostRow
from langchain_atma.bank.namespace_index import NamespaceRegistry, collection_name_for
from langchain_atma.cli import main
from langchain_atma.errors import ConfigError
from langchain_atma.records import MemoryRecord

_CHROMA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]$")
HOSTILE = [
    "a",
    "A",
    "a/b",
    "a:b",
    "a_b",
    "A_B",
    "../etc/passwd",
    "  ",
    "",
    "名前/ユーザー",
    "émile@café",
    "x" * 1000,
    "x" * 999,
    "🙂" * 300,
    "a..b",
    "-lead",
    "trail.",
    "\x00\n",
]


def _emb() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=16)


def _row(rid: str, ns: str, vec: list[float], **md: Any) -> HostRow:
    return HostRow(id=rid, text=f"text {rid}", embedding=vec, metadata={"atma_ns": ns, **md})


# ------------------------------------------------------------------ naming rule


def test_hostile_namespaces_map_to_distinct_valid_collection_names() -> None:
    names = [collection_name_for("atma_memory", ns) for ns in HOSTILE]
    assert len(set(names)) == len(HOSTILE)  # same slug ("a_b", "a:b", "A_B") still apart
    assert all(_CHROMA_NAME.match(n) and ".." not in n for n in names), names
    assert all(len(n) <= 512 for n in names)
    assert collection_name_for("atma_memory", "a/b") == collection_name_for("atma_memory", "a/b")


def test_the_host_stores_and_isolates_hostile_namespaces() -> None:
    host = ChromaHost.ephemeral()
    rng = np.random.default_rng(0)
    vec = rng.normal(size=8).tolist()
    for i, ns in enumerate(HOSTILE):  # identical vectors in every namespace
        host.upsert([_row(f"r{i}", ns, vec)])
    for i, ns in enumerate(HOSTILE):
        hits = host.query(vec, 5, HostFilter(ns))
        assert [r.id for r, _ in hits] == [f"r{i}"]
        assert [r.id for r in host.scan(HostFilter(ns))] == [f"r{i}"]
        others = [f"r{j}" for j in range(len(HOSTILE)) if j != i]
        assert host.get(others, namespace=ns) == []
    assert host.namespaces() == sorted(HOSTILE)
    assert host.count() == len(HOSTILE)


def test_registry_refuses_two_namespaces_on_one_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import chromadb

    reg = NamespaceRegistry(chromadb.EphemeralClient(), "bank")
    monkeypatch.setattr(
        "langchain_atma.bank.namespace_index.collection_name_for",
        lambda base, ns: f"{base}-ns-same",
    )
    assert reg.register("one") == "bank-ns-same"
    assert reg.register("one") == "bank-ns-same"  # idempotent
    with pytest.raises(ConfigError, match="map to one collection"):
        reg.register("two")


# ------------------------------------------------------------- filtered search


@pytest.mark.parametrize("share", [0.9, 0.02])
def test_filtered_search_in_a_namespace_is_exact(share: float) -> None:
    """Plain top-k*overfetch then filter, or the filtered query when too few match."""
    host = ChromaHost.ephemeral()
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(400, 8))
    status = ["active" if rng.random() < share else "superseded" for _ in range(400)]
    host.upsert([_row(f"r{i}", "u", vecs[i].tolist(), atma_status=status[i]) for i in range(400)])
    host.upsert([_row(f"f{i}", "other", vecs[i].tolist(), atma_status="active") for i in range(50)])
    q = rng.normal(size=8)
    flt = HostFilter("u", any_of={"atma_status": ("active",)})
    got = [r.id for r, _ in host.query(q.tolist(), 10, flt)]
    sims = vecs @ q / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(q))
    want = [f"r{i}" for i in np.argsort(-sims) if status[i] == "active"][:10]
    assert got == want


# ------------------------------------------------------------------ migration


def _legacy_bank(path: Path) -> StateBank:
    """A bank in the single-collection layout of 0.1, with chains in three namespaces."""
    bank = StateBank(host=ChromaHost.persistent(path, layout="single"), embeddings=_emb())
    for ns in ("alice", "bob", "user:3"):
        old = bank.add(MemoryRecord(namespace=ns, content="I live in Boston.", slot="home"))
        bank.commit(
            MemoryRecord(namespace=ns, content="I moved to Lisbon.", slot="home"),
            [CommitDecision(action=CommitAction.SUPERSEDE, target_id=old.id)],
        )
        bank.add(MemoryRecord(namespace=ns, content=f"My code is {ns}."))
    return bank


def _snapshot(bank: StateBank) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ns in ("alice", "bob", "user:3"):
        recs = bank.records(ns)
        vecs = bank.vectors(ns, [r.id for r in recs])
        out[ns] = {
            r.id: (
                r.content,
                r.status.value,
                r.slot,
                r.seq,
                sorted((lk.type.value, lk.target) for lk in r.links),
                vecs[r.id].round(6).tolist(),
            )
            for r in recs
        }
    return out


def test_a_bank_of_0_1_migrates_to_identical_records(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = _snapshot(_legacy_bank(tmp_path / "b"))
    with caplog.at_level("WARNING"):
        legacy = StateBank(path=tmp_path / "b", embeddings=_emb())
    assert legacy.host.layout == "single" and "atma migrate" in caplog.text  # type: ignore
    assert _snapshot(legacy) == before  # still works unmigrated
    seen: list[str] = []
    got = legacy.migrate(progress=lambda ns, n: seen.append(ns))
    assert got == {"namespaces": 3, "rows": 9, "left_over": 9}
    assert sorted(seen) == ["alice", "bob", "user:3"]
    bank = StateBank(path=tmp_path / "b", embeddings=_emb())
    assert bank.host.layout == "namespaced"  # type: ignore[attr-defined]
    assert _snapshot(bank) == before
    assert bank.layout_problems() == [] and all(bank.verify(ns) == [] for ns in before)
    assert bank.host.collection.count() == 0  # type: ignore[attr-defined]
    assert bank.migrate() == {"namespaces": 0, "rows": 0, "left_over": 0}  # idempotent


def test_a_crash_mid_migration_leaves_a_readable_bank_and_repair_completes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _snapshot(_legacy_bank(tmp_path / "b"))
    real = ChromaHost._copy_namespace
    calls: list[str] = []

    def crash_on_second(self: ChromaHost, registry: Any, ns: str, page: int) -> int:
        calls.append(ns)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies mid-copy
        return real(self, registry, ns, page)

    monkeypatch.setattr(ChromaHost, "_copy_namespace", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        StateBank(path=tmp_path / "b", embeddings=_emb()).migrate()
    monkeypatch.setattr(ChromaHost, "_copy_namespace", real)

    bank = StateBank(path=tmp_path / "b", embeddings=_emb())
    assert bank.host.layout == "migrating"  # type: ignore[attr-defined]
    assert _snapshot(bank) == before  # readable: the single collection stays authoritative
    assert any("did not finish" in p for p in bank.layout_problems())
    code = main(["verify", "--repair", "--path", str(tmp_path / "b"), "-n", "alice"])
    assert code == 0
    bank = StateBank(path=tmp_path / "b", embeddings=_emb())
    assert bank.host.layout == "namespaced"  # type: ignore[attr-defined]
    assert _snapshot(bank) == before and bank.layout_problems() == []


def test_atma_migrate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(_legacy_bank(tmp_path / "b"))
    assert main(["migrate", "--path", str(tmp_path / "b")]) == 0
    assert "3 namespace(s), 9 row(s) copied" in capsys.readouterr().out
    assert _snapshot(StateBank(path=tmp_path / "b", embeddings=_emb())) == before


def test_a_namespace_registered_without_its_collection(tmp_path: Path) -> None:
    """A crash between registering a namespace and creating its collection."""
    bank = StateBank(path=tmp_path / "b", embeddings=_emb())
    host: ChromaHost = bank.host  # type: ignore[assignment]
    host._registry_or_create().register("half")
    assert bank.records("half") == [] and bank.search("half", "anything") == []
    assert any("'half' is registered but has no collection" in p for p in bank.layout_problems())
    assert bank.repair_layout() == ["created the collection of namespace 'half'"]
    assert bank.layout_problems() == []
    assert bank.add(MemoryRecord(namespace="half", content="hello")).namespace == "half"


def test_an_unregistered_collection_is_registered_or_dropped(tmp_path: Path) -> None:
    bank = StateBank(path=tmp_path / "b", embeddings=_emb())
    host: ChromaHost = bank.host  # type: ignore[assignment]
    name = collection_name_for(host.collection_name, "lost")
    coll = host.client.get_or_create_collection(name, embedding_function=None)
    rec = MemoryRecord(namespace="lost", content="kept")
    from langchain_atma.bank.bank import _record_to_row

    row = _record_to_row(rec, [0.1] * 16, 1)
    coll.upsert(
        ids=[row.id], embeddings=[row.embedding], documents=[row.text], metadatas=[row.metadata]
    )
    host.client.get_or_create_collection(collection_name_for(host.collection_name, "empty"))
    assert len([p for p in bank.layout_problems() if "not in the registry" in p]) == 2
    fixed = bank.repair_layout()
    assert "registered namespace 'lost'" in fixed and len(fixed) == 2
    assert [r.content for r in bank.records("lost")] == ["kept"]
    assert bank.namespaces() == ["lost"] and bank.layout_problems() == []


def test_a_new_bank_refuses_the_single_layout_after_the_fact(tmp_path: Path) -> None:
    StateBank(path=tmp_path / "b", embeddings=_emb()).add(MemoryRecord(namespace="u", content="hi"))
    with pytest.raises(ConfigError, match="namespaced layout"):
        ChromaHost.persistent(tmp_path / "b", layout="single")


def test_atma_migrate_of_a_missing_bank_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate", "--path", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("atma: error: no bank at") and "Traceback" not in err
    assert not (tmp_path / "none").exists()  # nothing created
