"""Train the learned state model: a MiniLM cross-encoder with three heads, on the corpus.

``atma judge train`` (or :func:`train_judge`) fine-tunes the packaged
all-MiniLM-L6-v2 as a cross-encoder with three heads on the ``[CLS]`` vector:
for a pair ``[CLS] old [SEP] new [SEP]`` the fusion action (6 classes) and the
conflict type (6 classes), for a question ``[CLS] question [SEP]`` its state
view (4 classes). Pair batches and question batches alternate in one shuffled
order. Everything that decides the result is in :class:`JudgeTrainConfig`; the
same config on the same machine gives the same file.

Data (:mod:`atma_training.corpus`): every line of ``training/corpus/pairs``
expanded to its pairs (a transition chain gives three), plus *cross-slot
negatives*: the old text of one line against the new text of a line of another
slot (``keep_both``), ``cross_slot_negatives`` of them per corpus pair, half of
them from the same domain; *conversation negatives*: each turn of the
no-change conversations (``training/corpus/dialogs``) against its
``dialog_pairs_per_turn`` nearest earlier turns of the same speaker
(``keep_both``); and every line of ``training/corpus/questions``. The split is
**by slot**: ``val_slots`` slots of each batch (their pairs and their
questions) and ``val_dialogs`` conversations of each batch never reach
training; model selection (the epoch kept, the link threshold) reads only that
split. The link threshold is the smallest value on a 0.05 grid whose false-link
rate on the split's negatives is at most ``max_false_link`` and whose *write*
false-link rate is at most ``max_false_write``: each turn of the held-out
conversations is judged against its ``write_candidates`` nearest earlier turns
of the speaker, as the write path would judge a new record against the gate's
candidates, and a turn with any link counts as a false write.

Export: the kept weights go to ONNX, are quantized to int8
(``onnxruntime.quantization.quantize_dynamic``) and are written with a JSON
card (labels, input rule, tokenizer hash, corpus hash, config, validation
metrics of the int8 model) where :class:`langchain_atma.state_model.StateModel`
loads them: by default ``langchain_atma/data/state_judge.onnx``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from atma_training.corpus import (
    ACTIONS,
    CONFLICT_TYPES,
    CORPUS_DIR,
    VIEWS,
    CorpusLine,
    DialogLine,
    LabelledPair,
    QuestionLine,
    dialog_pairs,
    expand,
    load_dialogs,
    load_lines,
    load_questions,
)

__all__ = ["JudgeTrainConfig", "JudgeTrainReport", "split_by_slot", "train_judge"]


class JudgeTrainConfig(BaseModel):
    """Everything that determines a judge training run."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(0, description="Seed of the split, the negatives, the order and torch.")
    epochs: int = Field(2, ge=1, le=20, description="Passes over the training pairs.")
    batch_size: int = Field(32, ge=1, description="Pairs per AdamW step.")
    lr: float = Field(4e-5, gt=0, description="Peak learning rate (linear warm-up and decay).")
    warmup: float = Field(0.06, ge=0, lt=1, description="Share of steps warming up.")
    weight_decay: float = Field(0.01, ge=0, description="AdamW weight decay.")
    label_smoothing: float = Field(0.05, ge=0, lt=0.5, description="On both heads' targets.")
    type_weight: float = Field(0.5, ge=0, description="Weight of the conflict-type loss.")
    view_weight: float = Field(1.0, ge=0, description="Weight of the view loss.")
    max_false_link: float = Field(
        0.05,
        ge=0,
        le=1,
        description="The link threshold is the smallest whose false-link "
        "rate on the validation negatives is at most this...",
    )
    max_false_write: float = Field(
        0.01,
        ge=0,
        le=1,
        description="... and whose share of validation conversation turns "
        "linked to any of their ``write_candidates`` nearest earlier turns is at most this "
        "(a turn of a conversation where nothing changes, judged as the write path would).",
    )
    write_candidates: int = Field(
        12,
        ge=1,
        le=64,
        description="Earlier turns judged per "
        "validation turn for ``max_false_write`` (the gate's "
        "max_judged).",
    )
    layers: int = Field(6, ge=1, le=6, description="Transformer layers kept (of 6).")
    freeze_embeddings: bool = Field(True, description="Keep the token embeddings frozen.")
    max_tokens: int = Field(160, ge=32, le=512, description="Pair length after truncation.")
    cross_slot_negatives: float = Field(
        0.8, ge=0, le=2, description="Extra keep_both pairs per corpus pair, across slots."
    )
    context_share: float = Field(
        0.4,
        ge=0,
        le=1,
        description="Share of corpus pairs whose old and/or new text is "
        "wrapped in other talk (a conversation sentence or another slot's fact) before or "
        "after it, as facts arrive inside longer turns; the label is kept.",
    )
    val_slots: int = Field(2, ge=0, description="Slots per batch kept out for validation.")
    dialog_pairs_per_turn: int = Field(
        2,
        ge=0,
        le=8,
        description="keep_both pairs per conversation turn: the turn against "
        "its nearest earlier turns of the same speaker (MiniLM cosine).",
    )
    val_dialogs: int = Field(
        2, ge=0, description="Conversations per batch kept out for validation."
    )
    threads: int = Field(2, ge=1, description="torch threads.")
    corpus: str | None = Field(
        None, description="Corpus folder with pairs/ and questions/ (default training/corpus)."
    )
    out_path: str | None = Field(
        None, description="Output .onnx (default: the packaged state_judge.onnx)."
    )
    limit: int | None = Field(
        None, ge=1, description="Use at most this many corpus lines (smoke tests)."
    )


class JudgeTrainReport(BaseModel):
    """What a run did and how the exported model scores on the unseen-slot split."""

    output_file: str
    card_file: str
    seconds: float
    train_pairs: int
    val_pairs: int
    val_slot_names: list[str]
    epochs_run: int
    best_epoch: int
    val: dict[str, Any] = Field(
        description="Pair metrics of the shipped int8 model on the "
        "unseen-slot split, at the chosen link threshold."
    )
    val_views: dict[str, Any] = Field(
        description="View accuracy of the shipped model on the split's questions."
    )
    link_threshold: float = Field(description="The chosen link threshold.")
    history: list[dict[str, Any]] = Field(description="Per epoch: loss and fp32 validation.")


def _groups(action: str) -> str:
    if action in ("supersede", "transition"):
        return "change"
    if action in ("coexist", "scoped_exception"):
        return "coexist"
    return action


def split_by_slot(
    lines: Sequence[CorpusLine], per_batch: int, seed: int
) -> tuple[list[CorpusLine], list[CorpusLine]]:
    """(train, val): ``per_batch`` slots of every batch go to val, drawn by seed."""
    rng = random.Random(f"split-{seed}")
    by_batch: dict[str, list[str]] = {}
    for ln in lines:
        by_batch.setdefault(ln.batch, [])
        if ln.slot not in by_batch[ln.batch]:
            by_batch[ln.batch].append(ln.slot)
    held: set[str] = set()
    for batch in sorted(by_batch):
        slots = sorted(by_batch[batch])
        held.update(rng.sample(slots, min(per_batch, max(len(slots) - 1, 0))))
    return ([ln for ln in lines if ln.slot not in held], [ln for ln in lines if ln.slot in held])


def _any_text(line: CorpusLine, rng: random.Random) -> str:
    """One of a line's statements: its old, new or transition text."""
    return rng.choice([line.old, line.new] + ([line.transition] if line.transition else []))


def _cross_slot(lines: Sequence[CorpusLine], n: int, rng: random.Random) -> list[LabelledPair]:
    """``n`` keep_both pairs: a statement of one line against one of another slot's line.

    Half come from the same domain (close topics: "money.bank" / "money.rent_amount");
    two in three take their second text from a change, transition or scope line, so it
    often reads like a change and only its relevance to the first says no. Either side
    is any of its line's statements (old, new or transition): in a conversation two
    facts of different slots meet in every order, two plain states ("my locs reach my
    waist" / "the thermostat is on 22") as often as a state and a change.
    """
    by_domain: dict[str, list[CorpusLine]] = {}
    changing = [ln for ln in lines if ln.kind in ("change", "transition", "scope")]
    changing_by_domain: dict[str, list[CorpusLine]] = {}
    for ln in lines:
        by_domain.setdefault(ln.domain, []).append(ln)
    for ln in changing:
        changing_by_domain.setdefault(ln.domain, []).append(ln)
    out: list[LabelledPair] = []
    tries = 0
    while len(out) < n and tries < n * 20:
        tries += 1
        a = rng.choice(lines)
        same_domain = rng.random() < 0.5
        if rng.random() < 2 / 3:
            pool = changing_by_domain.get(a.domain, changing) if same_domain else changing
        else:
            pool = by_domain[a.domain] if same_domain else lines
        b = rng.choice(pool)
        if b.slot == a.slot:
            continue
        out.append(
            LabelledPair(
                _any_text(a, rng),
                _any_text(b, rng),
                "keep_both",
                "none",
                slot=a.slot,
                line_id=f"{a.id}+{b.id}",
                kind="negative",
                subtype="cross_slot",
                indirect=False,
                style=a.style,
            )
        )
    return out


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _context_pool(
    lines: Sequence[CorpusLine], dialogs: Sequence[DialogLine]
) -> list[tuple[str | None, str]]:
    """Other talk to wrap facts in: (slot or None, text).

    Runs of one or two sentences of conversation turns (small talk, questions back,
    other people's news) and the old statements of corpus lines (another fact of the
    speaker, tagged with its slot so a pair is never wrapped in its own slot's fact).
    """
    pool: list[tuple[str | None, str]] = []
    for d in dialogs:
        for turn in d.turns:
            sents = [s for s in _SENTENCE_END.split(turn.text.strip()) if s]
            for i in range(len(sents)):
                run = " ".join(sents[i : i + 1 + (i % 2)])
                if 3 <= len(run.split()) <= 40:
                    pool.append((None, run))
    pool += [(ln.slot, ln.old) for ln in lines if ln.kind != "negative"]
    return pool


def _wrap(text: str, other: str, rng: random.Random) -> str:
    """``text`` with ``other`` after or before it (a fact's text ending in .!? keeps a space)."""
    joint = rng.choice((" ", " ", ". ", ", ", " - ")) if text[-1:] not in ".!?" else " "
    if rng.random() < 0.5:
        return text + joint + other
    return other + (joint if other[-1:] not in ".!?" else " ") + text


def _with_context(
    pairs: Sequence[LabelledPair],
    share: float,
    pool: Sequence[tuple[str | None, str]],
    rng: random.Random,
) -> list[LabelledPair]:
    """Wrap ``share`` of the corpus pairs' texts in other talk, keeping their labels.

    The side is drawn (old, new or both; a duplicate's new text stays bare, since a
    restatement with news of its own is not a duplicate), the talk never comes from
    the pair's own slot, and conversation pairs stay as written.
    """
    if not pool or share <= 0:
        return list(pairs)
    out: list[LabelledPair] = []
    for p in pairs:
        if p.subtype == "dialog" or rng.random() >= share:
            out.append(p)
            continue
        sides = ("old",) if p.action == "noop" else rng.choice((("old",), ("new",), ("old", "new")))
        texts = {"old": p.old, "new": p.new}
        used = {p.slot}
        for side in sides:
            slot, other = rng.choice(pool)
            while slot is not None and slot in used:
                slot, other = rng.choice(pool)
            if slot is not None:
                used.add(slot)
            texts[side] = _wrap(texts[side], other, rng)
        out.append(dataclasses.replace(p, old=texts["old"], new=texts["new"]))
    return out


@dataclass
class _Encoded:
    """Token ids of one kind of input with its labels (``kind``: pair or question)."""

    kind: str
    ids: list[list[int]]
    types: list[list[int]]
    labels: list[np.ndarray]


def _encode_pairs(pairs: Sequence[LabelledPair], max_tokens: int) -> _Encoded:
    from langchain_atma.state_model import load_tokenizer, prepare_text

    encs = load_tokenizer(max_tokens).encode_batch(
        [(prepare_text(p.old), prepare_text(p.new)) for p in pairs]
    )
    return _Encoded(
        "pair",
        [e.ids for e in encs],
        [e.type_ids for e in encs],
        [
            np.array([ACTIONS.index(p.action) for p in pairs], dtype=np.int64),
            np.array([CONFLICT_TYPES.index(p.type) for p in pairs], dtype=np.int64),
        ],
    )


def _encode_questions(qs: Sequence[QuestionLine], max_tokens: int) -> _Encoded:
    from langchain_atma.state_model import load_tokenizer, prepare_text

    encs = load_tokenizer(max_tokens).encode_batch([prepare_text(q.question) for q in qs])
    return _Encoded(
        "question",
        [e.ids for e in encs],
        [e.type_ids for e in encs],
        [np.array([VIEWS.index(q.view) for q in qs], dtype=np.int64)],
    )


def _batches(enc: _Encoded, size: int, rng: random.Random | None) -> list[list[int]]:
    """Index batches of similar length (shuffled buckets when ``rng`` is given)."""
    order = list(range(len(enc.ids)))
    if rng is None:
        order.sort(key=lambda i: len(enc.ids[i]))
        return [order[i : i + size] for i in range(0, len(order), size)]
    rng.shuffle(order)
    out: list[list[int]] = []
    for start in range(0, len(order), size * 50):
        chunk = sorted(order[start : start + size * 50], key=lambda i: len(enc.ids[i]))
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    return out


def _tensors(enc: _Encoded, idx: list[int]) -> tuple[Any, Any, Any]:
    import torch

    n = max(len(enc.ids[i]) for i in idx)
    ids = torch.zeros((len(idx), n), dtype=torch.long)
    types = torch.zeros((len(idx), n), dtype=torch.long)
    mask = torch.zeros((len(idx), n), dtype=torch.long)
    for r, i in enumerate(idx):
        k = len(enc.ids[i])
        ids[r, :k] = torch.tensor(enc.ids[i])
        types[r, :k] = torch.tensor(enc.types[i])
        mask[r, :k] = 1
    return ids, mask, types


def _build_model(cfg: JudgeTrainConfig) -> Any:
    import torch
    from transformers import AutoModel

    from langchain_atma.state_model import encoder_dir

    class CrossEncoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(encoder_dir()))
            self.bert.encoder.layer = self.bert.encoder.layer[: cfg.layers]
            self.bert.config.num_hidden_layers = cfg.layers
            self.bert.pooler = None
            hidden = self.bert.config.hidden_size
            self.drop = torch.nn.Dropout(0.1)
            self.action = torch.nn.Linear(hidden, len(ACTIONS))
            self.ctype = torch.nn.Linear(hidden, len(CONFLICT_TYPES))
            self.view = torch.nn.Linear(hidden, len(VIEWS))

        def forward(
            self, input_ids: Any, attention_mask: Any, token_type_ids: Any
        ) -> tuple[Any, Any, Any]:
            h = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state[:, 0]
            h = self.drop(h)
            return self.action(h), self.ctype(h), self.view(h)

    model = CrossEncoder()
    if cfg.freeze_embeddings:
        model.bert.embeddings.word_embeddings.requires_grad_(False)
    return model


def _decide(pa: np.ndarray, threshold: float) -> np.ndarray:
    """The judge's decision rule: argmax, a link needs ``threshold`` probability."""
    pred = pa.argmax(1)
    keep = ACTIONS.index("keep_both")
    weak = (pred != keep) & (pa.max(1) < threshold)
    pred[weak] = keep
    return pred


def _pair_metrics(
    pa: np.ndarray, pt: np.ndarray, pairs: Sequence[LabelledPair], threshold: float
) -> dict[str, Any]:
    pred = _decide(pa, threshold)
    gold = np.array([ACTIONS.index(p.action) for p in pairs])
    group_ok = [_groups(ACTIONS[a]) == _groups(p.action) for a, p in zip(pred, pairs, strict=True)]
    by_kind: dict[str, list[bool]] = {}
    for ok, p in zip(group_ok, pairs, strict=True):
        key = p.kind if p.kind != "negative" else f"negative.{p.subtype}"
        by_kind.setdefault(key, []).append(ok)
        if p.kind in ("change", "transition"):
            by_kind.setdefault("change.indirect" if p.indirect else "change.direct", []).append(ok)
    neg = [
        ACTIONS[a] != "keep_both"
        for a, p in zip(pred, pairs, strict=True)
        if p.action == "keep_both"
    ]
    return {
        "pairs": len(pairs),
        "action_acc": round(float((pred == gold).mean()), 4),
        "group_acc": round(float(np.mean(group_ok)), 4),
        "type_acc": round(
            float(
                np.mean(
                    [CONFLICT_TYPES[t] == p.type for t, p in zip(pt.argmax(1), pairs, strict=True)]
                )
            ),
            4,
        ),
        "false_link_rate": round(float(np.mean(neg)), 4) if neg else None,
        "group_acc_by_kind": {k: round(float(np.mean(v)), 4) for k, v in sorted(by_kind.items())},
    }


def _view_metrics(pv: np.ndarray, qs: Sequence[QuestionLine]) -> dict[str, Any]:
    pred = [VIEWS[i] for i in pv.argmax(1)]
    by: dict[str, list[bool]] = {}
    for p, q in zip(pred, qs, strict=True):
        by.setdefault(q.view, []).append(p == q.view)
    right = [p == q.view for p, q in zip(pred, qs, strict=True)]
    return {
        "questions": len(qs),
        "view_acc": round(float(np.mean(right)), 4) if qs else None,
        "view_acc_by_view": {k: round(float(np.mean(v)), 4) for k, v in sorted(by.items())},
    }


def _write_group(line_id: str) -> str:
    """The write a conversation pair belongs to: ``"c01-005:3-7"`` -> ``"c01-005:7"``."""
    conv, span = line_id.split(":")
    return f"{conv}:{span.split('-')[1]}"


def _false_write_rate(pa: np.ndarray, groups: Sequence[str], threshold: float) -> float:
    """Share of groups (one write each) with any pair decided as a link."""
    keep = ACTIONS.index("keep_both")
    linked: dict[str, bool] = {}
    for g, a in zip(groups, _decide(pa.copy(), threshold), strict=True):
        linked[g] = linked.get(g, False) or a != keep
    return sum(linked.values()) / len(linked) if linked else 0.0


def _threshold(
    pa: np.ndarray,
    pairs: Sequence[LabelledPair],
    max_false: float,
    writes: tuple[np.ndarray, Sequence[str], float] | None = None,
) -> float:
    """Smallest threshold on a 0.05 grid with false links at most ``max_false``.

    ``writes`` (probabilities, write group per pair, most false writes) adds the
    write-level bound.
    """
    negative = np.array([p.action == "keep_both" for p in pairs])
    keep = ACTIONS.index("keep_both")
    for t in np.arange(0.0, 1.0, 0.05):
        t = round(float(t), 2)
        if negative.any() and float(np.mean(_decide(pa[negative], t) != keep)) > max_false:
            continue
        if writes is not None and _false_write_rate(writes[0], writes[1], t) > writes[2]:
            continue
        return t
    return 0.95


def _predict(model: Any, enc: _Encoded, head: int, batch: int = 64) -> list[np.ndarray]:
    import torch

    model.eval()
    heads = (0, 1) if head == 0 else (2,)
    out = [
        np.zeros((len(enc.ids), n), dtype=np.float32)
        for n in ([len(ACTIONS), len(CONFLICT_TYPES)] if head == 0 else [len(VIEWS)])
    ]
    with torch.no_grad():
        for idx in _batches(enc, batch, None):
            logits = model(*_tensors(enc, idx))
            for o, h in zip(out, heads, strict=True):
                o[idx] = torch.softmax(logits[h], -1).numpy()
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _corpus_hash(files: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _export(model: Any, path: Path) -> None:
    """ONNX (opset 17), then dynamic int8 quantization of the weights."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    ids = torch.ones((1, 16), dtype=torch.long)
    outputs = ["action_logits", "type_logits", "view_logits"]
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=outputs,
            dynamic_axes={
                n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")
            }
            | {n: {0: "batch"} for n in outputs},
            opset_version=17,
            dynamo=False,
        )
        quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8)


@dataclass
class _Corpus:
    files: list[Path]
    lines: list[CorpusLine]
    questions: list[QuestionLine]
    dialogs: list[DialogLine]


def _load_corpus(cfg: JudgeTrainConfig) -> _Corpus:
    root = Path(cfg.corpus) if cfg.corpus else CORPUS_DIR
    files = [
        f for sub in ("pairs", "questions", "dialogs") for f in sorted((root / sub).glob("*.jsonl"))
    ]
    lines = load_lines([f for f in files if f.parent.name == "pairs"])
    questions = load_questions([f for f in files if f.parent.name == "questions"])
    dialogs = load_dialogs([f for f in files if f.parent.name == "dialogs"])
    if cfg.limit:
        lines = random.Random(cfg.seed).sample(lines, min(cfg.limit, len(lines)))
        dialogs = dialogs[: max(1, cfg.limit // 200)]
    return _Corpus(files, lines, questions, dialogs)


def split_dialogs(
    dialogs: Sequence[DialogLine], per_batch: int, seed: int
) -> tuple[list[DialogLine], list[DialogLine]]:
    """(train, val): ``per_batch`` conversations of every batch go to val, drawn by seed."""
    rng = random.Random(f"dialogs-{seed}")
    held: set[str] = set()
    for batch in sorted({d.batch for d in dialogs}):
        ids = sorted(d.id for d in dialogs if d.batch == batch)
        held.update(rng.sample(ids, min(per_batch, max(len(ids) - 1, 0))))
    return ([d for d in dialogs if d.id not in held], [d for d in dialogs if d.id in held])


def _dialog_negatives(dialogs: Sequence[DialogLine], per_turn: int) -> list[LabelledPair]:
    """Each turn against its ``per_turn`` nearest earlier turns of the speaker (cosine)."""
    if not dialogs or not per_turn:
        return []
    from langchain_atma.embeddings import default_embeddings, unit_vectors_by_text

    vec = unit_vectors_by_text(
        default_embeddings(), sorted({t.text for d in dialogs for t in d.turns})
    )
    out: list[LabelledPair] = []
    for d in dialogs:
        mat = np.stack([vec[t.text] for t in d.turns])
        nearest: dict[int, list[int]] = {}
        for j, turn in enumerate(d.turns):
            earlier = [i for i in range(j) if d.turns[i].speaker == turn.speaker]
            earlier.sort(key=lambda i: -float(mat[i] @ mat[j]))
            nearest[j] = earlier[:per_turn]
        out += dialog_pairs(d, nearest)
    return out


def _step_order(
    encs: Sequence[_Encoded], size: int, rng: random.Random
) -> list[tuple[_Encoded, list[int]]]:
    order = [(enc, idx) for enc in encs if enc.ids for idx in _batches(enc, size, rng)]
    rng.shuffle(order)
    return order


def train_judge(cfg: JudgeTrainConfig, *, progress: bool = True) -> JudgeTrainReport:  # noqa: PLR0915 - to split (issue 27)
    """Train, select on the unseen-slot split, export int8 ONNX and its card."""
    import torch
    from tqdm import tqdm

    from langchain_atma.state_model import (
        CARD_FORMAT_VERSION,
        DEFAULT_MODEL_PATH,
        StateModel,
        card_path,
        input_rule,
        tokenizer_hash,
    )

    t_start = time.perf_counter()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    rng = random.Random(f"judge-{cfg.seed}")
    data = _load_corpus(cfg)
    files, lines, questions = data.files, data.lines, data.questions
    train_lines, val_lines = split_by_slot(lines, cfg.val_slots, cfg.seed)
    train_dialogs, val_dialogs = split_dialogs(data.dialogs, cfg.val_dialogs, cfg.seed)
    val_slots = {ln.slot for ln in val_lines}
    train = [p for ln in train_lines for p in expand(ln)]
    train += _cross_slot(train_lines, int(len(train) * cfg.cross_slot_negatives), rng)
    val = [p for ln in val_lines for p in expand(ln)]
    val += (
        _cross_slot(val_lines, int(len(val) * cfg.cross_slot_negatives), rng) if val_lines else []
    )
    train = _with_context(train, cfg.context_share, _context_pool(train_lines, train_dialogs), rng)
    val = _with_context(
        val,
        cfg.context_share,
        _context_pool(val_lines, val_dialogs),
        random.Random(f"judge-val-{cfg.seed}"),
    )
    train += _dialog_negatives(train_dialogs, cfg.dialog_pairs_per_turn)
    val += _dialog_negatives(val_dialogs, cfg.dialog_pairs_per_turn)
    q_train = [q for q in questions if q.slot not in val_slots]
    q_val = [q for q in questions if q.slot in val_slots]
    enc_train = _encode_pairs(train, cfg.max_tokens)
    enc_val = _encode_pairs(val, cfg.max_tokens)
    encq_train = _encode_questions(q_train, cfg.max_tokens)
    encq_val = _encode_questions(q_val, cfg.max_tokens)

    model = _build_model(cfg)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    per_epoch = math.ceil(len(train) / cfg.batch_size) + math.ceil(len(q_train) / cfg.batch_size)
    steps = cfg.epochs * per_epoch
    warm = max(1, int(steps * cfg.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    ce = torch.nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
    history: list[dict[str, Any]] = []
    best: tuple[float, int, dict[str, Any]] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = Path(tmp) / "best.pt"
        for epoch in range(1, cfg.epochs + 1):
            model.train()
            total = 0.0
            bar = tqdm(
                _step_order([enc_train, encq_train], cfg.batch_size, rng),
                desc=f"epoch {epoch}/{cfg.epochs}",
                disable=not progress,
                unit="batch",
            )
            for enc, idx in bar:
                a, t, v = model(*_tensors(enc, idx))
                if enc.kind == "pair":
                    loss = ce(a, torch.from_numpy(enc.labels[0][idx])) + cfg.type_weight * ce(
                        t, torch.from_numpy(enc.labels[1][idx])
                    )
                else:
                    loss = cfg.view_weight * ce(v, torch.from_numpy(enc.labels[0][idx]))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                sched.step()
                opt.zero_grad()
                total += float(loss.detach()) * len(idx)
                bar.set_postfix(loss=f"{float(loss.detach()):.3f}")
            row: dict[str, Any] = {
                "epoch": epoch,
                "train_loss": round(total / (len(train) + len(q_train)), 4),
            }
            if val:
                pa, pt = _predict(model, enc_val, 0)
                row["val"] = _pair_metrics(pa, pt, val, 0.0)
                if q_val:
                    row["val_views"] = _view_metrics(_predict(model, encq_val, 2)[0], q_val)
                score = row["val"]["group_acc"] + (row.get("val_views", {}).get("view_acc") or 0)
                if best is None or score > best[0]:
                    best = (score, epoch, row)
                    torch.save(model.state_dict(), ckpt)
            history.append(row)
        if best is not None:
            model.load_state_dict(torch.load(ckpt))
        out = Path(cfg.out_path) if cfg.out_path else DEFAULT_MODEL_PATH
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = Path(tmp) / "int8.onnx"
        _export(model, tmp_out)
        card: dict[str, Any] = {
            "format_version": CARD_FORMAT_VERSION,
            "model_file": out.name,
            "model_sha256": _sha256(tmp_out),
            "actions": list(ACTIONS),
            "conflict_types": list(CONFLICT_TYPES),
            "views": list(VIEWS),
            "input": input_rule(cfg.max_tokens),
            "tokenizer_sha256": tokenizer_hash(),
            "corpus_sha256": _corpus_hash(files),
            "corpus_lines": len(lines),
            "corpus_questions": len(questions),
            "corpus_dialogs": len(data.dialogs),
            "train_pairs": len(train),
            "val_pairs": len(val),
            "train_questions": len(q_train),
            "val_questions": len(q_val),
            "val_slots": sorted(val_slots),
            "val_dialogs": sorted(d.id for d in val_dialogs),
            "config": cfg.model_dump(exclude={"out_path", "corpus"}),
            "best_epoch": best[1] if best else cfg.epochs,
            "link_threshold": 0.0,
            "rebuild": "atma judge train",
        }
        card_path(tmp_out).write_text(json.dumps(card), encoding="utf-8")
        shipped = StateModel(tmp_out, threads=cfg.threads)
        if val:
            pa8, pt8 = shipped.pair_probabilities([(p.old, p.new) for p in val])
            wpairs = _dialog_negatives(val_dialogs, cfg.write_candidates)
            wpa = shipped.pair_probabilities([(p.old, p.new) for p in wpairs])[0]
            wgroups = [_write_group(p.line_id) for p in wpairs]
            card["link_threshold"] = _threshold(
                pa8,
                val,
                cfg.max_false_link,
                (wpa, wgroups, cfg.max_false_write) if wpairs else None,
            )
            card["val_int8"] = _pair_metrics(pa8, pt8, val, card["link_threshold"])
            card["val_int8_writes"] = {
                "turns": len(set(wgroups)),
                "pairs": len(wpairs),
                "false_write_rate": round(
                    _false_write_rate(wpa, wgroups, card["link_threshold"]), 4
                )
                if wpairs
                else None,
            }
        if q_val:
            card["val_int8_views"] = _view_metrics(
                shipped.view_probabilities([q.question for q in q_val]), q_val
            )
        shutil.copyfile(tmp_out, out)
    cpath = card_path(out)
    cpath.write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return JudgeTrainReport(
        output_file=str(out),
        card_file=str(cpath),
        seconds=round(time.perf_counter() - t_start, 1),
        train_pairs=len(train),
        val_pairs=len(val),
        val_slot_names=card["val_slots"],
        epochs_run=cfg.epochs,
        best_epoch=card["best_epoch"],
        val=card.get("val_int8", {}),
        val_views=card.get("val_int8_views", {}),
        link_threshold=card["link_threshold"],
        history=history,
    )
