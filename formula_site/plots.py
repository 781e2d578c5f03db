"""SVG plots of stored runs, drawn with matplotlib at build time (no JavaScript, no external fonts)."""
from __future__ import annotations

import io
from typing import Any, Sequence

from formula_site.markup import GROUP_LABELS, GROUP_ORDER

COLORS = ("#3f51b5", "#e65100", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457", "#5d4037", "#546e7a")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "formula-site", "font.size": 10,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    _pyplot().close(fig)
    return buf.getvalue()


def accuracy_by_group(runs: Sequence[dict[str, Any]], labels: Sequence[str]) -> str:
    """Grouped bars: accuracy (%) per audit group, one bar per run."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    width = 0.8 / max(1, len(runs))
    for k, (run, label) in enumerate(zip(runs, labels)):
        xs = [g + k * width - 0.4 + width / 2 for g in range(len(GROUP_ORDER))]
        ys = [run["by_group"].get(g) for g in GROUP_ORDER]
        bars = ax.bar(xs, [y or 0 for y in ys], width * 0.92, label=label, color=COLORS[k % len(COLORS)])
        for b, y in zip(bars, ys):
            ax.annotate("–" if y is None else f"{y:.1f}", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(range(len(GROUP_ORDER)), [GROUP_LABELS[g] for g in GROUP_ORDER])
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 110)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=min(3, len(runs)))
    ax.set_title("Accuracy by literature-audit group")
    return _svg(fig)


def coverage_accuracy(points: Sequence[tuple[str, float, float]]) -> str:
    """The paper's Figure 2: coverage (share of cases answered) against full-set accuracy.

    Accuracy cannot exceed coverage, so every point lies on or under the diagonal."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    ax.plot([0, 100], [0, 100], color="#9e9e9e", linestyle="--", linewidth=1, label="accuracy = coverage (bound)")
    ax.fill_between([0, 100], [0, 100], [100, 100], color="#eeeeee", label="unreachable")
    for k, (label, cov, acc) in enumerate(points):
        ax.scatter([cov], [acc], s=46, color=COLORS[k % len(COLORS)], zorder=3, label=label)
    ax.set_xlim(0, 102)
    ax.set_ylim(0, 102)
    ax.set_xlabel("coverage: cases answered (%)")
    ax.set_ylabel("full-set accuracy (%)")
    ax.set_title("Coverage against accuracy")
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    return _svg(fig)


def per_calculator(names: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> str:
    """A dot per calculator and run: accuracy (%) on that calculator's rows."""
    plt = _pyplot()
    height = max(3.0, 0.2 * len(names) + 1.2)
    fig, ax = plt.subplots(figsize=(7.5, height))
    ys = list(range(len(names)))
    for k, (label, values) in enumerate(series):
        pts = [(v, y) for v, y in zip(values, ys) if v is not None]
        ax.scatter([p[0] for p in pts], [p[1] + (k - (len(series) - 1) / 2) * 0.18 for p in pts], s=14,
                   color=COLORS[k % len(COLORS)], label=label, zorder=3)
    ax.set_yticks(ys, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(-2, 102)
    ax.set_xlabel("accuracy (%)")
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.legend(frameon=False, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(3, len(series)))
    return _svg(fig)


def differences(values: Sequence[float], xlabel: str) -> str:
    """A histogram of successor-minus-predecessor differences, with zero marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 2.8))
    distinct = sorted(set(values))
    if len(distinct) <= 12:  # few distinct values (scores): one bar per value
        counts = [sum(1 for v in values if v == d) for d in distinct]
        ax.bar(distinct, counts, width=0.6 if all(float(d).is_integer() for d in distinct) else 0.8 * min(
            (b - a for a, b in zip(distinct, distinct[1:])), default=1.0), color=COLORS[0])
    else:
        ax.hist(values, bins=min(30, max(8, len(values) // 3)), color=COLORS[0], edgecolor="white", linewidth=0.5)
    ax.axvline(0, color="#9e9e9e", linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("cases")
    return _svg(fig)
