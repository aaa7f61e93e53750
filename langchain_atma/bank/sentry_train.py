"""Train the Sentry projection heads on generated pairs (reproducible by seed).

The encoder is frozen: every sentence of the generated pairs
(:mod:`langchain_atma.bank.sentry_data`) is encoded once, in batches, to the
same unit-normalized vector the bank stores. Two small heads (topic:
``Linear -> ReLU -> Linear``; logic: ``Linear -> Tanh -> Linear``, both
L2-normalized) are trained with the paper's objective::

    L = alpha * MSE(<z_top_u, z_top_p>, y_top) + beta * MSE(<z_log_u, z_log_p>, y_log)

with AdamW (Gaussian input noise and dropout as regularizers). Pairs are
split **by interaction id** into train / validation / test; inside each split,
nearest-neighbour ``(0, 0)`` pairs are mined in the encoder's space (chat vs
chat, state vs a sentence of an unlinked slot: what a host retrieval hands to
the gate). The checkpoint with the lowest validation loss is kept and written as a
:class:`~langchain_atma.bank.sentry.SentryHeads` ``.npz`` file. One phrasing
family (``holdout_family``) is never seen in training: a separate set whose
*new* statements use only that family measures how the gate transfers to an
unseen way of writing. Both reported gate scores use the saved file through
the numpy :class:`~langchain_atma.bank.sentry.Sentry` with the paper's
thresholds, so they describe exactly what ships.

torch is imported inside the functions only (the bank never needs it).

Example:
    >>> from langchain_atma.bank.sentry_train import SentryTrainConfig, train_sentry
    >>> cfg = SentryTrainConfig(n_interactions=60, epochs=1, out_path="/tmp/h.npz")
    >>> report = train_sentry(cfg, progress=False)  # doctest: +SKIP
    >>> report.output_file  # doctest: +SKIP
    '/tmp/h.npz'

Command line: ``atma sentry train --seed 0 --epochs 60 --out PATH`` (see docs/SENTRY.md).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from langchain_atma.bank.sentry import DATA_DIR, Sentry, SentryHeads, heads_filename
from langchain_atma.bank.sentry_data import (
    FAMILIES,
    SentryPair,
    generate_pairs,
    slot_names,
    slots_linked,
)
from langchain_atma.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from langchain_atma.embeddings import SentenceTransformerEmbeddings

__all__ = [
    "GateMetrics",
    "SentryTrainConfig",
    "SentryTrainReport",
    "evaluate_gate",
    "train_sentry",
]

_GENERATOR_VERSION = 1


class SentryTrainConfig(BaseModel):
    """Everything that determines a Sentry training run (same config -> same heads)."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(default=0, description="Seed of the data generator, split and torch.")
    epochs: int = Field(default=60, ge=1, le=1000, description="Maximum training epochs.")
    batch_size: int = Field(default=256, ge=1, description="Pairs per AdamW step.")
    lr: float = Field(default=2e-3, gt=0, description="AdamW learning rate.")
    weight_decay: float = Field(default=1e-3, ge=0, description="AdamW weight decay.")
    alpha: float = Field(default=1.0, ge=0, description="Weight of the topic MSE term.")
    beta: float = Field(default=1.0, ge=0, description="Weight of the logic MSE term.")
    hidden: int = Field(default=256, ge=1, description="Hidden width of both heads.")
    out_dim: int = Field(default=128, ge=1, description="Output dimension of both heads.")
    dropout: float = Field(default=0.2, ge=0, lt=1, description="Dropout on the hidden layer.")
    input_noise: float = Field(
        default=0.03, ge=0, description="Std of Gaussian noise added to input vectors in training."
    )
    patience: int | None = Field(
        default=8,
        ge=1,
        description="Stop after this many epochs without a better validation loss (None: never).",
    )
    n_interactions: int = Field(
        default=1600,
        ge=1,
        description="Generated interactions for train/val/test (~18 pairs each).",
    )
    holdout_interactions: int | None = Field(
        default=None,
        ge=1,
        description="Interactions of the held-out family set (default n_interactions // 6).",
    )
    holdout_family: str | None = Field(
        default="reported",
        description="Phrasing family kept out of training and evaluated separately (None: none).",
    )
    val_fraction: float = Field(default=0.1, gt=0, lt=0.5, description="Share of interaction ids.")
    test_fraction: float = Field(default=0.1, gt=0, lt=0.5, description="Share of interaction ids.")
    encoder: str | None = Field(
        default=None,
        description="Local SentenceTransformer directory; None = the default all-MiniLM-L6-v2.",
    )
    out_path: str | None = Field(
        default=None,
        description="Output .npz; None = the shipped heads file for that encoder (package data).",
    )
    embedding_cache: str | None = Field(
        default=None,
        description="Optional .npz cache of sentence vectors, reused across runs of one encoder.",
    )
    mine_chitchat_k: int = Field(
        default=2,
        ge=0,
        description="Per chat sentence, nearest other chat sentences added as (0, 0) pairs.",
    )
    mine_other_slot_k: int = Field(
        default=1,
        ge=0,
        description="Per state sentence, nearest sentences of unlinked slots added as (0, 0).",
    )
    threads: int = Field(default=1, ge=1, description="torch threads while training the heads.")
    storage_dtype: str = Field(
        default="float16", pattern="^(float16|float32)$", description="Weight dtype in the file."
    )


class GateMetrics(BaseModel):
    """How the numpy gate (paper thresholds) does on a labelled pair set."""

    n_pairs: int = Field(description="Pairs evaluated.")
    n_positive: int = Field(description="Pairs labelled (1, 0): same slot and conflicting.")
    precision: float = Field(description="Flagged pairs that are labelled conflicting.")
    recall: float = Field(description="Conflicting pairs that are flagged.")
    f1: float = Field(description="Harmonic mean of precision and recall.")
    flag_rate: float = Field(description="Share of all pairs flagged.")
    flag_rate_consistent: float = Field(description="Share of (1, 1) pairs flagged.")
    flag_rate_unrelated: float = Field(description="Share of (0, 0) pairs flagged.")
    flag_rate_by_kind: dict[str, float] = Field(description="Share flagged per pair kind.")
    loss: float = Field(description="alpha*MSE(a, y_top) + beta*MSE(b, y_log) of the saved heads.")


class SentryTrainReport(BaseModel):
    """What a training run did and how the saved heads score."""

    config: SentryTrainConfig = Field(description="The configuration used.")
    encoder_name: str = Field(description="Encoder the heads belong to.")
    dim: int = Field(description="Embedding dimension.")
    n_pairs: dict[str, int] = Field(description="Pairs per split (train, val, test, holdout).")
    train_kinds: dict[str, int] = Field(description="Training pairs per pair kind.")
    n_sentences: int = Field(description="Distinct sentences encoded.")
    train_loss: float = Field(description="Training loss at the best epoch (eval mode).")
    val_loss: float = Field(description="Best validation loss.")
    test_loss: float = Field(description="Test loss of the saved heads.")
    holdout_loss: float | None = Field(description="Loss on the held-out family set.")
    best_epoch: int = Field(description="Epoch (1-based) of the kept checkpoint.")
    epochs_run: int = Field(description="Epochs actually run (early stopping).")
    gate_test: GateMetrics = Field(description="Gate metrics on the held-out test split.")
    gate_holdout_family: GateMetrics | None = Field(
        description="Gate metrics on pairs whose new statement uses the held-out family."
    )
    ms_per_pair: float = Field(description="Numpy gate latency per (new, candidate) pair, ms.")
    output_file: str = Field(description="Path of the written heads file.")
    file_bytes: int = Field(description="Size of the written heads file.")
    encode_seconds: float = Field(description="Time spent encoding sentences.")
    seconds: float = Field(description="Total wall time.")


# ------------------------------------------------------------------ helpers


def _load_encoder(encoder: str | None) -> SentenceTransformerEmbeddings:
    from langchain_atma.embeddings import MiniLMEmbeddings, SentenceTransformerEmbeddings

    if encoder is None:
        return MiniLMEmbeddings()
    if not Path(encoder).exists():
        raise ConfigError(f"encoder directory not found: {encoder}")
    return SentenceTransformerEmbeddings(encoder)


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _encode(
    emb: SentenceTransformerEmbeddings,
    texts: Sequence[str],
    *,
    progress: bool,
    cache_path: str | None,
    chunk: int = 512,
) -> np.ndarray:
    """Encode texts once (with an optional on-disk cache keyed by encoder and text)."""
    cached: dict[str, np.ndarray] = {}
    cache_file = Path(cache_path) if cache_path else None
    if cache_file is not None and cache_file.is_file():
        with np.load(cache_file, allow_pickle=False) as data:
            if str(data["encoder_name"]) == emb.name:
                cached = dict(zip((str(k) for k in data["keys"]), data["vectors"], strict=True))
    keys = [_text_key(t) for t in texts]
    missing = [i for i, k in enumerate(keys) if k not in cached]
    if missing:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(missing), desc="encode", unit="sent", disable=not progress)
        for start in range(0, len(missing), chunk):
            idx = missing[start : start + chunk]
            vecs = emb.encode([texts[i] for i in idx])
            for i, vec in zip(idx, vecs, strict=True):
                cached[keys[i]] = vec
            bar.update(len(idx))
        bar.close()
        if cache_file is not None:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            ks = sorted(cached)
            with cache_file.open("wb") as fh:
                np.savez(
                    fh,
                    encoder_name=np.array(emb.name),
                    keys=np.array(ks),
                    vectors=np.stack([cached[k] for k in ks]).astype(np.float32),
                )
    out = np.stack([cached[k] for k in keys]).astype(np.float32)
    if not np.isfinite(out).all():
        raise ConfigError("the encoder returned non-finite vectors")
    return out


def _split_ids(pairs: Sequence[SentryPair], cfg: SentryTrainConfig) -> dict[str, list[int]]:
    ids = sorted({p.interaction_id for p in pairs})
    order = np.random.default_rng(cfg.seed).permutation(len(ids))
    n_val = max(1, round(len(ids) * cfg.val_fraction))
    n_test = max(1, round(len(ids) * cfg.test_fraction))
    if len(ids) < 3 or n_val + n_test >= len(ids):
        raise ConfigError("too few interactions to split into train/val/test; raise n_interactions")
    split_of: dict[str, str] = {}
    for rank, j in enumerate(order):
        split_of[ids[j]] = "val" if rank < n_val else "test" if rank < n_val + n_test else "train"
    out: dict[str, list[int]] = {"train": [], "val": [], "test": []}
    for i, p in enumerate(pairs):
        out[split_of[p.interaction_id]].append(i)
    return out


def _mine(
    pairs: Sequence[SentryPair], texts: dict[str, int], vecs: np.ndarray, cfg: SentryTrainConfig
) -> list[SentryPair]:
    """Nearest-neighbour (0, 0) pairs inside one split, found in the encoder's space.

    Chat sentences (episodes, small talk) get their ``mine_chitchat_k`` nearest
    other chat sentences; state sentences get their ``mine_other_slot_k``
    nearest sentences of a slot that is not linked to theirs. These are the
    pairs a host retrieval would hand to Sentry, so they teach the topic head
    that "similar" is not "same state slot".
    """
    tag: dict[str, str] = {}
    fam: dict[str, str] = {}
    owner: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for p in pairs:
        for text, t, f in (
            (p.new_text, p.new_slot, p.new_family),
            (p.old_text, p.slot, p.old_family),
        ):
            tag.setdefault(text, t)
            fam.setdefault(text, f)
            owner.setdefault(text, p.interaction_id)
        seen.add((p.new_text, p.old_text))
        seen.add((p.old_text, p.new_text))
    slots = set(slot_names())
    chat = [t for t, g in tag.items() if g.startswith(("chitchat", "smalltalk"))]
    states = [t for t, g in tag.items() if g in slots]
    out: list[SentryPair] = []
    jobs = (
        (chat, cfg.mine_chitchat_k, "mined_chitchat", False),
        (states, cfg.mine_other_slot_k, "mined_other_slot", True),
    )
    for group, k, kind, need_unlinked in jobs:
        if k <= 0 or len(group) < 2:
            continue
        mat = vecs[[texts[t] for t in group]]
        for start in range(0, len(group), 1024):
            sims = mat[start : start + 1024] @ mat.T
            for r in range(sims.shape[0]):
                i = start + r
                sims[r, i] = -np.inf
                n_cand = min(len(group) - 1, 8 * k)
                cand = np.argpartition(-sims[r], n_cand - 1)[:n_cand]
                cand = cand[np.argsort(-sims[r][cand], kind="stable")]
                taken = 0
                for j in cand:
                    a, b = group[i], group[int(j)]
                    if (a, b) in seen or (need_unlinked and slots_linked(tag[a], tag[b])):
                        continue
                    seen.add((a, b))
                    seen.add((b, a))
                    out.append(
                        SentryPair(
                            interaction_id=owner[a],
                            new_text=a,
                            old_text=b,
                            y_top=0,
                            y_log=0,
                            kind=kind,
                            slot=tag[b],
                            new_slot=tag[a],
                            new_family=fam[a],
                            old_family=fam[b],
                        )
                    )
                    taken += 1
                    if taken >= k:
                        break
    return out


def evaluate_gate(
    sentry: Sentry,
    new_vecs: np.ndarray,
    old_vecs: np.ndarray,
    pairs: Sequence[SentryPair],
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
) -> GateMetrics:
    """Score labelled pairs with a Sentry and summarize the gate.

    Args:
        sentry: the gate (its thresholds are used).
        new_vecs: embeddings of ``pairs[k].new_text`` (row ``k``).
        old_vecs: embeddings of ``pairs[k].old_text``.
        pairs: the labelled pairs.
        alpha: weight of the topic term in the reported loss.
        beta: weight of the logic term in the reported loss.

    Returns:
        Precision / recall / F1 of "flagged" against the conflicting label and
        flag rates per label and per pair kind.
    """
    if len(pairs) == 0:
        raise ConfigError("no pairs to evaluate")
    scores = sentry.score_pairs(new_vecs, old_vecs)
    flagged = scores.flagged
    y_top = np.array([p.y_top for p in pairs], dtype=np.float32)
    y_log = np.array([p.y_log for p in pairs], dtype=np.float32)
    pos = (y_top == 1) & (y_log == 0)
    cons = (y_top == 1) & (y_log == 1)
    neg = y_top == 0
    tp = int(np.sum(flagged & pos))
    n_flag = int(np.sum(flagged))
    n_pos = int(np.sum(pos))
    precision = tp / n_flag if n_flag else 0.0
    recall = tp / n_pos if n_pos else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    by_kind: dict[str, list[bool]] = {}
    for p, f in zip(pairs, flagged, strict=True):
        by_kind.setdefault(p.kind, []).append(bool(f))
    loss = alpha * float(np.mean((scores.a - y_top) ** 2)) + beta * float(
        np.mean((scores.b - y_log) ** 2)
    )

    def rate(mask: np.ndarray) -> float:
        return float(np.mean(flagged[mask])) if mask.any() else 0.0

    return GateMetrics(
        n_pairs=len(pairs),
        n_positive=n_pos,
        precision=round(precision, 4),
        recall=round(recall, 4),
        f1=round(f1, 4),
        flag_rate=round(float(np.mean(flagged)), 4),
        flag_rate_consistent=round(rate(cons), 4),
        flag_rate_unrelated=round(rate(neg), 4),
        flag_rate_by_kind={k: round(float(np.mean(v)), 4) for k, v in sorted(by_kind.items())},
        loss=round(loss, 5),
    )


def _ms_per_pair(
    heads: SentryHeads, n_candidates: int = 8, repeats: int = 50, blocks: int = 7
) -> float:
    """Median over timing blocks of one ``score`` call (new vs ``n_candidates``), per pair."""
    sentry = Sentry(heads, cache_size=0)
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(n_candidates + 1, heads.dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    sentry.score(vecs[0], vecs[1:])  # warm up
    per_block: list[float] = []
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(repeats):
            sentry.score(vecs[0], vecs[1:])
        per_block.append((time.perf_counter() - start) * 1000.0 / (repeats * n_candidates))
    return float(np.median(per_block))


# ------------------------------------------------------------------ training


def train_sentry(
    config: SentryTrainConfig | None = None, progress: bool = True
) -> SentryTrainReport:
    """Generate pairs, encode them once, train the heads and write the best checkpoint.

    Args:
        config: the run configuration (defaults reproduce the shipped heads).
        progress: show tqdm progress bars.

    Returns:
        A :class:`SentryTrainReport` (losses, gate metrics on the test split and
        on the held-out phrasing family, latency, output file).

    Raises:
        ConfigError: an unknown family, a missing encoder or too little data.
    """
    import torch
    from tqdm.auto import tqdm

    cfg = config or SentryTrainConfig()
    t0 = time.perf_counter()
    if cfg.holdout_family is not None and cfg.holdout_family not in FAMILIES:
        raise ConfigError(
            f"unknown holdout_family {cfg.holdout_family!r}; known: {', '.join(FAMILIES)}"
        )
    train_fams = [f for f in FAMILIES if f != cfg.holdout_family]
    pairs = generate_pairs(cfg.n_interactions, cfg.seed, families=train_fams)
    holdout: list[SentryPair] = []
    if cfg.holdout_family is not None:
        n_h = cfg.holdout_interactions or max(1, cfg.n_interactions // 6)
        holdout = generate_pairs(n_h, cfg.seed, new_families=[cfg.holdout_family], id_prefix="h")
        # the held-out set only keeps pairs whose new statement is written in that family
        holdout = [p for p in holdout if p.new_family == cfg.holdout_family]
        if not holdout:
            raise ConfigError("the held-out family set is empty; raise holdout_interactions")
    split = _split_ids(pairs, cfg)

    emb = _load_encoder(cfg.encoder)
    texts: dict[str, int] = {}
    for p in (*pairs, *holdout):
        for t in (p.new_text, p.old_text):
            texts.setdefault(t, len(texts))
    text_list = list(texts)
    t_enc = time.perf_counter()
    vecs = _encode(emb, text_list, progress=progress, cache_path=cfg.embedding_cache)
    encode_seconds = time.perf_counter() - t_enc
    dim = int(vecs.shape[1])

    def index(ps: Sequence[SentryPair]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        u = np.array([texts[p.new_text] for p in ps], dtype=np.int64)
        v = np.array([texts[p.old_text] for p in ps], dtype=np.int64)
        yt = np.array([p.y_top for p in ps], dtype=np.float32)
        yl = np.array([p.y_log for p in ps], dtype=np.float32)
        return u, v, yt, yl

    parts = {name: [pairs[i] for i in idx] for name, idx in split.items()}
    for name in parts:
        parts[name] = parts[name] + _mine(parts[name], texts, vecs, cfg)
    if holdout:
        holdout = holdout + [
            p for p in _mine(holdout, texts, vecs, cfg) if p.new_family == cfg.holdout_family
        ]
    arrays = {name: index(ps) for name, ps in parts.items()}

    prev_threads = torch.get_num_threads()
    prev_det = torch.are_deterministic_algorithms_enabled()
    try:
        torch.set_num_threads(cfg.threads)
        torch.use_deterministic_algorithms(True)
        torch.manual_seed(cfg.seed)
        np.random.seed(cfg.seed % (2**32))
        best_state, best_epoch, epochs_run, train_loss, val_loss = _fit(
            torch, tqdm, cfg, torch.from_numpy(vecs), arrays, progress=progress
        )
    finally:
        torch.set_num_threads(prev_threads)
        torch.use_deterministic_algorithms(prev_det)

    out = Path(cfg.out_path) if cfg.out_path else DATA_DIR / heads_filename(emb.name)
    meta: dict[str, Any] = {
        "seed": cfg.seed,
        "generator_version": _GENERATOR_VERSION,
        "config": json.loads(cfg.model_dump_json()),
        "best_epoch": best_epoch,
        "val_loss": round(val_loss, 6),
    }
    heads = SentryHeads(best_state, encoder_name=emb.name, metadata=meta)
    heads.save(out, dtype=cfg.storage_dtype)
    saved = SentryHeads.load(out)
    sentry = Sentry(saved, cache_size=0)

    def gate(ps: Sequence[SentryPair]) -> GateMetrics:
        u, v, _, _ = index(ps)
        return evaluate_gate(sentry, vecs[u], vecs[v], ps, alpha=cfg.alpha, beta=cfg.beta)

    gate_test = gate(parts["test"])
    gate_hold = gate(holdout) if holdout else None
    report = SentryTrainReport(
        config=cfg,
        encoder_name=emb.name,
        dim=dim,
        n_pairs={**{k: len(v) for k, v in parts.items()}, "holdout": len(holdout)},
        train_kinds=_kind_counts(parts["train"]),
        n_sentences=len(text_list),
        train_loss=round(train_loss, 5),
        val_loss=round(val_loss, 5),
        test_loss=gate_test.loss,
        holdout_loss=gate_hold.loss if gate_hold else None,
        best_epoch=best_epoch,
        epochs_run=epochs_run,
        gate_test=gate_test,
        gate_holdout_family=gate_hold,
        ms_per_pair=round(_ms_per_pair(saved), 4),
        output_file=str(out),
        file_bytes=out.stat().st_size,
        encode_seconds=round(encode_seconds, 1),
        seconds=0.0,
    )
    report.seconds = round(time.perf_counter() - t0, 1)
    return report


def _kind_counts(pairs: Sequence[SentryPair]) -> dict[str, int]:
    return dict(Counter(p.kind for p in pairs))


def _fit(
    torch: Any,
    tqdm: Any,
    cfg: SentryTrainConfig,
    vecs: Any,
    arrays: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    *,
    progress: bool,
) -> tuple[dict[str, np.ndarray], int, int, float, float]:
    """The AdamW loop; returns (best weights, best epoch, epochs run, train loss, val loss)."""
    nn = torch.nn
    dim = int(vecs.shape[1])

    def head(act: Any) -> Any:
        return nn.Sequential(
            nn.Linear(dim, cfg.hidden),
            act,
            nn.Dropout(cfg.dropout),
            nn.Linear(cfg.hidden, cfg.out_dim),
        )

    top = head(nn.ReLU())
    log = head(nn.Tanh())
    params = list(top.parameters()) + list(log.parameters())
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    f = torch.nn.functional
    tensors = {name: tuple(torch.from_numpy(a) for a in arr) for name, arr in arrays.items()}

    def loss_of(u: Any, v: Any, yt: Any, yl: Any, noise: bool = False) -> Any:
        xu, xv = vecs[u], vecs[v]
        if noise and cfg.input_noise > 0:
            xu = xu + torch.randn(xu.shape, generator=gen) * cfg.input_noise
            xv = xv + torch.randn(xv.shape, generator=gen) * cfg.input_noise
        a = (f.normalize(top(xu), dim=1) * f.normalize(top(xv), dim=1)).sum(1)
        b = (f.normalize(log(xu), dim=1) * f.normalize(log(xv), dim=1)).sum(1)
        return cfg.alpha * ((a - yt) ** 2).mean() + cfg.beta * ((b - yl) ** 2).mean()

    def evaluate(name: str) -> float:
        top.eval()
        log.eval()
        u, v, yt, yl = tensors[name]
        total = 0.0
        with torch.no_grad():
            for s in range(0, len(u), 4096):
                sl = slice(s, s + 4096)
                total += float(loss_of(u[sl], v[sl], yt[sl], yl[sl])) * len(u[sl])
        return total / max(1, len(u))

    gen = torch.Generator().manual_seed(cfg.seed)
    u_tr, v_tr, yt_tr, yl_tr = tensors["train"]
    n = len(u_tr)
    if n == 0:
        raise ConfigError("the training split is empty; raise n_interactions")
    best_val = float("inf")
    best_state: dict[str, np.ndarray] = {}
    best_epoch = 0
    best_train = float("nan")
    stale = 0
    epochs_run = 0
    bar = tqdm(range(1, cfg.epochs + 1), desc="sentry", unit="epoch", disable=not progress)
    for epoch in bar:
        top.train()
        log.train()
        perm = torch.randperm(n, generator=gen)
        for s in range(0, n, cfg.batch_size):
            idx = perm[s : s + cfg.batch_size]
            opt.zero_grad()
            loss = loss_of(u_tr[idx], v_tr[idx], yt_tr[idx], yl_tr[idx], noise=True)
            loss.backward()
            opt.step()
        epochs_run = epoch
        val = evaluate("val")
        if val < best_val - 1e-6:
            best_val, best_epoch, stale = val, epoch, 0
            best_train = evaluate("train")
            best_state = _export(top, log)
        else:
            stale += 1
        bar.set_postfix(val=f"{val:.4f}", best=f"{best_val:.4f}@{best_epoch}")
        if cfg.patience is not None and stale >= cfg.patience:
            break
    bar.close()
    return best_state, best_epoch, epochs_run, best_train, best_val


def _export(top: Any, log: Any) -> dict[str, np.ndarray]:
    """Copy the two heads into the ``(in, out)`` numpy layout of :class:`SentryHeads`."""
    out: dict[str, np.ndarray] = {}
    for name, seq in (("top", top), ("log", log)):
        first, last = seq[0], seq[3]
        out[f"{name}_w1"] = first.weight.detach().cpu().numpy().T.copy()
        out[f"{name}_b1"] = first.bias.detach().cpu().numpy().copy()
        out[f"{name}_w2"] = last.weight.detach().cpu().numpy().T.copy()
        out[f"{name}_b2"] = last.bias.detach().cpu().numpy().copy()
    return out
