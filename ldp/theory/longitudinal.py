"""Longitudinal frequency estimation with memoization: closed forms.

Citations:

* [ACBX22] Arcolezi, Couchot, Al Bouna, Xiao, *Improving the utility of locally
  differentially private protocols for longitudinal and multidimensional frequency
  estimates*, Digital Communications and Networks 2022 (arXiv 2111.04636): the
  two-round ("chained") protocols L-GRR, L-OUE, L-OSUE (and L-SUE = basic RAPPOR,
  L-SOUE), their instantaneous parameters and their variance (section and equation
  numbers not verified).
* [RAPPOR] Erlingsson, Pihur, Korolova, *RAPPOR: Randomized aggregatable
  privacy-preserving ordinal response*, CCS 2014 (section numbers not verified): the
  permanent randomized
  response (PRR) memoized per value bounds the privacy of any number of reports of one
  value by ε_∞; the instantaneous randomized response (IRR) makes one report ε₁-LDP.

Every chained protocol runs a permanent randomized response with probabilities (p1, q1)
at ε_∞ and memoizes its output B per (user, value); each collection reports B through an
instantaneous randomized response with (p2, q2).  A report supports the user's value v
with probability p_s = q2 + p1 (p2 - q2) and a fixed other value with
q_s = q2 + q1 (p2 - q2) (the same for d-ary randomized response, where p1 + (d-2) q1 =
1 - q1, and for unary encodings, bit by bit): one report is a pure protocol with
p* = p_s, q* = q_s, and (p_s - q_s) = (p1 - q1)(p2 - q2).  (p2, q2) is chosen so that
one report is exactly ε₁-LDP.

The papers' texts were not at hand: no section, equation or theorem number of [ACBX22]
is cited, because none could be checked.  Every formula here is derived afresh and tested
(the exact ε₁ of one report, the exact loss over rounds against enumeration:
``tests/oracles/test_longitudinal.py``) and was compared with the authors' public code
(multi-freq-ldpy, ``long_freq_est``): the estimator's offset n q1 (p2 - q2) + n q2 and
denominator n (p1 - q1)(p2 - q2), PRR parameters, L-OSUE's p2 and L-OUE's q2 (their
closed form equals the root found here to 1e-12) agree; L-GRR's p2 differs (see
:func:`l_grr_parameters`), and so does the f-term of the variance (see
:func:`longitudinal_variance`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ldp.lazy import lazy_module

optimize = lazy_module("scipy.optimize")
special = lazy_module("scipy.special")


def chained_pq(p1: float, q1: float, p2: float, q2: float) -> tuple[float, float]:
    """(p_s, q_s) of one report of a chained protocol ([ACBX22], the estimator's
    denominator n (p1 - q1)(p2 - q2) and offset n q1 (p2 - q2) + n q2)."""
    gap = p2 - q2
    return q2 + p1 * gap, q2 + q1 * gap


def l_grr_parameters(epsilon_inf: float, epsilon_1: float, k: int) -> tuple[float, ...]:
    """(p1, q1, p2, 1 - p2) of L-GRR over k values ([ACBX22], L-GRR).

    PRR: GRR at ε_∞, p1 = e^{ε_∞}/(e^{ε_∞}+k-1), q1 = (1-p1)/(k-1).  IRR: GRR keeping the
    memoized value with p2 (each other value with q2 = (1-p2)/(k-1)), chosen so that
    p_s = e^{ε₁} q_s.  This equation is linear in p2; with e = e^{ε₁} its root is

        p2 = B/(A + B),  1 - p2 = A/(A + B),
        A = (k-1)(p1 - e q1),  B = e (1 - q1) - (1 - p1),

    each side from its own closed form (derived here and checked to give ln(p_s/q_s) = ε₁
    exactly; the expression of the authors' public implementation, p2 = (e p1 - q1)/...,
    realises a smaller ε₁, 0.755 instead of 1 at ε_∞ = 2, k = 8).  Needs ε₁ < ε_∞.
    Returns the complement of p2 rather than q2 so the keep coin can be realised from its
    smaller side.
    """
    big, e = math.exp(epsilon_inf), math.exp(epsilon_1)
    p1 = big / (big + k - 1)
    q1 = 1.0 / (big + k - 1)
    keep = e * (big + k - 2) * q1 - (k - 1) * q1  # e (1 - q1) - (1 - p1)
    leave = (k - 1) * (p1 - e * q1)
    return p1, q1, keep / (keep + leave), leave / (keep + leave)


def l_osue_parameters(epsilon_inf: float, epsilon_1: float) -> tuple[float, float]:
    """(p2, q2 = 1 - p2) of L-OSUE's symmetric IRR ([ACBX22], L-OSUE; the authors' code
    has the same p2).

    PRR: OUE at ε_∞ (p1 = 1/2, q1 = 1/(e^{ε_∞}+1)); IRR: SUE-like, q2 = 1 - p2, with

        p2 = (e^{ε₁+ε_∞} - 1)/Δ,  q2 = (e^{ε_∞} - e^{ε₁})/Δ,
        Δ = e^{ε₁+ε_∞} + e^{ε_∞} - e^{ε₁} - 1,

    the root of p_s (1 - q_s) = e^{ε₁} (1 - p_s) q_s in (1/2, 1).  Needs ε₁ < ε_∞.
    """
    big, e = math.exp(epsilon_inf), math.exp(epsilon_1)
    keep, flip = big * e - 1.0, big - e
    return keep / (keep + flip), flip / (keep + flip)


def l_oue_q2(epsilon_inf: float, epsilon_1: float) -> float:
    """q2 of L-OUE's IRR (OUE-like, p2 = 1/2) ([ACBX22], L-OUE).

    PRR: OUE at ε_∞; IRR keeps a 1 with p2 = 1/2 and turns a 0 into 1 with q2, the root
    in (0, 1/2) of p_s (1 - q_s) = e^{ε₁} (1 - p_s) q_s (a quadratic; the paper writes its
    root in closed form, here it is found by Brent's method to full precision, the ratio
    being decreasing in q2).  A root exists only when the ratio at q2 = 0,
    (2 e^{ε_∞} + 1)/3, reaches e^{ε₁}; returns NaN otherwise.
    """
    e = math.exp(epsilon_1)
    q1 = 1.0 / (math.exp(epsilon_inf) + 1.0)

    def excess(q2: float) -> float:
        p_s, q_s = chained_pq(0.5, q1, 0.5, q2)
        return math.log(p_s * (1 - q_s)) - math.log((1 - p_s) * q_s) - epsilon_1

    if (2 * math.exp(epsilon_inf) + 1) / 3 <= e:
        return math.nan
    return float(optimize.brentq(excess, 1e-300, 0.5, xtol=1e-300, rtol=4 * np.finfo(float).eps))


def l_oue_feasible(epsilon_inf: float, epsilon_1: float) -> bool:
    """Whether L-OUE reaches ε₁ at ε_∞: e^{ε₁} < (2 e^{ε_∞} + 1)/3 (see :func:`l_oue_q2`)."""
    return math.exp(epsilon_1) < (2 * math.exp(epsilon_inf) + 1) / 3


def longitudinal_variance(
    n: float, p1: float, q1: float, p2: float, q2: float, f: float = 0.0
) -> float:
    """Var of one round's estimated *frequency* f̂(v) ([ACBX22], the variance of the
    chained protocols): σ(1-σ)/(n (p1-q1)² (p2-q2)²), σ = q_s + f (p_s - q_s).

    At f = 0 (the paper's approximate variance) it equals the pure framework's
    n q*(1-q*)/(p*-q*)² divided by n²; with f > 0 it approximates the exact variance
    (users of v and of other values pooled into one Bernoulli(σ)).  The authors' code
    writes the f-term as f (2 p1 p2 - 2 p1 q2 + 2 q2 - 1), which is f (p_s - q_s) only
    when both steps are symmetric (q1 = 1 - p1, q2 = 1 - p2: L-SUE); σ here is the mean
    share of supporting reports for every chain.
    """
    p_s, q_s = chained_pq(p1, q1, p2, q2)
    sigma = q_s + f * (p_s - q_s)
    return sigma * (1 - sigma) / (n * (p1 - q1) ** 2 * (p2 - q2) ** 2)


def memoized_epsilon(epsilon_1: float, epsilon_inf: float, tau: int, distinct: int = 1) -> float:
    """The privacy spent by τ reports of a user who held ``distinct`` distinct values.

    [RAPPOR]: each distinct value's memoized PRR is ε_∞-LDP and every report
    is post-processing of the memos, so the whole sequence is (distinct · ε_∞)-LDP
    whatever τ; a single report (τ = 1) is ε₁-LDP.  A value that changes c times takes at
    most c + 1 distinct values (returning to an earlier value reuses its memo and costs
    nothing).  This is the bound the protocols claim; for an unchanged value the exact loss
    after τ rounds is :func:`rounds_loss_categorical` / :func:`rounds_loss_bits`.

    The post-processing argument needs the two sequences compared to hold equal values at
    the same rounds (the same memos are read at the same rounds).  Against a sequence that
    changes where the other does not, the reuse of a memo shows in the reports and the loss
    can exceed the bound: :func:`sequence_loss_categorical`, :func:`sequence_loss_bits`.
    """
    if tau < 1 or distinct < 1:
        raise ValueError(f"tau and distinct must be >= 1, got {tau}, {distinct}")
    if tau == 1:
        return min(epsilon_1, epsilon_inf)
    return min(distinct, tau) * epsilon_inf


def _log_mix(log_a: np.ndarray, log_b: np.ndarray, weight_a: float, weight_b: float):
    """ln(weight_a e^{log_a} + weight_b e^{log_b}), elementwise."""
    return np.logaddexp(math.log(weight_a) + log_a, math.log(weight_b) + log_b)


def bit_count_logs(
    p1: float, q1: float, p2: float, q2: float, tau: int
) -> tuple[np.ndarray, np.ndarray]:
    """ln P(c | own) and ln P(c | other) of one position's τ reported bits, chained unary
    encoding, for one sequence with c = 0..τ ones (not summed over the C(τ, c) sequences).

    The memo bit is 1 with p1 at the user's own position, q1 at another; given it, each
    round reports 1 with p2 (memo 1) or q2 (memo 0), independently.
    """
    c = np.arange(tau + 1, dtype=float)
    log_one = c * math.log(p2) + (tau - c) * math.log1p(-p2)
    log_zero = c * math.log(q2) + (tau - c) * math.log1p(-q2)
    return _log_mix(log_one, log_zero, p1, 1 - p1), _log_mix(log_one, log_zero, q1, 1 - q1)


def categorical_sequence_log_likelihoods(
    cell_counts: np.ndarray, own_counts: np.ndarray, p1: float, q1: float, p2: float, q2: float
) -> np.ndarray:
    """ln Pr[y_1..y_τ | v] - τ ln q2 for chained GRR over the cells of ``cell_counts``.

    ``cell_counts[i, b]`` is how many of user i's τ reports name cell b, ``own_counts[i, v]``
    the count of v's cell (v's own for L-GRR, H_i(v) for local hashing).  Summing over the
    memo B (p1 for v's cell, q1 for another): Pr = q2^τ (q1 S + (p1 - q1) r^{c_v}),
    r = p2/q2, S = Σ_b r^{c_b}.
    """
    log_r = math.log(p2) - math.log(q2)
    scaled = np.asarray(cell_counts, dtype=float) * log_r
    top = scaled.max(axis=1, keepdims=True)
    log_s = (top + np.log(np.exp(scaled - top).sum(axis=1, keepdims=True))).reshape(-1, 1)
    own = np.asarray(own_counts, dtype=float) * log_r
    return np.logaddexp(math.log(q1) + log_s, math.log(p1 - q1) + own)


#: :func:`categorical_rounds_success` gives up (returns None) above this many count vectors.
MAX_COMPOSITIONS = 1 << 17


def categorical_rounds_success(
    prior: np.ndarray, p1: float, q1: float, p2: float, q2: float, tau: int
) -> float | None:
    """The Bayesian adversary's exact success from τ reports of chained GRR over the d
    values of ``prior`` (L-GRR), one unchanged value: Σ_c C(τ; c) max_v π_v Pr[y_c | v].

    A sequence's likelihood depends only on its count vector c (how many reports name
    each value, :func:`categorical_sequence_log_likelihoods`), so the sum runs over the
    C(τ+d-1, d-1) count vectors with their multinomial multiplicity; None above
    :data:`MAX_COMPOSITIONS` of them.
    """
    prior = np.asarray(prior, dtype=float)
    d = prior.shape[0]
    if math.comb(tau + d - 1, d - 1) > MAX_COMPOSITIONS:
        return None
    bars = np.array(list(itertools.combinations(range(tau + d - 1), d - 1)), dtype=np.int64)
    bars = bars.reshape(-1, d - 1)
    edges = np.hstack(
        [np.full((bars.shape[0], 1), -1), bars, np.full((bars.shape[0], 1), tau + d - 1)]
    )
    counts = np.diff(edges, axis=1) - 1
    log_many = math.lgamma(tau + 1) - special.gammaln(counts + 1).sum(axis=1)
    loglik = categorical_sequence_log_likelihoods(counts, counts, p1, q1, p2, q2) + tau * math.log(
        q2
    )
    with np.errstate(divide="ignore"):
        best = np.max(np.log(prior) + loglik, axis=1)
    return float(np.exp(log_many + best).sum())


def rounds_loss_bits(p1: float, q1: float, p2: float, q2: float, tau: int) -> float:
    """The exact privacy loss of τ reports of one unchanged value, chained unary encoding.

    Bits are independent across positions and only positions v and v' differ in law.  At
    position v the τ reported bits depend on the memo bit only through their number of
    ones c: P(c | memo bit b) ∝ r_b^c (1 - r_b)^{τ-c} with r_1 = p2, r_0 = q2, and the
    memo bit is 1 with p1 under v, q1 under v'.  The loss is the largest log-ratio at
    position v plus the largest at v' (mirrored), each a maximum over c = 0..τ.  At τ = 1
    it is ε₁, and it increases to ε_∞ = ln(p1(1-q1)/((1-p1)q1)) as τ grows.
    """
    under_p, under_q = bit_count_logs(p1, q1, p2, q2, tau)
    return float(np.max(under_p - under_q) + np.max(under_q - under_p))


def rounds_loss_categorical(p1: float, q1: float, p2: float, q2: float, k: int, tau: int) -> float:
    """The exact privacy loss of τ reports of one unchanged value, chained GRR over k values.

    Given the memo B, τ reports with c_B copies of B have probability p2^{c_B} q2^{τ-c_B};
    B is v with p1 under v and q1 under v' (and each other value with q1).  The likelihood
    ratio of a sequence is (p1 w_v + q1 w_{v'} + S)/(q1 w_v + p1 w_{v'} + S), w_u =
    (p2/q2)^{c_u} q2^τ, S the other values' share, which is smallest when the remaining
    reports spread evenly over the k - 2 other values (w is convex in c).  The loss is the
    maximum over (c_v, c_{v'}) of that ratio's logarithm.
    """
    c_v, c_w = np.meshgrid(np.arange(tau + 1), np.arange(tau + 1), indexing="ij")
    rest = tau - c_v - c_w
    possible = (rest >= 0) & ((rest == 0) | (k > 2))
    rest = np.where(possible, rest, 0)
    log_ratio, base = math.log(p2) - math.log(q2), tau * math.log(q2)
    a, b = c_v * log_ratio + base, c_w * log_ratio + base
    numerator = np.logaddexp(math.log(p1) + a, math.log(q1) + b)
    denominator = np.logaddexp(math.log(q1) + a, math.log(p1) + b)
    if k > 2:  # the others: k-2-extra values with `low` reports, `extra` with low + 1
        low, extra = np.divmod(rest, k - 2)
        with np.errstate(divide="ignore"):
            share = np.logaddexp(
                np.log(k - 2 - extra) + low * log_ratio, np.log(extra) + (low + 1) * log_ratio
            )
        share = math.log(q1) + base + share
        numerator = np.logaddexp(numerator, share)
        denominator = np.logaddexp(denominator, share)
    return float(np.max(np.where(possible, numerator - denominator, -np.inf)))


# ---------------------------------------------------------------- values that change
#: :func:`sequence_loss_categorical` enumerates at most this many report sequences.
MAX_SEQUENCES = 1 << 20


def _groups(values: tuple[int, ...]) -> list[tuple[int, list[int]]]:
    """The distinct values of a sequence with the rounds that hold each (one memo each)."""
    rounds: dict[int, list[int]] = {}
    for t, value in enumerate(values):
        rounds.setdefault(int(value), []).append(t)
    return list(rounds.items())


def _check_pair(x: tuple[int, ...], x_prime: tuple[int, ...], k: int) -> None:
    if len(x) != len(x_prime) or not x:
        raise ValueError(f"two sequences of one length >= 1 are needed, got {x} and {x_prime}")
    if min(*x, *x_prime) < 0 or max(*x, *x_prime) >= k:
        raise ValueError(f"values must lie in [0, {k}), got {x} and {x_prime}")


def sequence_loss_categorical(
    p1: float, q1: float, p2: float, q2: float, k: int, x: tuple[int, ...], x_prime: tuple[int, ...]
) -> float:
    """max_y ln Pr[y | x] / Pr[y | x']: the exact loss between two value sequences, chained GRR.

    The user holds x_t at round t; one memo B_v per distinct value v (``perturb_rounds``),
    so Pr[y | x] = Π_v Σ_b Pr1[b | v] Π_{t: x_t = v} Pr2[y_t | b], Pr1 = (p1, q1) the
    permanent step, Pr2 = (p2, q2) the instantaneous one.  Values in neither sequence play
    the same part under both, so the maximum is over reports written with the sequences'
    values and at most τ further ones: (|x ∪ x'| + min(τ, k - |x ∪ x'|))^τ sequences,
    refused above :data:`MAX_SEQUENCES`.  With x = (v, ..., v), x' = (v', ..., v') it is
    :func:`rounds_loss_categorical`; when x and x' hold equal values at the same rounds it
    is at most (distinct values) ε_∞ (:func:`memoized_epsilon`); when they do not, the
    reuse of a memo shows, and the loss can exceed that bound.
    """
    x, x_prime = tuple(int(v) for v in x), tuple(int(v) for v in x_prime)
    _check_pair(x, x_prime, k)
    tau, named = len(x), sorted(set(x) | set(x_prime))
    symbols = len(named) + min(tau, k - len(named))
    if symbols**tau > MAX_SEQUENCES:
        raise ValueError(f"{symbols}^{tau} report sequences exceed {MAX_SEQUENCES}")
    index = {value: i for i, value in enumerate(named)}
    reports = np.array(list(itertools.product(range(symbols), repeat=tau)), dtype=np.int64)
    unnamed = k - symbols  # memos that no report names: weight q1, q2 at every round

    def log_probability(values: tuple[int, ...]) -> np.ndarray:
        total = np.zeros(reports.shape[0])
        for value, rounds in _groups(values):
            hits = np.stack(
                [(reports[:, rounds] == b).sum(axis=1) for b in range(symbols)], axis=1
            )  # (sequences, symbols): reports naming each candidate memo
            memo = np.where(np.arange(symbols) == index[value], math.log(p1), math.log(q1))
            terms = memo + hits * math.log(p2) + (len(rounds) - hits) * math.log(q2)
            if unnamed > 0:
                rest = math.log(unnamed) + math.log(q1) + len(rounds) * math.log(q2)
                terms = np.concatenate([terms, np.full((reports.shape[0], 1), rest)], axis=1)
            total += special.logsumexp(terms, axis=1)
        return total

    return float(np.max(log_probability(x) - log_probability(x_prime)))


def sequence_loss_bits(
    p1: float, q1: float, p2: float, q2: float, d: int, x: tuple[int, ...], x_prime: tuple[int, ...]
) -> float:
    """max_y ln Pr[y | x] / Pr[y | x']: the exact loss between two value sequences, chained
    unary encoding over d positions.

    The memo of each distinct value has bit j set with p1 if j is the value, else q1; each
    round reports a set memo bit as 1 with p2, an unset one with q2.  Positions are
    independent under both sequences, so the loss is a sum over positions of the largest
    log-ratio of a column of τ bits (2^τ columns).  The d - |x ∪ x'| positions that are
    no value of either sequence all have one law under each: their term is counted that
    many times.  It is zero when x and x' hold equal values at the same rounds; when they
    do not, every such position tells whether a memo was reused, and the loss grows with d.
    """
    x, x_prime = tuple(int(v) for v in x), tuple(int(v) for v in x_prime)
    _check_pair(x, x_prime, d)
    tau = len(x)
    if 2**tau > MAX_SEQUENCES:
        raise ValueError(f"2^{tau} columns exceed {MAX_SEQUENCES}")
    columns = np.array(list(itertools.product((0, 1), repeat=tau)), dtype=bool)

    def log_probability(values: tuple[int, ...], position: int) -> np.ndarray:
        total = np.zeros(columns.shape[0])
        for value, rounds in _groups(values):
            ones = columns[:, rounds].sum(axis=1)
            zeros = len(rounds) - ones
            set_bit = ones * math.log(p2) + zeros * math.log1p(-p2)
            unset_bit = ones * math.log(q2) + zeros * math.log1p(-q2)
            own = p1 if value == position else q1
            total += _log_mix(set_bit, unset_bit, own, 1 - own)
        return total

    named = sorted(set(x) | set(x_prime))
    loss = sum(float(np.max(log_probability(x, j) - log_probability(x_prime, j))) for j in named)
    if d > len(named):
        other = -1  # a position that is no value of either sequence
        gap = log_probability(x, other) - log_probability(x_prime, other)
        loss += (d - len(named)) * float(np.max(gap))
    return loss
