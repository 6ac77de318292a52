"""Clopper–Pearson bounds on a privacy loss, and how many trials an audit needs.

An ε-LDP mechanism M satisfies P(M(v) ∈ E) <= e^ε P(M(v') ∈ E) for every event E.  From k
of n reports of v in E and k' of n' reports of v' in E, one-sided Clopper–Pearson bounds
p_lo(k, n) <= P(M(v) ∈ E) and P(M(v') ∈ E) <= p_hi(k', n'), each at level β, give

    ε >= ln(p_lo / p_hi)                 with probability >= 1 - 2β,

the LDP-Auditor bound of Arcolezi & Gambs (PETS 2024).  With m hypotheses (event and
direction pairs) tried on the same reports, β = α/(2m) keeps the probability that any of
the m bounds exceeds the true loss below α (Bonferroni).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ldp.validation import check_int


def check_level(alpha: object, name: str = "alpha") -> float:
    """A probability strictly between 0 and 1."""
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.floating):
        raise TypeError(f"{name} must be a real number, got {type(alpha).__name__}")
    if not 0 < float(alpha) < 1:
        raise ValueError(f"{name} must lie in (0, 1), got {alpha}")
    return float(alpha)


def clopper_pearson_lower(k: np.ndarray | int, n: np.ndarray | int, level: float) -> np.ndarray:
    """The largest p with P(Bin(n, p) >= k) <= level: a lower bound at confidence 1 - level."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(level, k, n - k + 1)
    return np.where(k <= 0, 0.0, bound)


def clopper_pearson_upper(k: np.ndarray | int, n: np.ndarray | int, level: float) -> np.ndarray:
    """The smallest p with P(Bin(n, p) <= k) <= level: an upper bound at confidence 1 - level."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.isf(level, k + 1, n - k)
    return np.where(k >= n, 1.0, bound)


def epsilon_lower_bound(
    k: np.ndarray | int, n: np.ndarray | int, k_other: np.ndarray | int, n_other, level: float
) -> np.ndarray:
    """ln(p_lo(k, n) / p_hi(k', n')), each one-sided at ``level``; -inf when p_lo = 0."""
    low = clopper_pearson_lower(k, n, level)
    high = clopper_pearson_upper(k_other, n_other, level)
    with np.errstate(divide="ignore"):
        return np.log(low) - np.log(high)


def expected_lower_bound(
    p: float,
    p_other: float,
    trials: int,
    *,
    alpha: float = 0.01,
    hypotheses: int = 1,
    quantile: float = 0.5,
) -> float:
    """The lower bound an audit reaches with ``trials`` reports per input, for one event.

    Parameters
    ----------
    p, p_other : float
        P(E | v) and P(E | v'), the event's true probabilities (for the oracles here see
        :func:`ldp.audit.events.optimal_event_probabilities`).
    trials : int
        Reports per input that the event is counted on.
    alpha, hypotheses :
        The audit's level and number of hypotheses (``AuditResult.hypotheses``).
    quantile : float, default 0.5
        The count of v's reports in E is taken at this quantile of its binomial law and
        the count of v''s at the opposite one.  The bound is increasing in the first and
        decreasing in the second, so the audit's bound for this event is at least the
        returned value with probability >= 1 - 2 quantile (0.5: the typical value).

    Returns
    -------
    float
        ln(p_lo/p_hi) at those counts (-inf if the count of v's reports is 0).
    """
    trials = check_int(trials, "trials", minimum=1)
    for value, name in ((p, "p"), (p_other, "p_other")):
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {value}")
    level = check_level(alpha) / (2 * check_int(hypotheses, "hypotheses", minimum=1))
    quantile = check_level(quantile, "quantile")
    k = stats.binom.ppf(quantile, trials, p)
    k_other = stats.binom.isf(quantile, trials, p_other)
    return float(epsilon_lower_bound(k, trials, k_other, trials, level))


def trials_needed(
    p: float,
    p_other: float,
    target: float,
    *,
    alpha: float = 0.01,
    hypotheses: int = 1,
    quantile: float = 0.5,
    max_trials: int = 10**10,
) -> int:
    """The fewest reports per input for :func:`expected_lower_bound` to reach ``target``.

    Raises
    ------
    ValueError
        If even ``max_trials`` do not reach it (e.g. a target above ln(p/p_other)).
    """
    if not math.isfinite(target):
        raise ValueError(f"target must be finite, got {target}")

    def reached(n: int) -> bool:
        bound = expected_lower_bound(
            p, p_other, n, alpha=alpha, hypotheses=hypotheses, quantile=quantile
        )
        return bound >= target

    high = 1
    while not reached(high):
        high *= 2
        if high > max_trials:
            raise ValueError(
                f"no audit of at most {max_trials} trials reaches {target} with p = {p}, "
                f"p_other = {p_other}: the target must stay below ln(p/p_other)"
            )
    low = high // 2
    while high - low > max(1, high // 1000):
        middle = (low + high) // 2
        low, high = (low, middle) if reached(middle) else (middle, high)
    return high
