"""Blocked Hadamard response (Acharya, Sun, Zhang, AISTATS 2019, general scheme).

Block rule, coverage of every value, estimator, exact variance (with the block term),
both engines, privacy (declared likelihood and audit), and the anchor at n = 1000,
d = 22000, ε = 4.  Statistics use ``oracle_testing``'s workload (d = 16, n = 4000,
REPS = 2000) and its false-failure policy: each assertion is a test at ALPHA = 1e-4,
Bonferroni-corrected over the values it checks.
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
    mean_z_scores,
    seed_for,
    variance_acceptance,
    workload_estimates,
    z_critical,
)
from scipy import stats
from scipy.linalg import hadamard

from ldp import audit
from ldp.oracles import BHR, HR
from ldp.oracles.blocked_hadamard import block_rule, block_transform
from ldp.privacy import max_privacy_loss
from ldp.validation import ParameterError

#: ε = 0.5: one block (HR); ε = 2: B = 4 blocks of b = 8 (7 values each, the workload's
#: heavy value shares its block); ε = 4: B = 32 = 2d blocks of b = 2.
EPSILONS = (0.5, 2.0, 4.0)
ENGINES = ("reports", "sampled")


# --- the block rule ------------------------------------------------------------------------
def test_block_rule_at_the_anchor() -> None:
    assert block_rule(4.0, 22_000) == (32, 1024)  # 32 <= e^4 = 54.6 < 64
    assert BHR(epsilon=4.0, domain_size=22_000).order == 32 * 1024


@pytest.mark.parametrize("epsilon", [0.1, math.log(2), 1.0, 2.0, 4.0, 7.0, 12.0, 40.0])
@pytest.mark.parametrize("d", [2, 3, 5, 16, 127, 1000, 4095, 4096, 22_000, 65_537])
def test_block_rule_covers_every_value_with_the_smallest_block(epsilon: float, d: int) -> None:
    """B = 2^⌊log2 min(e^ε, 2d)⌋; b the smallest power of two with B (b - 1) >= d."""
    blocks, b = block_rule(epsilon, d)
    assert blocks & (blocks - 1) == 0 and b & (b - 1) == 0 and b >= 2
    assert blocks <= min(math.exp(epsilon), 2 * d) * (1 + 1e-12)
    assert 2 * blocks > min(math.exp(epsilon), 2 * d) * (1 - 1e-12)
    assert blocks * (b - 1) >= d  # every value has a code
    assert b == 2 or blocks * (b // 2 - 1) < d  # and b is the smallest such


def test_every_value_of_4095_has_its_own_code_at_epsilon_4() -> None:
    """A rule with the integer quotient ⌊d/B⌋ = 127 picks b = 128 and codes 32 * 127 = 4064
    values; ours picks b = 256.  Every value's code set is distinct and inside [K]."""
    d = 4095
    blocks, b = block_rule(4.0, d)
    truncated_b = 1 << (d // blocks).bit_length()  # the integer-quotient rule
    assert blocks * (truncated_b - 1) == 4064 < d
    assert (blocks, b) == (32, 256)
    oracle = BHR(epsilon=4.0, domain_size=d)
    codes = {
        (int(j), int(i))
        for j, i in zip(oracle.block_of(np.arange(d)), oracle.row_of(np.arange(d)), strict=True)
    }
    assert len(codes) == d
    assert all(j < blocks and 1 <= i < b for j, i in codes)
    # the last value is estimated from its own code: its users raise its estimate only
    values = np.full(20_000, d - 1)
    estimate = oracle.estimate(oracle.perturb(values, seed_for("BHR", "last")), [0, d - 2, d - 1])
    sd = math.sqrt(oracle.variance(20_000, 20_000, 20_000))
    assert abs(estimate[2] - 20_000) <= z_critical(ALPHA, m=3) * sd
    assert np.abs(estimate[:2]).max() <= z_critical(ALPHA, m=3) * math.sqrt(
        oracle.variance(20_000, 0, 20_000)
    )


def test_block_transform_is_the_sylvester_transform_of_each_block() -> None:
    rng = np.random.default_rng(3)
    for blocks, b in ((1, 8), (4, 2), (3, 16)):
        x = rng.integers(-50, 50, size=(blocks, b))
        assert np.array_equal(block_transform(x), x @ hadamard(b).T)


def test_one_block_is_hr() -> None:
    """ε < ln 2: B = 1, b = HR's K, κ = 2p - 1: the same variance n/(2p-1)^2 - n_x."""
    bhr, hr = BHR(epsilon=0.5, domain_size=100), HR(epsilon=0.5, domain_size=100)
    assert (bhr.blocks, bhr.order) == (1, hr.order)
    assert bhr.keep == pytest.approx(2 * hr.p_star - 1, rel=1e-13)
    assert bhr.variance(5000, 300, 5000) == pytest.approx(hr.variance(5000, 300), rel=1e-12)


# --- unbiased, exact variance, both engines -------------------------------------------------
def user_moments(oracle: BHR, counts: np.ndarray, value: int) -> tuple[float, float]:
    """Σ over users of the 2nd and 4th cumulants of T_u (ĉ = Σ T_u / κ), exactly.

    T_u in {-1, 0, 1}: a user of x has T = 1 w.p. κ + s, -1 w.p. s (s = (1-κ)/(2B)); a
    user of x's block has ±1 w.p. κ/2 + s each; any other user ±1 w.p. s each.
    """
    kappa, s = oracle.keep, (1 - oracle.keep) / (2 * oracle.blocks)
    n, n_x = float(counts.sum()), float(counts[value])
    block = oracle.block_of(np.arange(counts.shape[0])) == oracle.block_of(value)
    m = float(counts[block].sum())

    def cumulants(plus: float, minus: float) -> tuple[float, float]:
        mean = plus - minus
        m2 = plus + minus - mean**2
        m4 = plus * (1 - mean) ** 4 + minus * (1 + mean) ** 4 + (1 - plus - minus) * mean**4
        return m2, m4 - 3 * m2**2

    own, same, other = (
        cumulants(kappa + s, s),
        cumulants(kappa / 2 + s, kappa / 2 + s),
        cumulants(s, s),
    )
    weights = (n_x, m - n_x, n - m)
    k2 = sum(w * c[0] for w, c in zip(weights, (own, same, other), strict=True))
    k4 = sum(w * c[1] for w, c in zip(weights, (own, same, other), strict=True))
    return k2, k4


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_unbiased_with_the_exact_variance(epsilon: float, engine: str) -> None:
    """z-test of the mean and χ² test of S²/Var against ``variances`` (α/d each)."""
    oracle = BHR(epsilon=epsilon, domain_size=D)
    estimates = workload_estimates("BHR", epsilon, engine)
    variances = oracle.variances(COUNTS)
    z = mean_z_scores(estimates, COUNTS, variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    moments = np.array([user_moments(oracle, COUNTS, v) for v in range(D)])
    assert np.allclose(moments[:, 0] / oracle.keep**2, variances, rtol=1e-10)
    ratio = estimates.var(axis=0, ddof=1) / variances
    lo, hi = variance_acceptance(REPS, moments[:, 1] / moments[:, 0] ** 2, ALPHA, m=D)
    assert ((ratio >= lo) & (ratio <= hi)).all(), (ratio, lo, hi)


def test_variance_takes_the_block_count() -> None:
    """variances() = variance(n, n_x, m_j) with m_j the users of x's block."""
    oracle = BHR(epsilon=2.0, domain_size=D)
    block = oracle.block_of(np.arange(D))
    m = np.array([COUNTS[block == j].sum() for j in block])
    assert np.allclose(
        oracle.variances(COUNTS),
        [oracle.variance(N, int(COUNTS[v]), int(m[v])) for v in range(D)],
        rtol=1e-13,
    )
    # the heavy value's block partners pay for it: 2400/κ more than an isolated value
    partner = int(np.flatnonzero((block == block[LARGE]) & (COUNTS == 0))[0])
    assert oracle.variances(COUNTS)[partner] - oracle.variance(N, 0) == pytest.approx(
        m[partner] / oracle.keep, rel=1e-12
    )
    with pytest.raises(ValueError, match="block_count must lie in"):
        oracle.variance(100, 10, 5)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_engines_agree_in_distribution(epsilon: float) -> None:
    """KS two-sample test on three values' estimates, reports vs sampled (α/3 each)."""
    reports = workload_estimates("BHR", epsilon, "reports")
    sampled = workload_estimates("BHR", epsilon, "sampled")
    for value in (LARGE, int(np.flatnonzero(COUNTS == 20)[0]), D - 1):
        assert stats.ks_2samp(reports[:, value], sampled[:, value]).pvalue >= ALPHA / 3


def test_heavy_values_use_the_multinomial_path() -> None:
    """A value with more kept users than b/2 is drawn as a multinomial on C_x: same law."""
    oracle, counts = BHR(epsilon=3.0, domain_size=40), np.zeros(40, dtype=np.int64)
    counts[[0, 1, 39]] = 3000, 5, 10
    assert oracle.block_size == 4  # b/2 = 2 < kept users of value 0
    rng = seed_for("BHR", "heavy")
    draws = np.array([oracle.simulate(counts, rng, candidates=[0, 1, 39]) for _ in range(REPS)])
    variances = oracle.variances(counts, [0, 1, 39])
    assert np.abs(mean_z_scores(draws, counts[[0, 1, 39]], variances)).max() <= z_critical(
        ALPHA, m=3
    )


def test_simulate_candidates_is_exact_for_a_skewed_population() -> None:
    """The candidates' law given the whole population (a sparse histogram): the other
    users' values matter, as they share the candidates' blocks."""
    oracle, rng = BHR(epsilon=2.0, domain_size=64), seed_for("BHR", "candidates")
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
    """Mean over the values of Var[ĉ(x)] for n = 1000 users spread uniformly: 182.66,
    5.9x below HR's 1076.0 (anchor: ≈ 182.9 for blocked HR, 1077 for HR).  The sampled
    engine's mean squared error over 60 populations drawn uniformly agrees (z-test)."""
    d, n = 22_000, 1000
    oracle = BHR(epsilon=4.0, domain_size=d)
    sizes = np.bincount(oracle.block_of(np.arange(d)))  # values per block: 21 x 1023, 1 x 517
    exact = sum(s * oracle.variance(n, n / d, n * s / d) for s in sizes) / d
    assert exact == pytest.approx(182.66, abs=0.01)
    assert HR(epsilon=4.0, domain_size=d).variance(n) / exact == pytest.approx(5.89, abs=0.01)
    rng = seed_for("BHR", "anchor")
    mse = []
    for _ in range(60):
        counts = np.bincount(rng.integers(0, d, n), minlength=d)
        mse.append(np.mean((oracle.simulate(counts, rng) - counts) ** 2))
    z = (np.mean(mse) - exact) / (np.std(mse, ddof=1) / math.sqrt(len(mse)))
    assert abs(z) <= z_critical(ALPHA), (np.mean(mse), exact)


# --- privacy ---------------------------------------------------------------------------------
@pytest.mark.parametrize("domain_size", [2, 3, 9, 17, 40])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 4.0, 6.0, 20.0])
def test_declared_likelihood_is_epsilon_ldp_and_tight(epsilon: float, domain_size: int) -> None:
    oracle = BHR(epsilon=epsilon, domain_size=domain_size)
    for value in (0, domain_size - 1):
        assert oracle.report_probabilities(value).sum() == pytest.approx(1.0, abs=1e-12)
    loss = max_privacy_loss(oracle)
    assert loss <= epsilon * (1 + 1e-12)
    assert loss >= epsilon * (1 - 1e-8)
    kappa = oracle.keep
    assert loss == pytest.approx(math.log1p(2 * oracle.blocks * kappa / (1 - kappa)), rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 4.0])
def test_reports_follow_the_declared_probabilities(epsilon: float) -> None:
    """χ² goodness of fit of perturb's reports of each value to report_probabilities."""
    oracle = BHR(epsilon=epsilon, domain_size=9)
    rng, n = seed_for("BHR", "gof", epsilon), 40_000
    for value in range(9):
        reports = oracle.perturb(np.full(n, value), rng)
        expected = n * oracle.report_probabilities(value)
        observed = np.bincount(reports, minlength=oracle.order)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 9


@pytest.mark.parametrize(
    ("epsilon", "domain_size"), [(0.5, 600), (2.0, 600), (6.0, 600), (2.0, 4), (6.0, 40)]
)
def test_passes_its_audit(epsilon: float, domain_size: int) -> None:
    """No false alarm (bound <= ε at level 1e-4) and the optimal event's guaranteed bound.

    d = 600: inputs 0 and 1 share a block (b >= 4); d = 4 at ε = 2 and d = 40 at ε = 6
    give b = 2, so they lie in different blocks."""
    oracle = BHR(epsilon=epsilon, domain_size=domain_size)
    v, v_prime = 0, 1
    assert (oracle.block_of(v) == oracle.block_of(v_prime)) == (oracle.block_size >= 4)
    result = audit.lower_bound(
        oracle, v, v_prime, rng=seed_for("BHR", "audit", epsilon), trials=50_000, alpha=ALPHA
    )
    assert result.epsilon <= epsilon, f"false alarm: {result}"
    p, p_other = oracle.audit_event_probabilities()
    assert math.log(p / p_other) == pytest.approx(max_privacy_loss(oracle, values=[0, 1]), rel=1e-9)
    floor = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= floor >= 0.6 * epsilon, (result, floor)


def test_a_client_that_overweights_its_code_is_caught() -> None:
    """Declares ε = 1 but draws from C_x with ε = 3's κ: the audit's bound exceeds 1."""

    class Leaky(BHR):
        def perturb(self, values, rng):
            return BHR(epsilon=3.0, domain_size=self.domain_size).perturb(values, rng)

    oracle = Leaky(epsilon=1.0, domain_size=40)
    assert oracle.blocks == BHR(epsilon=3.0, domain_size=40).blocks // 8  # B = 2 vs 16
    result = audit.lower_bound(oracle, 0, 1, rng=seed_for("BHR", "leaky"), trials=50_000)
    assert result.epsilon > 1.0, str(result)


# --- bad input -------------------------------------------------------------------------------
def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ValueError, match="domain_size must be >= 2"):
        BHR(epsilon=1.0, domain_size=1)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        BHR(epsilon=-1.0, domain_size=4)
    with pytest.raises(ParameterError, match="for BHR .*over the 4 GiB memory budget"):
        BHR(epsilon=1.0, domain_size=2**27)
    with pytest.raises(ValueError, match="too large for BHR"):
        BHR(epsilon=60.0, domain_size=4)
    oracle = BHR(epsilon=2.0, domain_size=9)
    assert oracle.order == 16  # B = 4 blocks of b = 4
    with pytest.raises(ValueError, match=r"reports must lie in \[0, 16\), found 16"):
        oracle.estimate(np.array([0, 16]))
    with pytest.raises(TypeError, match="reports must be an array of integers"):
        oracle.estimate(np.array([0.5]))
    with pytest.raises(ValueError, match=r"values must lie in \[0, 9\)"):
        oracle.perturb(np.array([9]), np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.perturb(np.array([1]), 0)
    with pytest.raises(ValueError, match="candidates must be distinct"):
        oracle.simulate(np.ones(9, dtype=np.int64), np.random.default_rng(0), [1, 1])
