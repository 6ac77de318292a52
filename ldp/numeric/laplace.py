"""The Laplace mechanism for a value in [-1, 1], on a grid: the baseline of [W19] Sec. III.

[W19] (Wang et al., ICDE 2019) uses t* = t + Lap(2/ε) (sensitivity Δ = 2) as its baseline,
with Var[t*|t] = 2 (2/ε)² = 8/ε² for every t.  Drawn in float64 (``rng.laplace``,
inversion through a logarithm, then an addition) it is not ε-LDP as the bytes it emits:
Mironov (*On Significance of the Least Significant Bits for Differential Privacy*, CCS
2012) showed that fl(t + noise) takes values a plain draw almost never does (with t = 1 a
report in (-1/2, 1/2) is always a multiple of 2^-53), and the auditor's float events put
the loss of that version above 5 at ε = 1.  So the mechanism here is its discrete
counterpart, which is ε-LDP for the float64 reports as emitted (``exact_bytes``).

The mechanism.  With a grid step 1/s, s = 2^⌈log2(8ε)⌉ (at least 1;
:func:`ldp.theory.numeric.laplace_grid`):

1. the user rounds t to k/s, k = ⌊ts⌋ + B, B ~ Bernoulli(ts - ⌊ts⌋) (unbiased randomised
   rounding: E[k/s] = t; k is in [-s, s]);
2. adds exact discrete Laplace noise Z, P(Z = z) ∝ α^|z| with α^{2s} >= e^{-ε} (two signals
   in [-s, s] are at most 2s grid steps apart), drawn from a 128-bit integer table
   (:func:`ldp.oracles.discrete_laplace.shifted_noise`, the machinery of SHE's noise);
3. clamps k + Z to [-T, T], T = s + W (post-processing; the folded tails keep every ratio
   in [e^{-ε}, e^ε] for the integers, and the realised loss is computed exactly from them);
4. sends r/s as a float64: s is a power of two, so r/s is exact, and the bytes are a
   function of the integer r alone.

The rounding is the user's own pre-processing: whatever k it picks, the law of r given k is
within e^ε of the law given any other k, so privacy does not depend on it.

Moments.  E[t*|t] = t, up to the rounding coin's 53-bit grid (a bias below 2^-52/s) and
the clamp (``noise.clamp_bias`` < 10^-25 grid steps).  Var[t*|t] = (Var(Z) + f(1-f))/s²,
f = ts - ⌊ts⌋, with Var(Z) the exact variance of the integer table (``noise.variance``),
2α/(1-α)² in float64, so Var(Z)/s² = 8/ε² · (λ/2)²/sinh²(λ/2) for λ = ε/(2s) in
(1/32, 1/16] (λ = ε/2 below ε = 1/8); f(1-f)/s² is the data-dependent rounding variance,
0 on the grid and largest at its midpoints (f = 1/2: 1/(4s²) = 8/ε² · λ²/8).  Relative to
[W19]'s 8/ε² the ratio is between 1 - λ²/12 (on the grid, e.g. t = 0, ±1) and 1 + λ²/24
(the worst case, at midpoints): within 0.033% below and 0.017% above.

Sampled engine.  The estimated mean is (Σ_i ⌊t_i s⌋ + Σ_i B_i + Σ_i Z_i)/(s n): the
Bernoulli sum is exact (binomials over the distinct rounding coins), and the noise sum is
drawn as NB(n, 1-α) - NB(n, 1-α), the law of n untruncated discrete Laplace draws (a
difference of two geometric variables each).  Within n ``noise.tv_per_draw`` (< 10^-29 n)
of the reports engine in total variation; both engines' estimates are an integer divided
by s n, correctly rounded.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.numeric.base import MeanProtocol, distinct, law_input, on_grid, sampled_input
from ldp.oracles import exact
from ldp.oracles.discrete_laplace import ShiftedNoise, shifted_noise
from ldp.registry import register
from ldp.theory import numeric as theory
from ldp.validation import ParameterError

#: The smallest ε: the noise table has ~280/ε cells.
MIN_LAPLACE_EPSILON = 0.01


@register(kind="mean", order=3040)
@dataclass(frozen=True, kw_only=True)
class Laplace(MeanProtocol):
    """t rounded to the grid 1/s, plus exact discrete Laplace noise: [W19]'s baseline,
    8/ε² within 0.04%, ε-LDP as float64 bytes (see the module docstring)."""

    name = "Laplace"
    #: measured with tracemalloc at n = 10^6 (base.BYTES_PER_USER), with a margin
    bytes_per_user: ClassVar[Mapping[str, int]] = {"simulate": 56, "perturb": 64, "variance": 40}
    #: this mechanism's own closed form; [W19]'s 8/ε² is
    #: :func:`ldp.theory.numeric.laplace_variance`, within 0.04% of it
    paper_form = staticmethod(theory.laplace_grid_variance)
    capabilities: ClassVar[Capabilities] = Capabilities()
    exact_bytes: ClassVar[bool] = True
    bounded: ClassVar[bool] = False
    noise: ShiftedNoise = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.epsilon < MIN_LAPLACE_EPSILON:
            raise ParameterError(
                "epsilon",
                self.epsilon,
                f">= {MIN_LAPLACE_EPSILON} for Laplace",
                "its exact noise table needs ~280/epsilon cells",
            )
        self._build()

    def _build(self) -> None:
        noise = shifted_noise(self.epsilon, theory.laplace_grid(self.epsilon))
        object.__setattr__(self, "noise", noise)

    def __getstate__(self) -> dict:
        """Pickle the parameters only: the table is rebuilt (and cached) from ε."""
        state = dict(self.__dict__)
        del state["noise"]
        return state

    def __setstate__(self, state: dict) -> None:
        for key, value in state.items():
            object.__setattr__(self, key, value)
        self._build()

    @property
    def grid(self) -> int:
        """s: reports are multiples of 1/s."""
        return self.noise.grid

    @property
    def bound(self) -> float:
        """1 + 10·(2/ε): a scale for the audit's bins (the reports reach ±T/s, T = s + W,
        but beyond this a report has probability below e^-10/2)."""
        return 1.0 + 20.0 / self.epsilon

    @property
    def kappa(self) -> float:
        return 1.0

    def _coins(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """⌊ts⌋ and the 53-bit threshold of the rounding coin, ⌊(ts - ⌊ts⌋) 2^53⌋.

        ts is exact (s is a power of two), so is ts - ⌊ts⌋ for |ts| >= 1; for smaller |ts|
        its rounding and the floor move P(up) from ts - ⌊ts⌋ by less than 2^-52.
        """
        scaled = values * self.grid
        floor = np.floor(scaled)
        threshold = np.floor((scaled - floor) * exact.GRID).astype(np.int64)
        return floor.astype(np.int64), threshold

    def _up(self, t: np.ndarray | float) -> np.ndarray:
        """The realised P(B = 1 | t)."""
        return self._coins(np.asarray(t, dtype=np.float64))[1] / exact.GRID

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        floor, threshold = self._coins(values)
        signal = floor + exact.below(rng, threshold, values.shape[0])
        return self.noise.draw(signal, rng) / self.grid

    def in_support(self, reports: np.ndarray) -> np.ndarray:
        """Per report: a multiple k/s of the grid with |k| <= T, the clamp (float64, not
        -0.0): what ``clamp(k + Z, -T, T) / s`` can emit."""
        return on_grid(reports, 1.0 / self.grid, self.noise.support)

    def report_cdf(self, t: float, x: np.ndarray) -> np.ndarray:
        """P(report <= x | t) (:class:`ldp.audit.law.HasReportLaw`), from the integer masses:
        the rounding coin's two signals k, then clamp(k + Z, -T, T) / s."""
        t = law_input(t)
        floor, threshold = self._coins(np.array([float(t)]))
        up = exact.realised(int(threshold[0]))
        limit = np.floor(np.asarray(x, dtype=float) * self.grid)  # reports r/s <= x: r <= this
        out = np.zeros(limit.shape)
        for signal, weight in ((int(floor[0]), 1 - up), (int(floor[0]) + 1, up)):
            out += weight * self._signal_cdf(signal, limit)
        return out

    def _signal_cdf(self, signal: int, limit: np.ndarray) -> np.ndarray:
        """P(clamp(k + Z, -T, T) <= r) for k = ``signal``, at each integer r of ``limit``."""
        support, reach = self.noise.support, self.noise.reach
        cumulative = _cumulative(self.noise)
        z = np.clip(limit - signal, -reach - 1, reach).astype(np.int64)  # Z <= r - k
        inside = cumulative[z + reach + 1]
        return np.where(limit < -support, 0.0, np.where(limit >= support, 1.0, inside))

    def law_edges(self, t: float) -> np.ndarray:
        """The clamp's atoms, -T/s and T/s, where the folded tails land."""
        t = law_input(t)
        edge = self.noise.support / self.grid
        return np.array([-edge, edge])

    def simulate(self, values: np.ndarray, rng: np.random.Generator) -> float:
        """(Σ ⌊t_i s⌋ + Bin sums + NB(n, 1-α) - NB(n, 1-α)) / (s n); see the module docstring."""
        values, rng, n = sampled_input(self, values, rng)
        if n == 0:
            return math.nan
        floor, threshold = self._coins(values)
        thresholds, counts = distinct(threshold)
        ups = int(rng.binomial(counts, thresholds / exact.GRID).sum())
        success = 1.0 - self.noise.alpha  # exact: α is in (1/2, 1)
        noise = int(rng.negative_binomial(n, success)) - int(rng.negative_binomial(n, success))
        return (int(floor.sum()) + ups + noise) / (self.grid * n)

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        """E[t*²|t] = t² + (Var(Z) + p(1-p))/s², p the realised rounding probability
        (exact up to the clamp's ``clamp_variance``, below 2^-80 relative)."""
        t = np.asarray(t, dtype=np.float64)
        up = self._up(t)
        return np.square(t) + (self.noise.variance + up * (1 - up)) / self.grid**2

    @classmethod
    def paper_worst_case(cls, epsilon: float) -> float:
        """At a midpoint of the grid, f = 1/2 (t = 1/(2s))."""
        return float(cls.paper_form(epsilon, 0.5 / theory.laplace_grid(epsilon)))

    def worst_case_variance(self) -> float:
        """At a midpoint of the grid, f = 1/2 (t = 1/(2s))."""
        return float(self.conditional_variance(0.5 / self.grid))

    def evidence_interval(self, v: float) -> tuple[float, float]:
        """Reports beyond v, away from 0: [v, inf) for v >= 0, (-inf, v] below."""
        return (float(v), math.inf) if v >= 0 else (-math.inf, float(v))

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(t* >= 1 | 1) = P(Z >= 0) and P(t* >= 1 | -1) = P(Z >= 2s), from the table:
        ratio α^{-2s} <= e^ε."""
        return self.noise.upper_tail(0), self.noise.upper_tail(2 * self.grid)


@functools.cache
def _cumulative(noise: ShiftedNoise) -> np.ndarray:
    """P(Z <= z - 1) for z = -M .. M + 1 (index z + M), from the exact integer masses."""
    totals = [0]
    for mass in noise.table.masses:
        totals.append(totals[-1] + mass)
    return np.array([Fraction(c, totals[-1]) for c in totals], dtype=float)
