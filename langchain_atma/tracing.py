"""Offline tracing helpers: collect the LangChain run tree and export it as JSONL.

Every A-TMA node runs as a LangChain run named ``atma.<level>.<node>`` with tags
``["atma", "atma:<level>"]`` and metadata ``{"atma.level": level, "atma.node":
node}`` (levels: ``bank``, ``retrieval``, ``qa``). :class:`TraceCollector` is a
callback handler that records every run (name, type, parent, tags, metadata,
times, error) without any network, so the per-level structure can be inspected,
tested, or written to a file with :func:`export_jsonl`.

:func:`export_jsonl` also accepts LangChain tracer ``Run`` objects (e.g. from
``langchain_core.tracers.run_collector.RunCollectorCallbackHandler``; child runs are
flattened) and plain trace entries such as ``ReadResult.trace`` or the
``trace`` list of the write graph.

Example:
    >>> from langchain_core.runnables import RunnableLambda
    >>> collector = TraceCollector()
    >>> step = RunnableLambda(lambda x: x + 1, name="atma.qa.demo").with_config(
    ...     tags=["atma", "atma:qa"], metadata={"atma.level": "qa", "atma.node": "demo"})
    >>> step.invoke(1, {"callbacks": [collector]})
    2
    >>> [(r["name"], r["metadata"]["atma.level"]) for r in collector.atma_runs()]
    [('atma.qa.demo', 'qa')]
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from pydantic import BaseModel

from langchain_atma.errors import ConfigError

__all__ = ["ATMA_LEVELS", "TraceCollector", "export_jsonl", "level_config", "run_to_dict"]

ATMA_LEVELS: tuple[str, ...] = ("bank", "retrieval", "qa")
"""The three A-TMA levels a run can belong to (``metadata["atma.level"]``)."""


def level_config(config: RunnableConfig | None, level: str, node: str) -> RunnableConfig:
    """``config`` for the run of one node: named ``atma.<level>.<node>``, tagged, labelled.

    Example:
        >>> level_config(None, "retrieval", "seed")["run_name"]
        'atma.retrieval.seed'
    """
    return merge_configs(
        config,
        {
            "run_name": f"atma.{level}.{node}",
            "tags": ["atma", f"atma:{level}"],
            "metadata": {"atma.level": level, "atma.node": node},
        },
    )


_MAX_IO_CHARS = 2_000


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return obj.isoformat()
    if isinstance(obj, UUID):
        return str(obj)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return repr(obj)


def _safe_io(value: Any) -> Any:
    """A JSON-safe, size-bounded copy of run inputs / outputs."""
    try:
        text = json.dumps(value, default=_json_default, ensure_ascii=False)
    except (TypeError, ValueError):
        text = json.dumps(repr(value))
    if len(text) > _MAX_IO_CHARS:
        return text[: _MAX_IO_CHARS - 1] + "\u2026"
    return json.loads(text)


class TraceCollector(BaseCallbackHandler):
    """Callback handler that records the run tree in memory (no network).

    Args:
        capture_io: also keep run inputs and outputs (JSON-safe, at most 2,000
            characters each).

    Each run is a dict with ``id``, ``parent_id``, ``name``, ``run_type``
    (``chain``, ``llm``, ``chat_model``, ``tool``, ``retriever``), ``tags``,
    ``metadata``, ``level`` (``metadata["atma.level"]`` or None), ``start_time``,
    ``end_time``, ``status`` (``running``, ``ok``, ``error``) and ``error``.
    """

    run_inline = True

    def __init__(self, *, capture_io: bool = False) -> None:
        super().__init__()
        self.capture_io = capture_io
        self.runs: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ recording
    def _start(
        self,
        run_type: str,
        serialized: Mapping[str, Any] | None,
        inputs: Any,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: Sequence[str] | None,
        metadata: Mapping[str, Any] | None,
        name: str | None,
    ) -> None:
        ser = serialized or {}
        ident = ser.get("id")
        fallback = ident[-1] if isinstance(ident, list) and ident else None
        md = dict(metadata or {})
        run: dict[str, Any] = {
            "id": str(run_id),
            "parent_id": str(parent_run_id) if parent_run_id else None,
            "name": name or ser.get("name") or fallback or run_type,
            "run_type": run_type,
            "tags": list(tags or []),
            "metadata": _safe_io(md) if md else {},
            "level": md.get("atma.level"),
            "start_time": _now().isoformat(),
            "end_time": None,
            "status": "running",
            "error": None,
        }
        if self.capture_io:
            run["inputs"] = _safe_io(inputs)
        with self._lock:
            self.runs.append(run)
            self._by_id[run["id"]] = run

    def _end(self, run_id: UUID, outputs: Any = None, error: BaseException | None = None) -> None:
        with self._lock:
            run = self._by_id.get(str(run_id))
            if run is None:
                return
            run["end_time"] = _now().isoformat()
            run["status"] = "error" if error is not None else "ok"
            if error is not None:
                run["error"] = f"{type(error).__name__}: {error}"
            if self.capture_io and error is None:
                run["outputs"] = _safe_io(outputs)

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a chain (runnable, graph node) start."""
        self._start(
            "chain", serialized, inputs, run_id, parent_run_id, tags, metadata, kwargs.get("name")
        )

    def on_chain_end(self, outputs: dict[str, Any], *, run_id: UUID, **kwargs: Any) -> None:
        """Record a chain end."""
        self._end(run_id, outputs)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a chain error."""
        self._end(run_id, error=error)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record an LLM start."""
        self._start(
            "llm", serialized, prompts, run_id, parent_run_id, tags, metadata, kwargs.get("name")
        )

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a chat model start."""
        self._start(
            "chat_model",
            serialized,
            messages,
            run_id,
            parent_run_id,
            tags,
            metadata,
            kwargs.get("name"),
        )

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record an LLM / chat model end."""
        self._end(run_id, response)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record an LLM / chat model error."""
        self._end(run_id, error=error)

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a tool start."""
        self._start(
            "tool", serialized, input_str, run_id, parent_run_id, tags, metadata, kwargs.get("name")
        )

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a tool end."""
        self._end(run_id, output)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a tool error."""
        self._end(run_id, error=error)

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record a retriever start."""
        self._start(
            "retriever",
            serialized,
            query,
            run_id,
            parent_run_id,
            tags,
            metadata,
            kwargs.get("name"),
        )

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a retriever end."""
        self._end(run_id, documents)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Record a retriever error."""
        self._end(run_id, error=error)

    # ------------------------------------------------------------------ queries
    def atma_runs(self, level: str | None = None) -> list[dict[str, Any]]:
        """Runs named ``atma.*`` (optionally of one level), in start order."""
        if level is not None and level not in ATMA_LEVELS:
            raise ConfigError(f"unknown level {level!r}; allowed: {', '.join(ATMA_LEVELS)}")
        prefix = "atma." if level is None else f"atma.{level}."
        return [r for r in self.runs if str(r["name"]).startswith(prefix)]

    def children(self, run_id: str) -> list[dict[str, Any]]:
        """Direct child runs of one run."""
        return [r for r in self.runs if r["parent_id"] == run_id]

    def roots(self) -> list[dict[str, Any]]:
        """Runs without a (recorded) parent."""
        return [r for r in self.runs if r["parent_id"] is None or r["parent_id"] not in self._by_id]

    def clear(self) -> None:
        """Forget every recorded run."""
        with self._lock:
            self.runs.clear()
            self._by_id.clear()


def run_to_dict(run: Any, parent_id: str | None = None) -> list[dict[str, Any]]:
    """Flatten a LangChain tracer ``Run`` (and its child runs) to collector-style dicts."""
    extra = getattr(run, "extra", None) or {}
    md = dict(extra.get("metadata") or {})
    rid = str(getattr(run, "id", ""))
    parent = getattr(run, "parent_run_id", None)
    start, end = getattr(run, "start_time", None), getattr(run, "end_time", None)
    error = getattr(run, "error", None)
    out = [
        {
            "id": rid,
            "parent_id": str(parent) if parent else parent_id,
            "name": getattr(run, "name", None),
            "run_type": getattr(run, "run_type", None),
            "tags": list(getattr(run, "tags", None) or []),
            "metadata": _safe_io(md) if md else {},
            "level": md.get("atma.level"),
            "start_time": start.isoformat() if isinstance(start, datetime) else start,
            "end_time": end.isoformat() if isinstance(end, datetime) else end,
            "status": "error" if error else ("ok" if end is not None else "running"),
            "error": error,
        }
    ]
    for child in getattr(run, "child_runs", None) or []:
        out.extend(run_to_dict(child, rid))
    return out


def _entries(items: Any) -> Iterable[Any]:
    if isinstance(items, TraceCollector):
        return list(items.runs)
    if isinstance(items, (str, bytes)) or isinstance(items, Mapping):
        raise ConfigError("export_jsonl expects a TraceCollector or an iterable of runs/entries")
    out: list[Any] = []
    for item in items:
        if isinstance(item, Mapping):
            out.append(dict(item))
        elif hasattr(item, "run_type") and hasattr(item, "child_runs"):
            out.extend(run_to_dict(item))
        elif isinstance(item, BaseModel):
            out.append(item.model_dump(mode="json"))
        else:
            raise ConfigError(f"cannot export an item of type {type(item).__name__}")
    return out


def export_jsonl(
    runs_or_trace_entries: TraceCollector | Iterable[Any],
    path: str | os.PathLike[str],
    *,
    append: bool = False,
) -> int:
    """Write runs or trace entries to a JSONL file, one JSON object per line.

    Args:
        runs_or_trace_entries: a :class:`TraceCollector`, tracer ``Run`` objects
            (child runs are flattened), or dict entries such as ``ReadResult.trace``.
        path: the output file (parent directories are created).
        append: append instead of overwriting.

    Returns:
        The number of lines written.

    Raises:
        ConfigError: for items that are neither runs nor mappings.
    """
    entries = list(_entries(runs_or_trace_entries))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a" if append else "w", encoding="utf-8") as fh:
        for entry in entries:
            fh.write(json.dumps(entry, default=_json_default, ensure_ascii=False) + "\n")
    return len(entries)
