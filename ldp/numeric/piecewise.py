"""The Piecewise Mechanism (PM) and the Hybrid Mechanism (HM) of [W19] Sec. III-B, III-C.

PM ([W19] Algorithm 2).  With C = (e^{ε/2} + 1)/(e^{ε/2} - 1), l(t) = (C+1)/2 · t -
(C-1)/2 and r(t) = l(t) + C - 1, a user with t reports t* uniform on [l(t), r(t)] with
probability e^{ε/2}/(e^{ε/2} + 1), else uniform on [-C, l(t)) ∪ (r(t), C].  The density is
p = (e^ε - e^{ε/2})/(2e^{ε/2} + 2) on the centre piece and p/e^ε elsewhere, so any two
inputs' densities are within e^ε; E[t*] = t and Var[t*|t] = t²/(e^{ε/2}-1) +
(e^{ε/2}+3)/(3(e^{ε/2}-1)²) ([W19] Lemma 1).

HM ([W19] Sec. III-C).  Each user runs PM with probability α = 1 - e^{-ε/2} (when ε >
ε* ≈ 0.61; else α = 0) and Duchi's mechanism otherwise; its variance does not depend on t
above ε* and is below both PM's and Duchi's worst cases ([W19] Lemma 3).

Exactness: PM on a dyadic grid, ε-LDP as float64 bytes.  Three changes, none of which
touches the guarantee or the mean, make every report one of a fixed finite set of floats
drawn with exactly known probability:

* C is rounded *up* to C' = m/2^s (s chosen so every report fits 53 bits) and the centre
  probability becomes P_h = (C'+1)/(2C'), which keeps E[t*|t] = t exactly and gives the
  density ratio ((C'+1)/(C'-1))² <= e^ε (checked with exact rationals at construction,
  given exp() within 2^-50 relative); C' exceeds C by at most 2^-s, a relative change of
  ~2^-30 in the variance;
* the value t is first rounded to a multiple of 2^-a (a = 16) up or down with the
  probabilities that keep its mean (randomised rounding: a mixture over the two grid
  inputs, so the ratio bound holds for every t); this adds (C'+1)/2 (t-t_lo)(t_hi-t)
  <= (C'+1) 2^-35 to the variance;
* with the grid input, l and r are multiples of h = 2^-(s+a+1), and the report is the
  midpoint of a cell of width h drawn uniformly (``rng.integers``, exact) among the cells
  of the centre piece or of the outer pieces: the cells' probabilities are those of the
  continuous PM's density, the midpoints have the same mean, and the second moment loses
  h²/12.

``conditional_variance`` includes all three; it equals Lemma 1's to ~1e-9 relative.

Sampled engine (exact).  The estimate is h (2S + n)/(2n), S the sum of the users' cell
indices j, so it suffices to draw S.  A user on the input grid point k (k' = k + 2^a in
[0, 2^{a+1}]) has, in units of h:

* with probability P_h, j = l(k) + U, U uniform on the N_c = (C'-1)/h centre cells;
* otherwise v is uniform on the N_o = (C'+1)/h outer cells, j = v - C'/h below the
  centre piece and j = v - C'/h + N_c above it.  With C' = m/2^s, N_o = (m + 2^s) 2^{a+1},
  so v = (m + 2^s) V + W with V uniform on {0..2^{a+1}-1} and W uniform on
  {0..m + 2^s - 1}, independent; the centre piece starts at outer cell (m + 2^s) k', so
  v lies above it exactly when V >= k'.

So, given each grid point's number of users (binomials over the distinct values for the
rounding), its centre count (Bin(n_k, P_h)) and its outer users above the piece
(Bin(n_o, 1 - k'/2^{a+1})), S is a sum of known integers and of independent uniform
integers: Σ U over all centre users (one size N_c), Σ W over all outer users (one size),
and Σ V split by grid point into the ranges below and above k' (sizes k' and
2^{a+1} - k').  Each sum of uniforms is drawn from its exact law by
:func:`ldp.numeric.uniform_sum.uniform_sum` (a multinomial over dyadic blocks, then one
binomial per bit).  The cost is O(#distinct values + #grid points used · a), at most
2^{a+1} + 1 grid points whatever n; the law is the reports engine's up to numpy's float64
probabilities (P_h and the block probabilities, within 2^-53 relative).

HM's sampled engine splits each distinct value's users with Bin(n_t, α) and draws PM's S
for one part and Duchi's number of +B reports for the other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.numeric.base import (
    MeanProtocol,
    distinct,
    law_input,
    on_grid,
    sampled_input,
    value_coins,
)
from ldp.numeric.duchi import Duchi
from ldp.numeric.uniform_sum import uniform_sum
from ldp.oracles import exact
from ldp.registry import register
from ldp.theory import numeric as theory
from ldp.validation import ParameterError

#: a: the user's value is rounded (unbiasedly) to a multiple of 2^-a.
INPUT_BITS = 16
#: Reports are odd multiples of h/2 below 2^OUTPUT_BITS · h/2 in magnitude: exact floats.
OUTPUT_BITS = 51
#: Below this ε, C' would need more than OUTPUT_BITS bits (C ≈ 4/ε > 2^33).
MIN_PM_EPSILON = 1e-9
#: Above this ε, C' - 1 ≈ 2e^{-ε/2} is too short for the grid: the realised variance
#: would leave Lemma 1's by more than 1e-6 relative.
MAX_PM_EPSILON = 16.0


@register(kind="mean", order=3020)
@dataclass(frozen=True, kw_only=True)
class PM(MeanProtocol):
    """The Piecewise Mechanism on a dyadic grid: reports in [-C', C'], C' >= C.

    C = (e^{ε/2}+1)/(e^{ε/2}-1) is rounded up to C' = m/2^s (see the module docstring).
    """

    name = "PM"
    #: measured with tracemalloc at n = 10^6 (base.BYTES_PER_USER), with a margin
    bytes_per_user: ClassVar[Mapping[str, int]] = {"simulate": 136, "perturb": 80, "variance": 80}
    paper_form = staticmethod(theory.pm_variance)
    capabilities: ClassVar[Capabilities] = Capabilities()
    exact_bytes: ClassVar[bool] = True
    _m: int = field(init=False, repr=False, compare=False)
    _s: int = field(init=False, repr=False, compare=False)
    _centre: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.epsilon > MAX_PM_EPSILON:
            raise ParameterError(
                "epsilon", self.epsilon, f"<= {MAX_PM_EPSILON:g} for PM", "its dyadic grid"
            )
        ideal = theory.pm_bound(self.epsilon)
        shift = OUTPUT_BITS - INPUT_BITS - math.ceil(math.log2(ideal)) - 1
        if shift < 1:
            raise ParameterError("epsilon", self.epsilon, f">= {MIN_PM_EPSILON:g} for PM")
        m = math.ceil(ideal * 2.0**shift)
        limit = Fraction(math.exp(self.epsilon)) * (1 - Fraction(1, 2**50))
        while Fraction((m + 2**shift) ** 2, (m - 2**shift) ** 2) > limit:
            m += 1  # ((C'+1)/(C'-1))² <= e^ε exactly (exp within 2^-50 relative)
        object.__setattr__(self, "_m", m)
        object.__setattr__(self, "_s", shift)
        object.__setattr__(self, "_centre", (m + 2**shift, 2 * m))  # P_h = (C'+1)/(2C')

    @property
    def bound(self) -> float:
        """C' = m/2^s, the smallest such C' >= (e^{ε/2}+1)/(e^{ε/2}-1) passing the check."""
        return self._m / 2.0**self._s

    @property
    def realised_epsilon(self) -> float:
        """2 ln((C'+1)/(C'-1)) <= ε: the density ratio the reports really have."""
        one = 2**self._s
        return 2 * math.log(float(Fraction(self._m + one, self._m - one)))

    @property
    def p_centre(self) -> float:
        """P_h = (C'+1)/(2C'), drawn exactly (it is e^{ε/2}/(e^{ε/2}+1) at C' = C)."""
        return (self._m + 2**self._s) / (2 * self._m)

    @property
    def kappa(self) -> float:
        """E[t*|t] = t exactly: P_h C' - (C'-1)/2 = 1."""
        return 1.0

    @property
    def cell(self) -> float:
        """h = 2^-(s + a + 1), the width of an output cell; reports are cell midpoints."""
        return 2.0 ** -(self._s + INPUT_BITS + 1)

    def pieces(self, t: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """l(t) and r(t), the ends of the centre piece ([W19] Algorithm 2, with C')."""
        c = self.bound
        left = (c + 1) / 2 * np.asarray(t, dtype=float) - (c - 1) / 2
        return left, left + (c - 1)

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n, m, one = values.shape[0], self._m, 2**self._s
        grid = 2**INPUT_BITS
        k = input_grid(values, rng)  # t rounded to k/2^a, unbiased
        half = m * 2 * grid  # C'/h cells on each side of 0
        centre_cells, outer_cells = (m - one) * 2 * grid, (m + one) * 2 * grid
        left = (m + one) * k - (m - one) * grid  # l(k/2^a)/h, an integer
        inside_count, total = self._centre
        centre = rng.integers(0, total, size=n) < inside_count  # P_h, exactly
        inside = left + rng.integers(0, centre_cells, size=n)
        v = rng.integers(0, outer_cells, size=n)
        below = left + half  # cells in [-C', l)
        outside = np.where(v < below, v - half, left + centre_cells + (v - below))
        cells = np.where(centre, inside, outside)
        return (2 * cells + 1).astype(np.float64) * (self.cell / 2)  # exact: |2j+1| < 2^53

    def _inputs(self, t: float) -> tuple[tuple[int, float], tuple[int, float]]:
        """The two grid inputs k (t rounded down and up to 2^-a) and their probabilities."""
        t = law_input(t)
        low, coin = _input_coins(np.array([float(t)]))
        up = exact.realised(int(coin[0]))
        return (int(low[0]), 1 - up), (int(low[0]) + 1, up)

    def _piece(self, k: int) -> tuple[int, int]:
        """The centre piece's cells [L, L + N_c) for the grid input k, in units of h."""
        m, one, grid = self._m, 2**self._s, 2**INPUT_BITS
        left = (m + one) * k - (m - one) * grid
        return left, left + (m - one) * 2 * grid

    def report_cdf(self, t: float, x: np.ndarray) -> np.ndarray:
        """P(report <= x | t) (:class:`ldp.audit.law.HasReportLaw`): each cell's exact
        probability (P_h/N_c in the centre piece, (1-P_h)/N_o outside it), mixed over the
        input rounding's two grid points."""
        t = law_input(t)
        m, grid = self._m, 2**INPUT_BITS
        half = m * 2 * grid  # cells j in [-half, half)
        inside_count, total = self._centre
        centre_cells, outer_cells = (m - 2**self._s) * 2 * grid, (m + 2**self._s) * 2 * grid
        x = np.asarray(x, dtype=float)
        # the cells whose midpoint (2j + 1) h/2 is <= x: j <= floor((2x/h - 1)/2), counted
        # from -half (exact: x/h is exact for a float x and a power-of-two h)
        last = np.floor((x / self.cell * 2 - 1) / 2)
        upto = np.clip(last + 1 + half, 0, 2 * half)  # cells j <= last
        out = np.zeros(x.shape)
        for k, weight in self._inputs(t):
            start, end = self._piece(k)
            centre = np.clip(upto - (start + half), 0, centre_cells)
            outer = upto - centre
            p_centre = inside_count / total
            centre_mass = centre * p_centre / centre_cells
            out += weight * (centre_mass + outer * (1 - p_centre) / outer_cells)
        return np.minimum(out, 1.0)

    def law_edges(self, t: float) -> np.ndarray:
        """The ends of the centre piece for both grid inputs, and of the range, ±C'."""
        t = law_input(t)
        inputs = [k for k, weight in self._inputs(t) if weight > 0]
        ends = [self.cell * end for k in inputs for end in self._piece(k)]
        return np.unique(np.array([-self.bound, *ends, self.bound]))

    def in_support(self, reports: np.ndarray) -> np.ndarray:
        """Per report: a cell midpoint (2j + 1) h/2 with j in [-C'/h, C'/h), as float64."""
        cells = self._m * 2 * 2**INPUT_BITS  # C'/h cells on each side of 0
        return on_grid(reports, self.cell / 2, 2 * cells - 1, odd=True)

    def simulate(self, values: np.ndarray, rng: np.random.Generator) -> float:
        """The estimated mean drawn from its exact law, h (2S + n)/(2n), without reports
        (see the module docstring); correctly rounded."""
        values, rng, n = sampled_input(self, values, rng)
        if n == 0:
            return math.nan
        points, counts = distinct(values)
        return (2 * self.cell_sum(points, counts, rng) + n) / (2 * n) * self.cell

    def cell_sum(self, points: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> int:
        """S = Σ j, the cell indices of ``counts[i]`` users holding ``points[i]`` (values
        in [-1, 1], checked by the caller), drawn from its exact law (see the module
        docstring; a report is (2j + 1) h/2)."""
        m, one, grid = self._m, 2**self._s, 2**INPUT_BITS
        low, coins = _input_coins(points)
        ups = rng.binomial(counts, coins / exact.GRID)
        # the users of each grid point held, by k' = k + 2^a in [0, 2^{a+1}]
        weights = np.concatenate([counts - ups, ups])
        held = weights > 0
        points_held = np.concatenate([low, low + 1])[held] + grid
        shifted, where = np.unique(points_held, return_inverse=True)
        users = np.bincount(where, weights[held].astype(np.float64), shifted.shape[0])
        users = users.astype(np.int64)  # exact: counts below 2^53
        inside_count, total = self._centre
        centre = rng.binomial(users, inside_count / total)
        outer = users - centre
        below = rng.binomial(outer, shifted / (2 * grid))
        above = outer - below
        centre_cells, half = (m - one) * 2 * grid, m * 2 * grid
        n_centre, n_outer, n_above = int(centre.sum()), int(outer.sum()), int(above.sum())
        # centre users: j = l(k)/h + U, l(k)/h = (m + 2^s) k - (m - 2^s) 2^a
        lefts = (m + one) * int(np.dot(centre, shifted - grid)) - (m - one) * grid * n_centre
        centre_sum = lefts + uniform_sum(rng, np.array([n_centre]), np.array([centre_cells]))
        # outer users: j = (m + 2^s) V + W - C'/h (+ N_c above the centre piece)
        v_sum = uniform_sum(
            rng, np.concatenate([below, above]), np.concatenate([shifted, 2 * grid - shifted])
        ) + int(np.dot(above, shifted))
        w_sum = uniform_sum(rng, np.array([n_outer]), np.array([m + one]))
        outer_sum = (m + one) * v_sum + w_sum - half * n_outer + centre_cells * n_above
        return centre_sum + outer_sum

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        """E[t*²|t]: the continuous PM's (with C') at t, plus (C'+1)/2 times the variance of
        the input rounding, (t - t_lo)(t_hi - t), minus h²/12 (a cell's midpoint for a
        uniform point of the cell)."""
        t = np.asarray(t, dtype=float)
        c, p = self.bound, self.p_centre
        left, right = self.pieces(t)
        centre = (left**2 + left * right + right**2) / 3
        outer = (left**3 + 2 * c**3 - right**3) / (3 * (c + 1))
        scaled = t * 2.0**INPUT_BITS
        low = np.floor(scaled)
        rounding = (scaled - low) * (low + 1 - scaled) / 4.0**INPUT_BITS
        return p * centre + (1 - p) * outer + (c + 1) / 2 * rounding - self.cell**2 / 12

    def evidence_interval(self, v: float) -> tuple[float, float]:
        """The centre piece [l(v), r(v)]."""
        left, right = self.pieces(v)
        return float(left), float(right)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(t* in [1, C'] | 1) = P_h; given -1 the outer cells there: (1-P_h)(C'-1)/(C'+1)."""
        p, c = self.p_centre, self.bound
        return p, (1 - p) * (c - 1) / (c + 1)


def input_grid(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """k with k/2^a = t rounded up or down, P(up) = frac(t 2^a) on the 53-bit grid (int64)."""
    low, coins = _input_coins(values)
    return low + exact.below(rng, coins, values.shape[0])


def _input_coins(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """⌊t 2^a⌋ and the 53-bit threshold ⌊frac(t 2^a) 2^53⌋ of rounding up (int64 each)."""
    scaled = values * 2.0**INPUT_BITS  # exact
    low = np.floor(scaled)
    return low.astype(np.int64), np.floor((scaled - low) * exact.GRID).astype(np.int64)


@register(kind="mean", label="HM", order=3030)
@dataclass(frozen=True, kw_only=True)
class Hybrid(MeanProtocol):
    """The Hybrid Mechanism: PM with probability α = 1 - e^{-ε/2} (ε > ε*), else Duchi."""

    name = "Hybrid"
    #: measured with tracemalloc at n = 10^6 (base.BYTES_PER_USER), with a margin
    bytes_per_user: ClassVar[Mapping[str, int]] = {"simulate": 136, "perturb": 88, "variance": 80}
    paper_form = staticmethod(theory.hm_variance)
    capabilities: ClassVar[Capabilities] = Capabilities()
    exact_bytes: ClassVar[bool] = True  # both parts emit fixed floats with exact probabilities
    _pm: PM = field(init=False, repr=False, compare=False)
    _duchi: Duchi = field(init=False, repr=False, compare=False)
    _choose: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "_pm", PM(epsilon=self.epsilon))
        object.__setattr__(self, "_duchi", Duchi(epsilon=self.epsilon))
        alpha = theory.hm_alpha(self.epsilon)
        # the choice of mechanism does not affect privacy: each part is ε-LDP on its own
        choose = (
            0
            if alpha == 0
            else exact.threshold(alpha, math.exp(-self.epsilon / 2), round_down=True)
        )
        object.__setattr__(self, "_choose", choose)

    @property
    def bound(self) -> float:
        """C: PM's reports and Duchi's ±B (B < C) lie in [-C, C]."""
        return self._pm.bound

    @property
    def alpha(self) -> float:
        """The realised probability of running PM (0 at ε <= ε*)."""
        return exact.realised(self._choose)

    @property
    def kappa(self) -> float:
        a = self.alpha
        return a * self._pm.kappa + (1 - a) * self._duchi.kappa

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        use_pm = exact.bernoulli(rng, self._choose, values.shape[0])
        reports = self._duchi._perturb(values, rng)
        if use_pm.any():
            reports[use_pm] = self._pm._perturb(values[use_pm], rng)
        return reports

    def report_cdf(self, t: float, x: np.ndarray) -> np.ndarray:
        """P(report <= x | t): PM's with probability α, Duchi et al.'s otherwise."""
        t = law_input(t)
        a = self.alpha
        return a * self._pm.report_cdf(t, x) + (1 - a) * self._duchi.report_cdf(t, x)

    def law_edges(self, t: float) -> np.ndarray:
        """PM's edges and Duchi et al.'s atoms."""
        t = law_input(t)
        return np.unique(np.concatenate([self._pm.law_edges(t), self._duchi.law_edges(t)]))

    def in_support(self, reports: np.ndarray) -> np.ndarray:
        """Per report: in PM's support or in Duchi et al.'s (the two it mixes)."""
        return self._pm.in_support(reports) | self._duchi.in_support(reports)

    def simulate(self, values: np.ndarray, rng: np.random.Generator) -> float:
        """The estimated mean drawn from its exact law: Bin(n_t, α) of each distinct
        value's users run PM (its cell sum), the others Duchi (its +B count)."""
        values, rng, n = sampled_input(self, values, rng)
        if n == 0:
            return math.nan
        points, counts = distinct(values)
        pm_users = rng.binomial(counts, self.alpha)
        cells = self._pm.cell_sum(points, pm_users, rng)
        duchi_users = counts - pm_users
        plus = self._duchi.plus_count(value_coins(points), duchi_users, rng)
        total = Fraction(self._pm.cell) * Fraction(2 * cells + int(pm_users.sum()), 2)
        total += Fraction(self._duchi.bound) * (2 * plus - int(duchi_users.sum()))
        return float(total / n) / self.kappa

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        a = self.alpha
        return a * self._pm.second_moment(t) + (1 - a) * self._duchi.second_moment(t)

    def evidence_interval(self, v: float) -> tuple[float, float]:
        """PM's centre piece widened to hold Duchi's report of v's sign (B < C)."""
        low, high = self._pm.evidence_interval(v)
        side = self._duchi.evidence_interval(v)[0]
        return min(low, side), max(high, side)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """[1, C] holds +B (1 < B < C): each part has ratio e^ε there, so the mixture has."""
        a = self.alpha
        pm, duchi = self._pm.audit_event_probabilities(), self._duchi.audit_event_probabilities()
        return a * pm[0] + (1 - a) * duchi[0], a * pm[1] + (1 - a) * duchi[1]
