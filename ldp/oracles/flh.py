"""Fast local hashing (FLH): OLH over a fixed pool of k' hash functions, Cormode et al. Sec. 4.

Citations ``[CMM]`` are to G. Cormode, S. Maddock, C. Maple, *Frequency Estimation under
Local Differential Privacy*, PVLDB 14(11), 2021, Sec. 4.2 ("Fast Local Hashing").

OLH ([FO] Sec. 4.4) lets every user draw a fresh hash function, so the aggregator
evaluates n hash functions on every candidate: O(n |C|).  FLH draws, once per
collection, a public pool of k' hash functions (seeds of :mod:`ldp.hashing`); each user
picks one of them uniformly (index j), hashes its value into [0, g) and applies
randomised response over the g cells: keep h_j(v) with probability p = e^ε/(e^ε+g-1),
else one of the g-1 other cells uniformly.  The report is (j, y), ⌈log2 k'⌉ + ⌈log2 g⌉
bits.  The aggregator counts a k' x g table T[j, y] and reads I_v = Σ_j T[j, h_j(v)]:
O(n + k' |C|).

Privacy is OLH's: given j, which does not depend on v, Pr[y | v] / Pr[y | v'] <= p(g-1)/(1-p)
= e^ε for every hash function.

Estimation and variance.  ĉ(v) = (I_v - n/g)/(p* - 1/g), OLH's estimator, is unbiased over
the draw of the pool (an ideal hash family: h_j(u) uniform and independent over u and j),
not given the pool: every user of a value u that collides with v under h_j shares that
collision.  Given the counts n_u, with q = 1/g, s² = q(1-q), b = p* - (1-p*)/(g-1):

    Var[I_v] = n_v p*(1-p*) + (n - n_v)(s² - b² s²/k') + (b² s²/k') Σ_{u≠v} n_u²

(a user of u supports v with probability r_u = (1-p*)/(g-1) + b c_u, c_u the fraction of
the pool under which u and v collide, mean 1/g and variance s²/k'; users are independent
given the pool).  When the others hold distinct values (Σ n_u² = n - n_v) this is OLH's
variance; concentrated data pay the last term, which vanishes as k' grows.
:meth:`FLH.variances` gives this exact value, :meth:`FLH.variance` its
distinct-values case (what a single count can say), :meth:`FLH.conditional_moments` the
exact mean and variance given one pool.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ldp import budget, hashing, theory
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import PureOracle, check_variance_input
from ldp.oracles.direct import keep_threshold
from ldp.oracles.local_hashing import _LocalHashing
from ldp.registry import register
from ldp.streaming import CHUNK_USERS, GAMMA, repeat_in_chunks, split_evenly, splitmix64
from ldp.validation import (
    ParameterError,
    check_counts,
    check_generator,
    check_int,
    check_total,
    check_values,
)

#: Bytes per cell of the k' x g table at its peak: the sampled engine holds three int64 or
#: float64 arrays of that shape (weighted counts, their int64 copy, the uniform cells).
TABLE_CELL_BYTES = 24


class PoolReports(NamedTuple):
    """FLH reports: each user's pool index and perturbed cell, and the public pool."""

    index: np.ndarray  #: int64 in [0, k'), one per user: which pool function it used
    values: np.ndarray  #: int64 in [0, g), one per user
    pool: np.ndarray  #: uint64 seeds of the k' pool functions (public, one per collection)

    @property
    def seeds(self) -> np.ndarray:
        """The seed of each user's hash function (the auditor's hashed events read this)."""
        return self.pool[self.index]


#: A value is spread over the pool by a multinomial (k' binomials and hashes) once it keeps
#: more than HEAVY k' users; below, its users are drawn one by one (a binomial and a hash
#: cost about ten users' draws).
HEAVY = 8
_LOW32 = np.uint64(0xFFFFFFFF)


def pool_indices(words: np.ndarray, k: int) -> np.ndarray:
    """A uniform index in [0, k) from each splitmix64 word, exactly (Lemire's rejection).

    j = ⌊r k / 2^32⌋ with r the word's high 32 bits, unless the low 32 bits of r k fall
    below 2^32 mod k: then the word is mixed again (splitmix64(word + GAMMA)) and retried.
    """
    words = np.array(words, dtype=np.uint64, copy=True)
    out = np.empty(words.shape[0], dtype=np.int64)
    todo = np.arange(words.shape[0])
    k64, threshold = np.uint64(k), np.uint64((1 << 32) % k)
    while todo.size:
        product = (words[todo] >> np.uint64(32)) * k64
        accept = (product & _LOW32) >= threshold
        out[todo[accept]] = (product[accept] >> np.uint64(32)).astype(np.int64)
        todo = todo[~accept]
        with np.errstate(over="ignore"):
            words[todo] = splitmix64(words[todo] + GAMMA)
    return out


def _place_light_numpy(table, digests, counts, a, b, g, seed) -> None:
    """Reference path of :func:`place_light`: the same draws, a chunk of users at a time."""
    k = a.shape[0]
    offset = 0
    for which in repeat_in_chunks(np.arange(counts.shape[0]), counts):
        u = np.arange(offset + 1, offset + 1 + which.shape[0], dtype=np.uint64)
        offset += which.shape[0]
        with np.errstate(over="ignore"):
            j = pool_indices(splitmix64(seed + u * GAMMA), k)
            cells = hashing._cell(hashing._top32(a[j], b[j], digests[which]), np.uint64(g))
        table += np.bincount(j * g + cells.astype(np.int64), minlength=table.shape[0])


#: Users below which the compiled loop runs on one thread.
PARALLEL_USERS = 1 << 20

if hashing.HAVE_NUMBA:

    @hashing.numba.njit(parallel=True, cache=True, nogil=True)
    def _place_light_kernel(table, digests, counts, a, b, g, seed, parts):  # pragma: no cover
        gamma = np.uint64(0x9E3779B97F4A7C15)
        mix1, mix2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
        low32, s32 = np.uint64(0xFFFFFFFF), np.uint64(32)
        k = np.uint64(a.shape[0])
        threshold = (np.uint64(1) << s32) % k
        g64 = np.uint64(g)
        starts = np.zeros(counts.shape[0] + 1, dtype=np.int64)  # users before value i
        for i in range(counts.shape[0]):
            starts[i + 1] = starts[i] + counts[i]
        pieces = parts.shape[0] - 1
        private = np.zeros((pieces, table.shape[0]), dtype=np.int64)
        for piece in hashing.numba.prange(pieces):
            mine = private[piece]
            for i in range(parts[piece], parts[piece + 1]):
                digest = digests[i]
                u = np.uint64(starts[i])
                for _ in range(counts[i]):
                    u += np.uint64(1)
                    z = seed + u * gamma
                    while True:
                        z = (z ^ (z >> np.uint64(30))) * mix1
                        z = (z ^ (z >> np.uint64(27))) * mix2
                        z = z ^ (z >> np.uint64(31))
                        product = (z >> s32) * k
                        if (product & low32) >= threshold:
                            break
                        z = z + gamma
                    j = product >> s32
                    h = (a[j] * digest + b[j]) >> s32
                    mine[np.int64(j) * g + np.int64((h * g64) >> s32)] += 1
        for piece in range(pieces):
            table += private[piece]


def place_light(table, digests, counts, a, b, g, seed, use_numba: bool = True) -> None:
    """Add users of values with digests ``digests`` (``counts`` each) to the flat k' x g table.

    The u-th user (from 1, across the list) takes the pool function
    j = :func:`pool_indices` (splitmix64(seed + u GAMMA)) and lands on (j, h_j(value)),
    h_j the multiply-add-shift function (a_j, b_j) of :mod:`ldp.hashing`.  With numba the
    users are drawn in a compiled loop, the values split among its threads (each with its
    own table, then summed); the numbers are the same without it.
    """
    if use_numba and hashing.HAVE_NUMBA:
        total = int(np.sum(counts))
        pieces = hashing.numba.get_num_threads() if total >= PARALLEL_USERS else 1
        parts = split_evenly(counts, pieces)
        _place_light_kernel(table, digests, counts, a, b, g, seed, parts)
    else:
        _place_light_numpy(table, digests, counts, a, b, g, seed)


@register(label="FLH", color="#a6761d", order=75)
@dataclass(frozen=True, kw_only=True)
class FLH(PureOracle):
    """Fast local hashing ([CMM] Sec. 4.2): OLH with a public pool of ``k_prime`` functions.

    ``g`` is the hash range, ⌈e^ε + 1⌉ unless given (as OLH); ``k_prime`` the pool size k'.
    """

    name = "FLH"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="hashed", public_randomness=("index", "pool"), public_per_call=True
    )
    k_prime: int = 1000
    g: int | None = None
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "k_prime", check_int(self.k_prime, "k_prime", minimum=1))
        default = self.g is None
        g = theory.olh_default_g(self.epsilon) if default else self.g
        if default and g > hashing.MAX_RANGE:
            raise ParameterError(
                "epsilon",
                self.epsilon,
                f"<= {math.log(hashing.MAX_RANGE - 1):.4g} with the default g",
                f"the default g = ceil(e^epsilon + 1) = {g} exceeds the hash family's range "
                "2^31; pass a smaller g",
            )
        object.__setattr__(self, "g", check_int(g, "g", minimum=2, maximum=hashing.MAX_RANGE))
        self._check_table(default)
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, self.g))

    def _check_table(self, default_g: bool) -> None:
        """Refuse a k' x g table over the memory budget, blaming the parameter that makes it.

        With the default g = ⌈e^ε + 1⌉ that is ε (the largest that fits is ln(g_max - 1)),
        else the larger of g and k'.
        """
        k, g = self.k_prime, self.g
        size = TABLE_CELL_BYTES * k * g
        cells = budget.current().memory_bytes // TABLE_CELL_BYTES
        what = f"the k' x g = {k} x {g} table of FLH"
        if size > TABLE_CELL_BYTES * cells and default_g and cells // k >= 3:
            largest = math.log(cells // k - 1)
            allowed = f"<= {largest:.4g} for FLH with k_prime = {k} (default g = ceil(e^eps + 1))"
            budget.check_memory("epsilon", self.epsilon, allowed, size, what)
        if size > TABLE_CELL_BYTES * cells and g >= k and cells // k >= 2:
            budget.check_memory("g", g, f"<= {cells // k} with k_prime = {k}", size, what)
        budget.check_memory("k_prime", k, f"<= {max(cells // g, 0)} with g = {g}", size, what)

    # --- the mechanism --------------------------------------------------------------------
    @property
    def p_star(self) -> float:
        """The realised keep probability, <= e^ε/(e^ε+g-1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """1/g, over the draw of the pool (not given it)."""
        return 1.0 / self.g

    def report_bits(self) -> int:
        """⌈log2 k'⌉ + ⌈log2 g⌉ bits per report."""
        return max(1, math.ceil(math.log2(self.k_prime))) + math.ceil(math.log2(self.g))

    def draw_pool(self, rng: np.random.Generator) -> np.ndarray:
        """k' independent uniform 64-bit seeds: the public pool of one collection."""
        rng = check_generator(rng)
        return rng.integers(0, 2**64 - 1, size=self.k_prime, dtype=np.uint64, endpoint=True)

    # A report's likelihood given its pool function's seed, and the auditor's events on it,
    # are OLH's with that seed (the pool only chooses which seed): the same methods.
    report_probabilities = _LocalHashing.report_probabilities
    audit_events = _LocalHashing.audit_events
    audit_features = _LocalHashing.audit_features
    audit_event_probabilities = _LocalHashing.audit_event_probabilities
    # The adversary of a report: OLH's, over the draw of the pool (an ideal hash family).
    adversary_success = _LocalHashing.adversary_success
    log_likelihoods = _LocalHashing.log_likelihoods

    def working_bytes(self, n_users: int) -> int:
        """The reports and their temporaries (48 bytes a user; 41 measured) and the pool
        a call draws (16 bytes a seed)."""
        return 3 * self.report_bytes(n_users) + 16 * self.k_prime

    def perturb(
        self, values: np.ndarray, rng: np.random.Generator, pool: np.ndarray | None = None
    ) -> PoolReports:
        """A uniform pool index per user, its hash of the value, randomised response on [0, g).

        ``pool`` (k' uint64 seeds) is the collection's public pool; a fresh one is drawn
        when it is not given (:meth:`draw_pool`).
        """
        values = check_values(values, self.domain_size)
        rng = check_generator(rng)
        pool = self.draw_pool(rng) if pool is None else self._check_pool(pool)
        n = values.shape[0]
        self.check_report_size(n)
        index = rng.integers(0, self.k_prime, size=n)
        hashed = hashing.hash_values(values, pool[index], self.g)
        keep = exact.bernoulli(rng, self._keep, n)
        shift = rng.integers(1, self.g, size=n)
        return PoolReports(index, np.where(keep, hashed, (hashed + shift) % self.g), pool)

    # --- fake users ([CJG21]; the pool is public, so a fake user hashes under it) ---------
    def uniform_reports(
        self, n: int, rng: np.random.Generator, pool: np.ndarray | None = None
    ) -> PoolReports:
        """n reports of a uniform pool index and a uniform cell of [0, g), under ``pool``
        (the collection's; a fresh one when not given)."""
        rng = check_generator(rng)
        self.check_report_size(n)
        pool = self.draw_pool(rng) if pool is None else self._check_pool(pool)
        index = rng.integers(0, self.k_prime, size=n)
        return PoolReports(index, rng.integers(0, self.g, size=n, dtype=np.int64), pool)

    def uniform_support(self) -> float:
        """1/g: a uniform cell is the given value's under its pool function."""
        return 1.0 / self.g

    def craft_reports(
        self,
        targets: np.ndarray,
        n: int,
        rng: np.random.Generator,
        pool: np.ndarray | None = None,
    ) -> PoolReports:
        """The maximal gain attack: every fake user reports the (pool function, cell) that
        the most targets hash to, over the whole pool (k' x r hashes)."""
        rng = check_generator(rng)
        self.check_report_size(n)
        pool = self.draw_pool(rng) if pool is None else self._check_pool(pool)
        targets = np.asarray(targets, dtype=np.int64)
        r = targets.shape[0]
        hashed = hashing.hash_values(np.repeat(targets, self.k_prime), np.tile(pool, r), self.g)
        hashed = hashed.reshape(r, self.k_prime)
        together = (hashed[:, None, :] == hashed[None, :, :]).sum(axis=1)  # (r, k')
        best = int(together.max(axis=0).argmax())
        cell = int(hashed[int(together[:, best].argmax()), best])
        return PoolReports(np.full(n, best), np.full(n, cell, dtype=np.int64), pool)

    def crafted_support(self, targets: np.ndarray) -> None:
        """None: how many targets the best pool function gathers depends on the pool (the
        gain rests on the measured support)."""
        return None

    # --- the aggregator -------------------------------------------------------------------
    def _check_pool(self, pool: np.ndarray) -> np.ndarray:
        pool = np.asarray(pool)
        if pool.dtype != np.uint64 or pool.shape != (self.k_prime,):
            raise ValueError(
                f"pool must be {self.k_prime} uint64 seeds, got {pool.shape} {pool.dtype}"
            )
        return pool

    def _check_reports(self, reports: PoolReports) -> PoolReports:
        if not isinstance(reports, PoolReports):
            raise TypeError(
                f"reports must be PoolReports(index, values, pool), got {type(reports).__name__}"
            )
        pool = self._check_pool(reports.pool)
        index = check_values(reports.index, self.k_prime, name="report index")
        values = check_values(reports.values, self.g, name="report values")
        if index.ndim != 1 or index.shape != values.shape:
            raise ValueError("reports must hold one index and one value per user")
        return PoolReports(index.astype(np.int64), values.astype(np.int64), pool)

    def n_reports(self, reports: PoolReports) -> int:
        return int(self._check_reports(reports).index.shape[0])

    def table(self, reports: PoolReports) -> np.ndarray:
        """T[j, y]: how many users of pool function j reported cell y (k' x g, int64)."""
        index, values, _ = self._check_reports(reports)
        flat = np.bincount(index * self.g + values, minlength=self.k_prime * self.g)
        return flat.reshape(self.k_prime, self.g).astype(np.int64, copy=False)

    def lookup(self, table: np.ndarray, pool: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """I_v = Σ_j T[j, h_j(v)] for each candidate: k' |C| hash evaluations
        (:func:`ldp.hashing.table_lookup`, a numba kernel parallel over the candidates),
        refused beyond the operations budget."""
        size, k = candidates.shape[0], self.k_prime
        budget.check_operations(
            "candidates",
            f"{size} candidates",
            f"<= {budget.current().operations // k} candidates with k_prime = {k}",
            float(k) * size,
            f"FLH's lookup of {size} candidates in {k} pool functions",
        )
        return hashing.table_lookup(table, pool, candidates)

    def support_counts(self, reports: PoolReports, candidates: np.ndarray) -> np.ndarray:
        return self.lookup(self.table(reports), reports.pool, candidates)

    # --- the sampled engine ---------------------------------------------------------------
    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The exact law of ``estimate(perturb(users))``: a fresh pool, then its k' x g table.

        The users of one value share their collisions under the pool, so the law depends
        on how the population's values repeat (Σ n_u² in the variance, the module
        docstring), not only on the candidates' counts: the whole population is drawn
        (:meth:`simulate_table`), with its real values, so the hashing is the reports
        engine's too.  Cost O(Σ_v min(kept_v, 8 k') + k' g + k' |C|).
        """
        pool = self.draw_pool(rng)
        held = counts > 0
        table = self.simulate_table(values[held], counts[held], pool, rng)
        support = self.lookup(table, pool, chosen)
        return theory.pure_estimate(support, int(counts.sum()), self.p_star, self.q_star)

    def simulate_table(
        self, held: np.ndarray, counts: np.ndarray, pool: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The k' x g table of ``counts[i]`` users of value ``held[i]``, drawn exactly.

        ``held`` are distinct values (1-D, or word rows for domains beyond 2^64).
        Randomised response over g cells is "keep h_j(v) with probability p* - q', else a
        uniform cell" (q' = (1-p*)/(g-1), so 1 - g q' = p* - q').  So value v keeps
        Bin(n_v, p* - q') users, each at a uniform pool function j and the cell h_j(v)
        (one by one, or a multinomial over the pool when they outnumber k'); the others,
        of all values together, are uniform over the k' g cells: one multinomial.  The
        kept (value, function) pairs are drawn a chunk at a time (:mod:`ldp.streaming`), so
        memory stays bounded at any n.  Cost Σ_v min(kept_v, k') hashes + k' g.
        """
        k, g = self.k_prime, self.g
        gap = self.p_star - (1.0 - self.p_star) / (g - 1)
        kept = rng.binomial(counts, gap)
        table = np.zeros(k * g, dtype=np.int64)
        light = (kept > 0) & (kept <= HEAVY * k)
        if light.any():
            a, b = hashing.user_functions(pool)
            seed = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
            place_light(table, hashing.digest(held[light]), kept[light], a, b, g, seed)
        heavy = np.flatnonzero(kept > HEAVY * k)  # a multinomial over the pool, k pairs each
        step = max(1, CHUNK_USERS // k)
        every = np.arange(k)
        for start in range(0, heavy.size, step):
            rows = heavy[start : start + step]
            spread = rng.multinomial(kept[rows], np.full(k, 1.0 / k)).reshape(-1)
            cells = hashing.hash_values(
                np.repeat(held[rows], k, axis=0), np.tile(pool, rows.size), g
            )
            j = np.tile(every, rows.size)
            table += np.bincount(j * g + cells, weights=spread, minlength=k * g).astype(np.int64)
        spread = int(counts.sum() - kept.sum())
        table += rng.multinomial(spread, np.full(k * g, 1.0 / (k * g)))
        return table.reshape(k, g)

    # --- analysis ---------------------------------------------------------------------------
    def _collision_terms(self) -> tuple[float, float]:
        """(p*(1-p*) - s², b² s²/k') of the variance (module docstring)."""
        q = 1.0 / self.g
        s2 = q * (1 - q)
        b = self.p_star - (1.0 - self.p_star) / (self.g - 1)
        return s2, b * b * s2 / self.k_prime

    def variances(
        self, true_counts: np.ndarray, candidates: np.ndarray | None = None
    ) -> np.ndarray:
        """The exact Var[ĉ(v)] of every candidate over the pool and the users, for the whole
        histogram ``true_counts`` (the collision term needs Σ_{u≠v} n_u², which
        :meth:`variance` takes as n - n_v)."""
        counts = check_counts(true_counts, self.domain_size)
        n = check_total(counts)
        chosen = self.candidates(candidates)
        s2, shared = self._collision_terms()
        own = counts[chosen].astype(float)
        squares = float(np.sum(counts.astype(float) ** 2)) - own**2
        p = self.p_star
        support = own * p * (1 - p) + (n - own) * (s2 - shared) + shared * squares
        return support / (p - 1.0 / self.g) ** 2

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """Var[ĉ(v)] when the other users hold distinct values: OLH's variance exactly.

        The collision term (b² s²/k') Σ_{u≠v} n_u² needs the other counts: see
        :meth:`variances`; with distinct values Σ n_u² = n - n_v cancels the
        -(n - n_v) b² s²/k' term.
        """
        n_users, true_count = check_variance_input(n_users, true_count)
        return float(theory.pure_variance(n_users, self.p_star, self.q_star, true_count))

    def conditional_moments(
        self, pool: np.ndarray, counts: np.ndarray, candidates: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The exact mean and variance of each candidate's estimate given the pool.

        A user of u supports v with probability r_u = p* if u = v, else
        (1-p*)/(g-1) + b c_uv with c_uv the fraction of the pool under which u and v
        collide; users are independent.  Cost O(k' (#values held + |C|)).
        """
        pool = self._check_pool(pool)
        counts = check_counts(counts, self.domain_size, name="counts")
        chosen = check_values(candidates, self.domain_size, name="candidates")
        held = np.flatnonzero(counts)
        cells = float(chosen.shape[0]) * held.shape[0] * self.k_prime
        budget.check_memory(
            "candidates",
            f"{chosen.shape[0]} candidates",
            f"fewer candidates with {held.shape[0]} values held and k_prime = {self.k_prime}",
            9 * cells,  # a boolean per (candidate, value, function), then 8-byte means
            "the |C| x held x k' collision array",
        )
        p, g = self.p_star, self.g
        b = p - (1.0 - p) / (g - 1)
        h_held, h_chosen = hashing.hash_matrix(held, pool, g), hashing.hash_matrix(chosen, pool, g)
        n = int(counts.sum())
        collide = (h_chosen[:, None, :] == h_held[None, :, :]).mean(axis=2)  # |C| x held
        r = (1.0 - p) / (g - 1) + b * collide
        r[chosen[:, None] == held[None, :]] = p
        mean_support = r @ counts[held]
        var_support = (r * (1 - r)) @ counts[held]
        scale = p - 1.0 / g
        return (mean_support - n / g) / scale, var_support / scale**2
