"""Fast local hashing (Cormode, Maddock, Maple, VLDB 2021): unbiased over the pool, exact
variance with its collision term, exact moments given a pool, both engines, privacy.

Workload of ``oracle_testing`` (d = 16, n = 4000, 60% of users on one value) with a small
pool, k' = 20, so that the shared collisions matter: the collision term
(b² s²/k') Σ_{u≠v} n_u² is most of the variance of the values other than the large one.
Every statistical assertion is a test at level ALPHA = 1e-4 (Bonferroni over the values).
The estimates are a mixture over pools, not a sum of independent terms, so the variance
is tested through the mean of the squared errors (known mean: the truth), whose standard
error is estimated from the sample (CLT over R = 2000 independent draws).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    LARGE,
    REPS,
    D,
    N,
    assert_same_moments,
    draw,
    engine_samples,
    moment_z_scores,
    seed_for,
    users,
    z_critical,
)
from scipy import stats

from ldp import hashing
from ldp.oracles import FLH, OLH
from ldp.privacy import max_privacy_loss

#: ε = 4 runs with the slow tests; ε = 0.5 checks every property fast
EPSILONS = (0.5, pytest.param(4.0, marks=pytest.mark.slow))
ENGINES = ("reports", "sampled")
K_PRIME = 20


def make(epsilon: float, k_prime: int = K_PRIME) -> FLH:
    return FLH(epsilon=epsilon, domain_size=D, k_prime=k_prime)


@cache
def estimates(epsilon: float, engine: str) -> np.ndarray:
    return draw(make(epsilon), COUNTS, engine, REPS, seed_for("FLH", epsilon, engine))


def squared_error_z(sample: np.ndarray, truth: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """(mean of (ĉ - c)² - Var) / its estimated standard error, per column."""
    squares = (sample - truth) ** 2
    return (squares.mean(axis=0) - variance) / (squares.std(axis=0, ddof=1) / np.sqrt(len(sample)))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_unbiased_over_the_pool_with_the_exact_variance(epsilon: float, engine: str) -> None:
    oracle = make(epsilon)
    sample = estimates(epsilon, engine)
    variance = oracle.variances(COUNTS)
    z = (sample.mean(axis=0) - COUNTS) / np.sqrt(variance / REPS)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    z2 = squared_error_z(sample, COUNTS, variance)
    assert np.abs(z2).max() <= z_critical(ALPHA, m=D), z2


def test_collision_term_is_what_the_test_sees() -> None:
    """Design: at k' = 20 the collision term is > 60% of a small value's variance, and the
    variance test above has the power to tell it apart from OLH's (distinct-values) variance."""
    for epsilon in (0.5,):
        oracle = make(epsilon)
        full = oracle.variances(COUNTS, np.array([0]))[0]
        assert oracle.variance(N, int(COUNTS[0])) < 0.4 * full
        olh = np.full(D, oracle.variance(N, 0))
        assert np.abs(squared_error_z(estimates(epsilon, "reports"), COUNTS, olh)[[0]]).max() > 10


def test_variance_tends_to_olh_as_the_pool_grows() -> None:
    big, olh = make(2.0, k_prime=10**6 - 1), OLH(epsilon=2.0, domain_size=D)
    assert big.g == olh.g
    exact = big.variances(COUNTS, np.array([0]))[0]
    assert exact == pytest.approx(olh.variance(N, int(COUNTS[0])), rel=1e-3)
    assert big.variance(N, 3) == olh.variance(N, 3)


def test_exact_moments_given_one_pool() -> None:
    """With one fixed pool: biased (a collision is shared), with the exact conditional
    mean and variance; the users are independent given the pool, so ĉ is a sum of
    independent bounded terms and S² follows χ²/ν closely."""
    oracle, rng = make(1.0), seed_for("FLH", "pool")
    pool = oracle.draw_pool(rng)
    values = users(COUNTS)
    sample = np.array(
        [oracle.estimate(oracle.perturb(values, rng, pool=pool)) for _ in range(REPS)]
    )
    mean, variance = oracle.conditional_moments(pool, COUNTS, np.arange(D))
    z = (sample.mean(axis=0) - mean) / np.sqrt(variance / REPS)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    ratio = sample.var(axis=0, ddof=1) / variance
    nu = REPS - 1
    lo, hi = stats.chi2.ppf(ALPHA / (2 * D), nu) / nu, stats.chi2.isf(ALPHA / (2 * D), nu) / nu
    assert ((ratio > lo * 0.98) & (ratio < hi * 1.02)).all(), ratio  # 2% kurtosis margin
    bias = np.abs(mean - COUNTS) / np.sqrt(variance / REPS)
    assert bias.max() > 2 * z_critical(ALPHA, m=D)  # design: the pool's bias is visible


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_engines_agree_in_distribution(epsilon: float) -> None:
    reports, sampled = estimates(epsilon, "reports"), estimates(epsilon, "sampled")
    for value in (LARGE, int(np.flatnonzero(COUNTS == 20)[0]), D - 1):
        assert stats.ks_2samp(reports[:, value], sampled[:, value]).pvalue >= ALPHA / 3


def test_heavy_values_are_spread_by_a_multinomial() -> None:
    """k' = 5 < n_v: the sampled engine's multinomial path, unbiased with the exact variance."""
    oracle, rng, counts = make(2.0, k_prime=5), seed_for("FLH", "heavy"), COUNTS
    sample = np.array([oracle.simulate(counts, rng) for _ in range(REPS)])
    variance = oracle.variances(counts)
    assert np.abs((sample.mean(0) - counts) / np.sqrt(variance / REPS)).max() <= z_critical(
        ALPHA, m=D
    )
    assert np.abs(squared_error_z(sample, counts, variance)).max() <= z_critical(ALPHA, m=D)


def test_table_lookup_equals_counting_each_user() -> None:
    oracle = make(2.0)
    reports = oracle.perturb(users(COUNTS), seed_for("FLH", "lookup"))
    candidates = np.arange(D)
    direct = hashing.support_counts(reports.seeds, reports.values, candidates, oracle.g)
    assert np.array_equal(oracle.support_counts(reports, candidates), direct)
    table = oracle.table(reports)  # the numba kernel and the numpy path agree
    numpy_path = hashing.table_lookup(table, reports.pool, candidates, use_numba=False)
    assert np.array_equal(numpy_path, direct)


#: A skewed population for the candidates' engine: value 5 (no candidate) holds 75% of the
#: users; candidates 1 and 2 hold 100 and 50.  FLH's collision term (b² s²/k') Σ n_u²
#: makes the candidates' variance ~6x the one of "the others spread evenly".
SKEWED = np.array([0, 100, 50, 30, 20, 1500, 100, 80, 60, 40, 20, 0, 0, 0, 0, 0])


def test_simulate_candidates_is_exact_for_a_skewed_population() -> None:
    """Both engines agree on the mean, variance and covariance of two candidates' estimates
    (two-sample z-tests at ALPHA, Bonferroni over the 5 statistics), the sampled one also
    with the exact variance given the counts (:meth:`FLH.variances`); the
    former engine (the others spread evenly over the rest of the domain) fails."""
    oracle, candidates = make(2.0, k_prime=4), np.array([1, 2])
    samples = engine_samples(oracle, SKEWED, candidates, REPS, "skewed")
    assert_same_moments(samples["reports"], samples["sampled"])
    variance = oracle.variances(SKEWED, np.asarray(candidates))
    z = squared_error_z(samples["sampled"], SKEWED[candidates], variance)
    assert np.abs(z).max() <= z_critical(ALPHA, m=2)
    spread = moment_z_scores(samples["reports"], samples["spread"])
    assert min(abs(spread["var 0"]), abs(spread["var 1"])) > 2 * z_critical(ALPHA, m=5), spread


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_declared_likelihood_is_epsilon_ldp_and_tight(epsilon: float) -> None:
    oracle = FLH(epsilon=epsilon, domain_size=8, k_prime=50)
    loss = max_privacy_loss(oracle)
    assert epsilon * (1 - 1e-8) <= loss <= epsilon * (1 + 1e-12)


def test_report_bits() -> None:
    assert FLH(epsilon=1.0, domain_size=8, k_prime=1000).report_bits() == 10 + 2


def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ValueError, match="k_prime must be >= 1"):
        FLH(epsilon=1.0, domain_size=8, k_prime=0)
    with pytest.raises(TypeError, match="k_prime must be an integer"):
        FLH(epsilon=1.0, domain_size=8, k_prime=2.0)
    with pytest.raises(ValueError, match="g must be >= 2"):
        FLH(epsilon=1.0, domain_size=8, g=1)
    oracle, rng = make(1.0), np.random.default_rng(0)
    with pytest.raises(ValueError, match="pool must be 20 uint64 seeds"):
        oracle.perturb(np.array([1]), rng, pool=np.zeros(3, dtype=np.uint64))
    reports = oracle.perturb(np.array([1, 2]), rng)
    with pytest.raises(TypeError, match="reports must be PoolReports"):
        oracle.estimate((reports.index, reports.values))
    with pytest.raises(ValueError, match=r"report index must lie in \[0, 20\)"):
        oracle.estimate(reports._replace(index=np.array([0, 20])))
    with pytest.raises(ValueError, match=r"report values must lie in \[0, 4\)"):
        oracle.estimate(reports._replace(values=np.array([0, 4])))


def test_variances_of_candidates_and_of_distinct_values() -> None:
    """The histogram form (what the conformance suite and the frontier read) gives each
    candidate its own entry, and when the other users hold distinct values (Σ_{u≠v} n_u² =
    n - n_v) the collision terms cancel into OLH's closed form, :meth:`FLH.variance`."""
    oracle = FLH(epsilon=1.0, domain_size=12, k_prime=5)
    counts = np.array([40, 0, 7, 7, 100, 1, 0, 0, 3, 25, 2, 5], dtype=np.int64)
    every = oracle.variances(counts)
    chosen = np.array([4, 1, 9])
    np.testing.assert_allclose(oracle.variances(counts, chosen), every[chosen], rtol=1e-12)
    distinct = np.ones(12, dtype=np.int64)
    distinct[3] = 30  # value 3 held by 30 users, each other value by one
    three = oracle.variances(distinct, np.array([3]))[0]
    np.testing.assert_allclose(three, oracle.variance(41, 30), rtol=1e-12)
    # for value 0 the others are not distinct (30 hold value 3): the collisions add
    assert oracle.variances(distinct, np.array([0]))[0] > oracle.variance(41, 1) * 1.01
