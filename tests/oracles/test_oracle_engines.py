"""The reports engine and the sampled engine agree in distribution.

* Two-sample Kolmogorov-Smirnov tests on the estimates of a few values, for every
  protocol and ε (the samples are the workload draws of ``oracle_testing``).
* GRR's reports are multinomial: each user reports exactly one value, so two values'
  estimates are negatively correlated.  Both engines' sample correlation is tested
  against the exact one (derived below), which is far from zero at the sizes used.
* ``simulate(..., candidates=C)`` draws the candidates' estimates from the same law as the
  full-domain ``simulate`` (GRR's remainder cell of the multinomial included).

Level: ALPHA = 1e-4 per assertion, Bonferroni over the values or pairs it checks.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    EPSILONS,
    LARGE,
    PROTOCOLS,
    REPS,
    draw,
    make_oracle,
    seed_for,
    workload_estimates,
    z_critical,
)
from scipy import stats

from ldp.oracles import GRR

#: The values compared: the large count, a small count (20 users) and a zero count.
COMPARED = (LARGE, int(np.flatnonzero(COUNTS == 20)[0]), int(np.flatnonzero(COUNTS == 0)[-1]))


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", PROTOCOLS)
def test_engines_agree_in_distribution(name: str, epsilon: float) -> None:
    """KS two-sample test, reports vs sampled, on three values' estimates (α/3 each).

    The estimates of the pure protocols live on the lattice (I - n q*)/(p* - q*) with
    integer I, in both engines; ties make the KS test conservative, so the false-failure
    rate stays below the nominal level.
    """
    reports = workload_estimates(name, epsilon, "reports")
    sampled = workload_estimates(name, epsilon, "sampled")
    for value in COMPARED:
        result = stats.ks_2samp(reports[:, value], sampled[:, value])
        assert result.pvalue >= ALPHA / len(COMPARED), (
            f"{name} eps={epsilon}: the engines' estimates of value {value} (true count "
            f"{COUNTS[value]}) differ, KS D = {result.statistic:.4f}, p = {result.pvalue:.2g}"
        )


# --- GRR: the multinomial correlation -------------------------------------------------------
GRR_COUNTS = np.array([1600, 1200, 800, 400], dtype=np.int64)
GRR_EPSILON = 1.0


def grr_covariance(oracle: GRR, counts: np.ndarray) -> np.ndarray:
    """The exact covariance matrix of GRR's estimated counts.

    I_v = Σ_u 1[y_u = v] over independent users, and a user's indicators of two values
    are exclusive: Cov(1[y_u = v], 1[y_u = v']) = -P(v|u) P(v'|u) for v != v'.  Summing,
    Cov(I_v, I_v') = -Σ_u P(v|u)P(v'|u) = -(n_v + n_v') p q - (n - n_v - n_v') q², and
    Var(I_v) = n_v p(1-p) + (n - n_v) q(1-q); c = (I - nq)/(p-q) divides both by (p-q)².
    """
    n, p, q = int(counts.sum()), oracle.p_star, oracle.q_star
    pair = counts[:, None] + counts[None, :]
    cov = -(pair * p * q + (n - pair) * q * q)
    np.fill_diagonal(cov, counts * p * (1 - p) + (n - counts) * q * (1 - q))
    return cov / (p - q) ** 2


def test_grr_exact_covariance_matches_direct_enumeration() -> None:
    """The closed form above equals Σ_u P(v|u)P(v'|u) summed user by user (d = 4)."""
    oracle = GRR(epsilon=GRR_EPSILON, domain_size=4)
    probability = np.stack([oracle.report_probabilities(u) for u in range(4)])  # P(y | u)
    n = int(GRR_COUNTS.sum())
    second = np.einsum("u,uv,uw->vw", GRR_COUNTS, probability, probability)
    mean = GRR_COUNTS @ probability
    cov_support = np.diag(mean) - second  # Σ_u (diag(P_u) - P_u P_u^T)
    expected = cov_support / (oracle.p_star - oracle.q_star) ** 2
    np.testing.assert_allclose(grr_covariance(oracle, GRR_COUNTS), expected, rtol=1e-12)
    np.testing.assert_allclose(np.diag(expected), [oracle.variance(n, c) for c in GRR_COUNTS])


@pytest.mark.parametrize("engine", ["reports", "sampled", "sampled-candidates"])
def test_grr_estimates_are_negatively_correlated(engine: str) -> None:
    """Sample correlations of GRR's estimates match the exact ones (Fisher z, α/6 per pair).

    atanh(r) ~ N(atanh(ρ), 1/(R-3)) for R draws of a bivariate normal; the estimates are
    sums of n = 4000 independent terms.  The exact ρ are -0.29 to -0.37, at least 13
    standard errors from 0, so independent binomials (ρ = 0) would fail this test.
    ``sampled-candidates`` draws candidates {0, 1, 3} only: the multinomial then has a
    remainder cell for value 2.
    """
    oracle = GRR(epsilon=GRR_EPSILON, domain_size=4)
    rng = seed_for("grr-covariance", engine)
    if engine == "sampled-candidates":
        chosen = np.array([0, 1, 3])
        estimates = np.stack(
            [oracle.simulate(GRR_COUNTS, rng, candidates=chosen) for _ in range(REPS)]
        )
    else:
        chosen = np.arange(4)
        estimates = draw(oracle, GRR_COUNTS, engine, REPS, rng)
    cov = grr_covariance(oracle, GRR_COUNTS)[np.ix_(chosen, chosen)]
    rho = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    r = np.corrcoef(estimates, rowvar=False)
    pairs = list(itertools.combinations(range(chosen.size), 2))
    bound = z_critical(ALPHA, m=len(pairs)) / np.sqrt(REPS - 3)
    for a, b in pairs:
        assert np.arctanh(-rho[a, b]) > 2 * bound, "design: ρ must be resolvable from 0"
        assert abs(np.arctanh(r[a, b]) - np.arctanh(rho[a, b])) <= bound, (
            f"GRR {engine}: corr(c({chosen[a]}), c({chosen[b]})) = {r[a, b]:.4f}, "
            f"exact {rho[a, b]:.4f}"
        )


# --- simulate with candidates -----------------------------------------------------------------
@pytest.mark.parametrize("name", PROTOCOLS)
def test_simulate_candidates_match_full_domain(name: str) -> None:
    """simulate(counts, candidates=C)[:, j] ~ simulate(counts)[:, C[j]] (KS, α/3 each)."""
    oracle = make_oracle(name, 1.0)
    rng = seed_for("simulate-candidates", name)
    chosen = np.array(COMPARED)
    subset = np.stack([oracle.simulate(COUNTS, rng, candidates=chosen) for _ in range(REPS)])
    full = np.stack([oracle.simulate(COUNTS, rng) for _ in range(REPS)])[:, chosen]
    for j, value in enumerate(chosen):
        result = stats.ks_2samp(subset[:, j], full[:, j])
        assert result.pvalue >= ALPHA / chosen.size, (
            f"{name}: simulate(candidates) differs from the full domain on value {value}: "
            f"KS D = {result.statistic:.4f}, p = {result.pvalue:.2g}"
        )
