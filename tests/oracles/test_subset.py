"""Subset selection (Ye & Barg 2018; Wang et al. 2016): estimator, variance, engines, privacy.

Workload and statistics of ``oracle_testing`` (d = 16, n = 4000, REPS = 2000 estimates per
case); every statistical assertion is a test at level ALPHA = 1e-4, Bonferroni-corrected
over the values it checks.  SS is pure and its users are independent, so the pure-protocol
kurtosis of ``excess_kurtosis`` applies to each value's estimate; its support indicators
are negatively correlated within a user, which the correlation test checks in both engines.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    LARGE,
    REPS,
    D,
    draw,
    exact_variances,
    excess_kurtosis,
    mean_z_scores,
    seed_for,
    variance_acceptance,
    workload_estimates,
    z_critical,
)
from scipy import stats

from ldp.oracles import SS, UnaryReports, subset
from ldp.oracles.subset import default_omega
from ldp.oracles.unary import column_sums
from ldp.privacy import max_privacy_loss

#: ε = 4 and the per-user shortcut run with the slow tests; ε = 0.5 checks every property fast
EPSILONS = (0.5, pytest.param(4.0, marks=pytest.mark.slow))
ENGINES = ("reports", "sampled", pytest.param("shortcut", marks=pytest.mark.slow))


@cache
def ss_estimates(epsilon: float, engine: str) -> np.ndarray:
    """The workload's estimates: real reports, the O(d ω) group process ("sampled", with the
    per-user shortcut turned off), or the sampled engine's per-user shortcut."""
    if engine == "shortcut":
        return workload_estimates("SS", epsilon, "sampled")  # n d = 64,000: the shortcut
    if engine == "reports":
        return workload_estimates("SS", epsilon, "reports")
    saved, subset.REPORTS_SHORTCUT = subset.REPORTS_SHORTCUT, 0
    try:
        return draw(
            SS(epsilon=epsilon, domain_size=D),
            COUNTS,
            "sampled",
            REPS,
            seed_for("SS", epsilon, "group"),
        )
    finally:
        subset.REPORTS_SHORTCUT = saved


# --- ω and the closed forms --------------------------------------------------------------------
def variance_at(epsilon: float, d: int, omega: int) -> float:
    p = omega * math.exp(epsilon) / (omega * math.exp(epsilon) + d - omega)
    q = (p * (omega - 1) + (1 - p) * omega) / (d - 1)
    return q * (1 - q) / (p - q) ** 2


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("d", [2, 5, 16, 1000])
def test_default_omega_is_the_better_rounding(epsilon: float, d: int) -> None:
    omega = default_omega(epsilon, d)
    centre = d / (math.exp(epsilon) + 1)
    candidates = {min(max(c, 1), d - 1) for c in (math.floor(centre), math.ceil(centre))}
    assert omega in candidates
    assert variance_at(epsilon, d, omega) == min(variance_at(epsilon, d, c) for c in candidates)


def test_p_and_q_are_the_papers() -> None:
    """p = ωe^ε/(ωe^ε+d-ω) ([SS] Eq. (13)); q = p(ω-1)/(d-1) + (1-p)ω/(d-1)."""
    oracle = SS(epsilon=1.0, domain_size=100, omega=20)
    p = 20 * math.e / (20 * math.e + 80)
    assert oracle.p_star == pytest.approx(p, rel=1e-14) and oracle.p_star <= p
    assert oracle.q_star == pytest.approx((p * 19 + (1 - p) * 20) / 99, rel=1e-14)
    assert oracle.variance(1000, 0) == pytest.approx(1000 * variance_at(1.0, 100, 20), 1e-12)


def test_every_report_has_omega_members() -> None:
    oracle = SS(epsilon=1.0, domain_size=37, omega=9)
    values = np.repeat(np.arange(37), 30)
    bits = np.unpackbits(oracle.perturb(values, seed_for("SS", "size")).bits, axis=1, count=37)
    assert (bits.sum(axis=1) == 9).all()


# --- unbiased, exact variance, both engines ----------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_unbiased_with_the_exact_variance(epsilon: float, engine: str) -> None:
    """z-test of the mean and χ² test of S²/Var, per value (α/d each)."""
    oracle = SS(epsilon=epsilon, domain_size=D)
    estimates = ss_estimates(epsilon, engine)
    variances = exact_variances(oracle, COUNTS)
    z = mean_z_scores(estimates, COUNTS, variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    ratio = estimates.var(axis=0, ddof=1) / variances
    lo, hi = variance_acceptance(REPS, excess_kurtosis(oracle, COUNTS), ALPHA, m=D)
    assert ((ratio >= lo) & (ratio <= hi)).all(), (ratio, lo, hi)


def exact_correlation(oracle: SS, counts: np.ndarray, u: int, v: int) -> float:
    """Corr of ĉ(u), ĉ(v) from the per-user covariance of the two support indicators.

    A user of w not in {u, v}: P(both in S) = [p(ω-1)(ω-2) + (1-p)ω(ω-1)]/((d-1)(d-2)),
    covariance that minus q²; a user of u: P(both) = p(ω-1)/(d-1), covariance minus p q.
    """
    d, w, p, q = oracle.domain_size, oracle.omega, oracle.p_star, oracle.q_star
    both_other = (p * (w - 1) * (w - 2) + (1 - p) * w * (w - 1)) / ((d - 1) * (d - 2))
    both_own = p * (w - 1) / (d - 1)
    n = int(counts.sum())
    rest = n - counts[u] - counts[v]
    cov = rest * (both_other - q * q) + (counts[u] + counts[v]) * (both_own - p * q)
    var_u, var_v = oracle.variance(n, int(counts[u])), oracle.variance(n, int(counts[v]))
    return cov / (p - q) ** 2 / math.sqrt(var_u * var_v)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_estimates_are_negatively_correlated_as_computed(epsilon: float, engine: str) -> None:
    """Fisher z of two pairs' sample correlations against the exact ones (α/2 each)."""
    oracle = SS(epsilon=epsilon, domain_size=D)
    estimates = ss_estimates(epsilon, engine)
    for u, v in ((LARGE, (LARGE + 1) % D), (0, 1)):
        rho = exact_correlation(oracle, COUNTS, u, v)
        r = np.corrcoef(estimates[:, u], estimates[:, v])[0, 1]
        z = (np.arctanh(r) - np.arctanh(rho)) * math.sqrt(REPS - 3)
        assert abs(z) <= z_critical(ALPHA, m=2), f"pair {(u, v)}: r = {r:.4f}, exact {rho:.4f}"


def test_correlation_design_is_informative() -> None:
    """At ε = 4 (ω = 1, GRR-like) the pair's exact correlation is far from 0 (4 SE = 0.09)."""
    oracle = SS(epsilon=4.0, domain_size=D)
    assert exact_correlation(oracle, COUNTS, LARGE, (LARGE + 1) % D) < -0.09


@pytest.mark.parametrize("engine", ["sampled", pytest.param("shortcut", marks=pytest.mark.slow)])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_engines_agree_in_distribution(epsilon: float, engine: str) -> None:
    reports, sampled = ss_estimates(epsilon, "reports"), ss_estimates(epsilon, engine)
    for value in (LARGE, int(np.flatnonzero(COUNTS == 20)[0]), D - 1):
        assert stats.ks_2samp(reports[:, value], sampled[:, value]).pvalue >= ALPHA / 3


def test_simulate_candidates_equals_the_full_law_of_those_values(monkeypatch) -> None:
    """Candidates drawn alone (the others lumped, the group process stopped after them) vs
    the full-domain draws: KS per candidate, and the exact correlation of a pair."""
    monkeypatch.setattr(subset, "REPORTS_SHORTCUT", 0)
    oracle, rng = SS(epsilon=0.5, domain_size=D), seed_for("SS", "candidates")
    chosen = np.array([LARGE, 0, 9])
    alone = np.array([oracle.simulate(COUNTS, rng, candidates=chosen) for _ in range(REPS)])
    full = ss_estimates(0.5, "sampled")[:, chosen]
    for j in range(3):
        assert stats.ks_2samp(alone[:, j], full[:, j]).pvalue >= ALPHA / 4
    rho = exact_correlation(oracle, COUNTS, LARGE, 0)
    r = np.corrcoef(alone[:, 0], alone[:, 1])[0, 1]
    assert abs(np.arctanh(r) - np.arctanh(rho)) * math.sqrt(REPS - 3) <= z_critical(ALPHA / 4)


# --- privacy -------------------------------------------------------------------------------------
@pytest.mark.parametrize("domain_size", [2, 3, 6])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 2.0, 6.0])
def test_declared_likelihood_is_epsilon_ldp_and_tight(epsilon: float, domain_size: int) -> None:
    for omega in range(1, domain_size):
        oracle = SS(epsilon=epsilon, domain_size=domain_size, omega=omega)
        loss = max_privacy_loss(oracle)
        assert epsilon * (1 - 1e-8) <= loss <= epsilon * (1 + 1e-12), (omega, loss)


#: perturb's two ways of drawing the other members: Floyd's rounds over many users at once,
#: or user by user (``Generator.choice``); each forced through ``FLOYD_ROUNDS_PER_USER``.
STRATEGIES = {"floyd": math.inf, "per_user": 0.0}


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("epsilon", [0.5, 6.0])
def test_reports_follow_the_declared_probabilities(
    epsilon: float, strategy: str, monkeypatch
) -> None:
    """χ² goodness of fit of perturb's subsets of each value to report_probabilities."""
    monkeypatch.setattr(subset, "FLOYD_ROUNDS_PER_USER", STRATEGIES[strategy])
    oracle = SS(epsilon=epsilon, domain_size=6, omega=2)
    rng, n = seed_for("SS", "gof", epsilon, strategy), 30_000
    codes = {s: i for i, s in enumerate(oracle.subsets())}
    weights = 1 << np.arange(6)[::-1]
    for value in (0, 3):
        bits = np.unpackbits(oracle.perturb(np.full(n, value), rng).bits, axis=1, count=6)
        index = {int(bits_of(s) @ weights): i for s, i in codes.items()}
        observed = np.bincount([index[int(k)] for k in bits @ weights], minlength=len(codes))
        expected = n * oracle.report_probabilities(value)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 2


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_large_domain_reports_have_the_declared_marginals(strategy: str, monkeypatch) -> None:
    """d = 20,001 (numpy's choice then shuffles an index array; Floyd's rounds below it):
    ω members each, v kept with p*, every other value held with probability
    (p*(ω-1) + (1-p*)ω)/(d-1): a z-test per value, Bonferroni over the d values."""
    monkeypatch.setattr(subset, "FLOYD_ROUNDS_PER_USER", STRATEGIES[strategy])
    d, n, value = 20_001, 600, 123
    oracle = SS(epsilon=1.0, domain_size=d)
    assert oracle.omega > d // 50  # the index-array branch of Generator.choice
    bits = np.unpackbits(
        oracle.perturb(np.full(n, value), seed_for("SS", "marginals", strategy)).bits,
        axis=1,
        count=d,
    )
    assert (bits.sum(axis=1) == oracle.omega).all()
    held = bits.sum(axis=0)
    probability = np.full(d, oracle.q_star)
    probability[value] = oracle.p_star
    z = (held - n * probability) / np.sqrt(n * probability * (1 - probability))
    # Binomial(600, 0.27) tails are close to normal; Bonferroni over d values
    assert np.abs(z).max() <= z_critical(ALPHA, m=d), np.abs(z).max()


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_audit_of_real_reports_has_no_false_alarm(strategy: str, monkeypatch) -> None:
    """ldp.audit on perturb's real subsets (each way of drawing them): its bound stays
    below the realised loss and reaches what the default event guarantees (at ALPHA/2)."""
    from ldp import audit

    monkeypatch.setattr(subset, "FLOYD_ROUNDS_PER_USER", STRATEGIES[strategy])
    oracle = SS(epsilon=2.0, domain_size=6, omega=2)
    result = audit.lower_bound(
        oracle, 0, 1, rng=seed_for("SS", "audit", strategy), trials=20_000, alpha=ALPHA
    )
    truth = max_privacy_loss(oracle, values=[0, 1])
    assert result.epsilon <= truth <= 2.0 * (1 + 1e-12), f"false alarm: {result}"
    p, p_other = audit.optimal_event_probabilities(oracle)
    floor = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= floor, (str(result), floor)


def test_working_memory_over_the_budget_is_refused() -> None:
    """d = 2^35 (one report: 4 GiB packed, 32 GiB unpacked) is refused before allocating."""
    from ldp import budget
    from ldp.validation import ParameterError

    oracle = SS(epsilon=20.0, domain_size=2**35)
    with pytest.raises(ParameterError, match="domain_size must be small enough") as error:
        oracle.perturb(np.array([0]), np.random.default_rng(0))
    assert error.value.name == "domain_size" and "memory budget" in str(error.value)
    small = SS(epsilon=1.0, domain_size=1000)
    with budget.limits(memory_bytes=100_000), pytest.raises(ParameterError) as error:
        small.perturb(np.zeros(100, dtype=np.int64), np.random.default_rng(0))
    assert error.value.name == "values" and "at most" in error.value.allowed


def bits_of(subset: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(6, dtype=np.int64)
    out[list(subset)] = 1
    return out


# --- bad input -----------------------------------------------------------------------------------
def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ValueError, match="omega must be <= 4"):
        SS(epsilon=1.0, domain_size=5, omega=5)
    with pytest.raises(ValueError, match="omega must be >= 1"):
        SS(epsilon=1.0, domain_size=5, omega=0)
    with pytest.raises(TypeError, match="omega must be an integer"):
        SS(epsilon=1.0, domain_size=5, omega=2.5)
    with pytest.raises(ValueError, match="epsilon = 40.0 is too large for SS.*largest safe"):
        SS(epsilon=40.0, domain_size=5, omega=1)
    oracle = SS(epsilon=1.0, domain_size=5)
    with pytest.raises(TypeError, match="reports must be UnaryReports"):
        oracle.estimate(np.zeros((3, 1), dtype=np.uint8))
    with pytest.raises(ValueError, match="encode a domain of 9 values"):
        oracle.estimate(UnaryReports(np.zeros((3, 2), dtype=np.uint8), 9))
    with pytest.raises(ValueError, match=r"values must lie in \[0, 5\)"):
        oracle.perturb(np.array([5]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="small enough to enumerate"):
        SS(epsilon=0.1, domain_size=60).report_probabilities(0)


@pytest.mark.parametrize(
    ("n", "d", "density"),
    [(0, 9, 0.5), (1, 8, 0.5), (300, 13, 0.9), (600, 1001, 0.02), (257, 64, 1.0), (511, 8, 1.0)],
)
def test_column_sums_equal_the_unpacked_counts(n: int, d: int, density: float) -> None:
    """The lane-wise count of the packed bytes, compiled and in numpy, is exactly the count
    of the unpacked bits (more than 255 rows, widths not a multiple of 8 bytes, d not a
    multiple of 8)."""
    rng = seed_for("column sums", n, d)
    bits = rng.random((n, d)) < density
    packed = np.packbits(bits, axis=1)
    expected = bits.sum(axis=0, dtype=np.int64)
    for use_numba in (True, False):
        got = column_sums(packed, d, use_numba=use_numba)
        assert got.dtype == np.int64 and np.array_equal(got, expected), use_numba


def test_decode_equals_the_unpacked_count_of_the_members() -> None:
    """SS's estimate at n = 1,000, d = 22,000, ε = 4 is (I_v - n q*)/(p* - q*) with I_v the
    count of v over the users' unpacked subsets, to the last bit."""
    oracle = SS(epsilon=4.0, domain_size=22_000)
    rng = seed_for("decode", 22_000)
    reports = oracle.perturb(rng.integers(0, 22_000, 1000), rng)
    support = np.unpackbits(reports.bits, axis=1, count=22_000).sum(axis=0, dtype=np.int64)
    expected = (support - 1000 * oracle.q_star) / (oracle.p_star - oracle.q_star)
    assert np.array_equal(oracle.estimate(reports), expected)
