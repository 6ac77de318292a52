"""The Bayesian adversary: how often one report gives away a user's value.

A user's value v is drawn from a prior π over the domain (the population's distribution of
values), the user sends one report y of a frequency oracle, and the adversary, who knows
π and the protocol, guesses the value of maximum posterior, argmax_v π_v Pr[y | v].  Its
success rate is

    S(π) = E_v E_y 1[guess(y) = v] = Σ_y max_v π_v Pr[y | v]

(one minus the Bayes risk of 0-1 loss; ties do not change it).  It is the Bayes-optimal version of
the "attacker success rate" of re-identification studies of LDP (Arcolezi, Gambs,
Couchot, Palamidessi, *On the Risks of Collecting Multidimensional Data Under Local
Differential Privacy*, PVLDB 16(5), 2023; the attackability of the ``ldp-toolbox``
package), whose attackers guess from the report alone (the reported value, or a value
the report supports at random): it is at least their rate.  See ``docs/adversary.md``.

Bounds.  ε-LDP gives Pr[v | y] <= π_v e^ε / (π_v e^ε + 1 - π_v) for every report, so

    S(π) <= π_max e^ε / (π_max (e^ε - 1) + 1)          (:func:`ldp_bound`)

and, for the uniform prior, S <= e^ε/(e^ε + d - 1), which d-ary randomized response
attains exactly.  The
blind guess of the most frequent value already succeeds with π_max (:func:`baseline`).

Where the value comes from (nothing here knows a protocol by name):

* **exact**: the protocol's own ``adversary_success(prior)`` (a closed form; it may return
  None for a prior too costly, then the empirical estimate is used), else, for a
  ``"categorical"`` report model, the sum above over the enumerated reports of
  ``report_probabilities`` (:func:`enumerated_success`), over the only values that can be
  guessed (π_v e^ε >= π_max: :func:`contenders`), when it costs at most
  :data:`MAX_ENUMERATION` products;
* **empirical**: users drawn from π, reported through the real ``perturb``, and guessed
  with the protocol's per-report likelihood ``log_likelihoods(reports)`` (an (n, d)
  array of ln Pr[y_i | v] up to a constant per report); the mean hit rate with its
  standard error (:func:`empirical_success`).

:func:`adversary_method` says which applies to a protocol.

Heavy hitters: a user reports parts of the value (a prefix, segments, the whole value)
through its group's oracles; :func:`heavy_hitter_success` gives the success at guessing
the whole value from the groups the protocol declares (``report_groups()``), a group of
one report through :func:`mapped_success`, of several through :func:`joint_success`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ldp.contract import (
    HasExactAdversary,
    HasLogLikelihoods,
    HasReportCount,
    HasReportGroups,
    HasRoundsAdversary,
    HasSequenceLikelihoods,
    capabilities_of,
)
from ldp.validation import ParameterError, check_epsilon, check_generator, check_int

Method = Literal["exact", "empirical"]

#: The generic enumeration of a categorical report model stops at this many (value,
#: report) products (~1 s in float64).
MAX_ENUMERATION = 1 << 26
#: Reports drawn by default for an empirical estimate (standard error <= 1/(2√n) ≈ 0.005),
#: fewer on a large domain: at most EMPIRICAL_CELLS likelihoods (reports x values), and
#: at least MIN_EMPIRICAL_SAMPLES reports.
EMPIRICAL_SAMPLES = 10_000
EMPIRICAL_CELLS = 1 << 22
MIN_EMPIRICAL_SAMPLES = 200
#: Users whose likelihoods are held at once by the empirical estimate (n x d floats).
CHUNK_CELLS = 1 << 22


class NoAdversary(TypeError):
    """The protocol has neither an exact form nor a per-report likelihood."""


@dataclass(frozen=True)
class AdversarySuccess:
    """The adversary's success rate and how it was obtained.

    Attributes
    ----------
    value : float
        S(π), the probability that the maximum-posterior guess is the user's value.
    standard_error : float
        0 for an exact value, the binomial standard error of an empirical one.
    method : {"exact", "empirical"}
    """

    value: float
    standard_error: float
    method: Method


def check_prior(prior: object, domain_size: int) -> np.ndarray:
    """A prior over the domain as probabilities: d non-negative finite weights, not all 0.

    Counts are accepted and normalised.  ParameterError (a ValueError) names ``prior``.
    """
    try:
        weights = np.asarray(prior, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"prior must be an array of numbers, got {type(prior).__name__}") from None
    if weights.ndim != 1 or weights.shape[0] != domain_size:
        allowed = f"one weight per domain value ({domain_size})"
        raise ParameterError("prior", f"shape {weights.shape}", allowed)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ParameterError("prior", "a negative or non-finite weight", "finite and non-negative")
    total = weights.sum()
    if not total > 0:
        raise ParameterError(
            "prior", "all zeros", "not all zero", message="prior weights must not all be 0"
        )
    return weights / total


def baseline(prior: np.ndarray) -> float:
    """π_max: the success of guessing the most frequent value without any report."""
    return float(np.max(prior))


def ldp_bound(epsilon: float, prior: np.ndarray) -> float:
    """The most any adversary can reach against an ε-LDP report: π_max e^ε/(π_max(e^ε-1)+1).

    Pr[v | y] = π_v Pr[y|v] / Σ_u π_u Pr[y|u] <= π_v e^ε / (π_v e^ε + 1 - π_v), since
    every Pr[y|u] >= e^{-ε} Pr[y|v]; the right side grows with π_v.  Uniform prior:
    e^ε/(e^ε + d - 1).
    """
    top = baseline(prior)
    grow = math.expm1(check_epsilon(epsilon))
    return top * (grow + 1) / (top * grow + 1)


def support_success(prior: np.ndarray, p: float, q: float) -> float:
    """S(π) when a report's likelihood depends only on which values it *supports*.

    The report supports each value independently with probability q, except the user's
    own, supported with probability p >= q; Pr[y | v] = P(S) a if v is in the support set S
    of y, P(S) b if not, with P(S) the probability of S when every value is supported
    with probability q, a = p/q and b = (1-p)/(1-q).  Unary encodings are this exactly
    (S = the bits set); local hashing with an ideal hash is too, with q = 1/g (S = the
    values hashed to the reported cell).  Then S(π) = E_S max(a max_S π, b max_{S^c} π).
    Sort π decreasingly: if the top value is in S the term is a π_1 (probability q: p π_1
    in all), else the first supported value is i >= 2 (probability q (1-q)^{i-1}; the
    term max(a π_i, b π_1)) or there is none (probability (1-q)^d; the term b π_1):

        S(π) = p π_1 + Σ_{i=2}^{d} (1-q)^{i-2} max(p (1-q) π_i, q (1-p) π_1)
               + (1-p) (1-q)^{d-1} π_1.

    Uniform π: (p + p(1-q)(1-(1-q)^{d-1})/q + (1-p)(1-q)^{d-1}) / d.

    The sum stops once (1-q)^{i-2} < 10^-20 q p: the rest is below 10^-20 of S (each term
    is at most π_1 (1-q)^{i-2}, S >= p π_1), invisible in float64, and would otherwise be
    slow subnormal arithmetic on large domains.
    """
    if not 0 < q <= p <= 1 or q >= 1:
        raise ValueError(f"need 0 < q <= p <= 1 and q < 1, got p = {p}, q = {q}")
    ranked = np.sort(np.asarray(prior, dtype=float))[::-1]
    d, top = ranked.shape[0], ranked[0]
    log_keep = math.log1p(-q)
    kept = min(d - 1, 2 + math.ceil(math.log(1e-20 * q * p) / log_keep))
    decay = np.exp(np.arange(kept, dtype=float) * log_keep)  # (1-q)^{i-2}, i = 2..kept+1
    terms = np.maximum(p * (1.0 - q) * ranked[1 : kept + 1], q * (1.0 - p) * top)
    tail = (1.0 - p) * math.exp((d - 1) * log_keep) * top
    return float(p * top + np.dot(decay, terms) + tail)


#: :func:`own_coordinate_success` gives up (returns None) above this many evaluations.
MAX_OWN_COORDINATE = 1 << 26


def own_coordinate_success(
    prior: np.ndarray, ratios: np.ndarray, weights: np.ndarray
) -> float | None:
    """S(π) for a report of d independent coordinates where only the user's own differs.

    Coordinate j of the report has the pmf "other" unless j is the user's value, whose
    coordinate has "own"; then Pr[r | v] = Π_j other(r_j) · L(r_v), L = own/other, and
    S(π) = E[max_v π_v L_v] with L_1..L_d independent, each distributed as L(R) for R drawn
    from "other": ``ratios`` are the values of L (one per cell of the pmf), ``weights``
    their probabilities under "other".  With M = max_v π_v L_v,

        E[M] = Σ_i t_i (F_M(t_i) - F_M(t_{i-1})),   F_M(t) = Π_v P(L <= t / π_v),

    over the points t_i = π_v L_k in increasing order.  Only the values with
    π_v max L >= π_1 min L can reach the maximum, and equal π_v share a factor, so the
    cost is (distinct π of those)² x (cells).  Unary encodings are the two-cell case
    (:func:`support_success`).  None when that exceeds :data:`MAX_OWN_COORDINATE`.
    """
    ratios, weights = np.asarray(ratios, dtype=float), np.asarray(weights, dtype=float)
    order = np.argsort(ratios, kind="stable")
    levels, cumulative = ratios[order], np.cumsum(weights[order])
    cumulative /= cumulative[-1]
    top = float(np.max(prior))
    held = prior[prior * levels[-1] >= top * levels[0]]
    groups, sizes = np.unique(held, return_counts=True)
    if groups.size**2 * levels.size > MAX_OWN_COORDINATE:
        return None
    points = np.unique(np.outer(groups, levels).ravel())
    log_cdf = np.zeros(points.size)
    with np.errstate(divide="ignore"):
        for value, size in zip(groups, sizes, strict=True):
            # t / π_v with a relative margin of 1e-12: a point π_v L_k must count L_k
            # itself (a rounded quotient just below it would move its mass up a level)
            index = np.searchsorted(levels, points / value * (1 + 1e-12), side="right")
            below = np.where(index > 0, cumulative[np.maximum(index - 1, 0)], 0.0)
            log_cdf += size * np.log(np.minimum(below, 1.0))
    cdf = np.exp(log_cdf)
    return float(np.dot(points, np.diff(cdf, prepend=0.0)))


def table_success(prior: np.ndarray, probabilities: np.ndarray) -> float:
    """Σ_y max_v π_v P[v, y] for a table of report probabilities (one row per value)."""
    table = np.asarray(probabilities, dtype=float)
    return float(np.max(np.asarray(prior, dtype=float)[:, None] * table, axis=0).sum())


def contenders(prior: np.ndarray, epsilon: float) -> np.ndarray:
    """The values that can be a maximum-posterior guess: π_v e^ε >= π_max.

    Under ε-LDP, Pr[y | v] <= e^ε Pr[y | v_1] for the most likely value v_1, so a value
    with π_v e^ε < π_1 never beats v_1 on any report.
    """
    with np.errstate(divide="ignore"):
        logs = np.log(prior)
    return np.flatnonzero(logs + epsilon >= logs.max())


def enumerated_success(oracle: Any, prior: np.ndarray) -> float:
    """S(π) from a categorical ``report_probabilities(v)``, summed over every report.

    Only the values that can be guessed count (:func:`contenders`), so the cost is
    (contenders) x (reports); a running maximum over values keeps the memory at one row.
    """
    best = None
    for value in contenders(prior, oracle.epsilon):
        row = prior[value] * np.asarray(oracle.report_probabilities(int(value)), dtype=float)
        best = row if best is None else np.maximum(best, row)
    return float(best.sum())


def _report_count(oracle: Any) -> int | None:
    """How many reports a categorical protocol has (the length of its probability vector)."""
    if isinstance(oracle, HasReportCount):
        return int(oracle.report_count())
    try:
        return int(np.shape(oracle.report_probabilities(0))[0])
    except (ValueError, TypeError, MemoryError):  # too large to enumerate
        return None


def adversary_method(oracle: Any, prior: np.ndarray | None = None) -> Method | None:
    """How :func:`adversary_success` obtains S(π) for this protocol, or None if it cannot.

    "exact" with a closed form (``adversary_success``) or a categorical report model small
    enough to enumerate (:func:`contenders` x reports <= :data:`MAX_ENUMERATION`),
    "empirical" with a per-report likelihood (``log_likelihoods``).
    """
    if isinstance(oracle, HasExactAdversary):
        return "exact"
    if capabilities_of(oracle).report_model == "categorical":
        rows = oracle.domain_size if prior is None else contenders(prior, oracle.epsilon).size
        reports = _report_count(oracle)
        if reports is not None and rows * reports <= MAX_ENUMERATION:
            return "exact"
    if isinstance(oracle, HasLogLikelihoods):
        return "empirical"
    return None


def default_samples(domain_size: int) -> int:
    """Reports drawn by default: EMPIRICAL_SAMPLES, or fewer so as to hold at most
    EMPIRICAL_CELLS likelihoods, never below MIN_EMPIRICAL_SAMPLES."""
    return max(MIN_EMPIRICAL_SAMPLES, min(EMPIRICAL_SAMPLES, EMPIRICAL_CELLS // domain_size))


def empirical_success(
    oracle: Any, prior: np.ndarray, rng: np.random.Generator, n_samples: int | None = None
) -> AdversarySuccess:
    """S(π) estimated: ``n_samples`` users drawn from π, their real reports, MAP guesses.

    The guess is argmax_v ln π_v + ``log_likelihoods(reports)``[i, v]; the estimate is the
    share of right guesses, with its binomial standard error √(s(1-s)/n).
    """
    rng = check_generator(rng)
    d = oracle.domain_size
    n_samples = default_samples(d) if n_samples is None else n_samples
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    values = rng.choice(d, size=n_samples, p=prior).astype(np.int64)
    with np.errstate(divide="ignore"):
        log_prior = np.log(prior)
    hits = 0
    step = max(1, CHUNK_CELLS // d)
    for start in range(0, n_samples, step):
        chunk = values[start : start + step]
        loglik = np.asarray(oracle.log_likelihoods(oracle.perturb(chunk, rng)), dtype=float)
        hits += int(np.sum(np.argmax(loglik + log_prior, axis=1) == chunk))
    rate = hits / n_samples
    return AdversarySuccess(rate, math.sqrt(rate * (1 - rate) / n_samples), "empirical")


def adversary_success(
    oracle: Any,
    prior: object,
    rng: np.random.Generator | None = None,
    n_samples: int | None = None,
) -> AdversarySuccess:
    """The Bayesian adversary's success rate against one report of ``oracle``.

    Parameters
    ----------
    oracle : FrequencyOracle
        The protocol (its exact formula, enumeration or per-report likelihood is used,
        see :func:`adversary_method`).
    prior : array_like
        Weights (or counts) of the d values: the population's distribution.
    rng : numpy.random.Generator, optional
        Needed for an empirical estimate only.
    n_samples : int, optional
        Reports drawn for an empirical estimate (default :func:`default_samples`).

    Raises
    ------
    NoAdversary
        (a TypeError) If the protocol has neither an exact form nor a per-report
        likelihood; TypeError if an empirical estimate is needed and ``rng`` is None.
    """
    prior = check_prior(prior, oracle.domain_size)
    if baseline(prior) == 1.0:  # everybody holds one value: no report can mislead
        return AdversarySuccess(1.0, 0.0, "exact")
    method = adversary_method(oracle, prior)
    if method == "exact":
        exact = isinstance(oracle, HasExactAdversary)
        value = oracle.adversary_success(prior) if exact else enumerated_success(oracle, prior)
        if value is not None:  # a closed form may decline a too costly prior
            return AdversarySuccess(float(value), 0.0, "exact")
        method = "empirical" if isinstance(oracle, HasLogLikelihoods) else None
    if method == "empirical":
        if rng is None:
            raise TypeError(f"an empirical estimate for {type(oracle).__name__} needs rng")
        return empirical_success(oracle, prior, rng, n_samples)
    raise NoAdversary(
        f"{type(oracle).__name__} has no exact adversary_success, no enumerable categorical "
        "report model and no log_likelihoods: its adversary cannot be computed"
    )


def rounds_success(
    oracle: Any,
    prior: object,
    tau: int,
    rng: np.random.Generator | None = None,
    n_samples: int | None = None,
) -> list[AdversarySuccess]:
    """The adversary's success from t = 1..τ reports of a user whose value never changes.

    For a memoized longitudinal protocol (``perturb_rounds``): the value is drawn from π
    once, the user reports it at every round, and the adversary sees the first t reports
    and guesses argmax_v π_v Pr[y_1..y_t | v], the memo summed out.  More reports never
    hurt it, so the rate is nondecreasing in t; an ε_∞-LDP sequence keeps it at most
    :func:`ldp_bound` (ε_∞).

    Exact where the protocol has ``rounds_adversary_success(prior, t)`` (returning a
    value); otherwise empirical: ``n_samples`` users drawn from π run the real
    ``perturb_rounds`` for τ rounds, each prefix guessed with the protocol's
    ``sequence_log_likelihoods`` (the same users and memos at every t).  Default samples:
    :func:`default_samples` of d τ (at most EMPIRICAL_CELLS likelihoods per round).
    """
    prior = check_prior(prior, oracle.domain_size)
    tau = check_int(tau, "tau", minimum=1, maximum=4096)
    if baseline(prior) == 1.0:
        return [AdversarySuccess(1.0, 0.0, "exact")] * tau
    if isinstance(oracle, HasRoundsAdversary):
        exact = [oracle.rounds_adversary_success(prior, t) for t in range(1, tau + 1)]
        if all(value is not None for value in exact):
            return [AdversarySuccess(float(value), 0.0, "exact") for value in exact]
    if not isinstance(oracle, HasSequenceLikelihoods):
        raise NoAdversary(f"{type(oracle).__name__} has no sequence_log_likelihoods")
    if rng is None:
        raise TypeError(f"an empirical estimate for {type(oracle).__name__} needs rng")
    rng = check_generator(rng)
    d = oracle.domain_size
    n_samples = default_samples(d * tau) if n_samples is None else n_samples
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    values = rng.choice(d, size=n_samples, p=prior).astype(np.int64)
    rounds = oracle.perturb_rounds(np.repeat(values[:, None], tau, axis=1), rng)
    with np.errstate(divide="ignore"):
        log_prior = np.log(prior)
    found = []
    for t in range(1, tau + 1):
        loglik = np.asarray(oracle.sequence_log_likelihoods(rounds[:t]), dtype=float)
        rate = float(np.mean(np.argmax(loglik + log_prior, axis=1) == values))
        found.append(AdversarySuccess(rate, math.sqrt(rate * (1 - rate) / n_samples), "empirical"))
    return found


# ------------------------------------------------------------------------- heavy hitters
#: A heavy hitter's group whose oracle does not declare ``adversary_support_only`` is
#: computed on a dense prior over the oracle's domain, up to this many values.
MAX_DENSE_PRIOR = 1 << 20


def pushed_prior(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ρ_u = max_{x: key(x) = u} π_x over the distinct keys u: the prior pushed through the map.

    ``keys[i]`` is what a user holding the i-th value of the prior's support sends through
    the oracle (an integer, or a row of words), ``weights[i]`` that value's prior weight.
    Returns the distinct keys (increasing) and ρ (not normalised: Σρ <= Σπ).
    """
    keys, weights = np.asarray(keys), np.asarray(weights, dtype=float)
    if keys.shape[0] > 1 and keys.dtype.kind in "iu":
        changed = _changes_if_sorted(keys)  # sorted keys (prefixes of sorted values): one pass
        if changed is not None:
            starts = np.flatnonzero(np.r_[True, changed])
            return keys[starts], np.maximum.reduceat(weights, starts)
    from ldp.bits import row_keys

    _, first, inverse = np.unique(row_keys(keys), return_index=True, return_inverse=True)
    rho = np.zeros(first.shape[0])
    np.maximum.at(rho, inverse.ravel(), weights)
    return keys[first], rho


def _changes_if_sorted(keys: np.ndarray) -> np.ndarray | None:
    """Where consecutive integer keys (or word rows, most significant word first) differ,
    if they never decrease; None if they do."""
    if keys.ndim == 1:
        return keys[1:] != keys[:-1] if np.all(keys[1:] >= keys[:-1]) else None
    later, earlier = keys[1:], keys[:-1]
    equal = np.ones(later.shape[0], dtype=bool)
    greater = np.zeros(later.shape[0], dtype=bool)
    for column in range(keys.shape[1]):  # lexicographic, one word at a time
        greater |= equal & (later[:, column] > earlier[:, column])
        equal &= later[:, column] == earlier[:, column]
    return ~equal if np.all(greater | equal) else None


def mapped_success(
    oracle: Any,
    keys: np.ndarray,
    weights: np.ndarray,
    rng: np.random.Generator | None = None,
    n_samples: int | None = None,
) -> AdversarySuccess:
    """Σ_y max_x π_x Pr[y | key(x)]: guessing the whole value x from one report of key(x).

    A heavy-hitter user reports only a part of the value (a prefix, a segment) through the
    oracle.  Values sharing a key are indistinguishable to the report, so the adversary
    guesses the most likely of them, and grouping the values by key gives

        Σ_y max_x π_x Pr[y | key(x)] = Σ_y max_u ρ_u Pr[y | u] = (Σρ) S_oracle(ρ/Σρ),

    with ρ = :func:`pushed_prior` and S_oracle the oracle's own adversary
    (:func:`adversary_success`).  Values with π_x = 0 are never a guess, so only the prior's
    support is given (``keys``, ``weights``).  Keys with ρ_u = 0 are the rest of the
    oracle's domain: an oracle that declares ``Capabilities(adversary_support_only=True)`` (its
    ``adversary_success`` does not depend on how many values have weight 0) is given ρ over
    the held keys only, whatever its domain (2^64 prefixes); any other gets the dense ρ
    over its domain, up to :data:`MAX_DENSE_PRIOR` values.  The standard error of an
    empirical S_oracle is scaled by Σρ too.

    Raises
    ------
    NoAdversary
        If the domain is larger than that without the declaration, or the oracle has no
        adversary at all.
    """
    held, rho = pushed_prior(keys, weights)
    total = float(rho.sum())
    if capabilities_of(oracle).adversary_support_only and isinstance(oracle, HasExactAdversary):
        if rho.shape[0] == 1:
            return AdversarySuccess(total, 0.0, "exact")
        return AdversarySuccess(total * float(oracle.adversary_success(rho / total)), 0.0, "exact")
    d = oracle.domain_size
    if held.ndim != 1 or d > MAX_DENSE_PRIOR:
        raise NoAdversary(
            f"{type(oracle).__name__} over {d} values neither declares adversary_support_only "
            f"nor fits a dense prior (<= {MAX_DENSE_PRIOR} values)"
        )
    dense = np.zeros(d)
    dense[held.astype(np.int64)] = rho / total
    found = adversary_success(oracle, dense, rng, n_samples)
    return AdversarySuccess(total * found.value, total * found.standard_error, found.method)


def heavy_hitter_success(
    protocol: Any,
    values: np.ndarray,
    counts: np.ndarray,
    rng: np.random.Generator | None = None,
    n_samples: int | None = None,
) -> AdversarySuccess:
    """The adversary's success at guessing a heavy-hitter user's whole value from what it sends.

    The protocol declares its users' groups (``report_groups()``, a tuple of
    :class:`ldp.heavy_hitters.base.ReportGroup`): a user joins group j with probability
    w_j, independently of the value, and then sends its reports of key_j1(v), key_j2(v),
    ... through their oracles, independently.  The adversary sees the reports and the
    group, so

        S(π) = Σ_j w_j Σ_{y_1..y_r} max_x π_x Π_t Pr_jt[y_t | key_jt(x)],

    each group by :func:`mapped_success` (one report) or :func:`joint_success` (several).
    Exact when every group's is (standard errors add in quadrature otherwise).

    Parameters
    ----------
    protocol : HeavyHitterLike
        A heavy hitter with ``report_groups()`` and ``m``.
    values, counts :
        The population's distinct values (the data set's representation, as
        ``Dataset.histogram``) and their counts: the prior.
    rng, n_samples :
        For a group whose adversary is empirical: a one-report group draws ``n_samples``
        reports; the groups of several reports that cannot be enumerated share one sample
        of ``n_samples`` users (:func:`empirical_joint_success`).

    A protocol that declares ``public_per_call`` (MCM's channel hash, SFP's short hash,
    drawn per run) is asked for the groups of one run, ``report_groups(n_users=n,
    rng=rng)`` with n = Σ counts: the adversary knows that run's public hash, so the
    success is exact *given* it (its mean over the hash is not computed; see
    ``docs/adversary.md``).

    Raises
    ------
    NoAdversary
        If the protocol declares no groups, a group's oracle has no adversary, or a group
        of several reports is too costly to estimate (:func:`empirical_joint_success`).
    """
    from ldp import bits

    weights = np.asarray(counts, dtype=float)
    if weights.ndim != 1 or weights.shape[0] != len(values):
        raise ParameterError("counts", f"shape {weights.shape}", f"one per value ({len(values)})")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0) or not weights.sum() > 0:
        allowed = "finite, non-negative, not all 0"
        raise ParameterError("counts", "a negative, non-finite or all-zero count", allowed)
    declared = report_groups_of(protocol, max(1, round(float(weights.sum()))), rng)
    weights = weights / weights.sum()
    words = bits.to_words(np.asarray(values), protocol.m)
    held = weights > 0
    words, weights = words[held], weights[held]
    # increasing values (word rows: most significant word first): their prefixes never
    # decrease, so each group's keys are found in one pass (pushed_prior)
    order = np.argsort(words) if words.ndim == 1 else np.lexsort(words.T[::-1])
    words, weights = words[order], weights[order]
    if float(weights.max()) == 1.0:
        return AdversarySuccess(1.0, 0.0, "exact")
    value, variance, exact, estimated = 0.0, 0.0, True, []
    for group in declared:
        if len(group.reports) == 1:
            report = group.reports[0]
            found = mapped_success(report.oracle, report.key(words), weights, rng, n_samples)
        else:
            success = enumerated_contenders_success(group.reports, words, weights)
            if success is None:  # estimated below, with the other such groups
                estimated.append((group.weight, group.reports))
                continue
            found = AdversarySuccess(success, 0.0, "exact")
        value += group.weight * found.value
        variance += (group.weight * found.standard_error) ** 2
        exact = exact and found.method == "exact"
    if estimated:
        if rng is None:
            raise TypeError("an empirical estimate for a group of several reports needs rng")
        found = empirical_joint_success(estimated, words, weights, rng, n_samples)
        value, variance, exact = value + found.value, variance + found.standard_error**2, False
    return AdversarySuccess(value, math.sqrt(variance), "exact" if exact else "empirical")


def report_groups_of(
    protocol: Any, n_users: int, rng: np.random.Generator | None = None
) -> tuple[Any, ...]:
    """The protocol's ``report_groups()``; for one that declares ``public_per_call`` (a hash
    drawn per run), ``report_groups(n_users=n_users, rng=rng)``: the groups of one run of
    ``n_users`` users, its public hash drawn from ``rng``.

    Raises
    ------
    NoAdversary
        If the protocol declares no groups.
    TypeError
        If a public hash is to be drawn and ``rng`` is None.
    """
    if not isinstance(protocol, HasReportGroups):
        raise NoAdversary(f"{type(protocol).__name__} declares no report_groups()")
    if not capabilities_of(protocol).public_per_call:
        return tuple(protocol.report_groups())
    if rng is None:
        raise TypeError(f"{type(protocol).__name__}'s public hash is drawn from rng: pass one")
    return tuple(protocol.report_groups(n_users=n_users, rng=rng))


# ------------------------------------------------------- several reports of one value
#: A group of several reports is enumerated exactly up to this many (contender, joint
#: report) products; its empirical estimate evaluates at most this many likelihoods.
MAX_JOINT_CELLS = 1 << 24


def joint_success(
    reports: Any,
    words: np.ndarray,
    prior: np.ndarray,
    rng: np.random.Generator | None = None,
    n_samples: int | None = None,
) -> AdversarySuccess:
    """Σ_{y_1..y_r} max_x π_x Π_t Pr_t[y_t | key_t(x)]: x guessed from r independent reports.

    A heavy-hitter user of a group that sends several reports (two segments, a
    segment beside the whole value) perturbs each key_t(x) independently, so the
    likelihood of what it sends is the product of the reports'.  Exact when it can be
    enumerated (:func:`enumerated_contenders_success`), else empirical
    (:func:`empirical_joint_success`, ``n_samples`` users).

    Parameters
    ----------
    reports : sequence of UserReport
        What the group's users send (``oracle``, ``key``).
    words, prior :
        The values of the prior's support (as :func:`ldp.bits.to_words` gives them) and
        their probabilities (positive, summing to 1).
    """
    found = enumerated_contenders_success(reports, words, prior)
    if found is not None:
        return AdversarySuccess(found, 0.0, "exact")
    if rng is None:
        raise TypeError("an empirical estimate for a group of several reports needs rng")
    return empirical_joint_success([(1.0, reports)], words, prior, rng, n_samples)


def enumerated_contenders_success(
    reports: Any, words: np.ndarray, prior: np.ndarray
) -> float | None:
    """:func:`enumerated_joint_success` over the values that can be the guess, or None.

    Only the values with π_x e^{Σε_t} >= π_max can be the guess (:func:`contenders`: the
    reports together are Σε_t-LDP).
    """
    keep = contenders(prior, sum(report.oracle.epsilon for report in reports))
    kept = words[keep]
    return enumerated_joint_success(
        [report.oracle for report in reports], [report.key(kept) for report in reports], prior[keep]
    )


def enumerated_joint_success(oracles: Any, keys: Any, weights: np.ndarray) -> float | None:
    """Σ_{y_1..y_r} max_x w_x Π_t Pr_t[y_t | keys[t][x]] over every joint report, or None.

    None unless every oracle is ``"categorical"`` over integer keys and the cost,
    (values) x Π_t (reports of oracle t), is at most :data:`MAX_JOINT_CELLS`.  Each
    oracle's ``report_probabilities`` is read once per distinct key; the joint
    probabilities are built a block of values at a time with a running maximum.
    """
    sizes = []
    for oracle, key in zip(oracles, keys, strict=True):
        if np.ndim(key) != 1 or capabilities_of(oracle).report_model != "categorical":
            return None
        size = _report_count(oracle)
        if size is None:
            return None
        sizes.append(size)
    space = math.prod(sizes)
    if space * weights.shape[0] > MAX_JOINT_CELLS:
        return None
    tables, inverses = [], []
    for oracle, key in zip(oracles, keys, strict=True):
        distinct, inverse = np.unique(np.asarray(key), return_inverse=True)
        rows = [np.asarray(oracle.report_probabilities(int(u)), dtype=float) for u in distinct]
        tables.append(np.stack(rows))
        inverses.append(inverse.ravel())
    best = np.zeros(space)
    step = max(1, CHUNK_CELLS // space)
    for start in range(0, weights.shape[0], step):
        block = slice(start, start + step)
        joint = weights[block, None]
        for table, inverse in zip(tables, inverses, strict=True):
            rows = table[inverse[block]]
            joint = (joint[:, :, None] * rows[:, None, :]).reshape(rows.shape[0], -1)
        np.maximum(best, joint.max(axis=0), out=best)
    return float(best.sum())


def key_log_likelihoods(oracle: Any, reports: Any, keys: np.ndarray) -> np.ndarray:
    """ln Pr[y_i | u] up to a constant per report, for each report (rows) and key u (columns).

    An oracle whose support indicators are independent across values
    (``FrequencyOracle.has_independent_support``: unary encodings, THE, BLH, OLH) has
    Pr[y | u] = P(S_y) (p*/q* if y supports u, else (1-p*)/(1-q*)), so only whether each
    report supports each key is computed (the bit of u; H_seed(u) against the reported
    cell), on any domain and for keys of any width.  Any other oracle uses its
    ``log_likelihoods`` over its whole domain, up to :data:`MAX_DENSE_PRIOR` values.
    """
    if not _dense_likelihoods(oracle, keys) and _independent(oracle):
        if not callable(getattr(reports, "supports", None)):
            raise NoAdversary(f"cannot read the support of {type(reports).__name__} reports")
        supported = reports.supports(keys, getattr(oracle, "g", None))
        p, q = oracle.p_star, oracle.q_star
        return np.where(supported, math.log(p / q), math.log1p(-p) - math.log1p(-q))
    if not _dense_likelihoods(oracle, keys):
        raise NoAdversary(
            f"{type(oracle).__name__} over {oracle.domain_size} values has neither independent "
            f"support nor log_likelihoods over a domain of at most {MAX_DENSE_PRIOR} values"
        )
    return np.asarray(oracle.log_likelihoods(reports), dtype=float)[:, keys.astype(np.int64)]


def _independent(oracle: Any) -> bool:
    """Whether the oracle's support indicators are independent across values
    (``FrequencyOracle.has_independent_support``; False for other objects)."""
    check = getattr(type(oracle), "has_independent_support", None)
    return bool(check()) if callable(check) else False


def _dense_likelihoods(oracle: Any, keys: np.ndarray) -> bool:
    """Whether :func:`key_log_likelihoods` reads ``oracle.log_likelihoods`` over its domain
    (an oracle without independent support, on a small domain)."""
    return (
        not _independent(oracle)
        and isinstance(oracle, HasLogLikelihoods)
        and np.ndim(keys) == 1
        and oracle.domain_size <= MAX_DENSE_PRIOR
    )


def empirical_joint_success(
    groups: Any,
    words: np.ndarray,
    prior: np.ndarray,
    rng: np.random.Generator,
    n_samples: int | None = None,
) -> AdversarySuccess:
    """Σ_j w_j S_j over groups of several reports, estimated from one sample of users.

    ``groups`` are (w_j, reports_j) pairs, S_j = Σ_{y_1..y_r} max_x π_x Π_t Pr_t[y_t |
    key_t(x)] the success against a user of group j.  ``n_samples`` users (at least
    :data:`MIN_EMPIRICAL_SAMPLES`; default :func:`default_samples` of the costliest group's
    cost per user: its likelihoods and its reports' bytes) are drawn from π, and each joins
    group j with probability w_j / W, W = Σ_j w_j (the group is independent of the value);
    its keys key_t(x) are perturbed by the oracles' real ``perturb``, and the guess is the
    contender (:func:`contenders`, at Σε_t) of largest ln π_x + Σ_t ln Pr_t[y_t | key_t(x)]
    (:func:`key_log_likelihoods` at each distinct key, indexed by each contender's).  A
    user whose value is no contender is always missed, as it would be by the exact
    adversary.  Returns W times the hit rate, with its binomial standard error: one sample
    serves every group, so many small groups (MCM's one per bit) cost what one does.

    Raises
    ------
    NoAdversary
        If the users x (likelihoods + report bytes) exceed :data:`MAX_JOINT_CELLS` (a unary
        report over 2^64 values), or an oracle has no per-report likelihood.
    """
    rng = check_generator(rng)
    prepared = [_prepared_group(reports, words, prior) for _, reports in groups]
    per_user = max(group.cost for group in prepared)
    n_samples = default_samples(per_user) if n_samples is None else n_samples
    n_samples = max(MIN_EMPIRICAL_SAMPLES, check_int(n_samples, "n_samples", minimum=1))
    if n_samples * per_user > MAX_JOINT_CELLS:
        raise NoAdversary(
            f"{n_samples} users x {per_user} likelihoods and report bytes exceed "
            f"{MAX_JOINT_CELLS}: "
            "too costly to estimate"
        )
    weights = np.array([weight for weight, _ in groups], dtype=float)
    sizes = rng.multinomial(n_samples, weights / weights.sum())
    values = rng.choice(prior.shape[0], size=n_samples, p=prior)  # the users, group by group
    starts = np.cumsum(sizes) - sizes
    hits = sum(
        group.hits(words, prior, values[start : start + size], rng)
        for group, start, size in zip(prepared, starts, sizes, strict=True)
        if size
    )
    rate, total = hits / n_samples, float(weights.sum())
    error = total * math.sqrt(rate * (1 - rate) / n_samples)
    return AdversarySuccess(total * rate, error, "empirical")


@dataclass(frozen=True)
class _PreparedGroup:
    """A group's reports with its contenders' distinct keys, for :func:`empirical_joint_success`."""

    reports: Any
    keep: np.ndarray  # the contenders (indices into the prior)
    distinct: list[np.ndarray]  # per report, the contenders' distinct keys
    inverses: list[np.ndarray]  # per report, each contender's position among them
    cost: int  # per user: likelihoods and report bytes

    def hits(
        self, words: np.ndarray, prior: np.ndarray, values: np.ndarray, rng: np.random.Generator
    ) -> int:
        """Right guesses among users of the group holding ``values`` (indices into π)."""
        position = np.full(prior.shape[0], -1, dtype=np.int64)
        position[self.keep] = np.arange(self.keep.shape[0])
        log_prior = np.log(prior[self.keep])
        hits, step = 0, max(1, CHUNK_CELLS // self.cost)
        for start in range(0, values.shape[0], step):
            users = values[start : start + step]
            loglik = np.repeat(log_prior[None, :], users.shape[0], axis=0)
            for report, keys, inverse in zip(
                self.reports, self.distinct, self.inverses, strict=True
            ):
                sent = report.oracle.perturb(report.key(words[users]), rng)
                loglik += key_log_likelihoods(report.oracle, sent, keys)[:, inverse]
            hits += int(np.sum(np.argmax(loglik, axis=1) == position[users]))
        return hits


def _prepared_group(reports: Any, words: np.ndarray, prior: np.ndarray) -> _PreparedGroup:
    """The contenders of a group (at Σε_t) and their distinct keys per report."""
    from ldp.bits import row_keys

    keep = contenders(prior, sum(report.oracle.epsilon for report in reports))
    distinct, inverses, cost = [], [], keep.shape[0]
    for report in reports:
        keys = np.asarray(report.key(words[keep]))
        _, first, inverse = np.unique(row_keys(keys), return_index=True, return_inverse=True)
        distinct.append(keys[first])
        inverses.append(inverse.ravel())
        dense = _dense_likelihoods(report.oracle, keys)
        cost += report.oracle.domain_size if dense else first.shape[0]
        cost += report.oracle.report_bytes(1)  # perturb's own work (a unary report: d/8)
    return _PreparedGroup(reports, keep, distinct, inverses, cost)
