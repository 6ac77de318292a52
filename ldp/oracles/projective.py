"""Projective-geometry response (PGR) and its hybrid with blocks (HPGR).

``[PGR]`` is V. Feldman, J. Nelson, H. Nguyen, K. Talwar, *Private Frequency Estimation
via Projective Geometry*, ICML 2022 (arXiv:2203.00194).  The parameter rules (q, t, h)
are those of the authors' public C++ experiments.

Geometry.  q is a prime and F_q the integers mod q.  The points of the projective space
P^(t-1)(F_q) are the lines through 0 of F_q^t; each has one *canonical* vector, whose
first nonzero coordinate is 1.  There are P_t = (q^t - 1)/(q - 1) of them.  A canonical
vector with r coordinates after its leading 1 (their base-q value w, first coordinate
most significant) has index (q^r - 1)/(q - 1) + w in [P_t]: the points whose leading 1
sits in the last R coordinates are the first P_R indices.  Hyperplanes through 0 are
indexed by their normal vector the same way.  A point x lies on the hyperplane u when
<u, x> = 0 (mod q): each hyperplane holds c_set = P_(t-1) points, each point lies on
c_set hyperplanes, and two distinct points share c_int = P_(t-2) hyperplanes.

PGR.  t is the smallest integer >= 2 with P_t >= d, and value x is the point of index x.
The report is a hyperplane u: with probability κ uniform among the c_set hyperplanes
through x (S_x), else uniform among all K = P_t.  So Pr[u | x] = κ/c_set + (1-κ)/K on S_x
and (1-κ)/K off it, and the ratio is e^ε for κ = (e^ε - 1) c_set / ((e^ε - 1) c_set + K):
[PGR]'s probabilities e^ε p and p, p = 1/((e^ε - 1) c_set + K).  κ is drawn on the 53-bit
grid, rounded down (:mod:`ldp.oracles.exact`); κ* is the realised value.  Default q: the
smallest prime >= ⌈e^ε + 1⌉ (so c_set/K ~ 1/q ~ 1/(e^ε + 1), subset selection's optimal
fraction).

HPGR.  The domain is cut into h blocks of b = P_t values (t the smallest >= 2 with
h b >= d), value x = (x // b, x mod b), and the report is (block, hyperplane) in [h b].
With probability κ the user reports its own block and a uniform hyperplane through its
point, else a uniform report of all h b; κ as above with K = h b.  PGR is the case h = 1.
Defaults: q = 3, h = max(2, ⌈(e^ε + 1)/q⌉).

Estimator.  I(x) counts the reports in x's block on a hyperplane through x, N(x) the
reports in x's block.  A report of a user holding x, another value of x's block, or a
value of another block falls in I(x) with probability

    p1 = κ* + (1-κ*) c_set/K,   p2 = κ* c_int/c_set + (1-κ*) c_set/K,   p3 = (1-κ*) c_set/K

and in N(x) with r1 = κ* + (1-κ*)/h (the first two) or r3 = (1-κ*)/h.  So

    ĉ(x) = α I(x) + β N(x) + γ n,   α = 1/(p1 - p2),  β = -α c_int/c_set,  γ = -α p3 - β r3

is unbiased (α p1 + β r1 + γ = 1, the other two rows 0); α and β are the authors' code's
HPGR coefficients written with κ.  With h = 1, N(x) = n and
ĉ(x) = (I(x) - n p2)/(p1 - p2): [PGR]'s estimator, a pure protocol with p* = p1, q* = p2.

Exact variance (derived here).  A user's term Z = α 1[I] + β 1[N] + γ takes α+β+γ, β+γ or
γ, so Var[ĉ(x)] = n_x (E_1[Z²] - 1) + (m - n_x) E_2[Z²] + (n - m) E_3[Z²], m the users of
x's block and E_j[Z²] = (α+β+γ)² p_j + (β+γ)² (r_j - p_j) + γ² (1 - r_j) (r_2 = r_1).  With
h = 1 it is the pure-protocol variance n q*(1-q*)/(p*-q*)² + n_x (1-p*-q*)/(p*-q*).

Decoding.  I(x) for every point is the sum of the report histogram over the hyperplanes
through x, computed by the dynamic programme of :func:`incidence_sums` in O(K q t)
operations (the [PGR] server's cost O(k e^ε log k)), not the O(K²/q) of a direct count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ldp import budget
from ldp.algebra import is_prime
from ldp.contract import Capabilities
from ldp.hashing import HAVE_NUMBA, numba
from ldp.oracles import exact
from ldp.oracles.base import FrequencyOracle, check_variance_input
from ldp.oracles.hadamard import dense_counts
from ldp.registry import register
from ldp.streaming import GAMMA, repeat_in_chunks, splitmix64
from ldp.validation import ParameterError, check_counts, check_generator, check_int, check_values

#: The largest field order q accepted (F_q arithmetic in int64 stays exact far beyond).
MAX_Q = 1 << 20
#: The most (candidate, report) pairs counted directly, a few t-vectors each in memory.
DIRECT_PAIRS = 1 << 20
#: Up to this many points per block, their vectors are kept in a table.
POINT_TABLE = 1 << 16
#: Bytes per report cell the decoder may hold at once, with a margin: measured ~96 (peak
#: resident growth of a full-domain estimate at K = 3,465,904, q = 151, t = 4).
DECODE_BYTES = 128


# --- the field F_q --------------------------------------------------------------------------
def next_prime(n: int) -> int:
    """The smallest prime >= n."""
    n = max(n, 2)
    while not is_prime(n):
        n += 1
    return n


def prime_factors(n: int) -> list[int]:
    """The distinct prime factors of n >= 1."""
    out, f = [], 2
    while f * f <= n:
        if n % f == 0:
            out.append(f)
            while n % f == 0:
                n //= f
        f += 1
    return out + ([n] if n > 1 else [])


def primitive_root(q: int) -> int:
    """The smallest generator g of F_q^*: g^((q-1)/f) != 1 for every prime f | q - 1.

    The test is the definition of order q - 1, so no g of smaller order passes (for q = 3,
    g = 2; 1 is never returned for q > 2).
    """
    if not is_prime(q):
        raise ValueError(f"q must be prime, got {q}")
    if q == 2:
        return 1
    factors = prime_factors(q - 1)
    return next(g for g in range(2, q) if all(pow(g, (q - 1) // f, q) != 1 for f in factors))


def inverse_table(q: int) -> np.ndarray:
    """inv[a] = a^(-1) in F_q for a != 0 (inv[0] = 0), from the powers of a primitive root.

    g^i has inverse g^(q-1-i); the table is checked (a inv[a] = 1 for every a != 0), so a
    wrong root or a composite q cannot pass silently.
    """
    g = primitive_root(q)
    step = math.isqrt(q - 1) + 1  # g^(i step + j) = (g^step)^i g^j: O(√q) Python steps
    low = np.array([pow(g, j, q) for j in range(step)], dtype=np.int64)
    high = np.array([pow(g, i * step, q) for i in range(step)], dtype=np.int64)
    powers = (high[:, None] * low[None, :] % q).ravel()[: q - 1]
    inv = np.zeros(q, dtype=np.int64)
    inv[powers] = powers[(-np.arange(q - 1)) % (q - 1)]
    if np.any((np.arange(1, q) * inv[1:]) % q != 1):
        raise ArithmeticError(f"the inverse table of F_{q} is wrong")
    return inv


def points(q: int, t: int) -> int:
    """P_t = (q^t - 1)/(q - 1): the points (and the hyperplanes) of P^(t-1)(F_q)."""
    return (q**t - 1) // (q - 1)


#: Index tables of one geometry (functions of q and a dimension only) are kept per process
#: up to this many entries each: at small d they cost more to build than the estimate they
#: serve; a larger table is built per call, where the call's own work dwarfs it.
MEMO_ENTRIES = 1 << 16
#: Tables kept at most (the memo is emptied beyond): a process uses a few geometries.
MEMO_TABLES = 64
_MEMO: dict[tuple, Any] = {}


def _memo(key: tuple, entries: int, build: Callable[..., Any], *args: Any) -> Any:
    """``build(*args)``, kept under ``key`` (read-only arrays) when it has at most
    :data:`MEMO_ENTRIES` entries: the same integers, without rebuilding them each call."""
    if entries > MEMO_ENTRIES:
        return build(*args)
    found = _MEMO.get(key)
    if found is None:
        found = build(*args)
        for array in found if isinstance(found, tuple) else (found,):
            array.setflags(write=False)
        if len(_MEMO) >= MEMO_TABLES:
            _MEMO.clear()
        _MEMO[key] = found
    return found


# --- canonical vectors and their indices ----------------------------------------------------
def vectors_of(index: np.ndarray, q: int, t: int) -> np.ndarray:
    """The canonical vectors (shape (n, t), int64) of point indices in [P_t]."""
    index = np.asarray(index, dtype=np.int64)
    out = np.zeros(index.shape + (t,), dtype=np.int64)
    free = np.zeros(index.shape, dtype=np.int64)  # r: coordinates after the leading 1
    for r in range(1, t):
        free += index >= points(q, r)
    w = index - (q**free - 1) // (q - 1)
    for j in range(t - 1, -1, -1):  # coordinate j, from the last
        after = t - 1 - j  # coordinates after j
        digit = w % q
        w //= q
        out[..., j] = np.where(after < free, digit, np.where(after == free, 1, 0))
    return out


def index_of(vectors: np.ndarray, q: int, inv: np.ndarray) -> np.ndarray:
    """The point index of each nonzero vector (rows), after scaling it to canonical form."""
    v = np.asarray(vectors, dtype=np.int64) % q
    t = v.shape[-1]
    nonzero = v != 0
    lead = np.argmax(nonzero, axis=-1)
    scale = inv[np.take_along_axis(v, lead[..., None], axis=-1)]
    v = v * scale % q
    free = t - 1 - lead
    weights = q ** np.arange(t - 1, -1, -1, dtype=np.int64)
    w = (v * weights).sum(axis=-1) - q**free  # drop the leading 1's weight q^free
    return (q**free - 1) // (q - 1) + w


def base_q(vectors: np.ndarray, q: int) -> np.ndarray:
    """The base-q integer of each vector (first coordinate most significant)."""
    t = vectors.shape[-1]
    return (np.asarray(vectors, dtype=np.int64) * q ** np.arange(t - 1, -1, -1)).sum(axis=-1)


def random_orthogonal(points_: np.ndarray, q: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform nonzero vector u with <u, x> = 0 for each canonical x (rows), int64.

    The coordinates other than x's leading one are uniform and the leading one solves the
    equation (x's leading coordinate is 1): uniform over the q^(t-1) solutions; the zero
    solution is drawn again.
    """
    n, t = points_.shape
    lead = np.argmax(points_ != 0, axis=1)
    out = np.empty((n, t), dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        u = rng.integers(0, q, size=(todo.size, t), dtype=np.int64)
        x = points_[todo]
        rows = np.arange(todo.size)
        u[rows, lead[todo]] = 0
        u[rows, lead[todo]] = (-(u * x).sum(axis=1)) % q
        out[todo] = u
        todo = todo[~u.any(axis=1)]
    return out


def _attempt_digits(z: np.ndarray, q: int, free: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One attempt's words for each user's state z: ``free`` digits in [0, q) (shape
    (n, free)), whether they are unbiased, and the state of the next attempt.

    Words w_0 = splitmix64(z), w_(m+1) = splitmix64(w_m + GAMMA); digit k is Lemire's
    reduction of the 16-bit piece k mod 4 of word k // 4, biased (rejected) when its low
    16 bits fall below 2^16 mod q; the next attempt starts from the last word + GAMMA.
    """
    words = []
    w = z
    for _ in range(-(-free // 4)):
        with np.errstate(over="ignore"):
            w = splitmix64(w if not words else w + GAMMA)
        words.append(w)
    digits = np.empty((z.shape[0], free), dtype=np.int64)
    fair = np.ones(z.shape[0], dtype=bool)
    threshold = (1 << 16) % q
    for k in range(free):
        piece = ((words[k // 4] >> np.uint64(16 * (k % 4))) & np.uint64(0xFFFF)).astype(np.int64)
        product = piece * q
        digits[:, k] = product >> 16
        fair &= (product & 0xFFFF) >= threshold
    with np.errstate(over="ignore"):
        return digits, fair, w + GAMMA


def _through_index_numpy(z, x, lead, q, inv):
    """The report of each user (a row of ``x``, its point; ``lead`` its leading 1) drawn
    from its state z: the reference path of :func:`place_through`."""
    n, dim = x.shape
    z = np.array(z, dtype=np.uint64, copy=True)
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        digits, fair, z[todo] = _attempt_digits(z[todo], q, dim - 1)
        u = np.zeros((todo.size, dim), dtype=np.int64)
        here = lead[todo]
        k = np.zeros(todo.size, dtype=np.int64)
        rows = np.arange(todo.size)
        for j in range(dim - 1, -1, -1):  # the free coordinates, from the last
            free = here != j
            u[free, j] = digits[rows[free], k[free]]
            k[free] += 1
        u[rows, here] = -(u * x[todo]).sum(axis=1) % q
        good = fair & u.any(axis=1)
        out[todo[good]] = index_of(u[good], q, inv)
        todo = todo[~good]
    return out


if HAVE_NUMBA:

    @numba.njit(cache=True, nogil=True)
    def _place_through_kernel(flat, size, block, x, lead, counts, q, inv, seed):  # pragma: no cover
        gamma = np.uint64(0x9E3779B97F4A7C15)
        mix1, mix2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
        mask = np.uint64(0xFFFF)
        dim = x.shape[1]
        free = dim - 1
        n_words = (free + 3) // 4
        threshold = np.int64((1 << 16) % q)
        u = np.zeros(dim, dtype=np.int64)
        words = np.zeros(n_words, dtype=np.uint64)
        first_of = np.zeros(dim + 1, dtype=np.int64)  # (q^r - 1)/(q - 1)
        for r in range(1, dim + 1):
            first_of[r] = first_of[r - 1] * q + 1
        n = np.uint64(0)
        for i in range(counts.shape[0]):
            for _ in range(counts[i]):
                n += np.uint64(1)
                z = seed + n * gamma
                while True:
                    w = z
                    for m in range(n_words):
                        if m:
                            w = w + gamma
                        w = (w ^ (w >> np.uint64(30))) * mix1
                        w = (w ^ (w >> np.uint64(27))) * mix2
                        w = w ^ (w >> np.uint64(31))
                        words[m] = w
                    z = w + gamma
                    fair = True
                    nonzero = False
                    dot = 0
                    k = 0
                    for j in range(dim - 1, -1, -1):
                        if j == lead[i]:
                            continue
                        piece = np.int64((words[k // 4] >> np.uint64(16 * (k % 4))) & mask)
                        product = piece * q
                        fair = fair and (product & 0xFFFF) >= threshold
                        u[j] = product >> 16
                        dot += u[j] * x[i, j]
                        nonzero = nonzero or u[j] != 0
                        k += 1
                    u[lead[i]] = (q - dot % q) % q
                    nonzero = nonzero or u[lead[i]] != 0
                    if fair and nonzero:
                        break
                first = 0
                while u[first] == 0:
                    first += 1
                scale = inv[u[first]]  # u_first^-1: no q x q table (q can reach 2^16)
                index = 0
                for j in range(first + 1, dim):
                    index = index * q + scale * u[j] % q
                flat[block[i] * size + first_of[dim - 1 - first] + index] += 1


def place_through(flat, size, block, point, counts, q, dim, inv, seed, use_numba=True) -> None:
    """Add ``counts[i]`` users of point ``point[i]`` (dimension ``dim``) of block
    ``block[i]``, each on a uniform hyperplane through its point, to the flat histogram.

    The u-th user (from 1, across the list) starts from the state seed + u GAMMA; an
    attempt draws the dim - 1 coordinates other than the point's leading one as uniform
    digits (:func:`_attempt_digits`, exact), sets that one to solve <u, x> = 0, and is
    redrawn when a digit was biased or u = 0.  u is then made canonical
    (:func:`index_of`).  The compiled loop and the numpy path give the same numbers; the
    loop runs on one thread (bound by the scattered increments, threads with private
    histograms measured no faster here).  For q >= 2^16 a 16-bit piece cannot give an
    unbiased digit, so each user is drawn by :func:`random_orthogonal` from a generator
    seeded with ``seed`` (the same law).
    """
    x = vectors_of(point, q, dim)
    lead = np.argmax(x != 0, axis=1)
    if q >= 1 << 16:  # no unbiased digit from a 16-bit piece: the generator's integers
        rng = np.random.default_rng(int(seed))
        for which in repeat_in_chunks(np.arange(counts.shape[0]), counts):
            reports = index_of(random_orthogonal(x[which], q, rng), q, inv)
            flat += np.bincount(block[which] * size + reports, minlength=flat.shape[0])
        return
    if use_numba and HAVE_NUMBA:
        inverse = np.asarray(inv, dtype=np.int64)
        _place_through_kernel(flat, size, block, x, lead, counts, q, inverse, seed)
        return
    offset = 0
    for which in repeat_in_chunks(np.arange(counts.shape[0]), counts):
        u = np.arange(offset + 1, offset + 1 + which.shape[0], dtype=np.uint64)
        offset += which.shape[0]
        with np.errstate(over="ignore"):
            z = seed + u * GAMMA
        reports = _through_index_numpy(z, x[which], lead[which], q, inv)
        flat += np.bincount(block[which] * size + reports, minlength=flat.shape[0])


def through_histograms(
    kept: np.ndarray, q: int, t: int, inv: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """h[g] = Σ_x Mult(kept[g, x], U{hyperplanes u through x}) over [P_t], exactly.

    ``kept`` has shape (G, P_t): the users of point x in group (block) g.  Dimension by
    dimension (derived here).  A point of index < P_R is a vector whose leading 1 lies in
    the last R coordinates, and its index is the same in every dimension >= R.  A user of
    such an x holds, in dimension R, a uniform canonical hyperplane c through x among
    P_(R-1).  In dimension R + 1 (a new first coordinate, 0 in x) the canonical
    hyperplanes through x are (0, c) for c canonical, (1, v) for v any vector with
    <v, x> = 0: P_(R-1) + q^(R-1) = P_R of them.  Move each user from c to (0, c) with
    probability P_(R-1)/P_R, to (1, λc) for each λ in F_q^* with that same probability, to
    (1, 0) with probability 1/P_R: every (1, v) is reached from one c (v = λc) or from all
    (v = 0), so the user is uniform on the P_R again, *whatever x is*.  The users of all
    points of index < P_R therefore move together, one multinomial of q + 1 outcomes per
    cell; (0, c) keeps c's index and (1, v) has index P_R + (v's base-q value).  The
    points whose leading 1 is the new coordinate (index in [P_R, P_(R+1))) join in
    dimension R + 1 with their own draws: one by one (:func:`random_orthogonal`) while at
    most P_R users, else a multinomial over their P_R hyperplanes.  Dimension 2 starts
    the recursion (no hyperplane of F_q^1 passes through its point).  Cost
    (q + 1) Σ_R P_R outcomes plus Σ_x min(kept_x, P_(dim x)) draws, instead of one draw
    per kept user.  (The multinomials' probabilities are rounded once to float64.)
    """
    kept = np.asarray(kept, dtype=np.int64)
    groups = kept.shape[0]
    hist = np.zeros((groups, 0), dtype=np.int64)
    for dim in range(2, t + 1):
        size, before = points(q, dim), points(q, dim - 1)
        grown = np.zeros((groups, size), dtype=np.int64)
        if dim > 2:  # move the users already placed from dimension dim - 1 to dim
            inner = points(q, dim - 2)
            stay = inner / before
            moves = rng.multinomial(hist.reshape(-1), [stay] * q + [1.0 / before])
            moves = moves.reshape(groups, before, q + 1)
            grown[:, :before] = moves[:, :, 0]
            moved = _memo(("moved", q, dim), (q - 1) * before, _moved, q, dim)
            for scale in range(1, q):
                grown[:, moved[scale - 1]] = moves[:, :, scale]
            grown[:, before] += moves[:, :, q].sum(axis=1)
        first = 0 if dim == 2 else before  # the points joining in this dimension
        block, point = np.nonzero(kept[:, first:size])
        point = point + first
        m = kept[block, point]
        flat = grown.reshape(-1)
        light = m <= before
        if light.any():
            seed = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
            place_through(flat, size, block[light], point[light], m[light], q, dim, inv, seed)
        heavy = np.flatnonzero(~light)
        if heavy.size:
            normals = _memo(("vectors", q, dim), size * dim, _all_vectors, q, dim)
            through = vectors_of(point[heavy], q, dim)
            for i, vector in zip(heavy, through, strict=True):
                cells = np.flatnonzero(normals @ vector % q == 0)
                draws = rng.multinomial(int(m[i]), np.full(cells.shape[0], 1.0 / cells.shape[0]))
                flat[block[i] * size + cells] += draws
        hist = grown
    return hist


def _all_vectors(q: int, dim: int) -> np.ndarray:
    """The canonical vector of every point of dimension ``dim``."""
    return vectors_of(np.arange(points(q, dim)), q, dim)


def _moved(q: int, dim: int) -> np.ndarray:
    """Row s - 1: the index in dimension ``dim`` of (1, s c) for each canonical c of
    dimension ``dim`` - 1, s = 1..q-1 (:func:`through_histograms`)."""
    before = points(q, dim - 1)
    vectors = vectors_of(np.arange(before), q, dim - 1)
    return np.stack([before + base_q(vectors * scale % q, q) for scale in range(1, q)])


# --- the decoder ----------------------------------------------------------------------------
def incidence_sums(hist: np.ndarray, q: int, t: int, inv: np.ndarray) -> np.ndarray:
    """S(x) = Σ_{u : <u, x> = 0} hist[u] for every point x of P^(t-1)(F_q) (int64).

    ``hist`` has one count per hyperplane index; the last axis may be preceded by blocks.

    Dynamic programme over the coordinates (in the spirit of [PGR]'s server algorithm,
    written here from scratch).  For a prefix a of the report u (l coordinates, zero or
    canonical) and a suffix b of the point x (m = t - l coordinates, any vector),
    f_l(a, b, z) sums hist over the reports u with prefix a and <u's suffix, b> = z.  Then
    f_t(u, ., 0) = hist[u], f_l(a, (β, b'), z) = Σ_d f_(l+1)(a d, b', z - d β) (d in {0, 1}
    after a zero prefix), and S(x) = f_0((), x, 0).  Since f_l(a, λb, λz) = f_l(a, b, z),
    the table keeps G_l[a, b] = f_l(a, b, 0) and H_l[a, b] = f_l(a, b, 1) only (f(a, b, z)
    = H[a, b/z] for z != 0): O(q^(t-1)) entries per level, O(q^t) work.  The prefixes a
    are indexed 0 (zero) and 1 + index(a) (canonical): a d then has index q(a - 1) + 2 + d.
    """
    hist = np.asarray(hist, dtype=np.int64)
    lead_shape, size = hist.shape[:-1], hist.shape[-1]
    if size != points(q, t):
        raise ValueError(f"hist must have P_t = {points(q, t)} cells, got {size}")
    blocks = int(np.prod(lead_shape, dtype=np.int64))
    # every table entry is a count of reports: int32 halves the memory traffic when it fits
    dtype = np.int32 if int(hist.sum()) < 2**31 else np.int64
    hist = hist.reshape(blocks, size).astype(dtype)
    # level t - 1 directly (H_t = 0: an empty suffix has dot product 0): the prefix a d
    # with d β = 0 feeds G, the one with d β = 1 (d = 1/β) feeds H
    rows = points(q, t - 1) + 1
    ends = np.zeros((blocks, rows, q), dtype=dtype)  # G_t at the prefixes a d, by d
    ends[:, 0, :2] = [0, 1] * hist[:, :1]  # zero prefix: d = 1 gives the report 0...01
    ends[:, 1:, :] = hist[:, 1:].reshape(blocks, rows - 1, q)
    g = np.empty((blocks, rows, q), dtype=dtype)
    g[:, :, 0] = ends.sum(axis=2)
    g[:, :, 1:] = ends[:, :, :1]
    h = np.zeros_like(g)
    h[:, :, 1:] = ends[:, :, inv[1:]]
    for level in range(t - 2, 0, -1):
        g, h = _level(g, h, q, t - level, points(q, level) + 1, inv)
    # level 0: only canonical x = (0, x') (x' canonical) or (1, x') (x' any), and z = 0.
    # A point of index i with r coordinates after its leading 1 is the base-q integer
    # q^r + i - P_r; x' drops the first coordinate (a 0, or the leading 1 when r = t - 1).
    rest, on_first, minus_one = _memo(("first", q, t), 3 * size, _first_level, q, t)
    out = g[:, 0, rest].astype(np.int64)  # the zero prefix: <u', x'> = 0
    out[:, on_first] += h[:, 1, minus_one]  # u_1 = 1: <u', x'> = -1
    out[:, ~on_first] += g[:, 1, rest[~on_first]]  # u_1 = 1, x_1 = 0: <u', x'> = 0
    return out.reshape(lead_shape + (size,))


def _first_level(q: int, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Level 0 of :func:`incidence_sums`: x' of every point (as a base-q integer), whether
    x's leading 1 is its first coordinate, and the base-q integer of -x' for those."""
    index = np.arange(points(q, t), dtype=np.int64)
    starts = np.array([points(q, r) for r in range(t)], dtype=np.int64)
    free = np.searchsorted(starts, index, side="right") - 1
    on_first = free == t - 1
    rest = index - starts[free] + np.where(on_first, 0, q**free)
    return rest, on_first, perm_scale(rest[on_first], q, t - 1, q - 1)


def perm_scale(values: np.ndarray, q: int, length: int, factor: int) -> np.ndarray:
    """The base-q integer of factor · v for vectors v of ``length`` given by base-q integers."""
    out = np.zeros_like(values)
    rest = values.copy()
    for j in range(length):
        out += (rest % q) * factor % q * q**j
        rest //= q
    return out


def _scaling_permutations(q: int, length: int, inv: np.ndarray) -> np.ndarray:
    """perm[y, v] = base-q integer of y^(-1) v for y != 0 (row 0 unused), v in F_q^length."""
    vectors = np.arange(q**length, dtype=np.int64)
    perm = np.zeros((q, q**length), dtype=np.int64)
    for y in range(1, q):
        perm[y] = perm_scale(vectors, q, length, int(inv[y]))
    return perm


def _level(
    g: np.ndarray, h: np.ndarray, q: int, m: int, rows: int, inv: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """G_l, H_l (suffixes of length m, ``rows`` prefixes) from G_(l+1), H_(l+1).

    For a digit d != 0, f(a d, b', y) over y in F_q is one gather W[y] (G at y = 0, H at
    b'/y otherwise); G_l takes W[-d β] and H_l takes W[1 - d β] at suffix (β, b').  The
    digit d = 0 gives G (resp. H) of a 0 for every β.
    """
    blocks, tail = g.shape[0], g.shape[2]
    # perm[y] = the columns of b'/y
    perm = _memo(("scaling", q, m - 1), q**m, _scaling_permutations, q, m - 1, inv)
    new_g = np.zeros((blocks, rows, q, tail), dtype=g.dtype)
    new_h = np.zeros_like(new_g)
    beta = np.arange(q)

    def add(source: slice, target: slice, d: int) -> None:
        if d == 0:
            new_g[:, target] += g[:, source, None, :]
            new_h[:, target] += h[:, source, None, :]
            return
        gathered = h[:, source][:, :, perm]  # (blocks, rows, q, tail): H[a d, b'/y]
        gathered[:, :, 0, :] = g[:, source]
        new_g[:, target] += gathered[:, :, (-d * beta) % q]
        new_h[:, target] += gathered[:, :, (1 - d * beta) % q]

    for d in (0, 1):  # the zero prefix extends by 0 (row 0) or 1 (row 1)
        add(slice(d, d + 1), slice(0, 1), d)
    for d in range(q):  # a canonical prefix a (row r >= 1) extends to row q(r-1) + 2 + d
        add(slice(2 + d, None, q), slice(1, None), d)
    return new_g.reshape(blocks, rows, q * tail), new_h.reshape(blocks, rows, q * tail)


# --- the oracles ----------------------------------------------------------------------------
def default_q(epsilon: float) -> int:
    """[PGR]'s q: the smallest prime >= ⌈e^ε + 1⌉, refused above :data:`MAX_Q`."""
    if epsilon > math.log(MAX_Q):
        raise ParameterError(
            "epsilon",
            epsilon,
            f"<= ln(2^20) = {math.log(MAX_Q):.4g} for PGR's default q (or pass q)",
            "the default q, the smallest prime >= e^epsilon + 1, would exceed 2^20",
        )
    return next_prime(math.ceil(math.exp(epsilon) + 1))


def dimension(q: int, blocks: int, domain_size: int) -> int:
    """t: the smallest integer >= 2 with h P_t >= d."""
    t = 2
    while blocks * points(q, t) < domain_size:
        t += 1
    return t


@dataclass(frozen=True, kw_only=True)
class ProjectiveResponse(FrequencyOracle):
    """The mechanism shared by PGR (h = 1) and HPGR (h blocks); see the module docstring.

    Reports are int64 indices in [h b]: block · b + hyperplane index.
    """

    q: int | None = None

    capabilities: ClassVar[Capabilities] = Capabilities(report_model="categorical", additive=True)
    _keep: int = field(init=False, repr=False, compare=False)
    _inv: np.ndarray = field(init=False, repr=False, compare=False)
    _t: int = field(init=False, repr=False, compare=False)
    _points: np.ndarray | None = field(init=False, repr=False, compare=False)

    def _setup(self, q: int, blocks: int) -> None:
        """Check q and h, size the geometry, and fix the keep coin κ*."""
        q = check_int(q, "q", minimum=2, maximum=MAX_Q)
        if not is_prime(q):
            raise ParameterError("q", q, "a prime", "F_q is the integers mod q")
        object.__setattr__(self, "q", q)
        t = dimension(q, blocks, self.domain_size)
        object.__setattr__(self, "_t", t)
        order = blocks * points(q, t)
        budget.check_memory(
            "domain_size",
            self.domain_size,
            f"small enough for {self.name}'s decoder (h P_t = {order} report cells)",
            DECODE_BYTES * order,
            f"{self.name}'s decoder over {order} report cells",
        )
        object.__setattr__(self, "_inv", inverse_table(q))
        small = points(q, t) <= POINT_TABLE
        object.__setattr__(
            self, "_points", vectors_of(np.arange(points(q, t)), q, t) if small else None
        )
        c_set = points(q, t - 1)
        spread = math.expm1(self.epsilon) * c_set
        keep, rest = spread / (spread + order), order / (spread + order)
        exact.check_representable(
            self.name,
            self.epsilon,
            min(keep, rest),
            largest_safe=math.log1p(order / (c_set * exact.SMALLEST)),
        )
        object.__setattr__(self, "_keep", exact.threshold(keep, rest, round_down=True))

    # --- the geometry --------------------------------------------------------------------
    @property
    def blocks(self) -> int:
        """h, the number of blocks (1 for PGR)."""
        return 1

    @property
    def t(self) -> int:
        """t: the points are those of P^(t-1)(F_q), t >= 2 the smallest with h P_t >= d."""
        return self._t

    @property
    def block_size(self) -> int:
        """b = P_t = (q^t - 1)/(q - 1): points (and hyperplanes) per block."""
        return points(self.q, self.t)

    @property
    def order(self) -> int:
        """h b, the number of possible reports."""
        return self.blocks * self.block_size

    @property
    def c_set(self) -> int:
        """P_(t-1): the hyperplanes through a point (and the points on a hyperplane)."""
        return points(self.q, self.t - 1)

    @property
    def c_int(self) -> int:
        """P_(t-2): the hyperplanes through two distinct points."""
        return points(self.q, self.t - 2)

    @property
    def keep(self) -> float:
        """κ*: the realised keep probability, <= (e^ε-1) c_set / ((e^ε-1) c_set + h b)."""
        return exact.realised(self._keep)

    @property
    def p_star(self) -> float:
        """p1 = Pr[a report of x lies on a hyperplane through x, in x's block]."""
        return self.keep + (1.0 - self.keep) * self.c_set / self.order

    @property
    def q_star(self) -> float:
        """p2 = the same for a user of another value of x's block."""
        return self.keep * self.c_int / self.c_set + (1.0 - self.keep) * self.c_set / self.order

    def report_bits(self) -> int:
        """⌈log2 (h b)⌉ bits per report."""
        return (self.order - 1).bit_length()

    def report_bytes(self, n_users: int) -> int:
        """8 n bytes (int64 indices)."""
        return 8 * n_users

    def working_bytes(self, n_users: int) -> int:
        """The reports, and the t coordinates of each user's point and report."""
        return (3 + 2 * self.t) * self.report_bytes(n_users)

    def point_vectors(self, values: np.ndarray) -> np.ndarray:
        """The canonical vector (in F_q^t) of each value's point."""
        index = np.asarray(values, dtype=np.int64) % self.block_size
        if self._points is not None:
            return self._points[index]
        return vectors_of(index, self.q, self.t)

    def block_of(self, values: np.ndarray) -> np.ndarray:
        """The block x // b of each value (of each report, for reports)."""
        return np.asarray(values, dtype=np.int64) // self.block_size

    def through(self, values: np.ndarray, reports: np.ndarray) -> np.ndarray:
        """Whether report y lies in x's block on a hyperplane through x (pairwise, broadcast)."""
        values, reports = np.broadcast_arrays(
            np.asarray(values, dtype=np.int64), np.asarray(reports, dtype=np.int64)
        )
        dots = (self.point_vectors(values) * self.point_vectors(reports)).sum(axis=-1) % self.q
        return (self.block_of(values) == self.block_of(reports)) & (dots == 0)

    # --- client --------------------------------------------------------------------------
    def _through_draws(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A uniform report in x's block on a hyperplane through x, for each value."""
        normals = random_orthogonal(self.point_vectors(values), self.q, rng)
        return self.block_of(values) * self.block_size + index_of(normals, self.q, self._inv)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """With probability κ* a uniform report through x in x's block, else uniform in [h b]."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        n = values.shape[0]
        self.check_report_size(n)
        keep = exact.bernoulli(rng, self._keep, n)
        reports = rng.integers(0, self.order, size=n, dtype=np.int64)
        reports[keep] = self._through_draws(values[keep], rng)
        return reports

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[y | value] for every y in [h b]: (1-κ*)/(hb), plus κ*/c_set through the value."""
        value = self.check_value(value)
        y = np.arange(self.order, dtype=np.int64)
        inside = self.through(np.int64(value), y)
        return np.where(inside, self.keep / self.c_set, 0.0) + (1.0 - self.keep) / self.order

    def audit_events(self, v: int, v_prime: int) -> list:
        """y through v but not v' (evidence for v) and the reverse: ratio e^ε each."""
        from ldp.audit import Event  # ldp.audit imports the oracles

        def only(a: int, c: int):
            def test(y: np.ndarray) -> np.ndarray:
                y = np.asarray(y, dtype=np.int64)
                return self.through(np.int64(a), y) & ~self.through(np.int64(c), y)

            return test

        return [
            Event(f"y through {v}, not {v_prime}", only(v, v_prime), +1),
            Event(f"y through {v_prime}, not {v}", only(v_prime, v), -1),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """For inputs 0 and 1, the event "through 0, not 1": its c cells have probability
        κ*/c_set + (1-κ*)/(hb) each given 0 and (1-κ*)/(hb) given 1, c = c_set - c_int
        when 0 and 1 share a block (always: b >= 3), so the ratio is e^ε at most."""
        cells = self.c_set - self.c_int
        spread = (1.0 - self.keep) / self.order
        return cells * (self.keep / self.c_set + spread), cells * spread

    # --- server --------------------------------------------------------------------------
    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        return check_values(reports, self.order, name="reports")

    def n_reports(self, reports: np.ndarray) -> int:
        return int(self._check_reports(reports).shape[0])

    def coefficients(self) -> tuple[float, float, float]:
        """(α, β, γ) of ĉ(x) = α I(x) + β N(x) + γ n (module docstring)."""
        alpha = 1.0 / (self.p_star - self.q_star)
        beta = -alpha * self.c_int / self.c_set
        p3 = (1.0 - self.keep) * self.c_set / self.order
        r3 = (1.0 - self.keep) / self.blocks
        return alpha, beta, -alpha * p3 - beta * r3

    def _from_histogram(self, hist: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """ĉ of each chosen value from the report histogram, all incidences at once."""
        table = hist.reshape(self.blocks, self.block_size)
        through = incidence_sums(table, self.q, self.t, self._inv)
        block, point = self.block_of(chosen), chosen % self.block_size
        alpha, beta, gamma = self.coefficients()
        n = int(hist.sum())
        return alpha * through[block, point] + beta * table.sum(axis=1)[block] + gamma * n

    def estimate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """ĉ(x) = α I(x) + β N(x) + γ n for each candidate (:meth:`_from_counts`)."""
        chosen = self.candidates(candidates)
        reports = self._check_reports(reports)
        distinct, counts = np.unique(reports, return_counts=True)
        return self._from_counts(distinct, counts, chosen)

    def aggregate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """The additive statistic: per candidate x, [I(x), N(x)] (reports through x, reports
        in x's block), int64 of shape (|C|, 2); the statistics of disjoint reports add up."""
        chosen = self.candidates(candidates)
        reports = self._check_reports(reports)
        table = np.bincount(reports, minlength=self.order).reshape(self.blocks, self.block_size)
        through = incidence_sums(table, self.q, self.t, self._inv)
        block, point = self.block_of(chosen), chosen % self.block_size
        return np.stack([through[block, point], table.sum(axis=1)[block]], axis=1).astype(np.int64)

    def estimate_aggregate(self, statistic: np.ndarray, n_users: int) -> np.ndarray:
        """ĉ(x) = α I(x) + β N(x) + γ n from the summed :meth:`aggregate` statistic."""
        statistic = np.asarray(statistic, dtype=np.int64)
        alpha, beta, gamma = self.coefficients()
        return alpha * statistic[:, 0] + beta * statistic[:, 1] + gamma * int(n_users)

    def _from_counts(
        self, distinct: np.ndarray, counts: np.ndarray, chosen: np.ndarray
    ) -> np.ndarray:
        """ĉ from the distinct reports and their counts: the dynamic programme over the
        whole histogram, or a direct count of the (candidate, distinct report) pairs when
        there are fewer of them than q h b (its cost) and :data:`DIRECT_PAIRS`."""
        pairs = chosen.shape[0] * distinct.shape[0]
        if pairs >= min(self.q * self.order, DIRECT_PAIRS):
            hist = np.zeros(self.order, dtype=np.int64)
            hist[distinct] = counts
            return self._from_histogram(hist, chosen)
        alpha, beta, gamma = self.coefficients()
        dots = self.point_vectors(chosen) @ self.point_vectors(distinct).T % self.q
        same = self.block_of(chosen)[:, None] == self.block_of(distinct)[None, :]
        through = ((dots == 0) & same).astype(np.int64) @ counts
        return alpha * through + beta * (same.astype(np.int64) @ counts) + gamma * counts.sum()

    # --- sampled engine ------------------------------------------------------------------
    def simulate_histogram(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The histogram over [h b] of the reports of a whole population, drawn exactly.

        Value x keeps Bin(n_x, κ*) users, each uniform on a hyperplane through x in x's
        block: :func:`through_histograms`, one group per block, whose cost grows with
        (q + 1) b plus Σ_x min(kept_x, P_(dim x)); the others are one multinomial over
        [h b].
        """
        b = self.block_size
        kept = rng.binomial(counts, self.keep)
        table = np.zeros(self.blocks * b, dtype=np.int64)
        table[: kept.shape[0]] = kept
        hist = through_histograms(table.reshape(self.blocks, b), self.q, self.t, self._inv, rng)
        spread = int(counts.sum() - kept.sum())
        return hist.reshape(-1) + rng.multinomial(spread, np.full(self.order, 1.0 / self.order))

    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The exact law of ``estimate(perturb(users))``, through the report histogram.

        One report feeds the estimates of every point on its hyperplane, so the whole
        population is drawn (:meth:`simulate_histogram`), its real values included.  Cost
        (q + 1) h b outcomes + Σ_x min(kept_x, P_(dim x - 1)) draws + the decoder's
        O(h b q t).
        """
        hist = self.simulate_histogram(dense_counts(values, counts, self.domain_size), rng)
        distinct = np.flatnonzero(hist)
        return self._from_counts(distinct, hist[distinct], chosen)

    # --- analysis ------------------------------------------------------------------------
    def second_moments(self) -> tuple[float, float, float]:
        """E[Z²] for a user of x, of another value of x's block, of another block."""
        alpha, beta, gamma = self.coefficients()
        spread = (1.0 - self.keep) * self.c_set / self.order
        p = (self.p_star, self.q_star, spread)
        r1, r3 = self.keep + (1.0 - self.keep) / self.blocks, (1.0 - self.keep) / self.blocks
        r = (r1, r1, r3)
        a, b, c = (alpha + beta + gamma) ** 2, (beta + gamma) ** 2, gamma**2
        return tuple(a * pj + b * (rj - pj) + c * (1.0 - rj) for pj, rj in zip(p, r, strict=True))

    def variance(
        self, n_users: int, true_count: float = 0, block_count: float | None = None
    ) -> float:
        """Exact Var[ĉ(x)] = n_x (E_1[Z²] - 1) + (m - n_x) E_2[Z²] + (n - m) E_3[Z²].

        Parameters
        ----------
        n_users, true_count :
            n and n_x.
        block_count : float, optional
            m, the users whose value lies in x's block (x's own included); default n for
            PGR (one block), n_x for HPGR (no other user in x's block).
        """
        n, n_x = check_variance_input(n_users, true_count)
        default = n if self.blocks == 1 else n_x
        m = default if block_count is None else float(block_count)
        if not n_x <= m <= n:
            raise ValueError(f"block_count must lie in [true_count, n_users], got {block_count}")
        own, same, other = self.second_moments()
        return float(n_x * (own - 1.0) + (m - n_x) * same + (n - m) * other)

    def variances(self, true_counts: np.ndarray, candidates: np.ndarray | None = None):
        """Exact Var[ĉ(x)] of every candidate, m read from the whole histogram."""
        counts = check_counts(true_counts, self.domain_size)
        chosen = self.candidates(candidates)
        n = float(counts.sum())
        per_block = np.bincount(
            self.block_of(np.arange(self.domain_size)), weights=counts, minlength=self.blocks
        )
        m, n_x = per_block[self.block_of(chosen)], counts[chosen].astype(float)
        own, same, other = self.second_moments()
        return n_x * (own - 1.0) + (m - n_x) * same + (n - m) * other


@register(label="PGR", color="#3b3b98", order=84)
@dataclass(frozen=True, kw_only=True)
class PGR(ProjectiveResponse):
    """Projective-geometry response ([PGR]): reports are hyperplanes of P^(t-1)(F_q).

    Parameters
    ----------
    q : int, optional
        The field order, a prime; default the smallest prime >= ⌈e^ε + 1⌉ ([PGR]).
    """

    name = "PGR"

    def __post_init__(self) -> None:
        super().__post_init__()
        self._setup(default_q(self.epsilon) if self.q is None else self.q, 1)


@register(label="HPGR", color="#8e7cc3", order=84.5)
@dataclass(frozen=True, kw_only=True)
class HPGR(ProjectiveResponse):
    """Hybrid projective-geometry response ([PGR]): h blocks, PGR over F_q inside each.

    Parameters
    ----------
    q : int, optional
        The field order, a prime; default 3 (the setting of [PGR]'s timing experiment).
    h : int, optional
        The number of blocks, >= 1; default max(2, ⌈(e^ε + 1)/q⌉).
    """

    h: int | None = None

    name = "HPGR"

    def __post_init__(self) -> None:
        super().__post_init__()
        q = 3 if self.q is None else self.q
        if self.h is None:
            if self.epsilon > math.log(MAX_Q):
                raise ParameterError(
                    "epsilon", self.epsilon, f"<= {math.log(MAX_Q):.4g} for HPGR's default h"
                )
            h = max(2, math.ceil((math.exp(self.epsilon) + 1) / check_int(q, "q", minimum=2)))
        else:
            h = check_int(self.h, "h", minimum=1, maximum=self.domain_size)
        object.__setattr__(self, "h", h)
        self._setup(q, h)

    @property
    def blocks(self) -> int:
        """h, the number of blocks."""
        return self.h
