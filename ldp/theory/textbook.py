"""Closed forms of the teaching texts: the lecture notes on distributed DP and the tutorial.

Citations:

* ``[Notes]``: *Section 10: Distributed Models of Differential Privacy*, CS 208 Applied
  Privacy for Data Science, Spring 2022 (lecture notes), Sec. 2-5.
* ``[BBGN19]``: Balle, Bell, Gascón, Nissim, *The Privacy Blanket of the Shuffle Model*
  (CRYPTO 2019), Theorem 3.1.

The protocols' own probabilities (GRR's p = e^ε/(e^ε + d - 1), SUE's e^{ε/2}/(1 + e^{ε/2}))
live on the protocol objects of :mod:`ldp.oracles`; this module holds what the texts add
around them: the central baseline, the shuffle calibration of the binary sum, the expected
largest error over D bins and the hashing arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, stats

from ldp.validation import check_int


def _positive(value: float, name: str) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value}")
    return value


def central_laplace_mean_sd(epsilon: float, n: int) -> float:
    """Standard deviation of the central ε-DP mean of n values in {-1, 1}: [Notes] Sec. 2.

    The curator adds Lap(2/(ε n)) to the mean (sensitivity 2/n), whose standard deviation
    is √2 · 2/(ε n) = 2√2/(ε n): the O(1/(ε n)) of the notes.
    """
    epsilon = _positive(epsilon, "epsilon")
    n = check_int(n, "n", minimum=1)
    return 2 * math.sqrt(2) / (epsilon * n)


def binary_sum_noise_probability(epsilon: float, n: int, delta: float) -> float:
    """γ of the shuffled binary sum at central (ε, δ): [BBGN19] Theorem 3.1 with k = 2.

    Theorem 3.1: n shuffled reports of the randomizer that keeps its value with probability
    1 - γ and otherwise reports a uniform one of k values are (ε, δ)-DP for ε <= 1 when
    γ = max{14 k log(2/δ)/((n - 1) ε²), 27 k/((n - 1) ε)}.  With k = 2 this is [Notes]
    Sec. 3's binary-sum randomizer (x_i w.p. 1 - p, Bern(1/2) w.p. p) with p = γ.
    """
    epsilon = _positive(epsilon, "epsilon")
    if epsilon > 1:
        raise ValueError(f"[BBGN19] Theorem 3.1 needs epsilon <= 1, got {epsilon}")
    delta = _positive(delta, "delta")
    n = check_int(n, "n", minimum=2)
    k = 2
    gamma = max(14 * k * math.log(2 / delta) / ((n - 1) * epsilon**2), 27 * k / ((n - 1) * epsilon))
    if gamma >= 1:
        raise ValueError(f"n = {n} is too small for central epsilon = {epsilon} (γ = {gamma:.3g})")
    return gamma


def binary_sum_epsilon0(epsilon: float, n: int, delta: float) -> float:
    """The local ε0 of the shuffled binary sum's randomizer at central (ε, δ).

    Binary randomized response at ε0 keeps the bit w.p. e^ε0/(e^ε0 + 1), i.e. it is the
    randomizer of :func:`binary_sum_noise_probability` with γ = 2/(e^ε0 + 1); so
    ε0 = log(2/γ - 1).
    """
    gamma = binary_sum_noise_probability(epsilon, n, delta)
    return math.log(2 / gamma - 1)


def expected_max_abs_normal(sigma: float, count: int) -> float:
    """E[max_j |Z_j|] over ``count`` independent N(0, σ²): ∫_0^∞ 1 - (2Φ(t/σ) - 1)^count dt.

    The largest error over D bins of the one-hot histogram ([Notes] Sec. 4), whose bins are
    independent and, for large n, normal with the protocol's variance.
    """
    sigma = _positive(sigma, "sigma")
    count = check_int(count, "count", minimum=1)

    def tail(t: float) -> float:
        return -math.expm1(count * math.log1p(-2 * stats.norm.sf(t)))

    top = 10.0 + math.sqrt(2 * math.log(2 * count))
    value, _ = integrate.quad(tail, 0.0, top, limit=200, epsabs=1e-12, epsrel=1e-10)
    return sigma * value


def max_abs_normal_bound(sigma: float, count: int) -> float:
    """σ √(2 log(2 count)): the union (moment-generating) bound on E[max_j |Z_j|], the
    √(log D) of [Notes] Sec. 4's O(√(n log D)/ε)."""
    sigma = _positive(sigma, "sigma")
    count = check_int(count, "count", minimum=1)
    return sigma * math.sqrt(2 * math.log(2 * count))


def hashed_frequency_estimate(bucket: float | np.ndarray, n: int, m: int) -> np.ndarray:
    """[Notes] Sec. 5.1: f(v) estimated as (m f̂[h(v)] - n)/(m - 1) from the histogram f̂
    of hashed values, since E[f̂[h(v)]] = (m - 1)/m f(v) + n/m for a random h: [D] -> [m]."""
    m = check_int(m, "m", minimum=2)
    return (m * np.asarray(bucket, dtype=float) - n) / (m - 1)


def collision_probability(m: int, k: int = 1) -> float:
    """[Notes] Sec. 5.2: Pr[h_i(v) = h_i(v') for all i <= k] = 1/m^k for v ≠ v' and k
    independent random hash functions into m cells."""
    m = check_int(m, "m", minimum=1)
    k = check_int(k, "k", minimum=1)
    return float(m) ** -k


__all__ = [
    "binary_sum_epsilon0",
    "binary_sum_noise_probability",
    "central_laplace_mean_sd",
    "collision_probability",
    "expected_max_abs_normal",
    "hashed_frequency_estimate",
    "max_abs_normal_bound",
]
