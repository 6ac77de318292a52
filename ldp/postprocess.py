"""Consistency post-processing of frequency estimates (Wang et al., NDSS 2020).

Citations ``[CFO]`` are to T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Škorić, N. Li,
*Locally Differentially Private Frequency Estimation with Consistency*, NDSS 2020, Sec. IV.

An oracle's unbiased estimates ĉ(v) can be negative and need not sum to n.  Each method
below maps the full-domain estimates to ones that use that knowledge; all are
post-processing, so privacy is untouched, and all but ``norm`` give up unbiasedness for a
smaller error on some task.  The unbiased estimate stays the default everywhere: these
are only applied when asked for (``postprocess=<name>`` in the harness).

Every function takes the estimates (counts or frequencies) and ``total``, the sum they
should have (n for counts, 1 for frequencies); ``power`` and ``power_ns`` also take
``variance``, the variance of one estimate of a value nobody holds (the oracle's
``variance(n)``).  They are registered by name in :data:`METHODS`.

* ``base_pos``   negative estimates become 0 ([CFO] "Base-Pos").
* ``norm``       add the same δ to every estimate so that they sum to ``total``
                 ([CFO] "Norm"; still unbiased, may stay negative).
* ``norm_mul``   negatives become 0, then all are scaled by one factor to sum to
                 ``total`` ([CFO] "Norm-Mul").
* ``norm_cut``   negatives become 0; then, while the sum is above ``total``, the
                 smallest remaining estimates become 0: the result keeps the estimates
                 at or above the smallest θ with Σ_{ĉ(v) >= θ} ĉ(v) <= total ([CFO]
                 "Norm-Cut").  A sum below ``total`` is left as it is.
* ``norm_sub``   ĉ'(v) = max(ĉ(v) + δ, 0) with one δ making the sum ``total`` ([CFO]
                 "Norm-Sub"), computed by the paper's iteration (shift the positive
                 estimates, drop those that turn negative, repeat).
* ``simplex_projection``  the Euclidean projection onto {x >= 0, Σ x = total}, computed
                 by sorting (Duchi et al., ICML 2008).  It equals ``norm_sub`` ([CFO]
                 Sec. IV-C shows Norm-Sub solves this constrained least squares); the two
                 independent algorithms are tested against each other.
* ``power``      fit a power-law prior p(x) ∝ x^{-α} on [1/total, 1] (frequencies) by
                 maximum likelihood of the estimates under Gaussian noise of the oracle's
                 variance, then replace each estimate by its posterior mean ([CFO] "Power").
* ``power_ns``   ``power`` followed by ``norm_sub`` ([CFO] "PowerNS").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ldp.lazy import lazy_module

optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")

#: Points of the frequency grid on which ``power`` integrates its prior.
POWER_GRID = 400
#: The range of power-law exponents α ``power`` searches.
POWER_ALPHA = (0.01, 5.0)


def _check(estimates: object, total: object) -> tuple[np.ndarray, float]:
    array = np.asarray(estimates, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"estimates must be a non-empty 1-D array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("estimates must be finite")
    if isinstance(total, bool) or not isinstance(total, int | float | np.number):
        raise TypeError(f"total must be a number, got {type(total).__name__}")
    if not (np.isfinite(total) and total > 0):
        raise ValueError(f"total must be finite and > 0, got {total}")
    return array, float(total)


def base_pos(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """max(ĉ(v), 0) for every v ([CFO] Base-Pos)."""
    array, _ = _check(estimates, total)
    return np.maximum(array, 0.0)


def norm(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """ĉ(v) + (total - Σ ĉ)/d ([CFO] Norm): sums to ``total``, stays unbiased."""
    array, total = _check(estimates, total)
    return array + (total - array.sum()) / array.shape[0]


def norm_mul(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """max(ĉ, 0) scaled to sum to ``total`` ([CFO] Norm-Mul); all zero stays all zero."""
    positive = base_pos(estimates, total)
    mass = positive.sum()
    return positive * (float(total) / mass) if mass > 0 else positive


def norm_cut(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """Keep the largest positive estimates whose sum stays <= ``total`` ([CFO] Norm-Cut).

    θ is the smallest value with Σ_{ĉ(v) >= θ} ĉ(v) <= total over the positive estimates;
    everything below θ becomes 0 (ties at θ are kept or dropped together).
    """
    array, total = _check(estimates, total)
    out = np.maximum(array, 0.0)
    if out.sum() <= total:
        return out
    values = np.unique(out[out > 0])[::-1]  # distinct positive values, largest first
    mass_at_least = np.cumsum([out[out == v].sum() for v in values])
    kept = int(np.searchsorted(mass_at_least, total, side="right"))  # levels fitting in
    theta = values[kept - 1] if kept else np.inf
    return np.where(out >= theta, out, 0.0)


def norm_sub(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """max(ĉ(v) + δ, 0) summing to ``total`` ([CFO] Norm-Sub), by the paper's iteration.

    Repeat: spread the missing mass equally over the values still in play, and drop from
    play (set to 0) those that became negative; stops when none did.  At most d rounds.
    """
    array, total = _check(estimates, total)
    active = np.ones(array.shape[0], dtype=bool)
    out = array.copy()
    while True:
        delta = (total - out[active].sum()) / active.sum()
        out[active] += delta
        negative = active & (out < 0)
        if not negative.any():
            break
        out[negative] = 0.0
        active &= ~negative
    out[~active] = 0.0
    return out


def simplex_projection(
    estimates: np.ndarray, total: float, variance: float | None = None
) -> np.ndarray:
    """argmin_x ||x - ĉ||_2 subject to x >= 0, Σ x = total (sort-based, Duchi et al. 2008).

    With u the estimates sorted in decreasing order, ρ the largest j with
    u_j + (total - Σ_{i<=j} u_i)/j > 0 and τ = (Σ_{i<=ρ} u_i - total)/ρ, x = max(ĉ - τ, 0).
    """
    array, total = _check(estimates, total)
    u = np.sort(array)[::-1]
    cumulative = np.cumsum(u)
    j = np.arange(1, u.shape[0] + 1)
    rho = int(np.flatnonzero(u + (total - cumulative) / j > 0)[-1]) + 1
    tau = (cumulative[rho - 1] - total) / rho
    return np.maximum(array - tau, 0.0)


def _power_posterior(observed: np.ndarray, sigma: float, floor: float) -> tuple[float, np.ndarray]:
    """Fit α by maximum likelihood; return it and the posterior means (frequency units)."""
    grid = np.geomspace(floor, 1.0, POWER_GRID)
    log_width = np.log(np.gradient(grid))  # quadrature weights of the log-spaced grid
    # log φ((f - x)/σ) for every estimate (rows) and grid point (columns), up to constants
    log_noise = -0.5 * ((observed[:, None] - grid[None, :]) / sigma) ** 2

    def log_prior(alpha: float) -> np.ndarray:
        unnormalised = -alpha * np.log(grid) + log_width
        return unnormalised - special.logsumexp(unnormalised)

    def negative_log_likelihood(alpha: float) -> float:
        return -float(special.logsumexp(log_noise + log_prior(alpha)[None, :], axis=1).sum())

    fit = optimize.minimize_scalar(negative_log_likelihood, bounds=POWER_ALPHA, method="bounded")
    alpha = float(fit.x)
    joint = log_noise + log_prior(alpha)[None, :]
    weights = np.exp(joint - special.logsumexp(joint, axis=1, keepdims=True))
    return alpha, weights @ grid


def power(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """Posterior means under a fitted power-law prior and Gaussian noise ([CFO] Power).

    Frequencies f̃ = ĉ/total are modelled as x + N(0, σ²) with σ² = variance/total² and
    x ~ p(x) ∝ x^{-α} on [1/total, 1] (a log-spaced grid of ``POWER_GRID`` points); α is
    the maximum-likelihood exponent in ``POWER_ALPHA``; each ĉ(v) becomes total E[x | f̃(v)].
    """
    array, total = _check(estimates, total)
    if variance is None or not (np.isfinite(variance) and variance > 0):
        raise ValueError(f"variance must be finite and > 0 for power, got {variance}")
    floor = min(1.0 / total, 0.5)
    _, means = _power_posterior(array / total, float(np.sqrt(variance)) / total, floor)
    return total * means


def power_ns(estimates: np.ndarray, total: float, variance: float | None = None) -> np.ndarray:
    """``power`` then ``norm_sub`` ([CFO] PowerNS)."""
    return norm_sub(power(estimates, total, variance), total)


#: Every post-processing by name (the harness's ``postprocess=`` choices).
METHODS: dict[str, Callable[..., np.ndarray]] = {
    "base_pos": base_pos,
    "norm": norm,
    "norm_mul": norm_mul,
    "norm_cut": norm_cut,
    "norm_sub": norm_sub,
    "simplex_projection": simplex_projection,
    "power": power,
    "power_ns": power_ns,
}


def apply(
    name: str | None, estimates: np.ndarray, total: float, variance: float | None = None
) -> np.ndarray:
    """The named post-processing of the estimates; ``None`` returns them unchanged."""
    if name is None:
        return np.asarray(estimates, dtype=float)
    if name not in METHODS:
        raise ValueError(f"postprocess must be one of {sorted(METHODS)} or None, got {name!r}")
    return METHODS[name](estimates, total, variance)
