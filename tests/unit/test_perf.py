"""``atma bench perf``: the read-path cost curve and the write path's round-trip count."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_atma.bank import ChromaHost, StateBank
from langchain_atma.benchmarks.perf import _bulk_load, _CountingHost, read_curve
from langchain_atma.benchmarks.plots import plot_perf
from langchain_atma.embeddings import default_embeddings
from langchain_atma.records import MemoryRecord


def test_bulk_load_keeps_every_chain_inside_its_namespace(tmp_path: Path) -> None:
    bank = StateBank(path=tmp_path / "b", embeddings=DeterministicFakeEmbedding(size=8))
    spaces = ["a", "b", "c"]
    texts = ["I live in a flat.", "Nice weather today.", "My dog is called Pip."]
    vecs = np.random.default_rng(0).normal(size=(3, 8)).astype(np.float32)
    _bulk_load(bank, spaces, 0, 150, texts, vecs, np.random.default_rng(0))
    for ns in spaces:
        recs = bank.records(ns)
        assert len(recs) == 50 and {r.namespace for r in recs} == {ns}
        assert sum(r.status.value == "superseded" for r in recs) == 3
        assert bank.verify(ns) == []  # links reciprocal and in the namespace


def test_read_curve_rows_and_plot(tmp_path: Path) -> None:
    rows = read_curve(
        default_embeddings(),
        sizes=[40, 120],
        namespaces=4,
        server=False,
        queries=12,
        workdir=tmp_path,
        progress=False,
    )
    assert [(r["size"], r["namespaces"], r["mode"]) for r in rows] == [
        (40, 4, "embedded"),
        (120, 4, "embedded"),
    ]
    for r in rows:
        assert 0 < r["seed_ms_p50"] <= r["seed_ms_p95"]
        assert r["retrieve_ms_p95"] >= r["seed_ms_p50"]
        assert r["rss_mb"] > 0 and r["disk_bytes_per_record"] > 0
    out = plot_perf({"curve": rows}, tmp_path / "perf.png")
    assert out.stat().st_size > 1000


def test_counting_host_counts_protocol_calls_only() -> None:
    host = _CountingHost(ChromaHost.ephemeral())
    bank = StateBank(host=host, embeddings=DeterministicFakeEmbedding(size=8))  # type: ignore
    assert bank.host.namespaced is True  # attributes pass through uncounted
    host.calls.clear()
    bank.add(MemoryRecord(namespace="u", content="hello"))
    assert host.calls["upsert"] == 1  # one row: atomic without a journal entry
    assert set(host.calls) <= {
        "upsert",
        "get",
        "query",
        "scan",
        "delete",
        "count",
        "journal_put",
        "journal_delete",
        "journal_pending",
    }


@pytest.mark.parametrize("bad", [[], [5]])
def test_run_perf_rejects_bad_sizes(bad: list[int]) -> None:
    from langchain_atma.benchmarks.perf import run_perf
    from langchain_atma.errors import ConfigError

    with pytest.raises(ConfigError):
        run_perf(sizes=bad, progress=False)
