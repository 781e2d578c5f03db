"""SVG plots of stored runs, drawn with matplotlib at build time (no JavaScript, no external fonts).

Every plot is built as a matplotlib figure first (`*_figure`, which the tests read text extents from: no
two labels may overlap) and then written as SVG. Runs get the Okabe-Ito colours, which stay apart under the
common colour-vision deficiencies, each with its own marker or hatch, so no run is told apart by colour alone;
names are written whole (wrapped, never cut).
"""
from __future__ import annotations

import io
import textwrap
from typing import Any, Sequence

from formula_site.markup import GROUP_LABELS, GROUP_ORDER

# Okabe & Ito's colour-blind-safe palette (yellow last: it is faint on white), one marker and hatch per run
COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "--", "++", "oo")
WIDTH = 10.0  # inches: the figures fill the content column (the page shows them at its width)


def style(k: int) -> dict[str, Any]:
    """Colour, marker and hatch of the k-th run (cycling after eight)."""
    return {"color": COLORS[k % len(COLORS)], "marker": MARKERS[k % len(MARKERS)], "hatch": HATCHES[k % len(HATCHES)]}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "formula-site", "font.size": 10,
                         "axes.spines.top": False, "axes.spines.right": False, "hatch.linewidth": 0.6})
    return plt


def svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    _pyplot().close(fig)
    return buf.getvalue()


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False)) or text


def _legend_above(ax: Any) -> None:
    """The runs' legend over the axes, one entry a row (long names stay whole; the page's caption names the
    figure, so no title competes with it)."""
    ax.legend(frameon=False, fontsize=8, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=1, borderaxespad=0.2)


def accuracy_by_group_figure(runs: Sequence[Any]) -> Any:
    """Horizontal bars: one block per audit group, one bar per run, the value and the run's calculator count at
    its end (horizontal text on bars of their own height: labels never meet)."""
    plt = _pyplot()
    n = max(1, len(runs))
    bar = 0.8 / n
    fig, ax = plt.subplots(figsize=(WIDTH, max(2.8, 0.26 * n * len(GROUP_ORDER) + 1.2)))
    for k, run in enumerate(runs):
        st = style(k)
        ys = [g + k * bar - 0.4 + bar / 2 for g in range(len(GROUP_ORDER))]
        vals = [run.by_group.get(g) for g in GROUP_ORDER]
        bars = ax.barh(ys, [v or 0 for v in vals], bar * 0.9, label=_wrap(run.title, 90), color=st["color"],
                       hatch=st["hatch"], edgecolor="white", linewidth=0.4)
        for b, v, g in zip(bars, vals, GROUP_ORDER):
            calcs = run.group_calculators.get(g, 0)
            ax.annotate(("–" if v is None else f"{v:.1f}") + f" ({calcs})", (b.get_width(), b.get_y() + b.get_height() / 2),
                        ha="left", va="center", fontsize=min(8, max(5, 60 / n)), xytext=(3, 0),
                        textcoords="offset points")
    ax.set_yticks(range(len(GROUP_ORDER)), [GROUP_LABELS[g] for g in GROUP_ORDER])
    ax.invert_yaxis()
    ax.set_xlim(0, 118)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("accuracy (%); in brackets, the run's calculators in the group")
    _legend_above(ax)
    return fig


def accuracy_by_group(runs: Sequence[Any]) -> str:
    return svg(accuracy_by_group_figure(runs))


def coverage_accuracy_figure(points: Sequence[tuple[str, float, float]]) -> Any:
    """The paper's Figure 2: coverage (share of cases answered) against full-set accuracy.

    Accuracy cannot exceed coverage, so every point lies on or under the diagonal. Runs are named in the legend
    (never beside their points, where runs with the same figures would print on top of each other)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH * 0.6, WIDTH * 0.5))
    ax.plot([0, 100], [0, 100], color="#9e9e9e", linestyle="--", linewidth=1, label="accuracy = coverage (bound)")
    ax.fill_between([0, 100], [0, 100], [100, 100], color="#eeeeee", label="unreachable")
    for k, (label, cov, acc) in enumerate(points):
        st = style(k)
        ax.scatter([cov], [acc], s=52, color=st["color"], marker=st["marker"], zorder=3 + k, label=_wrap(label, 70),
                   edgecolors="white", linewidths=0.6)
    ax.set_xlim(0, 102)
    ax.set_ylim(0, 102)
    ax.set_xlabel("coverage: cases answered (%)")
    ax.set_ylabel("full-set accuracy (%)")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig


def coverage_accuracy(points: Sequence[tuple[str, float, float]]) -> str:
    return svg(coverage_accuracy_figure(points))


def per_calculator_figure(names: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> Any:
    """A marker per calculator and run: accuracy (%) on that calculator's rows. Each run has its own row within
    the calculator's band, so runs with the same accuracy sit side by side instead of on top of each other."""
    plt = _pyplot()
    n = max(1, len(series))
    band = max(0.3, 0.07 * n)  # inches per calculator
    fig, ax = plt.subplots(figsize=(WIDTH, band * len(names) + 1.6))
    ys = list(range(len(names)))
    step = 0.8 / n
    for k, (label, values) in enumerate(series):
        st = style(k)
        pts = [(v, y) for v, y in zip(values, ys) if v is not None]
        ax.scatter([p[0] for p in pts], [p[1] - 0.4 + step * (k + 0.5) for p in pts], s=16, color=st["color"],
                   marker=st["marker"], label=_wrap(label, 90), zorder=3, linewidths=0)
    ax.set_yticks(ys, [_wrap(x, 46) for x in names], fontsize=7)
    for y in ys[1:]:
        ax.axhline(y - 0.5, color="#eeeeee", linewidth=0.5, zorder=1)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlim(-2, 102)
    ax.set_xlabel("accuracy (%)")
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    _legend_above(ax)
    return fig


def per_calculator(names: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]]) -> str:
    return svg(per_calculator_figure(names, series))


def differences_figure(values: Sequence[float], xlabel: str) -> Any:
    """A histogram of successor-minus-predecessor differences, with zero marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(WIDTH * 0.7, 2.8))
    distinct = sorted(set(values))
    if len(distinct) <= 12:  # few distinct values (scores): one bar per value
        counts = [sum(1 for v in values if v == d) for d in distinct]
        ax.bar(distinct, counts, width=0.6 if all(float(d).is_integer() for d in distinct) else 0.8 * min(
            (b - a for a, b in zip(distinct, distinct[1:])), default=1.0), color=COLORS[0])
    else:
        ax.hist(values, bins=min(30, max(8, len(values) // 3)), color=COLORS[0], edgecolor="white", linewidth=0.5)
    ax.axvline(0, color="#9e9e9e", linestyle="--", linewidth=1)
    ax.set_xlabel(_wrap(xlabel, 90))
    ax.set_ylabel("cases")
    return fig


def differences(values: Sequence[float], xlabel: str) -> str:
    return svg(differences_figure(values, xlabel))
