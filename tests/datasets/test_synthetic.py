"""Synthetic data of the PEM paper: Zipf (Section V), zipf(-20) (V-B), exponential (VI-A).

Statistical assertions use a false-failure rate of 1e-4 each: a chi-square test rejects
at p < 1e-4. Rank labels are recovered from the observed order only where neighbouring
ranks are far apart: Zipf(1.5) ranks 1-10 at n = 10^6 (the gap between ranks 10 and 11
is 15 standard deviations) and exponential ranks 1-16 (gap between 16 and 17 is 7.6 sd),
so the chance that the observed order differs from the true one is below 1e-6.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy import stats

from ldp.datasets import load, synthetic

ALPHA = 1e-4


def _gof(counts: np.ndarray, probabilities: np.ndarray, n: int) -> float:
    """Chi-square p-value of the top counts plus one 'rest' cell."""
    observed = np.append(counts, n - counts.sum())
    expected = n * np.append(probabilities, 1 - probabilities.sum())
    return stats.chisquare(observed, expected).pvalue


def test_zipf_top_ranks_goodness_of_fit() -> None:
    data = load("zipf", seed=11)
    assert data.n == 10**6 and data.m == 64 and data.values.dtype == np.uint64
    assert data.source == "synthetic" and data.params["s"] == 1.5
    p = synthetic.zipf_probabilities(1.5, synthetic.ZIPF_SUPPORT)
    counts = data.histogram()[1][:10]
    assert _gof(counts, p[:10], data.n) > ALPHA


def test_exponential_top_ranks_goodness_of_fit() -> None:
    data = load("exponential", seed=12)
    p = synthetic.exponential_probabilities(0.05, synthetic.EXPONENTIAL_SUPPORT)
    assert p[0] == pytest.approx(0.05) and p[15] == pytest.approx(0.05 * 0.95**15)
    assert p[15] == pytest.approx(0.023, abs=5e-4)  # Section VI-B3's theta
    assert _gof(data.histogram()[1][:16], p[:16], data.n) > ALPHA


def test_rank_counts_full_goodness_of_fit() -> None:
    """The multinomial over every rank, tail cells pooled to expected counts >= 5."""
    p = synthetic.zipf_probabilities(1.5, 2**16)
    counts = synthetic.rank_counts(10**5, p, np.random.default_rng(3))
    expected = 10**5 * p
    cut = int(np.argmax(expected < 5))
    observed = np.append(counts[:cut], counts[cut:].sum())
    assert stats.chisquare(observed, np.append(expected[:cut], expected[cut:].sum())).pvalue > ALPHA


def test_zipf_minus_20_is_renormalised_tail_of_the_same_values() -> None:
    base = load("zipf", n=10**6, m=32, seed=5)
    dropped = load("zipf", n=10**6, m=32, seed=5, drop_top=20)
    assert dropped.n == 10**6 and dropped.params["drop_top"] == 20
    # The ten most frequent values of zipf (well separated) are absent from zipf(-20) ...
    assert np.intersect1d(dropped.histogram()[0], base.top_k(10)).size == 0
    # ... whose top ranks follow (j + 20)^-1.5, renormalised.
    p = synthetic.zipf_probabilities(1.5, dropped.params["support"], 20)
    assert p[0] == pytest.approx(21**-1.5 / (np.arange(21, 2**20 + 21) ** -1.5).sum())
    top = dropped.histogram()[1][:1]
    assert _gof(top, p[:1], dropped.n) > ALPHA
    # Same seed, same values: zipf(-20)'s top values are among zipf's top 60.
    assert np.isin(dropped.top_k(3), base.top_k(60)).all()


def test_small_domains_and_value_range() -> None:
    data = load("zipf", n=100_000, m=16, seed=1)
    assert data.params["support"] == 2**16
    assert int(data.values.max()) < 2**16
    data = load("exponential", n=1000, m=4, seed=1)
    assert data.params["support"] == 16 and int(data.values.max()) < 16


def test_distinct_random_values() -> None:
    rng = np.random.default_rng(0)
    for m in (8, 30, 64):
        values = synthetic.distinct_random_values(200, m, rng)
        assert values.dtype == np.uint64 and len(np.unique(values)) == 200
        assert m == 64 or int(values.max()) < 2**m
    with pytest.raises(ValueError):
        synthetic.distinct_random_values(300, 8, rng)


def test_seeded_and_reproducible() -> None:
    a, b = load("zipf", n=5000, seed=3), load("zipf", n=5000, seed=3)
    assert np.array_equal(a.values, b.values)
    assert not np.array_equal(a.values, load("zipf", n=5000, seed=4).values)
    # different loaders do not share values for the same seed
    assert a.top_k(1)[0] != load("exponential", n=5000, seed=3).top_k(1)[0]


def test_million_users_take_no_per_user_python_loop() -> None:
    """10^6 users are drawn by numpy, not by Python: the Python lines executed while both
    loaders run are counted (a per-user loop would execute over 10^6; timing is not used,
    so a loaded machine cannot fail this)."""
    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        load("zipf", n=10**6, seed=9)
        load("exponential", n=10**6, seed=9)
    finally:
        sys.settrace(None)
    assert lines < 10**5


def test_parameter_errors() -> None:
    with pytest.raises(ValueError, match="s"):
        load("zipf", n=10, s=0)
    with pytest.raises(ValueError, match="scale"):
        load("exponential", n=10, scale=1.5)
    with pytest.raises(ValueError, match="m"):
        load("zipf", n=10, m=65)
    with pytest.raises(TypeError):
        load("zipf", n=10, exponent=2)
    with pytest.raises(ValueError, match="unknown dataset"):
        load("mnist")
