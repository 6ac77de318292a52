"""SPM, the Segment Pairs Method of Fanti, Pihur and Erlingsson ([PEM] Sec. III-C).

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*;
Fanti et al. is its reference [17] (*Building a RAPPOR with the Unknown*, PoPETs 2016).

An m-bit value is cut into g segments of s bits.  Each user picks a random pair α ≠ β of
segments and reports ⟨π(v), α, β, π(v[α]), π(v[β])⟩, so the population falls into
C(g, 2) pair groups.  The aggregator

1. estimates every pattern of each segment from the users covering it (2^s queries per
   segment) and keeps the frequent ones, C_1, ..., C_g;
2. in each pair group (i, j), estimates the joint count of every pattern pair in
   C_i x C_j with the appendix's *simpler joint estimation* (:func:`pair_estimate`)
   instead of Fanti et al.'s MLE, and keeps the frequent pairs;
3. rebuilds candidate values by the a-priori principle -- every pair of segments of a
   frequent value is a frequent pair -- and tests them with the whole-value reports π(v).

Sampled engine.  Step 2 needs the pair supports I_a^b jointly with the
segment supports of step 1, from the same users' reports.  It is drawn exactly, without
materialising the whole population (see :class:`_SampledSupport`): step 1 draws, for
every pattern a of segment i, the support among users holding a (H_a) and among the
others (N_a), as the oracle's sampled engine does.  Given these subtotals the supporting
users within each class are a uniformly random subset of the class (the users' support
indicators are independent and identically distributed within a class), so step 2 splits
H_a and N_a over the pair groups with multivariate hypergeometrics and, inside the group,
draws the supporters as uniform random subsets -- for the |C_i| + |C_j| kept patterns and
the group's users only.  Cost O(n_pair (|C_i| + |C_j|)) per pair group, O(n x 2k) per run
in all, i.e. about 32 million cheap operations at n = 10^6, k = 16.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar

import numpy as np

from ldp import bits, hashing
from ldp.contract import Capabilities
from ldp.heavy_hitters.base import (
    ClientReports,
    HeavyHitterResult,
    ReportGroup,
    UserReport,
    assign_groups,
    build_oracle,
    check_dataset,
    check_engine,
    top,
)
from ldp.heavy_hitters.baseline import (
    BaselineParameters,
    Population,
    join_segments,
    paper_segment_bits,
    resolve_segment_bits,
    segment,
    segment_bounds,
    stage_bar,
    to_dataset_values,
    variant_presets,
)
from ldp.oracles import SUE, FrequencyOracle, HashReports, UnaryReports
from ldp.oracles.base import independent_support
from ldp.registry import register
from ldp.validation import ParameterError, check_generator

__all__ = ["SPM", "joint_estimate", "pair_estimate", "support_indicators"]

#: Partial candidate tuples kept while joining segments (the best by weakest pair).
MAX_PARTIAL = 2**18
#: (partial tuple, pattern) cells a join of :func:`_cliques` holds at once.
JOIN_BLOCK = 2**21


# -------------------------------------------------------------------- joint estimation
def pair_estimate(
    pair_support: np.ndarray | float,
    estimate_a: np.ndarray | float,
    estimate_b: np.ndarray | float,
    n: int,
    p: float,
    q: float,
) -> np.ndarray:
    """The appendix's "simpler joint estimation" of a pattern pair ([PEM] Appendix).

    ñ_a^b = (I_a^b - (ñ_a + ñ^b) q (p-q) - n q^2) / (p-q)^2

    Parameters
    ----------
    pair_support : array_like
        I_a^b: how many of the group's n users support a in segment i *and* b in segment j.
    estimate_a, estimate_b : array_like
        Unbiased estimates ñ_a, ñ^b of the group's counts of a in segment i and b in j.
    n : int
        Users in the pair group.
    p, q : float
        The segment oracle's p* and q* (both segments are reported through independent
        runs of the same oracle).

    Returns
    -------
    numpy.ndarray
        ñ_a^b, unbiased because E[I_a^b] = n_a^b p^2 + (n^b - n_a^b + n_a - n_a^b) pq +
        (n - n^b - n_a + n_a^b) q^2 is linear in the unknowns.  (The appendix writes
        p = 1/2, q = 1/(e^ε+1); the algebra only needs the pure framework's p*, q*.)
    """
    gap = p - q
    return (
        np.asarray(pair_support, float)
        - (np.asarray(estimate_a, float) + np.asarray(estimate_b, float)) * q * gap
        - n * q**2
    ) / gap**2


def joint_estimate(
    support: np.ndarray | float, subset_sums: Sequence[np.ndarray | float], p: float, q: float
) -> np.ndarray:
    """The appendix's joint estimation of |V| answers ([PEM] Appendix, multi-answer form).

    ñ_V = (I_V - Σ_{i=0}^{|V|-1} ñ*_{V(i)} q^{|V|-i} (p-q)^i) / (p-q)^{|V|}

    Parameters
    ----------
    support : array_like
        I_V: users whose reports support every answer of V (one independent report each).
    subset_sums : sequence
        ``subset_sums[i]`` = ñ*_{V(i)}, the sum of the unbiased estimates ñ_S over the
        subsets S ⊂ V of size i; ``subset_sums[0]`` is n (the empty set's count).  Its
        length is |V|.
    p, q : float
        The oracle's p*, q*.

    Notes
    -----
    The paper's sum runs to "n-1" with n meaning |V| (its n is overloaded): erratum
    applied.  Unbiased since a user's indicator product expands as
    Π_{a∈V} (q + (p-q) 1[a]) = Σ_{S⊆V} q^{|V|-|S|} (p-q)^{|S|} 1[S], so
    E[I_V] = Σ_S q^{|V|-|S|} (p-q)^{|S|} n_S.  For |V| = 2 this is :func:`pair_estimate`.
    """
    order = len(subset_sums)
    gap = p - q
    total = np.asarray(support, dtype=float).copy()
    for i, sums in enumerate(subset_sums):
        total = total - np.asarray(sums, dtype=float) * q ** (order - i) * gap**i
    return total / gap**order


def support_indicators(oracle: FrequencyOracle, reports: Any, candidates: np.ndarray) -> np.ndarray:
    """Which of the given candidates each report supports: a bool (users, candidates) matrix.

    The pair support of SPM is the AND of two such matrices' columns (I_a^b = X^T Y):
    for SUE/OUE (RAPPOR) and THE (client-side thresholded) the AND of the two unary
    reports' bits, for BLH/OLH the AND of H_s(a) = y and H_s'(b) = y', for GRR the two
    reports equal a and b.

    Parameters
    ----------
    oracle : FrequencyOracle
        The instance that produced ``reports``.
    reports :
        Its ``perturb`` output for n users.
    candidates : numpy.ndarray
        1-D integer candidates (segment patterns, < 2^64).
    """
    candidates = np.asarray(candidates).astype(np.uint64)
    if isinstance(reports, HashReports):
        seeds = np.asarray(reports.seeds, dtype=np.uint64)
        values = np.asarray(reports.values)
        out = np.empty((len(seeds), len(candidates)), dtype=bool)
        for column, candidate in enumerate(candidates):
            keys = np.full(len(seeds), candidate, dtype=np.uint64)
            out[:, column] = hashing.hash_values(keys, seeds, oracle.g) == values
        return out
    columns = candidates.astype(np.int64)
    if isinstance(reports, UnaryReports):  # SUE, OUE, THE: packed bits, bit v at v // 8
        shifts = (7 - (columns & 7)).astype(np.uint8)
        return ((reports.bits[:, columns >> 3] >> shifts) & 1).astype(bool)
    array = np.asarray(reports)
    if array.ndim == 1:  # GRR: the report is the value
        return array[:, None] == columns[None, :]
    raise TypeError(f"cannot read per-user support from {type(reports).__name__} reports")


# ------------------------------------------------------------------ the sampled engine
class _SampledSupport:
    """Sampled engine: per-user support of one segment's kept patterns, group by group.

    Parameters
    ----------
    population : Population
        The sampled engine's population (``split``: users of each group per distinct value).
    keys : numpy.ndarray
        The segment pattern of each distinct value.
    kept : numpy.ndarray
        C_i, the kept patterns.
    holders_support, others_support : numpy.ndarray
        For each kept pattern a, step 1's H_a (supporting reports from users holding a)
        and N_a (from the other users covering the segment).
    groups : sequence of int
        The pair groups covering the segment.
    rng : numpy.random.Generator

    Notes
    -----
    Exact: the users' support indicators are independent across users and, within the
    holders of a (or within the non-holders), identically distributed (p*, resp. q*).
    Conditionally on their total H_a (resp. N_a) the set of supporters is therefore a
    uniform random subset of that size, whatever step 1 selected from the totals.  Its
    split over the pair groups is multivariate hypergeometric (drawn here, for all groups
    at once); inside a group it is a uniform subset again (drawn by :meth:`rows`, one
    group at a time, so only two groups' matrices exist at once).  Independence across
    patterns (ideal hashing, independent unary bits) carries over given the per-pattern
    subtotals.  Cost: O(n_group) per kept pattern and group.
    """

    def __init__(
        self,
        population: Population,
        keys: np.ndarray,
        kept: np.ndarray,
        holders_support: np.ndarray,
        others_support: np.ndarray,
        groups: Sequence[int],
        rng: np.random.Generator,
    ) -> None:
        size = len(kept)
        cls = np.full(len(keys), size, dtype=np.int64)  # class "size": holds no kept pattern
        if size:
            order = np.argsort(kept)
            position = np.minimum(np.searchsorted(kept[order], keys), size - 1)
            hit = kept[order][position] == keys
            cls[hit] = order[position[hit]]
        holders = (
            np.stack(
                [
                    np.bincount(cls, weights=population.split[group], minlength=size + 1)[:size]
                    for group in groups
                ]
            )
            .round()
            .astype(np.int64)
        )  # (groups, |C_i|)
        sizes = population.sizes[list(groups)].astype(np.int64)
        split_h = np.zeros((size, len(groups)), dtype=np.int64)
        split_n = np.zeros((size, len(groups)), dtype=np.int64)
        for t in range(size):
            split_h[t] = rng.multivariate_hypergeometric(holders[:, t], int(holders_support[t]))
            split_n[t] = rng.multivariate_hypergeometric(
                sizes - holders[:, t], int(others_support[t])
            )
        self.population, self.cls, self.size = population, cls, size
        self.column = {group: r for r, group in enumerate(groups)}
        self.split_h, self.split_n = split_h, split_n

    def rows(self, group: int, rng: np.random.Generator) -> np.ndarray:
        """bool matrix (|C_i|, users of ``group``): row a is X_u(a) for every user u.

        Users are in the canonical order ``np.repeat(arange(D), split[group])``, the same
        for both segments of a pair, so the rows of i and j can be multiplied.  Row a sets
        a uniform subset of the holders of a and one of the other users
        (:func:`uniform_subset`), of the sizes drawn at construction.
        """
        r, size = self.column[group], self.size
        user_cls = np.repeat(self.cls, self.population.split[group])
        user_cls = user_cls.astype(np.int16 if size < 2**15 else np.int64)
        n_group = len(user_cls)
        by_class = np.argsort(user_cls, kind="stable")  # positions, ascending within class
        edges = np.concatenate([[0], np.cumsum(np.bincount(user_cls, minlength=size + 1))])
        matrix = np.empty((size, n_group), dtype=bool)
        for t in range(size):
            holders_at = by_class[edges[t] : edges[t + 1]]
            uniform_subset(matrix[t], holders_at, int(self.split_n[t, r]), rng)
            if self.split_h[t, r]:
                pick = rng.choice(len(holders_at), self.split_h[t, r], replace=False, shuffle=False)
                matrix[t, holders_at[pick]] = True
        return matrix


def uniform_subset(
    row: np.ndarray, excluded: np.ndarray, size: int, rng: np.random.Generator
) -> None:
    """Fill the bool vector ``row`` with ``size`` True entries, a uniformly random subset
    of the positions not in ``excluded`` (distinct indices), and False elsewhere.

    Every eligible position is proposed independently with one probability L/2^16, from
    16 raw bits of the generator, and the proposal is then corrected to ``size`` by
    dropping a uniform subset of its surplus or adding a uniform subset of the missing
    positions.  Exact: the proposal is exchangeable over the eligible positions, so given
    its count K it is a uniform K-subset, and the correction keeps uniformity; L only sets
    how much correcting is needed (|K - size| is a few standard deviations).  About 4x
    faster than ``rng.choice(eligible, size, replace=False)`` at a third of 10^5.
    """
    n = row.shape[0]
    eligible = n - excluded.shape[0]
    if not 0 <= size <= eligible:
        raise ValueError(f"a subset of {size} of {eligible} eligible positions")
    if size == 0 or size == eligible:
        row[:] = size > 0
        row[excluded] = False
        return
    level = min(max(round(65536 * size / eligible), 1), 65535)
    words = rng.bit_generator.random_raw((n + 3) // 4)
    np.less(words.view(np.uint16)[:n], level, out=row)
    row[excluded] = False
    surplus = int(np.count_nonzero(row)) - size
    if surplus > 0:
        on = np.flatnonzero(row)
        row[on[rng.choice(on.shape[0], surplus, replace=False, shuffle=False)]] = False
    elif surplus < 0:
        row[excluded] = True  # out of reach of the draw below
        off = np.flatnonzero(~row)
        row[off[rng.choice(off.shape[0], -surplus, replace=False, shuffle=False)]] = True
        row[excluded] = False


#: Users per block of :func:`co_support` (two float32 blocks of |C| x 8192 stay in cache).
CO_SUPPORT_BLOCK = 8192


def co_support(x: np.ndarray, y: np.ndarray, block: int = CO_SUPPORT_BLOCK) -> np.ndarray:
    """I_a^b = Σ_u X_u(a) Y_u(b) for bool matrices x (|C_i|, n) and y (|C_j|, n), exactly.

    The users are taken ``block`` at a time as float32 0/1 blocks (BLAS; a block's sums
    are below 2^24, so exact) and the blocks' products added in float64 (exact integers
    below 2^53): no n-wide float copy of either matrix is made.
    """
    total = np.zeros((x.shape[0], y.shape[0]), dtype=np.float64)
    left = np.empty((x.shape[0], block), dtype=np.float32)
    right = np.empty((y.shape[0], block), dtype=np.float32)
    for start in range(0, x.shape[1], block):
        width = min(block, x.shape[1] - start)
        np.copyto(left[:, :width], x[:, start : start + width])
        np.copyto(right[:, :width], y[:, start : start + width])
        total += left[:, :width] @ right[:, :width].T
    return total


class _ReportedSupport:
    """Reports engine: the real per-user support of one segment's kept patterns."""

    def __init__(
        self, oracle: FrequencyOracle, reports: Any, kept: np.ndarray, user_groups: np.ndarray
    ) -> None:
        self.matrix = support_indicators(oracle, reports, kept)  # (users covering i, |C_i|)
        self.user_groups = user_groups

    def rows(self, group: int, rng: np.random.Generator) -> np.ndarray:
        """bool matrix (|C_i|, users of ``group`` in increasing user index)."""
        return np.ascontiguousarray(self.matrix[self.user_groups == group].T, dtype=bool)


# --------------------------------------------------------------------- reconstruction
def _cliques(
    allowed: dict[tuple[int, int], np.ndarray],
    scores: dict[tuple[int, int], np.ndarray],
    sizes: Sequence[int],
    cap: int = MAX_PARTIAL,
    block: int = JOIN_BLOCK,
) -> tuple[np.ndarray, np.ndarray]:
    """Index tuples (t_1, ..., t_g) whose every pair (t_i, t_j) is a frequent pair.

    The a-priori principle of [PEM] Sec. III-C.  Segments are joined one at a time; a
    tuple's score is its weakest pair (lowest estimated pair frequency).  If more than
    ``cap`` partial tuples survive a join, the best ``cap`` are kept (ties: the earlier
    tuple, in the order partial tuple x next pattern).

    A join is computed ``block`` (partial tuple, pattern) cells at a time, keeping at most
    the best ``cap`` survivors between blocks, so its memory is O(block + cap) instead of
    O(partial tuples x patterns) (up to 2^18 x 2^8 cells, gigabytes, for a threshold run
    at small ε); the result is the same as joining all cells at once.
    """
    g = len(sizes)
    tuples = np.arange(sizes[0], dtype=np.int64)[:, None]
    score = np.full(sizes[0], np.inf)
    for j in range(1, g):
        rows_per_block = max(1, block // max(sizes[j], 1))
        joined = np.zeros((0, j + 1), dtype=np.int64)
        joined_score = np.zeros(0)
        survivors = 0
        for start in range(0, len(tuples), rows_per_block):
            part = tuples[start : start + rows_per_block]
            ok = np.ones((len(part), sizes[j]), dtype=bool)
            weakest = np.broadcast_to(score[start : start + len(part), None], ok.shape).copy()
            for i in range(j):
                ok &= allowed[(i, j)][part[:, i]]
                np.minimum(weakest, scores[(i, j)][part[:, i]], out=weakest)
            rows, cols = np.nonzero(ok)
            survivors += len(rows)
            joined = np.concatenate([joined, np.column_stack([part[rows], cols])])
            joined_score = np.concatenate([joined_score, weakest[rows, cols]])
            if len(joined) > cap:  # the best cap so far, kept in join order
                best = np.sort(top(joined_score, cap))
                joined, joined_score = joined[best], joined_score[best]
        tuples, score = joined, joined_score
        if survivors > cap:
            best = top(score, cap)
            tuples, score = tuples[best], score[best]
    return tuples, score


def _every_clique_count(sizes: Sequence[int], cap: int = MAX_PARTIAL) -> int:
    """``len(_cliques(...)[0])`` when every pattern pair is allowed: each join keeps all
    (partial tuple, pattern) cells, at most ``cap`` of them."""
    count = int(sizes[0])
    for size in sizes[1:]:
        count = min(count * int(size), cap)
    return count


def _frequent_pairs_top_k(
    frequencies: dict[tuple[int, int], np.ndarray], sizes: Sequence[int], k: int
) -> dict[tuple[int, int], np.ndarray]:
    """[PEM] Sec. VI-A step 3: add segment pairs until more than k candidates appear.

    All pattern pairs of all segment pairs are ranked by estimated frequency ñ_a^b / n_ij
    (the pair groups have different sizes, so frequencies, not counts, are compared);
    the shortest prefix of that ranking whose a-priori candidates exceed k is kept
    (found by bisection: the candidate count only grows as pairs are added).  If even
    all pairs give at most k candidates, all are kept.
    """
    keys = list(frequencies)
    flat = np.concatenate([frequencies[key].ravel() for key in keys])
    owner = np.concatenate([np.full(frequencies[key].size, n) for n, key in enumerate(keys)])
    offset = np.concatenate([np.arange(frequencies[key].size) for key in keys])
    ranking = top(flat, len(flat))

    def allowed_for(length: int) -> dict[tuple[int, int], np.ndarray]:
        masks = {key: np.zeros(frequencies[key].size, dtype=bool) for key in keys}
        chosen = ranking[:length]
        for n, key in enumerate(keys):
            masks[key][offset[chosen[owner[chosen] == n]]] = True
        return {key: masks[key].reshape(frequencies[key].shape) for key in keys}

    def count(length: int) -> int:
        if length == len(flat):  # every pair allowed: no join needs computing
            return _every_clique_count(sizes)
        return len(_cliques(allowed_for(length), frequencies, sizes)[0])

    low, high = 0, len(flat)
    if count(high) <= k:
        return allowed_for(high)
    while high - low > 1:  # invariant: count(low) <= k < count(high)
        middle = (low + high) // 2
        if count(middle) > k:
            high = middle
        else:
            low = middle
    return allowed_for(high)


# -------------------------------------------------------------------------------- SPM
@register(color="#ece133", order=110)
@dataclass(frozen=True, kw_only=True)
class SPM(BaselineParameters):
    """The Segment Pairs Method of Fanti et al. ([PEM] Sec. III-C), original or improved.

    Parameters
    ----------
    variant : {"improved", "original", "partitioned"}
        Sets every knob left at None at once
        (:func:`~ldp.heavy_hitters.baseline.variant_presets`); each stays overridable:

        * ``"original"``: ``oracle=SUE`` (basic one-time RAPPOR, SPM's primitive, step 1),
          ``segment_bits=16`` (two bytes, as Fanti et al. for URLs, step 2; ⌈m/2⌉ when
          m <= 16), ``budget="split"`` (ε/3 each for π(v), π(v[α]), π(v[β]), Sec. III-C),
          ``output="threshold"`` (segments, pairs and values kept when they pass the
          threshold test, step 3).
        * ``"improved"`` (Sec. VI-A, Figs. 5, 6, 7, 9): ``oracle=OLH`` (step 1),
          ``segment_bits="auto"`` (as long as the query limit allows, step 2 and
          Observation 1), ``output="top_k"`` (k patterns per segment, pairs added until
          more than k candidates, top k released, step 3), ``budget="split"`` (the final
          test "uses one third" of ε, Sec. VI-B6).
        * ``"partitioned"`` (Sec. VI-B4, Fig. 8a): improved with ``budget="partition"``.
    oracle : type or str
        A pure frequency-oracle class whose support indicators are independent across
        values (SUE, OUE, THE, BLH, OLH): the joint estimation needs p* and q*.
    segment_bits : int or "auto"
        s, with g = ⌈m/s⌉ >= 2 segments.  ``"auto"``: the fewest segments whose run fits
        ``query_limit`` (:func:`~ldp.heavy_hitters.baseline.choose_segment_bits`).
    budget : {"split", "partition"}
        ``"split"``: each user reports π(v) with ``value_share`` x ε (1/3) and each of its
        two segments with half of the rest.  ``"partition"``: ``final_fraction`` of the
        users report only π(v) at ε; every other user reports its two segments, each at
        ε/2.  The pair stays two separate reports because the segment step needs each
        segment on its own (2^s queries, not 2^{2s}) and the appendix's joint estimation
        is written for two independent reports; Sec. VI-B4 changes only who runs the
        final test ("we allocate 10% of users for the final testing").
    output : {"top_k", "threshold"}
        See ``variant``.  The threshold test of every stage is
        :func:`~ldp.heavy_hitters.baseline.stage_bar`.  [PEM] only says that patterns and
        pairs are kept when "estimated above a threshold" (Sec. VI-A step 3); the
        significance test (no θ given) is our reading of RAPPOR-style decoding, which
        keeps estimates significantly above zero -- an assumption, not checked against
        Fanti et al.'s text.  For pairs the zero-count standard deviation is
        √n_ij q(1-q)/(p-q)^2, since ñ_a^b = Σ_u (X_u-q)(Y_u-q)/(p-q)^2.
    query_limit : int
        Oracle queries of one run (2^20): Σ_i 2^{s_i} for the segments, |C_i||C_j| pairs
        plus |C_i| + |C_j| group-local segment estimates per pair group, and the final
        candidates.  Threshold stages are capped to fit; the final candidates are cut to
        the best (by weakest pair) if they exceed what is left.

    The other parameters (ε, k, m, ``threshold``, ``significance``, ``final_fraction``,
    ``value_share`` = 1/3) are those of
    :class:`~ldp.heavy_hitters.baseline.BaselineParameters`.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        # exact when its frequency oracle's simulate_candidates is (the default OLH's is)
        closed_form_variance=False,
    )

    segment_bits: int | str | None = None
    value_share: float = 1 / 3

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = variant_presets(
        original={"oracle": SUE, "segment_bits": paper_segment_bits, "output": "threshold"},
        improved={"segment_bits": "auto"},
    )

    def __post_init__(self) -> None:
        _, m, _ = self._check_parameters()
        if m < 2:
            raise ParameterError("m", m, ">= 2 for SPM", "two segments at least")
        oracle = self.oracle
        if not independent_support(oracle):
            raise TypeError(
                "oracle must be a pure oracle with independent per-value support (SUE, OUE, "
                f"THE, BLH, OLH) for SPM's joint estimation, got {oracle.__name__}"
            )
        s = resolve_segment_bits(self, 2, min(m - 1, 64))
        eps = self.epsilon_per_part
        build_oracle(oracle, eps["value"], 2**m, "whole-value")
        build_oracle(oracle, eps["segment"], 2**s, "segment")

    # --- shape ---------------------------------------------------------------------
    def queries(self, bounds: Sequence[tuple[int, int]]) -> int:
        """Queries of a run with |C_i| = k: segments, pair groups, at least k final values."""
        pairs = math.comb(len(bounds), 2)
        return sum(2**length for _, length in bounds) + pairs * (self.k**2 + 2 * self.k) + self.k

    @property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """The segments as (start, length) pairs."""
        return segment_bounds(self.m, self.segment_bits)

    @property
    def epsilon_per_part(self) -> dict[str, float]:
        """ε of a user's whole-value report and of each of its two segment reports."""
        value = self.value_epsilon()
        rest = self.epsilon if self.partitioned else self.epsilon - value
        return {"value": value, "segment": rest / 2}

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The segment pairs (α, β), α < β; pair group n is group n (+1 under partition)."""
        return list(combinations(range(len(self.bounds)), 2))

    def covering(self, alpha: int) -> list[int]:
        """The groups whose users report segment α (the pair groups containing α)."""
        offset = int(self.partitioned)
        return [n + offset for n, pair in enumerate(self.pairs) if alpha in pair]

    def report_groups(self) -> tuple[ReportGroup, ...]:
        """Pair group (α, β) sends π(v[α]) and π(v[β]) through the segment oracle, and π(v)
        under ``budget="split"``; under ``"partition"`` group 0 sends only π(v) at ε.

        The weights are :meth:`group_fractions`; the oracles are those of :meth:`perturb`.
        """
        m, eps = self.m, self.epsilon_per_part
        segments = [
            UserReport(
                self.oracle(epsilon=eps["segment"], domain_size=2**length),
                functools.partial(segment, m=m, start=start, length=length),
            )
            for start, length in self.bounds
        ]
        return self.groups_sending([(segments[a], segments[b]) for a, b in self.pairs])

    # --- client ----------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> ClientReports:
        """What each user sends: a random pair (α, β) with π(v[α]), π(v[β]), and/or π(v).

        ``values`` are m-bit values in the data set's representation.  ``parts[α]`` holds
        the reports of segment α by every user whose pair contains α, in user order.
        """
        rng = check_generator(rng)
        words = bits.to_words(values, self.m)
        pairs = self.pairs
        groups = assign_groups(len(words), self.group_fractions(len(pairs)), rng)
        parts = []
        for alpha, (start, length) in enumerate(self.bounds):
            oracle = self.oracle(epsilon=self.epsilon_per_part["segment"], domain_size=2**length)
            users = np.flatnonzero(np.isin(groups, self.covering(alpha)))
            parts.append(oracle.perturb(segment(words[users], self.m, start, length), rng))
        value = self.value_reports(words, groups, len(pairs), rng)
        senders = tuple(tuple(self.covering(alpha)) for alpha in range(len(self.bounds)))
        return ClientReports(
            groups,
            tuple(parts),
            value,
            senders=senders,
            value_senders=tuple(self.value_groups(len(pairs))),
        )

    # --- the protocol ----------------------------------------------------------------
    def run(
        self, dataset: Any, rng: np.random.Generator, engine: str = "sampled"
    ) -> HeavyHitterResult:
        """Identify the heavy hitters of ``dataset`` (see :class:`SPM`).

        ``engine="reports"`` aggregates :meth:`perturb`'s reports of the data set's users;
        ``"sampled"`` draws every step from its exact law given the histogram (module
        docstring).
        """
        engine, rng = check_engine(engine), check_generator(rng)
        check_dataset(dataset, self.m)
        bounds, g = self.bounds, len(self.bounds)
        pairs = self.pairs
        group_of = {pair: n + int(self.partitioned) for n, pair in enumerate(pairs)}
        covering = [self.covering(alpha) for alpha in range(g)]
        eps = self.epsilon_per_part
        oracles = [
            self.oracle(epsilon=eps["segment"], domain_size=2**length) for _, length in bounds
        ]
        if engine == "reports":
            self.check_reports_engine(dataset.n, oracles)
            population = Population.reported(
                self.perturb(dataset.values, rng), len(pairs) + int(self.partitioned)
            )
        else:
            fractions = self.group_fractions(len(pairs))
            population = Population.sampled(dataset, self.m, fractions, rng)
        p, q = oracles[0].p_star, oracles[0].q_star
        threshold = self.output == "threshold"
        sampled = population.engine == "sampled"

        # Step 1: every pattern of every segment, from the users covering it.
        kept, step_queries, segment_state = [], [], []
        reserve = self.query_limit - sum(2**length for _, length in bounds) - self.k
        cap = max(1, math.isqrt(max(reserve, 0) // len(pairs) + 1) - 1)  # c^2 + 2c <= share
        for alpha, (start, length) in enumerate(bounds):
            oracle, n_alpha = oracles[alpha], population.n_users(covering[alpha])
            if sampled:
                keys = segment(population.words, self.m, start, length)
                weights = population.weights(covering[alpha])
                holders = np.rint(
                    np.bincount(keys.astype(np.int64), weights=weights, minlength=2**length)
                ).astype(np.int64)
                from_holders = rng.binomial(holders, p)
                from_others = rng.binomial(n_alpha - holders, q)
                estimates = (from_holders + from_others - n_alpha * q) / (p - q)
                state = (keys, from_holders, from_others)
            else:
                reports = population.reports.parts[alpha]
                estimates = oracle.estimate(reports, np.arange(2**length, dtype=np.uint64))
                state = (np.isin(population.groups, covering[alpha]), reports)
            step_queries.append(2**length)
            if threshold:
                order = top(estimates, len(estimates))
                bar = stage_bar(oracle, n_alpha, self.threshold, self.significance, 2**length)
                order = order[estimates[order] >= bar][:cap]
            else:
                order = top(estimates, self.k)
            kept.append(order.astype(np.uint64))
            segment_state.append(state)

        # Step 2: joint estimation in each pair group ([PEM] Appendix).
        support_of: list[_SampledSupport | _ReportedSupport] = []
        for alpha in range(g):
            if sampled:
                keys, from_holders, from_others = segment_state[alpha]
                chosen = kept[alpha].astype(np.int64)
                support_of.append(
                    _SampledSupport(
                        population,
                        keys,
                        kept[alpha],
                        from_holders[chosen],
                        from_others[chosen],
                        covering[alpha],
                        rng,
                    )
                )
            else:
                covers, reports = segment_state[alpha]
                support_of.append(
                    _ReportedSupport(
                        oracles[alpha], reports, kept[alpha], population.groups[covers]
                    )
                )
        frequencies, estimates_ab, pair_queries = {}, {}, 0
        for i, j in pairs:
            group = group_of[(i, j)]
            x = support_of[i].rows(group, rng)  # (|C_i|, n_ij)
            y = support_of[j].rows(group, rng)  # (|C_j|, n_ij), the same users in order
            n_ij = x.shape[1]
            support = co_support(x, y)  # I_a^b = Σ_u X_u(a) Y_u(b)
            n_a = (np.count_nonzero(x, axis=1) - n_ij * q) / (p - q)
            n_b = (np.count_nonzero(y, axis=1) - n_ij * q) / (p - q)
            estimates_ab[(i, j)] = pair_estimate(support, n_a[:, None], n_b[None, :], n_ij, p, q)
            frequencies[(i, j)] = estimates_ab[(i, j)] / max(n_ij, 1)
            pair_queries += x.shape[0] * y.shape[0] + x.shape[0] + y.shape[0]
        step_queries.append(pair_queries)
        sizes = [len(c) for c in kept]
        if not all(sizes):
            allowed = {pair: np.zeros(frequencies[pair].shape, bool) for pair in pairs}
        elif threshold:
            sigma = q * (1 - q) / (p - q) ** 2
            tests = sum(frequencies[pair].size for pair in pairs)
            allowed = {}
            for pair in pairs:
                n_ij = int(population.sizes[group_of[pair]])
                bar = stage_bar(
                    oracles[0],
                    n_ij,
                    self.threshold,
                    self.significance,
                    tests,
                    sigma=sigma * math.sqrt(n_ij),
                )
                allowed[pair] = estimates_ab[pair] >= bar
        else:
            allowed = _frequent_pairs_top_k(frequencies, sizes, self.k)

        # Step 3: a-priori candidates, then the whole-value test.
        budget_left = max(self.query_limit - sum(step_queries), 0)
        if all(sizes):
            tuples, score = _cliques(allowed, frequencies, sizes)
            if len(tuples) > budget_left:
                tuples = tuples[top(score, budget_left)]
        else:
            tuples = np.zeros((0, g), dtype=np.int64)
        patterns = [kept[alpha][tuples[:, alpha]] for alpha in range(g)]
        candidates = join_segments(patterns, bounds, self.m)
        step_queries.append(len(candidates))
        diagnostics = {
            "group_roles": (["value"] if self.partitioned else [])
            + [f"segments {i}+{j}" for i, j in pairs],
            "segments": [length for _, length in bounds],
            "candidates_per_step": step_queries,
            "kept_per_step": sizes + [int(sum(a.sum() for a in allowed.values()))],
            "segment_patterns": kept,
            "pair_estimates": estimates_ab,
            "candidates": to_dataset_values(candidates, self.m),
            "oracle_queries": int(sum(step_queries)),
        }
        return self.final_test(population, len(pairs), candidates, rng, diagnostics)
