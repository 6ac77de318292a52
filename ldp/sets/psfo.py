"""PSFO: the padding-and-sampling frequency oracle over item sets (S&P'18, Sec. IV).

Wang, Li, Jha, *Locally Differentially Private Frequent Itemset Mining*, IEEE S&P 2018.
Each user pads their set to ℓ elements with dummy items, draws one element uniformly
(:func:`ldp.sets.base.padded_sample`) and reports it with a frequency oracle over the
padded domain of d+ℓ values; the server multiplies the oracle's estimate by ℓ.

Privacy.  Given the padded set S, the report's law is the mixture (1/|S|) Σ_{x∈S} FO(·|x).
With OLH at ε every component is within e^ε of every other, so the mixture is ε-LDP.
With GRR the sampling *amplifies*: Pr[y | S] = q + (p-q)·1[y∈S]/|S| with |S| >= ℓ, whose
largest ratio over two sets is 1 + (p/q - 1)/ℓ; GRR at ε' = ln(ℓ(e^ε - 1) + 1) therefore
gives exactly ε (the paper's amplified GRR).  This needs ℓ *distinct* dummies: with one
shared dummy symbol, an empty set reports it with probability p and a full one with q, a
ratio e^ε' > e^ε (``tests/sets/test_psfo.py`` plants it and the auditor catches it).

Estimate.  User u draws x with probability w_u/ℓ, w_u = min(1, ℓ/|v_u|) for a holder of
x (:func:`ldp.sets.base.kept_weights`), so E[I_x] = n q* + (p*-q*) A_x/ℓ with
A_x = Σ_{u: x∈v_u} w_u, and ĉ(x) = ℓ (I_x - n q*)/(p*-q*) is unbiased for A_x
(:meth:`~ldp.sets.base.PerItemProtocol.expected_counts`): the number of users holding x
when no set exceeds ℓ, fewer otherwise (a user with |v| > ℓ counts ℓ/|v|).  Its variance
is exact (users are independent; for OLH under an ideal hash):
[ℓ² n q*(1-q*) + ℓ (p*-q*)(1-2q*) A_x - (p*-q*)² B_x]/(p*-q*)² with B_x = Σ w_u²
(derived here from the per-user Bernoulli support indicators, :meth:`PSFO.pure_variance`).

Which oracle.  Dropping the A and B terms, GRR's variance is
(d - 1 + ℓe^ε)/(e^ε - 1)² and OLH's 4ℓ²e^ε/(e^ε - 1)², so GRR is used when
d < ℓe^ε(4ℓ - 1) + 1 (:func:`prefers_grr`; the paper's adaptive choice).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.registry import register
from ldp.reports import bare
from ldp.sets.base import PerItemProtocol, generator, padded_sample


def amplified_epsilon(epsilon: float, ell: int) -> float:
    """ε' = ln(ℓ(e^ε - 1) + 1), rounded down two ulps so that ℓ(e^ε' - 1) + 1 <= e^ε·ℓ...

    precisely: so that 1 + (e^ε' - 1)/ℓ, the largest ratio of the padded-and-sampled GRR,
    stays <= e^ε in floating point too (``ln`` and ``exp`` are each within an ulp).
    """
    value = math.log1p(ell * math.expm1(epsilon))
    return float(np.nextafter(np.nextafter(value, 0.0), 0.0))


def prefers_grr(domain_size: int, ell: int, epsilon: float) -> bool:
    """Whether GRR at the amplified ε' beats OLH at ε for PSFO over d items: d < ℓe^ε(4ℓ-1)+1."""
    return domain_size < ell * math.exp(epsilon) * (4 * ell - 1) + 1


@register(kind="set", label="PSFO", color="#e34a33", order=4010)
@dataclass(frozen=True, kw_only=True)
class PSFO(PerItemProtocol):
    """Padding-and-sampling frequency oracle (module docstring).

    Parameters
    ----------
    epsilon, domain_size :
        The budget ε and the number d of items.
    ell : int
        The padding length ℓ >= 1 (``ell=1``: one item of the set, no padding but for
        empty sets).
    oracle : {"adaptive", "GRR", "OLH"}
        The frequency oracle over the d+ℓ padded values: GRR at the amplified ε', OLH at
        ε, or the one :func:`prefers_grr` picks (default).
    """

    name: ClassVar[str] = "PSFO"
    capabilities: ClassVar[Capabilities] = Capabilities()

    def adaptive_grr(self) -> bool:
        """GRR at the amplified ε' when :func:`prefers_grr`."""
        return prefers_grr(self.domain_size, self.ell, self.epsilon)

    def report_epsilon(self, grr: bool) -> float:
        """GRR at the amplified ε' (module docstring), OLH at ε."""
        return amplified_epsilon(self.epsilon, self.ell) if grr else self.epsilon

    # --- client --------------------------------------------------------------------------
    def perturb(self, sets: Any, rng: np.random.Generator) -> Any:
        """Each user's report: one element of the padded set, through the inner oracle."""
        rng = generator(rng)
        return self.inner.perturb(self.reported_elements(sets, rng)[:, 0], rng)

    def reported_elements(self, sets: Any, rng: np.random.Generator) -> np.ndarray:
        """(n, 1): each user's element, drawn uniformly from the padded set."""
        offsets, items = self.sets(sets)
        return padded_sample(offsets, items, self.ell, self.domain_size, generator(rng))[:, None]

    def n_reports(self, reports: Any) -> int:
        return self.inner.n_reports(bare(reports))

    def in_support(self, reports: Any) -> np.ndarray:
        """Per report: whether it lies in the inner oracle's declared support (GRR: a value
        in [0, d+ℓ); OLH: a cell in [0, g)), as :mod:`ldp.audit.support` reads it."""
        from ldp.audit.support import declared_support

        check, reports = declared_support(self.inner), bare(reports)
        if check is None:
            return np.ones(self.n_reports(reports), dtype=bool)
        return np.asarray(check(reports), dtype=bool)

    # --- server --------------------------------------------------------------------------
    def estimate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """ĉ(x) = ℓ·(the inner oracle's estimate of x), for every item or ``candidates``."""
        chosen = self.item_candidates(candidates)
        return self.ell * self.inner.estimate(bare(reports), chosen)

    def simulate(
        self, sets: Any, rng: np.random.Generator, candidates: np.ndarray | None = None
    ) -> np.ndarray:
        """The sampled engine: each user's padded element drawn as the client does, their
        histogram handed to the inner oracle's sampled engine (exact when it is)."""
        wanted = self.item_candidates(candidates)
        self.check_histogram()
        rng = generator(rng)
        offsets, items = self.sets(sets)
        drawn = padded_sample(offsets, items, self.ell, self.domain_size, rng)
        counts = np.bincount(drawn, minlength=self.domain_size + self.ell)
        return self.ell * self.inner.simulate(counts, rng, wanted)

    def pure_variance(self, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """[ℓ² n q*(1-q*) + ℓ (p*-q*)(1-2q*) A_x - (p*-q*)² B_x]/(p*-q*)² (module docstring)."""
        p, q, ell = self.inner.p_star, self.inner.q_star, self.ell
        spread = ell**2 * n * q * (1 - q) + ell * (p - q) * (1 - 2 * q) * a - (p - q) ** 2 * b
        return spread / (p - q) ** 2

    def audit_events(self, v: Any, v_prime: Any) -> list:
        """The inner oracle's events for an element of v's padded set outside v′'s and
        one of v′'s outside v's (the reports that tell the two sets apart most)."""
        a, b = (self._padded(x) for x in (v, v_prime))
        only_a, only_b = np.setdiff1d(a, b), np.setdiff1d(b, a)
        if not (only_a.size and only_b.size):
            return []
        return list(self.inner.audit_events(int(only_a[0]), int(only_b[0])))

    def _padded(self, row: Any) -> np.ndarray:
        """One input's padded set: its items and the dummies d+|v|, ..., d+ℓ-1."""
        offsets, items = self.sets(np.asarray(row).reshape(1, -1))
        size = int(offsets[1])
        return np.concatenate([items, self.domain_size + np.arange(size, self.ell)])

    def privacy_ratio(self) -> float:
        """The largest Pr[y | S]/Pr[y | S'] over reports and sets, from the realised p*, q*:
        1 + (p*/q* - 1)/ℓ for GRR, p*/q* for OLH (a cell's keep over another's)."""
        p, q = self.inner.p_star, self.inner.q_star
        if self.uses_grr:
            return 1.0 + (p / q - 1.0) / self.ell
        g = self.inner.g  # type: ignore[attr-defined]
        return p / ((1.0 - p) / (g - 1))
