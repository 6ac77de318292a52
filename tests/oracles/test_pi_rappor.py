"""PI-RAPPOR (Feldman & Talwar, ICML 2021): field, decoder, estimator, variance, engines, privacy.

Statistics use ``oracle_testing``'s workload (d = 16, n = 4000, REPS = 2000) and its
false-failure policy: each assertion is a test at ALPHA = 1e-4, Bonferroni-corrected over
the values it checks.  Each value's count of supporting reports is a sum of independent
Bernoulli variables (p* for its users, 1/q for the others), so the pure-protocol kurtosis
of ``excess_kurtosis`` sets the spread of the sample variances.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    REPS,
    D,
    N,
    draw,
    excess_kurtosis,
    mean_z_scores,
    seed_for,
    variance_acceptance,
    z_critical,
)
from scipy import stats

from ldp import audit, budget
from ldp.algebra import is_prime
from ldp.oracles import OUE, PIRAPPOR
from ldp.oracles.pi_rappor import default_prime, digits, hyperplane_counts
from ldp.privacy import max_privacy_loss
from ldp.validation import ParameterError

#: q = 3 (t = 3), q = 7 (t = 2) and q = 53 (t = 1) on the workload's 16 values.
EPSILONS = (0.5, 2.0, 4.0)
ENGINES = ("reports", "sampled")


# --- the field -------------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 2.0, 4.0, 5.0, 8.0])
def test_default_prime_is_the_better_neighbour_of_e_eps_plus_1(epsilon: float) -> None:
    e = math.exp(epsilon)
    q = default_prime(epsilon)
    below = max(m for m in range(2, math.floor(e + 1) + 1) if is_prime(m))
    above = min(m for m in range(math.ceil(e + 1), 2 * math.ceil(e + 1) + 2) if is_prime(m))
    assert q in (below, above)

    def var(m: int) -> float:
        return PIRAPPOR(epsilon=epsilon, domain_size=8, q=m).variance(1000)

    assert var(q) <= min(var(below), var(above))


def test_the_reference_setting() -> None:
    """ε = 5: q = 149 (e^5 + 1 = 149.4) and d = 3,307,948 = 149^3 - 1 fills F_149^3."""
    oracle = PIRAPPOR(epsilon=5.0, domain_size=3_307_948)
    assert (oracle.q, oracle.dimension, oracle.seeds) == (149, 3, 149**4)
    assert oracle.report_bits() == 29


def test_the_embedding_is_the_digits_of_x_plus_1() -> None:
    oracle = PIRAPPOR(epsilon=1.0, domain_size=8)
    assert (oracle.q, oracle.dimension) == (3, 2)
    points = oracle.point_of(np.arange(8))
    assert points.tolist() == [[1, 0], [2, 0], [0, 1], [1, 1], [2, 1], [0, 2], [1, 2], [2, 2]]


# --- the decoder -----------------------------------------------------------------------------
@pytest.mark.parametrize("use_numba", [True, False])
@pytest.mark.parametrize(("q", "t"), [(2, 1), (2, 5), (3, 3), (5, 2), (7, 4), (11, 1)])
def test_hyperplane_counts_equal_the_brute_force(q: int, t: int, use_numba: bool) -> None:
    """Every point's count of hyperplanes through it, including a = 0 and truncated tables."""
    rng = seed_for("PIRAPPOR", "hyperplanes", q, t)
    n = 300
    a = rng.integers(0, q, size=(n, t))
    a[:20] = 0  # whole space or nothing
    a[20:60, -1] = 0  # cylinders over the top digit
    b = rng.integers(0, q, size=n)
    points = digits(np.arange(q**t), q, t)
    brute = ((a @ points.T + b[:, None]) % q == 0).sum(axis=0)
    for size in sorted({1, q ** (t - 1) + 1, q**t - 2, q**t} - {0, -1}):
        got = hyperplane_counts(a, b, q, size, use_numba=use_numba)
        assert np.array_equal(got, brute[:size]), size


@pytest.mark.parametrize(("epsilon", "d"), [(1.0, 8), (2.0, 100), (5.0, 1000), (0.3, 50)])
def test_both_decoders_count_the_affine_condition(epsilon: float, d: int) -> None:
    """The full-domain enumeration and the per-candidate evaluation give the count of
    reports with (b + <a, v(x)>) mod q = 0, for every x."""
    oracle = PIRAPPOR(epsilon=epsilon, domain_size=d)
    rng = seed_for("PIRAPPOR", "decoders", epsilon, d)
    reports = oracle.perturb(rng.integers(0, d, 3000), rng)
    brute = np.array([oracle.supports(reports, x).sum() for x in range(d)])
    assert np.array_equal(oracle.support_counts(reports, np.arange(d)), brute)
    few = np.array([d - 1, 0, 3])
    assert np.array_equal(oracle.support_counts(reports, few), brute[few])


# --- unbiased, exact variance, both engines ----------------------------------------------------
@cache
def estimates(epsilon: float, engine: str) -> np.ndarray:
    oracle = PIRAPPOR(epsilon=epsilon, domain_size=D)
    return draw(oracle, COUNTS, engine, REPS, seed_for("PIRAPPOR", epsilon, engine))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_unbiased_with_the_exact_variance(epsilon: float, engine: str) -> None:
    """z-test of every value's mean and χ² test of S²/Var (α/d each).  The sampled engine's
    marginals are exact, so the same tests hold for it."""
    oracle = PIRAPPOR(epsilon=epsilon, domain_size=D)
    sample = estimates(epsilon, engine)
    variances = oracle.variances(COUNTS)
    z = mean_z_scores(sample, COUNTS, variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    ratio = sample.var(axis=0, ddof=1) / variances
    lo, hi = variance_acceptance(REPS, excess_kurtosis(oracle, COUNTS), ALPHA, m=D)
    assert ((ratio >= lo) & (ratio <= hi)).all(), (ratio, lo, hi)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_engines_agree_value_by_value(epsilon: float) -> None:
    """KS two-sample test of each value's estimates, reports vs sampled (α/d each)."""
    reports, sampled = estimates(epsilon, "reports"), estimates(epsilon, "sampled")
    for value in range(D):
        p = stats.ks_2samp(reports[:, value], sampled[:, value]).pvalue
        assert p >= ALPHA / D, value


def test_variance_is_oue_when_q_is_e_eps_plus_1() -> None:
    """ε = ln 4: q = 5 = e^ε + 1, p = 1/2: OUE's n 4e^ε/(e^ε - 1)² + n_x (as [FT21] states)."""
    oracle = PIRAPPOR(epsilon=math.log(4.0), domain_size=20)
    assert oracle.q == 5 and oracle.p_star == pytest.approx(0.5, rel=1e-14)
    oue = OUE(epsilon=math.log(4.0), domain_size=20)
    for n_x in (0, 300):
        assert oracle.variance(5000, n_x) == pytest.approx(oue.variance(5000, n_x), rel=1e-12)
        ideal = 5000 * 4 * 4 / 9 + n_x
        assert oracle.variance(5000, n_x) == pytest.approx(ideal, rel=1e-12)


def test_collinear_users_correlate_two_estimates_as_stated() -> None:
    """q = 3, t = 2: v(2) = (0, 1), v(3) = (1, 1), v(4) = (2, 1) lie on one line, so each
    user of 4 adds (p*/q - 1/q²)/(p* - 1/q)² to Cov[ĉ(2), ĉ(3)] in the reports engine
    (both on the hyperplane only if it holds the line); v(0) = (1, 0) is off the line
    through v(2) and v(4): no covariance.  The sampled engine (independent candidates)
    has none: this is its approximation, measured.  z-tests of the sample covariances
    (delta method), α/4 each."""
    oracle = PIRAPPOR(epsilon=1.0, domain_size=8)
    q, p = oracle.q, oracle.p_star
    counts = np.zeros(8, dtype=np.int64)
    counts[4] = 3000
    stated = counts[4] * (p / q - 1 / q**2) / (p - 1 / q) ** 2
    reps = 3000
    limit = z_critical(ALPHA, m=4)
    for engine, expected in (("reports", stated), ("sampled", 0.0)):
        sample = draw(oracle, counts, engine, reps, seed_for("PIRAPPOR", "collinear", engine))
        for (x, y), value in (((2, 3), expected), ((0, 2), 0.0)):
            centred = sample[:, [x, y]] - sample[:, [x, y]].mean(axis=0)
            products = centred[:, 0] * centred[:, 1]
            cov = products.sum() / (reps - 1)
            se = math.sqrt((np.mean(products**2) - cov**2) / reps)
            assert abs(cov - value) <= limit * se, (engine, x, y, cov, value, se)
    assert stated > 0.1 * oracle.variance(3000, 0)  # the design can see it


# --- privacy ---------------------------------------------------------------------------------
@pytest.mark.parametrize("domain_size", [2, 3, 9, 26])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_declared_likelihood_is_epsilon_ldp_and_tight(epsilon: float, domain_size: int) -> None:
    oracle = PIRAPPOR(epsilon=epsilon, domain_size=domain_size)
    for value in (0, domain_size - 1):
        assert oracle.report_probabilities(value).sum() == pytest.approx(1.0, abs=1e-12)
    loss = max_privacy_loss(oracle)
    assert epsilon * (1 - 1e-8) <= loss <= epsilon * (1 + 1e-12)
    p = oracle.p_star
    assert loss == pytest.approx(math.log(p * (oracle.q - 1) / (1 - p)), rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_reports_follow_the_declared_probabilities(epsilon: float) -> None:
    """χ² goodness of fit of perturb's seeds of each value to report_probabilities."""
    oracle = PIRAPPOR(epsilon=epsilon, domain_size=6)
    rng, n = seed_for("PIRAPPOR", "gof", epsilon), 60_000
    for value in range(6):
        reports = oracle.perturb(np.full(n, value), rng)
        expected = n * oracle.report_probabilities(value)
        observed = np.bincount(reports, minlength=oracle.seeds)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 6


@pytest.mark.parametrize(("epsilon", "domain_size"), [(0.5, 30), (2.0, 30), (4.0, 600)])
def test_passes_its_audit(epsilon: float, domain_size: int) -> None:
    """No false alarm (bound <= ε at level 1e-4), and at least the bound the optimal
    event guarantees (``audit.expected_lower_bound`` at its ALPHA/2 quantile)."""
    oracle = PIRAPPOR(epsilon=epsilon, domain_size=domain_size)
    result = audit.lower_bound(
        oracle, 0, 1, rng=seed_for("PIRAPPOR", "audit", epsilon), trials=50_000, alpha=ALPHA
    )
    assert result.epsilon <= epsilon, f"false alarm: {result}"
    p, p_other = oracle.audit_event_probabilities()
    assert math.log(p / p_other) == pytest.approx(max_privacy_loss(oracle, values=[0, 1]), rel=1e-9)
    floor = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= floor >= 0.5 * epsilon, (result, floor)


def test_a_client_that_keeps_its_point_too_often_is_caught() -> None:
    """Declares ε = 1 but puts its own point on the hyperplane with ε = 3's p."""

    class Leaky(PIRAPPOR):
        def perturb(self, values, rng):
            honest = PIRAPPOR(epsilon=3.0, domain_size=self.domain_size, q=self.q)
            return honest.perturb(values, rng)

    oracle = Leaky(epsilon=1.0, domain_size=8)
    result = audit.lower_bound(oracle, 0, 1, rng=seed_for("PIRAPPOR", "leaky"), trials=50_000)
    assert result.epsilon > 1.0, str(result)


# --- bad input -------------------------------------------------------------------------------
def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ParameterError, match="q must be a prime") as error:
        PIRAPPOR(epsilon=1.0, domain_size=8, q=4)
    assert error.value.name == "q"
    with pytest.raises(ParameterError, match="q must be >= 2"):
        PIRAPPOR(epsilon=1.0, domain_size=8, q=1)
    with pytest.raises(TypeError):
        PIRAPPOR(epsilon=1.0, domain_size=8, q=3.0)
    with pytest.raises(ParameterError, match="q\\^\\(t\\+1\\) <= 2\\^62") as error:
        PIRAPPOR(epsilon=1.0, domain_size=2**40, q=2**31 - 1)
    assert error.value.name == "domain_size"
    with pytest.raises(ValueError, match="too large for PIRAPPOR"):
        PIRAPPOR(epsilon=80.0, domain_size=4)
    oracle = PIRAPPOR(epsilon=1.0, domain_size=8)
    with pytest.raises(ValueError, match=r"reports must lie in \[0, 27\), found 27"):
        oracle.estimate(np.array([0, 27]))
    with pytest.raises(TypeError, match="reports must be an array of integers"):
        oracle.estimate(np.array([0.5]))
    with pytest.raises(ValueError, match=r"values must lie in \[0, 8\)"):
        oracle.perturb(np.array([8]), np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.perturb(np.array([1]), 0)
    assert N == int(COUNTS.sum())


def test_a_decode_over_the_time_budget_is_refused_before_it_runs() -> None:
    """n q^(t-1) points (or n |candidates| t tests) over the budget: ParameterError."""
    oracle = PIRAPPOR(epsilon=5.0, domain_size=3_307_948)
    reports = oracle.perturb(np.zeros(1000, dtype=np.int64), np.random.default_rng(0))
    with budget.limits(operations=10**7), pytest.raises(ParameterError) as error:
        oracle.estimate(reports)  # 1000 x 22,201 points
    assert error.value.name == "candidates"
    with budget.limits(operations=10**7):
        assert oracle.estimate(reports, np.array([0, 1])).shape == (2,)
    with pytest.raises(ParameterError) as error:  # 22,027^2 seeds: ~16 GB to enumerate
        PIRAPPOR(epsilon=10.0, domain_size=8).report_probabilities(0)
    assert error.value.name == "q"
