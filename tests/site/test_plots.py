"""Every plot of the site, read back from matplotlib: no two text boxes overlap, names are whole, runs differ in
marker as well as colour (issue 29: `100.098.8`, `CKD-EPI Equations for Glomerular Filtr`, piled-up dots)."""
from __future__ import annotations

import itertools

import pytest

pytest.importorskip("matplotlib")

from formula_site import plots  # noqa: E402
from formula_site.report import RunView  # noqa: E402
from registry.loader import get_registry  # noqa: E402

TITLES = ["gpt-3.5-turbo · medcalc-bench-direct-answer", "gpt-3.5-turbo · medcalc-bench-one-shot",
          "gpt-4 · medcalc-bench-direct-answer", "gpt-4 · medcalc-bench-one-shot",
          "gpt-4o-mini · medcalc-bench-direct-answer", "gold-solve", "gold-solve-published", "gold-solve-successor"]


def _run(k: int, title: str, acc: float | None) -> RunView:
    groups = {"replaced": acc, "other": None if k == 3 else acc, "none": 98.8 if acc == 100.0 else acc}
    return RunView(key=f"run{k}", title=title, anchor=f"run-{k}", folder=f"run{k}", arm="arm", model=None,
                   dataset=None, n_rows=100, n_cases=100, seeds=[0], accuracy=acc, subsets={}, subset_calculators={},
                   by_group=groups, group_calculators={"replaced": 4, "other": 12, "none": 39}, by_category={},
                   by_output_type={}, outcomes={})


def _texts(fig):
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_alpha() != 0:
            out.append((t.get_text(), t.get_window_extent(renderer)))
    return out


def _assert_no_overlap(fig, name):
    boxes = _texts(fig)
    assert boxes, f"{name}: no text read"
    clashes = [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2)
               if min(ba.x1, bb.x1) - max(ba.x0, bb.x0) > 0.5 and min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > 0.5]
    plots._pyplot().close(fig)
    assert not clashes, f"{name}: overlapping text: {clashes[:5]}"


def _figures(n: int):
    runs = [_run(k, TITLES[k % len(TITLES)], [100.0, 98.8, 100.0, 19.67, 50.0, 100.0, 0.0, 99.9][k % 8])
            for k in range(n)]
    calcs = sorted((c for c in get_registry().calculators.values() if c.medcalc_id), key=lambda c: c.medcalc_id)
    names = [f"{c.medcalc_id} {c.name}" for c in calcs]
    series = [(r.title, [100.0 if i % 3 else r.accuracy for i in range(len(names))]) for r in runs]
    points = [(r.title, 100.0, 100.0 if k < 4 else 80.0) for k, r in enumerate(runs)]
    return {"accuracy-by-group": plots.accuracy_by_group_figure(runs),
            "coverage-accuracy": plots.coverage_accuracy_figure(points),
            "per-calculator": plots.per_calculator_figure(names, series),
            "differences": plots.differences_figure([0.0, 1.5, -2.0, 3.0] * 5 + [0.25 * k for k in range(20)],
                                                    "ckd-epi-2021 minus mdrd-gfr (mL/min/1.73 m²)")}


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_no_two_text_boxes_overlap(n):
    for name, fig in _figures(n).items():
        _assert_no_overlap(fig, f"{name} with {n} run(s)")


def test_calculator_names_are_whole_and_runs_differ_beyond_colour():
    calcs = sorted((c for c in get_registry().calculators.values() if c.medcalc_id), key=lambda c: c.medcalc_id)
    fig = _figures(8)["per-calculator"]
    labels = [t.get_text().replace("\n", " ") for t in fig.axes[0].get_yticklabels()]
    plots._pyplot().close(fig)
    assert labels == [f"{c.medcalc_id} {c.name}" for c in calcs]
    assert any("CKD-EPI Equations for Glomerular Filtration Rate" in x for x in labels)
    styles = [plots.style(k) for k in range(8)]
    assert len({s["marker"] for s in styles}) == 8 and len({s["color"] for s in styles}) == 8
    assert len({s["hatch"] for s in styles}) == 8


def test_runs_with_equal_accuracy_are_drawn_apart():
    """Eight runs all at 100 % on a calculator: eight markers at eight different heights of its band."""
    fig = plots.per_calculator_figure(["1 A calculator"], [(t, [100.0]) for t in TITLES])
    ys = [tuple(c.get_offsets()[0]) for c in fig.axes[0].collections if len(c.get_offsets())]
    plots._pyplot().close(fig)
    assert len(ys) == 8 and len(set(ys)) == 8


def test_the_overlap_check_sees_an_overlap():
    """Positive control: the old layout's neighbouring value labels (`100.098.8`) are caught."""
    plt = plots._pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for k, v in enumerate([100.0, 98.8]):
        ax.annotate(f"{v:.1f}", (0.5 + k * 0.05, v), ha="center", va="bottom", fontsize=8)
    with pytest.raises(AssertionError, match="overlapping text"):
        _assert_no_overlap(fig, "control")
