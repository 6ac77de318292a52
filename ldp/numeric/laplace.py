"""The Laplace mechanism for a value in [-1, 1]: the baseline of [W19] Sec. III.

t* = t + Lap(2/ε) (sensitivity Δ = 2): the densities of any two inputs are within
e^{ε|t-t'|/2} <= e^ε, E[t*] = t and Var[t*|t] = 2 (2/ε)² = 8/ε² for every t.

Floating point: **not ε-LDP as float64 bytes.**  The noise is drawn by numpy's
``Generator.laplace`` (inversion through a logarithm) and added in float64, so the low
bits of a report carry the input: Mironov (CCS 2012) showed that fl(t + noise) takes
values a plain draw almost never does (with t = 1, a report in (-1/2, 1/2) is always a
multiple of 2^-53).  The auditor's float events find this (``tests/numeric``); the
guarantee here holds for the real-valued law only (``exact_bytes = False``).  Use Duchi's
mechanism, PM or HM, whose reports are fixed floats, where the bytes must be private.

Sampled engine.  The sum of n Laplace draws of scale b is b (G1 - G2) with G1, G2
independent Gamma(n, 1): the estimated mean is mean(t) + b (G1 - G2)/n, the exact law of
the reports engine's mean (in real arithmetic; the float sums differ by rounding only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.numeric.base import MeanProtocol
from ldp.registry import register
from ldp.theory import numeric as theory
from ldp.validation import check_bounded, check_generator


@register(kind="mean", order=3040)
@dataclass(frozen=True, kw_only=True)
class Laplace(MeanProtocol):
    """t* = t + Lap(2/ε): the continuous baseline (float64 bytes not private, see above)."""

    name = "Laplace"
    capabilities: ClassVar[Capabilities] = Capabilities()
    bounded: ClassVar[bool] = False

    @property
    def scale(self) -> float:
        """b = Δ/ε = 2/ε."""
        return 2.0 / self.epsilon

    @property
    def bound(self) -> float:
        """Unbounded reports: 1 + 10b, beyond which a report has probability < e^-10/2."""
        return 1.0 + 10 * self.scale

    @property
    def kappa(self) -> float:
        return 1.0

    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return values + rng.laplace(0.0, self.scale, values.shape[0])

    def simulate(self, values: np.ndarray, rng: np.random.Generator) -> float:
        """mean(t) + b (G1 - G2)/n, G1, G2 ~ Gamma(n, 1) independent."""
        values = check_bounded(values)
        rng = check_generator(rng)
        n = values.shape[0]
        if n == 0:
            return math.nan
        noise = rng.standard_gamma(n) - rng.standard_gamma(n)
        return float(values.mean() + self.scale * noise / n)

    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        """E[t*²|t] = t² + 2b²."""
        return np.square(np.asarray(t, dtype=float)) + 2 * self.scale**2

    def paper_variance(self, t: np.ndarray | float) -> np.ndarray:
        return np.asarray(theory.laplace_variance(self.epsilon, np.asarray(t, dtype=float)))

    def evidence_interval(self, v: float) -> tuple[float, float]:
        """Reports beyond v, away from 0: [v, inf) for v >= 0, (-inf, v] below."""
        return (float(v), math.inf) if v >= 0 else (-math.inf, float(v))

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(t* >= 1 | 1) = 1/2 and P(t* >= 1 | -1) = e^{-ε}/2 (the tail beyond 2b·ε/2)."""
        return 0.5, math.exp(-self.epsilon) / 2
