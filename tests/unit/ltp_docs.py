"""A one-profile LTP-format file for the benchmark tests (hand-made, no LoCoMo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Event = tuple[str, str, str, str, str]
"""(event_id, timestamp, speaker, text, kind); non-dialog events belong to unit p0-u0."""


def write_one_profile(
    tmp_path: Path, events: list[Event], unit: dict[str, Any], probes: list[dict[str, Any]]
) -> Path:
    """Write profile ``p0`` (subject Ana) with one unit ``p0-u0``; returns the path."""
    doc = {
        "name": "tiny",
        "version": 1,
        "profiles": [
            {
                "profile_id": "p0",
                "source": {"dataset": "hand", "sample_id": "x"},
                "subject": "Ana",
                "events": [
                    {
                        "event_id": i,
                        "timestamp": t,
                        "speaker": s,
                        "text": x,
                        "kind": k,
                        "unit_id": None if k == "dialog" else "p0-u0",
                        "dia_id": None,
                    }
                    for i, t, s, x, k in events
                ],
                "units": [{"unit_id": "p0-u0", **unit}],
                "probes": [{"unit_id": "p0-u0", **p} for p in probes],
            }
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc))
    return path
