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
candidate and (a, b) once per user, so a check is one multiply, one add, a shift and an
unsigned range test (the report y fixes the interval of 32-bit hashes that land in cell
y), whatever the key width.  With numba the kernel is parallel over blocks of candidates
(each block stays in cache while all users stream past; below ``SERIAL_WORK`` checks a
serial twin runs, as threads cost more than they save); without numba, or with
``LDP_NO_NUMBA=1``, a chunked numpy path gives the same counts, bit for bit.
"""

from __future__ import annotations

import os

import numpy as np

C1 = np.uint64(0xFF51AFD7ED558CCD)
C2 = np.uint64(0xC4CEB9FE1A85EC53)
K_DIGEST = np.uint64(0x9E3779B97F4A7C15)  # fixed keys (the golden-ratio constants)
K_A = np.uint64(0xBF58476D1CE4E5B9)
K_B = np.uint64(0x94D049BB133111EB)
S32 = np.uint64(32)
S33 = np.uint64(33)

#: The largest hash range: cell bounds y·2^32/g must fit in 64 bits.
MAX_RANGE = 2**31
#: Below this many checks the serial kernel runs.
SERIAL_WORK = 1 << 21

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


def _fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser, vectorised (uint64 arithmetic wraps mod 2^64)."""
    with np.errstate(over="ignore"):
        h = h ^ (h >> S33)
        h = h * C1
        h = h ^ (h >> S33)
        h = h * C2
        return h ^ (h >> S33)


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
    return _fmix64(seeds ^ K_A) | np.uint64(1), _fmix64(seeds ^ K_B)


def _top32(a: np.ndarray, b: np.ndarray, digests: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (a * digests + b) >> S32


def hash_values(keys: np.ndarray, seeds: np.ndarray, g: int) -> np.ndarray:
    """H_s(x) for paired keys and seeds (one per user): an int64 array in [0, g)."""
    digests = digest(keys)
    seeds = np.asarray(seeds, dtype=np.uint64)
    if seeds.shape != digests.shape:
        raise ValueError(f"seeds must have shape {digests.shape}, got {seeds.shape}")
    a, b = user_functions(seeds)
    return (_top32(a, b, digests) * np.uint64(g) >> S32).astype(np.int64)


def hash_matrix(keys: np.ndarray, seeds: np.ndarray, g: int) -> np.ndarray:
    """H_s(x) for every key (rows) and every seed (columns): int64 in [0, g), shape (|x|, |s|).

    The same function as :func:`hash_values`, with each key's digest and each seed's (a, b)
    computed once (a fixed pool of hash functions applied to many keys, as FLH does).
    """
    digests = digest(keys)
    a, b = user_functions(seeds)
    return (_top32(a[None, :], b[None, :], digests[:, None]) * np.uint64(g) >> S32).astype(np.int64)


def table_lookup(
    table: np.ndarray, seeds: np.ndarray, keys: np.ndarray, *, use_numba: bool = True
) -> np.ndarray:
    """Σ_j table[j, H_{s_j}(x)] for each key x: a pool of |s| functions, a |s| x g table.

    The aggregation of a fixed hash pool (FLH): one hash and one read per (function, key),
    with numba a kernel parallel over the keys, else :func:`hash_matrix` in blocks.
    """
    table = np.ascontiguousarray(table, dtype=np.int64)
    seeds = np.asarray(seeds, dtype=np.uint64)
    if table.ndim != 2 or table.shape[0] != seeds.shape[0]:
        raise ValueError(f"table must have one row per seed, got {table.shape} for {seeds.shape}")
    g = table.shape[1]
    words = as_words(keys)
    if HAVE_NUMBA and use_numba and words.shape[0] and seeds.shape[0]:
        a, b = user_functions(seeds)
        return _lookup_kernel(table, a, b, digest(words), np.uint64(g))
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
    low = (y * np.uint64(2**32) + g64 - np.uint64(1)) // g64
    high = ((y + np.uint64(1)) * np.uint64(2**32) + g64 - np.uint64(1)) // g64
    return low, high - low


def _support_numpy(seeds, reports, words, g, chunk=1 << 22):
    """Reference path: count[c] = #{i : H_{s_i}(x_c) = y_i}, in blocks of users x keys."""
    digests = digest(words)
    a, b = user_functions(seeds)
    low, width = cell_bounds(reports, g)
    counts = np.zeros(digests.shape[0], dtype=np.int64)
    rows = max(1, chunk // max(digests.shape[0], 1))
    for start in range(0, a.shape[0], rows):
        part = slice(start, start + rows)
        h = _top32(a[part, None], b[part, None], digests[None, :])
        counts += ((h - low[part, None]) < width[part, None]).sum(axis=0)
    return counts


if HAVE_NUMBA:

    def _support_kernel(a, b, low, width, digests, block):
        n_keys = digests.shape[0]
        counts = np.zeros(n_keys, dtype=np.int64)
        n_blocks = (n_keys + block - 1) // block
        for blk in numba.prange(n_blocks):
            lo = blk * block
            hi = min(lo + block, n_keys)
            local = np.zeros(hi - lo, dtype=np.int64)
            for i in range(a.shape[0]):
                ai, bi, li, wi = a[i], b[i], low[i], width[i]
                for c in range(lo, hi):
                    h = (ai * digests[c] + bi) >> np.uint64(32)
                    local[c - lo] += (h - li) < wi
            counts[lo:hi] = local
        return counts

    _support_parallel = numba.njit(parallel=True, cache=True, nogil=True)(_support_kernel)
    _support_serial = numba.njit(cache=True, nogil=True)(_support_kernel)

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


def support_counts(
    seeds: np.ndarray, reports: np.ndarray, keys: np.ndarray, g: int, *, use_numba: bool = True
) -> np.ndarray:
    """For each key x_c, the number of users i whose report supports it: H_{s_i}(x_c) = y_i.

    ``seeds`` (uint64) and ``reports`` (integers in [0, g)) are one per user; ``keys`` are
    the candidates (1-D uint64, or 2-D words).  Returns int64 counts, one per key.
    """
    words = as_words(keys)
    seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
    reports = np.ascontiguousarray(reports, dtype=np.int64)
    if not (HAVE_NUMBA and use_numba and words.shape[0] and seeds.shape[0]):
        return _support_numpy(seeds, reports, words, g)
    digests = digest(words)
    a, b = user_functions(seeds)
    low, width = cell_bounds(reports, g)
    if seeds.shape[0] * digests.shape[0] < SERIAL_WORK:
        return _support_serial(a, b, low, width, digests, max(1, digests.shape[0]))
    # blocks small enough for L1 and numerous enough to feed every core
    block = int(min(2048, max(64, -(-digests.shape[0] // (4 * numba.get_num_threads())))))
    return _support_parallel(a, b, low, width, digests, block)
