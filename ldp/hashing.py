"""The seeded hash family of BLH, OLH and PEM, and the support-counting kernels.

Family.  A key x is a sequence of 64-bit words w_1..w_W (one word for values of at most
64 bits; see :mod:`ldp.bits` for wider ones).  It is first reduced to a 64-bit digest by
a fixed chain of MurmurHash3's 64-bit finaliser fmix64 (two odd multiplications and three
xor-shifts: an invertible map in which every output bit depends on every input bit):

    D(x) = fmix64(... fmix64(fmix64(K ^ w_1) ^ w_2) ... ^ w_W)

A user's hash function is named by a 64-bit seed s, from which a = fmix64(s ^ K_a) | 1
(odd) and b = fmix64(s ^ K_b) follow, and

    H_s(x) = (((a·D(x) + b) mod 2^64) >> 32) · g >> 32          in {0, ..., g-1}

a multiply-add-shift function of the digest (Dietzfelbinger et al.), reduced to g cells
by Lemire's multiply-shift; g <= 2^31.

Why close enough to uniform.  OLH's analysis needs, over a random seed, H_s(x) uniform and
Pr[H_s(x) = H_s(x')] = 1/g for x != x'.  For fixed x, b is uniform (fmix64 is a bijection
of s), so a·D(x) + b is uniform modulo 2^64 and the cell is uniform up to a relative bias
g/2^32.  For x != x' of one word the digests differ (fmix64 is a bijection; for several
words they differ except with probability ~2^-64), so the two hashes differ by a·Δ with
Δ = D(x) - D(x') != 0 and a a uniform odd number: a·Δ is uniform over the odd multiples
of 2^t, t the number of trailing zeros of Δ, whose top 32 bits are then close to uniform
(t >= 32 has probability ~2^-32 because Δ is a difference of scrambled digests, which is
what protects the structured key pairs PEM queries: consecutive prefixes, keys differing
only in the top bit).  ``tests/test_hashing.py`` checks uniformity and the 1/g collision
rate with binomial and chi-square tests.  It is not a cryptographic hash: privacy does not
rest on it (the ε-LDP ratio p*/q* = e^ε holds for every fixed hash function), only the
q* = 1/g of the unbiased estimator does.

Speed.  Counting support is n x |candidates| checks.  Digests are computed once per
candidate and each user's terms once, and the test on a check is folded into one
comparison (see :func:`support_counts`): one 64-bit multiply, one add and one signed
compare, whatever the key width.  With numba the kernel reduces over users into one
register per candidate (the loop the compiler vectorises), two candidates per pass, with
the users in tiles of ``TILE`` that stay in L1 while a block of candidates passes over
them, so neither many users nor many candidates leave the cache; blocks of candidates
run in parallel (below ``SERIAL_WORK`` checks a serial twin runs, as threads cost more
than they save).  No array grows with n x |candidates|.  Without numba, or with
``LDP_NO_NUMBA=1``, a chunked numpy path evaluates the definition directly and gives the
same counts, bit for bit.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

C1 = np.uint64(0xFF51AFD7ED558CCD)
C2 = np.uint64(0xC4CEB9FE1A85EC53)
K_DIGEST = np.uint64(0x9E3779B97F4A7C15)  # fixed keys (the golden-ratio constants)
K_A = np.uint64(0xBF58476D1CE4E5B9)
K_B = np.uint64(0x94D049BB133111EB)
ONE = np.uint64(1)
TWO32 = np.uint64(2**32)
S32 = np.uint64(32)
S33 = np.uint64(33)
TOP = np.uint64(2**63)  # the sign bit: adding it maps unsigned order onto signed order

#: The largest hash range: cell bounds y·2^32/g must fit in 64 bits.
MAX_RANGE = 2**31
#: Below this many checks the serial kernel runs (a parallel call costs tens of µs).
SERIAL_WORK = 1 << 19
#: Users per tile of the kernel: their terms (24 bytes a user) stay in L1.
TILE = 1024
#: A pool's table larger than this is read row by row for blocks of LOOKUP_BLOCK keys
#: (:func:`table_lookup`); a smaller one stays in cache under the key-by-key kernel, which
#: keeps each key's sum in a register (``python -m benchmarks --only pool_lookup``).
LOOKUP_CACHE_BYTES = 1 << 20
LOOKUP_BLOCK = 256

# OpenMP's idle workers (numba's default threading layer) spin for milliseconds after each
# parallel call; on a busy machine they take the core the calling thread needs next, which
# made OLH at n = 10^4 (a parallel estimate between serial perturbs) 2-4x slower.
# Sleeping workers cost a few µs per parallel call instead.  An explicit setting wins; it
# only matters if set before the first parallel call loads the OpenMP runtime.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

try:  # numba is optional at run time; results do not depend on it
    if os.environ.get("LDP_NO_NUMBA"):
        raise ImportError("disabled by LDP_NO_NUMBA")
    import numba

    HAVE_NUMBA = True
except ImportError:  # exercised via LDP_NO_NUMBA in the tests
    numba = None
    HAVE_NUMBA = False


def as_words(keys: np.ndarray) -> np.ndarray:
    """View keys as a 2-D C-contiguous uint64 array (n, W): one row of words per key."""
    keys = np.asarray(keys)
    if keys.dtype.kind not in "iu":
        raise TypeError(f"hash keys must be integers, got dtype {keys.dtype}")
    if keys.dtype.kind == "i" and keys.size and keys.min() < 0:
        raise ValueError("hash keys must be non-negative")
    words = keys.astype(np.uint64, copy=False)
    if words.ndim == 1:
        words = words[:, None]
    if words.ndim != 2:
        raise ValueError(f"hash keys must be 1-D or 2-D (n, words), got shape {keys.shape}")
    return np.ascontiguousarray(words)


# The four formulas below are written once, for uint64 arrays (numpy) and for uint64
# scalars (compiled by numba into the kernels): uint64 arithmetic wraps mod 2^64 in both.
def _mix(h):
    """MurmurHash3's 64-bit finaliser fmix64."""
    h = h ^ (h >> S33)
    h = h * C1
    h = h ^ (h >> S33)
    h = h * C2
    return h ^ (h >> S33)


def _cell_low(y, g):
    """⌈y 2^32 / g⌉: the least 32-bit hash in cell y (exact: y 2^32 < 2^63 for y < g)."""
    return (y * TWO32 + g - ONE) // g


def _top32(a, b, digests):
    """The 32-bit hash ((a·D + b) mod 2^64) >> 32 before the reduction to g cells."""
    return (a * digests + b) >> S32


def _cell(h, g):
    """Lemire's reduction of a 32-bit hash to [0, g): ⌊h g / 2^32⌋."""
    return (h * g) >> S32


def _fmix64(h: np.ndarray) -> np.ndarray:
    """fmix64, vectorised (numpy warns on wrapping scalars; wrapping is intended)."""
    with np.errstate(over="ignore"):
        return _mix(h)


def digest(keys: np.ndarray) -> np.ndarray:
    """D(x): the seedless 64-bit digest of each key (one uint64 per key)."""
    words = as_words(keys)
    h = np.full(words.shape[0], K_DIGEST, dtype=np.uint64)
    for column in range(words.shape[1]):
        h = _fmix64(h ^ words[:, column])
    return h


def user_functions(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) of each user's multiply-add-shift function: a odd, both from the seed."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    return _fmix64(seeds ^ K_A) | ONE, _fmix64(seeds ^ K_B)


def hash_values(
    keys: np.ndarray, seeds: np.ndarray, g: int, *, use_numba: bool = True
) -> np.ndarray:
    """H_s(x) for paired keys and seeds (one per user): an int64 array in [0, g)."""
    words = as_words(keys)
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    if seeds.shape != (words.shape[0],):
        raise ValueError(f"seeds must have shape {(words.shape[0],)}, got {seeds.shape}")
    g = _check_range(g, 1)
    if HAVE_NUMBA and use_numba:
        out = np.empty(seeds.shape[0], dtype=np.int64)
        kernel = _hash_parallel if seeds.shape[0] >= SERIAL_WORK // 8 else _hash_serial
        kernel(words, seeds, np.uint64(g), out)
        return out
    a, b = user_functions(seeds)
    with np.errstate(over="ignore"):
        return _cell(_top32(a, b, digest(words)), np.uint64(g)).astype(np.int64)


def _check_range(g, minimum: int) -> int:
    """The hash range g as an int, or a ValueError naming it."""
    if isinstance(g, bool) or not isinstance(g, int | np.integer) or not minimum <= g <= MAX_RANGE:
        raise ValueError(f"g must be an integer in [{minimum}, 2^31], got {g!r}")
    return int(g)


def hash_matrix(keys: np.ndarray, seeds: np.ndarray, g: int) -> np.ndarray:
    """H_s(x) for every key (rows) and every seed (columns): int64 in [0, g), shape (|x|, |s|).

    The same function as :func:`hash_values`, with each key's digest and each seed's (a, b)
    computed once (a fixed pool of hash functions applied to many keys, as FLH does).
    """
    digests = digest(keys)
    a, b = user_functions(seeds)
    return (_top32(a[None, :], b[None, :], digests[:, None]) * np.uint64(g) >> S32).astype(np.int64)


if HAVE_NUMBA:

    @numba.njit(parallel=True, cache=True, nogil=True)
    def _lookup_kernel(table, a, b, digests, g):
        out = np.zeros(digests.shape[0], dtype=np.int64)
        for c in numba.prange(digests.shape[0]):
            total = 0
            for j in range(a.shape[0]):
                h = (a[j] * digests[c] + b[j]) >> np.uint64(32)
                total += table[j, (h * g) >> np.uint64(32)]
            out[c] = total
        return out

    @numba.njit(parallel=True, cache=True, nogil=True)
    def _lookup_rows_kernel(table, a, b, digests, g):
        """The same sums, the pool functions outermost: one table row serves a block of
        keys while it is in L1, so a table beyond the cache is read once per block instead
        of once per key (a gather per (function, key) missed the cache at k' g = 5.5 10^5)."""
        n_keys = digests.shape[0]
        out = np.zeros(n_keys, dtype=np.int64)
        for blk in numba.prange((n_keys + LOOKUP_BLOCK - 1) // LOOKUP_BLOCK):
            lo = blk * LOOKUP_BLOCK
            hi = min(lo + LOOKUP_BLOCK, n_keys)
            local = np.zeros(hi - lo, dtype=np.int64)
            for j in range(a.shape[0]):
                aj = a[j]
                bj = b[j]
                for c in range(hi - lo):
                    h = (aj * digests[lo + c] + bj) >> np.uint64(32)
                    local[c] += table[j, (h * g) >> np.uint64(32)]
            out[lo:hi] = local
        return out


def table_lookup(
    table: np.ndarray, seeds: np.ndarray, keys: np.ndarray, *, use_numba: bool = True
) -> np.ndarray:
    """Σ_j table[j, H_{s_j}(x)] for each key x: a pool of |s| functions, a |s| x g table.

    The aggregation of a fixed hash pool (FLH): one hash and one read per (function, key),
    with numba a kernel parallel over the keys (key by key for a table that fits in cache,
    else row by row over blocks of keys: the same sums), else :func:`hash_matrix` in blocks.
    """
    table = np.ascontiguousarray(table, dtype=np.int64)
    seeds = np.asarray(seeds, dtype=np.uint64)
    if table.ndim != 2 or table.shape[0] != seeds.shape[0]:
        raise ValueError(f"table must have one row per seed, got {table.shape} for {seeds.shape}")
    g = table.shape[1]
    words = as_words(keys)
    if HAVE_NUMBA and use_numba and words.shape[0] and seeds.shape[0]:
        a, b = user_functions(seeds)
        kernel = _lookup_rows_kernel if table.nbytes > LOOKUP_CACHE_BYTES else _lookup_kernel
        return kernel(table, a, b, digest(words), np.uint64(g))
    out = np.zeros(words.shape[0], dtype=np.int64)
    rows = np.arange(seeds.shape[0])[None, :]
    step = max(1, (1 << 22) // max(seeds.shape[0], 1))
    for start in range(0, words.shape[0], step):
        cells = hash_matrix(words[start : start + step], seeds, g)
        out[start : start + step] = table[rows, cells].sum(axis=1)
    return out


def cell_bounds(reports: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """For each report y, the 32-bit hashes h with ⌊h g / 2^32⌋ = y: [low, low + width).

    ⌊hg/2^32⌋ = y  ⟺  ⌈y 2^32/g⌉ <= h < ⌈(y+1) 2^32/g⌉ for integer h.
    """
    y = np.asarray(reports).astype(np.uint64)
    g64 = np.uint64(g)
    low = _cell_low(y, g64)
    return low, _cell_low(y + ONE, g64) - low


def _support_numpy(seeds, reports, words, g, chunk=1 << 22):
    """Reference path: count[c] = #{i : H_{s_i}(x_c) = y_i}, in blocks of users x keys."""
    digests = digest(words)
    a, b = user_functions(seeds)
    low, width = cell_bounds(reports, g)
    counts = np.zeros(digests.shape[0], dtype=np.int64)
    rows = max(1, chunk // max(digests.shape[0], 1))
    with np.errstate(over="ignore"):
        for start in range(0, a.shape[0], rows):
            part = slice(start, start + rows)
            h = _top32(a[part, None], b[part, None], digests[None, :])
            counts += ((h - low[part, None]) < width[part, None]).sum(axis=0)
    return counts


if HAVE_NUMBA:
    _mix_jit = numba.njit(inline="always")(_mix)
    _cell_low_jit = numba.njit(inline="always")(_cell_low)
    _top32_jit = numba.njit(inline="always")(_top32)
    _cell_jit = numba.njit(inline="always")(_cell)

    @numba.njit(inline="always")
    def _digest_row(words, i):
        """D(x) of the key in row i (indexed, not ``for word in words[i]``: a view a row)."""
        d = K_DIGEST
        for w in range(words.shape[1]):
            d = _mix_jit(d ^ words[i, w])
        return d

    def _hash_kernel(words, seeds, g, out):
        """H_s(x) of each (key, seed) pair: the digest, the user's (a, b), the cell."""
        for i in numba.prange(seeds.shape[0]):
            a = _mix_jit(seeds[i] ^ K_A) | ONE
            out[i] = _cell_jit(_top32_jit(a, _mix_jit(seeds[i] ^ K_B), _digest_row(words, i)), g)

    def _user_terms(seeds, reports, g, a, offset, bound):
        """Each user's (a, offset, bound) of the folded test (see :func:`support_counts`)."""
        for i in numba.prange(seeds.shape[0]):
            y = np.uint64(reports[i])
            low = _cell_low_jit(y, g)
            width = _cell_low_jit(y + ONE, g) - low
            a[i] = _mix_jit(seeds[i] ^ K_A) | ONE
            offset[i] = _mix_jit(seeds[i] ^ K_B) - (low << S32) + TOP
            bound[i] = np.int64((width << S32) + TOP)

    @numba.njit(cache=True, nogil=True)
    def _pair_support(a, offset, bound, c0, c1):
        """Over one tile of users: how many support the digests c0, and c1."""
        s0 = 0
        s1 = 0
        for i in range(a.shape[0]):
            ai, oi, bi = a[i], offset[i], bound[i]
            s0 += np.int64(ai * c0 + oi) < bi
            s1 += np.int64(ai * c1 + oi) < bi
        return s0, s1

    def _support_kernel(a, offset, bound, words, block):
        """Counts per key (row of ``words``); blocks of ``block`` keys in parallel."""
        n_keys = words.shape[0]
        counts = np.zeros(n_keys, dtype=np.int64)
        for blk in numba.prange((n_keys + block - 1) // block):
            lo = blk * block
            size = min(block, n_keys - lo)
            digests = np.empty(size + 1, dtype=np.uint64)  # + 1: a pair for an odd last key
            for c in range(size):
                digests[c] = _digest_row(words, lo + c)
            digests[size] = digests[size - 1]
            local = np.zeros(size + 1, dtype=np.int64)
            for start in range(0, a.shape[0], TILE):
                stop = min(start + TILE, a.shape[0])
                ta, to, tb = a[start:stop], offset[start:stop], bound[start:stop]
                for c in range(0, size, 2):
                    s0, s1 = _pair_support(ta, to, tb, digests[c], digests[c + 1])
                    local[c] += s0
                    local[c + 1] += s1
            counts[lo : lo + size] = local[:size]
        return counts

    _jit = {"cache": True, "nogil": True}
    _hash_parallel = numba.njit(parallel=True, **_jit)(_hash_kernel)
    _hash_serial = numba.njit(**_jit)(_hash_kernel)
    _terms_parallel = numba.njit(parallel=True, **_jit)(_user_terms)
    _terms_serial = numba.njit(**_jit)(_user_terms)
    _support_parallel = numba.njit(parallel=True, **_jit)(_support_kernel)
    _support_serial = numba.njit(**_jit)(_support_kernel)


def _support_numba(seeds, reports, words, g):
    """The folded test of :func:`support_counts` in the compiled kernels."""
    n, n_keys = seeds.shape[0], words.shape[0]
    a = np.empty(n, dtype=np.uint64)
    offset = np.empty(n, dtype=np.uint64)
    bound = np.empty(n, dtype=np.int64)
    if n * n_keys < SERIAL_WORK:
        _terms_serial(seeds, reports, np.uint64(g), a, offset, bound)
        return _support_serial(a, offset, bound, words, n_keys)
    threads = numba.get_num_threads()
    (_terms_parallel if n >= SERIAL_WORK // 8 else _terms_serial)(
        seeds, reports, np.uint64(g), a, offset, bound
    )
    # about 8 blocks a thread, handed out one at a time (a busy core takes fewer), each
    # of at most 512 candidates (each block reads all users' terms once)
    block = min(512, max(2, -(-n_keys // (8 * threads))))
    block += block % 2
    with numba.parallel_chunksize(1):
        return _support_parallel(a, offset, bound, words, block)


def support_counts(
    seeds: np.ndarray, reports: np.ndarray, keys: np.ndarray, g: int, *, use_numba: bool = True
) -> np.ndarray:
    """For each key x_c, the number of users i whose report supports it: H_{s_i}(x_c) = y_i.

    This is OLH's support I_v = |{j : H^j(v) = y^j}| ([PEM] Sec. II-B2; BLH is g = 2).
    ``seeds`` (uint64) and ``reports`` (integers in [0, g)) are one per user; ``keys`` are
    the candidates (1-D uint64, or 2-D words).  Returns int64 counts, one per key.

    The compiled kernel folds the test into one comparison.  With x = (a·D + b) mod 2^64
    and h = x >> 32, report y supports the key iff low <= h < low + width
    (:func:`cell_bounds`).  As low + width <= 2^32, that is (h - low) mod 2^32 < width
    (for h < low the difference wraps to at least 2^32 - low >= width).  Now
    (x - low·2^32) mod 2^64 = ((h - low) mod 2^32)·2^32 + (x mod 2^32), so the test is
    (x - low·2^32) mod 2^64 < width·2^32, an unsigned 64-bit comparison (width <= 2^31
    for g >= 2, so width·2^32 fits).  Adding 2^63 mod 2^64 to both sides flips their top
    bits, which maps unsigned order onto signed order.  So each user's
    offset = b - low·2^32 + 2^63 and bound = int64(width·2^32 + 2^63) are computed once,
    and each check is one multiply, one add and one signed comparison:

        int64(a·D + offset) < bound.

    The numpy path evaluates the definition instead; the tests check both agree, also on
    keys built to land one hash either side of each cell edge.
    """
    words = as_words(keys)
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    reports = np.ascontiguousarray(reports, dtype=np.int64)
    g = _check_range(g, 2)  # at g = 1, width·2^32 = 2^64 would not fit (see above)
    if seeds.ndim != 1 or seeds.shape != reports.shape:
        raise ValueError(
            f"seeds and reports must be 1-D, one per user; got {seeds.shape}, {reports.shape}"
        )
    if reports.size and (reports.min() < 0 or reports.max() >= g):
        raise ValueError(f"reports must lie in [0, {g})")
    if HAVE_NUMBA and use_numba and words.shape[0] and seeds.shape[0]:
        return _support_numba(seeds, reports, words, g)
    return _support_numpy(seeds, reports, words, g)


def _keys(key: Any, n: int) -> np.ndarray:
    key = np.asarray(key)
    if key.ndim == 0:
        return np.full(n, int(key), dtype=np.uint64)
    return np.repeat(key.astype(np.uint64)[None, :], n, axis=0)


def hash_of(key: Any, seeds: np.ndarray, g: int) -> np.ndarray:
    """H_seed(key) in [0, g) for each report's seed: one key (an integer, or a row of
    uint64 words) hashed under every seed (:func:`hash_values`)."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    return hash_values(_keys(key, len(seeds)), seeds, g)
