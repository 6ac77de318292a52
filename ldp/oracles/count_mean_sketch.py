"""Apple's count-mean sketches: CMS and its one-bit Hadamard variant HCMS.

Citations ``[Apple]`` are to the Differential Privacy Team, Apple, *Learning with Privacy at
Scale* (Apple Machine Learning Journal, vol. 1 no. 8, December 2017, and its full version),
Sec. "Algorithms"; ``[Notes]`` to the lecture notes on distributed DP, Sec. 5.1-5.2.

The server draws k hash functions h_1..h_k: [d] -> [m] once per collection (here from the
Generator given to ``perturb``: each report carries the 64-bit seed naming its row's hash
of :mod:`ldp.hashing`).  Each user picks a row j uniformly from [k].

CMS ([Apple] "Private Count Mean Sketch", client and sketch algorithms).  The client
encodes -1 everywhere and +1 at h_j(v) in {-1, +1}^m and flips every coordinate
independently with probability 1/(1 + e^{ε/2}); it sends the m signs (as bits, 1 = +1)
with j.  Two values differ in at most two coordinates, each a ratio e^{ε/2}: ε-LDP.
The server debiases each report, x = k((c_ε/2) ṽ + 1/2), c_ε = (e^{ε/2}+1)/(e^{ε/2}-1),
adds it to row j of a k x m sketch M, and estimates

    f(d) = m/(m-1) · ( (1/k) Σ_l M[l, h_l(d)] - n/m )                  ([Apple], [Notes] 5.1)

where m/(m-1)(· - n/m) removes the expected n/m users of other values in the cell.

HCMS ([Apple] "Private Hadamard Count Mean Sketch").  The client also picks a coefficient
l uniformly from [m] (m a power of 2) and sends the one bit w_l = H_m[l, h_j(v)] in {-1, +1}
of the Hadamard transform of the one-hot vector, flipped with probability 1/(1 + e^ε), with
(j, l): ratio e^ε.  The server adds k c_ε w̃ (c_ε = (e^ε+1)/(e^ε-1)) to M_H[j, l],
transforms each row back, M = M_H H_m^T (one fast Walsh-Hadamard transform per row), and
estimates as CMS does.

Both are pure protocols in the sense of [FO] once the hash family is random: a report
supports d when its +1 (its kept sign) sits at d's cell, so the estimate above is exactly
(I_d - n q*)/(p* - q*) with

    CMS:   p* = p,   q* = q + (p - q)/m,           p = 1 - q, q = 1/(1 + e^{ε/2})
    HCMS:  p* = p,   q* = 1/2 + (p - 1/2)/m,       p = e^ε/(1 + e^ε)

(a user of another value lands in d's cell of its row with probability 1/m; otherwise its
HCMS sign is ±1 with probability 1/2 each because distinct Hadamard columns agree on
exactly half the rows).  Unlike OLH, the k hash functions are shared by all users, so users
of one value collide together: the exact variance over the users' coins *and* the hash
family (fully random hash functions) is

    Var[f(d)] = [n_d p*(1-p*) + (n - n_d) q*(1-q*)]/(p* - q*)^2 + Σ_{u≠d} n_u(n_u - 1)/(k(m-1)),

the pure protocol's variance plus a collision term (:meth:`variance`, ``collisions``).
For m -> ∞, n_d << n and no collisions the first term tends to n(c_ε² - 1)/4 = n e^{ε/2}/
(e^{ε/2} - 1)² for CMS and to n c_ε² for HCMS (c_ε of each client): the large-sketch
approximations; the exact form above is what the tests check.

Coins are drawn on the 53-bit grid of :mod:`ldp.oracles.exact` (flip probabilities rounded
up), and p*, q* are the realised ones, so the declared likelihood is what is emitted.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from ldp import budget, hashing
from ldp.algebra import walsh_hadamard
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import PureOracle, check_variance_input
from ldp.registry import register
from ldp.validation import (
    ParameterError,
    check_counts,
    check_generator,
    check_int,
    check_values,
)

#: Random draws per chunk of users in the CMS client and aggregator (bounds memory).
CHUNK = 1 << 22
#: The largest sketch width: cells are 32-bit hash values reduced to [m).
MAX_WIDTH = 1 << 20
#: The largest number of rows k (hash functions).
MAX_ROWS = 1 << 20
#: Bytes per cell of the k x m sketch at its peak (counts, the debiased sketch, a block).
SKETCH_CELL_BYTES = 24
#: Bytes per (row, candidate) pair of the k x |C| cell table (keys, rows, hashes, reads).
#: Peak bytes a user of HCMS's sampled engine holds (owner, row, cell, coefficient, sign,
#: seed: 66 B measured at n = 5e7, rounded up).
SAMPLED_USER_BYTES = 72
TABLE_PAIR_BYTES = 40


class CMSReports(NamedTuple):
    """CMS reports: each user's row j, the seed of h_j (public: it names j's function),
    and the m signs."""

    rows: np.ndarray  #: int64 in [0, k), one per user
    seeds: np.ndarray  #: uint64, one per user: the seed of the hash function of its row
    bits: np.ndarray  #: uint8, shape (n, ⌈m/8⌉): packed signs, bit c of user i = 1 iff +1


class HCMSReports(NamedTuple):
    """HCMS reports: each user's row, the seed of its hash function, coefficient, sign."""

    rows: np.ndarray  #: int64 in [0, k)
    seeds: np.ndarray  #: uint64, one per user: the seed of the hash function of its row
    coefficients: np.ndarray  #: int64 in [0, m): the Hadamard row l
    bits: np.ndarray  #: uint8 in {0, 1}: 1 iff the reported sign is +1


def draw_family(k: int, rng: np.random.Generator) -> np.ndarray:
    """The server's k hash functions for one collection: k independent 64-bit seeds."""
    return rng.integers(0, 2**64 - 1, size=k, dtype=np.uint64, endpoint=True)


def cells(values: np.ndarray, seeds: np.ndarray, rows: np.ndarray, m: int) -> np.ndarray:
    """h_{rows[i]}(values[i]) in [0, m) for paired values and rows (int64)."""
    return hashing.hash_values(values, seeds[rows], m)


def cell_table(candidates: np.ndarray, seeds: np.ndarray, m: int) -> np.ndarray:
    """h_l(d) for every row l (axis 0) and candidate d (axis 1), shape (k, |C|).

    Refused (naming ``candidates``) when its k|C| pairs exceed the memory budget.
    """
    k, size = seeds.shape[0], candidates.shape[0]
    budget.check_memory(
        "candidates",
        f"{size} candidates",
        f"<= {budget.current().memory_bytes // (TABLE_PAIR_BYTES * k)} candidates with k = {k}",
        TABLE_PAIR_BYTES * k * size,
        f"the k x |C| = {k} x {size} cell table",
    )
    keys = np.tile(candidates, (k, 1) if candidates.ndim == 2 else k)
    rows = np.repeat(np.arange(k), size)
    return cells(keys, seeds, rows, m).reshape(k, size)


def _check_seeds(seeds) -> np.ndarray:
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or seeds.size == 0 or seeds.dtype.kind not in "iu":
        raise ValueError(f"seeds must be a non-empty 1-D integer array, got {seeds.shape}")
    return seeds.astype(np.uint64)


def _sign_at(reports, value, m: int) -> np.ndarray:
    """Whether each CMS report's sign at h_j(value) (its row's cell) is +1."""
    cell = hashing.hash_of(value, reports.seeds, m)
    byte, shift = np.divmod(cell, 8)
    bits = np.asarray(reports.bits)
    return ((bits[np.arange(bits.shape[0]), byte] >> (7 - shift).astype(np.uint8)) & 1) == 1


def _agrees(reports, value, m: int) -> np.ndarray:
    """s H[l, h_j(value)] of each HCMS report (±1): +1 when its sign supports the value."""
    cell = hashing.hash_of(value, reports.seeds, m)
    signed = 2 * np.asarray(reports.bits).astype(np.int64) - 1
    return signed * hadamard_sign(np.asarray(reports.coefficients), cell)


def _value_cells(seeds: np.ndarray, domain_size: int, m: int) -> np.ndarray:
    """h_{seed_i}(v) for each report's row seed (rows) and every value v (columns), int64."""
    n = seeds.shape[0]
    budget.check_memory(
        "reports",
        f"{n} reports",
        "fewer reports at a time",
        24.0 * n * domain_size,
        "a hash per report and value",
    )
    keys = np.tile(np.arange(domain_size, dtype=np.uint64), n)
    return hashing.hash_values(keys, np.repeat(seeds, domain_size), m).reshape(n, domain_size)


def hadamard_sign(rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """H_m[l, c] = (-1)^popcount(l & c) (Sylvester), elementwise, as ±1 int64."""
    parity = np.bitwise_count(np.bitwise_and(rows, columns).astype(np.uint64)) & 1
    return 1 - 2 * parity.astype(np.int64)


@dataclass(frozen=True, kw_only=True)
class _CountMeanSketch(PureOracle):
    """What CMS and HCMS share: the hash family, the estimator and the variance.

    Parameters
    ----------
    k : int
        The number of hash functions (rows of the sketch).
    m : int
        The sketch width (cells per row); a power of 2 for HCMS.
    """

    k: int = 256
    m: int = 1024

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "k", check_int(self.k, "k", minimum=1, maximum=MAX_ROWS))
        object.__setattr__(self, "m", check_int(self.m, "m", minimum=2, maximum=MAX_WIDTH))
        self._check_sketch()
        smallest = min(self._flip_probability(), 1 - self._flip_probability())
        exact.check_representable(
            self.name, self.epsilon, smallest, largest_safe=self._largest_safe_epsilon()
        )

    def _check_sketch(self) -> None:
        """Refuse a k x m sketch over the memory budget, blaming the larger of k and m."""
        cells = budget.current().memory_bytes // SKETCH_CELL_BYTES
        size, what = SKETCH_CELL_BYTES * self.k * self.m, f"the k x m = {self.k} x {self.m} sketch"
        if self.m >= self.k:
            budget.check_memory("m", self.m, f"<= {cells // self.k} with k = {self.k}", size, what)
        budget.check_memory("k", self.k, f"<= {cells // self.m} with m = {self.m}", size, what)

    # --- what the two differ in ----------------------------------------------------------
    @abstractmethod
    def _flip_probability(self) -> float:
        """The paper's flip probability of a sign."""

    @abstractmethod
    def _largest_safe_epsilon(self) -> float:
        """The largest ε whose flip probability is representable on the 53-bit grid."""

    @property
    @abstractmethod
    def base(self) -> float:
        """β: the probability that a report of row l supports a cell its value is not in."""

    @property
    def gap(self) -> float:
        """γ = p - β: how much more a report supports its own cell."""
        return self.p - self.base

    @property
    def flip_threshold(self) -> int:
        """T with flip probability T/2^53 >= the paper's (rounded in the private direction)."""
        flip = self._flip_probability()
        return exact.threshold(flip, 1 - flip, round_down=False)

    @property
    def p(self) -> float:
        """The realised probability that a sign is kept: 1 - T/2^53."""
        return 1.0 - exact.realised(self.flip_threshold)

    @property
    def p_star(self) -> float:
        return self.p

    # --- aggregator ------------------------------------------------------------------------
    @abstractmethod
    def row_support(self, reports) -> tuple[np.ndarray, np.ndarray]:
        """The users per row R_l and the per-cell support counts, shape (k, m).

        CMS: the number of +1 signs in each cell of each row.  HCMS: the reports of row l
        whose sign times the Hadamard entry of the cell is +1 (via one transform per row).
        """

    def sketch(self, reports) -> np.ndarray:
        """The debiased k x m sketch M of [Apple]: k (support - R_l β)/γ.

        CMS: k((c_ε/2) ṽ + 1/2) summed per row, c_ε = 1/γ, as a count of +1 signs.
        HCMS: k c_ε Σ w̃ per (row, coefficient), transformed by H_m^T per row.
        """
        rows, support = self.row_support(reports)
        return self.k * (support - rows[:, None] * self.base) / self.gap

    def estimate(self, reports, candidates: np.ndarray | None = None) -> np.ndarray:
        """f(d) = m/(m-1) ((1/k) Σ_l M[l, h_l(d)] - n/m) for each candidate ([Apple])."""
        chosen = self.candidates(candidates)
        seeds = self.family(reports)
        sketch = self.sketch(reports)
        table = cell_table(chosen, seeds, self.m)
        mean = sketch[np.arange(self.k)[:, None], table].mean(axis=0)
        n = self.n_reports(reports)
        return self.m / (self.m - 1) * (mean - n / self.m)  # the collision correction

    def support_counts(self, reports, candidates: np.ndarray) -> np.ndarray:
        """I_d: the reports whose kept sign supports d (summed over rows, [FO] "Method").

        For HCMS the "support" is fractional per row (a Hadamard transform of signs), so
        this returns a float array; the estimate equals (I_d - n q*)/(p* - q*) exactly.
        """
        seeds = self.family(reports)
        _, support = self.row_support(reports)
        table = cell_table(candidates, seeds, self.m)
        return support[np.arange(self.k)[:, None], table].sum(axis=0)

    # --- analysis --------------------------------------------------------------------------
    def variance(self, n_users: int, true_count: float = 0, collisions: float = 0.0) -> float:
        """Exact Var[f(d)] over the users' coins and a fully random hash family.

        Parameters
        ----------
        n_users, true_count :
            n and n_d.
        collisions : float, default 0
            Σ_{u≠d} n_u (n_u - 1): the ordered pairs of users who share a value other than
            d (0 when every other user holds a value of their own; see
            :func:`collision_pairs`).  It adds collisions / (k (m - 1)).
        """
        n_users, true_count = check_variance_input(n_users, true_count)
        if not collisions >= 0:
            raise ValueError(f"collisions must be >= 0, got {collisions}")
        return super().variance(n_users, true_count) + collisions / (self.k * (self.m - 1))

    def variances(self, true_counts: np.ndarray, candidates: np.ndarray | None = None):
        """Exact Var[f(d)] of every candidate given the whole histogram (with collisions)."""
        counts = check_counts(true_counts, self.domain_size)
        chosen = self.candidates(candidates)
        n = int(counts.sum())
        pairs = collision_pairs(counts, chosen)
        return np.array(
            [self.variance(n, int(counts[d]), float(c)) for d, c in zip(chosen, pairs, strict=True)]
        )

    # --- sampled engine --------------------------------------------------------------------
    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """Estimates drawn from their exact law given the whole population (see subclass).

        The k hash functions are shared by all users, so the users of one value collide
        together: the law depends on how every value repeats (the collision term
        Σ_{u≠d} n_u(n_u - 1) of :meth:`variance`, and beyond), not only on the
        candidates' counts.  Every held value is drawn, through the real hash family.
        """
        held = counts > 0
        return self._simulate(values[held], counts[held], chosen, rng)

    @abstractmethod
    def _simulate(self, values, counts, chosen, rng) -> np.ndarray:
        """Estimates of ``chosen`` for users holding ``values`` (``counts`` each)."""

    # --- helpers ---------------------------------------------------------------------------
    def family(self, reports) -> np.ndarray:
        """The k row seeds named by the reports (0 for a row nobody reported in).

        Raises if two reports of one row name different hash functions.
        """
        checked = self._check_reports(reports)
        family = np.zeros(self.k, dtype=np.uint64)
        family[checked.rows] = checked.seeds
        if not np.array_equal(family[checked.rows], checked.seeds):
            raise ValueError("reports of one row must name one hash function (seed)")
        return family

    def _check_seeds(self, seeds: np.ndarray, n: int) -> np.ndarray:
        seeds = np.asarray(seeds)
        if seeds.dtype != np.uint64 or seeds.shape != (n,):
            raise ValueError(
                f"report seeds must be one uint64 per user, shape ({n},), "
                f"got {seeds.shape} {seeds.dtype}"
            )
        return seeds

    def _family_or_draw(self, family, rng: np.random.Generator) -> np.ndarray:
        if family is None:
            return draw_family(self.k, rng)
        return self._check_family(family)

    def _check_family(self, seeds: np.ndarray) -> np.ndarray:
        seeds = np.asarray(seeds)
        if seeds.dtype != np.uint64 or seeds.shape != (self.k,):
            raise ValueError(
                f"family must be {self.k} uint64 seeds (one per row), "
                f"got {seeds.shape} {seeds.dtype}"
            )
        return seeds

    def _check_rows(self, rows: np.ndarray, name: str, limit: int) -> np.ndarray:
        rows = np.asarray(rows)
        if rows.dtype.kind not in "iu" or rows.ndim != 1:
            raise TypeError(f"report {name} must be a 1-D integer array, got {rows.dtype}")
        if rows.size and (rows.min() < 0 or rows.max() >= limit):
            raise ValueError(f"report {name} must lie in [0, {limit})")
        return rows.astype(np.int64, copy=False)

    def _user_rows(self, values, counts, rng):
        """(value index, row, users) triples, drawn exactly.

        Each user's row is uniform over [k], independently: per value a multinomial over
        rows (when that is cheaper than one draw per user), else one draw per user.
        """
        n_keyed = int(counts.sum())
        if values.shape[0] * self.k <= n_keyed:
            split = rng.multinomial(counts, np.full(self.k, 1.0 / self.k))
            index, rows = np.nonzero(split)
            users = split[index, rows]
        else:
            owner = np.repeat(np.arange(values.shape[0]), counts)
            drawn = rng.integers(0, self.k, size=n_keyed)
            pairs, users = np.unique(owner * self.k + drawn, return_counts=True)
            index, rows = pairs // self.k, pairs % self.k
        return index, rows, users.astype(np.int64)


def _count_ones_kernel(rows, packed, ones):  # pragma: no cover - compiled by numba
    m = ones.shape[1]
    for i in range(packed.shape[0]):
        row = rows[i]
        for j in range(packed.shape[1]):
            byte = packed[i, j]
            if byte:
                for t in range(8):
                    if (byte >> (7 - t)) & 1 and 8 * j + t < m:
                        ones[row, 8 * j + t] += 1


_count_ones_numba = (
    hashing.numba.njit(cache=True, nogil=True)(_count_ones_kernel) if hashing.HAVE_NUMBA else None
)


def count_ones(
    rows: np.ndarray, packed: np.ndarray, k: int, m: int, *, use_numba: bool = True
) -> np.ndarray:
    """ones[l, c]: the reports of row l whose bit c is set (packed bits, big-endian)."""
    ones = np.zeros((k, m), dtype=np.int64)
    if _count_ones_numba is not None and use_numba:
        _count_ones_numba(rows, np.ascontiguousarray(packed), ones)
        return ones
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    step = max(1, CHUNK // m)
    for start in range(0, order.shape[0], step):
        # cells x users, so that each segment sum runs over contiguous memory
        unpacked = np.unpackbits(packed[order[start : start + step]], axis=1, count=m)
        unpacked = np.ascontiguousarray(unpacked.T)
        chunk_rows = sorted_rows[start : start + step]
        firsts = np.flatnonzero(np.r_[True, chunk_rows[1:] != chunk_rows[:-1]])
        ones[chunk_rows[firsts]] += np.add.reduceat(unpacked, firsts, axis=1, dtype=np.int32).T
    return ones


def _distinct(keys: np.ndarray, size: int) -> np.ndarray:
    """The sorted distinct keys in [0, size): a mask when size is small, else a sort."""
    if size <= max(1 << 24, 8 * keys.shape[0]):
        mask = np.zeros(size, dtype=bool)
        mask[keys] = True
        return np.flatnonzero(mask)
    ordered = np.sort(keys)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]]


def collision_pairs(true_counts: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Σ_{u≠d} n_u(n_u - 1) for each candidate d: the collision term's numerator."""
    counts = np.asarray(true_counts, dtype=float)
    total = float(np.sum(counts * (counts - 1)))
    own = counts[candidates]
    return total - own * (own - 1)


@register(label="CMS", color="#8c564b", order=94)
@dataclass(frozen=True, kw_only=True)
class CMS(_CountMeanSketch):
    """Apple's private count-mean sketch: m signs per user, each flipped w.p. 1/(1+e^{ε/2}).

    p* = 1 - q, q* = q + (1 - 2q)/m with q the realised flip probability ([Apple] CMS).
    """

    name = "CMS"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits", public_randomness=("rows", "seeds"), public_per_call=True
    )

    def _flip_probability(self) -> float:
        return 1.0 / (1.0 + math.exp(self.epsilon / 2))

    def _largest_safe_epsilon(self) -> float:
        return 2 * exact.LOG_GRID

    @property
    def base(self) -> float:
        return 1.0 - self.p  # a -1 coordinate reads +1 when flipped

    @property
    def q_star(self) -> float:
        return self.base + self.gap / self.m

    def report_probabilities(self, value, seeds: np.ndarray) -> np.ndarray:
        """Pr[sign c = +1 | value, row seed s] for each given seed s and cell c: (|s|, m).

        The row is uniform and independent of the value, and given it the signs are
        independent: each row is a product ("bits") distribution for privacy checks.
        Any seeds may be given (a family of k, or more, each naming one hash function).
        """
        value = self.check_value(value)
        seeds = _check_seeds(seeds)
        keys = np.repeat(np.asarray([value]), seeds.shape[0], axis=0)
        hashed = cells(keys, seeds, np.arange(seeds.shape[0]), self.m)
        probabilities = np.full((seeds.shape[0], self.m), 1.0 - self.p)
        probabilities[np.arange(seeds.shape[0]), hashed] = self.p
        return probabilities

    def log_likelihoods(self, reports) -> np.ndarray:
        """ln Pr[signs_i | v, row seed_i] for each report (rows) and value (columns), up to a
        constant per report: ±ln(p/(1-p)) as the sign at h_j(v) is +1 or -1 (every other
        cell reads +1 with 1-p whatever v is); for :mod:`ldp.adversary`."""
        _, seeds, bits = self._check_reports(reports)
        signs = np.unpackbits(bits, axis=1, count=self.m).astype(bool)
        at = _value_cells(seeds, self.domain_size, self.m)
        plus = np.take_along_axis(signs, at, axis=1)
        ratio = math.log(self.p) - math.log1p(-self.p)
        return np.where(plus, ratio, -ratio)

    def audit_events(self, v, v_prime) -> list:
        """Sign +1 at h_j(v) and -1 at h_j(v') of the report's row j, and mirrored.

        Given v: (1 - 1/m) p^2 (both signs kept); given v': (1 - 1/m)(1 - p)^2; ratio
        (p/(1-p))^2 = e^ε.
        """
        from ldp.audit.events import Event

        def only(a, b):
            return lambda r: _sign_at(r, a, self.m) & ~_sign_at(r, b, self.m)

        return [
            Event("sign +1 at h(v), -1 at h(v')", only(v, v_prime), +1),
            Event("sign +1 at h(v'), -1 at h(v)", only(v_prime, v), -1),
        ]

    def audit_features(self, v, v_prime) -> list:
        """The row's cells h_j(v), h_j(v') and the report's signs there, for the search."""
        from ldp.audit.events import Feature

        return [
            Feature("h(v)", lambda r: hashing.hash_of(v, r.seeds, self.m)),
            Feature("h(v')", lambda r: hashing.hash_of(v_prime, r.seeds, self.m)),
            Feature("sign at h(v)", lambda r: _sign_at(r, v, self.m)),
            Feature("sign at h(v')", lambda r: _sign_at(r, v_prime, self.m)),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """(1 - 1/m) p^2 and (1 - 1/m)(1 - p)^2 (ideal hash): see :meth:`audit_events`."""
        apart = 1 - 1 / self.m
        return apart * self.p**2, apart * (1 - self.p) ** 2

    def perturb(
        self, values: np.ndarray, rng: np.random.Generator, family: np.ndarray | None = None
    ) -> CMSReports:
        """Per user a row, the one-hot signs and the flips ([Apple]).

        ``family``: the server's k hash seeds (public, fixed in a deployment); drawn from
        ``rng`` when None (a fresh family per collection, as the estimator assumes).
        """
        values = check_values(values, self.domain_size)
        rng = check_generator(rng)
        seeds = self._family_or_draw(family, rng)
        n, m = values.shape[0], self.m
        self.check_report_size(n)
        rows = rng.integers(0, self.k, size=n)
        own = cells(values, seeds, rows, m)
        flip = self.flip_threshold
        out = np.empty((n, -(-m // 8)), dtype=np.uint8)
        step = max(1, min(n, CHUNK // m))
        for start in range(0, n, step):
            part = slice(start, start + step)
            size = own[part].shape[0]
            flipped = exact.bernoulli(rng, flip, (size, m))
            signs = flipped  # a -1 coordinate reads +1 exactly when flipped
            signs[np.arange(size), own[part]] = ~flipped[np.arange(size), own[part]]
            out[part] = np.packbits(signs, axis=1)
        return CMSReports(rows, seeds[rows], out)

    def report_bytes(self, n_users: int) -> int:
        """n (8 + 8 + ⌈m/8⌉) bytes: a row, a seed and the packed signs per user."""
        return n_users * (16 + -(-self.m // 8))

    def working_bytes(self, n_users: int) -> int:
        """The reports and a chunk's flip draws and signs (~13 bytes a cell measured; 16
        counted), plus the rows and cells of every user (16 bytes each)."""
        rows = min(n_users, max(1, CHUNK // self.m))
        return self.report_bytes(n_users) + 16 * rows * self.m + 16 * n_users

    def _check_reports(self, reports) -> CMSReports:
        if not isinstance(reports, tuple) or len(reports) != 3:
            raise TypeError(
                f"reports must be CMSReports(rows, seeds, bits), got {type(reports).__name__}"
            )
        rows = self._check_rows(reports[0], "rows", self.k)
        seeds = self._check_seeds(reports[1], rows.shape[0])
        bits = np.asarray(reports[2])
        width = -(-self.m // 8)
        if bits.dtype != np.uint8 or bits.shape != (rows.shape[0], width):
            raise ValueError(
                f"report bits must be packed, shape ({rows.shape[0]}, {width}) uint8, "
                f"got {bits.shape} {bits.dtype}"
            )
        return CMSReports(rows, seeds, bits)

    def n_reports(self, reports) -> int:
        return int(self._check_reports(reports).rows.shape[0])

    def row_support(self, reports) -> tuple[np.ndarray, np.ndarray]:
        """R_l and the count of +1 signs in every cell, summed over the users of each row.

        One pass over the n x m packed bits: a compiled loop with numba, else (or with
        ``LDP_NO_NUMBA=1``) users sorted by row and summed per row in chunks with
        ``np.add.reduceat``; both give the same counts.
        """
        rows, _, bits = self._check_reports(reports)
        return np.bincount(rows, minlength=self.k), count_ones(rows, bits, self.k, self.m)

    def _simulate(self, values, counts, chosen, rng) -> np.ndarray:
        """The exact law of the cells the estimate reads, without any report.

        Given the family and each user's row, the number of +1 signs in cell (l, c) is
        Bin(N[l,c], p) + Bin(R_l - N[l,c], q), N[l,c] the users of row l whose value hashes
        to c, independently over cells (every coordinate flips independently).  Only the
        ≤ k|C| cells (l, h_l(d)) of the candidates are drawn: O(k|C| + min(n, k·values)).
        """
        seeds = draw_family(self.k, rng)
        index, rows, users = self._user_rows(values, counts, rng)
        table = cell_table(chosen, seeds, self.m)  # (k, |C|)
        wanted = _distinct((np.arange(self.k)[:, None] * self.m + table).ravel(), self.k * self.m)
        per_row = np.bincount(rows, weights=users, minlength=self.k).astype(np.int64)
        keyed = rows * self.m + cells(values[index], seeds, rows, self.m)
        order = np.argsort(keyed)
        keyed, users = keyed[order], users[order]
        low = np.searchsorted(keyed, wanted, side="left")
        high = np.searchsorted(keyed, wanted, side="right")
        cumulative = np.r_[0, np.cumsum(users)]
        in_cell = cumulative[high] - cumulative[low]
        wanted_rows = wanted // self.m
        others = per_row[wanted_rows] - in_cell
        ones = rng.binomial(in_cell, self.p) + rng.binomial(others, self.base)
        support_cells = np.searchsorted(wanted, np.arange(self.k)[:, None] * self.m + table)
        support = ones[support_cells].sum(axis=0)
        n = int(counts.sum())
        return self.m / (self.m - 1) * ((support - n * self.base) / self.gap - n / self.m)


@register(label="HCMS", color="#17becf", order=96)
@dataclass(frozen=True, kw_only=True)
class HCMS(_CountMeanSketch):
    """Apple's Hadamard count-mean sketch: one Hadamard coefficient, flipped w.p. 1/(1+e^ε).

    p* = p, q* = 1/2 + (p - 1/2)/m with p the realised keep probability ([Apple] HCMS).
    m must be a power of 2.
    """

    name = "HCMS"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="hashed",
        public_randomness=("rows", "seeds", "coefficients"),
        public_per_call=True,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.m & (self.m - 1):
            raise ParameterError("m", self.m, "a power of 2 for HCMS (the Hadamard order)")

    def _flip_probability(self) -> float:
        return 1.0 / (1.0 + math.exp(self.epsilon))

    def _largest_safe_epsilon(self) -> float:
        return exact.LOG_GRID

    @property
    def base(self) -> float:
        return 0.5  # distinct Hadamard columns agree on half of the coefficients

    @property
    def q_star(self) -> float:
        return self.base + self.gap / self.m

    def report_probabilities(self, value, seeds: np.ndarray) -> np.ndarray:
        """Pr[(row l, coefficient c, sign s) | value] for all |seeds|·m·2 reports, (|s|, m, 2).

        Index s = 1 is the sign +1; the row is uniform over the given seeds (a family of k,
        or any seeds, each naming one hash function).  Every report is possible under
        every value: a "categorical" distribution over (seed, c, s) for privacy checks.
        """
        value = self.check_value(value)
        seeds = _check_seeds(seeds)
        keys = np.repeat(np.asarray([value]), seeds.shape[0], axis=0)
        hashed = cells(keys, seeds, np.arange(seeds.shape[0]), self.m)
        sign = hadamard_sign(np.arange(self.m)[None, :], hashed[:, None])  # (|s|, m)
        keep, frame = self.p, 1.0 / (seeds.shape[0] * self.m)
        plus = np.where(sign > 0, keep, 1 - keep) * frame
        return np.stack([frame - plus, plus], axis=-1)

    def log_likelihoods(self, reports) -> np.ndarray:
        """ln Pr[(l, s)_i | v, row seed_i] for each report (rows) and value (columns), up to
        a constant per report: ln p when s H[l, h_j(v)] = +1, else ln(1-p); for
        :mod:`ldp.adversary`."""
        _, seeds, coefficients, bits = self._check_reports(reports)
        at = _value_cells(seeds, self.domain_size, self.m)
        signed = (2 * bits.astype(np.int64) - 1)[:, None]
        agree = signed * hadamard_sign(coefficients[:, None], at) > 0
        return np.where(agree, math.log(self.p), math.log1p(-self.p))

    def audit_events(self, v, v_prime) -> list:
        """s H[l, h_j(v)] = +1 and s H[l, h_j(v')] = -1, and mirrored.

        Given v: (1 - 1/m) p / 2 (the two columns differ at half of the rows l); given v':
        (1 - 1/m)(1 - p)/2; ratio p/(1-p) = e^ε.
        """
        from ldp.audit.events import Event

        def only(a, b):
            return lambda r: (_agrees(r, a, self.m) == 1) & (_agrees(r, b, self.m) == -1)

        return [
            Event("s H[l, h(v)] = 1, s H[l, h(v')] = -1", only(v, v_prime), +1),
            Event("s H[l, h(v')] = 1, s H[l, h(v)] = -1", only(v_prime, v), -1),
        ]

    def audit_features(self, v, v_prime) -> list:
        """h_j(v), h_j(v') and s H[l, h_j(·)] of each report, for the search."""
        from ldp.audit.events import Feature

        return [
            Feature("h(v)", lambda r: hashing.hash_of(v, r.seeds, self.m)),
            Feature("h(v')", lambda r: hashing.hash_of(v_prime, r.seeds, self.m)),
            Feature("s H[l, h(v)]", lambda r: _agrees(r, v, self.m)),
            Feature("s H[l, h(v')]", lambda r: _agrees(r, v_prime, self.m)),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """(1 - 1/m) p/2 and (1 - 1/m)(1 - p)/2 (ideal hash): see :meth:`audit_events`."""
        half_apart = (1 - 1 / self.m) / 2
        return half_apart * self.p, half_apart * (1 - self.p)

    def _emit(self, rows, own, rng):
        """Each user's coefficient l and reported sign bit (1 = +1), given row and cell."""
        coefficients = rng.integers(0, self.m, size=rows.shape[0])
        plus = hadamard_sign(coefficients, own) > 0
        flipped = exact.bernoulli(rng, self.flip_threshold, rows.shape[0])
        return coefficients, (plus ^ flipped).astype(np.uint8)

    def perturb(
        self, values: np.ndarray, rng: np.random.Generator, family: np.ndarray | None = None
    ) -> HCMSReports:
        """Per user (row, coefficient, one flipped sign) ([Apple]); ``family`` as for CMS."""
        values = check_values(values, self.domain_size)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        seeds = self._family_or_draw(family, rng)
        rows = rng.integers(0, self.k, size=values.shape[0])
        coefficients, signs = self._emit(rows, cells(values, seeds, rows, self.m), rng)
        return HCMSReports(rows, seeds[rows], coefficients, signs)

    def report_bytes(self, n_users: int) -> int:
        """25 n bytes: a row, a seed, a coefficient (8 each) and a sign byte per user."""
        return 25 * n_users

    def _check_reports(self, reports) -> HCMSReports:
        if not isinstance(reports, tuple) or len(reports) != 4:
            raise TypeError(
                "reports must be HCMSReports(rows, seeds, coefficients, bits), "
                f"got {type(reports).__name__}"
            )
        rows = self._check_rows(reports[0], "rows", self.k)
        seeds = self._check_seeds(reports[1], rows.shape[0])
        coefficients = self._check_rows(reports[2], "coefficients", self.m)
        bits = np.asarray(reports[3])
        if bits.shape != rows.shape or coefficients.shape != rows.shape:
            raise ValueError("reports must hold one row, coefficient and bit per user")
        if bits.dtype.kind not in "biu" or (bits.size and bits.max() > 1):
            raise ValueError("report bits must be 0 or 1")
        return HCMSReports(rows, seeds, coefficients, bits)

    def n_reports(self, reports) -> int:
        return int(self._check_reports(reports).rows.shape[0])

    def row_support(self, reports) -> tuple[np.ndarray, np.ndarray]:
        """R_l and, per cell, Σ_users of row l of (1 + s·H[l_i, c])/2 ... in transform form.

        With S[l, ·] the signed sums of row l per coefficient, S H_m (one fast transform
        per row) is Σ_i s_i H[l_i, c]; a report supports c when s_i H[l_i, c] = +1, so the
        support count is (R_l + (S H_m)[c])/2 (not an integer in general: one report
        supports about half of the cells of its row).
        """
        rows, _, coefficients, bits = self._check_reports(reports)
        signed = 2 * bits.astype(np.int64) - 1
        flat = np.bincount(rows * self.m + coefficients, weights=signed, minlength=self.k * self.m)
        per_row = np.bincount(rows, minlength=self.k)
        return per_row, self._support_from_signed(per_row, flat.reshape(self.k, self.m))

    def _support_from_signed(self, per_row: np.ndarray, signed: np.ndarray) -> np.ndarray:
        """(R_l + S H_m)/2, transforming a block of rows at a time (bounded memory)."""
        out = np.empty((self.k, self.m))
        step = max(1, CHUNK // self.m)
        for start in range(0, self.k, step):
            block = slice(start, start + step)
            out[block] = (per_row[block, None] + walsh_hadamard(signed[block])) / 2
        return out

    def _simulate(self, values, counts, chosen, rng) -> np.ndarray:
        """The users' (row, coefficient, sign) draws, summed without building reports.

        One HCMS report is O(1) (three small integers), so drawing the per-user triples
        *is* the cheapest exact way to sample the k x m signed sums: their law given the
        histogram mixes, per (row, cell) group, a multinomial over the m coefficients,
        which costs more than the O(n) draws here, and so is refused over the memory
        budget (about :data:`SAMPLED_USER_BYTES` a user, naming ``true_counts``).
        """
        n = int(counts.sum())
        budget.check_memory(
            "true_counts",
            f"{n} users",
            f"at most {budget.current().memory_bytes // SAMPLED_USER_BYTES} users per simulate",
            SAMPLED_USER_BYTES * n,
            f"HCMS's sampled engine (each user's row, coefficient and sign, about "
            f"{SAMPLED_USER_BYTES} B a user)",
        )
        seeds = draw_family(self.k, rng)
        owners = np.repeat(np.arange(values.shape[0]), counts)
        rows = rng.integers(0, self.k, size=owners.shape[0])
        own = cells(values[owners], seeds, rows, self.m)
        coefficients, signs = self._emit(rows, own, rng)
        return self.estimate(HCMSReports(rows, seeds[rows], coefficients, signs), chosen)
