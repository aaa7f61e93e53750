"""A self-contained HTML view of a bank: per-chain timelines and every other record.

The page uses inline SVG and CSS only (no script, no external resource), so it
opens offline in any browser. Each state chain is drawn as a timeline: records
are placed left to right in time order, coloured by status, and state links are
drawn as labelled arcs.

Example:
    >>> from langchain_atma.inspect_html import render_bank_html
    >>> from langchain_atma.bank import StateBank
    >>> from langchain_core.embeddings import DeterministicFakeEmbedding
    >>> bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=8))
    >>> "<svg" in render_bank_html(bank, "u") or "no state chains" in render_bank_html(bank, "u")
    True
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from langchain_atma.records import LinkType, MemoryRecord, RecordStatus

__all__ = ["render_bank_html", "write_bank_html"]

_COLORS = {
    RecordStatus.ACTIVE: "#2e7d32",
    RecordStatus.SUPERSEDED: "#9e9e9e",
    RecordStatus.TRANSITION: "#ef6c00",
    RecordStatus.UNKNOWN: "#5c6bc0",
}
_FORWARD = {
    LinkType.SUPERSEDES: "supersedes",
    LinkType.EVOLVES_FROM: "evolves from",
    LinkType.COEXISTS: "coexists",
    LinkType.SCOPED_EXCEPTION: "scoped exception",
    LinkType.RELATED: "related",
}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222}
h1{font-size:22px;margin:0 0 4px} .sub{color:#666;margin-bottom:18px}
.chain{border:1px solid #ddd;border-radius:8px;padding:12px 16px;margin:14px 0}
.chain h2{font-size:16px;margin:0 0 8px} .legend span{margin-right:14px}
.dot{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;
vertical-align:middle}
table{border-collapse:collapse;width:100%;font-size:13px;margin-top:8px}
td,th{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
.st{font-weight:600} svg text{font-size:11px}
"""


def _chain_svg(chain: list[MemoryRecord]) -> str:
    step, pad, height = 190, 70, 195
    width = pad * 2 + step * max(len(chain) - 1, 0) + 60
    pos = {r.id: (pad + i * step, 110) for i, r in enumerate(chain)}
    parts = [
        f'<svg width="{width}" height="{height}" role="img" xmlns="http://www.w3.org/2000/svg">',
        '<defs><marker id="arr" markerWidth="8" markerHeight="8" refX="7" refY="4" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>',
        f'<line x1="{pad - 20}" y1="140" x2="{width - 20}" y2="140" stroke="#ccc"/>',
    ]
    for r in chain:
        for lk in r.links:
            if lk.type not in _FORWARD or lk.target not in pos:
                continue
            (x1, y1), (x2, y2) = pos[r.id], pos[lk.target]
            mid, lift = (x1 + x2) / 2, 40 + abs(x1 - x2) / 8
            parts.append(
                f'<path d="M{x1},{y1 - 14} Q{mid},{y1 - 14 - lift} {x2},{y2 - 14}" fill="none" '
                f'stroke="#555" marker-end="url(#arr)"/>'
                f'<text x="{mid}" y="{y1 - 14 - lift / 2 - 4}" text-anchor="middle" '
                f'fill="#333">{html.escape(_FORWARD[lk.type])}</text>'
            )
    for r in chain:
        x, y = pos[r.id]
        parts.append(
            f'<circle cx="{x}" cy="{y}" r="12" fill="{_COLORS[r.status]}">'
            f"<title>{html.escape(r.content[:300])}</title></circle>"
            f'<text x="{x}" y="{y + 48}" text-anchor="middle">{r.time.date()}</text>'
            f'<text x="{x}" y="{y + 62}" text-anchor="middle" fill="{_COLORS[r.status]}">'
            f"{r.status.value}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


_HEAD = (
    "<tr><th>time</th><th>speaker</th><th>status</th><th>content</th><th>links</th><th>id</th></tr>"
)


def _table(records: list[MemoryRecord]) -> str:
    rows = "".join(
        f"<tr><td>{r.time.isoformat()}</td>"
        f"<td>{html.escape(r.provenance.speaker or '-')}</td>"
        f'<td class="st" style="color:{_COLORS[r.status]}">{r.status.value}</td>'
        f"<td>{html.escape(r.content[:500])}</td>"
        f"<td>{html.escape(', '.join(f'{lk.type.value} {lk.target[:8]}' for lk in r.links))}"
        f"</td><td>{html.escape(r.id[:12])}</td></tr>"
        for r in records
    )
    return f"<table>{_HEAD}{rows}</table>"


def render_bank_html(bank: Any, namespace: str) -> str:
    """Render the page for one namespace: every chain, then every other record."""
    chains = bank.chains(namespace)
    linked = {r.id for chain in chains for r in chain}
    rest = [r for r in bank.records(namespace) if r.id not in linked]
    total = bank.count(namespace)
    legend = "".join(
        f'<span><i class="dot" style="background:{c}"></i>{s.value}</span>'
        for s, c in _COLORS.items()
    )
    body = [
        f"<h1>A-TMA bank: namespace {html.escape(namespace)}</h1>",
        f'<div class="sub">{total} records, {len(chains)} state chains, {len(rest)} other '
        "records</div>",
        f'<div class="legend">{legend}</div>',
    ]
    if not chains:
        body.append(
            "<p>no state chains yet: no record has been superseded, linked or qualified.</p>"
        )
    for n, chain in enumerate(chains, 1):
        slot = next((r.slot for r in chain if r.slot), None) or "state"
        body.append(
            f'<div class="chain"><h2>Chain {n}: {html.escape(slot)}</h2>'
            f"{_chain_svg(chain)}{_table(chain)}</div>"
        )
    if rest:
        body.append(
            f'<div class="chain"><h2>Other records ({len(rest)}): no state '
            f"change</h2>{_table(rest)}</div>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>A-TMA bank {html.escape(namespace)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>"
    )


def write_bank_html(bank: Any, namespace: str, path: Path) -> Path:
    """Write the page to ``path``."""
    path.write_text(render_bank_html(bank, namespace), encoding="utf-8")
    return path
