"""The benchmark plots write PNG files from results dicts (no data files needed)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from langchain_atma.benchmarks.ltp_bench import BANK_STEPS  # noqa: E402
from langchain_atma.benchmarks.plots import LTP_PLOT_METRICS, plot_locomo, plot_ltp  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def _ltp_results(with_steps: bool) -> dict:
    rows = {}
    for i, m in enumerate(("host", "atma")):
        row = {k: 0.1 + 0.2 * i for k in LTP_PLOT_METRICS}
        if with_steps and m != "host":
            row["bank_steps"] = dict.fromkeys(BANK_STEPS, 0) | {
                "not_flagged": 3,
                "judged_otherwise": 2,
            }
        rows[m] = row
    return {
        "methods": rows,
        "config": {
            "k": 5,
            "judge": "offline",
            "controller": "offline",
            "answerer": "llm:qwen2.5:3b",
        },
    }


@pytest.mark.parametrize("with_steps", [True, False])
def test_plot_ltp_writes_a_png(tmp_path, with_steps):
    out = plot_ltp(_ltp_results(with_steps), tmp_path / "ltp.png")
    data = out.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000
    # the panel of bank steps makes the figure wider (15 x 4.8 in at 120 dpi)
    width = int.from_bytes(data[16:20], "big")
    assert width == (1800 if with_steps else 1320)


def test_plot_locomo_writes_a_png(tmp_path):
    res = {
        "methods": {
            m: {"f1_by_category": {"single-hop": 0.2, "temporal": 0.3}} for m in ("host", "atma")
        }
    }
    assert plot_locomo(res, tmp_path / "l.png").read_bytes().startswith(PNG)
