"""The paper's statistics for paired comparisons of two runs on the same cases and seeds.

Everything here is plain numpy/scipy over arrays, vectorised, and every random draw comes from
`numpy.random.default_rng(seed)`, so a result is fixed by its inputs, its seed and its draw count.

Conventions (the paper's Method, "Statistics", and Table 7):
- a *row* is one case under one seed; `diff` is `correct_a - correct_b` per row (-1, 0 or 1);
- the gap is the mean row difference in percentage points;
- the calculator-cluster bootstrap resamples calculators with replacement, each with all its cases
  and seeds; the case bootstrap resamples cases, each with all its seeds; both draw a
  (draws, groups) matrix of group indexes with `rng.integers(0, groups)`, row by row, and take
  the percentile 95% interval of the resampled gaps;
- the sign-flip permutation test works on seed-averaged per-case differences;
- exact McNemar counts discordant case-seed rows (not seed-averaged cases);
- ICC(1) is the one-way random-effects intraclass correlation of seed-averaged per-case
  differences within calculators, and n_eff = n / (1 + (m - 1) ICC) with n cases and m the mean
  number of cases per calculator.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats as sps

# Rows of the draw matrix generated at once: keeps memory near 10 MB whatever the draw count.
_CHUNK_CELLS = 1_250_000


def _chunks(draws: int, width: int) -> list[int]:
    step = max(1, _CHUNK_CELLS // max(width, 1))
    return [min(step, draws - start) for start in range(0, draws, step)]


def _codes(labels: Sequence | np.ndarray) -> tuple[np.ndarray, int]:
    """Dense integer codes 0..k-1 for any labels (in order of first sorted value)."""
    _, codes = np.unique(np.asarray(labels), return_inverse=True)
    codes = codes.reshape(-1)
    return codes, int(codes.max()) + 1 if codes.size else 0


def gap_pp(diff: np.ndarray) -> float:
    """Mean paired difference in percentage points."""
    diff = np.asarray(diff, dtype=float)
    if diff.size == 0:
        raise ValueError("no rows to compare")
    return float(100.0 * diff.mean())


def bootstrap_gaps(diff: np.ndarray, groups: Sequence | np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Resampled gaps (pp): each draw picks as many groups as there are, with replacement.

    A group (a calculator, or a case) carries all its rows; the gap of a draw is the sum of the
    chosen groups' row differences over the number of their rows, so groups of unequal size weigh
    by their rows, as in the pooled gap itself.
    """
    if draws < 1:
        raise ValueError("draws must be at least 1")
    diff = np.asarray(diff, dtype=float)
    codes, k = _codes(groups)
    if k == 0:
        raise ValueError("no rows to resample")
    sums = np.bincount(codes, weights=diff, minlength=k)
    sizes = np.bincount(codes, minlength=k).astype(float)
    rng = np.random.default_rng(seed)
    out = np.empty(draws)
    at = 0
    for n in _chunks(draws, k):
        idx = rng.integers(0, k, size=(n, k))
        out[at:at + n] = 100.0 * sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
        at += n
    return out


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    tail = 100.0 * (1.0 - level) / 2.0
    lo, hi = np.percentile(samples, [tail, 100.0 - tail])
    return float(lo), float(hi)


def cluster_ci(diff: np.ndarray, calculator: Sequence | np.ndarray, draws: int = 10_000, seed: int = 0,
               level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the calculator-cluster bootstrap (calculators resampled, seeds kept)."""
    return percentile_ci(bootstrap_gaps(diff, calculator, draws, seed), level)


def case_ci(diff: np.ndarray, case: Sequence | np.ndarray, draws: int = 10_000, seed: int = 0,
            level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of the case bootstrap (cases resampled, each with all its seeds)."""
    return percentile_ci(bootstrap_gaps(diff, case, draws, seed), level)


def case_means(diff: np.ndarray, case: Sequence | np.ndarray) -> np.ndarray:
    """Seed-averaged difference per case, in the order of the sorted case labels."""
    codes, k = _codes(case)
    diff = np.asarray(diff, dtype=float)
    return np.bincount(codes, weights=diff, minlength=k) / np.bincount(codes, minlength=k)


def sign_flip_p(case_diffs: np.ndarray, draws: int = 10_000, seed: int = 0) -> float:
    """Two-sided sign-flip permutation p for a zero mean of per-case differences.

    Each draw keeps or flips the sign of every case's difference independently (a fair coin per
    case, `rng.random() < 0.5` keeps it, row by row); p = (1 + #{|mean*| >= |mean|}) / (draws + 1).
    """
    if draws < 1:
        raise ValueError("draws must be at least 1")
    d = np.asarray(case_diffs, dtype=float)
    if d.size == 0:
        raise ValueError("no cases to compare")
    observed = abs(d.sum())
    tol = 1e-9 * max(1.0, float(np.abs(d).sum()))
    rng = np.random.default_rng(seed)
    hits = 0
    for n in _chunks(draws, d.size):
        keep = rng.random((n, d.size)) < 0.5  # one double per coin: the stream does not depend on chunking
        flipped = np.where(keep, d, -d).sum(axis=1)
        hits += int(np.count_nonzero(np.abs(flipped) >= observed - tol))
    return (1 + hits) / (draws + 1)


@dataclass(frozen=True)
class Discordant:
    """Discordant pairs: a right and b wrong, a wrong and b right."""

    a_only: int
    b_only: int


def discordant(a: np.ndarray, b: np.ndarray) -> Discordant:
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    return Discordant(int(np.count_nonzero(a & ~b)), int(np.count_nonzero(~a & b)))


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> float:
    """Exact (binomial) two-sided McNemar p over paired binary outcomes."""
    d = discordant(a, b)
    n = d.a_only + d.b_only
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * sps.binom.cdf(min(d.a_only, d.b_only), n, 0.5)))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p values, in the input order; None stays None (not in the family)."""
    idx = [i for i, p in enumerate(pvalues) if p is not None and not np.isnan(p)]
    out: list[float | None] = [None] * len(pvalues)
    m = len(idx)
    running = 0.0
    for rank, i in enumerate(sorted(idx, key=lambda i: pvalues[i])):  # type: ignore[arg-type, return-value]
        running = max(running, min(1.0, (m - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def icc_oneway(values: np.ndarray, groups: Sequence | np.ndarray) -> float | None:
    """ICC(1), one-way random effects, from the ANOVA mean squares; unequal groups use n0.

    ICC = (MSB - MSW) / (MSB + (n0 - 1) MSW), n0 = (N - sum n_i^2 / N) / (g - 1). None when it is
    undefined (fewer than two groups, no within-group degrees of freedom, or no variance at all).
    """
    y = np.asarray(values, dtype=float)
    codes, g = _codes(groups)
    n_total = y.size
    if g < 2 or n_total - g < 1:
        return None
    sizes = np.bincount(codes, minlength=g).astype(float)
    means = np.bincount(codes, weights=y, minlength=g) / sizes
    grand = y.mean()
    ssb = float((sizes * (means - grand) ** 2).sum())
    ssw = float(((y - means[codes]) ** 2).sum())
    msb = ssb / (g - 1)
    msw = ssw / (n_total - g)
    n0 = (n_total - (sizes ** 2).sum() / n_total) / (g - 1)
    denom = msb + (n0 - 1.0) * msw
    if denom <= 0:
        return None
    return float((msb - msw) / denom)


def effective_n(n: float, m: float, icc: float | None) -> float | None:
    """n / (1 + (m - 1) ICC); a negative ICC counts as zero (no design effect below one)."""
    if icc is None:
        return None
    return float(n / (1.0 + (m - 1.0) * max(icc, 0.0)))


@dataclass(frozen=True)
class PairedResult:
    n_cases: int
    n_rows: int
    n_calculators: int
    gap_pp: float
    case_ci: tuple[float, float]
    cluster_ci: tuple[float, float]
    perm_p: float
    mcnemar_p: float
    discordant: Discordant
    icc: float | None
    n_eff: float | None


def paired(a: np.ndarray, b: np.ndarray, case: np.ndarray, calculator: np.ndarray, *, draws: int = 10_000,
           seed: int = 0) -> PairedResult:
    """Every statistic of Table 7 for one paired comparison (rows already aligned)."""
    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    case = np.asarray(case)
    calculator = np.asarray(calculator)
    diff = a.astype(float) - b.astype(float)
    # one calculator per case: the first row's
    case_codes, n_cases = _codes(case)
    _, first = np.unique(case_codes, return_index=True)
    case_calc = calculator[first]
    per_case = case_means(diff, case)
    n_calcs = int(np.unique(calculator).size)
    icc = icc_oneway(per_case, case_calc)
    return PairedResult(
        n_cases=n_cases,
        n_rows=int(diff.size),
        n_calculators=n_calcs,
        gap_pp=gap_pp(diff),
        case_ci=case_ci(diff, case, draws, seed),
        cluster_ci=cluster_ci(diff, calculator, draws, seed),
        perm_p=sign_flip_p(per_case, draws, seed),
        mcnemar_p=mcnemar_exact(a, b),
        discordant=discordant(a, b),
        icc=icc,
        n_eff=effective_n(n_cases, n_cases / n_calcs, icc),
    )
