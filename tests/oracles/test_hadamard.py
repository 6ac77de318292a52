"""Hadamard response (Acharya, Sun, Zhang, AISTATS 2019) and the Hadamard mechanism
(Cormode, Maddock, Maple, VLDB 2021): estimator, variance, engines, privacy.

The workload, the draws and the statistics are those of ``oracle_testing`` (d = 16,
n = 4000, REPS = 2000 estimates per case); every statistical assertion is a test at level
ALPHA = 1e-4, Bonferroni-corrected over the values it checks.  HR is pure with q* = 1/2,
and one user's support indicators are functions of one index y, so ``excess_kurtosis``'s
pure-protocol formula (independent users) applies to each value's estimate.  The same
holds for HM (q* = 1/2, one coefficient and one sign per user).
"""

from __future__ import annotations

import math

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
    engine_samples,
    exact_variances,
    excess_kurtosis,
    mean_z_scores,
    moment_z_scores,
    seed_for,
    variance_acceptance,
    workload_estimates,
    z_critical,
)
from scipy import stats

from ldp.oracles import HM, HR
from ldp.oracles.hadamard import Coefficients, hadamard_order, parity
from ldp.privacy import max_privacy_loss

EPSILONS = (0.5, 4.0)
ENGINES = ("reports", "sampled")


# --- the transform and the code ----------------------------------------------------------------
def test_order_is_the_smallest_power_of_two_above_d() -> None:
    assert [hadamard_order(d) for d in (2, 3, 4, 5, 7, 8, 1000)] == [4, 4, 8, 8, 8, 16, 1024]
    oracle = HR(epsilon=1.0, domain_size=1000)
    assert oracle.order == 1024 and oracle.report_bits() == 10


def test_codewords_are_balanced_and_pairwise_half_overlapping() -> None:
    """|C_v| = K/2 and |C_u ∩ C_v| = K/4: the reason q* = 1/2 exactly."""
    k = 32
    y = np.arange(k)
    sets = np.array([parity((v + 1) & y) == 0 for v in range(k - 1)])
    assert (sets.sum(axis=1) == k // 2).all()
    overlap = sets.astype(int) @ sets.T.astype(int)
    assert (overlap[~np.eye(k - 1, dtype=bool)] == k // 4).all()


def test_support_counts_transform_equals_direct_count() -> None:
    oracle = HR(epsilon=1.0, domain_size=D)
    reports = oracle.perturb(np.repeat(np.arange(D), 40), np.random.default_rng(1))
    direct = np.array([np.count_nonzero(parity((v + 1) & reports) == 0) for v in range(D)])
    assert np.array_equal(oracle.support_counts(reports, np.arange(D)), direct)
    big = np.tile(reports, 40)  # the transform path
    assert np.array_equal(oracle.support_counts(big, np.arange(D)), 40 * direct)


# --- unbiased, exact variance, both engines ----------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", [HR, HM])
def test_unbiased_with_the_exact_variance(cls, epsilon: float, engine: str) -> None:
    """z-test of the mean and χ² test of S²/Var, per value (α/d each)."""
    oracle = cls(epsilon=epsilon, domain_size=D)
    estimates = workload_estimates(cls.name, epsilon, engine)
    variances = exact_variances(oracle, COUNTS)
    z = mean_z_scores(estimates, COUNTS, variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    ratio = estimates.var(axis=0, ddof=1) / variances
    lo, hi = variance_acceptance(REPS, excess_kurtosis(oracle, COUNTS), ALPHA, m=D)
    assert ((ratio >= lo) & (ratio <= hi)).all(), (ratio, lo, hi)


@pytest.mark.parametrize("cls", [HR, HM])
def test_variance_is_the_closed_form(cls) -> None:
    """Var = n/(4(p-1/2)^2) - n_v with p = e^ε/(e^ε+1) ([CMM] Sec. 4, q* = 1/2)."""
    oracle = cls(epsilon=2.0, domain_size=100)
    p = math.exp(2.0) / (math.exp(2.0) + 1)
    assert oracle.variance(5000, 300) == pytest.approx(5000 / (4 * (p - 0.5) ** 2) - 300, 1e-12)


#: (u+1) xor (v+1) = LARGE + 1: the users of LARGE tie the indicators of u and v.
TIED = (0, (1 ^ (LARGE + 1)) - 1)


def exact_correlation(oracle: HR, u: int, v: int) -> float:
    """Corr of ĉ(u), ĉ(v): Cov = n_w/(2p*-1) for w + 1 = (u+1) xor (v+1), else 0.

    A user of w reports y in C_w with probability p*; the parities of y with rows u+1 and
    v+1 then agree with probability p*, and are otherwise independent and uniform.
    """
    w = ((u + 1) ^ (v + 1)) - 1
    cov = COUNTS[w] / (2 * oracle.p_star - 1) if 0 <= w < D else 0.0
    return cov / math.sqrt(oracle.variance(N, int(COUNTS[u])) * oracle.variance(N, int(COUNTS[v])))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_estimates_are_correlated_as_the_hadamard_code_says(epsilon: float, engine: str) -> None:
    """Fisher z of the sample correlation of a tied pair and an untied pair (α/2 each)."""
    oracle = HR(epsilon=epsilon, domain_size=D)
    estimates = workload_estimates("HR", epsilon, engine)
    bound = z_critical(ALPHA, m=2)
    for u, v in (TIED, (1, 2)):
        rho = exact_correlation(oracle, u, v)
        r = np.corrcoef(estimates[:, u], estimates[:, v])[0, 1]
        z = (np.arctanh(r) - np.arctanh(rho)) * math.sqrt(REPS - 3)
        assert abs(z) <= bound, f"pair {(u, v)}: r = {r:.4f}, exact {rho:.4f}, z = {z:.2f}"
    assert exact_correlation(oracle, *TIED) > 0.14  # design: 6 standard errors from 0


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", ["HR", "HM"])
def test_engines_agree_in_distribution(name: str, epsilon: float) -> None:
    """KS two-sample test on three values' estimates, reports vs sampled (α/3 each)."""
    reports = workload_estimates(name, epsilon, "reports")
    sampled = workload_estimates(name, epsilon, "sampled")
    for value in (LARGE, int(np.flatnonzero(COUNTS == 20)[0]), D - 1):
        assert stats.ks_2samp(reports[:, value], sampled[:, value]).pvalue >= ALPHA / 3


def test_heavy_values_use_the_multinomial_path() -> None:
    """A value with more kept users than K/2 is drawn as a multinomial on C_v: same law."""
    oracle, counts = HR(epsilon=3.0, domain_size=3), np.array([3000, 0, 10])
    rng = seed_for("HR", "heavy")
    sampled = np.array([oracle.simulate(counts, rng) for _ in range(REPS)])
    z = mean_z_scores(sampled, counts, exact_variances(oracle, counts))
    assert np.abs(z).max() <= z_critical(ALPHA, m=3)


def test_hr_simulate_candidates_is_exact_for_a_skewed_population() -> None:
    """Candidates 0 and 1 are tied by the users of w = 2 ((0+1) xor (1+1) = 2+1), who hold
    75%: Cov[ĉ(0), ĉ(1)] = n_w/(2p*-1) (:meth:`HR._simulate_population`).  Both engines
    agree on the means, variances and covariance (two-sample z at ALPHA, Bonferroni over 5),
    the sampled covariance matches the formula (z at ALPHA), and the former engine (the
    others spread evenly, n_2 ≈ 13) fails the covariance."""
    oracle, candidates = HR(epsilon=1.0, domain_size=15), np.array([0, 1])
    counts = np.array([10, 20, 150, 5, 5, 4, 3, 3, 0, 0, 0, 0, 0, 0, 0])
    samples = engine_samples(oracle, counts, candidates, 2 * REPS, "skewed")
    assert_same_moments(samples["reports"], samples["sampled"])
    dev = samples["sampled"] - samples["sampled"].mean(axis=0)
    products = dev[:, 0] * dev[:, 1]
    expected = counts[2] / (2 * oracle.p_star - 1)
    z = (products.mean() - expected) / (products.std(ddof=1) / math.sqrt(products.shape[0]))
    assert abs(z) <= z_critical(ALPHA), (products.mean(), expected)
    spread = moment_z_scores(samples["reports"], samples["spread"])
    assert abs(spread["cov 0,1"]) > z_critical(ALPHA, m=5), spread


@pytest.mark.slow
def test_hm_simulate_candidates_is_exact_for_a_skewed_population() -> None:
    """HM's pairs are uncorrelated whatever the population, but triples are not: the users
    of w = u xor v xor t give E[(ĉ(u)-n_u)(ĉ(v)-n_v)(ĉ(t)-n_t)] = n_w/(2p*-1)²
    (:meth:`HM._simulate_population`).  Candidates 1, 2, 4 with w = 7 holding 50 of 60
    users: both engines agree on means, variances, a covariance and the third mixed moment
    (two-sample z at ALPHA, Bonferroni over 8), the sampled third moment matches the
    formula, and the former engine (n_3 ≈ 4 in its spread population) fails it.  At
    6 × REPS runs the former engine's third moment sits about 6 SE from the reports'
    (7.2 at these seeds, 8.0 at 10 × REPS): caught with probability about 0.95 against
    the critical 4.4, the formula's mean within 8.6% (one SE)."""
    oracle, candidates = HM(epsilon=4.0, domain_size=16), np.array([1, 2, 4])
    counts = np.array([2, 3, 2, 0, 1, 0, 0, 50, 0, 2, 0, 0, 0, 0, 0, 0])
    samples = engine_samples(oracle, counts, candidates, 6 * REPS, "skewed")
    assert_same_moments(samples["reports"], samples["sampled"], third=True)
    dev = samples["sampled"] - samples["sampled"].mean(axis=0)
    products = dev.prod(axis=1)
    expected = counts[7] / (2 * oracle.p_star - 1) ** 2
    z = (products.mean() - expected) / (products.std(ddof=1) / math.sqrt(products.shape[0]))
    assert abs(z) <= z_critical(ALPHA), (products.mean(), expected)
    spread = moment_z_scores(samples["reports"], samples["spread"], third=True)
    assert abs(spread["third 0,1,2"]) > z_critical(ALPHA, m=8), spread


@pytest.mark.parametrize("engine", ENGINES)
def test_hm_estimates_are_pairwise_uncorrelated(engine: str) -> None:
    """For HM every pair's covariance is 0 (H[u⊕x, j] and H[v⊕x, j] are independent signs
    for u != v, whatever the user's x): Fisher z of two pairs against 0 (α/2 each)."""
    estimates = workload_estimates("HM", 4.0, engine)
    for u, v in (TIED, (LARGE, 0)):
        r = np.corrcoef(estimates[:, u], estimates[:, v])[0, 1]
        assert abs(np.arctanh(r)) * math.sqrt(REPS - 3) <= z_critical(ALPHA, m=2), (u, v, r)


def test_hm_support_counts_are_the_transform_of_the_sums() -> None:
    oracle = HM(epsilon=1.0, domain_size=12)
    assert oracle.order == 16 and oracle.report_bits() == 5
    reports = oracle.perturb(np.repeat(np.arange(12), 30), np.random.default_rng(2))
    sign = 2 * reports.bits.astype(int) - 1
    direct = [np.count_nonzero((1 - 2 * parity(v & reports.index)) * sign == 1) for v in range(12)]
    assert np.array_equal(oracle.support_counts(reports, np.arange(12)), direct)


# --- privacy -------------------------------------------------------------------------------------
@pytest.mark.parametrize("domain_size", [2, 3, 8, 17])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 6.0, 20.0])
@pytest.mark.parametrize("cls", [HR, HM])
def test_declared_likelihood_is_epsilon_ldp_and_tight(
    cls, epsilon: float, domain_size: int
) -> None:
    oracle = cls(epsilon=epsilon, domain_size=domain_size)
    loss = max_privacy_loss(oracle)
    assert loss <= epsilon * (1 + 1e-12)
    assert loss >= epsilon * (1 - 1e-8)  # the grid rounds p down by <= 2^-53/(1-p)
    assert loss == pytest.approx(math.log(oracle.p_star / (1 - oracle.p_star)), rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 6.0])
def test_reports_follow_the_declared_probabilities(epsilon: float) -> None:
    """χ² goodness of fit of perturb's reports of each value to report_probabilities."""
    oracle = HR(epsilon=epsilon, domain_size=5)
    rng, n = seed_for("HR", "gof", epsilon), 40_000
    for value in range(5):
        reports = oracle.perturb(np.full(n, value), rng)
        expected = n * oracle.report_probabilities(value)
        observed = np.bincount(reports, minlength=oracle.order)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 5


@pytest.mark.parametrize("epsilon", [0.5, 6.0])
def test_hm_reports_follow_the_declared_probabilities(epsilon: float) -> None:
    oracle = HM(epsilon=epsilon, domain_size=5)
    rng, n = seed_for("HM", "gof", epsilon), 40_000
    for value in range(5):
        reports = oracle.perturb(np.full(n, value), rng)
        observed = np.bincount(2 * reports.index + reports.bits, minlength=2 * oracle.order)
        expected = n * oracle.report_probabilities(value)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 5


def test_largest_safe_epsilon_is_refused_beyond() -> None:
    HR(epsilon=36.7, domain_size=4)
    with pytest.raises(ValueError, match="epsilon = 36.8 is too large for HR.*largest safe"):
        HR(epsilon=36.8, domain_size=4)


# --- bad input ----------------------------------------------------------------------------------
def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ValueError, match="domain_size must be >= 2"):
        HR(epsilon=1.0, domain_size=1)
    with pytest.raises(ValueError, match="domain_size must be < 134217728 for HR"):
        HR(epsilon=1.0, domain_size=2**27)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        HR(epsilon=-1.0, domain_size=4)
    oracle = HR(epsilon=1.0, domain_size=5)
    with pytest.raises(ValueError, match=r"reports must lie in \[0, 8\), found 8"):
        oracle.estimate(np.array([0, 8]))
    with pytest.raises(TypeError, match="reports must be an array of integers"):
        oracle.estimate(np.array([0.5]))
    with pytest.raises(ValueError, match=r"values must lie in \[0, 5\)"):
        oracle.perturb(np.array([5]), np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.perturb(np.array([1]), 0)


def test_hm_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ValueError, match="epsilon = 36.8 is too large for HM"):
        HM(epsilon=36.8, domain_size=4)
    oracle = HM(epsilon=1.0, domain_size=5)
    with pytest.raises(TypeError, match="reports must be Coefficients"):
        oracle.estimate(np.array([0, 1]))
    with pytest.raises(ValueError, match=r"report index must lie in \[0, 8\)"):
        oracle.estimate(Coefficients(np.array([8]), np.array([1], dtype=np.uint8)))
    with pytest.raises(ValueError, match=r"report bits must lie in \[0, 2\)"):
        oracle.estimate(Coefficients(np.array([1]), np.array([2], dtype=np.uint8)))
