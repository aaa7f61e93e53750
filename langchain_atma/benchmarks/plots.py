"""PNG plots of benchmark results (needs the ``plots`` extra: matplotlib).

Example:
    >>> from langchain_atma.benchmarks.plots import LTP_PLOT_METRICS
    >>> "qa_acc" in LTP_PLOT_METRICS
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_atma.errors import ConfigError

__all__ = ["LTP_PLOT_METRICS", "plot_judge", "plot_locomo", "plot_ltp", "plot_perf"]

LTP_PLOT_METRICS = (
    "bank_role",
    "evidence_support",
    "state_fit_at_1",
    "label_accuracy",
    "qa_acc",
    "conflict_acc",
    "fact_acc",
)


def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover
        raise ConfigError("plots need matplotlib: pip install 'langchain-atma[plots]'") from exc
    return plt


def _grouped_bars(ax: Any, groups: list[str], series: dict[str, list[float]]) -> None:
    n = max(1, len(series))
    width = 0.8 / n
    for i, (name, vals) in enumerate(series.items()):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, vals, width=width, label=name)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=20, ha="right")
    ax.legend(fontsize=8, ncol=min(n, 3))
    ax.grid(axis="y", alpha=0.3)


def plot_ltp(results: dict[str, Any], out: Path) -> Path:
    """The metrics of every method, and where the bank lost its missed units.

    Left: grouped bars, one group per metric, one bar per method. Right (when the
    results have ``bank_steps``): per method, the units with a wrong bank role,
    stacked by the write step at which they were lost.
    """
    plt = _plt()
    methods = list(results["methods"])
    steps = {
        m: results["methods"][m]["bank_steps"]
        for m in methods
        if results["methods"][m].get("bank_steps") is not None
    }
    if steps:
        fig, (ax, ax2) = plt.subplots(
            1, 2, figsize=(15, 4.8), gridspec_kw={"width_ratios": [2.2, 1]}
        )
    else:
        fig, ax = plt.subplots(figsize=(11, 4.5))
    _grouped_bars(
        ax,
        list(LTP_PLOT_METRICS),
        {m: [results["methods"][m][k] for k in LTP_PLOT_METRICS] for m in methods},
    )
    ax.set_ylim(0, 1.05)
    cfg = results.get("config", {})
    parts = {cfg.get(p, "offline") for p in ("judge", "controller", "answerer")}
    how = (
        "offline defaults"
        if parts == {"offline"}
        else (
            f"judge {cfg.get('judge')}, controller {cfg.get('controller')}, "
            f"answerer {cfg.get('answerer')}"
        )
    )
    ax.set_title(f"LTP-format file, {how}, k={cfg.get('k', 5)}")
    if steps:
        from langchain_atma.benchmarks.ltp_bench import BANK_STEPS

        names = list(steps)
        left = [0] * len(names)
        colors = plt.get_cmap("Set2").colors
        for i, step in enumerate(BANK_STEPS):
            vals = [steps[m].get(step, 0) for m in names]
            if not any(vals):
                continue
            ax2.barh(names, vals, left=left, height=0.6, label=step, color=colors[i % len(colors)])
            left = [a + b for a, b in zip(left, vals, strict=True)]
        ax2.invert_yaxis()
        ax2.set_xlabel("units with a wrong bank role")
        ax2.set_title("where the bank lost them (write step)")
        ax2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
        ax2.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_locomo(results: dict[str, Any], out: Path) -> Path:
    """F1 per LoCoMo category, one bar per method."""
    plt = _plt()
    methods = list(results["methods"])
    cats = [c for c in results["methods"][methods[0]]["f1_by_category"]]
    fig, ax = plt.subplots(figsize=(9, 4))
    _grouped_bars(
        ax, cats, {m: [results["methods"][m]["f1_by_category"][c] for c in cats] for m in methods}
    )
    ax.set_title("LoCoMo F1 by category (offline answerer)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_judge(runs: dict[str, dict[str, Any]], out: Path) -> Path:
    """``atma bench judge`` results of one or more files side by side.

    Left: the share of units the judge gives the right verdict, per update type.
    Right: the false-link rates on hard negatives, cross-unit pairs and dialog pairs.

    Args:
        runs: ``{label: results}``, e.g. one entry per LTP-format file.
        out: the PNG path.

    Raises:
        ConfigError: no runs, or matplotlib is missing.
    """
    if not runs:
        raise ConfigError("plot_judge needs at least one result")
    plt = _plt()
    types = sorted({t for r in runs.values() for t in r["units"]["by_update_type"]})
    groups = [*types, "all"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 1.4]})
    _grouped_bars(
        left,
        groups,
        {
            name: [r["units"]["by_update_type"].get(t, {}).get("accuracy", 0.0) for t in types]
            + [r["units"]["accuracy"]]
            for name, r in runs.items()
        },
    )
    left.set_ylim(0, 1.3)  # room for the legend above the bars
    left.set_title("units with the right verdict (judge alone)")
    kinds = ("hard_negatives", "cross_unit", "dialog_pairs")
    rates = {
        name: [r.get(k, {}).get("false_link_rate", 0.0) for k in kinds] for name, r in runs.items()
    }
    _grouped_bars(right, ["hard negatives", "cross-unit", "dialog pairs"], rates)
    top = max(max(v) for v in rates.values())
    right.set_ylim(0, max(0.05, top) * 1.4)
    right.set_title("false-link rate")
    judges = sorted({r["config"].get("judge_model") or r["config"]["judge"] for r in runs.values()})
    fig.suptitle(f"atma bench judge: {', '.join(judges)}")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_perf(results: dict[str, Any], out: Path) -> Path:
    """The read path's cost curve (log-log): retrieve p95 and overlay p50 by bank size."""
    plt = _plt()
    curve = results["curve"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    series = sorted({(r["mode"], r["namespaces"]) for r in curve})
    for mode, n_ns in series:
        rows = sorted(
            (r for r in curve if r["mode"] == mode and r["namespaces"] == n_ns),
            key=lambda r: r["size"],
        )
        label = f"{n_ns:,} namespace{'s' if n_ns > 1 else ''}, {mode}"
        style = "-" if mode == "embedded" else "--"
        sizes = [r["size"] for r in rows]
        left.plot(sizes, [r["retrieve_ms_p95"] for r in rows], style, marker="o", label=label)
        right.plot(sizes, [r["overhead_ms_p50"] for r in rows], style, marker="o", label=label)
    left.axhline(20.0, color="grey", ls=":", lw=1, label="20 ms goal (100k)")
    right.axhline(2.0, color="grey", ls=":", lw=1, label="2 ms goal")
    for ax, title in (
        (left, "retrieve p95 (host seed + overlay)"),
        (right, "overlay's own cost p50"),
    ):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records in the bank")
        ax.set_ylabel("ms")
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
