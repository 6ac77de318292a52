"""PEM's analytical model: identification probability (5), utility (4), optimizer (IV-C).

Citations ``[PEM]`` are to Wang, Li, Jha, *Locally Differentially Private Heavy Hitter
Identification*, IEEE Transactions on Dependable and Secure Computing (2019),
arXiv:1708.06674.

A PEM configuration (:class:`PEMConfig`) has γ initial bits, per-step extensions η[i],
the share of users n[i]/n of each group and the candidate-set sizes |C_i|.  Step i
queries D_1 = {0,1}^{γ+η[1]} or D_i = C_{i-1} x {0,1}^{η[i]} and keeps the |C_i| prefixes
with the largest support.

The erratum in (5).  The printed formula uses Φ^{-1}((k-j)/N[i]), which is -∞ (so the
identification probability 0) for the k-th value, while the sentence before it reasons
with k - j + 1 free slots for the j-th value.  ``slots="k-j+1"`` (the default) follows
the text; ``slots="k-j"`` follows the printed formula.  The default is the reading the
empirical identification frequencies match (``tests/theory/test_pem_theory.py`` and the
Figure 2 reproduction, where the k-th value is identified with clearly positive
probability); both are kept.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ldp.lazy import lazy_module
from ldp.validation import check_epsilon, check_int

#: Φ and Φ⁻¹ as scipy.stats.norm computes them (ndtr, ndtri), without its per-call checks
special = lazy_module("scipy.special")

Slots = Literal["k-j+1", "k-j"]
Goal = Literal["f1", "ncr"]

#: The query limit of the paper's experiments (Sec. IV-C, VI-A).
DEFAULT_QUERY_LIMIT = 2**20


class QueryLimitTooLow(ValueError):
    """No PEM shape for the asked k and m stays within the oracle-query limit."""


@dataclass(frozen=True)
class PEMConfig:
    """One PEM configuration ([PEM] Sec. IV-A, IV-C).

    Attributes
    ----------
    m : int
        Bits per value.
    gamma : int
        γ: extra bits queried in full in the first step.
    etas : tuple of int
        η[i]: bits added in step i (γ + Σ η[i] = m).
    fractions : tuple of float
        n[i]/n: the share of users in group i (sums to 1).
    candidate_sizes : tuple of int
        |C_i|: prefixes kept after step i (the last one is k for top-k).
    """

    m: int
    gamma: int
    etas: tuple[int, ...]
    fractions: tuple[float, ...]
    candidate_sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        check_int(self.m, "m", minimum=1)
        check_int(self.gamma, "gamma", minimum=0)
        steps = len(self.etas)
        if steps == 0:
            raise ValueError("etas must name at least one step")
        for eta in self.etas:
            check_int(eta, "eta", minimum=1, maximum=self.m)
        if self.gamma + sum(self.etas) != self.m:
            raise ValueError(
                f"gamma + sum(etas) must equal m = {self.m}, got {self.gamma} + {sum(self.etas)}"
            )
        if len(self.fractions) != steps or len(self.candidate_sizes) != steps:
            raise ValueError(
                f"fractions and candidate_sizes need one entry per step ({steps}), got "
                f"{len(self.fractions)} and {len(self.candidate_sizes)}"
            )
        if any(not f > 0 for f in self.fractions) or not math.isclose(sum(self.fractions), 1):
            raise ValueError(f"fractions must be positive and sum to 1, got {self.fractions}")
        for size in self.candidate_sizes:
            check_int(size, "candidate_sizes", minimum=1)

    @property
    def g(self) -> int:
        """The number of groups (steps)."""
        return len(self.etas)

    @property
    def lengths(self) -> tuple[int, ...]:
        """Prefix length γ + η[1] + ... + η[i] reported by group i."""
        return tuple(int(x) for x in self.gamma + np.cumsum(self.etas))

    @property
    def domain_sizes(self) -> tuple[int, ...]:
        """|D_i|: 2^{γ+η[1]} in step 1, |C_{i-1}| 2^{η[i]} after."""
        sizes = [2 ** (self.gamma + self.etas[0])]
        for previous, eta in zip(self.candidate_sizes[:-1], self.etas[1:], strict=True):
            sizes.append(min(previous, sizes[-1]) * 2**eta)
        return tuple(sizes)

    @property
    def queries(self) -> int:
        """Total frequency-oracle queries Σ|D_i| (what the query limit bounds)."""
        return int(sum(self.domain_sizes))

    @classmethod
    def uniform(cls, m: int, k: int, eta: int, gamma: int | None = None) -> PEMConfig:
        """The paper's standard shape: γ = ⌈log2 k⌉, η[i] = η, n[i] = n/g, |C_i| = k.

        g = ⌈(m - γ)/η⌉ groups ([PEM] Sec. IV-A); the last step takes what is left,
        m - γ - (g-1)η <= η bits.
        """
        m = check_int(m, "m", minimum=1)
        k = check_int(k, "k", minimum=1)
        gamma = math.ceil(math.log2(k)) if gamma is None else gamma
        gamma = check_int(gamma, "gamma", minimum=0, maximum=m - 1)
        eta = check_int(eta, "eta", minimum=1, maximum=m - gamma)
        g = math.ceil((m - gamma) / eta)
        etas = (eta,) * (g - 1) + (m - gamma - (g - 1) * eta,)
        return cls(m, gamma, etas, (1 / g,) * g, (k,) * g)


def paper_config(
    k: int, m: int, query_limit: int = DEFAULT_QUERY_LIMIT, eta: int | None = None
) -> PEMConfig:
    """PEM's shape as the authors' public code sets it (the rule behind [PEM] Sec. VI-B6).

    Group 1 reports the first ⌊log2 k⌋ + 1 bits (all 2^{⌊log2 k⌋+1} > k of them queried),
    and each later group η more, the last one what is left:
    g = 1 + ⌈(m - ⌊log2 k⌋ - 1)/η⌉ groups of n/g users, |C_i| = k.  Without ``eta``, η is
    the largest whose queries 2^{⌊log2 k⌋+1} + Σ_{i>1} k 2^{η[i]} fit ``query_limit``.  At
    m = 64, k = 16 and 2^20 queries this gives η = 13 and g = 6, Sec. VI-B6's "last group,
    which is one sixth of users".  In :class:`PEMConfig` terms γ = 0 and
    η[1] = ⌊log2 k⌋ + 1.
    """
    k = check_int(k, "k", minimum=1)
    m = check_int(m, "m", minimum=1)
    query_limit = check_int(query_limit, "query_limit", minimum=2)
    first = min(m, int(math.floor(math.log2(k))) + 1)

    def shape(step: int) -> PEMConfig:
        rest = m - first
        g = 1 + -(-rest // step)
        etas = (first,) + (step,) * (g - 2) + ((rest - (g - 2) * step,) if g > 1 else ())
        return PEMConfig(m, 0, etas, (1 / g,) * g, (k,) * g)

    if first == m:
        config = PEMConfig(m, 0, (m,), (1.0,), (k,))
    elif eta is not None:
        config = shape(check_int(eta, "eta", minimum=1, maximum=m - first))
    else:
        fitting = [e for e in range(1, m - first + 1) if shape(e).queries <= query_limit]
        if not fitting:
            raise QueryLimitTooLow(f"query_limit {query_limit} is below every paper-rule PEM shape")
        config = shape(max(fitting))
    if config.queries > query_limit:
        raise QueryLimitTooLow(
            f"query_limit {query_limit} is below the {config.queries} queries of the "
            f"paper-rule shape with eta = {eta}"
        )
    return config


def olh_pq(epsilon: float) -> tuple[float, float]:
    """OLH's (p*, q*) with g = ⌈e^ε + 1⌉, as PEM uses it ([PEM] Sec. II)."""
    from ldp.theory.frequency import olh_default_g
    from ldp.theory.frequency import olh_pq as pq

    return pq(epsilon, olh_default_g(epsilon))


def identification_probability(
    frequencies: Sequence[float] | np.ndarray,
    n_users: float,
    domain_size: int,
    kept: int,
    p_star: float,
    q_star: float,
    slots: Slots = "k-j+1",
) -> np.ndarray:
    """Piden_j[i] of [PEM] Eq. (5): the j-th value's prefix is among the kept ones.

    ``frequencies[j-1]`` is f_j, sorted in decreasing order; ``n_users`` is n[i];
    ``domain_size`` is |D_i|; ``kept`` is |C_i| (the k of (5)); N[i] = |D_i| - |C_i| values
    are assumed to have frequency 0.  Support of v_j is approximated as normal with mean
    n[i] p_j and variance n[i] p_j (1 - p_j), p_j = p* f_j + q*(1 - f_j); the zero-frequency
    values' threshold uses μ_0 = n[i] q*, σ_0^2 = n[i] q*(1-q*).  See the module docstring
    for ``slots``.  When the slots cover all of N[i] the probability is 1; with no slot left
    it is 0.
    """
    f = np.asarray(frequencies, dtype=float)
    j = np.arange(1, f.shape[0] + 1)
    free = kept - j + (1 if slots == "k-j+1" else 0)
    others = domain_size - kept
    if others <= 0:
        return np.ones_like(f)
    p_j = p_star * f + q_star * (1 - f)
    mu_j, sigma_j = n_users * p_j, np.sqrt(n_users * p_j * (1 - p_j))
    mu_0, sigma_0 = n_users * q_star, math.sqrt(n_users * q_star * (1 - q_star))
    with np.errstate(divide="ignore"):
        z = special.ndtri(np.clip(free / others, 0.0, 1.0))  # -inf at 0 slots, +inf when all fit
    out = special.ndtr((mu_j + z * sigma_0 - mu_0) / sigma_j)
    out[free <= 0] = 0.0
    out[free >= others] = 1.0
    return out


def overall_identification(
    frequencies: Sequence[float] | np.ndarray,
    n: int,
    epsilon: float,
    config: PEMConfig,
    slots: Slots = "k-j+1",
    pq: tuple[float, float] | None = None,
) -> np.ndarray:
    """Π_i Piden_j[i]: the probability that v_j survives every step ([PEM] Eq. (4))."""
    epsilon = check_epsilon(epsilon)
    p_star, q_star = pq if pq is not None else olh_pq(epsilon)
    result = np.ones(len(frequencies))
    for fraction, size, kept in zip(
        config.fractions, config.domain_sizes, config.candidate_sizes, strict=True
    ):
        result *= identification_probability(
            frequencies, n * fraction, size, kept, p_star, q_star, slots
        )
    return result


def utility_weights(k: int, goal: Goal = "f1") -> np.ndarray:
    """w_j of [PEM] Eq. (4): 1/k for F1; (k+1-j)/Σ_l(k+1-l) for NCR."""
    k = check_int(k, "k", minimum=1)
    if goal == "f1":
        return np.full(k, 1 / k)
    if goal == "ncr":
        scores = np.arange(k, 0, -1, dtype=float)
        return scores / scores.sum()
    raise ValueError(f"goal must be 'f1' or 'ncr', got {goal!r}")


def utility(
    frequencies: Sequence[float] | np.ndarray,
    n: int,
    epsilon: float,
    config: PEMConfig,
    k: int,
    goal: Goal = "f1",
    slots: Slots = "k-j+1",
    pq: tuple[float, float] | None = None,
) -> float:
    """The unified utility score Σ_j w_j Π_i Piden_j[i] of [PEM] Eq. (4), j = 1..k."""
    f = np.asarray(frequencies, dtype=float)[:k]
    if f.shape[0] < k:
        raise ValueError(f"frequencies must give at least k = {k} values, got {f.shape[0]}")
    weights = utility_weights(k, goal)
    return float(weights @ overall_identification(f, n, epsilon, config, slots, pq))


def assumed_frequencies(assumed: str | Sequence[float] = "zipf", size: int = 2**20) -> np.ndarray:
    """The frequency distribution the optimizer assumes ([PEM] Sec. IV-C, VI-B7).

    ``"zipf"``: f_j ∝ 1/j (the paper's default); ``"zipf1.5"``: f_j ∝ j^{-1.5};
    ``"exponential"``: f_j = 0.05·0.95^{j-1}; ``"uniform"``: all equal.  Zipf laws are
    normalised over ``size`` ranks (2^20 by default: the paper does not say; the choice
    moves f_1 by a constant factor only).  An explicit sequence is used as given.
    """
    if not isinstance(assumed, str):
        return np.sort(np.asarray(assumed, dtype=float))[::-1]
    return _named_frequencies(assumed, size)


@functools.lru_cache(maxsize=16)
def _named_frequencies(assumed: str, size: int) -> np.ndarray:
    """The named shapes of :func:`assumed_frequencies`, built once per (name, size)."""
    ranks = np.arange(1, size + 1, dtype=float)
    shapes = {
        "zipf": 1 / ranks,
        "zipf1.5": ranks**-1.5,
        "exponential": 0.95 ** (ranks - 1),
        "uniform": np.ones_like(ranks),
    }
    if assumed not in shapes:
        raise ValueError(f"assumed must be one of {sorted(shapes)} or frequencies, got {assumed!r}")
    frequencies = shapes[assumed] / shapes[assumed].sum()
    frequencies.flags.writeable = False  # shared by every caller
    return frequencies


def optimize(
    k: int,
    m: int,
    n: int,
    epsilon: float,
    query_limit: int = DEFAULT_QUERY_LIMIT,
    assumed: str | Sequence[float] = "zipf",
    goal: Goal = "f1",
    slots: Slots = "k-j+1",
    candidate_factors: Sequence[float] = (1,),
    min_eta: int = 2,
) -> PEMConfig:
    """PEM's default parameters by the numerical optimisation of [PEM] Sec. IV-C.

    Tries every η (and each |C_i| = factor·k, with the last step keeping k) in the uniform
    shape γ = ⌈log2 |C|⌉, n[i] = n/g, and returns the configuration within the query limit
    whose utility (4) under the assumed distribution is highest.  Ties go to fewer groups.

    ``min_eta`` (2) keeps out η = 1: there |D_i| = 2|C_i|, so N[i] = |C_i| and (5)'s
    assumption that the N[i] other prefixes have frequency 0 fails (a short prefix carries
    about 2^-ℓ of all users); the model then rates 60 one-bit steps above the paper's
    choice, against its own Observation 1 and Fig. 8b.  For η >= 2 the model's utility
    rises with η up to the query limit, which is the paper's stated optimum.
    """
    k = check_int(k, "k", minimum=1)
    m = check_int(m, "m", minimum=1)
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    query_limit = check_int(query_limit, "query_limit", minimum=2)
    if isinstance(assumed, str):  # a named shape: the same answer for the same arguments
        factors = tuple(float(f) for f in candidate_factors)
        return _optimize_named(
            k, m, n, epsilon, query_limit, assumed, goal, slots, factors, min_eta
        )
    return _optimize(
        k, m, n, epsilon, query_limit, assumed, goal, slots, candidate_factors, min_eta
    )


@functools.lru_cache(maxsize=1024)
def _optimize_named(*arguments) -> PEMConfig:
    """:func:`optimize` for a named assumed shape, remembered (a PEM built for every
    setting and every trial asks the same few questions; the configuration is frozen)."""
    return _optimize(*arguments)


def _optimize(
    k: int,
    m: int,
    n: int,
    epsilon: float,
    query_limit: int,
    assumed: str | Sequence[float],
    goal: Goal,
    slots: Slots,
    candidate_factors: Sequence[float],
    min_eta: int,
) -> PEMConfig:
    """:func:`optimize` on checked arguments."""
    frequencies = assumed_frequencies(assumed)
    best: tuple[float, int, PEMConfig] | None = None
    for factor in candidate_factors:
        kept = max(1, int(round(factor * k)))
        gamma = min(m - 1, math.ceil(math.log2(kept))) if kept > 1 else 0
        for eta in range(min(min_eta, m - gamma), m - gamma + 1):
            shape = PEMConfig.uniform(m, kept, eta, gamma)
            config = PEMConfig(
                m, gamma, shape.etas, shape.fractions, shape.candidate_sizes[:-1] + (k,)
            )
            if config.queries > query_limit:
                continue
            score = utility(frequencies, n, epsilon, config, k, goal, slots)
            if best is None or (score, -config.g) > (best[0], -best[1]):
                best = (score, config.g, config)
    if best is None:
        raise QueryLimitTooLow(
            f"query_limit {query_limit} is below one PEM step for k = {k}, m = {m} "
            f"(the smallest step queries {2 ** (min(m - 1, math.ceil(math.log2(k))) + 1)})"
        )
    return best[2]
