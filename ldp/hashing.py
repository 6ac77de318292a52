"""The seeded hash family of BLH, OLH and PEM, and the support-counting kernels.

Family.  A user's hash function is named by a 64-bit seed s.  A key x is a sequence of
64-bit words w_1..w_W (one word for values of at most 64 bits; see :mod:`ldp.bits` for
wider ones), and

    h = s;  for each word w:  h = fmix64(h XOR w)
    H_s(x) = ((h >> 32) * g) >> 32                  in {0, ..., g-1}

where fmix64 is the 64-bit finaliser of MurmurHash3 (two odd multiplications and three
xor-shifts: an invertible map whose every output bit depends on every input bit).  The
range reduction is Lemire's multiply-shift, so values up to g = 2^32 are supported.

Why close enough to uniform.  LDP's analysis of OLH needs, for two distinct keys
x != x', that over a random seed Pr[H_s(x) = H_s(x')] = 1/g, and that H_s(x) is uniform.
fmix64 is a bijection, so for uniform s the first word's image is exactly uniform; the
reduction from 2^32 cells to g leaves a relative bias below g/2^32.  Collisions of
distinct keys rest on fmix64's avalanche: flipping any input bit flips each output bit
with probability close to 1/2, including for the structured key pairs that PEM queries
(prefixes differing in their last η bits, or only in their top bit).  ``tests/test_hashing``
checks both properties with chi-square tests at a stated false-alarm rate.  It is not a
cryptographic hash: privacy does not rest on it (the ε-LDP ratio p*/q* holds for every
fixed hash function), only the q* = 1/g used by the unbiased estimator does.

Speed.  Counting support is n x |candidates| hash evaluations.  With numba the kernel is
parallel over blocks of candidates (each block stays in cache while all users stream
past); without numba, or with ``LDP_NO_NUMBA=1``, a chunked numpy path gives the same
counts, bit for bit.
"""

from __future__ import annotations

import os

import numpy as np

C1 = np.uint64(0xFF51AFD7ED558CCD)
C2 = np.uint64(0xC4CEB9FE1A85EC53)
S33 = np.uint64(33)
S32 = np.uint64(32)

MAX_RANGE = 2**32

try:  # numba is optional at run time; results do not depend on it
    if os.environ.get("LDP_NO_NUMBA"):
        raise ImportError("disabled by LDP_NO_NUMBA")
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised via LDP_NO_NUMBA in the tests
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
    h = h ^ (h >> S33)
    h = h * C1
    h = h ^ (h >> S33)
    h = h * C2
    return h ^ (h >> S33)


def hash_values(keys: np.ndarray, seeds: np.ndarray, g: int) -> np.ndarray:
    """H_s(x) for paired keys and seeds (one per user): an int64 array in [0, g)."""
    words = as_words(keys)
    seeds = np.asarray(seeds, dtype=np.uint64)
    if seeds.shape != (words.shape[0],):
        raise ValueError(f"seeds must have shape ({words.shape[0]},), got {seeds.shape}")
    h = seeds.copy()
    with np.errstate(over="ignore"):
        for column in range(words.shape[1]):
            h = _fmix64(h ^ words[:, column])
        return ((h >> S32) * np.uint64(g) >> S32).astype(np.int64)


def _support_numpy(seeds, reports, words, g, chunk=1 << 22):
    """Reference path: count[c] = #{i : H_{s_i}(x_c) = y_i}, in blocks of users x keys."""
    n, n_keys = seeds.shape[0], words.shape[0]
    counts = np.zeros(n_keys, dtype=np.int64)
    rows = max(1, chunk // max(n_keys, 1))
    g64 = np.uint64(g)
    with np.errstate(over="ignore"):
        for start in range(0, n, rows):
            s = seeds[start : start + rows, None]
            h = np.broadcast_to(s, (s.shape[0], n_keys))
            for column in range(words.shape[1]):
                h = _fmix64(h ^ words[None, :, column])
            hit = ((h >> S32) * g64 >> S32) == reports[start : start + rows, None]
            counts += hit.sum(axis=0)
    return counts


if HAVE_NUMBA:

    @numba.njit(inline="always")
    def _fmix64_scalar(h):
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        h ^= h >> np.uint64(33)
        return h

    @numba.njit(parallel=True, cache=True, nogil=True)
    def _support_numba_1(seeds, reports, keys, g, block):  # one word per key
        n_keys = keys.shape[0]
        counts = np.zeros(n_keys, dtype=np.int64)
        n_blocks = (n_keys + block - 1) // block
        gg = np.uint64(g)
        for b in numba.prange(n_blocks):
            lo = b * block
            hi = min(lo + block, n_keys)
            local = np.zeros(hi - lo, dtype=np.int64)
            for i in range(seeds.shape[0]):
                s = seeds[i]
                y = np.uint64(reports[i])
                for c in range(lo, hi):
                    h = _fmix64_scalar(s ^ keys[c])
                    local[c - lo] += ((h >> np.uint64(32)) * gg >> np.uint64(32)) == y
            counts[lo:hi] = local
        return counts

    @numba.njit(parallel=True, cache=True, nogil=True)
    def _support_numba_w(seeds, reports, columns, g, block):  # several words per key
        n_words, n_keys = columns.shape  # words transposed: the key loop stays innermost
        counts = np.zeros(n_keys, dtype=np.int64)
        n_blocks = (n_keys + block - 1) // block
        gg = np.uint64(g)
        for b in numba.prange(n_blocks):
            lo = b * block
            hi = min(lo + block, n_keys)
            local = np.zeros(hi - lo, dtype=np.int64)
            h = np.empty(hi - lo, dtype=np.uint64)
            for i in range(seeds.shape[0]):
                y = np.uint64(reports[i])
                for c in range(lo, hi):
                    h[c - lo] = _fmix64_scalar(seeds[i] ^ columns[0, c])
                for w in range(1, n_words):
                    for c in range(lo, hi):
                        h[c - lo] = _fmix64_scalar(h[c - lo] ^ columns[w, c])
                for c in range(lo, hi):
                    local[c - lo] += ((h[c - lo] >> np.uint64(32)) * gg >> np.uint64(32)) == y
            counts[lo:hi] = local
        return counts

    #: Serial twins of the kernels: below SERIAL_WORK checks, threads cost more than they
    #: save (and degrade badly when other processes hold the cores).
    _support_serial_1 = numba.njit(cache=True, nogil=True)(_support_numba_1.py_func)
    _support_serial_w = numba.njit(cache=True, nogil=True)(_support_numba_w.py_func)

SERIAL_WORK = 1 << 21


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
    if HAVE_NUMBA and use_numba and words.shape[0] and seeds.shape[0]:
        # blocks small enough for L1 and numerous enough to feed every core
        block = int(min(2048, max(64, -(-words.shape[0] // (4 * numba.get_num_threads())))))
        serial = seeds.shape[0] * words.shape[0] * words.shape[1] < SERIAL_WORK
        if words.shape[1] == 1:
            kernel = _support_serial_1 if serial else _support_numba_1
            return kernel(seeds, reports, words[:, 0].copy(), g, block)
        kernel = _support_serial_w if serial else _support_numba_w
        return kernel(seeds, reports, np.ascontiguousarray(words.T), g, block)
    return _support_numpy(seeds, reports, words, g)
