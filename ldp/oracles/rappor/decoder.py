"""RAPPOR's decoder for a candidate list: LASSO to select, least squares to estimate.

Citations ``[RAPPOR]`` are to Erlingsson, Pihur, Korolova, CCS 2014, Sec. 4.  The server
holds, per cohort c and bit b, the unbiased count t_cb of clients whose Bloom filter has b
set (:meth:`ldp.oracles.rappor.RAPPOR.unbiased_bits`).  A candidate j sets bits
positions(c, j) in cohort c, and cohorts are uniform, so E[t] = X x with
X[(c, b), j] = 1[b in positions(c, j)]/m and x_j the number of clients holding j.  With
many more candidates than m k rows the system is underdetermined, so ([RAPPOR] Sec. 4):

1. **select** with a non-negative LASSO, min ½||X x - t||² + λ Σ x_j over x >= 0, solved by
   accelerated proximal gradient (FISTA, Beck and Teboulle 2009) on the Gram matrix of a
   working set of columns grown until every column meets the optimality conditions; the
   penalty is the universal threshold λ = σ sqrt(2 ln C) max_j ||X_j|| (σ² the mean
   variance of a t_cb under no signal, C the number of candidates) unless given;
2. **estimate** the selected counts by ordinary least squares of t on their columns
   (candidates whose columns are linearly dependent on earlier ones are dropped);
3. **standard errors**: the exact covariance of the least-squares estimate (the one
   :meth:`RAPPOR.variances` derives: randomized-response noise per bit and the
   multinomial spread of clients over cohorts), with the unknown counts replaced by the
   estimates (the paper uses the regression's residual variance, which assumes
   homoscedastic bits);
4. **detect** with the paper's Bonferroni cut-off: estimate/SE above the one-sided normal
   quantile at α/C.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ldp.lazy import lazy_module
from ldp.validation import check_int

linalg = lazy_module("scipy.linalg")
sparse = lazy_module("scipy.sparse")
stats = lazy_module("scipy.stats")

__all__ = ["CohortCounts", "RapporDecoding", "decode", "design_columns", "design_matrix"]

#: FISTA stops when no coefficient moved by more than this fraction of the largest one.
TOLERANCE = 1e-4
MAX_ITERATIONS = 1000
#: Columns of the LASSO's first working set (it then at most doubles per round).
WORKING_SET = 256


class CohortCounts(NamedTuple):
    """What the server keeps of the reports: ones per (cohort, bit), reports per cohort."""

    ones: np.ndarray  #: int64 (m, k): Y_cb, the reports of cohort c with bit b set
    reports: np.ndarray  #: int64 (m,): n_c, the reports of cohort c


def design_columns(positions: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero rows of each candidate's design column, without duplicate positions.

    Returns (rows, columns) of the entries X[(c, b), j] = 1/m: row c k + b for every
    distinct position b of candidate j in cohort c (a filter sets a bit once, however
    many of its h hashes land on it).
    """
    m, count, h = positions.shape
    ordered = np.sort(positions, axis=2)
    fresh = np.ones(ordered.shape, dtype=bool)
    fresh[:, :, 1:] = ordered[:, :, 1:] != ordered[:, :, :-1]
    cohort = np.broadcast_to(np.arange(m)[:, None, None], ordered.shape)
    column = np.broadcast_to(np.arange(count)[None, :, None], ordered.shape)
    return (cohort * k + ordered)[fresh], column[fresh]


class RapporDecoding(NamedTuple):
    """The decoder's result, one entry per candidate (in the order given)."""

    estimates: np.ndarray  #: estimated counts (0 for candidates the LASSO did not select)
    std_errors: np.ndarray  #: standard errors of the selected ones (NaN elsewhere)
    detected: np.ndarray  #: bool: selected and significant at the Bonferroni cut-off
    selected: np.ndarray  #: bool: kept by the LASSO (and linearly independent)
    penalty: float  #: the LASSO's λ


def design_matrix(positions: np.ndarray, k: int) -> sparse.csc_matrix:
    """X (m k, C) as a sparse matrix: 1/m at (c k + b, j) for each distinct position b."""
    m, count, _ = positions.shape
    rows, columns = design_columns(positions, k)
    data = np.full(rows.shape[0], 1.0 / m)
    return sparse.csc_matrix((data, (rows, columns)), shape=(m * k, count))


def _largest_eigenvalue(gram: np.ndarray, iterations: int = 100) -> float:
    """The largest eigenvalue of a Gram matrix X'X by power iteration (1% widened: FISTA's
    step 1/L must not exceed the inverse Lipschitz constant of the gradient)."""
    vector = np.ones(gram.shape[0]) / math.sqrt(gram.shape[0])
    value = 0.0
    for _ in range(iterations):
        product = gram @ vector
        norm = float(np.linalg.norm(product))
        if norm == 0.0:
            return 1.0
        vector, previous, value = product / norm, value, norm
        if abs(value - previous) <= 1e-6 * value:
            break
    return 1.01 * value


def nonnegative_lasso(
    gram: np.ndarray, correlation: np.ndarray, penalty: float, start: np.ndarray
) -> np.ndarray:
    """argmin over x >= 0 of ½ x'G x - c'x + penalty Σ x_j, which is ½||X x - t||² +
    penalty Σ x_j up to a constant when G = X'X and c = X't: FISTA (Beck and Teboulle
    2009) on the Gram matrix, so an iteration costs one |W| x |W| product."""
    step = 1.0 / _largest_eigenvalue(gram)
    coef = start.astype(float).copy()
    momentum, extrapolated = 1.0, coef.copy()
    shifted = correlation - penalty
    for _ in range(MAX_ITERATIONS):
        new = np.maximum(extrapolated - step * (gram @ extrapolated - shifted), 0.0)
        moved = float(np.max(np.abs(new - coef))) if new.size else 0.0
        scale = max(float(np.max(new)) if new.size else 0.0, 1.0)
        next_momentum = (1 + math.sqrt(1 + 4 * momentum**2)) / 2
        extrapolated = new + ((momentum - 1) / next_momentum) * (new - coef)
        coef, momentum = new, next_momentum
        if moved <= TOLERANCE * scale:
            break
    return coef


def screened_lasso(x: sparse.csc_matrix, t: np.ndarray, penalty: float) -> np.ndarray:
    """The non-negative LASSO over all columns, solved on a working set (exact).

    Start from the :data:`WORKING_SET` columns most correlated with t among those that
    violate the optimality condition X_j'(t - X x) <= penalty at x = 0; solve there (on the
    working set's Gram matrix), then add the most violating columns (at least as many as
    the working set holds, so it at most doubles per round) and solve again, until no
    column violates it: the result satisfies the KKT conditions of the full problem, at
    the cost of one sparse X'r per round and small dense problems.
    """
    coef = np.zeros(x.shape[1])
    working = np.empty(0, dtype=np.int64)
    scores = x.T @ t
    while True:
        scores[working] = -np.inf
        violating = np.flatnonzero(scores > penalty * (1 + 1e-3))
        if violating.size == 0:
            return coef
        size = max(WORKING_SET, working.size)
        if violating.size > size:
            violating = violating[np.argpartition(scores[violating], -size)[-size:]]
        working = np.union1d(working, violating)
        columns = x[:, working]
        gram = (columns.T @ columns).toarray()
        coef[working] = nonnegative_lasso(gram, columns.T @ t, penalty, coef[working])
        scores = x.T @ (t - columns @ coef[working])


def _independent_columns(dense: np.ndarray) -> np.ndarray:
    """Indices of a maximal set of linearly independent columns (pivoted QR)."""
    if dense.shape[1] == 0:
        return np.empty(0, dtype=np.int64)
    _, r, pivots = linalg.qr(dense, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(r))
    rank = int(np.sum(diagonal > 1e-9 * diagonal[0])) if diagonal.size else 0
    return np.sort(pivots[:rank])


def ols_covariance_diagonal(
    oracle: Any, positions: np.ndarray, solver: np.ndarray, counts: np.ndarray, cohorts: np.ndarray
) -> np.ndarray:
    """Var of the least-squares estimates A t of candidates with these positions.

    ``solver`` is A (S, m k); ``counts`` the plugged-in counts of the S candidates;
    ``cohorts`` the observed reports per cohort.  Same two terms as
    :meth:`ldp.oracles.rappor.RAPPOR.variances`: the randomized-response variance of each
    t_cb given the filters, [M_cb q*(1-q*) + (n_c - M_cb) p*(1-p*)]/(q*-p*)^2 with
    M = U x/m, and the multinomial spread Σ_u x_u [(1/m) Σ_c G_vuc^2 - δ_vu].
    """
    m, k = oracle.m, oracle.k
    design = design_matrix(positions, k).toarray()
    a = oracle.q_star * (1 - oracle.q_star)
    b = oracle.p_star * (1 - oracle.p_star)
    gap2 = (oracle.q_star - oracle.p_star) ** 2
    set_bits = np.clip(design @ counts, 0.0, np.repeat(cohorts, k).astype(float))
    noise = (set_bits * (a - b) + np.repeat(cohorts, k) * b) / gap2
    variance = solver**2 @ noise
    spread = np.zeros_like(variance)
    for c in range(m):
        block = slice(c * k, (c + 1) * k)
        g = solver[:, block] @ (design[block] * m)
        spread += (g**2) @ counts
    return variance + spread / m - counts


def decode(
    oracle: Any,
    counts: CohortCounts,
    positions: np.ndarray,
    *,
    alpha: float = 0.05,
    penalty: float | None = None,
) -> RapporDecoding:
    """Decode cohort counts against candidates with Bloom ``positions`` (m, C, h).

    Parameters
    ----------
    oracle : RAPPOR
        The protocol the reports came from (its p*, q*, k, m).
    counts : CohortCounts
        Ones per (cohort, bit) and reports per cohort.
    positions : numpy.ndarray
        The candidates' Bloom positions per cohort (``RAPPOR.positions`` or
        :func:`ldp.oracles.rappor.bloom_table` for byte strings).
    alpha : float, default 0.05
        The family-wise level of the detection cut-off (Bonferroni over the candidates).
    penalty : float, optional
        The LASSO's λ; default the universal threshold (module docstring).

    Returns
    -------
    RapporDecoding
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    positions = np.asarray(positions)
    if positions.ndim != 3 or positions.shape[0] != oracle.m:
        raise ValueError(f"positions must have shape (m = {oracle.m}, C, h), got {positions.shape}")
    candidates = check_int(positions.shape[1], "number of candidates", minimum=1)
    ones, cohorts = (np.asarray(part) for part in counts)
    if ones.shape != (oracle.m, oracle.k) or cohorts.shape != (oracle.m,):
        raise ValueError(f"counts must be (m, k) = ({oracle.m}, {oracle.k}) ones and (m,) reports")
    t = oracle.unbiased_bits(CohortCounts(ones, cohorts)).ravel()
    x = design_matrix(positions, oracle.k)
    if penalty is None:
        b = oracle.p_star * (1 - oracle.p_star)
        sigma = math.sqrt(b * cohorts.mean()) / abs(oracle.q_star - oracle.p_star)
        column_norm = math.sqrt(float(x.multiply(x).sum(axis=0).max()))
        penalty = sigma * math.sqrt(2 * math.log(max(candidates, 2))) * column_norm
    elif not penalty >= 0:
        raise ValueError(f"penalty must be >= 0, got {penalty}")
    lasso = screened_lasso(x, t, penalty)
    chosen = np.flatnonzero(lasso > 0)
    dense = x[:, chosen].toarray()
    chosen = chosen[_independent_columns(dense)]
    dense = x[:, chosen].toarray()

    estimates = np.zeros(candidates)
    std_errors = np.full(candidates, np.nan)
    selected = np.zeros(candidates, dtype=bool)
    if chosen.size:
        q, r = np.linalg.qr(dense)
        solver = linalg.solve_triangular(r, q.T)
        fit = solver @ t
        variance = ols_covariance_diagonal(
            oracle, positions[:, chosen], solver, np.maximum(fit, 0.0), cohorts
        )
        estimates[chosen], selected[chosen] = fit, True
        std_errors[chosen] = np.sqrt(np.maximum(variance, 0.0))
    cut = stats.norm.isf(alpha / candidates)
    with np.errstate(invalid="ignore", divide="ignore"):
        detected = selected & (estimates > cut * std_errors)
    return RapporDecoding(estimates, std_errors, detected, selected, float(penalty))
