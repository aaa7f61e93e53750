"""The default encoder: ONNX and sentence-transformers give the same vectors."""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from langchain_atma import _onnx_encoder, embeddings
from langchain_atma.embeddings import MiniLMEmbeddings
from langchain_atma.errors import ConfigError

TEXTS = [
    "ok",
    "",
    "Moved house last week, the new kitchen is twice the size 🎉",
    "word " * 400,  # longer than the encoder's 256 tokens: truncated alike
    "Ünïcode façade, naïve café",
]


def test_onnx_vectors_match_sentence_transformers() -> None:
    onnx = MiniLMEmbeddings(backend="onnx").encode(TEXTS)
    torch = MiniLMEmbeddings(backend="torch").encode(TEXTS)
    assert onnx.shape == torch.shape == (len(TEXTS), 384)
    assert np.abs(onnx - torch).max() < 1e-5
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)


def test_batching_does_not_change_a_vector() -> None:
    emb = MiniLMEmbeddings(backend="onnx", batch_size=2)
    together = emb.encode(TEXTS)
    alone = np.stack([emb.encode([t])[0] for t in TEXTS])
    assert np.abs(together - alone).max() < 1e-5


def test_fingerprint_follows_the_model_files(tmp_path: Path) -> None:
    src = Path(MiniLMEmbeddings().model_name_or_path)
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(src / name, tmp_path / name)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 100)
    first = _onnx_encoder._fingerprint(tmp_path)
    assert first == _onnx_encoder._fingerprint(tmp_path)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 99 + b"\1")
    assert _onnx_encoder._fingerprint(tmp_path) != first


def test_cache_dir_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ATMA_CACHE_DIR", str(tmp_path / "c"))
    assert _onnx_encoder.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("ATMA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert _onnx_encoder.cache_dir() == tmp_path / "x" / "langchain-atma"


def _failing_export(model_dir: Path, path: Path) -> None:
    raise RuntimeError("no room")


def test_a_failed_export_falls_back_to_torch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ATMA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(embeddings, "_ONNX_CACHE", {})
    monkeypatch.setattr(_onnx_encoder, "_export", _failing_export)
    with pytest.raises(ConfigError, match="ONNX encoder unavailable"):
        MiniLMEmbeddings(backend="onnx").encode(["hi"])
    monkeypatch.setattr(embeddings, "_ONNX_CACHE", {})
    with caplog.at_level(logging.WARNING, logger="langchain_atma.embeddings"):
        vec = MiniLMEmbeddings().encode(["hi"])
    assert "sentence-transformers" in caplog.text
    assert np.abs(vec - MiniLMEmbeddings(backend="torch").encode(["hi"])).max() < 1e-6
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kwargs", [{"backend": "tf"}, {"threads": 0}, {"threads": True}])
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        MiniLMEmbeddings(**kwargs)  # type: ignore[arg-type]


def test_the_read_path_never_imports_torch(tmp_path: Path) -> None:
    MiniLMEmbeddings(backend="onnx").encode(["export once"])  # the cached graph exists
    script = f"""
import io, sys
from langchain_atma import StateBank, ingest_events, ask
bank = StateBank(path={str(tmp_path)!r})
ingest_events(bank, [{{"text": "I keep bees on the roof.", "speaker": "Ana",
                       "timestamp": "2024-01-02T10:00:00"}}], namespace="ana")
ask(bank, "ana", "What does Ana keep on the roof?")
print("torch" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-2000:]
