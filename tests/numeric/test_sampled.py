"""The sampled engines of PM and HM and the exact sums of uniform integers under them.

Statistical assertions are at level 1e-4 each (ldp.testing.ALPHA) on fixed seeds.  The
conformance suite (tests/test_conformance.py, ``engines_agree``) compares the engines'
means and variances on evenly spaced values; here the whole law is compared, on small
populations where it is far from normal, through both ways a sum of uniforms is drawn.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp import budget
from ldp.numeric import PM, Hybrid, piecewise
from ldp.numeric import uniform_sum as sums
from ldp.numeric.uniform_sum import uniform_sum
from ldp.testing import ALPHA
from ldp.validation import ParameterError

Z_LIMIT = float(stats.norm.isf(ALPHA / 2))


def _exact_pmf(counts: list[int], sizes: list[int]) -> np.ndarray:
    """P(sum = s) by convolving the uniform laws, one user at a time."""
    pmf = np.array([1.0])
    for count, size in zip(counts, sizes, strict=True):
        for _ in range(count):
            pmf = np.convolve(pmf, np.full(size, 1.0 / size))
    return pmf


def _chi_square_p(observed: np.ndarray, pmf: np.ndarray) -> float:
    """Pearson's test of counts against a pmf, cells expected below 5 pooled into one."""
    expected = pmf * observed.sum()
    big = expected >= 5
    observed = np.append(observed[big], observed[~big].sum())
    expected = np.append(expected[big], expected[~big].sum())
    if expected[-1] == 0:
        observed, expected = observed[:-1], expected[:-1]
    return float(stats.chisquare(observed, expected).pvalue)


@pytest.mark.parametrize(
    ("counts", "sizes"),
    [
        ([3, 2, 1], [5, 7, 12]),  # few users a row: drawn user by user
        ([9, 12], [5, 13]),  # many: the dyadic blocks and the bits' binomials
        ([20, 0, 9, 10], [1, 4, 8, 11]),  # a size 1, an empty row, a power of two
    ],
)
def test_uniform_sum_follows_the_exact_law(counts: list[int], sizes: list[int]) -> None:
    """Chi-square of 10,000 draws against the convolution of the uniform laws."""
    rng = np.random.default_rng(5)
    draws = np.array([uniform_sum(rng, np.array(counts), np.array(sizes)) for _ in range(10_000)])
    pmf = _exact_pmf(counts, sizes)
    assert draws.min() >= 0 and draws.max() < pmf.size
    assert _chi_square_p(np.bincount(draws, minlength=pmf.size), pmf) > ALPHA


def test_uniform_sum_of_large_sizes_is_exact_in_python_ints() -> None:
    """Sizes near 2^52 and 10^6 users: the sum passes 2^63 (Python ints, no overflow); its
    mean m(N-1)/2 and variance m(N²-1)/12 against z-tests."""
    counts, sizes = np.array([10**6, 10**6]), np.array([2**52 + 12_345, 3 * 2**50 + 1])
    rng = np.random.default_rng(6)
    draws = [uniform_sum(rng, counts, sizes) for _ in range(2000)]
    assert all(isinstance(d, int) for d in draws) and max(draws) > 2**63
    mean = sum((c * (s - 1)) / 2 for c, s in zip(counts.tolist(), sizes.tolist(), strict=True))
    variance = sum(
        c * (s * s - 1) / 12 for c, s in zip(counts.tolist(), sizes.tolist(), strict=True)
    )
    scaled = np.array([(d - mean) / math.sqrt(variance) for d in draws])
    assert abs(scaled.mean()) * math.sqrt(scaled.size) <= Z_LIMIT
    # (x - μ)²/σ² has mean 1 and variance 2 for a normal sum (10^6 users: close to one)
    assert abs((scaled**2).mean() - 1) / math.sqrt(2 / scaled.size) <= Z_LIMIT


def test_uniform_sum_refuses_bad_rows() -> None:
    rng = np.random.default_rng(0)
    assert uniform_sum(rng, np.array([0, 0]), np.array([0, 5])) == 0  # empty rows ignored
    with pytest.raises(ValueError, match="shape"):
        uniform_sum(rng, np.array([1, 2]), np.array([3]))
    with pytest.raises(ValueError, match=">= 0"):
        uniform_sum(rng, np.array([-1]), np.array([3]))
    with pytest.raises(ValueError, match="sizes"):
        uniform_sum(rng, np.array([1]), np.array([0]))


def _estimates(protocol, values: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """``runs`` estimates from the reports engine and from the sampled engine."""
    rng = np.random.default_rng(7)
    reports = np.array([protocol.estimate(protocol.perturb(values, rng)) for _ in range(runs)])
    sampled = np.array([protocol.simulate(values, rng) for _ in range(runs)])
    return reports, sampled


#: Populations far from normal: 3 users off the input grid (each row drawn user by user),
#: and 60 users on four values, one off the grid (rows through the dyadic blocks).
POPULATIONS = {
    "three users": np.array([0.3, -0.77777, 1.0]),
    "four values": np.repeat([-1.0, 0.3, 0.123456789, 1.0], 15),
}


@pytest.mark.parametrize("population", list(POPULATIONS))
@pytest.mark.parametrize(
    ("cls", "epsilon"),
    [(PM, 1.0), (PM, 6.0), (Hybrid, 2.0), (Hybrid, 0.5)],  # 0.5: Duchi only
)
def test_engines_have_the_same_law(cls, epsilon: float, population: str) -> None:
    """Two-sample Kolmogorov-Smirnov test of the estimate's law (2000 runs an engine)."""
    protocol = cls(epsilon=epsilon)
    reports, sampled = _estimates(protocol, POPULATIONS[population], 2000)
    assert stats.ks_2samp(reports, sampled).pvalue > ALPHA


def _tiny_pm(monkeypatch: pytest.MonkeyPatch) -> PM:
    """PM on a grid small enough to see every cell: C' = m/2^s = 3/2, inputs on 2^-2, 48
    cells (not private at any useful ε; it checks the sampled engine's bookkeeping)."""
    monkeypatch.setattr(piecewise, "INPUT_BITS", 2)
    protocol = PM(epsilon=1.0)
    m, s = 3, 1
    object.__setattr__(protocol, "_m", m)
    object.__setattr__(protocol, "_s", s)
    object.__setattr__(protocol, "_centre", (m + 2**s, 2 * m))
    return protocol


@pytest.mark.parametrize("few_users", [sums.FEW_USERS, 0])  # 0: every row through blocks
@pytest.mark.parametrize(
    "values", [np.array([0.3, -0.8, 1.0, -1.0]), np.array([0.5] * 9 + [-0.3] * 9 + [1.0] * 9)]
)
def test_pm_cell_sum_has_the_exact_law(
    monkeypatch: pytest.MonkeyPatch, values: np.ndarray, few_users: int
) -> None:
    """On a tiny grid the sum S of cell indices takes few values, so its law can be
    compared cell by cell: a chi-square two-sample test of S from the reports (each report
    is (2j + 1) h/2) against ``cell_sum``, 10,000 runs each; cells with fewer than 10 runs
    in total are pooled.  A bookkeeping error of a single cell would show here, where it
    would be 2^-17 of the spread at the real grid."""
    protocol = _tiny_pm(monkeypatch)
    monkeypatch.setattr(sums, "FEW_USERS", few_users)
    rng = np.random.default_rng(8)
    # 10,000 runs in one call: PM's users draw independently, with no per-call randomness
    reports = protocol.perturb(np.tile(values, 10_000), rng).reshape(10_000, values.size)
    from_reports = ((reports / (protocol.cell / 2) - 1) // 2).sum(axis=1).astype(np.int64)
    points, counts = np.unique(values, return_counts=True)
    drawn = np.array([protocol.cell_sum(points, counts, rng) for _ in range(10_000)])
    low = min(from_reports.min(), drawn.min())
    size = max(from_reports.max(), drawn.max()) - low + 1
    table = np.array(
        [np.bincount(sample - low, minlength=size) for sample in (from_reports, drawn)]
    )
    rare = table.sum(axis=0) < 10
    pooled = np.column_stack([table[:, ~rare], table[:, rare].sum(axis=1)])
    assert stats.chi2_contingency(pooled).pvalue > ALPHA


def test_sampled_engine_of_many_users_on_two_values() -> None:
    """10^5 users at ±1 (PM's worst case): the rows go through the blocks with large
    counts; the estimate's mean 0 and variance variance(values) against z-tests."""
    protocol = PM(epsilon=1.0)
    values = np.repeat([-1.0, 1.0], 50_000)
    rng = np.random.default_rng(9)
    sample = np.array([protocol.simulate(values, rng) for _ in range(1000)])
    scaled = sample / math.sqrt(protocol.variance(values))
    assert abs(scaled.mean()) * math.sqrt(scaled.size) <= Z_LIMIT
    assert abs((scaled**2).mean() - 1) / math.sqrt(2 / scaled.size) <= Z_LIMIT


@pytest.mark.parametrize("cls", [PM, Hybrid])
def test_sampled_engine_refuses_over_the_memory_budget(cls) -> None:
    protocol = cls(epsilon=1.0)
    with budget.limits(memory_bytes=1000), pytest.raises(ParameterError) as error:
        protocol.simulate(np.zeros(1000), np.random.default_rng(0))
    assert error.value.name == "values"


def test_chunks_of_rows_give_the_same_law(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows drawn in chunks of 2 (instead of CHUNK_ROWS): the chi-square of the exact law
    still passes (the bits' counts carry across chunks)."""
    monkeypatch.setattr(sums, "CHUNK_ROWS", 2)
    counts, sizes = [9, 10, 11], [3, 6, 5]
    rng = np.random.default_rng(10)
    draws = np.array([uniform_sum(rng, np.array(counts), np.array(sizes)) for _ in range(10_000)])
    pmf = _exact_pmf(counts, sizes)
    assert _chi_square_p(np.bincount(draws, minlength=pmf.size), pmf) > ALPHA
