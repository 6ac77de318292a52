"""Generalised randomised response (GRR, "direct encoding"), USENIX'17 Sec. 4.1.

Each user reports the true value with probability p = e^ε/(e^ε+d-1) and each other value
with probability q = 1/(e^ε+d-1); a report supports exactly the value it names.

The keep coin is drawn on the 53-bit grid of :mod:`ldp.oracles.exact` (p rounded down, so
the realised ratio p(d-1)/(1-p) stays <= e^ε) and the other value uniformly among the d-1
others with ``rng.integers`` (exact); p* is the realised keep probability and
q* = (1-p*)/(d-1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp import budget, theory
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import PureOracle
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_values

#: GRR's reports are int64 values, so its domain stops at 2^62.
MAX_GRR_DOMAIN = 2**62


@register(color="#0173b2", order=10)
@dataclass(frozen=True, kw_only=True)
class GRR(PureOracle):
    """Generalised randomised response (direct encoding, DE).

    Reports are the reported values (int64).  p* = p, q* = q ([FO] "Direct Encoding"),
    as realised on the 53-bit grid: ε must lie in [ln(d-1) - 36.7, ln(d-1) + 36.7]
    (the lower end only matters above 2^53 values), or a report probability would round
    to 0 or 1.
    """

    name = "GRR"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="categorical", randomized_response=True, additive=True
    )
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.domain_size > MAX_GRR_DOMAIN:
            raise ParameterError("domain_size", self.domain_size, "<= 2^62 for GRR (int64 reports)")
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, self.domain_size))

    @property
    def p_star(self) -> float:
        """The realised keep probability, <= e^ε/(e^ε+d-1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """(1 - p*)/(d - 1): the other values share the rest uniformly."""
        return (1.0 - self.p_star) / (self.domain_size - 1)

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[report = y | value] for every y in the domain (for privacy checks)."""
        value = self.check_value(value)
        budget.check_memory(
            "domain_size",
            self.domain_size,
            "small enough for one probability per value",
            8 * self.domain_size,
            "the report probabilities of every value",
        )
        probabilities = np.full(self.domain_size, self.q_star)
        probabilities[value] = self.p_star
        return probabilities

    def adversary_success(self, prior: np.ndarray) -> float:
        """The Bayesian adversary's success Σ_y max(π_y p*, q* max_{v≠y} π_v) (ldp.adversary).

        The guess is y itself unless some other value is more than p*/q* times as likely a
        priori; the most likely value π_1 is the competitor of every y but itself (π_2).
        Uniform prior: p* = e^ε/(e^ε+d-1), the ε-LDP bound.
        """
        ranked = np.sort(np.asarray(prior, dtype=float))[::-1]
        rest = np.maximum(self.p_star * ranked[1:], self.q_star * ranked[0])
        return float(self.p_star * ranked[0] + rest.sum())

    def log_likelihoods(self, reports: np.ndarray) -> np.ndarray:
        """ln Pr[y_i | v] for each report (rows) and value (columns): ln p* or ln q*."""
        reports = check_values(reports, self.domain_size, name="reports")
        self.check_likelihood_table(reports.shape[0])
        out = np.full((reports.shape[0], self.domain_size), math.log(self.q_star))
        out[np.arange(reports.shape[0]), reports] = math.log(self.p_star)
        return out

    def audit_events(self, v: int, v_prime: int) -> list:
        """report == v (evidence for v) and report == v' (for v'): ratio p*/q* = e^ε."""
        from ldp.audit.events import categorical_events

        return categorical_events(v, v_prime)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(report == v) given v and given v': (p*, q*)."""
        return self.p_star, self.q_star

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Keep each value with probability p, else report one of the d-1 others uniformly."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        keep = exact.bernoulli(rng, self._keep, values.shape[0])
        shift = rng.integers(1, self.domain_size, size=values.shape[0])
        return np.where(keep, values, (values + shift) % self.domain_size)

    def n_reports(self, reports: np.ndarray) -> int:
        return int(np.shape(reports)[0])

    def estimate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """c(v) = (I_v - n q*)/(p* - q*) ([FO] "Method"); over the full domain with fewer
        reports than d/8, every value nobody reported gets the one constant (0 - n q*)/(p* - q*)
        and only the reported ones are counted: the same numbers, bit for bit, as counting
        all d (a histogram of d int64 and its gather cost ~10x more at d = 3.3 10^6,
        n = 10^4; ``python -m benchmarks --only full_domain``)."""
        if candidates is not None:
            return super().estimate(reports, candidates)
        self.check_full_domain()
        reports = check_values(reports, self.domain_size, name="reports")
        n, p, q = reports.shape[0], self.p_star, self.q_star
        if 8 * n >= self.domain_size:  # many reports: one histogram of the domain
            support = np.bincount(reports, minlength=self.domain_size)
            return theory.pure_estimate(support, n, p, q)
        held, counts = np.unique(reports, return_counts=True)
        estimates = np.full(self.domain_size, theory.pure_estimate(np.zeros(1), n, p, q)[0])
        estimates[held] = theory.pure_estimate(counts, n, p, q)
        return estimates

    # --- fake users (ldp.poisoning, [CJG21] Sec. 4) -----------------------------------------
    def uniform_reports(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n values drawn uniformly from the domain."""
        self.check_report_size(n)
        return check_generator(rng).integers(0, self.domain_size, size=n, dtype=np.int64)

    def uniform_support(self) -> float:
        """1/d: a uniform value is the given one."""
        return 1.0 / self.domain_size

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """The maximal gain attack: each fake user reports a uniformly drawn target."""
        self.check_report_size(n)
        return check_generator(rng).choice(np.asarray(targets, dtype=np.int64), size=n)

    def crafted_support(self, targets: np.ndarray) -> float:
        """1: a value supports itself only."""
        return 1.0

    def support_counts(self, reports: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        reports = check_values(reports, self.domain_size, name="reports")
        if 8 * candidates.shape[0] >= self.domain_size:  # many candidates: one histogram
            histogram = np.bincount(reports, minlength=self.domain_size)
            return histogram.astype(np.int64, copy=False)[candidates]
        ordered = np.sort(reports)
        return (
            np.searchsorted(ordered, candidates, side="right")
            - np.searchsorted(ordered, candidates, side="left")
        ).astype(np.int64)

    def _simulate_counts(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Reports are multinomial, not independent over values; drawn exactly as follows.

        A GRR report equals "keep v with probability p - q, else a uniform value of the
        whole domain" (p + (d-1)q = 1 gives 1 - dq = p - q).  So each candidate keeps
        K_v ~ Bin(n_v, p-q) users; the users of all other values keep Bin(n - Σn_v, p-q);
        the U users who did not keep are spread uniformly: a multinomial over the
        candidates' cells (1/d each) and the rest of the domain.
        """
        counts, n = candidate_counts, n_users
        d, gap = self.domain_size, self.p_star - self.q_star
        kept = rng.binomial(counts, gap)
        kept_elsewhere = rng.binomial(n - int(counts.sum()), gap)
        uniform = n - int(kept.sum()) - int(kept_elsewhere)
        cells = np.full(counts.shape[0] + 1, 1.0 / d)
        cells[-1] = max(0.0, 1.0 - counts.shape[0] / d)
        spread = rng.multinomial(uniform, cells / cells.sum())[:-1]
        return theory.pure_estimate(kept + spread, n, self.p_star, self.q_star)


def keep_threshold(name: str, epsilon: float, cells: int) -> int:
    """Randomised response over ``cells`` outcomes: the keep coin e^ε/(e^ε+c-1), rounded down.

    Shared by GRR (c = d) and local hashing (c = g).  The coin is representable when both
    p and 1 - p are at least one grid step: ln(c-1) - LOG_GRID <= ε <= ln(c-1) + LOG_GRID.
    """
    e, others = math.exp(epsilon), float(cells - 1)
    keep, flip = e / (e + others), others / (e + others)
    exact.check_representable(
        name,
        epsilon,
        min(keep, flip),
        largest_safe=math.log(others) + exact.LOG_GRID,
        smallest_safe=math.log(others) - exact.LOG_GRID,
    )
    return exact.threshold(keep, flip, round_down=True)
