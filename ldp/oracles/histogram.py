"""Histogram encodings: SHE and THE, USENIX'17 Sec. 4.2, safe in floating point.

The paper's client adds Laplace noise of scale 2/ε to each coordinate of the one-hot
vector e_v.  Done in float64 that leaks the value (Mironov, CCS 2012: fl(1 + L) lies on
the 2^-53 grid, L mostly does not), so neither oracle emits float reports:

* SHE adds *discrete* Laplace noise to s·e_v on an integer grid
  (:mod:`ldp.oracles.discrete_laplace`): reports are integers in [-T, T], shape (n, d)
  int32, each with an exactly known probability; the realised ε is computed from the
  integer tables and is <= ε.  c(v) = Σ_i r_i[v] / s (exactly: divided by the table's
  exact mean shift), unbiased, with Var = n Var(Z)/s² = 8n/ε² (1 - λ²/12 + ...), λ =
  ε/(2s) <= 1/16, computed exactly from the tables.
* THE thresholds on the client and sends the bits 1[x[v'] > θ]: the aggregator only ever
  used those, so estimates keep their law, p* = 1 - ½e^{ε(θ-1)/2}, q* = ½e^{-εθ/2}
  ([FO] Table 1).  The bits are drawn directly as Bernoulli(p*) and Bernoulli(q*) coins
  on the exact 53-bit grid (:mod:`ldp.oracles.exact`), so THE is a unary encoding with
  THE's (p, q) (:class:`ldp.oracles.unary.UnaryEncoding`); thresholding is
  post-processing, so its realised loss ln(p*(1-q*)/((1-p*)q*)) is below ε.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp import theory
from ldp.contract import Capabilities
from ldp.oracles.base import FrequencyOracle, check_variance_input
from ldp.oracles.discrete_laplace import FILL_BYTES, HistogramNoise, histogram_noise
from ldp.oracles.exact import GRID, MARGIN
from ldp.oracles.unary import UnaryEncoding
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_real, check_values

#: SHE's tables have ~280/ε cells: below this budget they grow too large to build.
MIN_SHE_EPSILON = 0.01


@register(color="#d55e00", order=40)
@dataclass(frozen=True, kw_only=True)
class SHE(FrequencyOracle):
    """Summation with histogram encoding, on an integer grid: not pure.

    Each user reports r = clamp(s e_v + Z, -T, T) per coordinate, Z discrete Laplace with
    α^{2s} >= e^{-ε}; ``noise`` holds the grid s, α, T, the exact tables and moments and
    the realised ε (see :mod:`ldp.oracles.discrete_laplace`).  Needs ε >= 0.01.
    """

    name = "SHE"
    capabilities: ClassVar[Capabilities] = Capabilities(report_model="product")
    noise: HistogramNoise = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.epsilon < MIN_SHE_EPSILON:
            raise ParameterError(
                "epsilon",
                self.epsilon,
                f">= {MIN_SHE_EPSILON} for SHE",
                "its exact noise tables need ~280/epsilon cells",
            )
        object.__setattr__(self, "noise", histogram_noise(self.epsilon))

    def __getstate__(self) -> dict:
        """Pickle the parameters only: the tables (~1 MB) are rebuilt (and cached) from ε."""
        state = dict(self.__dict__)
        del state["noise"]
        return state

    def __setstate__(self, state: dict) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        object.__setattr__(self, "noise", histogram_noise(self.epsilon))

    @property
    def grid(self) -> int:
        """s: the signal on the user's own coordinate."""
        return self.noise.grid

    @property
    def shift(self) -> float:
        """E[r | own] - E[r | other], exactly from the tables (= s up to ~1e-30)."""
        return self.noise.mean_own - self.noise.mean_other

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[coordinate j = k | value] for each j (rows) and k in [-T, T] (columns).

        Coordinates are independent (for privacy checks: the "product" report model).
        """
        value = self.check_value(value)
        self.check_probability_table(self.domain_size * len(self.noise.other.masses))
        other = np.array(self.noise.other.masses, dtype=float) / 2.0**128
        out = np.repeat(other[None, :], self.domain_size, axis=0)
        out[value] = np.array(self.noise.own.masses, dtype=float) / 2.0**128
        return out

    def adversary_success(self, prior: np.ndarray) -> float | None:
        """The Bayesian adversary's success, exactly from the integer noise tables.

        The coordinates are independent and only the user's own has the "own" table, so
        this is :func:`ldp.adversary.own_coordinate_success` with L = own/other over the
        2T + 1 cells (None, hence an empirical estimate, when too many distinct prior
        weights compete).
        """
        from ldp.adversary import own_coordinate_success

        own, other = (
            np.array(t.masses, dtype=float) / 2.0**128 for t in (self.noise.own, self.noise.other)
        )
        return own_coordinate_success(prior, own / other, other)

    def log_likelihoods(self, reports: np.ndarray) -> np.ndarray:
        """ln Pr[r_i | v] up to a constant per report: ln own(r_i[v]) - ln other(r_i[v]).

        The coordinates are independent, each with the "other" table except v's own, so
        the factors of the other coordinates cancel from every comparison of values (the
        empirical adversary of :mod:`ldp.adversary` reads this).
        """
        reports = self._check_reports(reports)
        self.check_likelihood_table(reports.shape[0], cell_bytes=16.0)  # int64 index, float
        own, other = (
            np.log(np.array(t.masses, dtype=float)) for t in (self.noise.own, self.noise.other)
        )
        return (own - other)[reports.astype(np.int64) + self.noise.support]

    def audit_events(self, v: int, v_prime: int) -> list:
        """r[v] >= s and r[v'] <= 0; mirrored (ratio α^{-2s} = e^ε, from the tables)."""
        from ldp.audit.events import histogram_events

        return histogram_events(v, v_prime, int(self.grid))

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(r[v] >= s and r[v'] <= 0) given v and given v', from the noise tables."""
        values, s = self.noise.values, self.grid
        own, other = (
            np.array(t.masses, dtype=float) / 2.0**128 for t in (self.noise.own, self.noise.other)
        )
        at_least, at_most = values >= s, values <= 0
        return (
            float(own[at_least].sum() * other[at_most].sum()),
            float(other[at_least].sum() * own[at_most].sum()),
        )

    def report_bytes(self, n_users: int) -> int:
        """4 n d bytes (int32 coordinates)."""
        return 4 * n_users * self.domain_size

    def working_bytes(self, n_users: int) -> int:
        """The reports, plus the user's own coordinates: their row and column indices, the
        draws and their shifted copy (24 bytes a user; 32 counted), and a fill's own."""
        return self.report_bytes(n_users) + 32 * n_users + FILL_BYTES

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """clamp(s e_v + Z, -T, T) for each user, shape (n, d) int32: every coordinate
        drawn from the other coordinates' table, then each user's own one redrawn."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        n, d, noise = values.shape[0], self.domain_size, self.noise
        self.check_report_size(n)
        out = noise.other.fill(rng, np.empty((n, d), dtype=np.int32), -noise.support)
        if n:
            out[np.arange(n), values] = noise.own.draw(rng, n) - noise.support
        return out

    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        reports = np.asarray(reports)
        if (
            reports.dtype.kind not in "iu"
            or reports.ndim != 2
            or reports.shape[1] != self.domain_size
        ):
            raise ValueError(
                f"reports must be integer arrays of shape (n, {self.domain_size}), "
                f"got {reports.shape} {reports.dtype}"
            )
        bound = self.noise.support  # T: perturb's reports lie in [-T, T]
        if reports.size and (int(reports.min()) < -bound or int(reports.max()) > bound):
            bad = int(reports.min()) if int(reports.min()) < -bound else int(reports.max())
            raise ValueError(
                f"reports must lie in [-{bound}, {bound}] (SHE's clamped noise at "
                f"epsilon = {self.epsilon}), found {bad}"
            )
        return reports

    def n_reports(self, reports: np.ndarray) -> int:
        return int(self._check_reports(reports).shape[0])

    def in_support(self, reports: np.ndarray) -> np.ndarray:
        """Per report: d integer coordinates, each in [-T, T] (the clamp's range); a batch
        of another shape or dtype is outside as a whole."""
        reports = np.asarray(reports)
        n = reports.shape[0] if reports.ndim else 1
        if reports.dtype.kind not in "iu" or reports.ndim != 2:
            return np.zeros(n, dtype=bool)
        if reports.shape[1] != self.domain_size or not reports.size:
            return np.full(n, reports.shape[1] == self.domain_size)
        bound = self.noise.support
        return (reports.min(axis=1) >= -bound) & (reports.max(axis=1) <= bound)

    def estimate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """c(v) = (Σ_i r_i[v] - n E[r | other]) / shift: unbiased for the realised tables."""
        chosen = self.candidates(candidates)
        reports = self._check_reports(reports)
        total = reports[:, chosen].sum(axis=0, dtype=np.int64)
        return (total - reports.shape[0] * self.noise.mean_other) / self.shift

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """(n_v Var_own + (n - n_v) Var_other)/shift², from the exact tables.

        Var_own = Var_other up to ~1e-30 relative, so in float64 this is n Var(Z)/s²
        = 8n/ε² (1 - λ²/12 + ...) whatever the counts ([FO] Table 1 up to 0.03%).
        """
        n_users, true_count = check_variance_input(n_users, true_count)
        noise = self.noise
        spread = true_count * noise.var_own + (n_users - true_count) * noise.var_other
        return float(spread / self.shift**2)

    def _simulate_counts(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """(n_v s + NB(n, 1-α) - NB(n, 1-α)) / shift, independently over v.

        The sum of n discrete Laplace draws, drawn as a difference of two negative
        binomials; within n |C| ``noise.tv_per_draw`` (< 1e-12) of the reports engine in
        total variation (see :mod:`ldp.oracles.discrete_laplace`).
        """
        counts, n = candidate_counts, n_users
        if n == 0:
            return np.zeros(counts.shape[0])
        success = 1.0 - self.noise.alpha  # exact: α is in (1/2, 1)
        size = counts.shape[0]
        noise = rng.negative_binomial(n, success, size) - rng.negative_binomial(n, success, size)
        return (counts * self.grid + noise) / self.shift


@register(color="#ca9161", order=50)
@dataclass(frozen=True, kw_only=True)
class THE(UnaryEncoding):
    """Thresholding with histogram encoding, thresholded on the client: bits, like OUE.

    A user sends the bits 1[x[v'] > θ] of the noisy histogram x, drawn directly as coins
    with p* = 1 - ½e^{ε(θ-1)/2} (own bit) and q* = ½e^{-εθ/2} (other bits).  ``theta``
    defaults to the variance-optimal θ in [1/2, 1] (:func:`ldp.theory.the_optimal_theta`).
    Representable for ε <= 2 ln(2^52) / max(θ, 1-θ).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits", additive=True, adversary_support_only=True
    )

    theta: float | None = None
    name = "THE"

    def __post_init__(self) -> None:
        FrequencyOracle.__post_init__(self)  # epsilon first: θ may derive from it
        if self.theta is None:
            object.__setattr__(self, "theta", theory.the_optimal_theta(self.epsilon))
        theta = check_real(self.theta, "theta", minimum=0, maximum=1, open_minimum=True)
        object.__setattr__(self, "theta", theta)
        self._set_coins()

    def coins(self) -> tuple[float, float, float, float]:
        """p = 1 - ½e^{ε(θ-1)/2}, q = ½e^{-εθ/2} and their complements ([FO] Sec. 4.2)."""
        p, q = theory.the_pq(self.epsilon, self.theta)
        return p, 0.5 * math.exp(self.epsilon * (self.theta - 1) / 2), q, 1 - q

    def largest_safe_epsilon(self) -> float:
        """½e^{-εt/2} >= one grid step for t = θ and t = 1 - θ."""
        return 2 * math.log(GRID * (1 - MARGIN) / 2) / max(self.theta, 1 - self.theta)
