"""Histogram encodings: SHE and THE, USENIX'17 Sec. 4.2.

A value v becomes the one-hot vector e_v, and each user adds independent Laplace noise of
scale 2/ε to every coordinate; two one-hot vectors differ by 2 in L1 norm, so the report
is ε-LDP.  The report is d reals, shape (n, d) float64: this is the costly encoding.

* SHE sums the reports: c(v) = Σ_i x_i[v], unbiased with Var = 8n/ε² (Table 1).
* THE supports v when x_i[v] > θ; it is pure with p* = 1 - ½e^{ε(θ-1)/2}, q* = ½e^{-εθ/2}.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ldp import theory
from ldp._validation import check_generator, check_values
from ldp.oracles.base import FrequencyOracle, PureOracle, check_variance_input
from ldp.registry import register

CHUNK = 1 << 22


def _noisy_one_hot(oracle: FrequencyOracle, values, rng) -> np.ndarray:
    values = check_values(values, oracle.domain_size).astype(np.int64, copy=False)
    rng = check_generator(rng)
    d, scale = oracle.domain_size, 2.0 / oracle.epsilon
    out = np.empty((values.shape[0], d))
    rows = max(1, CHUNK // d)
    for start in range(0, values.shape[0], rows):
        block = out[start : start + rows]
        block[:] = rng.laplace(0.0, scale, size=block.shape)
        block[np.arange(block.shape[0]), values[start : start + rows]] += 1.0
    return out


def _check_reports(oracle: FrequencyOracle, reports) -> np.ndarray:
    reports = np.asarray(reports)
    if reports.dtype.kind != "f" or reports.ndim != 2 or reports.shape[1] != oracle.domain_size:
        raise ValueError(
            f"reports must be real arrays of shape (n, {oracle.domain_size}), "
            f"got {reports.shape} {reports.dtype}"
        )
    return reports


def laplace_log_density(oracle: FrequencyOracle, reports: np.ndarray, value: int) -> np.ndarray:
    """log f(x | value) of each report row: Laplace(2/ε) noise around e_value."""
    reports = _check_reports(oracle, reports)
    scale = 2.0 / oracle.epsilon
    centre = np.zeros(oracle.domain_size)
    centre[value] = 1.0
    return -np.abs(reports - centre).sum(axis=1) / scale - oracle.domain_size * np.log(2 * scale)


class _HistogramEncoding:
    """The client shared by SHE and THE: a noisy one-hot vector per user."""

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """e_v + Laplace(2/ε)^d for each user, shape (n, d) (THE thresholds at the aggregator)."""
        return _noisy_one_hot(self, values, rng)

    def log_density(self, reports: np.ndarray, value: int) -> np.ndarray:
        """log f(report | value) (for privacy checks)."""
        return laplace_log_density(self, reports, value)

    def n_reports(self, reports: np.ndarray) -> int:
        return int(np.shape(reports)[0])


@register(color="#d55e00", order=40)
@dataclass(frozen=True, kw_only=True)
class SHE(_HistogramEncoding, FrequencyOracle):
    """Summation with histogram encoding: not pure; Var = 8n/ε² whatever the counts."""

    name = "SHE"

    def estimate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """c(v) = Σ_i x_i[v]: the noise has mean zero, so the sum is unbiased."""
        chosen = self.candidates(candidates)
        reports = _check_reports(self, reports)
        return reports[:, chosen].sum(axis=0)

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """8n/ε² ([FO] Table 1); exact, the true count does not enter."""
        n_users, _ = check_variance_input(n_users, true_count)
        return float(n_users * theory.she_variance(self.epsilon))

    def simulate_candidates(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """n_v + (sum of n Laplace(b)) = n_v + Gamma(n, b) - Gamma(n, b), independently over v.

        A Laplace(b) variable is the difference of two Exponential(b) variables, and a sum of
        n independent Exponential(b) is Gamma(n, b).
        """
        counts, n, rng = self._check_simulation_input(candidate_counts, n_users, rng)
        if n == 0:
            return np.zeros(counts.shape[0])
        scale = 2.0 / self.epsilon
        noise = rng.gamma(n, scale, counts.shape[0]) - rng.gamma(n, scale, counts.shape[0])
        return counts + noise


@register(color="#ca9161", order=50)
@dataclass(frozen=True, kw_only=True)
class THE(_HistogramEncoding, PureOracle):
    """Thresholding with histogram encoding: report x, support v when x[v] > θ.

    ``theta`` defaults to the variance-optimal θ in [1/2, 1] (:func:`ldp.theory.the_optimal_theta`).
    """

    theta: float | None = None
    name = "THE"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.theta is None:
            object.__setattr__(self, "theta", theory.the_optimal_theta(self.epsilon))
        theta = self.theta
        if isinstance(theta, bool) or not isinstance(theta, numbers.Real):
            raise TypeError(f"theta must be a real number, got {type(theta).__name__}")
        if not 0 < float(theta) <= 1:
            raise ValueError(f"theta must lie in (0, 1], got {theta}")
        object.__setattr__(self, "theta", float(theta))

    @property
    def p_star(self) -> float:
        return theory.the_pq(self.epsilon, self.theta)[0]

    @property
    def q_star(self) -> float:
        return theory.the_pq(self.epsilon, self.theta)[1]

    def support_counts(self, reports: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        reports = _check_reports(self, reports)
        return (reports[:, candidates] > self.theta).sum(axis=0, dtype=np.int64)
