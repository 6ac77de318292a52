"""The shared shape of a mean-estimation protocol for values in [-1, 1].

Citations ``[W19]`` are to Wang et al., ICDE 2019 (see :mod:`ldp.theory.numeric`).  A
protocol is a small frozen dataclass, like a frequency oracle: ``perturb(values, rng)`` is
the client (one float64 report t* per user), ``estimate(reports)`` the aggregator (the
mean), ``simulate(values, rng)`` the sampled engine where the law of the mean is known
exactly, and the variances come in two forms:

* ``conditional_variance(t)``: Var[t*|t] of one user's unbiased report, computed from the
  probabilities the sampler *really* uses (coins on the 53-bit grid of
  :mod:`ldp.oracles.exact`, PM's dyadic grid); it equals the paper's closed form
  (``paper_variance(t)``, from :mod:`ldp.theory.numeric`) to 1e-6 relative or better
  (~1e-15 for Duchi, ~1e-13 for Laplace's grid form, ~1e-9 for PM at ε = 1), which a test
  checks;
* ``variance(values)`` = Σ_i Var[t*|t_i] / n², the variance of the estimated mean, and
  ``worst_case_variance()`` = max_t Var[t*|t].

Unbiasedness is exact for the realised probabilities: every mechanism here has
E[t*|t] = κ t with a realised κ (1 up to the coins' 2^-50 rounding; exactly 1 for PM and
Laplace), and the estimator divides by it.  The one approximation is the user's value
itself, which the rounding coins see on the 53-bit grid (a bias below 2^-52).

Floating point.  ``exact_bytes`` says whether the ε-LDP guarantee holds for the float64
reports as emitted (a fixed set of report values, each drawn with exactly known
probability: Duchi, PM, HM, the discrete Laplace mechanism), or only for the continuous law
the floats approximate (e.g. float Laplace noise, whose low bits depend on t: Mironov, CCS
2012; see ``docs/numeric.md``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldp import budget
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.reports import check_origin, stamping, wrap_methods
from ldp.validation import ParameterError, check_bounded, check_epsilon, check_generator

#: (1 + t)/2 is seen by the coins as a multiple of 2^-53.
_HALF_GRID = float(exact.GRID)
#: Working bytes per user that a call holds beyond its input, by method, for the
#: protocols that declare nothing else (Duchi's, measured with ``tracemalloc`` at n = 10^6:
#: 41, 24 and 16 B a user, rounded up with a margin).  ``simulate`` holds the sorted copy,
#: mask, indices and counts of ``np.unique`` over the values.
BYTES_PER_USER = {"simulate": 48, "perturb": 32, "variance": 24}


def distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values and how many users hold each (a sampled engine's population)."""
    return np.unique(values, return_counts=True)


def sampled_input(
    protocol: MeanProtocol, values: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.random.Generator, int]:
    """A sampled engine's checked inputs: the values in [-1, 1], the generator, and n
    (refused over the memory budget, :meth:`MeanProtocol.check_user_memory`; n = 0 is the
    caller's NaN)."""
    values = check_bounded(values)
    rng = check_generator(rng)
    n = values.shape[0]
    protocol.check_user_memory("simulate", n)
    return values, rng, n


def law_input(t: object) -> float:
    """One input t in [-1, 1] of a declared report law (``report_cdf``, ``law_edges``), or a
    :class:`~ldp.validation.ParameterError` naming ``t``."""
    if np.ndim(t) != 0:
        raise ParameterError("t", t, "one real number in [-1, 1]")
    return float(check_bounded([t], name="t")[0])


def value_coins(values: np.ndarray) -> np.ndarray:
    """The 53-bit threshold of Bernoulli((1 + t)/2) for each t (randomised rounding to ±1).

    T = floor((1 + t) 2^52), so P(+1) = T/2^53 <= (1 + t)/2 within 2^-53; t = 1 gives
    T = 2^53 (always +1) and t = -1 gives 0 (never).
    """
    return np.floor((values + 1.0) * (_HALF_GRID / 2)).astype(np.int64)


def coin_threshold(name: str, epsilon: float, keep: float, flip: float) -> int:
    """The keep coin of a randomised response with odds keep/flip, rounded down (its odds,
    and so the privacy ratio, never exceed the ideal); refuses an ε it cannot represent."""
    exact.check_representable(
        name,
        epsilon,
        min(keep, flip),
        largest_safe=_largest_safe(keep, flip, epsilon),
    )
    return exact.threshold(keep, flip, round_down=True)


def _largest_safe(keep: float, flip: float, epsilon: float) -> float:
    """The largest ε whose coin is representable, given the coin's log-odds scale with ε."""
    log_odds = math.log(keep) - math.log(flip)
    return epsilon * exact.LOG_GRID / log_odds if log_odds > 0 else math.inf


def on_grid(reports: np.ndarray, step: float, largest: int, *, odd: bool = False) -> np.ndarray:
    """Per report: a float64 k · ``step`` with k an integer, |k| <= ``largest`` (k odd
    when ``odd``), and never -0.0: the support of a mechanism whose reports are grid points.

    ``step`` must be a power of two, so that x / step is exact and a report off the grid
    (one ulp away included) cannot divide to an integer.  Another dtype or shape than one
    float64 a report is outside the support too.
    """
    x = np.asarray(reports)
    if x.dtype != np.float64 or x.ndim != 1:
        return np.zeros(x.shape[0] if x.ndim else 1, dtype=bool)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf are outside anyway
        k = x / step
        inside = np.isfinite(k) & (k == np.floor(k)) & (np.abs(k) <= largest)
        inside &= ~((x == 0) & np.signbit(x))  # -0.0: a byte pattern the draw never makes
        return inside & (np.mod(k, 2) == 1) if odd else inside


@dataclass(frozen=True, kw_only=True)
class MeanProtocol(ABC):
    """A one-dimensional mean-estimation protocol for values in [-1, 1].

    Attributes
    ----------
    epsilon : float
        The privacy budget; checked by :func:`ldp.validation.check_epsilon`.
    """

    epsilon: float
    capabilities: ClassVar[Capabilities] = Capabilities(engines=("reports",))
    #: Whether ε-LDP holds for the float64 bytes emitted (see the module docstring).
    exact_bytes: ClassVar[bool] = False
    #: Whether every report lies in ``report_range()`` (False: unbounded noise).
    bounded: ClassVar[bool] = True
    #: Bytes a user costs in each method beyond the input (:data:`BYTES_PER_USER`).
    bytes_per_user: ClassVar[Mapping[str, int]] = BYTES_PER_USER
    #: The paper's closed form Var[t*|t] as a function of (ε, t) (:mod:`ldp.theory.numeric`),
    #: read by ``paper_variance`` and by the figures without building the protocol.
    paper_form: ClassVar[Callable[[float, np.ndarray | float], np.ndarray | float]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Every protocol's reports carry its stamp; ``estimate`` refuses another's
        (:mod:`ldp.reports`)."""
        super().__init_subclass__(**kwargs)
        wrap_methods(cls)

    # ------------------------------------------------------------------ client and server
    @abstractmethod
    def _perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The reports of checked float64 values."""

    @stamping
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each user's ε-LDP report t* (float64, one per value), E[t*|t] = κ t."""
        values = check_bounded(values)
        rng = check_generator(rng)
        self.check_user_memory("perturb", values.shape[0])
        return self._perturb(values, rng)

    def check_user_memory(self, method: str, n_users: int) -> None:
        """Refuse, before drawing anything, a call of ``method`` over ``n_users`` values
        whose working arrays (:attr:`bytes_per_user`) exceed the memory budget."""
        per_user = self.bytes_per_user[method]
        most = budget.current().memory_bytes // per_user
        budget.check_memory(
            "values",
            f"{n_users} users",
            f"at most {most} users per {method} call",
            per_user * float(n_users),
            f"{self.name}'s {method} of {n_users} users ({per_user} B a user)",
        )

    def estimate(self, reports: np.ndarray) -> float:
        """The unbiased mean Σ t*_i / (n κ); NaN for no reports.

        Reports stamped by another protocol or ε are refused (:mod:`ldp.reports`); bare
        ones must be finite floats and, for a bounded protocol, within ``report_range()``.
        """
        check_origin(self, reports)
        reports = np.asarray(reports, dtype=np.float64)
        if reports.ndim != 1:
            raise ValueError(f"reports must be one-dimensional, got shape {reports.shape}")
        if reports.size == 0:
            return math.nan
        low, high = self.report_range() if self.bounded else (-math.inf, math.inf)
        outside = ~((reports >= low) & (reports <= high) & np.isfinite(reports))
        if outside.any():
            allowed = f"in [{low:.6g}, {high:.6g}]" if self.bounded else "finite"
            raise ParameterError(
                "reports", float(reports[np.argmax(outside)]), f"{allowed} for {self.name}"
            )
        return float(reports.mean() / self.kappa)

    def n_reports(self, reports: np.ndarray) -> int:
        return int(np.shape(reports)[0])

    # ------------------------------------------------------------------ closed forms
    @property
    @abstractmethod
    def bound(self) -> float:
        """The largest |report| (where ``bounded`` is False, a scale for the audit's bins)."""

    @property
    @abstractmethod
    def kappa(self) -> float:
        """κ with E[t*|t] = κ t for the realised probabilities (1 in the paper)."""

    @abstractmethod
    def second_moment(self, t: np.ndarray | float) -> np.ndarray:
        """E[t*² | t] for the realised probabilities."""

    def paper_variance(self, t: np.ndarray | float) -> np.ndarray:
        """Var[t*|t] as the paper states it: ``paper_form(ε, t)``."""
        return np.asarray(self.paper_form(self.epsilon, np.asarray(t, dtype=float)))

    @classmethod
    def paper_worst_case(cls, epsilon: float) -> float:
        """max over t in [-1, 1] of the paper's Var[t*|t] at ε, without building the
        protocol: at t = 0 or |t| = 1, the paper's variances being affine in t²."""
        return float(max(cls.paper_form(epsilon, 0.0), cls.paper_form(epsilon, 1.0)))

    def conditional_variance(self, t: np.ndarray | float) -> np.ndarray:
        """Var[t*/κ | t] = E[t*²|t]/κ² - t²: the variance one user adds to the estimator."""
        t = np.asarray(t, dtype=np.float64)
        return self.second_moment(t) / self.kappa**2 - np.square(t)

    def worst_case_variance(self) -> float:
        """max over t in [-1, 1] of Var[t*|t].

        The paper's variances are affine in t² (maximal at t = 0 or |t| = 1); PM's input
        rounding adds a term that vanishes on its 2^-16 grid and peaks at the grid's
        midpoints, so the midpoints next to 0 and 1 are evaluated too.
        """
        half_step = 2.0**-17
        points = np.array([0.0, half_step, 1.0 - half_step, 1.0])
        return float(self.conditional_variance(points).max())

    def variance(self, values: np.ndarray) -> float:
        """Var[estimate] = Σ_i Var[t*|t_i] / n² for the users' values."""
        values = check_bounded(values)
        if values.size == 0:
            return math.nan
        self.check_user_memory("variance", values.size)
        return float(self.conditional_variance(values).sum() / values.size**2)

    # ------------------------------------------------------------------ audit hooks
    def audit_events(self, v: float, v_prime: float) -> list:
        """The mechanism's likelihood-ratio event for v vs v' (one interval each way)."""
        from ldp.audit.events import interval_events

        return interval_events(self.evidence_interval(v), self.evidence_interval(v_prime))

    def report_range(self) -> tuple[float, float]:
        """An interval holding every report (the bins of the audit split it)."""
        return -self.bound, self.bound

    @abstractmethod
    def evidence_interval(self, v: float) -> tuple[float, float]:
        """A closed interval of reports where the density given v is at its largest."""

    @abstractmethod
    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(t* in evidence_interval(1) | t) for t = 1 and t = -1: ratio e^ε exactly."""
