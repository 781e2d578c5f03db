"""The site's typed report (formula_site/report.py): one labelling rule for runs."""
from __future__ import annotations

from formula_site.report import titles


def test_site_titles_follow_one_rule():
    def e(model, arm, dataset=None, folder="f"):
        return {"model": model, "arm": arm, "dataset": dataset, "dir": f"/tmp/{folder}"}

    assert titles([e(None, "gold-solve"), e("library", "gold-solve-published"), e("gpt-4", "one-shot")]) == [
        "gold-solve", "gold-solve-published", "gpt-4 · one-shot"]
    # the dataset only where it tells two runs apart, then the folder name, then a number; never a path
    assert titles([e("m", "a", "D1"), e("m", "a", "D2"), e("m", "b", "D1")]) == ["m · a · D1", "m · a · D2", "m · b"]
    assert titles([e("m", "a", "D", "x"), e("m", "a", "D", "y")]) == ["m · a · x", "m · a · y"]
    assert titles([e("m", "a", "D", "x"), e("m", "a", "D", "x")]) == ["m · a #1", "m · a #2"]
