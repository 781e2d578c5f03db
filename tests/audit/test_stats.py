"""The statistics against independent computations: scipy's binomtest, slow explicit loops with the
same draws, textbook examples (Holm; Shrout and Fleiss's ICC(1,1)) and exact enumeration."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from audit import stats
from tests.audit.synthetic import slow_bootstrap, slow_sign_flip_p


def small_paired(seed: int = 7, calcs: int = 6, per_calc: int = 4, seeds: int = 3) -> pd.DataFrame:
    """A small paired table: calculator, case, seed, a, b (bools) with per-calculator structure."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(calcs):
        pa, pb = 0.3 + 0.1 * c, 0.6 - 0.05 * c
        for k in range(per_calc):
            case = c * 100 + k
            for s in range(seeds):
                rows.append((f"calc{c}", case, 42 + s, rng.random() < pa, rng.random() < pb))
    return pd.DataFrame(rows, columns=["calculator", "case", "seed", "a", "b"])


@pytest.mark.parametrize("by", ["calculator", "case"])
def test_bootstraps_equal_a_slow_loop_with_the_same_draws(by: str) -> None:
    df = small_paired()
    diff = df["a"].astype(float) - df["b"].astype(float)
    fast = stats.bootstrap_gaps(diff.to_numpy(), df[by].to_numpy(), draws=300, seed=11)
    slow = slow_bootstrap(df, by, draws=300, seed=11)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-9)
    lo, hi = (stats.cluster_ci if by == "calculator" else stats.case_ci)(diff.to_numpy(), df[by].to_numpy(),
                                                                         draws=300, seed=11)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(slow, [2.5, 97.5])))


def test_bootstrap_chunking_does_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    df = small_paired()
    diff = (df["a"].astype(float) - df["b"].astype(float)).to_numpy()
    whole = stats.bootstrap_gaps(diff, df["case"].to_numpy(), draws=200, seed=3)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 50)  # a few draws per chunk
    np.testing.assert_array_equal(stats.bootstrap_gaps(diff, df["case"].to_numpy(), draws=200, seed=3), whole)


def test_bootstrap_is_fixed_by_its_seed() -> None:
    df = small_paired()
    diff = (df["a"].astype(float) - df["b"].astype(float)).to_numpy()
    one = stats.bootstrap_gaps(diff, df["calculator"].to_numpy(), 100, seed=5)
    assert np.array_equal(one, stats.bootstrap_gaps(diff, df["calculator"].to_numpy(), 100, seed=5))
    assert not np.array_equal(one, stats.bootstrap_gaps(diff, df["calculator"].to_numpy(), 100, seed=6))


def test_gap_is_the_paired_mean_in_points() -> None:
    assert stats.gap_pp(np.array([1, 0, 0, -1, 1])) == pytest.approx(20.0)


def test_cluster_interval_is_wider_when_calculators_differ() -> None:
    # every case of a calculator moves together: resampling calculators sees that, cases do not
    calc = np.repeat(np.arange(10), 20)
    diff = np.where(calc < 5, 1.0, 0.0)
    case = np.arange(200)
    clo, chi = stats.cluster_ci(diff, calc, 2000, 1)
    klo, khi = stats.case_ci(diff, case, 2000, 1)
    assert chi - clo > 2 * (khi - klo)


@pytest.mark.parametrize("a_only,b_only", [(0, 0), (3, 0), (7, 2), (12, 15), (40, 22)])
def test_mcnemar_equals_scipy_binomtest(a_only: int, b_only: int) -> None:
    # 10 concordant-right rows, 5 concordant-wrong rows, then the discordant ones
    a = np.array([True] * 10 + [False] * 5 + [True] * a_only + [False] * b_only)
    b = np.array([True] * 10 + [False] * 5 + [False] * a_only + [True] * b_only)
    expected = 1.0 if a_only + b_only == 0 else sps.binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert stats.mcnemar_exact(a, b) == pytest.approx(expected, rel=1e-12)
    assert stats.discordant(a, b) == stats.Discordant(a_only, b_only)


def exact_sign_flip_p(d: np.ndarray) -> float:
    """All 2^n sign patterns enumerated."""
    obs = abs(d.sum())
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-12
               for signs in itertools.product((-1, 1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_sign_flip_p_approaches_the_exact_enumeration() -> None:
    d = np.array([0.4, 0.2, 1.0, -0.2, 0.6, 0.0, 0.8, -0.4, 0.2, 0.6, 1.0])
    exact = exact_sign_flip_p(d)
    assert 0.005 < exact < 0.2
    assert stats.sign_flip_p(d, draws=40_000, seed=2) == pytest.approx(exact, abs=0.006)


def test_sign_flip_p_equals_a_slow_loop_with_the_same_draws() -> None:
    d = np.array([0.4, -0.2, 1.0, 0.0, 0.6, -0.8, 0.2])
    assert stats.sign_flip_p(d, draws=500, seed=9) == pytest.approx(slow_sign_flip_p(d, 500, 9))


def test_sign_flip_p_is_one_without_any_difference() -> None:
    assert stats.sign_flip_p(np.zeros(30), draws=100, seed=0) == 1.0


def test_holm_textbook_example() -> None:
    # Holm's step-down on four p values (the worked example used in many textbooks and on Wikipedia):
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.06
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1; None is outside the family
    assert stats.holm([0.5, None, 0.4]) == [pytest.approx(0.8), None, pytest.approx(0.8)]
    assert stats.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])


# Shrout and Fleiss (1979), Table 2: six targets rated by four judges; ICC(1,1) = .17.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])


def test_icc_shrout_fleiss_example() -> None:
    groups = np.repeat(np.arange(6), 4)
    icc = stats.icc_oneway(SHROUT_FLEISS.reshape(-1), groups)
    # their ANOVA: BMS = 11.24, WMS = 6.26 -> (11.24 - 6.26) / (11.24 + 3 * 6.26)
    assert icc == pytest.approx(0.17, abs=0.005)
    bms = 4 * ((SHROUT_FLEISS.mean(1) - SHROUT_FLEISS.mean()) ** 2).sum() / 5
    wms = ((SHROUT_FLEISS - SHROUT_FLEISS.mean(1, keepdims=True)) ** 2).sum() / 18
    assert bms == pytest.approx(11.24, abs=0.005) and wms == pytest.approx(6.26, abs=0.005)
    assert icc == pytest.approx((bms - wms) / (bms + 3 * wms))


def test_icc_unbalanced_groups_against_scipy_anova() -> None:
    rng = np.random.default_rng(4)
    sizes = [3, 5, 8, 4, 6]
    groups = np.repeat(np.arange(5), sizes)
    y = rng.normal(size=groups.size) + np.repeat(rng.normal(scale=1.5, size=5), sizes)
    f = sps.f_oneway(*[y[groups == g] for g in range(5)]).statistic
    n = groups.size
    n0 = (n - sum(s * s for s in sizes) / n) / 4
    assert stats.icc_oneway(y, groups) == pytest.approx((f - 1) / (f + n0 - 1))


def test_icc_undefined_cases() -> None:
    assert stats.icc_oneway(np.zeros(10), np.repeat([0, 1], 5)) is None
    assert stats.icc_oneway(np.arange(4.0), np.zeros(4)) is None


@pytest.mark.parametrize("icc,paper", [(0.68, 79), (0.81, 67), (0.43, 120), (0.41, 124)])
def test_effective_n_reproduces_table_7(icc: float, paper: int) -> None:
    # 1,100 cases, 20 per calculator
    assert round(stats.effective_n(1100, 20, icc)) == pytest.approx(paper, abs=1)


def test_effective_n_negative_icc_counts_as_zero() -> None:
    assert stats.effective_n(100, 10, -0.2) == 100
    assert stats.effective_n(100, 10, None) is None


def test_paired_collects_every_statistic() -> None:
    df = small_paired(calcs=8, per_calc=5, seeds=2)
    r = stats.paired(df["a"].to_numpy(), df["b"].to_numpy(), df["case"].to_numpy(), df["calculator"].to_numpy(),
                     draws=200, seed=1)
    d = df["a"].astype(float) - df["b"].astype(float)
    assert r.n_rows == len(df) and r.n_cases == 40 and r.n_calculators == 8
    assert r.gap_pp == pytest.approx(100 * d.mean())
    assert r.cluster_ci == pytest.approx(tuple(np.percentile(slow_bootstrap(df, "calculator", 200, 1), [2.5, 97.5])))
    per_case = df.assign(d=d).groupby("case")["d"].mean()
    calc_of = df.groupby("case")["calculator"].first()
    assert r.icc == pytest.approx(stats.icc_oneway(per_case.to_numpy(), calc_of.to_numpy()))
    assert r.n_eff == pytest.approx(40 / (1 + 4 * max(r.icc, 0)))
    assert r.mcnemar_p == pytest.approx(sps.binomtest(r.discordant.a_only,
                                                      r.discordant.a_only + r.discordant.b_only).pvalue)


def test_sign_flip_chunking_does_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.array([0.4, -0.2, 1.0, 0.0, 0.6, -0.8, 0.2])
    whole = stats.sign_flip_p(d, draws=301, seed=4)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 15)
    assert stats.sign_flip_p(d, draws=301, seed=4) == whole
