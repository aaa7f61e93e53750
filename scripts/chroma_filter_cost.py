#!/usr/bin/env python
"""What a metadata filter costs a Chroma search (the reason for decision 0005).

    python scripts/chroma_filter_cost.py [ROWS]    # default 100000

Fills one embedded collection with ROWS random unit vectors (384 dimensions) whose
metadata say one namespace, a status (1 in 20 superseded) and one of ten speakers,
then times 50 top-10 searches without a filter, with the namespace filter (matching
every row), with namespace and status, and with namespace and one speaker. Run it
alone on the machine.
"""

from __future__ import annotations

import sys
import tempfile
import time
from typing import Any

import chromadb
import numpy as np
from chromadb.config import Settings


def main() -> int:
    """Print p50 / p95 milliseconds per kind of search."""
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    client = chromadb.PersistentClient(
        path=tempfile.mkdtemp(), settings=Settings(anonymized_telemetry=False)
    )
    coll = client.get_or_create_collection(
        "filter-cost", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(rows, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for lo in range(0, rows, 5000):
        ids = range(lo, min(rows, lo + 5000))
        coll.upsert(
            ids=[f"r{j}" for j in ids],
            embeddings=vecs[lo : lo + len(ids)],
            documents=["x"] * len(ids),
            metadatas=[
                {
                    "atma_ns": "n0",
                    "atma_status": "superseded" if j % 20 == 0 else "active",
                    "atma_speaker": f"p{j % 10}",
                }
                for j in ids
            ],
        )
    queries = rng.normal(size=(50, 384)).astype(np.float32)
    live = {"atma_status": {"$in": ["active", "transition"]}}
    cases: list[tuple[str, dict[str, Any] | None]] = [
        ("no filter", None),
        ("namespace (every row)", {"atma_ns": "n0"}),
        ("namespace and status", {"$and": [{"atma_ns": "n0"}, live]}),
        ("namespace and speaker (1 in 10)", {"$and": [{"atma_ns": "n0"}, {"atma_speaker": "p3"}]}),
    ]
    print(f"{rows:,} rows; top 10 of 50 searches\n\n| search | p50 ms | p95 ms |\n|---|---:|---:|")
    for label, where in cases:
        times = []
        for q in queries:
            t = time.perf_counter()
            coll.query(
                query_embeddings=[q.tolist()],
                n_results=10,
                where=where,
                include=["embeddings", "documents", "metadatas", "distances"],
            )
            times.append((time.perf_counter() - t) * 1000)
        print(f"| {label} | {np.percentile(times, 50):.1f} | {np.percentile(times, 95):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
