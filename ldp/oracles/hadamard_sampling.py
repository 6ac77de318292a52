"""Exact report histograms of the Hadamard family, merging users bit by bit (sampled engines).

Every Hadamard-type report, once kept, is uniform on a coset of a hyperplane of F_2^k:
the HR user of code c reports y uniform on {y in [2^k] : c·y = 0} (c·y the parity of
popcount(c & y)); HM's signed coefficients, BHR's blocks and RHR's (symbol bit, row)
pairs are the same law with a target parity β in {0, 1} and one histogram per group.
The population's histogram is then

    h_g = Σ_c Mult(m[g, c, β], U{y : c·y = β}),

and the sampled engines used to draw it user by user (Σ min(m, 2^(k-1)) draws).  This
module draws it with far fewer draws, and exactly, by the highest set bit of the code.
For c with highest bit j (2^j <= c < 2^(j+1)) a uniform y on {c·y = β} is: its low j
bits y_low uniform on [2^j], its bit j equal to (c - 2^j)·y_low xor β, and its bits above
j uniform and independent of the rest.  So bits are added from the lowest up, one level
j at a time, to a histogram P of the users placed so far over their low j bits:

1. every user already in P gets its bit j from a fair coin, which for a cell of N users
   is N = Bin(N, 1/2) + the rest (a cell's users are exchangeable; 1/2 is exact);
2. the codes of level j join with their own low bits: a code with few users draws them
   one by one; one with many (at least ``HEAVY`` times its 2^j cells) splits them over
   its 2^j low patterns by the same fair halving, cell by cell.

After level k-1, P is the histogram.  Users of code 0 (uniform on [2^k]) start in P.
Cost: 2^k binomials for the cascade, plus Σ_c min(m_c, HEAVY 2^j(c)) per code, instead of
Σ_c min(m_c, 2^(k-1)): a heavy value pays for the cells of its own level only, and
values whose codes are small (a Zipf head) cost next to nothing.

Uniform draws.  A code with few users needs one uniform y_low per user.  They come from
one 64-bit seed per level drawn from ``rng`` and the counter-based splitmix64 generator
(the high j bits of splitmix64(seed + u·γ) for the u-th user, γ its golden-ratio
increment; splitmix64 is a bijection of the 64-bit words, so a uniform seed gives a
uniform y_low).  With numba the users are drawn in a compiled loop (no array per user);
without it (or with ``LDP_NO_NUMBA=1``) the same formula runs on numpy arrays, a chunk of
users at a time: the two paths give the same histogram, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ldp.hashing import HAVE_NUMBA, numba
from ldp.streaming import GAMMA, repeat_in_chunks, splitmix64

#: A code of level j is split cell by cell (2^j binomials) once it has at least
#: HEAVY 2^j users; below, its users are drawn one by one (a binomial costs about ten
#: users' draws here).
HEAVY = 8
#: Cells (codes x low patterns) of heavy codes split at once: bounds the memory.
HEAVY_CELLS = 1 << 20


def halving_counts(totals: np.ndarray, bits: int, rng: np.random.Generator) -> np.ndarray:
    """Mult(totals[i], U[2^bits]) for each i, by fair halving, shape (len(totals), 2^bits).

    Each step gives every cell's users one more bit, Bin(N, 1/2) of them a 0: exact.
    Column y holds the users whose low ``bits`` bits are y.
    """
    cells = np.asarray(totals, dtype=np.int64)[:, None]
    for _ in range(bits):
        low = rng.binomial(cells, 0.5)
        cells = np.concatenate([low, cells - low], axis=1)
    return cells


def _place_light_numpy(flat, width, groups, codes, betas, counts, level, seed) -> None:
    """The reference path of :func:`_place_light`: the same draws, a chunk at a time."""
    shift = np.uint64(63 - level)
    offset = 0
    for which in repeat_in_chunks(np.arange(codes.shape[0]), counts):
        u = np.arange(offset + 1, offset + 1 + which.shape[0], dtype=np.uint64)
        offset += which.shape[0]
        with np.errstate(over="ignore"):
            z = splitmix64(seed + u * GAMMA)
        y = ((z >> np.uint64(1)) >> shift).astype(np.int64)
        bit = (np.bitwise_count(codes[which] & y) & 1) ^ betas[which]
        target = groups[which] * width + y + (bit.astype(np.int64) << level)
        flat += np.bincount(target, minlength=flat.shape[0])


if HAVE_NUMBA:

    @numba.njit(cache=True, nogil=True)
    def _place_light_kernel(
        flat, width, groups, codes, betas, counts, level, seed
    ):  # pragma: no cover
        gamma, mix1, mix2 = (
            np.uint64(0x9E3779B97F4A7C15),
            np.uint64(0xBF58476D1CE4E5B9),
            np.uint64(0x94D049BB133111EB),
        )
        shift = np.uint64(63 - level)
        one = np.uint64(1)
        u = np.uint64(0)
        for i in range(codes.shape[0]):
            base = groups[i] * width
            code = np.uint64(codes[i])
            beta = betas[i]
            for _ in range(counts[i]):
                u += one
                z = seed + u * gamma
                z = (z ^ (z >> np.uint64(30))) * mix1
                z = (z ^ (z >> np.uint64(27))) * mix2
                z = z ^ (z >> np.uint64(31))
                y = (z >> one) >> shift
                p = code & y
                p ^= p >> np.uint64(32)
                p ^= p >> np.uint64(16)
                p ^= p >> np.uint64(8)
                p ^= p >> np.uint64(4)
                p ^= p >> np.uint64(2)
                p ^= p >> one
                bit = np.int64(p & one) ^ beta
                flat[base + np.int64(y) + (bit << level)] += 1


def _place_light(flat, width, groups, codes, betas, counts, level, seed, use_numba) -> None:
    """Add each listed code's users, one uniform low pattern y each, to the flat P.

    ``codes`` are the codes with bit ``level`` removed (c - 2^level); user u of the list
    (counted from 1 across it) takes y = the high ``level`` bits of splitmix64(seed + u γ)
    and lands at groups·width + y + 2^level (codes·y xor β).  The compiled loop runs on
    one thread: it is bound by the scattered increments, and threads with private
    histograms of the level's width measured slower on this 2-core machine.
    """
    if use_numba and HAVE_NUMBA:
        _place_light_kernel(flat, width, groups, codes, betas, counts, level, seed)
    else:
        _place_light_numpy(flat, width, groups, codes, betas, counts, level, seed)


def coset_histograms(
    kept: np.ndarray,
    flipped: np.ndarray | None,
    rng: np.random.Generator,
    *,
    use_numba: bool = True,
) -> np.ndarray:
    """h[g] = Σ_c Mult(kept[g, c], U{c·y = 0}) + Mult(flipped[g, c], U{c·y = 1}), exactly.

    Parameters
    ----------
    kept : numpy.ndarray
        Shape (G, 2^k), non-negative int64: users of group g and code c on the even side
        (column 0: users uniform on all of [2^k]).
    flipped : numpy.ndarray or None
        Shape (G, 2^k): users on the odd side {c·y = 1} (column 0 must be 0: that set is
        empty).  None for none.
    rng : numpy.random.Generator
    use_numba : bool
        Draw the light codes' users with the compiled loop when numba is installed; the
        result is the same either way.

    Returns
    -------
    numpy.ndarray
        Shape (G, 2^k), int64: the histogram of each group over [2^k].
    """
    kept = np.asarray(kept, dtype=np.int64)
    groups_n, order = kept.shape
    bits = order.bit_length() - 1
    if order != 1 << bits:
        raise ValueError(f"the order must be a power of two, got {order}")
    sides = [(kept, 0)]
    if flipped is not None:
        flipped = np.asarray(flipped, dtype=np.int64)
        if flipped.shape != kept.shape or flipped[:, 0].any():
            raise ValueError("flipped must match kept, with no users at code 0")
        sides.append((flipped, 1))
    # The codes with users, by level (highest set bit), with their group and side.
    listed = []
    for counts, beta in sides:
        g, c = np.nonzero(counts[:, 1:])
        c = c + 1
        listed.append((g, c, np.full(c.shape[0], beta, dtype=np.int64), counts[g, c]))
    g_all, c_all, b_all, m_all = (np.concatenate(part) for part in zip(*listed, strict=True))
    level_all = np.frexp(c_all.astype(np.float64))[1].astype(np.int64) - 1  # highest bit
    cells = kept[:, :1].copy()  # P over the empty pattern: the users of code 0
    for level in range(bits):
        width = 2 << level  # patterns of the low level+1 bits
        low = rng.binomial(cells, 0.5)  # bit `level` of every user placed so far
        cells = np.concatenate([low, cells - low], axis=1)
        here = level_all == level
        if not here.any():
            continue
        g, code, beta, m = g_all[here], c_all[here] - (1 << level), b_all[here], m_all[here]
        flat = cells.reshape(-1)
        heavy = m >= HEAVY << level
        step = max(1, HEAVY_CELLS >> level)
        patterns = np.arange(1 << level, dtype=np.int64)
        for start in range(0, int(heavy.sum()), step):
            pick = np.flatnonzero(heavy)[start : start + step]
            split = halving_counts(m[pick], level, rng)  # (codes, 2^level)
            bit = (np.bitwise_count(code[pick, None] & patterns) & 1) ^ beta[pick, None]
            target = g[pick, None] * width + patterns + (bit.astype(np.int64) << level)
            flat += np.bincount(
                target.ravel(), weights=split.ravel(), minlength=flat.shape[0]
            ).astype(np.int64)
        light = ~heavy
        if light.any():
            seed = np.uint64(rng.integers(0, 2**64, dtype=np.uint64))
            _place_light(
                flat, width, g[light], code[light], beta[light], m[light], level, seed, use_numba
            )
    return cells.reshape(groups_n, order)
