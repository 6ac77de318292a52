"""Duchi et al.'s one-dimensional mechanism, as restated in [W19] Sec. III-A (Algorithm 1).

Duchi, Jordan, Wainwright, *Minimax Optimal Procedures for Locally Private Estimation*
(JASA 2018).  A user with t in [-1, 1] reports t* = +B with probability
(e^ε - 1)/(2e^ε + 2) · t + 1/2 and -B otherwise, B = (e^ε + 1)/(e^ε - 1), so E[t*] = t and
Var[t*|t] = B² - t² ([W19] Eq. (2)).

How it is drawn.  The report probability is affine in t, so it is drawn in two exact
steps: round t to J = ±1 with P(J = +1) = (1 + t)/2, then keep J with probability
e^ε/(e^ε + 1) (randomised response).  The keep coin is on the 53-bit grid of
:mod:`ldp.oracles.exact`, rounded down, so P(+B|t)/P(+B|t') <= e^ε holds for the realised
probabilities; the rounding coin's probability does not matter for privacy (every J is
e^ε-close to every other).  The reports are the two float64 values ±B: ε-LDP as emitted.

Sampled engine.  The number of +B reports is Bin(K, p) + Bin(n - K, 1 - p), K the number
of users rounded to +1, itself a sum of independent binomials over the distinct values:
the exact law of the reports engine's mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.numeric.base import (
    MeanProtocol,
    coin_threshold,
    distinct,
    law_input,
    sampled_input,
    value_coins,
)
from ldp.oracles import exact
from ldp.registry import register
from ldp.theory import numeric as theory


@register(kind="mean", order=3010)
@dataclass(frozen=True, kw_only=True)
class Duchi(MeanProtocol):
    """Duchi et al.'s mechanism: reports ±B, B = (e^ε+1)/(e^ε-1) ([W19] Algorithm 1)."""

    name = "Duchi"
    paper_form = staticmethod(theory.duchi_variance)
    capabilities: ClassVar[Capabilities] = Capabilities()
    exact_bytes: ClassVar[bool] = True
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        e = math.exp(self.epsilon)
        threshold = coin_threshold(self.name, self.epsilon, e / (e + 1), 1 / (e + 1))
        object.__setattr__(self, "_keep", threshold)

    @property
    def bound(self) -> float:
        """B = (e^ε+1)/(e^ε-1)."""
        return theory.duchi_bound(self.epsilon)

    @property
    def p_keep(self) -> float:
        """The realised probability of keeping the rounded value, <= e^ε/(e^ε+1)."""
        return exact.realised(self._keep)

    @property
    def kappa(self) -> float:
        """E[t*|t] = B (2p - 1) t."""
        return self.bound * (2 * self.p_keep - 1)

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rounded = exact.below(rng, value_coins(values), values.shape[0])
        kept = exact.bernoulli(rng, self._keep, values.shape[0])
        return np.where(rounded == kept, self.bound, -self.bound)

    def in_support(self, reports: np.ndarray) -> np.ndarray:
        """Per report: exactly +B or -B, as float64 (the two values [DJW18] reports)."""
        x = np.asarray(reports)
        if x.dtype != np.float64 or x.ndim != 1:
            return np.zeros(x.shape[0] if x.ndim else 1, dtype=bool)
        return (x == self.bound) | (x == -self.bound)

    def plus_probability(self, t: float) -> float:
        """P(+B | t), as drawn: the rounding coin (value_coins) then the keep coin."""
        t = law_input(t)
        up = exact.realised(int(value_coins(np.array([float(t)]))[0]))
        p = self.p_keep
        return up * p + (1 - up) * (1 - p)

    def report_cdf(self, t: float, x: np.ndarray) -> np.ndarray:
        """P(report <= x | t) (:class:`ldp.audit.law.HasReportLaw`): the atoms -B and +B."""
        t = law_input(t)
        x = np.asarray(x, dtype=float)
        minus = 1.0 - self.plus_probability(t)
        return np.where(x < -self.bound, 0.0, np.where(x < self.bound, minus, 1.0))

    def law_edges(self, t: float) -> np.ndarray:
        """The two atoms, -B and +B."""
        t = law_input(t)
        return np.array([-self.bound, self.bound])

    def simulate(self, values: np.ndarray, rng: np.random.Generator) -> float:
        """The estimated mean drawn from its exact law (see the module docstring)."""
        values, rng, n = sampled_input(self, values, rng)
        if n == 0:
            return math.nan
        plus = self.plus_count(*distinct(value_coins(values)), rng)
        return self.bound * (2 * plus - n) / (n * self.kappa)

    def plus_count(self, coins: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> int:
        """The number of +B reports of ``counts[i]`` users whose rounding coin is
        ``coins[i]`` (:func:`~ldp.numeric.base.value_coins`): Bin(K, p) + Bin(n - K, 1 - p),
        K the users rounded to +1 (binomials over the coins)."""
        ups = int(rng.binomial(counts, coins / exact.GRID).sum())
        n = int(np.sum(counts))
        return int(rng.binomial(ups, self.p_keep)) + int(rng.binomial(n - ups, 1 - self.p_keep))

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        """E[t*²|t] = B² (the reports are ±B)."""
        return np.full(np.shape(t), self.bound**2)

    def evidence_interval(self, v: float) -> tuple[float, float]:
        """The report +B for v >= 0, -B below."""
        side = self.bound if v >= 0 else -self.bound
        return side, side

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(+B | 1) = p, P(+B | -1) = 1 - p."""
        return self.p_keep, 1 - self.p_keep
