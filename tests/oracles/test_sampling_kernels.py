"""The exact histogram samplers of the sampled engines: Hadamard cosets and FLH's pool.

:func:`ldp.oracles.hadamard_sampling.coset_histograms` is checked against the law it
claims (independent multinomials, one per code, uniform on a coset): every cell's mean
and every Walsh coefficient's variance (which covers the cells' covariances), 4000 runs,
each assertion at a false-alarm rate ``ALPHA`` (Bonferroni over the statistics).  Its
compiled and numpy paths, and FLH's, must give the same numbers bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import hashing, streaming
from ldp.algebra import walsh_hadamard
from ldp.oracles import flh
from ldp.oracles.hadamard import parity
from ldp.oracles.hadamard_sampling import coset_histograms, halving_counts

ALPHA = 1e-4
ORDER = 16


def population() -> tuple[np.ndarray, np.ndarray]:
    """Two groups over [16]: heavy and light codes at every level, both sides, code 0."""
    even = np.zeros((2, ORDER), dtype=np.int64)
    odd = np.zeros((2, ORDER), dtype=np.int64)
    even[0, [0, 1, 3, 5, 6, 12]] = [7, 50, 40, 2, 100, 9]  # level 0-3, heavy and light
    even[1, [2, 9, 15]] = [30, 200, 4]
    odd[0, [1, 7, 13]] = [20, 3, 150]
    odd[1, [4, 11]] = [60, 1]
    return even, odd


def exact_moments(even: np.ndarray, odd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (G, K) and covariance (G, K, K) of Σ_c Mult(m, U{c·y = side})."""
    y = np.arange(ORDER)
    mean = np.zeros(even.shape, dtype=float)
    cov = np.zeros((even.shape[0], ORDER, ORDER))
    for side, counts in ((0, even), (1, odd)):
        for g, c in zip(*np.nonzero(counts), strict=True):
            p = (parity(c & y) == side) / (ORDER / 2 if c else ORDER)
            m = counts[g, c]
            mean[g] += m * p
            cov[g] += m * (np.diag(p) - np.outer(p, p))
    return mean, cov


@pytest.mark.slow
def test_coset_histograms_follow_the_multinomial_law() -> None:
    even, odd = population()
    mean, cov = exact_moments(even, odd)
    rng = np.random.default_rng(5)
    runs = 4000
    draws = np.array([coset_histograms(even, odd, rng) for _ in range(runs)], dtype=float)
    assert np.all(draws.sum(axis=2) == (even + odd).sum(axis=1))  # every user placed once
    tests = 2 * 2 * ORDER
    level = ALPHA / (2 * tests)
    spread = np.sqrt(np.maximum(np.diagonal(cov, axis1=1, axis2=2), 1e-300) / runs)
    z = np.where(spread > 1e-12, (draws.mean(axis=0) - mean) / spread, 0.0)
    assert np.all(np.abs(z) < stats.norm.isf(level))
    hadamard = np.array([walsh_hadamard(np.eye(ORDER, dtype=np.int64)[i]) for i in range(ORDER)])
    for g in range(2):
        walsh = draws[:, g] @ hadamard.T  # (runs, K): every Walsh coefficient
        variance = np.einsum("ai,ij,aj->a", hadamard, cov[g], hadamard)
        seen = walsh.var(axis=0, ddof=1)
        for a in range(ORDER):
            if variance[a] < 1e-9:  # a deterministic coefficient (the codes' own rows)
                assert np.allclose(walsh[:, a], walsh[0, a])
                continue
            chi = (runs - 1) * seen[a] / variance[a]
            assert stats.chi2.ppf(level, runs - 1) < chi < stats.chi2.isf(level, runs - 1)


@pytest.mark.skipif(not hashing.HAVE_NUMBA, reason="numba not installed")
def test_coset_histograms_same_numbers_without_numba(monkeypatch) -> None:
    monkeypatch.setattr(streaming, "CHUNK_USERS", 3)  # the numpy path, 3 users a chunk
    even, odd = population()
    compiled = coset_histograms(even, odd, np.random.default_rng(9))
    plain = coset_histograms(even, odd, np.random.default_rng(9), use_numba=False)
    np.testing.assert_array_equal(compiled, plain)


def test_coset_histograms_refuse_bad_input() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="power of two"):
        coset_histograms(np.zeros((1, 6), dtype=np.int64), None, rng)
    odd = np.zeros((1, 8), dtype=np.int64)
    odd[0, 0] = 1
    with pytest.raises(ValueError, match="no users at code 0"):
        coset_histograms(np.zeros((1, 8), dtype=np.int64), odd, rng)


def test_halving_counts_are_uniform_multinomials() -> None:
    rng = np.random.default_rng(3)
    cells = np.array([halving_counts(np.array([60, 0]), 2, rng) for _ in range(4000)])
    assert np.all(cells.sum(axis=2) == [60, 0])
    z = (cells[:, 0].mean(axis=0) - 15) / np.sqrt(60 * 0.25 * 0.75 / 4000)
    assert np.all(np.abs(z) < stats.norm.isf(ALPHA / 8))


def test_pool_indices_reject_the_biased_words() -> None:
    """k = 3 2^30: a quarter of the words are rejected and mixed again; the indices stay
    uniform on [0, k) (chi-square over 3 equal bins of the range)."""
    k = 3 << 30
    words = streaming.splitmix64(np.arange(1, 30001, dtype=np.uint64) * streaming.GAMMA)
    j = flh.pool_indices(words, k)
    assert j.min() >= 0 and j.max() < k
    observed = np.bincount(j // (1 << 30), minlength=3)
    assert stats.chisquare(observed).pvalue > ALPHA


@pytest.mark.skipif(not hashing.HAVE_NUMBA, reason="numba not installed")
def test_flh_light_users_same_numbers_without_numba(monkeypatch) -> None:
    monkeypatch.setattr(streaming, "CHUNK_USERS", 4)
    monkeypatch.setattr(flh, "PARALLEL_USERS", 1)  # the threads' split
    rng = np.random.default_rng(1)
    pool = rng.integers(0, 2**63, size=7, dtype=np.uint64)
    a, b = hashing.user_functions(pool)
    digests = hashing.digest(np.array([3, 9, 100, 5]))
    counts = np.array([5, 0, 40, 3])
    tables = []
    for use_numba in (True, False):
        table = np.zeros(7 * 4, dtype=np.int64)
        flh.place_light(table, digests, counts, a, b, 4, np.uint64(77), use_numba=use_numba)
        tables.append(table)
    np.testing.assert_array_equal(*tables)
    assert tables[0].sum() == counts.sum()


@pytest.mark.slow
def test_through_histograms_follow_the_multinomial_law() -> None:
    """PGR's dimension-by-dimension sampler against Σ_x Mult(m_x, U{u through x}) at
    q = 3, t = 4 (40 points, two blocks; light and heavy points of every dimension):
    every cell's mean, and the variance of 20 random projections of the histogram
    (which covers the covariances), 2000 runs."""
    from ldp.oracles.projective import inverse_table, points, through_histograms, vectors_of

    q, t = 3, 4
    size = points(q, t)
    kept = np.zeros((2, size), dtype=np.int64)
    kept[0, [0, 1, 3, 5, 12, 20, 39]] = [50, 3, 30, 1, 7, 2, 5]
    kept[1, [2, 30]] = [9, 100]
    vectors = vectors_of(np.arange(size), q, t)
    mean, cov = np.zeros((2, size)), np.zeros((2, size, size))
    for g, x in zip(*np.nonzero(kept), strict=True):
        p = (vectors @ vectors[x] % q == 0) / points(q, t - 1)
        mean[g] += kept[g, x] * p
        cov[g] += kept[g, x] * (np.diag(p) - np.outer(p, p))
    rng = np.random.default_rng(7)
    runs = 2000
    draws = np.array(
        [through_histograms(kept, q, t, inverse_table(q), rng) for _ in range(runs)], dtype=float
    )
    assert np.all(draws.sum(axis=2) == kept.sum(axis=1))
    level = ALPHA / (2 * (2 * size + 40))
    spread = np.sqrt(np.diagonal(cov, axis1=1, axis2=2) / runs)
    error = draws.mean(axis=0) - mean
    assert np.all(np.abs(error) <= stats.norm.isf(level) * spread + 1e-12)
    for g in range(2):
        weights = np.random.default_rng(g).normal(size=(20, size))
        variance = np.einsum("ai,ij,aj->a", weights, cov[g], weights)
        chi = (runs - 1) * (draws[:, g] @ weights.T).var(axis=0, ddof=1) / variance
        assert np.all(
            (chi > stats.chi2.ppf(level, runs - 1)) & (chi < stats.chi2.isf(level, runs - 1))
        )


@pytest.mark.skipif(not hashing.HAVE_NUMBA, reason="numba not installed")
def test_projective_light_users_same_numbers_without_numba(monkeypatch) -> None:
    from ldp.oracles.projective import inverse_table, place_through, points

    monkeypatch.setattr(streaming, "CHUNK_USERS", 5)
    q, dim = 3, 4
    size = points(q, dim)
    args = (np.array([0, 1, 0, 1]), np.array([0, 5, 13, 39]), np.array([7, 0, 20, 33]))
    tables = []
    for use_numba in (True, False):
        flat = np.zeros(2 * size, dtype=np.int64)
        place_through(flat, size, *args, q, dim, inverse_table(q), np.uint64(99), use_numba)
        tables.append(flat)
    np.testing.assert_array_equal(*tables)
    assert tables[0].sum() == 60
