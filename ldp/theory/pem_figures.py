"""Closed forms behind the report rows of [PEM] Sec. VI and its appendix.

Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*.
"""

from __future__ import annotations

import itertools

import numpy as np

from ldp.theory.frequency import olh_default_g, olh_pq, pure_variance


def pair_support_expectation(
    n: np.ndarray, n_a: np.ndarray, n_b: np.ndarray, n_ab: np.ndarray, p: np.ndarray, q: np.ndarray
) -> np.ndarray:
    """E[I_a^b]: the expected support of a pattern pair in a group of n users ([PEM]
    Appendix): n_a^b p² + (n^b − n_a^b) pq + (n_a − n_a^b) pq + (n − n^b − n_a + n_a^b) q²."""
    return (
        n_ab * p**2
        + (n_b - n_ab) * p * q
        + (n_a - n_ab) * p * q
        + (n - n_b - n_a + n_ab) * q**2  # [PEM] Appendix, E[I_a^b]
    )


def joint_grid() -> dict[str, np.ndarray]:
    """A grid of (n, n_a, n^b, n_a^b, ε) with OLH's p*, q* at each ε (integer g), for the
    unbiasedness identity of the appendix's joint estimator."""
    rows = []
    for n, eps, share_a, share_b, overlap in itertools.product(
        (1_000, 50_000, 1_000_000), (0.5, 1.0, 2.0, 4.0), (0.01, 0.3), (0.02, 0.5), (0.25, 0.5, 1.0)
    ):
        n_a, n_b = round(share_a * n), round(share_b * n)
        p, q = olh_pq(eps, olh_default_g(eps))
        rows.append((n, n_a, n_b, round(overlap * min(n_a, n_b)), p, q))
    table = np.array(rows, dtype=float)
    return dict(zip(("n", "n_a", "n_b", "n_ab", "p", "q"), table.T, strict=True))


def exponential_frequencies(scale: float, support: int) -> np.ndarray:
    """f_j ∝ scale (1 - scale)^(j-1) for j = 1..``support``, normalised: the exponential
    data set of [PEM] Sec. VI-A (scale 0.05 there)."""
    f = scale * (1 - scale) ** np.arange(support)
    return f / f.sum()


def released_squared_error(n: int, frequencies: np.ndarray, share: float, epsilon: float) -> float:
    """Expected (ñ_v - n_v)² of a released value, averaged over ``frequencies`` (the true
    top k): ñ_v = ĉ n/n_ρ with ĉ an OLH estimate (at ε, default g) from the n_ρ ≈ ρ n users
    of the final test, ρ = ``share``.  Var ≈ Var_OLH(ρ n, ρ n_v)/ρ², Eq. (3) with its n_v
    term ([FO] Sec. 4), plus the sampling term n_v (1 - f_v)(1 - ρ)/ρ of who landed in that
    group ([PEM] Sec. VI-E, Fig. 9)."""
    p, q = olh_pq(epsilon, olh_default_g(epsilon))
    f = np.asarray(frequencies, dtype=float)
    counts = n * f
    variance = pure_variance(share * n, p, q, share * counts) / share**2
    variance = variance + counts * (1 - f) * (1 - share) / share
    return float(np.mean(variance))
