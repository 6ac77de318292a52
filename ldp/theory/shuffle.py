"""Privacy amplification by shuffling: the published central (ε, δ) of n shuffled ε0-LDP reports.

If every user applies the same ε0-LDP randomizer and an intermediary shuffles the n reports
before the server sees them, the multiset of reports is (ε, δ)-DP for an ε much smaller
than ε0 (the informal Theorem 3.1 of the lecture notes *Distributed Differential Privacy*,
Sec. 3 "Shuffle model").  The papers below make ε explicit; every function cites the result
it evaluates and raises :class:`BoundNotApplicable` (a ``ValueError`` naming the parameter)
outside the range where that result is proved.

Citations:

* ``[EFMRTT19]`` Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta, *Amplification
  by Shuffling: From Local to Central Differential Privacy via Anonymity*, SODA 2019
  (arXiv:1811.12469), its amplification-by-shuffling theorem for ε0 < 1/2.
* ``[FMT21]`` Feldman, McMillan, Talwar, *Hiding Among the Clones: A Simple and Nearly
  Optimal Analysis of Privacy Amplification by Shuffling*, FOCS 2021 (arXiv:2012.12803):
  Theorem 3.1 (closed form), the reduction of Sec. 3 to a pair of binomial mixtures it is
  proved from, and the numerical evaluation of that pair (Appendix E).
* ``[BBGN19]`` Balle, Bell, Gascón, Nissim, *The Privacy Blanket of the Shuffle Model*,
  CRYPTO 2019 (arXiv:1903.02837): Theorem 3.1 (k-ary randomized response, closed form) and
  the Hoeffding and Bennett amplification bounds of Sec. 5 (generic ε0-LDP randomizer, or a
  specific one through its blanket).
* ``[WPLWLYWY24]`` Wang, Peng, Li, Wen, Li, Yu, Wang, Yang, *Privacy Amplification via
  Shuffling: Unified, Simplified, and Tightened*, VLDB 2024 (arXiv:2304.05007): the
  variation-ratio reduction, evaluated exactly (:func:`variation_ratio_epsilon`); the
  tightest bound here, for any ε0-LDP randomizer or for GRR.

Every bound holds for the *same* randomizer at every user, run independently (the
non-adaptive case of the papers).  Reports are post-processed by the shuffle, so ε0 itself
is always a valid (ε0, 0) answer; :func:`shuffle_epsilon` never returns more than ε0, the
individual functions return the published value as printed.

Published numbers (``tests/theory/test_shuffle.py`` and, for [WPLWLYWY24],
``tests/theory/test_shuffle_variation_ratio.py`` check each):

============================================  ===========================  =================
bound (n, ε0, δ)                              published                    here
============================================  ===========================  =================
[FMT21] numerical (10^5, 4, 10^-6)            between 0.1675 and 0.1728    0.169770
[FMT21] closed form (10^5, 4, 10^-6)          0.5378                       0.5378 / 0.5346
[EFMRTT19] (5000, 0.4, 10^-6)                 0.2523                       0.2523
[BBGN19] Hoeffding, generic (5000, 0.4, ..)   0.0575                       0.0575
[BBGN19] Bennett, generic (5000, 0.4, ..)     0.1130                       0.1130
[WPLWLYWY24] generic (10^4, 1, 10^-6)         0.043206 (released code)     0.043206
[WPLWLYWY24] generic (10^5, 4, 10^-6)         0.118156 (released code)     0.118154
============================================  ===========================  =================

The two [FMT21] rows need a word, see :func:`fmt_numerical_epsilon` and
:func:`fmt_closed_form_epsilon`: the interval is the authors' coarse lower/upper
evaluation of the quantity computed exactly here, and 0.5378 is the authors' released
code, whose mixing factor is looser than the one printed in Theorem 3.1 (0.5346).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable
from typing import Literal, get_args

import numpy as np

from ldp import budget
from ldp.lazy import lazy_module
from ldp.validation import MAX_USERS, ParameterError, check_epsilon, check_int

optimize = lazy_module("scipy.optimize")
stats = lazy_module("scipy.stats")

Method = Literal[
    "fmt_numerical",
    "fmt_closed_form",
    "efmrtt",
    "blanket_hoeffding",
    "blanket_bennett",
    "blanket_grr",
    "variation_ratio",
    "best",
]
FMTReading = Literal["theorem", "released_code"]

#: The bound :func:`shuffle_epsilon` uses unless told otherwise: valid for every ε0-LDP
#: randomizer, n and δ, and below the generic blanket bounds on every point tested
#: (n from 10 to 10^6, ε0 from 0.01 to 8, δ from 1e-10 to 1e-3).
DEFAULT_METHOD: Method = "fmt_numerical"
METHODS: tuple[str, ...] = get_args(Method)

#: Relative accuracy of the numerical ε (the returned ε is never below the true root).
_RTOL = 1e-10
#: Clone counts C outside the evaluated window carry at most this fraction of δ; their mass
#: is added to δ(ε) in full, so truncation only loosens (never invalidates) the bound.
_TAIL_FRACTION = 1e-4
#: Absolute allowance added to [FMT21]'s numerical δ(ε) for floating-point rounding (the
#: tails are within ~1e-14 of exact); it makes targets δ below ~1e-12 unreachable.
_FLOAT_SLACK = 1e-13
#: Clone counts between exact tail evaluations in :func:`_half_binomial_tails`.
_ANCHOR = 64
#: Windows up to this many clone counts get every tail from ``binom.sf`` (no recurrence).
_DIRECT_TAILS = 4096
#: The smallest δ [FMT21]'s numerical bound accepts: below ~10 x ``_FLOAT_SLACK`` the
#: allowance dominates δ(ε) and the answer would silently be ε0 (or close to it).
_FMT_MIN_DELTA = 1e-12
#: Cost of one clone count in a whole solve of :func:`fmt_numerical_epsilon` (~50 δ(ε)
#: evaluations, each a few special-function passes): ~20 µs measured, counted as 5000
#: elementary operations of the budget (:mod:`ldp.budget`).
_OPERATIONS_PER_CLONE = 5000
#: Bytes per clone count held by one δ(ε) evaluation (about 16 float64 arrays).
_BYTES_PER_CLONE = 128
#: The same for :func:`variation_ratio_epsilon`, whose δ(ε) calls ``binom.sf`` at every
#: clone count: n = 10^9 at ε0 = 1 (a window of ~2 x 10^5 counts) took 63 s, ~300 µs per
#: count, counted as 10^5 operations.
_VR_OPERATIONS_PER_CLONE = 100_000
#: Relative outward rounding of each of the two terms whose difference is a per-count
#: divergence: the binomial tails are accurate to ~1e-14 relative or better, so δ(ε)
#: stays above the exact one even where the terms are large and nearly cancel.
_ROUNDING = 1e-13
#: The same where the tails come from :func:`_half_binomial_tails`' recurrence (windows of
#: more than ``_DIRECT_TAILS`` counts): measured against ``binom.sf`` at n = 10^6 to 10^8,
#: ε0 = 0.5 to 5, its relative error reached 4.8e-12; 1e-10 leaves a factor of 20.
_RECURRENCE_ROUNDING = 1e-10


class BoundNotApplicable(ValueError):
    """The parameters are valid but outside the range where the cited result is proved."""


# --------------------------------------------------------------------------- validation


def _check_delta(delta: object, *, maximum: float = 1.0) -> float:
    """Return ``delta`` as a float after checking 0 < delta < 1 (and delta <= maximum)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"delta must be a real number, got {type(delta).__name__}")
    value = float(delta)
    if not (0.0 < value < 1.0):  # also rejects NaN
        raise ValueError(f"delta must lie in (0, 1), got {value}")
    if value > maximum:
        raise BoundNotApplicable(f"delta must be <= {maximum} for this bound, got {value}")
    return value


def _check(epsilon0: object, n: object, delta: object) -> tuple[float, int, float]:
    """The three parameters every bound takes, checked."""
    return (
        check_epsilon(epsilon0, "epsilon0"),
        check_int(n, "n", minimum=1, maximum=MAX_USERS),
        _check_delta(delta),
    )


def _smallest_epsilon(
    delta_of: Callable[[float], float], epsilon0: float, delta: float, lowest: float
) -> float:
    """Smallest ε in [lowest, ε0] with ``delta_of(ε) <= delta``, to relative ``_RTOL``.

    ``delta_of`` is a valid δ at every ε (an upper bound on the hockey-stick divergence),
    so any ε it accepts is a valid answer; the root is searched on log δ (smooth where δ
    itself spans hundreds of orders of magnitude) and then nudged up until accepted, so the
    result is never below the exact root.  ε0 is returned when no ε < ε0 is accepted.
    """

    def excess(epsilon: float) -> float:
        return math.log(max(delta_of(epsilon), 1e-300)) - math.log(delta)

    high = epsilon0 * (1 - 1e-12)
    if excess(lowest) <= 0:
        return lowest
    if excess(high) > 0:
        return epsilon0
    root = optimize.brentq(excess, lowest, high, xtol=epsilon0 * 1e-15, rtol=_RTOL)
    step = 2 * _RTOL * root + epsilon0 * 1e-15
    while root < epsilon0 and delta_of(root) > delta:
        root, step = root + step, 2 * step
    return min(root, epsilon0)


# ----------------------------------------------------------------------------- [EFMRTT19]


def efmrtt_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """ε = 12 ε0 √(log(1/δ)/n), [EFMRTT19]'s amplification-by-shuffling theorem.

    Preconditions (the regime the theorem's constants are proved in, as [BBGN19]'s
    companion code implements it for its comparison): ε0 <= 1/2, n >= 1000, δ <= 1/100.
    The value is returned as printed, so it exceeds ε0 when n < 144 log(1/δ) (ε0 itself
    is then the better guarantee, which :func:`shuffle_epsilon` returns).
    """
    epsilon0, n, delta = _check(epsilon0, n, delta)
    if epsilon0 > 0.5:
        raise BoundNotApplicable(f"epsilon0 must be <= 0.5 for [EFMRTT19], got {epsilon0}")
    if n < 1000:
        raise BoundNotApplicable(f"n must be >= 1000 for [EFMRTT19], got {n}")
    delta = _check_delta(delta, maximum=0.01)
    return 12 * epsilon0 * math.sqrt(math.log(1 / delta) / n)


# -------------------------------------------------------------------------------- [FMT21]


def fmt_closed_form_epsilon(
    epsilon0: float, n: int, delta: float, *, reading: FMTReading = "theorem"
) -> float:
    """[FMT21] Theorem 3.1: the closed-form ε after shuffling n ε0-LDP reports.

    With A = 8 √(e^ε0 log(4/δ)/n) + 8 e^ε0/n (the clone-count concentration term),

    * ``reading="theorem"`` (default), as printed in Theorem 3.1:
      ε = log(1 + (e^ε0 - 1)/(e^ε0 + 1) · A);
    * ``reading="released_code"``, the authors' code (the 0.5378 of their README):
      ε = log(1 + (1 - e^-ε0)/(1 + e^-(ε0+ε')) · A) with ε' = log(1 + A).

    Both are valid.  Theorem 3.1's proof bounds the pair (P, Q) of
    :func:`fmt_numerical_delta`, a Δ-mixture with weight α = e^ε0/(e^ε0+1) of two
    count vectors that are (ε', δ)-indistinguishable with e^ε' = 1 + A.  For such a
    mixture the exact factor multiplying e^ε' - 1 is (e^ε0 - 1)/(e^ε0 + e^ε'); the theorem
    uses the larger (e^ε0 - 1)/(e^ε0 + 1), the code the still larger
    (e^ε0 - 1)/(e^ε0 + e^-ε'), i.e. (1-e^-ε0)/(1+e^-(ε0+ε')).  At n = 10^5, ε0 = 4,
    δ = 10^-6 the theorem gives 0.5346 and the code 0.5378 (the published number).

    Precondition (Theorem 3.1): ε0 <= log(n / (16 log(2/δ))); the released code checks
    the slightly stricter log(n / (16 log(4/δ))).
    """
    epsilon0, n, delta = _check(epsilon0, n, delta)
    if reading not in ("theorem", "released_code"):
        raise ValueError(f"reading must be 'theorem' or 'released_code', got {reading!r}")
    limit = math.log(n / (16 * math.log(2 / delta)))
    if epsilon0 > limit:
        raise BoundNotApplicable(
            f"epsilon0 must be <= log(n/(16 log(2/delta))) = {limit:.6g} for [FMT21] "
            f"Theorem 3.1, got {epsilon0}"
        )
    e0 = math.exp(epsilon0)
    concentration = 8 * math.sqrt(e0 * math.log(4 / delta) / n) + 8 * e0 / n
    if reading == "theorem":
        factor = (e0 - 1) / (e0 + 1)
    else:
        factor = -math.expm1(-epsilon0) / (1 + math.exp(-epsilon0) / (1 + concentration))
    return math.log1p(factor * concentration)


def fmt_numerical_delta(epsilon: float, epsilon0: float, n: int) -> float:
    """δ(ε) of the [FMT21] clone reduction, evaluated exactly (up to a 1e-16 tail).

    [FMT21] Sec. 3 reduces the shuffled outputs of two neighbouring data sets to the pair

        C ~ Bin(n-1, e^-ε0),  A ~ Bin(C, 1/2),  Δ ~ Bern(α),  α = e^ε0/(e^ε0 + 1),
        P = (A + Δ, C - A + 1 - Δ),   Q = (A + 1 - Δ, C - A + Δ):

    each of the other n-1 users is, with probability e^-ε0, a "clone" whose report is
    distributed like the differing user's on one input or the other (each with
    probability 1/2); the shuffle is (ε, δ)-DP whenever P and Q are.  This function returns
    max(D_e^ε(P||Q), D_e^ε(Q||P)) of that pair, the quantity [FMT21] Appendix E evaluates
    (there by blocks of C and a bisection, giving a lower and an upper value).

    Given C = c the first coordinate a ∈ {0..c+1} is sufficient and, with b = Bin(c, 1/2)'s
    pmf, P(a) = α b(a-1) + (1-α) b(a), Q(a) = α b(a) + (1-α) b(a-1).  The ratio P/Q
    increases with b(a-1)/b(a) = a/(c+1-a), so P(a) > e^ε Q(a) exactly when
    a > (c+1) q with q = (e^(ε+ε0) - 1)/((e^(ε+ε0) - 1) + (e^ε0 - e^ε)), and

        D_e^ε(P|c || Q|c) = [(e^ε0 - e^ε) Pr[B >= a*-1] + (1 - e^(ε+ε0)) Pr[B >= a*]]/(e^ε0 + 1)

    with a* = floor((c+1) q) + 1 and B ~ Bin(c, 1/2).  Q|c is P|c mirrored (a -> c+1-a,
    as b(a) = b(c-a)), so both directions are equal.  Clone counts c outside the quantile
    window of Bin(n-1, e^-ε0) (a mass below 1e-16 here, below δ·``_TAIL_FRACTION`` inside
    :func:`fmt_numerical_epsilon`) are counted with divergence 1, an upper bound.  For
    ε >= ε0, δ(ε) = 0 (P/Q <= α/(1-α) = e^ε0); below ε0 an allowance of 1e-13 for
    floating-point rounding is added.
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int(n, "n", minimum=1, maximum=MAX_USERS)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    if not (float(epsilon) >= 0):
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    return _fmt_delta_function(epsilon0, n, 1e-12)(float(epsilon))


@functools.lru_cache(maxsize=256)
def _fmt_delta_function(epsilon0: float, n: int, delta: float) -> Callable[[float], float]:
    """δ(ε) of :func:`fmt_numerical_delta` for a window sized for target ``delta``."""
    p = math.exp(-epsilon0)  # a user is a clone with probability e^-ε0
    trials = n - 1
    tail = delta * _TAIL_FRACTION / 2
    low, high = _clone_window(n, epsilon0, trials, p, tail, _OPERATIONS_PER_CLONE)
    clones = np.arange(low, high + 1, dtype=float)
    weights = np.exp(stats.binom.logpmf(clones, trials, p))  # pmf overflows inside boost for p ~ 0
    outside = float(stats.binom.cdf(low - 1, trials, p) + stats.binom.sf(high, trials, p))
    mix = 1 + math.exp(-epsilon0)  # (e^ε0 + 1)/e^ε0: every coefficient below is over e^ε0
    rounding = _ROUNDING if clones.size <= _DIRECT_TAILS else _RECURRENCE_ROUNDING

    def delta_of(epsilon: float) -> float:
        if epsilon >= epsilon0:
            return 0.0
        # the coefficients of P - e^ε Q divided by e^ε0, each without cancellation
        up = math.expm1(epsilon) - math.expm1(-epsilon0)  # e^ε - e^-ε0
        down = -math.expm1(epsilon - epsilon0)  # 1 - e^(ε-ε0)
        total = (1 + math.exp(epsilon)) * -math.expm1(-epsilon0)  # up + down
        a_star = _threshold(clones + 1, up / total, down / total)
        tail_0 = _half_binomial_tails(clones, a_star)  # Pr[B >= a*]
        edge = stats.binom.pmf(a_star - 1, clones, 0.5)  # Pr[B = a* - 1]
        # (down Pr[B >= a*-1] - up Pr[B >= a*])/mix, as down/mix Pr[B = a*-1] - (e^ε-1) Pr[B >= a*]
        # since (up - down)/mix = e^ε - 1; each term rounded outward
        divergence = (1 + rounding) * (down / mix) * edge - (1 - rounding) * math.expm1(
            epsilon
        ) * tail_0
        return float(weights @ np.maximum(divergence, 0.0)) + outside + _FLOAT_SLACK

    return delta_of


def _threshold(size: np.ndarray, share: float, complement: float) -> np.ndarray:
    """The smallest integer a > size · share, where share + complement = 1.

    ``share`` close to 1 is where float64 loses the answer (at e^ε > 2^53 it rounds to 1
    and the threshold jumps past every a); there size - a < size · complement is used
    instead, with the complement computed without cancellation by the caller.
    """
    if share <= 0.5:
        return np.floor(size * share) + 1
    return size + 1 - np.ceil(size * complement)


def _clone_window(
    n: int, epsilon0: float, trials: int, p: float, tail: float, cost: int
) -> tuple[int, int]:
    """A window [low, high] of Bin(trials, p) holding all but 2 ``tail`` of its mass.

    Bernstein's inequality, Pr[|X - μ| >= t] <= 2 exp(-t²/(2(σ² + t/3))), is at most
    2 ``tail`` at t = zσ + z² with z = √(2 log(1/tail)).  The mass outside is computed
    exactly by the callers and counted in full, so the window only decides the cost.
    Refused before anything is evaluated when the window exceeds the budget (scipy's own
    quantile search runs for minutes at n near 2^63 and misses the root for tails below
    ~1e-15, returning the whole range).
    """
    z = math.sqrt(2 * math.log(1 / tail))
    spread = z * math.sqrt(trials * p * (1 - p)) + z * z
    low = max(0, math.floor(trials * p - spread))
    high = min(trials, math.ceil(trials * p + spread))
    _check_window(n, epsilon0, high - low + 1, cost)
    return low, high


def _check_window(n: int, epsilon0: float, window: int, cost: int) -> None:
    """Refuse an n whose window of clone counts exceeds the memory or time budget.

    The window spans ~18 standard deviations of the clone count, so it grows as √n;
    ``cost`` is the number of budget operations one clone count costs in a whole solve.
    """
    limits = budget.current()
    most = min(limits.memory_bytes // _BYTES_PER_CLONE, limits.operations // cost)
    largest = max(1, int(max(n - 1, 1) * (most / max(window, 1)) ** 2))
    allowed = f"<= about {largest:.3g} for this numerical bound at epsilon0 = {epsilon0}"
    what = f"the window of {window} clone counts"
    budget.check_memory("n", n, allowed, _BYTES_PER_CLONE * window, what)
    budget.check_operations("n", n, allowed, cost * float(window), what)


def _half_binomial_tails(trials: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Pr[Bin(c, 1/2) >= k_c] for consecutive c whose thresholds k_c rise by 0 or 1.

    Pascal's rule, Pr[B_(c+1) >= k] = Pr[B_c >= k] + Pr[B_c = k-1]/2, carries the tail
    from c to c+1 with two pmfs; ``binom.sf`` (the slow part) re-anchors it exactly every
    ``_ANCHOR`` counts, which keeps the accumulated rounding near 1e-14 in absolute terms
    (relative to a tiny tail it reached 4.8e-12, hence ``_RECURRENCE_ROUNDING``).  Windows
    of at most ``_DIRECT_TAILS`` counts take every tail from ``binom.sf``.
    """
    size = trials.size
    if size <= _DIRECT_TAILS:  # exact tails: relative accuracy even where they are tiny
        return stats.binom.sf(thresholds - 1, trials, 0.5)
    steps = np.zeros(size)
    rises = thresholds[1:] > thresholds[:-1]
    steps[1:] = 0.5 * stats.binom.pmf(
        thresholds[:-1] - 1, trials[:-1], 0.5
    ) - rises * stats.binom.pmf(thresholds[:-1], trials[1:], 0.5)
    steps = np.concatenate([steps, np.zeros(-size % _ANCHOR)])
    steps[::_ANCHOR] = 0.0  # each block starts from its exact anchor
    anchors = stats.binom.sf(thresholds[::_ANCHOR] - 1, trials[::_ANCHOR], 0.5)
    tails = anchors[:, None] + np.cumsum(steps.reshape(-1, _ANCHOR), axis=1)
    return tails.ravel()[:size]


def fmt_numerical_epsilon(epsilon0: float, n: int, delta: float) -> float:
    """The smallest ε with [FMT21]'s exact δ(ε) <= δ (:func:`fmt_numerical_delta`).

    Valid for every ε0-LDP randomizer and all n >= 1, 0 < δ < 1.  [FMT21]'s released code
    evaluates the same divergence coarsely (blocks of 100 clone counts, 10 bisection steps
    started at the closed form 0.5378), which is why it reports an interval: for n = 10^5,
    ε0 = 4, δ = 10^-6 it prints "between 0.1675 and 0.1728"; the exact value is 0.16977.
    Cost O(√n) per δ(ε) (the window of clone counts), about a dozen δ(ε) per ε; results
    are memoized.
    """
    epsilon0, n, delta = _check(epsilon0, n, delta)
    if delta < _FMT_MIN_DELTA:
        raise BoundNotApplicable(
            f"delta must be >= {_FMT_MIN_DELTA} for [FMT21]'s numerical bound (its "
            f"floating-point allowance of {_FLOAT_SLACK} would dominate delta(epsilon) and "
            f"return about epsilon0), got {delta}; use method='fmt_closed_form' or 'best'"
        )
    return _fmt_numerical_epsilon(epsilon0, n, delta)


@functools.lru_cache(maxsize=4096)
def _fmt_numerical_epsilon(epsilon0: float, n: int, delta: float) -> float:
    return _smallest_epsilon(_fmt_delta_function(epsilon0, n, delta), epsilon0, delta, 0.0)


# ------------------------------------------------------------------------------- [BBGN19]
#
# The blanket decomposition writes the randomizer as R(x) = (1-γ) LR(x) + γ ω with the
# input-independent blanket ω(y) = inf_x R(x)(y)/γ.  With W ~ ω and the privacy
# amplification random variable L = (R(x1)(W) - e^ε R(x1')(W))/ω(W) (mean 1 - e^ε),
# [BBGN19] Sec. 5 bounds, with M ~ Bin(n, γ) and L_1.. i.i.d. copies of L,
#
#     δ(ε) <= 1/(γ n) · E[ E[(L_1 + ... + L_M)_+] ; M >= 1 ],
#
# and bounds the inner expectation by integrating a Hoeffding or a Bennett tail.  Both
# only need γ (a lower bound is enough) and the maximum, range and second moment of L.


def _check_blanket(epsilon: object, epsilon0: object, n: object, domain_size: object):
    """Validate the arguments of a blanket δ(ε); the bounds need 0 < ε < ε0."""
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int(n, "n", minimum=1, maximum=MAX_USERS)
    if domain_size is not None:
        domain_size = check_int(domain_size, "domain_size", minimum=2)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    if not 0 < epsilon < epsilon0:
        raise ValueError(f"epsilon must lie in (0, epsilon0) = (0, {epsilon0}), got {epsilon}")
    return epsilon0, n, domain_size


def _blanket_constants(epsilon: float, epsilon0: float, domain_size: int | None):
    """(γ, max L, range of L, E[L²]) at ε for a generic (None) or a GRR randomizer.

    Generic ε0-LDP ([BBGN19] Sec. 5): γ >= e^-ε0 and r = R(x)(y)/ω(y) ∈ [e^-ε0, e^ε0]
    with E[r] = 1, hence max L <= e^ε0 - e^(ε-ε0), range <= (e^ε + 1)(e^ε0 - e^-ε0) and
    E[L²] <= e^ε0 (e^2ε + 1) - 2 e^ε e^-3ε0 (from E[r²] <= e^ε0 E[r]; the cross term
    E[r r'] >= e^-ε0 would even allow e^-ε0 in place of [BBGN19]'s e^-3ε0, which is kept
    as it gives the published numbers).
    GRR over d values: ω is uniform, γ = d/(e^ε0 + d - 1), R(x)(y)/ω(y) is γ e^ε0 at y = x
    and γ elsewhere, hence exactly max L = γ(e^ε0 - e^ε), range = γ(e^ε0 - 1)(e^ε + 1) and
    E[L²] = γ(2-γ)(e^ε - 1)² + γ²(e^ε0 - 1)²(e^2ε + 1)/d.
    """
    e = math.exp(epsilon)
    if domain_size is None:
        gamma = math.exp(-epsilon0)
        top = -math.exp(epsilon0) * math.expm1(epsilon - 2 * epsilon0)
        spread = (e + 1) * 2 * math.sinh(epsilon0)
        second = math.exp(epsilon0) * (e * e + 1) - 2 * math.exp(epsilon - 3 * epsilon0)
    else:
        gamma = domain_size / (math.expm1(epsilon0) + domain_size)
        top = gamma * e * math.expm1(epsilon0 - epsilon)
        spread = gamma * math.expm1(epsilon0) * (e + 1)
        second = (
            gamma * (2 - gamma) * math.expm1(epsilon) ** 2
            + (gamma * math.expm1(epsilon0)) ** 2 * (e * e + 1) / domain_size
        )
    return gamma, top, spread, second


def _blanket_log_count_term(n: int, gamma: float, rate: float) -> float:
    """log E[exp(-rate M); M >= 1] for M ~ Bin(n, γ), rounded up.

    E = (1 - γ(1 - e^-rate))^n - (1 - γ)^n = e^A - e^B with A = n log(1 - γ(1 - e^-rate))
    and B - A = n log(1 - γ e^-rate/(1 - γ(1 - e^-rate))), each a single log1p of a
    product (no two nearly equal numbers are subtracted, so the difference form's rounding
    to 0, which at γ = e^-100 certified any ε, and a cancellation of two terms of order n
    in log space cannot occur); log E = A + log(1 - e^(B-A)).  Rounded up by 4e-15 |A|
    (the rounding of A and of ``rate`` in it) plus ``_ROUNDING``.
    """
    kept = gamma * -math.expm1(-rate)  # γ(1 - e^-rate)
    first = n * math.log1p(-kept)  # A
    gap = n * math.log1p(-gamma * math.exp(-rate) / (1 - kept))  # B - A <= 0
    return first + math.log(-math.expm1(gap)) + 4e-15 * abs(first) + _ROUNDING


def _bennett_h(u: float) -> float:
    """h(u) = (1+u) log(1+u) - u, rounded down (a smaller h only loosens the bound).

    Below 1e-4 by its alternating series cut after a negative term (a lower bound), less
    1e-14 relative for the rounding of its four terms; above, the closed form, whose
    cancellation costs a relative ~2.2e-16 x 2/u <= 4.4e-12, less a relative 1e-11.
    """
    if u < 1e-4:
        return (u * u / 2 - u**3 / 6 + u**4 / 12 - u**5 / 20) * (1 - 1e-14)
    return ((1 + u) * math.log1p(u) - u) * (1 - 1e-11)


def blanket_hoeffding_delta(
    epsilon: float, epsilon0: float, n: int, *, domain_size: int | None = None
) -> float:
    """[BBGN19] Sec. 5, Hoeffding version: δ(ε) <= b²/(4 a γ n) · E[e^(-2 M a²/b²); M >= 1].

    a = e^ε - 1 (minus the mean of L), b the range of L, M ~ Bin(n, γ).  Hoeffding gives
    Pr[ΣL_i >= t] <= exp(-2 (t + M a)²/(M b²)) and integrating over t >= 0 with the
    Gaussian-tail bound gives b²/(4a) e^(-2 M a²/b²); the expectation over M is closed form.
    ``domain_size=None`` uses the generic ε0-LDP constants, an int d those of GRR over
    d values (see :func:`_blanket_constants`).  Valid for 0 < ε < ε0.
    """
    epsilon0, n, domain_size = _check_blanket(epsilon, epsilon0, n, domain_size)

    def bound() -> float:
        gamma, _, spread, _ = _blanket_constants(epsilon, epsilon0, domain_size)
        a = math.expm1(epsilon)
        rate = 2 * (a / spread) ** 2
        scale = 2 * math.log(spread) - math.log(4 * a) - math.log(gamma) - math.log(n)
        return math.exp(scale + _blanket_log_count_term(n, gamma, rate))

    return _finite_or_inf(bound)


def blanket_bennett_delta(
    epsilon: float, epsilon0: float, n: int, *, domain_size: int | None = None
) -> float:
    """[BBGN19] Sec. 5, Bennett version: δ(ε) <= b/(γ n log(1+β)) · E[e^(-M (c/b²) h(β)); M >= 1].

    b = max L, c = E[L²], a = e^ε - 1, β = a b / c, h(u) = (1+u) log(1+u) - u.  Because
    e^x <= 1 + x + x² (e^λb - 1 - λb)/(λb)² for x = λL <= λb, the sum of M copies satisfies
    Pr[ΣL_i >= t] <= exp(-(M c/b²) h(b (t + M a)/(M c))) with the *uncentred* b and c, and
    since h is convex with h'(u) = log(1+u) the integral over t >= 0 is at most
    b e^(-M (c/b²) h(β)) / log(1+β).  ``domain_size`` as in :func:`blanket_hoeffding_delta`.
    Valid for 0 < ε < ε0.
    """
    epsilon0, n, domain_size = _check_blanket(epsilon, epsilon0, n, domain_size)

    def bound() -> float:
        gamma, top, _, second = _blanket_constants(epsilon, epsilon0, domain_size)
        beta = math.expm1(epsilon) * top / second
        rate = second / (top * top) * _bennett_h(beta)
        scale = math.log(top) - math.log(gamma) - math.log(n) - math.log(math.log1p(beta))
        return math.exp(scale + _blanket_log_count_term(n, gamma, rate))

    return _finite_or_inf(bound)


def _finite_or_inf(bound: Callable[[], float]) -> float:
    """``bound()``, or +inf (no guarantee) where e^ε0 is too large for float64 arithmetic.

    Only happens for ε0 beyond ~230, where γ <= e^-ε0 leaves the blanket empty anyway.
    """
    try:
        value = bound()
    except (OverflowError, ZeroDivisionError, ValueError):  # ValueError: log of 0
        return math.inf
    return value if math.isfinite(value) and value >= 0 else math.inf


def _blanket_epsilon(
    delta_bound: Callable[..., float],
    epsilon0: float,
    n: int,
    delta: float,
    domain_size: int | None,
) -> float:
    epsilon0, n, delta = _check(epsilon0, n, delta)
    if domain_size is not None:
        domain_size = check_int(domain_size, "domain_size", minimum=2)
    return _blanket_epsilon_cached(delta_bound, epsilon0, n, delta, domain_size)


@functools.lru_cache(maxsize=4096)
def _blanket_epsilon_cached(
    delta_bound: Callable[..., float],
    epsilon0: float,
    n: int,
    delta: float,
    domain_size: int | None,
) -> float:
    def delta_of(epsilon: float) -> float:
        return delta_bound(epsilon, epsilon0, n, domain_size=domain_size)

    return _smallest_epsilon(delta_of, epsilon0, delta, epsilon0 * 1e-12)


def blanket_hoeffding_epsilon(
    epsilon0: float, n: int, delta: float, *, domain_size: int | None = None
) -> float:
    """Smallest ε with :func:`blanket_hoeffding_delta` <= δ ([BBGN19] Sec. 5), at most ε0.

    Valid for every n >= 1 and 0 < δ < 1.  Generic (``domain_size=None``) at n = 5000,
    ε0 = 0.4, δ = 10^-6: 0.0575, the published value; ``domain_size=d`` is the GRR-specific
    bound ([BBGN19]'s "RR-d").
    """
    return _blanket_epsilon(blanket_hoeffding_delta, epsilon0, n, delta, domain_size)


def blanket_bennett_epsilon(
    epsilon0: float, n: int, delta: float, *, domain_size: int | None = None
) -> float:
    """Smallest ε with :func:`blanket_bennett_delta` <= δ ([BBGN19] Sec. 5), at most ε0.

    Valid for every n >= 1 and 0 < δ < 1.  Generic at n = 5000, ε0 = 0.4, δ = 10^-6: 0.1130,
    the published value (above Hoeffding's 0.0575: the generic second-moment bound
    e^ε0 (e^2ε + 1) is loose next to the range; with a randomizer's exact constants, e.g.
    ``domain_size=100``, Bennett is far tighter).
    """
    return _blanket_epsilon(blanket_bennett_delta, epsilon0, n, delta, domain_size)


def blanket_grr_epsilon(epsilon0: float, domain_size: int, n: int, delta: float) -> float:
    """[BBGN19] Theorem 3.1 for GRR over d = ``domain_size`` values, solved for ε.

    Theorem 3.1: shuffling n reports of the randomizer that keeps the value with
    probability 1 - γ and otherwise reports a uniform one of k values is (ε, δ)-DP for
    ε <= 1, δ ∈ (0, 1] and γ = max{14 k log(2/δ)/((n-1) ε²), 27 k/((n-1) ε)}.  GRR with
    ε0 is that randomizer with k = d and γ = d/(e^ε0 + d - 1), so (a larger γ only adds
    noise) ε = max{√(14 log(2/δ)(e^ε0 + d - 1)/(n-1)), 27 (e^ε0 + d - 1)/(n-1)}.

    Precondition: that ε is <= 1, i.e. n - 1 >= max(14 log(2/δ), 27) (e^ε0 + d - 1).
    """
    epsilon0, n, delta = _check(epsilon0, n, delta)
    d = check_int(domain_size, "domain_size", minimum=2)
    if n < 2:
        raise BoundNotApplicable(f"n must be >= 2 for [BBGN19] Theorem 3.1, got {n}")
    spread = math.exp(epsilon0) + d - 1  # = d / γ
    epsilon = max(math.sqrt(14 * math.log(2 / delta) * spread / (n - 1)), 27 * spread / (n - 1))
    if epsilon > 1:
        needed = 1 + math.ceil(max(14 * math.log(2 / delta), 27) * spread)
        raise BoundNotApplicable(
            f"n must be >= {needed} for [BBGN19] Theorem 3.1 (it needs epsilon <= 1), got {n}"
        )
    return epsilon


# ------------------------------------------------------------------------------- [WPLWLYWY24]
#
# The variation-ratio reduction of [WPLWLYWY24] (Wang, Peng, Li, Wen, Li, Yu, Wang, Yang,
# *Privacy Amplification via Shuffling: Unified, Simplified, and Tightened*, VLDB 2024,
# arXiv:2304.05007).  A randomizer with probability ratio p, total variation β between
# any two inputs and blanket ratio q (here p = q = e^ε0, every ε0-LDP randomizer) has,
# with α = β/(p-1) and r = α p/q = α: every other user is a clone of the differing user's
# input x0 with probability r, of x1 with probability r, else uninformative; the
# differing user is an x0-clone with probability pα, an x1-clone with α, else (γ = 1 -
# (1+p)α) uninformative.  Shuffling is (ε, δ)-DP when the resulting pair of clone counts
# is.  For the generic bound β = (e^ε0-1)/(e^ε0+1): γ = 0 and r = 1/(e^ε0+1), so every
# other user is a clone with probability 2/(e^ε0+1) >= e^-ε0, [FMT21]'s.


def variation_ratio_beta(epsilon0: float, domain_size: int | None = None) -> float:
    """β, [WPLWLYWY24]'s total-variation parameter: (e^ε0-1)/(e^ε0+1) for any ε0-LDP
    randomizer, (e^ε0-1)/(e^ε0+d-1) for GRR over d = ``domain_size`` values."""
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    others = 1 if domain_size is None else check_int(domain_size, "domain_size", minimum=2) - 1
    return math.expm1(epsilon0) / (math.exp(epsilon0) + others)


def variation_ratio_delta(
    epsilon: float, epsilon0: float, n: int, *, domain_size: int | None = None
) -> float:
    """δ(ε) of [WPLWLYWY24]'s variation-ratio pair, evaluated exactly (up to a 1e-16 tail).

    Let N = n - 1, C ~ Bin(N, 2r) the clones among the other users, A | C ~ Bin(C, 1/2)
    those of x0, and (a, b) the observed counts of x0- and x1-clones.  With
    P(a, b) = pα M(a-1, b) + α M(a, b-1) + γ M(a, b) (Q: pα and α swapped), M the law of
    the others' counts, P > e^ε Q at total t = a + b exactly when a > θ(t),

        θ(t) = [t (e^ε p - 1) + γ (e^ε - 1) (N - t + 1) r/(α (1 - 2r))] / ((p - 1)(1 + e^ε)),

    (P - e^ε Q)/M(a, b) is increasing in a.  Grouping the others' count c = t - 1 (the
    differing user a clone) and c = t (not), with S_c(k) = Pr[Bin(c, 1/2) >= k] and
    k_t = ⌊θ(t)⌋ + 1,

        D_e^ε(P || Q) = Σ_c Pr[C = c] [α(p - e^ε) Pr[Bin(c, 1/2) = k_(c+1) - 1]
                        - (e^ε - 1) ((1 - γ) S_c(k_(c+1)) + γ S_c(k_c))],

    and D(Q || P) is the same (a <-> b).  Clone counts outside the quantile window of C
    count as divergence 1 (their mass, an upper bound); 1e-13 is added for rounding, as in
    :func:`fmt_numerical_delta`.  ``domain_size=d`` uses GRR's β (:func:`variation_ratio_beta`).
    """
    epsilon0 = check_epsilon(epsilon0, "epsilon0")
    n = check_int(n, "n", minimum=1, maximum=MAX_USERS)
    beta = variation_ratio_beta(epsilon0, domain_size)
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    if not (float(epsilon) >= 0):
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    return _variation_ratio_delta_function(epsilon0, n, 1e-12, beta)(float(epsilon))


@functools.lru_cache(maxsize=256)
def _variation_ratio_delta_function(
    epsilon0: float, n: int, delta: float, beta: float
) -> Callable[[float], float]:
    """δ(ε) of :func:`variation_ratio_delta` with a window sized for target ``delta``."""
    growth = -math.expm1(-epsilon0)  # (p - 1)/p
    alpha_p = beta / growth  # pα = β p/(p-1)
    rate = beta / math.expm1(epsilon0)  # r = α (p = q)
    generic = math.expm1(epsilon0) / (math.exp(epsilon0) + 1)
    gamma = max(0.0, 1.0 - beta / generic)  # 1 - (1+p)α; exactly 0 for the generic β
    trials = n - 1
    tail = delta * _TAIL_FRACTION / 2
    low, high = _clone_window(n, epsilon0, trials, 2 * rate, tail, _VR_OPERATIONS_PER_CLONE)
    clones = np.arange(low, high + 1, dtype=float)
    weights = np.exp(stats.binom.logpmf(clones, trials, 2 * rate))
    outside = float(
        stats.binom.cdf(low - 1, trials, 2 * rate) + stats.binom.sf(high, trials, 2 * rate)
    )
    totals = np.arange(low, high + 2, dtype=float)  # t = c and t = c + 1
    # γ r/(α(1 - 2r)) (N - t + 1), divided by p like every term of θ (r = α)
    blanket = gamma * (trials - totals + 1) / (1 - 2 * rate) * math.exp(-epsilon0)

    def delta_of(epsilon: float) -> float:
        if epsilon >= epsilon0:
            return 0.0
        up = math.expm1(epsilon) - math.expm1(-epsilon0)  # e^ε - 1/p
        down = -math.expm1(epsilon - epsilon0)  # 1 - e^ε/p = (p-1)/p (1 + e^ε) - up
        scale = growth * (1 + math.exp(epsilon))
        theta = (totals * up + blanket * math.expm1(epsilon)) / scale
        # t - θ(t), without the cancellation that rounds θ to t once e^ε > 2^53
        slack = (totals * down - blanket * math.expm1(epsilon)) / scale
        k = np.where(theta <= totals / 2, np.floor(theta) + 1, totals + 1 - np.ceil(slack))
        k_next, k_here = k[1:], k[:-1]  # k_(c+1), k_c for c = low .. high
        edge = stats.binom.pmf(k_next - 1, clones, 0.5)
        above_next = stats.binom.sf(k_next - 1, clones, 0.5)
        above_here = stats.binom.sf(k_here - 1, clones, 0.5) if gamma > 0 else 0.0
        ratio_gap = -alpha_p * math.expm1(epsilon - epsilon0)  # α(p - e^ε)
        per_count = (1 + _ROUNDING) * ratio_gap * edge - (1 - _ROUNDING) * math.expm1(epsilon) * (
            (1 - gamma) * above_next + gamma * above_here
        )
        return max(float(weights @ per_count), 0.0) + outside + _FLOAT_SLACK

    return delta_of


def variation_ratio_epsilon(
    epsilon0: float, n: int, delta: float, *, domain_size: int | None = None
) -> float:
    """The smallest ε with [WPLWLYWY24]'s δ(ε) <= δ (:func:`variation_ratio_delta`).

    Valid for every ε0-LDP randomizer (``domain_size=None``) or for GRR over d values
    (``domain_size=d``), all n >= 1, 0 < δ < 1.  The pair is [FMT21]'s with more clones
    (2/(e^ε0+1) instead of e^-ε0), so it is never above :func:`fmt_numerical_epsilon`.
    Cost O(√n) per δ(ε), a few dozen δ(ε) per ε; results are memoized.
    """
    epsilon0, n, delta = _check(epsilon0, n, delta)
    beta = variation_ratio_beta(epsilon0, domain_size)
    return _variation_ratio_epsilon(epsilon0, n, delta, beta)


@functools.lru_cache(maxsize=4096)
def _variation_ratio_epsilon(epsilon0: float, n: int, delta: float, beta: float) -> float:
    delta_of = _variation_ratio_delta_function(epsilon0, n, delta, beta)
    return _smallest_epsilon(delta_of, epsilon0, delta, 0.0)


# -------------------------------------------------------------------------------- façade


def shuffle_epsilon(
    epsilon0: float,
    n: int,
    delta: float,
    method: Method = DEFAULT_METHOD,
    *,
    domain_size: int | None = None,
) -> float:
    """Central ε after shuffling n ε0-LDP reports, at most ε0, by the chosen bound.

    ``method``:

    * ``"fmt_numerical"`` (default) -- :func:`fmt_numerical_epsilon`, valid for any ε0-LDP
      randomizer and any n, δ; the tightest generic bound here;
    * ``"fmt_closed_form"`` -- :func:`fmt_closed_form_epsilon` (Theorem 3.1 as printed);
    * ``"efmrtt"`` -- :func:`efmrtt_epsilon`;
    * ``"blanket_hoeffding"``, ``"blanket_bennett"`` -- the [BBGN19] Sec. 5 bounds, generic,
      or GRR-specific when ``domain_size`` is given;
    * ``"blanket_grr"`` -- [BBGN19] Theorem 3.1, needs ``domain_size``;
    * ``"variation_ratio"`` -- :func:`variation_ratio_epsilon` ([WPLWLYWY24]), generic, or
      GRR-specific when ``domain_size`` is given; never above ``"fmt_numerical"``;
    * ``"best"`` -- the smallest of every bound above whose preconditions hold (with
      ``domain_size=d``: the best available bound for GRR over d values, since each is a
      valid (ε, δ) guarantee for it, the generic ones included).

    Raises :class:`BoundNotApplicable` when the chosen bound's preconditions fail, and
    :class:`ldp.validation.ParameterError` naming ``n`` when a numerical bound's window of
    clone counts would exceed the budget (:mod:`ldp.budget`; ``"best"`` then uses the
    others).  Every value is an upper bound in floating point (``docs/limits.md``): at
    n = 1 it is at least the exact ε of one report, ε0 + log(1 - δ (1 + e^-ε0)).
    """
    epsilon0, n, delta = _check(epsilon0, n, delta)
    if domain_size is not None:
        domain_size = check_int(domain_size, "domain_size", minimum=2)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "best":
        candidates = [epsilon0]
        for name in METHODS[:-1]:
            if name == "blanket_grr" and domain_size is None:
                continue
            try:
                candidates.append(
                    shuffle_epsilon(epsilon0, n, delta, name, domain_size=domain_size)
                )
            except BoundNotApplicable:
                pass
            except ParameterError as error:  # over the budget: the other bounds still answer
                if error.name != "n":
                    raise
        return min(candidates)
    if method == "fmt_numerical":
        epsilon = fmt_numerical_epsilon(epsilon0, n, delta)
    elif method == "fmt_closed_form":
        epsilon = fmt_closed_form_epsilon(epsilon0, n, delta)
    elif method == "efmrtt":
        epsilon = efmrtt_epsilon(epsilon0, n, delta)
    elif method == "blanket_hoeffding":
        epsilon = blanket_hoeffding_epsilon(epsilon0, n, delta, domain_size=domain_size)
    elif method == "blanket_bennett":
        epsilon = blanket_bennett_epsilon(epsilon0, n, delta, domain_size=domain_size)
    elif method == "variation_ratio":
        epsilon = variation_ratio_epsilon(epsilon0, n, delta, domain_size=domain_size)
    else:  # blanket_grr
        if domain_size is None:
            raise ValueError("domain_size is required for method='blanket_grr'")
        epsilon = blanket_grr_epsilon(epsilon0, domain_size, n, delta)
    return min(epsilon, epsilon0)
