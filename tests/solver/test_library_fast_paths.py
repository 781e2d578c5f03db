"""The typed accessors' inline common case ([number, 'unit'] as a list) answers exactly as their general path.

A value of an int or float subclass takes the general path (the inline case accepts exact int and float only) and
prints like one, so every input here is computed both ways: the results, the recorded inputs and
every refusal (class and message) must be the same.
"""
from __future__ import annotations

from typing import Any

import pytest

from solver.library import CalculatorError, compute


class F(float):
    """A float the inline case does not take: the general path runs, messages print the same."""


class I(int):  # noqa: E742 - an int the inline case does not take
    """An int the inline case does not take."""


def _outcome(slug: str, entities: dict[str, Any], variant: str) -> tuple[Any, ...]:
    try:
        r = compute(slug, entities, variant=variant)
    except CalculatorError as e:
        return ("refused", type(e).__name__, e.variable, e.message)
    except KeyError as e:
        return ("key", str(e))
    return ("value", r.value, r.version, r.content_hash,
            {k: (rec.value, rec.unit) for k, rec in r.inputs.items()}, r.warnings)


def _slow(entities: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in entities.items():
        if type(v) is list and v and type(v[0]) in (int, float):
            v = [(I if type(v[0]) is int else F)(v[0]), *v[1:]]
        out[k] = v
    return out


BASES = {
    "ckd-epi-2021": {"age": [60, "years"], "sex": "Male", "creatinine": [1.1, "mg/dL"]},
    "body-mass-index": {"weight": [70.0, "kg"], "height": [170, "cm"]},
    "qtc-bazett": {"Heart Rate or Pulse": [80, "beats per minute"], "QT Interval": [400, "msec"]},
    "ideal-body-weight": {"sex": "Female", "height": [64, "in"]},
}
VARIANTS = [  # (input, replacement value): in range, out of range, not finite, other units and spellings
    (name, value) for name, value in [
        ("age", [17, "years"]), ("age", [200, "years"]), ("age", [30, "months"]), ("age", [40, "decades"]),
        ("age", [float("nan"), "years"]), ("creatinine", [97, "µmol/L"]), ("creatinine", [97, "μmol/L"]),
        ("creatinine", [0.01, "mg/dL"]), ("creatinine", [float("inf"), "mg/dL"]), ("creatinine", [1.0, "mg/L"]),
        ("creatinine", [1.0, "mg/dl"]), ("weight", [154, "lbs"]), ("weight", [70, "stone"]), ("weight", [0.1, "kg"]),
        ("weight", [float("-inf"), "kg"]), ("height", [1.7, "m"]), ("height", [5, "yd"]), ("height", [900, "cm"]),
        ("height", [float("nan"), "cm"]), ("Heart Rate or Pulse", [10, "beats per minute"]),
        ("Heart Rate or Pulse", [80, "bpm"]), ("QT Interval", [float("nan"), "msec"]), ("QT Interval", [400, "ms"]),
        ("QT Interval", [10 ** 400, "msec"]),
    ]
]


@pytest.mark.parametrize("variant", ["benchmark", "published"])
@pytest.mark.parametrize("slug", sorted(BASES))
def test_inline_and_general_paths_agree(slug, variant):
    base = BASES[slug]
    cases = [dict(base)] + [{**base, name: value} for name, value in VARIANTS if name in base]
    cases += [{k: v for k, v in base.items() if k != name} for name in base]  # each input missing
    outcomes = set()
    for ents in cases:
        fast, slow = _outcome(slug, ents, variant), _outcome(slug, _slow(ents), variant)
        assert repr(fast) == repr(slow), ents
        outcomes.add(fast[0])
    assert outcomes == {"value", "refused"}  # the cases reach both answers


@pytest.mark.parametrize("weight, height, warned", [([600, "kg"], [1.0, "m"], True), ([30, "kg"], [2.5, "m"], True),
                                                    ([70, "kg"], [1.7, "m"], False), ([100, "kg"], [1.0, "m"], False)])
def test_a_result_outside_its_plausible_range_warns_as_benchmark_and_is_refused_as_published(weight, height, warned):
    ents = {"weight": weight, "height": height}  # BMI 600, 4.8, 24.2, 100 (the bound itself is inside: 10 to 100)
    r = compute("body-mass-index", ents, variant="benchmark")
    assert bool(r.warnings) is warned and all("bmi-range" in w for w in r.warnings)
    if warned:
        with pytest.raises(CalculatorError, match="bmi-range"):
            compute("body-mass-index", ents, variant="published")
    else:
        assert not compute("body-mass-index", ents, variant="published").warnings
