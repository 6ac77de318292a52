"""Closed forms behind the numbers [PEM] states in passing (Secs. II-B, IV-C, IV-D, appendix).

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*
(arXiv:1708.06674).  Each function is one stated result, written so that the reproduction
report can recompute it:

* :func:`lemma1_e` and :func:`prop1_scores`: the appendix's E(ε) and the arguments of Φ
  in the partitioned (P1) and split (P2) identification probabilities (Eq. (6));
* :func:`users_for_margin`: Sec. II-B's population needed for a value of frequency f to
  stand z standard deviations clear of zero;
* :func:`max_values_at_least`: Sec. II-B's "up to 1000 values" with frequency >= 0.1%;
* :func:`rule_config`: Sec. IV-C's configuration rule (η maximal under the query limit);
* :func:`neighbour_configs`: the "slight changes" of Sec. IV-C around a configuration;
* :func:`candidate_size_gain`: Sec. IV-C's |C_i| below k for large k, above k for small k,
  as the gain in utility (4) over |C_i| = k.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm

from ldp.theory.pem import (
    DEFAULT_QUERY_LIMIT,
    PEMConfig,
    assumed_frequencies,
    optimize,
    utility,
)
from ldp.validation import check_epsilon, check_int

__all__ = [
    "candidate_size_gain",
    "lemma1_e",
    "max_values_at_least",
    "neighbour_configs",
    "prop1_scores",
    "rule_config",
    "users_for_margin",
]


def lemma1_e(epsilon: float | np.ndarray) -> float | np.ndarray:
    """E(ε) = (e^ε - 1)^2 / e^ε ([PEM] appendix, Lemma 1); OLH's Var/n is 4/E(ε) (Eq. (3))."""
    epsilon = np.asarray(epsilon, dtype=float)
    return np.expm1(epsilon) ** 2 / np.exp(epsilon)


def prop1_scores(
    epsilon: np.ndarray | float,
    g: np.ndarray | float,
    frequency: np.ndarray | float,
    n_users: np.ndarray | float,
    slots: np.ndarray | float,
) -> tuple[np.ndarray, np.ndarray]:
    """(P1, P2): the arguments of Φ in the appendix's proof of Prop. 1 ([PEM] Eq. (6)).

    P1 = A/√(1 + B E(ε)) + C/√(g/E(ε) + g B) (users partitioned into g groups, each at ε)
    and P2 = A/√(1 + B E(ε/g)) + C/√(1/E(ε/g) + B) (every user answers all g questions at
    ε/g), with A = Φ^-1(``slots``) < 0, ``slots`` = (k - j)/N[i], B = f/2 (1 - f/2) and
    C = f √n[i] / 2, as printed.  Φ is monotone, so P1 > P2 means partitioning identifies
    the value with higher probability.
    """
    e, g, f = (np.asarray(x, dtype=float) for x in (epsilon, g, frequency))
    a = norm.ppf(np.asarray(slots, dtype=float))
    b = f / 2 * (1 - f / 2)
    c = f * np.sqrt(np.asarray(n_users, dtype=float)) / 2
    whole, split = lemma1_e(e), lemma1_e(e / g)
    p1 = a / np.sqrt(1 + b * whole) + c / np.sqrt(g / whole + g * b)
    p2 = a / np.sqrt(1 + b * split) + c / np.sqrt(1 / split + b)
    return p1, p2


def users_for_margin(variance_per_user: float, frequency: float, sds: float = 3.0) -> float:
    """The n at which a value of ``frequency`` f has its true count f n at ``sds`` standard
    deviations of the count's estimate: f n >= z √(Var/n · n), i.e. n >= z^2 (Var/n) / f^2.

    [PEM] Sec. II-B with OLH at e^ε = 10 (Var/n = 40/81, Eq. (3)), f = 0.1%, z = 3:
    "0.001 n >= 3 x 0.7 √n, or n >= 4,410,000" (with the rounded 0.7).
    """
    if not variance_per_user >= 0 or not 0 < frequency <= 1:
        raise ValueError("need Var/n >= 0 and a frequency in (0, 1]")
    return sds**2 * variance_per_user / frequency**2


def max_values_at_least(share: float) -> int:
    """How many values can have frequency >= ``share`` at most: ⌊1/share⌋ (frequencies sum
    to 1).  [PEM] Sec. II-B: "up to 1000 values with frequencies 0.1% or higher"."""
    if not 0 < share <= 1:
        raise ValueError(f"share must lie in (0, 1], got {share}")
    return math.floor(1 / share + 1e-9)


def rule_config(k: int, m: int, query_limit: int = DEFAULT_QUERY_LIMIT) -> PEMConfig:
    """[PEM] Sec. IV-C's configuration rule: γ = log2 k, |C_i| = k, η[i] = η, n[i] = n/g,
    with η the largest integer whose queries 2^{γ+η} g (g = ⌈(m - γ)/η⌉) fit the limit.

    "Less than the limit" is read as at most the limit (the optimizer's and
    :class:`~ldp.heavy_hitters.PEM`'s own check: 2^20 queries are allowed).  γ is
    ⌈log2 k⌉ for a k that is not a power of two.
    """
    k = check_int(k, "k", minimum=1)
    m = check_int(m, "m", minimum=2)
    gamma = min(m - 1, math.ceil(math.log2(k)))
    fitting = [
        eta
        for eta in range(1, m - gamma + 1)
        if 2 ** (gamma + eta) * math.ceil((m - gamma) / eta) <= query_limit
    ]
    if not fitting:
        raise ValueError(f"no uniform PEM shape fits query_limit {query_limit} at k={k}, m={m}")
    return PEMConfig.uniform(m, k, max(fitting), gamma)


def neighbour_configs(
    config: PEMConfig, k: int, query_limit: int = DEFAULT_QUERY_LIMIT
) -> dict[str, PEMConfig]:
    """Sec. IV-C's "slight changes" around ``config`` that keep its number of groups g:
    γ ± 1 (the last step's η absorbing the difference), n[1] ± 10% of its share (taken
    from or given to the last group), |C_i| x 0.75 and x 1.25 before the last step, and
    η + 1 where g stays the same.  Only shapes within ``query_limit`` are returned.
    """
    k = check_int(k, "k", minimum=1)
    m, g = config.m, config.g
    out: dict[str, PEMConfig] = {}

    def keep(name: str, candidate: PEMConfig) -> None:
        if candidate.g == g and candidate.queries <= query_limit:
            out[name] = candidate

    for step in (-1, 1):
        gamma = config.gamma + step
        last = config.etas[-1] - step
        if gamma >= 0 and 1 <= last <= m:
            etas = config.etas[:-1] + (last,)
            keep(
                f"γ {'+' if step > 0 else '-'}1",
                PEMConfig(m, gamma, etas, config.fractions, config.candidate_sizes),
            )
    if g > 1:
        for shift in (-0.1, 0.1):
            moved = config.fractions[0] * shift
            fractions = (config.fractions[0] + moved, *config.fractions[1:-1])
            fractions += (config.fractions[-1] - moved,)
            keep(
                f"n[1] {'+' if shift > 0 else '-'}10%",
                PEMConfig(m, config.gamma, config.etas, fractions, config.candidate_sizes),
            )
        for factor in (0.75, 1.25):
            sizes = tuple(max(1, round(factor * c)) for c in config.candidate_sizes[:-1])
            keep(
                f"|C_i| x {factor:g}",
                PEMConfig(m, config.gamma, config.etas, config.fractions, (*sizes, k)),
            )
    eta = config.etas[0] + 1
    if config.gamma + eta <= m:
        shape = PEMConfig.uniform(m, k, eta, config.gamma)
        keep("η + 1", PEMConfig(m, shape.gamma, shape.etas, shape.fractions, shape.candidate_sizes))
    return out


@functools.lru_cache(maxsize=64)
def candidate_size_gain(
    k: int,
    m: int,
    n: int,
    epsilon: float,
    factors: Sequence[float],
    query_limit: int = DEFAULT_QUERY_LIMIT,
    assumed: str = "zipf",
) -> tuple[float, int]:
    """(U(best with |C_i| = factor k before the last step) / U(best with |C_i| = k), the
    chosen |C_1|): the gain in utility (4) that Sec. IV-C's optimizer finds by keeping
    more or fewer than k prefixes, each side optimised over η ([PEM] Sec. IV-C: "when k is
    very big, |C_i| is smaller than k ... when k is small, |C_i| can be large").
    ``factors`` is a tuple (hashable).
    """
    epsilon = check_epsilon(epsilon)
    frequencies = assumed_frequencies(assumed)
    other = optimize(k, m, n, epsilon, query_limit, assumed, candidate_factors=tuple(factors))
    plain = optimize(k, m, n, epsilon, query_limit, assumed)
    ratio = utility(frequencies, n, epsilon, other, k) / utility(frequencies, n, epsilon, plain, k)
    return float(ratio), int(other.candidate_sizes[0])
