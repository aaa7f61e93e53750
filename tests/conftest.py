"""Shared fixtures.

Unit tests run offline with sockets disabled (pytest-socket; unix sockets are
allowed). The real all-MiniLM-L6-v2 encoder is loaded once per session where a
test needs meaningful vectors; pure bank tests use a deterministic fake.
"""

from __future__ import annotations

import os

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# one torch thread: the encoder is faster single-threaded on a busy 2-core machine
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def minilm():
    """The real default encoder, loaded once."""
    from langchain_atma.embeddings import MiniLMEmbeddings

    emb = MiniLMEmbeddings()
    emb.embed_query("warm up")
    return emb


@pytest.fixture
def fake_embeddings():
    """Fast deterministic vectors (not semantic)."""
    return DeterministicFakeEmbedding(size=32)


@pytest.fixture
def mem_bank(fake_embeddings):
    """A bank on an in-memory Chroma collection with fake embeddings."""
    from langchain_atma.bank import StateBank

    return StateBank.in_memory(embeddings=fake_embeddings)
