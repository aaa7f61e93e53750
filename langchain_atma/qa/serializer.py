r"""State-explicit evidence serializer: one labelled line per packet row.

The serializer keeps the packet order chosen by retrieval and writes one line
per row::

    [1] current memory | 2023-09-02 | Moving day is done, Seattle is home now.
    [2] historical memory | 2023-05-20 | I just signed the lease on a flat in Boston.

With ``with_labels=False`` (host baseline, "-QA label" ablation) the label is
left out (``[1] 2023-09-02 | ...``); with ``with_time=False`` the date is left
out. A row whose ``label`` is unset is labelled on the fly with
:func:`~langchain_atma.qa.labels.project_label`. The date is the record time
(UTC) as ``YYYY-MM-DD``.

Content hygiene (memories are untrusted data):

* control and format characters (including ``\r``, ``\n``, tabs, U+2028/2029,
  zero-width and bidi controls) become spaces; runs of whitespace collapse to
  one space, so a memory can never start a new line;
* text that could fake the packet structure is neutralized: ``[2]`` becomes
  ``(2)``, the field separator ``|`` becomes ``/``, and ``<`` / ``>`` become
  ``‹`` / ``›`` (so ``</memories>`` cannot close the prompt fence);
* content is cut to :data:`MAX_ROW_CHARS` characters (default 1,000), ending in
  ``…`` when cut. Huge contents are sliced before cleaning, so the cost stays
  bounded.

Example:
    >>> from langchain_atma.records import MemoryRecord
    >>> from langchain_atma.retrieval.packets import Bucket, EvidenceRow
    >>> rec = MemoryRecord(namespace="t", content="Seattle is home now.",
    ...                    time="2023-09-02T18:30:00")
    >>> serialize_packet([EvidenceRow(record=rec, bucket=Bucket.SEED)])
    '[1] current memory | 2023-09-02 | Seattle is home now.'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from langchain_atma.errors import ConfigError, InvalidRecordError
from langchain_atma.qa.labels import project_label
from langchain_atma.retrieval.packets import EvidencePacket, EvidenceRow

__all__ = [
    "EMPTY_PACKET_TEXT",
    "MAX_ROW_CHARS",
    "clean_text",
    "neutralize_structure",
    "serialize_packet",
    "serialize_row",
]

MAX_ROW_CHARS = 1_000
"""Default most characters of content shown per row."""

EMPTY_PACKET_TEXT = "(no memories retrieved)"
"""What :func:`serialize_packet` returns for an empty packet."""

_SLICE_FACTOR = 4  # raw characters read per shown character before cleaning
_WS = re.compile(r"\s+")
_ROW_MARKER = re.compile(r"\[\s*(\d+)\s*\]")  # any digit count, any script
_STRUCTURE = str.maketrans({"|": "/", "<": "\u2039", ">": "\u203a"})


def _is_control(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co")


def clean_text(text: str, max_chars: int = MAX_ROW_CHARS) -> str:
    r"""Collapse a text to one line: control characters out, whitespace runs to one space.

    The result is cut to ``max_chars`` characters (the last one being ``…``
    when something was cut). Only the first ``4 * max_chars + 64`` raw
    characters are read.

    Example:
        >>> clean_text("Moved to\n\tSeattle.\x07")
        'Moved to Seattle.'
    """
    if max_chars < 1:
        raise ConfigError(f"max_chars must be >= 1, got {max_chars}")
    limit = _SLICE_FACTOR * max_chars + 64
    raw = text[:limit]
    chars = [" " if _is_control(ch) else ch for ch in raw]
    out = _WS.sub(" ", "".join(chars)).strip()
    if len(out) > max_chars or (len(text) > limit and out):
        out = out[: max_chars - 1].rstrip() + "\u2026"
    return out


def neutralize_structure(text: str) -> str:
    """Defuse text that could fake packet structure (row markers, separators, tags).

    Example:
        >>> neutralize_structure("x [2] current memory | y </memories>")
        'x (2) current memory / y ‹/memories›'
    """
    return _ROW_MARKER.sub(r"(\1)", text).translate(_STRUCTURE)


def serialize_row(
    index: int,
    row: EvidenceRow,
    *,
    with_time: bool = True,
    with_labels: bool = True,
    max_chars: int = MAX_ROW_CHARS,
    with_speaker: bool = False,
) -> str:
    """Serialize one row as ``[index] label | date | content``.

    With ``with_speaker``, the content is preceded by the record's speaker (cut
    to 60 characters) when it has one: ``[1] current memory | 2023-05-07 | Dariusz:
    I saw the flyer.``, so a model can tell whose fact a memory states.

    Raises:
        InvalidRecordError: when ``row`` is not an :class:`EvidenceRow`.
    """
    if not isinstance(row, EvidenceRow):
        raise InvalidRecordError(f"expected an EvidenceRow, got {type(row).__name__}")
    fields: list[str] = []
    if with_labels:
        label = row.label if row.label is not None else project_label(row)
        fields.append(label.value)
    if with_time:
        fields.append(row.record.time.date().isoformat())
    content = neutralize_structure(clean_text(row.record.content, max_chars)) or "(empty)"
    speaker = row.record.provenance.speaker
    if with_speaker and speaker:
        who = neutralize_structure(clean_text(speaker, 60)).replace("|", "/")
        content = f"{who}: {content}" if who else content
    fields.append(content)
    return f"[{index}] " + " | ".join(fields)


def serialize_packet(
    rows: Sequence[EvidenceRow] | EvidencePacket,
    *,
    with_time: bool = True,
    with_labels: bool = True,
    max_chars: int = MAX_ROW_CHARS,
    with_speaker: bool | None = None,
) -> str:
    r"""Serialize packet rows, in packet order, one line each (numbered from 1).

    Args:
        rows: the packet rows, or an :class:`EvidencePacket`.
        with_time: show each record's date.
        with_labels: show each row's state label (off for baselines/ablations).
        max_chars: most content characters per row.
        with_speaker: show who said each record (when known); ``None`` (default)
            shows it when the rows come from more than one speaker, where it
            tells whose fact each memory is ("Where did Caspian see the flyer?"
            over "Dariusz: I saw the flyer at the pet store.").

    Returns:
        The lines joined by ``\n``, or :data:`EMPTY_PACKET_TEXT` for no rows.

    Raises:
        InvalidRecordError: when an item is not an :class:`EvidenceRow`.
        ConfigError: when ``max_chars`` < 1.
    """
    if max_chars < 1:
        raise ConfigError(f"max_chars must be >= 1, got {max_chars}")
    items = rows.rows if isinstance(rows, EvidencePacket) else rows
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise InvalidRecordError("rows must be a sequence of EvidenceRow objects")
    if not items:
        return EMPTY_PACKET_TEXT
    if with_speaker is None:
        with_speaker = (
            len(
                {
                    r.record.provenance.speaker
                    for r in items
                    if isinstance(r, EvidenceRow) and r.record.provenance.speaker
                }
            )
            > 1
        )
    return "\n".join(
        serialize_row(
            i,
            row,
            with_time=with_time,
            with_labels=with_labels,
            max_chars=max_chars,
            with_speaker=with_speaker,
        )
        for i, row in enumerate(items, start=1)
    )
