"""Sentry: the lightweight proposal gate of the bank (numpy inference only).

When a new memory arrives, the bank collects a small candidate set of prior
records (host retrieval plus state links). Sentry scores every (new, candidate)
pair with two normalized projection heads over the sentence embeddings:

* the *topic* head (``Linear -> ReLU -> Linear``) keeps slot identity, so
  ``a = <z_top_i, z_top_j>`` is high when two records talk about the same
  state variable (where someone lives, their job, their pet...);
* the *logic* head (``Linear -> Tanh -> Linear``) keeps the stance/value, so
  ``b = <z_log_i, z_log_j>`` is high when the two records agree;
* the gap score is ``d = a - b``.

A pair is routed to the audit Judge when
``a > tau_top and (b < tau_log or d > tau_gap)`` (paper, eq. 4). Sentry only
*proposes* pairs; it never decides the relation.

Deviation from the paper: the paper also fine-tuned the encoder. Here the
encoder is frozen and only the two heads are trained, because the bank already
stores one unit-normalized embedding per record; reusing those vectors means a
write needs no second encoder pass, and the gate costs two small matrix
products per record. Heads are therefore tied to one encoder (its name and
dimension are stored with them); see :mod:`langchain_atma.bank.sentry_train`
and ``atma sentry train`` to train heads for another encoder.

This module imports numpy only (no torch): it runs on every write.

Example:
    >>> import numpy as np
    >>> from langchain_atma.bank.sentry import Sentry, SentryHeads
    >>> heads = SentryHeads.random(dim=8, hidden=16, out_dim=4, seed=0)
    >>> sentry = Sentry(heads)
    >>> rng = np.random.default_rng(0)
    >>> scores = sentry.score(rng.normal(size=8), rng.normal(size=(3, 8)))
    >>> scores.a.shape, scores.flagged.dtype
    ((3,), dtype('bool'))
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from langchain_atma.embeddings import DEFAULT_ENCODER_NAME
from langchain_atma.errors import SentryError

__all__ = [
    "DATA_DIR",
    "HEADS_FORMAT_VERSION",
    "PairScores",
    "Sentry",
    "SentryHeads",
    "SentryThresholds",
    "heads_filename",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
"""Folder holding the shipped projection heads (``sentry_heads_<encoder>.npz``)."""

HEADS_FORMAT_VERSION = 1
"""Version of the ``.npz`` layout written by :meth:`SentryHeads.save`."""

_EPS = 1e-12
_WEIGHT_KEYS = (
    "top_w1", "top_b1", "top_w2", "top_b2",
    "log_w1", "log_b1", "log_w2", "log_b2",
)


def heads_filename(encoder_name: str) -> str:
    """File name of the shipped heads for an encoder name (or model path).

    Args:
        encoder_name: a short encoder name such as ``"all-MiniLM-L6-v2"`` or
            a model path (its last component is used).

    Returns:
        ``"sentry_heads_<name>.npz"`` with unsafe characters replaced by ``_``.
    """
    base = encoder_name.rstrip("/\\").replace("\\", "/").split("/")[-1] or "encoder"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in base)
    return f"sentry_heads_{safe}.npz"


class SentryThresholds(BaseModel):
    """Gate thresholds (paper A.8 defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tau_top: float = Field(
        0.60, ge=0.0, le=1.0,
        description="Topic similarity a pair must exceed to be considered the same state slot.",
    )
    tau_log: float = Field(
        0.45, ge=0.0, le=1.0,
        description="Logic similarity below which a same-slot pair is logically suspicious.",
    )
    tau_gap: float = Field(
        0.15, ge=-1.0, le=2.0,
        description="Topic-minus-logic gap above which a same-slot pair is suspicious.",
    )


@dataclass(frozen=True)
class PairScores:
    """Sentry scores of a batch of pairs (all arrays have one entry per pair).

    Attributes:
        a: topic similarity ``<z_top_i, z_top_j>``.
        b: logic similarity ``<z_log_i, z_log_j>``.
        d: gap score ``a - b``.
        flagged: ``a > tau_top and (b < tau_log or d > tau_gap)``: the pair
            needs audit.
    """

    a: np.ndarray
    b: np.ndarray
    d: np.ndarray
    flagged: np.ndarray

    def __len__(self) -> int:
        return int(self.a.shape[0])

    def flagged_indices(self) -> list[int]:
        """Indices of the flagged pairs, in input order."""
        return [int(i) for i in np.flatnonzero(self.flagged)]


def _as_matrix(x: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise SentryError(f"{what} must be a numeric array: {exc}") from exc
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise SentryError(f"{what} must be a vector or a matrix, got shape {arr.shape}")
    return arr


def _l2(x: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    return x / np.maximum(norms, _EPS)[:, None]


class SentryHeads:
    """The two projection heads, as numpy arrays (computed in float32).

    Topic head: ``Linear(dim, hidden) -> ReLU -> Linear(hidden, out_dim)``;
    logic head: ``Linear(dim, hidden) -> Tanh -> Linear(hidden, out_dim)``;
    each output is L2-normalized. Weights are stored ``(in, out)``.

    Args:
        weights: the eight arrays ``top_w1, top_b1, top_w2, top_b2, log_w1,
            log_b1, log_w2, log_b2``.
        encoder_name: the encoder whose vectors the heads were trained on.
        metadata: small JSON-able dict (seed, training metrics...).
    """

    def __init__(
        self,
        weights: dict[str, np.ndarray],
        *,
        encoder_name: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        missing = [k for k in _WEIGHT_KEYS if k not in weights]
        if missing:
            raise SentryError(f"Sentry heads are missing arrays: {', '.join(missing)}")
        w = {k: np.ascontiguousarray(np.asarray(weights[k], dtype=np.float32))
             for k in _WEIGHT_KEYS}
        for head in ("top", "log"):
            w1, b1, w2, b2 = (w[f"{head}_{n}"] for n in ("w1", "b1", "w2", "b2"))
            if w1.ndim != 2 or w2.ndim != 2 or b1.ndim != 1 or b2.ndim != 1:
                raise SentryError(f"{head} head arrays have wrong ranks")
            chained = (b1.shape[0] == w1.shape[1] and w2.shape[0] == w1.shape[1]
                       and b2.shape[0] == w2.shape[1])
            if not chained:
                raise SentryError(
                    f"{head} head shapes do not chain: {w1.shape}, {b1.shape}, "
                    f"{w2.shape}, {b2.shape}"
                )
            if not all(np.isfinite(a).all() for a in (w1, b1, w2, b2)):
                raise SentryError(f"{head} head holds non-finite weights")
        if w["top_w1"].shape[0] != w["log_w1"].shape[0]:
            raise SentryError("topic and logic heads expect different input dimensions")
        if not encoder_name:
            raise SentryError("Sentry heads need an encoder name")
        self._w = w
        self.encoder_name = encoder_name
        self.metadata: dict[str, Any] = dict(metadata or {})

    @property
    def dim(self) -> int:
        """Input (embedding) dimension."""
        return int(self._w["top_w1"].shape[0])

    @property
    def hidden(self) -> int:
        """Hidden width of the heads."""
        return int(self._w["top_w1"].shape[1])

    @property
    def out_dim(self) -> int:
        """Output dimension of the topic head (the logic head may differ)."""
        return int(self._w["top_w2"].shape[1])

    def weights(self) -> dict[str, np.ndarray]:
        """A copy of the eight weight arrays."""
        return {k: v.copy() for k, v in self._w.items()}

    @classmethod
    def random(
        cls, dim: int, hidden: int = 64, out_dim: int = 32, *, seed: int = 0,
        encoder_name: str = "random",
    ) -> SentryHeads:
        """Randomly initialized heads (for tests and examples only)."""
        rng = np.random.default_rng(seed)
        w: dict[str, np.ndarray] = {}
        for head in ("top", "log"):
            w[f"{head}_w1"] = rng.normal(0, dim ** -0.5, size=(dim, hidden))
            w[f"{head}_b1"] = np.zeros(hidden)
            w[f"{head}_w2"] = rng.normal(0, hidden ** -0.5, size=(hidden, out_dim))
            w[f"{head}_b2"] = np.zeros(out_dim)
        return cls(w, encoder_name=encoder_name, metadata={"seed": seed, "random": True})

    def project(self, vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Project embeddings to ``(z_top, z_log)``, both L2-normalized.

        Args:
            vecs: one vector ``(dim,)`` or a batch ``(n, dim)``.

        Returns:
            Two float32 matrices ``(n, out_dim)`` (``n = 1`` for one vector).

        Raises:
            SentryError: wrong shape, dimension or non-finite values.
        """
        x = _as_matrix(vecs, "vectors")
        if x.shape[1] != self.dim:
            raise SentryError(
                f"vectors have dimension {x.shape[1]} but the Sentry heads for "
                f"{self.encoder_name!r} expect {self.dim}"
            )
        if not np.isfinite(x).all():
            raise SentryError("vectors hold NaN or infinite values")
        w = self._w
        h_top = np.maximum(x @ w["top_w1"] + w["top_b1"], 0.0)
        z_top = _l2(h_top @ w["top_w2"] + w["top_b2"])
        h_log = np.tanh(x @ w["log_w1"] + w["log_b1"])
        z_log = _l2(h_log @ w["log_w2"] + w["log_b2"])
        return z_top.astype(np.float32, copy=False), z_log.astype(np.float32, copy=False)

    def save(self, path: str | Path, *, dtype: str = "float16") -> Path:
        """Write the heads to an ``.npz`` file (compressed).

        Args:
            path: destination (written exactly there, suffix included).
            dtype: storage dtype of the weights, ``"float16"`` or ``"float32"``.

        Returns:
            The path written.
        """
        if dtype not in ("float16", "float32"):
            raise SentryError(f"unsupported storage dtype {dtype!r}")
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {k: v.astype(dtype) for k, v in self._w.items()}
        arrays["encoder_name"] = np.array(self.encoder_name)
        arrays["metadata"] = np.array(json.dumps(self.metadata, sort_keys=True))
        arrays["format_version"] = np.array(HEADS_FORMAT_VERSION)
        with out.open("wb") as fh:
            np.savez_compressed(fh, **arrays)  # type: ignore[arg-type]
        return out

    @classmethod
    def load(cls, path: str | Path) -> SentryHeads:
        """Load heads written by :meth:`save`.

        Raises:
            SentryError: the file is missing or not a Sentry heads file.
        """
        p = Path(path)
        if not p.is_file():
            raise SentryError(f"Sentry heads file not found: {p}")
        try:
            with np.load(p, allow_pickle=False) as data:
                files = set(data.files)
                if "encoder_name" not in files or not set(_WEIGHT_KEYS) <= files:
                    raise SentryError(f"{p} is not a Sentry heads file (missing arrays)")
                version = int(data["format_version"]) if "format_version" in files else 1
                if version > HEADS_FORMAT_VERSION:
                    raise SentryError(
                        f"{p} has heads format {version}; this version reads up to "
                        f"{HEADS_FORMAT_VERSION}"
                    )
                weights = {k: np.asarray(data[k]) for k in _WEIGHT_KEYS}
                name = str(data["encoder_name"])
                meta_raw = str(data["metadata"]) if "metadata" in files else "{}"
        except SentryError:
            raise
        except Exception as exc:  # noqa: BLE001 - zip/npz errors vary by numpy version
            raise SentryError(f"cannot read Sentry heads from {p}: {exc}") from exc
        try:
            meta = json.loads(meta_raw)
        except json.JSONDecodeError as exc:
            raise SentryError(f"{p} has unreadable metadata: {exc}") from exc
        return cls(weights, encoder_name=name, metadata=meta if isinstance(meta, dict) else {})

    def __repr__(self) -> str:
        return (f"SentryHeads(encoder_name={self.encoder_name!r}, dim={self.dim}, "
                f"hidden={self.hidden}, out_dim={self.out_dim})")


class Sentry:
    """The proposal gate: pair scores and the audit flag.

    Args:
        heads: the projection heads (must match the bank's encoder).
        thresholds: gate thresholds; paper defaults when ``None``.
        cache_size: how many per-vector projections to keep (LRU, keyed by
            the exact vector bytes); ``0`` disables the cache.
    """

    def __init__(
        self,
        heads: SentryHeads,
        thresholds: SentryThresholds | None = None,
        *,
        cache_size: int = 4096,
    ) -> None:
        if not isinstance(heads, SentryHeads):
            raise SentryError(f"heads must be SentryHeads, got {type(heads).__name__}")
        if cache_size < 0:
            raise SentryError("cache_size must be >= 0")
        self.heads = heads
        self.thresholds = thresholds or SentryThresholds()
        self._cache_size = cache_size
        self._cache: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ loading
    @classmethod
    def for_encoder(
        cls, encoder_name: str, thresholds: SentryThresholds | None = None,
        *, data_dir: str | Path | None = None,
    ) -> Sentry:
        """Load the shipped heads trained for ``encoder_name``.

        Args:
            encoder_name: the encoder's short name (or model path).
            thresholds: gate thresholds; paper defaults when ``None``.
            data_dir: where to look (the package's ``data`` folder by default).

        Raises:
            SentryError: no heads match the encoder.
        """
        folder = Path(data_dir) if data_dir is not None else DATA_DIR
        candidate = folder / heads_filename(encoder_name)
        if candidate.is_file():
            return cls(SentryHeads.load(candidate), thresholds)
        base = encoder_name.rstrip("/\\").replace("\\", "/").split("/")[-1]
        for path in sorted(folder.glob("sentry_heads_*.npz")):
            try:
                heads = SentryHeads.load(path)
            except SentryError:
                continue
            if heads.encoder_name in (encoder_name, base):
                return cls(heads, thresholds)
        raise SentryError(
            f"no Sentry heads for encoder {encoder_name!r} in {folder}. Train them with "
            f"`atma sentry train --encoder {encoder_name} --out PATH` (or "
            "langchain_atma.bank.sentry_train.train_sentry) and load them with "
            "Sentry(SentryHeads.load(PATH))."
        )

    @classmethod
    def default(cls, thresholds: SentryThresholds | None = None) -> Sentry:
        """The Sentry for the default encoder (all-MiniLM-L6-v2)."""
        return cls.for_encoder(DEFAULT_ENCODER_NAME, thresholds)

    @property
    def encoder_name(self) -> str:
        """Name of the encoder the heads belong to."""
        return self.heads.encoder_name

    @property
    def dim(self) -> int:
        """Embedding dimension the heads expect."""
        return self.heads.dim

    # --------------------------------------------------------------- projection
    def project(self, vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Project vectors with the heads (uses the per-vector cache)."""
        x = _as_matrix(vecs, "vectors")
        if x.shape[1] != self.heads.dim:
            raise SentryError(
                f"vectors have dimension {x.shape[1]} but the Sentry heads for "
                f"{self.encoder_name!r} expect {self.heads.dim}"
            )
        if self._cache_size == 0 or x.shape[0] == 0:
            return self.heads.project(x)
        n = x.shape[0]
        keys = [x[i].tobytes() for i in range(n)]
        z_top = np.empty((n, self.heads.out_dim), dtype=np.float32)
        z_log = np.empty((n, self.heads._w["log_w2"].shape[1]), dtype=np.float32)
        miss: list[int] = []
        with self._lock:
            for i, key in enumerate(keys):
                hit = self._cache.get(key)
                if hit is None:
                    miss.append(i)
                else:
                    self._cache.move_to_end(key)
                    z_top[i], z_log[i] = hit
        if miss:
            mt, ml = self.heads.project(x[miss])
            z_top[miss], z_log[miss] = mt, ml
            with self._lock:
                for row, i in enumerate(miss):
                    self._cache[keys[i]] = (mt[row], ml[row])
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return z_top, z_log

    def clear_cache(self) -> None:
        """Forget cached projections."""
        with self._lock:
            self._cache.clear()

    # ------------------------------------------------------------------ scoring
    def _gate(self, a: np.ndarray, b: np.ndarray) -> PairScores:
        t = self.thresholds
        d = a - b
        flagged = (a > t.tau_top) & ((b < t.tau_log) | (d > t.tau_gap))
        return PairScores(a=a, b=b, d=d, flagged=flagged)

    def score(self, new_vec: np.ndarray, cand_vecs: np.ndarray) -> PairScores:
        """Score one new record against many candidates.

        Args:
            new_vec: the new record's embedding, ``(dim,)`` or ``(1, dim)``.
            cand_vecs: candidate embeddings ``(m, dim)`` (``m`` may be 0).

        Returns:
            :class:`PairScores` with ``m`` entries.

        Raises:
            SentryError: shapes or dimensions do not match the heads.
        """
        new = _as_matrix(new_vec, "new_vec")
        if new.shape[0] != 1:
            raise SentryError(f"new_vec must be one vector, got shape {new.shape}")
        cands = np.asarray(cand_vecs, dtype=np.float32)
        if cands.ndim == 1 and cands.size == 0:
            cands = cands.reshape(0, new.shape[1])
        cands = _as_matrix(cands, "cand_vecs")
        if cands.shape[1] != new.shape[1]:
            raise SentryError(
                f"new_vec has dimension {new.shape[1]} but cand_vecs have {cands.shape[1]}"
            )
        zt, zl = self.project(np.concatenate([new, cands], axis=0))
        a = (zt[1:] @ zt[0]).astype(np.float32)
        b = (zl[1:] @ zl[0]).astype(np.float32)
        return self._gate(a, b)

    def score_pairs(self, left: np.ndarray, right: np.ndarray) -> PairScores:
        """Score row-wise pairs ``(left[k], right[k])``.

        Raises:
            SentryError: the two matrices differ in shape or do not match the heads.
        """
        lm = _as_matrix(left, "left")
        rm = _as_matrix(right, "right")
        if lm.shape != rm.shape:
            raise SentryError(f"left {lm.shape} and right {rm.shape} must have the same shape")
        if lm.shape[1] != self.heads.dim:
            raise SentryError(
                f"vectors have dimension {lm.shape[1]} but the Sentry heads for "
                f"{self.encoder_name!r} expect {self.heads.dim}"
            )
        if lm.shape[0] == 0:
            return self._gate(np.zeros(0, np.float32), np.zeros(0, np.float32))
        zt_l, zl_l = self.project(lm)
        zt_r, zl_r = self.project(rm)
        a = np.einsum("ij,ij->i", zt_l, zt_r).astype(np.float32)
        b = np.einsum("ij,ij->i", zl_l, zl_r).astype(np.float32)
        return self._gate(a, b)

    def __repr__(self) -> str:
        return f"Sentry(heads={self.heads!r}, thresholds={self.thresholds!r})"
