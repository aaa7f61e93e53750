r"""File ingestion and configured question answering (used by ``atma ingest`` / ``atma ask``).

Accepted inputs:

* **LoCoMo-style JSON** — a list of samples (or one sample) with a
  ``conversation``; each sample goes to its own namespace (its ``sample_id``,
  made namespace-safe) unless ``--sample`` picks one, which then goes to the
  configured namespace;
* **JSONL** — one object per line: ``{"text": str, "speaker": str?,
  "timestamp": ISO-8601 | epoch?, "event_id": str?, "session_id": str?}``;
* **a JSON array** of the same objects (item ``n`` counts as line ``n``).

A missing event id becomes ``line-<n>-<hash of speaker and text>``, so ingesting
the same file again is a no-op; missing timestamps keep file order.

The whole file is validated before anything is written: a bad line or shape
raises :class:`~langchain_atma.errors.InputFormatError` naming the line, and the
bank is left untouched.

Example:
    >>> from langchain_atma.ingest import parse_jsonl
    >>> parse_jsonl('{"text": "I live in Boston.", "speaker": "Maya"}\n')[0]["event_id"][:7]
    'line-1-'
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from langchain_atma.errors import AtmaError, InputFormatError
from langchain_atma.records import parse_time

__all__ = ["ask_with_config", "ingest_file", "load_events", "parse_jsonl"]

_SAFE = re.compile(r"[^A-Za-z0-9_.:@\-]")


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError as exc:
        raise InputFormatError(f"{path}: file not found") from exc
    except OSError as exc:  # a directory, no permission...
        raise InputFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise InputFormatError(
            f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})"
        ) from exc


def parse_jsonl(text: str, *, source: str = "<jsonl>") -> list[dict[str, Any]]:
    """Parse and validate JSONL conversation events.

    Raises:
        InputFormatError: naming the first bad line.
    """
    objs: list[tuple[int, Any]] = []
    # JSONL lines end at "\n" only: str.splitlines() would also split inside a JSON
    # string at U+2028, U+0085, \x1c... (all legal, unescaped, in JSON strings)
    for n, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            objs.append((n, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputFormatError(f"{source}:{n}: invalid JSON ({exc.msg})") from exc
        except RecursionError:
            raise InputFormatError(f"{source}:{n}: JSON nested too deeply") from None
    return _events(objs, source)


def _events(objs: list[tuple[int, Any]], source: str) -> list[dict[str, Any]]:
    """Validate numbered event objects (JSONL lines or the items of a JSON array)."""
    events: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, obj in objs:
        ev = _event(obj, n, source)
        if ev["event_id"] in seen:
            raise InputFormatError(f"{source}:{n}: duplicate event_id {ev['event_id']!r}")
        seen.add(ev["event_id"])
        events.append(ev)
    if not events:
        raise InputFormatError(f"{source}: no events")
    return events


def _event(obj: Any, n: int, source: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise InputFormatError(f"{source}:{n}: expected an object, got {type(obj).__name__}")
    body = obj.get("text")
    if not isinstance(body, str) or not body.strip():
        raise InputFormatError(f"{source}:{n}: 'text' must be a non-empty string")
    speaker = obj.get("speaker")
    if speaker is not None and not isinstance(speaker, str):
        raise InputFormatError(f"{source}:{n}: 'speaker' must be a string")
    # the default id is stable for the file and differs between files' line n
    digest = hashlib.sha256(
        f"{speaker or ''}\x1f{body}".encode("utf-8", "surrogatepass")
    ).hexdigest()[:12]
    event_id = obj.get("event_id", f"line-{n}-{digest}")
    if not isinstance(event_id, str) or not event_id:
        raise InputFormatError(f"{source}:{n}: 'event_id' must be a non-empty string")
    ev: dict[str, Any] = {"text": body, "speaker": speaker, "event_id": event_id}
    if obj.get("timestamp") is not None:
        try:
            ev["timestamp"] = parse_time(obj["timestamp"]).isoformat()
        except Exception as exc:  # noqa: BLE001 - re-raised with the line number
            raise InputFormatError(f"{source}:{n}: {exc}") from exc
    if isinstance(obj.get("session_id"), str):
        ev["session_id"] = obj["session_id"]
    return ev


def _is_event_array(text: str) -> list[Any] | None:
    """The items of a JSON array of events (any item has ``text``, none a ``conversation``).

    A bad item is then reported by its position, as a JSONL line would be.
    """
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None  # load_locomo reports the JSON error
    if not isinstance(data, list) or not data:
        return None
    objects = [x for x in data if isinstance(x, dict)]
    if any("conversation" in x for x in objects) or not any("text" in x for x in objects):
        return None
    return data


def load_events(path: Path, *, sample: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Events per namespace key (``None`` = the configured namespace)."""
    text = _read_text(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return {"": parse_jsonl(text, source=str(path))}
    items = _is_event_array(text)
    if items is not None:
        return {"": _events(list(enumerate(items, 1)), str(path))}
    from langchain_atma.benchmarks.locomo import conversation_events, load_locomo

    samples = load_locomo(path)
    if sample is not None:
        chosen = [s for s in samples if s.sample_id == sample]
        if not chosen:
            raise InputFormatError(f"{path}: no sample {sample!r}")
        return {"": _strip(conversation_events(chosen[0]))}
    return {
        _SAFE.sub("-", s.sample_id).lstrip("-_.:@") or "sample": _strip(conversation_events(s))
        for s in samples
    }


def _strip(events: list[dict[str, str]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in ev.items() if k != "dia_id"} for ev in events]


def ingest_file(
    cfg: Any,
    path: Path,
    *,
    sample: str | None = None,
    progress: bool = True,
    audit_path: Path | None = None,
) -> dict[str, Any]:
    """Validate then ingest a file with the configured bank, judge and thresholds.

    With ``audit_path``, one JSON line per event is appended there: the write's
    :class:`~langchain_atma.bank.write_graph.WriteAudit` (namespace, event and
    record ids, candidate count) and, for every pair the gate flagged, the earlier
    record's id and text, the judge's verdict and what was committed. It answers
    "why was this change (not) caught?" for a real conversation.
    """
    from langchain_atma.bank.write_graph import WriteAudit, event_to_record, ingest_events

    groups = load_events(path, sample=sample)  # all validation happens here...
    for key, events in groups.items():  # ...down to the records of every namespace
        for n, event in enumerate(events, 1):
            try:
                event_to_record(event, key or cfg.namespace)
            except AtmaError as exc:
                where = event.get("event_id") or f"event {n}"
                raise InputFormatError(f"{path}: {where}: {exc}") from exc
    bank = cfg.make_bank()
    judge, gate = cfg.make_judge(), cfg.make_gate()
    summary: dict[str, Any] = {}
    for key, events in groups.items():
        ns = key or cfg.namespace
        audit: list[WriteAudit] | None = [] if audit_path is not None else None
        rep = ingest_events(
            bank, events, namespace=ns, gate=gate, judge=judge, progress=progress, audit=audit
        )
        summary[ns] = rep.model_dump(exclude={"record_ids", "seconds"})
        if audit_path is not None and audit is not None:
            _write_audit(bank, ns, audit, audit_path)
    return summary


def _write_audit(bank: Any, namespace: str, audit: list[Any], path: Path) -> None:
    """Append one JSON line per write of ``audit`` (see :func:`ingest_file`)."""
    ids = {i for a in audit for i in (a.record_id, *a.flagged) if i}
    texts = {r.id: r.content for r in bank.get_many(namespace, sorted(ids))}
    with path.open("a", encoding="utf-8") as fh:
        for a in audit:
            line = {
                "namespace": namespace,
                "event_id": a.event_id,
                "record_id": a.record_id,
                "text": texts.get(a.record_id or ""),
                "idempotent": a.idempotent,
                "duplicate_of": a.duplicate_of,
                "candidates": len(a.candidates),
                "flagged": [
                    {
                        "id": i,
                        "text": texts.get(i),
                        "verdict": a.verdicts.get(i),
                        "applied": a.applied.get(i),
                    }
                    for i in a.flagged
                ],
            }
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def ask_with_config(cfg: Any, question: str, *, bank: Any | None = None) -> Any:
    """Answer a question with the configured (or the given) bank, controller and answerer."""
    from langchain_atma.qa.answerer import LLMAnswerer
    from langchain_atma.retrieval.controller import LLMController
    from langchain_atma.retrieval.read_graph import ask

    bank = bank if bank is not None else cfg.make_bank()
    opts: dict[str, Any] = {
        "k": cfg.k,
        "seed_k": max(cfg.seed_k, cfg.k),
        "controller_mode": cfg.controller_mode,
    }
    controller_model = cfg.ollama_model("controller")
    if controller_model is not None:
        opts["controller"] = LLMController(controller_model)
    answer_model = cfg.ollama_model("answer")
    if answer_model is not None:
        opts["answerer"] = LLMAnswerer(answer_model)
    return ask(bank, cfg.namespace, question, **opts)
