"""Recursive Hadamard response (Chen, Kairouz, Özgür, NeurIPS 2020) with b-bit messages.

Code, estimator (exact integer sums, no truncation), exact variance (with the m_h term),
both engines, independent coins across trials, privacy (declared likelihood and audit),
and the anchor at n = 1000, d = 22000, ε = 4.  Statistics use ``oracle_testing``'s
workload (d = 16, n = 4000, REPS = 2000) and its false-failure policy: each assertion is
a test at ALPHA = 1e-4, Bonferroni-corrected over the values it checks.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    LARGE,
    REPS,
    D,
    N,
    mean_z_scores,
    seed_for,
    variance_acceptance,
    workload_estimates,
    z_critical,
)
from scipy import stats
from scipy.linalg import hadamard

from ldp import audit
from ldp.oracles import RHR
from ldp.oracles.recursive_hadamard import default_bits
from ldp.privacy import max_privacy_loss
from ldp.validation import ParameterError

#: d = 16 (K = 16): ε = 0.5 -> b = 1 (B = 16); ε = 2 -> b = 3 (B = 4); ε = 4 -> b = 4 (B = 2).
EPSILONS = (0.5, 2.0, 4.0)
ENGINES = ("reports", "sampled")


# --- the code ------------------------------------------------------------------------------
def test_default_bits_and_sizes_at_the_anchor() -> None:
    """b = min(log2 K, ⌈ε log2 e⌉) = 6 at ε = 4, d = 22000 (K = 2^15), B = 2^15 / 2^5."""
    oracle = RHR(epsilon=4.0, domain_size=22_000)
    assert (oracle.bits, oracle.order, oracle.groups, oracle.symbols) == (6, 32_768, 1024, 64)
    assert oracle.report_bits() == 6 + 10
    assert [default_bits(e, 16) for e in (0.1, 0.5, 0.7, 2.0, 4.0, 9.0)] == [1, 1, 2, 3, 4, 4]
    assert RHR(epsilon=4.0, domain_size=22_000, bits=2).groups == 16_384


def test_every_value_has_its_own_pair_and_the_code_is_the_kronecker_product() -> None:
    """x -> (h, l) is a bijection of [K]; H_B[r, l] is read from the Sylvester matrix."""
    oracle = RHR(epsilon=2.0, domain_size=16)  # b = 3: 4 local symbols, B = 4
    x = np.arange(16)
    pairs = set(zip(oracle.local_part(x).tolist(), oracle.row_part(x).tolist(), strict=True))
    assert len(pairs) == 16
    h_b = hadamard(oracle.groups)
    for value in x:
        for r in range(oracle.groups):
            s = int(oracle.symbol(np.array([value]), np.array([r]))[0])
            assert s // 2 == oracle.local_part(value)
            assert (s % 2 == 1) == (h_b[r, oracle.row_part(value)] == 1)


def test_estimate_is_the_exact_sum_of_the_definition() -> None:
    """ĉ(x) = Σ_u H_B[r_u, l] (1[s' = 2h+1] - 1[s' = 2h]) / (p* - q*), summed as exact
    integers (a reference that adds each report's weight 1/(p*-q*) into an integer
    truncates it: one report would give ±2 instead of ±1/(p*-q*) = ±2.19 here)."""
    oracle = RHR(epsilon=4.0, domain_size=22_000)
    rng = seed_for("RHR", "definition")
    values = rng.integers(0, 22_000, 300)
    reports = oracle.perturb(values, rng)
    candidates = np.unique(np.concatenate([values[:20], rng.integers(0, 22_000, 20)]))
    rows, sent = reports % oracle.groups, reports // oracle.groups
    h_b = hadamard(oracle.groups)
    for x, got in zip(candidates, oracle.estimate(reports, candidates), strict=True):
        h, row = int(oracle.local_part(x)), int(oracle.row_part(x))
        total = sum(
            int(h_b[r, row]) * (int(s == 2 * h + 1) - int(s == 2 * h))
            for r, s in zip(rows.tolist(), sent.tolist(), strict=True)
        )
        assert got == pytest.approx(total / oracle.gap, rel=1e-13, abs=1e-12)
        assert Fraction(got * oracle.gap).limit_denominator(4) == total
    one = oracle.perturb(np.array([7]), rng)
    x = np.array([7])
    assert abs(oracle.estimate(one, x)[0]) in (0.0, pytest.approx(1 / oracle.gap, rel=1e-15))
    assert 1 / oracle.gap == pytest.approx((math.exp(4) + 63) / (math.exp(4) - 1), rel=1e-9)


# --- unbiased, exact variance, both engines -------------------------------------------------
def user_cumulants(oracle: RHR, counts: np.ndarray, value: int) -> tuple[float, float]:
    """Σ over users of the 2nd and 4th cumulants of W_u (ĉ = Σ W_u / (p* - q*)), exactly.

    W in {-1, 0, 1}: a user of x has W = 1 w.p. p*, -1 w.p. q*; a user sharing h
    (another l) has ±1 w.p. (p* + q*)/2 each; any other user ±1 w.p. q* each.
    """
    p, q = oracle.p_star, oracle.q_star
    n, n_x = float(counts.sum()), float(counts[value])
    local = oracle.local_part(np.arange(counts.shape[0])) == oracle.local_part(value)
    m = float(counts[local].sum())

    def cumulants(plus: float, minus: float) -> tuple[float, float]:
        mean = plus - minus
        m2 = plus + minus - mean**2
        m4 = plus * (1 - mean) ** 4 + minus * (1 + mean) ** 4 + (1 - plus - minus) * mean**4
        return m2, m4 - 3 * m2**2

    kinds = (cumulants(p, q), cumulants((p + q) / 2, (p + q) / 2), cumulants(q, q))
    weights = (n_x, m - n_x, n - m)
    k2 = sum(w * c[0] for w, c in zip(weights, kinds, strict=True))
    k4 = sum(w * c[1] for w, c in zip(weights, kinds, strict=True))
    return k2, k4


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_unbiased_with_the_exact_variance(epsilon: float, engine: str) -> None:
    """z-test of the mean and χ² test of S²/Var against ``variances`` (α/d each)."""
    oracle = RHR(epsilon=epsilon, domain_size=D)
    estimates = workload_estimates("RHR", epsilon, engine)
    variances = oracle.variances(COUNTS)
    z = mean_z_scores(estimates, COUNTS, variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    moments = np.array([user_cumulants(oracle, COUNTS, v) for v in range(D)])
    assert np.allclose(moments[:, 0] / oracle.gap**2, variances, rtol=1e-10)
    ratio = estimates.var(axis=0, ddof=1) / variances
    lo, hi = variance_acceptance(REPS, moments[:, 1] / moments[:, 0] ** 2, ALPHA, m=D)
    assert ((ratio >= lo) & (ratio <= hi)).all(), (ratio, lo, hi)


@pytest.mark.parametrize("engine", ENGINES)
def test_trials_draw_fresh_coins(engine: str) -> None:
    """Successive trials from one generator are independent: no two are equal, and the
    lag-1 correlation of every value's estimates is 0 (Fisher z, α/d each).  (A client that
    reseeds its generator each trial repeats the same coins: correlation 1.)"""
    estimates = workload_estimates("RHR", 2.0, engine)
    assert np.unique(estimates, axis=0).shape[0] == REPS
    bound = z_critical(ALPHA, m=D)
    for v in range(D):
        r = np.corrcoef(estimates[:-1, v], estimates[1:, v])[0, 1]
        assert abs(np.arctanh(r)) * math.sqrt(REPS - 4) <= bound, (v, r)


def test_variance_takes_the_symbol_count() -> None:
    oracle = RHR(epsilon=2.0, domain_size=D)
    local = oracle.local_part(np.arange(D))
    m = np.array([COUNTS[local == h].sum() for h in local])
    assert np.allclose(
        oracle.variances(COUNTS),
        [oracle.variance(N, int(COUNTS[v]), int(m[v])) for v in range(D)],
        rtol=1e-13,
    )
    q, gap = oracle.q_star, oracle.gap
    assert oracle.variance(1000, 0) == pytest.approx(2 * q * 1000 / gap**2, rel=1e-13)
    with pytest.raises(ValueError, match="symbol_count must lie in"):
        oracle.variance(100, 10, 5)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_engines_agree_in_distribution(epsilon: float) -> None:
    """KS two-sample test on three values' estimates, reports vs sampled (α/3 each)."""
    reports = workload_estimates("RHR", epsilon, "reports")
    sampled = workload_estimates("RHR", epsilon, "sampled")
    for value in (LARGE, int(np.flatnonzero(COUNTS == 20)[0]), D - 1):
        assert stats.ks_2samp(reports[:, value], sampled[:, value]).pvalue >= ALPHA / 3


def test_heavy_values_use_the_multinomial_path() -> None:
    """A value with more kept users than B is drawn as a multinomial over the rows."""
    oracle, counts = RHR(epsilon=4.0, domain_size=40, bits=4), np.zeros(40, dtype=np.int64)
    counts[[0, 1, 39]] = 3000, 5, 10
    assert oracle.groups == 8  # K = 64, b = 4: 3000 users keep far more than B
    rng = seed_for("RHR", "heavy")
    draws = np.array([oracle.simulate(counts, rng, candidates=[0, 1, 39]) for _ in range(REPS)])
    variances = oracle.variances(counts, [0, 1, 39])
    z = mean_z_scores(draws, counts[[0, 1, 39]], variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=3)


def test_simulate_candidates_is_exact_for_a_skewed_population() -> None:
    """The candidates' law given the whole population (a sparse histogram): the other
    users' values matter, as they share the candidates' symbols."""
    oracle, rng = RHR(epsilon=2.0, domain_size=64), seed_for("RHR", "candidates")
    values = np.array([0, 2, 5, 17, 40, 63])
    counts = np.array([500, 40, 900, 300, 1200, 60])
    candidates = np.array([0, 1, 2])
    draws = np.array(
        [oracle.simulate_candidates(values, counts, candidates, rng) for _ in range(REPS)]
    )
    full = np.zeros(64, dtype=np.int64)
    full[values] = counts
    variances = oracle.variances(full, candidates)
    assert np.abs(mean_z_scores(draws, full[candidates], variances)).max() <= z_critical(ALPHA, m=3)
    lo, hi = variance_acceptance(REPS, 0.0, ALPHA, m=3)
    ratio = draws.var(axis=0, ddof=1) / variances
    assert ((ratio >= lo) & (ratio <= hi)).all(), ratio


# --- the anchor: n = 1000, d = 22000, ε = 4 --------------------------------------------------
def test_anchor_variance_at_22000_values() -> None:
    """Mean over the values of Var[ĉ(x)] for n = 1000 users spread uniformly: 150.39
    (anchor ≈ 152.7).  The sampled engine's mean squared error over 60 uniformly drawn
    populations agrees (z-test)."""
    d, n = 22_000, 1000
    oracle = RHR(epsilon=4.0, domain_size=d)
    sizes = np.bincount(oracle.local_part(np.arange(d)))  # 16 x 688 and 16 x 687 values
    exact = sum(s * oracle.variance(n, n / d, n * s / d) for s in sizes) / d
    assert exact == pytest.approx(150.39, abs=0.01)
    rng = seed_for("RHR", "anchor")
    mse = []
    for _ in range(60):
        counts = np.bincount(rng.integers(0, d, n), minlength=d)
        mse.append(np.mean((oracle.simulate(counts, rng) - counts) ** 2))
    z = (np.mean(mse) - exact) / (np.std(mse, ddof=1) / math.sqrt(len(mse)))
    assert abs(z) <= z_critical(ALPHA), (np.mean(mse), exact)


# --- privacy ---------------------------------------------------------------------------------
@pytest.mark.parametrize("domain_size", [2, 3, 9, 17])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 4.0, 6.0, 20.0])
def test_declared_likelihood_is_epsilon_ldp_and_tight(epsilon: float, domain_size: int) -> None:
    oracle = RHR(epsilon=epsilon, domain_size=domain_size)
    for value in (0, domain_size - 1):
        assert oracle.report_probabilities(value).sum() == pytest.approx(1.0, abs=1e-12)
    loss = max_privacy_loss(oracle)
    assert loss <= epsilon * (1 + 1e-12)
    assert loss >= epsilon * (1 - 1e-8)
    assert loss == pytest.approx(math.log(oracle.p_star / oracle.q_star), rel=1e-12)


@pytest.mark.parametrize(("epsilon", "bits"), [(0.5, None), (2.0, None), (4.0, 2)])
def test_reports_follow_the_declared_probabilities(epsilon: float, bits: int | None) -> None:
    """χ² goodness of fit of perturb's reports of each value to report_probabilities."""
    oracle = RHR(epsilon=epsilon, domain_size=9, bits=bits)
    rng, n = seed_for("RHR", "gof", epsilon), 40_000
    for value in range(9):
        reports = oracle.perturb(np.full(n, value), rng)
        expected = n * oracle.report_probabilities(value)
        observed = np.bincount(reports, minlength=2 * oracle.order)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 9


@pytest.mark.parametrize(("epsilon", "bits"), [(0.5, None), (2.0, None), (6.0, None), (2.0, 1)])
def test_passes_its_audit(epsilon: float, bits: int | None) -> None:
    """No false alarm (bound <= ε at level 1e-4) and the optimal event's guaranteed bound."""
    oracle = RHR(epsilon=epsilon, domain_size=40, bits=bits)
    result = audit.lower_bound(
        oracle, 0, 1, rng=seed_for("RHR", "audit", epsilon, bits), trials=50_000, alpha=ALPHA
    )
    assert result.epsilon <= epsilon, f"false alarm: {result}"
    p, p_other = oracle.audit_event_probabilities()
    assert math.log(p / p_other) == pytest.approx(max_privacy_loss(oracle, values=[0, 1]))
    floor = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= floor >= 0.5 * epsilon, (result, floor)


def test_a_client_that_keeps_too_often_is_caught() -> None:
    """Declares ε = 1 but its randomised response keeps s with ε = 3's p: bound > 1."""

    class Leaky(RHR):
        def perturb(self, values, rng):
            return RHR(epsilon=3.0, domain_size=self.domain_size, bits=self.bits).perturb(
                values, rng
            )

    oracle = Leaky(epsilon=1.0, domain_size=40, bits=2)
    result = audit.lower_bound(oracle, 0, 1, rng=seed_for("RHR", "leaky"), trials=50_000)
    assert result.epsilon > 1.0, str(result)


# --- bad input -------------------------------------------------------------------------------
def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ValueError, match="domain_size must be >= 2"):
        RHR(epsilon=1.0, domain_size=1)
    with pytest.raises(ValueError, match="bits must be"):
        RHR(epsilon=1.0, domain_size=16, bits=5)  # log2 K = 4
    with pytest.raises(ValueError, match="bits must be"):
        RHR(epsilon=1.0, domain_size=16, bits=0)
    with pytest.raises(TypeError, match="bits must be an integer"):
        RHR(epsilon=1.0, domain_size=16, bits=2.5)
    RHR(epsilon=1.0, domain_size=2**26)
    with pytest.raises(ParameterError, match="for RHR .*over the 4 GiB memory budget"):
        RHR(epsilon=1.0, domain_size=2**26 + 1)
    with pytest.raises(ValueError, match="too large for RHR"):
        RHR(epsilon=60.0, domain_size=4)
    oracle = RHR(epsilon=2.0, domain_size=9)  # K = 16: reports in [0, 32)
    with pytest.raises(ValueError, match=r"reports must lie in \[0, 32\), found 32"):
        oracle.estimate(np.array([0, 32]))
    with pytest.raises(TypeError, match="reports must be an array of integers"):
        oracle.estimate(np.array([0.5]))
    with pytest.raises(ValueError, match=r"values must lie in \[0, 9\)"):
        oracle.perturb(np.array([9]), np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.perturb(np.array([1]), 0)
