"""Shared set-up of the frequency-oracle tests: the workload, the draws and the statistics.

False-failure policy.  Every statistical assertion is a test at level ``ALPHA = 1e-4``: a
correct implementation fails it with probability at most 1e-4 over the choice of seed
(Bonferroni-corrected over the values an assertion checks, so each value is tested at
``ALPHA / m``).  The seeds are fixed, so the suite is deterministic; the level says how
unlucky a fixed seed would have to be for a correct oracle to fail.

Workload (``D``, ``N``, ``COUNTS``).  d = 16 values, n = 4000 users, one value held by 60%
of the users (the n_v term of the exact variance), a tail of small counts and seven values
nobody holds.  ``REPS`` = 2000 independent estimates per (protocol, ε, engine).
"""

from __future__ import annotations

import zlib
from functools import cache

import numpy as np
from scipy import stats

from ldp.oracles import ORACLES, SHE, FrequencyOracle, PureOracle

#: False-failure rate of each statistical assertion.
ALPHA = 1e-4

#: The protocols of USENIX'17 Table 1, in the paper's order.
PROTOCOLS = ("GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH")
#: A small and a large privacy budget.
EPSILONS = (0.5, 4.0)
ENGINES = ("reports", "sampled")

D = 16
#: True counts: 2400 users (60%) hold value 5; the others share a decreasing tail.
COUNTS = np.roll(
    np.array([2400, 600, 400, 250, 150, 100, 50, 30, 20, 0, 0, 0, 0, 0, 0, 0], dtype=np.int64), 5
)
N = int(COUNTS.sum())
LARGE = int(np.argmax(COUNTS))  # the value whose n_v term matters
REPS = 2000


def make_oracle(name: str, epsilon: float, domain_size: int = D) -> FrequencyOracle:
    """The named oracle with its default extra parameters (THE's optimal θ, OLH's g)."""
    return ORACLES[name](epsilon=epsilon, domain_size=domain_size)


def users(counts: np.ndarray) -> np.ndarray:
    """The users' values: value v repeated counts[v] times (a fixed population)."""
    return np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)


def seed_for(*key: object) -> np.random.Generator:
    """An independent, reproducible stream per test case (NEP 19: a SeedSequence per key)."""
    words = tuple(zlib.crc32(repr(part).encode()) for part in key)
    return np.random.default_rng(np.random.SeedSequence(20170816, spawn_key=words))


def draw(
    oracle: FrequencyOracle,
    counts: np.ndarray,
    engine: str,
    reps: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``reps`` independent full-domain estimates, shape (reps, d), from one engine."""
    out = np.empty((reps, counts.shape[0]))
    if engine == "reports":
        values = users(counts)
        for r in range(reps):
            out[r] = oracle.estimate(oracle.perturb(values, rng))
    elif engine == "sampled":
        for r in range(reps):
            out[r] = oracle.simulate(counts, rng)
    else:
        raise ValueError(engine)
    return out


@cache
def workload_estimates(name: str, epsilon: float, engine: str) -> np.ndarray:
    """The REPS estimates of the workload, drawn once per session and shared by the tests."""
    return draw(make_oracle(name, epsilon), COUNTS, engine, REPS, seed_for(name, epsilon, engine))


# --- exact moments ---------------------------------------------------------------------
def exact_variances(oracle: FrequencyOracle, counts: np.ndarray) -> np.ndarray:
    """Var[c(v)] for every v, from ``oracle.variance(n, n_v)``."""
    n = int(counts.sum())
    return np.array([oracle.variance(n, int(c)) for c in counts])


def excess_kurtosis(oracle: FrequencyOracle, counts: np.ndarray) -> np.ndarray:
    """The exact excess kurtosis of each c(v): it sets the spread of a sample variance.

    Pure protocols: I_v is a sum of independent Bernoulli(p*) (n_v users) and Bernoulli(q*)
    (the others), whose fourth cumulant is p(1-p)(1-6p(1-p)); c(v) is affine in I_v.
    SHE: c(v) is affine in a sum of n independent draws from its two noise tables; the
    fourth cumulant μ4 - 3σ⁴ of each table is computed from its exact masses.
    """
    n = int(counts.sum())
    if isinstance(oracle, PureOracle):
        p, q = oracle.p_star, oracle.q_star

        def k2(x: float) -> float:
            return x * (1 - x)

        def k4(x: float) -> float:
            return k2(x) * (1 - 6 * k2(x))

        second = counts * k2(p) + (n - counts) * k2(q)
        fourth = counts * k4(p) + (n - counts) * k4(q)
        return fourth / second**2
    if isinstance(oracle, SHE):
        noise = oracle.noise
        cumulants = []
        for table in (noise.own, noise.other):
            weights = np.array(table.masses, dtype=float) / 2.0**128
            centred = noise.values - weights @ noise.values
            var = weights @ centred**2
            cumulants.append((weights @ centred**4 - 3 * var**2, var))
        (k4_own, var_own), (k4_other, var_other) = cumulants
        second = counts * var_own + (n - counts) * var_other
        fourth = counts * k4_own + (n - counts) * k4_other
        return fourth / second**2
    raise TypeError(type(oracle).__name__)


# --- tests on a sample of estimates ------------------------------------------------------
def z_critical(alpha: float, m: int = 1) -> float:
    """Two-sided normal critical value at level alpha, Bonferroni over m comparisons."""
    return float(stats.norm.isf(alpha / (2 * m)))


def mean_z_scores(estimates: np.ndarray, truth: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """(mean - truth) / sqrt(Var / R) per column: N(0, 1) for an unbiased estimator (CLT)."""
    reps = estimates.shape[0]
    return (estimates.mean(axis=0) - truth) / np.sqrt(variances / reps)


def effective_dof(reps: int, kurtosis: np.ndarray | float) -> np.ndarray:
    """Degrees of freedom ν with S²/σ² ≈ χ²_ν/ν for a sample of excess kurtosis γ.

    For iid draws Var[S²] = σ⁴ (2/(R-1) + γ/R) exactly; matching it with χ²_ν/ν, whose
    variance is 2/ν, gives ν = 2 / (2/(R-1) + γ/R) (Satterthwaite); ν = R-1 for a normal
    sample.  For our estimates γ = O(1/n) is small, so this is a small correction.
    """
    return 2.0 / (2.0 / (reps - 1) + np.asarray(kurtosis, dtype=float) / reps)


def variance_acceptance(
    reps: int, kurtosis: np.ndarray | float, alpha: float, m: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """The interval [lo, hi] that S²/σ² falls in with probability 1 - alpha/m (two-sided)."""
    nu = effective_dof(reps, kurtosis)
    lo = stats.chi2.ppf(alpha / (2 * m), nu) / nu
    hi = stats.chi2.isf(alpha / (2 * m), nu) / nu
    return lo, hi


def variance_power(
    reps: int, kurtosis: float, true_var: float, null_var: float, alpha: float
) -> float:
    """The probability that the variance test at level alpha rejects ``null_var``.

    S²/true_var ~ χ²_ν/ν; the test of null_var accepts when S²/null_var is in [lo, hi].
    """
    nu = float(effective_dof(reps, kurtosis))
    lo, hi = variance_acceptance(reps, kurtosis, alpha)
    scale = null_var / true_var
    accept = stats.chi2.cdf(hi * scale * nu, nu) - stats.chi2.cdf(lo * scale * nu, nu)
    return 1.0 - float(accept)


def moment_z_scores(a: np.ndarray, b: np.ndarray, third: bool = False) -> dict[str, float]:
    """Two-sample z-scores of the first moments of two samples of (R, 2 or 3) estimates.

    Each statistic is a sample mean of one number per repetition: the estimate (mean), its
    squared deviation from the sample mean (variance), the product of two candidates'
    deviations (covariance) and, with ``third``, of three (the third mixed central
    moment).  With R in the thousands each is normal to a good approximation, so
    (T_a - T_b)/sqrt(se_a² + se_b²) is a z-score under "same law".
    """

    def per_rep(x: np.ndarray) -> dict[str, np.ndarray]:
        dev = x - x.mean(axis=0)
        out = {f"mean {j}": x[:, j] for j in range(x.shape[1])}
        out |= {f"var {j}": dev[:, j] ** 2 for j in range(x.shape[1])}
        out["cov 0,1"] = dev[:, 0] * dev[:, 1]
        if third:
            out["third 0,1,2"] = dev[:, 0] * dev[:, 1] * dev[:, 2]
        return out

    left, right = per_rep(np.asarray(a, float)), per_rep(np.asarray(b, float))
    scores = {}
    for name, x in left.items():
        y = right[name]
        se = np.sqrt(x.var(ddof=1) / x.shape[0] + y.var(ddof=1) / y.shape[0])
        scores[name] = float((x.mean() - y.mean()) / se)
    return scores


def assert_same_moments(a: np.ndarray, b: np.ndarray, third: bool = False) -> dict[str, float]:
    """Both samples have the same means, variances, covariance (and third mixed moment):
    every z-score within the two-sided critical value at ``ALPHA``, Bonferroni over them."""
    scores = moment_z_scores(a, b, third)
    bound = z_critical(ALPHA, m=len(scores))
    assert max(abs(z) for z in scores.values()) <= bound, (scores, bound)
    return scores


def spread_population(candidate_counts: np.ndarray, n: int, domain_size: int) -> np.ndarray:
    """The population the sampled engine used to assume for ``simulate_candidates``: the
    candidates as values 0..m-1, the other n - Σ users spread evenly over m..d-1."""
    m = candidate_counts.shape[0]
    full = np.zeros(domain_size, dtype=np.int64)
    full[:m] = candidate_counts
    rest, others = n - int(candidate_counts.sum()), domain_size - m
    full[m:] = rest // others
    full[m : m + rest % others] += 1
    return full


def engine_samples(
    oracle: FrequencyOracle, counts: np.ndarray, candidates: np.ndarray, reps: int, key: str
) -> dict[str, np.ndarray]:
    """``reps`` estimates of ``candidates`` for the population ``counts`` (one per domain
    value) from each engine: "reports" (perturb + estimate), "sampled"
    (``simulate_candidates`` on the sparse histogram) and "spread" (the former
    ``simulate_candidates(candidate_counts, n)``: the same engine on
    :func:`spread_population`, candidates relabelled 0..m-1)."""
    rng = seed_for(type(oracle).__name__, key)
    held = np.flatnonzero(counts)
    everyone = users(counts)
    candidates = np.asarray(candidates, dtype=np.int64)
    spread = spread_population(counts[candidates], int(counts.sum()), oracle.domain_size)
    spread_held, relabelled = np.flatnonzero(spread), np.arange(candidates.shape[0])
    out = {name: np.empty((reps, candidates.shape[0])) for name in ("reports", "sampled", "spread")}
    for r in range(reps):
        reports = oracle.perturb(everyone, rng)
        out["reports"][r] = oracle.estimate(reports, candidates=candidates)
        out["sampled"][r] = oracle.simulate_candidates(held, counts[held], candidates, rng)
        out["spread"][r] = oracle.simulate_candidates(
            spread_held, spread[spread_held], relabelled, rng
        )
    return out
