"""Configuration, resolved once: arguments > environment variables > config file > defaults.

=====================  ==========================  =================================
setting                environment variable        meaning
=====================  ==========================  =================================
``path``               ``ATMA_PATH``               embedded bank directory (``./.atma``)
``chroma_url``         ``ATMA_CHROMA_URL``         Chroma server URL (wins over ``path``)
``collection``         ``ATMA_COLLECTION``         collection name (``atma_memory``)
``namespace``          ``ATMA_NAMESPACE``          default namespace (``default``)
``embeddings``         ``ATMA_EMBEDDINGS``         ``default`` (MiniLM) or a local
                                                   SentenceTransformer directory
``ollama_base_url``    ``ATMA_OLLAMA_BASE_URL``    Ollama server; unset = offline parts
``judge_model``        ``ATMA_JUDGE_MODEL``        Ollama model for the judge
``controller_model``   ``ATMA_CONTROLLER_MODEL``   Ollama model for the controller
``answer_model``       ``ATMA_ANSWER_MODEL``       Ollama model for the answerer
``controller_mode``    ``ATMA_CONTROLLER_MODE``    ``online`` | ``shadow`` | ``off``
``k``                  ``ATMA_K``                  evidence packet size (5)
``seed_k``             ``ATMA_SEED_K``             host seed hits (10)
``max_judged``         ``ATMA_MAX_JUDGED``         candidates per write the judge reads (12)
``escalate_below``     ``ATMA_ESCALATE_BELOW``     with a judge model: learned verdicts
                                                   less confident than this go to it (0.8)
``llm_calls_per_write`` ``ATMA_LLM_CALLS_PER_WRITE`` with a judge model: its budget (0.25)
=====================  ==========================  =================================

The config file is TOML: ``--config FILE``, else ``ATMA_CONFIG``, else
``./atma.toml`` if present. Keys are the setting names, at top level or under an
``[atma]`` table. A model is used only when both ``ollama_base_url`` and its model
name are set; otherwise that part runs its offline deterministic default.

Example:
    >>> from langchain_atma.config import AtmaConfig
    >>> AtmaConfig.resolve(args={"k": 3}, env={"ATMA_K": "7"}).k
    3
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from langchain_atma.errors import ConfigError
from langchain_atma.retrieval.packets import DEFAULT_K, DEFAULT_SEED_K

__all__ = ["AtmaConfig", "ENV_VARS", "OLLAMA_HTTP_TIMEOUT_S"]

OLLAMA_HTTP_TIMEOUT_S = 120.0
"""HTTP timeout of the Ollama client (seconds without progress on a connection)."""

ENV_VARS: dict[str, str] = {
    "path": "ATMA_PATH",
    "chroma_url": "ATMA_CHROMA_URL",
    "collection": "ATMA_COLLECTION",
    "namespace": "ATMA_NAMESPACE",
    "embeddings": "ATMA_EMBEDDINGS",
    "ollama_base_url": "ATMA_OLLAMA_BASE_URL",
    "judge_model": "ATMA_JUDGE_MODEL",
    "controller_model": "ATMA_CONTROLLER_MODEL",
    "answer_model": "ATMA_ANSWER_MODEL",
    "controller_mode": "ATMA_CONTROLLER_MODE",
    "k": "ATMA_K",
    "seed_k": "ATMA_SEED_K",
    "max_judged": "ATMA_MAX_JUDGED",
    "escalate_below": "ATMA_ESCALATE_BELOW",
    "llm_calls_per_write": "ATMA_LLM_CALLS_PER_WRITE",
}


class AtmaConfig(BaseModel):
    """Resolved settings for the CLI and the factories."""

    path: str = Field(default="./.atma", description="Embedded bank directory.")
    chroma_url: str | None = Field(default=None, description="Chroma server URL.")
    collection: str = Field(default="atma_memory", description="Collection name.")
    namespace: str = Field(default="default", description="Default namespace.")
    embeddings: str = Field(default="default", description="'default' or a model directory.")
    ollama_base_url: str | None = Field(default=None, description="Ollama server URL.")
    judge_model: str | None = Field(default=None, description="Judge model (Ollama).")
    controller_model: str | None = Field(default=None, description="Controller model.")
    answer_model: str | None = Field(default=None, description="Answer model (Ollama).")
    controller_mode: Literal["online", "shadow", "off"] = Field(
        default="online", description="How the controller output is used."
    )
    k: int = Field(default=DEFAULT_K, ge=1, le=100, description="Evidence packet size.")
    seed_k: int = Field(default=DEFAULT_SEED_K, ge=1, le=1000, description="Host seed hits.")
    max_judged: int = Field(
        default=12, ge=1, le=1000, description="Candidates per write the judge reads."
    )
    escalate_below: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="With a judge model: learned verdicts less confident than this are sent to it.",
    )
    llm_calls_per_write: float = Field(
        default=0.25,
        ge=0,
        le=16,
        description="With a judge model: LLM calls per write, at most, over many writes.",
    )

    @classmethod
    def resolve(
        cls,
        args: Mapping[str, Any] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
    ) -> AtmaConfig:
        """Merge defaults < config file < environment < arguments (``None`` args ignored).

        Raises:
            ConfigError: for an unreadable file, unknown keys or invalid values.
        """
        env = os.environ if env is None else env
        merged: dict[str, Any] = {}
        file_path = config_file or env.get("ATMA_CONFIG")
        if file_path is None and Path("atma.toml").is_file():
            file_path = "atma.toml"
        if file_path:
            from_file = _read_toml(Path(file_path))
            rel = from_file.get("path")
            if isinstance(rel, str) and rel and not Path(rel).expanduser().is_absolute():
                # a relative bank path means the same bank wherever atma is run from
                from_file["path"] = str(Path(file_path).resolve().parent / rel)
            merged.update(from_file)
        for key, var in ENV_VARS.items():
            if env.get(var):
                merged[key] = env[var]
        for key, val in (args or {}).items():
            if val is not None and key in cls.model_fields:
                merged[key] = val
        unknown = sorted(set(merged) - set(cls.model_fields))
        if unknown:
            raise ConfigError(f"unknown configuration key(s): {', '.join(unknown)}")
        try:
            return cls(**merged)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(map(str, first.get("loc", ())))
            raise ConfigError(f"invalid setting {loc}: {first.get('msg')}") from exc

    def ollama_model(self, which: Literal["judge", "controller", "answer"]) -> Any | None:
        """A ChatOllama for one LLM part, or None when that part runs offline.

        The HTTP client gets a :data:`OLLAMA_HTTP_TIMEOUT_S` limit: the judge,
        controller and answerer abandon a slow call after their own (shorter)
        timeouts, and without a client limit the abandoned call would keep its
        worker thread blocked on a stalled server (holding the process at exit).
        """
        name = getattr(self, f"{which}_model")
        if not (self.ollama_base_url and name):
            return None
        from langchain_ollama import ChatOllama

        return ChatOllama(
            model=name,
            base_url=self.ollama_base_url,
            temperature=0,
            client_kwargs={"timeout": OLLAMA_HTTP_TIMEOUT_S},
        )

    def make_gate(self) -> Any:
        """The proposal gate for these settings."""
        from langchain_atma.bank.gate import GateConfig, ProposalGate

        return ProposalGate(GateConfig(max_judged=self.max_judged))

    def make_judge(self) -> Any:
        """The learned judge, escalating to the judge model when one is configured."""
        from langchain_atma.bank.judge import EscalatingJudge, LLMJudge
        from langchain_atma.bank.learned_judge import LearnedJudge

        learned = LearnedJudge()
        model = self.ollama_model("judge")
        if model is None:
            return learned
        return EscalatingJudge(
            learned,
            LLMJudge(model, fallback=None),
            escalate_below=self.escalate_below,
            llm_calls_per_write=self.llm_calls_per_write,
        )

    def make_embeddings(self) -> Any:
        """The configured embeddings."""
        from langchain_atma.embeddings import resolve_embeddings

        return resolve_embeddings(self.embeddings)

    def make_bank(self, **kwargs: Any) -> Any:
        """A StateBank for these settings."""
        from langchain_atma.bank import StateBank

        return StateBank(
            path=self.path,
            url=self.chroma_url,
            collection_name=self.collection,
            embeddings=kwargs.pop("embeddings", None) or self.make_embeddings(),
            **kwargs,
        )


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} not found") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    table = data.get("atma", data)
    if not isinstance(table, dict):
        raise ConfigError(f"config file {path}: [atma] must be a table")
    return dict(table)
