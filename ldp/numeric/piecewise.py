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

Exactness.  The centre-piece coin (and HM's choice) is on the 53-bit grid of
:mod:`ldp.oracles.exact`, the centre coin rounded down: the realised density ratio
P_h (C+1)/((1-P_h)(C-1)) = (P_h/(1-P_h)) e^{ε/2} <= e^ε, up to the float error of C
(a few ulps, inside the coin's 2^-50 widening).  E[t*|t] = κ t with κ = P_h C - (C-1)/2
(1 when P_h is ideal); the estimator divides by the realised κ.  The uniform draws are
float64 (``rng.random``): the guarantee is proven for the continuous law, **not** for the
float64 bytes (the rounding of l(t) + (C-1)U depends on t; ``exact_bytes = False``).

No sampled engine: the sum of n PM reports is a sum of uniforms on t-dependent pieces
with no exact law cheaper than drawing them, so only the reports engine is offered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.numeric.base import MeanProtocol, coin_threshold
from ldp.numeric.duchi import Duchi
from ldp.oracles import exact
from ldp.registry import register
from ldp.theory import numeric as theory

_REPORTS_ONLY = Capabilities(engines=("reports",))


@register(kind="mean", order=3020)
@dataclass(frozen=True, kw_only=True)
class PM(MeanProtocol):
    """The Piecewise Mechanism: reports in [-C, C], C = (e^{ε/2}+1)/(e^{ε/2}-1)."""

    name = "PM"
    capabilities: ClassVar[Capabilities] = _REPORTS_ONLY
    _centre: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        half = math.exp(self.epsilon / 2)
        threshold = coin_threshold(self.name, self.epsilon, half / (half + 1), 1 / (half + 1))
        object.__setattr__(self, "_centre", threshold)

    @property
    def bound(self) -> float:
        """C = (e^{ε/2}+1)/(e^{ε/2}-1)."""
        return theory.pm_bound(self.epsilon)

    @property
    def p_centre(self) -> float:
        """The realised probability of the centre piece, <= e^{ε/2}/(e^{ε/2}+1)."""
        return exact.realised(self._centre)

    @property
    def kappa(self) -> float:
        """E[t*|t] = (P_h C - (C-1)/2) t (centre mean (C+1)t/2, outer mean -(C-1)t/2)."""
        c = self.bound
        return self.p_centre * c - (c - 1) / 2

    def pieces(self, t: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """l(t) and r(t), the ends of the centre piece ([W19] Algorithm 2)."""
        c = self.bound
        left = (c + 1) / 2 * np.asarray(t, dtype=float) - (c - 1) / 2
        return left, left + (c - 1)

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        c = self.bound
        left, right = self.pieces(values)
        centre = exact.bernoulli(rng, self._centre, values.shape[0])
        u = rng.random(values.shape[0])
        inside = left + (c - 1) * u
        outer = (c + 1) * u  # a point of the outer pieces, laid end to end
        below = left + c  # length of [-C, l)
        outside = np.where(outer < below, outer - c, right + (outer - below))
        return np.where(centre, inside, outside)

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        """E[t*²|t] = P_h (l² + lr + r²)/3 + (1-P_h) ((l³ + C³) + (C³ - r³))/(3(C+1))."""
        c, p = self.bound, self.p_centre
        left, right = self.pieces(t)
        centre = (left**2 + left * right + right**2) / 3
        outer = (left**3 + 2 * c**3 - right**3) / (3 * (c + 1))
        return p * centre + (1 - p) * outer

    def paper_variance(self, t: np.ndarray | float) -> np.ndarray:
        return np.asarray(theory.pm_variance(self.epsilon, np.asarray(t, dtype=float)))

    def evidence_interval(self, v: float) -> tuple[float, float]:
        """The centre piece [l(v), r(v)]."""
        left, right = self.pieces(v)
        return float(left), float(right)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(t* in [1, C] | 1) = P_h; given -1, the outer density over C - 1: P_h/e^ε."""
        p, c = self.p_centre, self.bound
        return p, (1 - p) * (c - 1) / (c + 1)


@register(kind="mean", label="HM", order=3030)
@dataclass(frozen=True, kw_only=True)
class Hybrid(MeanProtocol):
    """The Hybrid Mechanism: PM with probability α = 1 - e^{-ε/2} (ε > ε*), else Duchi."""

    name = "Hybrid"
    capabilities: ClassVar[Capabilities] = _REPORTS_ONLY
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

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        a = self.alpha
        return a * self._pm.second_moment(t) + (1 - a) * self._duchi.second_moment(t)

    def paper_variance(self, t: np.ndarray | float) -> np.ndarray:
        return np.asarray(theory.hm_variance(self.epsilon, np.asarray(t, dtype=float)))

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
