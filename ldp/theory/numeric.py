"""Closed forms of one-dimensional mean estimation under ε-LDP, for values t in [-1, 1].

[W19] Wang, Xiao, Yang, Zhao, Hui, Shin, Yang, Yu, *Collecting and Analyzing
Multidimensional Data with Local Differential Privacy* (ICDE 2019), Sec. III: Duchi et
al.'s one-dimensional mechanism (Duchi, Jordan, Wainwright, JASA 2018) as restated in
Sec. III-A, the Piecewise Mechanism (PM, Sec. III-B) and the Hybrid Mechanism (HM,
Sec. III-C); the Laplace mechanism (sensitivity 2) is the baseline, here drawn on a grid
(:func:`laplace_grid_variance`; Mironov, CCS 2012, for why).

Each function gives Var[t* | t], the variance of one user's unbiased report t* given the
value t; the estimate of the mean of n values t_i has variance Σ_i Var[t* | t_i] / n².

>>> round(float(pm_variance(1.0, 0.0)), 4), round(float(duchi_variance(1.0, 0.0)), 4)
(3.6821, 4.6827)
>>> from ldp.theory import numeric
>>> round(numeric.PM_BEATS_DUCHI, 3), round(numeric.HM_THRESHOLD, 3)
(1.29, 0.609)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ldp.theory.frequency import discrete_laplace_variance


def duchi_bound(epsilon: float) -> float:
    """B = (e^ε + 1)/(e^ε - 1): Duchi's reports are ±B ([W19] Sec. III-A, Algorithm 1)."""
    return 1.0 + 2.0 / math.expm1(epsilon)


def duchi_variance(epsilon: float, t: np.ndarray | float) -> np.ndarray | float:
    """Var[t*|t] = ((e^ε+1)/(e^ε-1))² - t² ([W19] Sec. III-A, Eq. (2)); worst case at t = 0."""
    return duchi_bound(epsilon) ** 2 - np.square(t)


def pm_bound(epsilon: float) -> float:
    """C = (e^{ε/2} + 1)/(e^{ε/2} - 1): PM's reports lie in [-C, C] ([W19] Algorithm 2)."""
    return 1.0 + 2.0 / math.expm1(epsilon / 2)


def pm_variance(epsilon: float, t: np.ndarray | float) -> np.ndarray | float:
    """Var[t*|t] = t²/(e^{ε/2}-1) + (e^{ε/2}+3)/(3(e^{ε/2}-1)²) ([W19] Lemma 1).

    Worst case at |t| = 1: 4e^{ε/2}/(3(e^{ε/2}-1)²).
    """
    root = math.expm1(epsilon / 2)  # e^{ε/2} - 1
    return np.square(t) / root + (root + 4) / (3 * root**2)


def hm_alpha(epsilon: float) -> float:
    """HM's probability of running PM: 1 - e^{-ε/2} above ε* ≈ 0.61, else 0 ([W19] Sec. III-C).

    With α = 1 - e^{-ε/2} the t² terms of the mixture's variance cancel; below ε*
    (:data:`HM_THRESHOLD`) PM's variance at t = 0 exceeds Duchi's, and α = 0 is optimal.
    """
    return -math.expm1(-epsilon / 2) if epsilon > _crossings()["HM_THRESHOLD"] else 0.0


def hm_variance(epsilon: float, t: np.ndarray | float) -> np.ndarray | float:
    """Var[t*|t] = α Var_PM[t*|t] + (1-α) Var_Duchi[t*|t] ([W19] Sec. III-C).

    Both parts are unbiased, so the mixture's variance is the mixture of the variances.
    Above ε* it does not depend on t: (e^{ε/2}+3)/(3e^{ε/2}(e^{ε/2}-1)) +
    (e^ε+1)²/(e^{ε/2}(e^ε-1)²) ([W19] Lemma 3).
    """
    alpha = hm_alpha(epsilon)
    return alpha * pm_variance(epsilon, t) + (1 - alpha) * duchi_variance(epsilon, t)


def laplace_variance(epsilon: float, t: np.ndarray | float = 0.0) -> np.ndarray | float:
    """Var[t*|t] = 2(2/ε)² = 8/ε²: [W19]'s baseline, Laplace noise of scale Δ/ε, Δ = 2 (any t).

    The mechanism of :mod:`ldp.numeric.laplace` is its discrete counterpart (private as
    float64 bytes); its variance is :func:`laplace_grid_variance`, within 0.04% of this.
    """
    return np.zeros_like(np.asarray(t, dtype=float)) + 8.0 / epsilon**2


def laplace_grid(epsilon: float) -> int:
    """s = 2^⌈log2(8ε)⌉, at least 1: the grid 1/s of the discrete Laplace mechanism.

    λ = ε/(2s) is in (1/32, 1/16] (ε/2 below ε = 1/8), SHE's 1/16 at most
    (:mod:`ldp.oracles.discrete_laplace`); a power of two keeps ts and r/s exact in float64.
    """
    s = 1
    while s < 8 * epsilon:
        s *= 2
    return s


def laplace_grid_variance(epsilon: float, t: np.ndarray | float = 0.0) -> np.ndarray | float:
    """Var[t*|t] = 2α/((1-α)² s²) + f(1-f)/s² for the discrete Laplace mechanism.

    t is rounded to k/s without bias (f = ts - ⌊ts⌋, s = :func:`laplace_grid`) and the
    integer noise has P(Z = z) ∝ α^|z|, α = e^{-ε/(2s)}
    (:func:`ldp.theory.frequency.discrete_laplace_variance`).  With λ = ε/(2s) the ratio to
    8/ε² is (λ/2)²/sinh²(λ/2) + λ² f(1-f)/2, between 1 - λ²/12 (t on the grid) and
    1 + λ²/24 (f = 1/2): within [1 - 3.3e-4, 1 + 1.7e-4] for λ <= 1/16.
    """
    s = laplace_grid(epsilon)
    scaled = np.asarray(t, dtype=float) * s
    f = scaled - np.floor(scaled)
    return discrete_laplace_variance(math.exp(-epsilon / (2 * s)), s) + f * (1 - f) / s**2


def worst_case_variance(name: str, epsilon: float) -> float:
    """max over t in [-1, 1] of Var[t*|t]: Duchi's, PM's and HM's are monotone in t², so the
    max is at t = 0 or |t| = 1; the discrete Laplace mechanism's is at a grid midpoint."""
    if name == "Laplace":
        return float(laplace_grid_variance(epsilon, 0.5 / laplace_grid(epsilon)))
    formula = {"Duchi": duchi_variance, "PM": pm_variance, "HM": hm_variance}[name]
    return float(max(formula(epsilon, 0.0), formula(epsilon, 1.0)))


@functools.cache
def _crossings() -> dict[str, float]:
    """The two crossings below, solved on first use (scipy's root finder is imported then)."""
    from scipy.optimize import brentq

    return {
        "HM_THRESHOLD": brentq(lambda e: pm_variance(e, 0.0) - duchi_variance(e, 0.0), 0.1, 3.0),
        "PM_BEATS_DUCHI": brentq(lambda e: pm_variance(e, 1.0) - duchi_variance(e, 0.0), 0.3, 5.0),
    }


def __getattr__(name: str) -> float:
    """``HM_THRESHOLD``: ε* ≈ 0.61 where PM's variance at t = 0 equals Duchi's worst case
    ([W19] Sec. III-C).  ``PM_BEATS_DUCHI``: ε ≈ 1.29 above which PM's worst-case variance
    is below Duchi's ([W19] Sec. III-B).  Module attributes computed on first read."""
    if name in ("HM_THRESHOLD", "PM_BEATS_DUCHI"):
        return _crossings()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
