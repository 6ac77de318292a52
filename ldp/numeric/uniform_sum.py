"""The exact law of a sum of independent uniform integers, in O(rows · log size) draws.

PM's sampled engine (:mod:`ldp.numeric.piecewise`) needs Σ_u U_u where U_u is uniform on
{0, ..., N_u - 1} and the N_u take few distinct values (a row per size, ``counts[r]``
users of size ``sizes[r]``).  Drawing the users is O(n); this draws the same law with one
multinomial per row and one binomial per bit:

* a uniform on {0, ..., N - 1} is a mixture of uniforms on dyadic blocks, one per set bit
  i of N: the top bit's block [0, 2^top), then each lower set bit i's block
  [o_i, o_i + 2^i), o_i = N with its bits 0..i cleared, chosen with probability 2^i/N;
* so the users of a row split over the blocks as Multinomial(count, (2^i/N)_i), and each
  user's value is its block's offset plus i independent fair bits (weights 2^0..2^{i-1});
* the bits of all users are independent, so the weight-2^j bits sum to Bin(M_j, 1/2),
  M_j the number of users (of every row) whose block has more than j bits.

The sum is Σ (users in block) · o_i + Σ_j 2^j Bin(M_j, 1/2), a Python int.  Rows of at
most :data:`FEW_USERS` users are cheaper drawn user by user (``rng.integers``), which is
the same law.  The only
departure from the exact law is numpy's: binomial and multinomial probabilities are
float64 (here 2^i/N, rounded within 2^-53 relative).

>>> import numpy as np
>>> total = uniform_sum(np.random.default_rng(0), np.array([3, 0]), np.array([5, 7]))
>>> 0 <= total <= 3 * 4
True
"""

from __future__ import annotations

import numpy as np

#: Rows drawn at once: bounds the (rows x bits) working arrays to a few MiB.
CHUNK_ROWS = 2**14
#: Rows with at most this many users are drawn user by user (a row's multinomial costs
#: about one binomial per bit of its size).
FEW_USERS = 8
#: Sizes above this would lose exactness in float64 (2^i/N, the bit lengths).
MAX_SIZE = 2**53


def uniform_sum(rng: np.random.Generator, counts: np.ndarray, sizes: np.ndarray) -> int:
    """Σ_r Σ_{u < counts[r]} U_{r,u}, every U_{r,u} independent uniform on {0..sizes[r]-1}.

    Parameters
    ----------
    rng : numpy.random.Generator
    counts : array of int
        How many users each row has (>= 0).
    sizes : array of int
        The size N >= 1 of each row's range (below 2^53); ignored where the count is 0.

    Returns
    -------
    int
        The sum, drawn from its exact law (see the module docstring).
    """
    counts = np.asarray(counts, dtype=np.int64).ravel()
    sizes = np.asarray(sizes, dtype=np.int64).ravel()
    if counts.shape != sizes.shape:
        raise ValueError(f"counts and sizes differ in shape: {counts.shape}, {sizes.shape}")
    if (counts < 0).any():
        raise ValueError("counts must be >= 0")
    used = counts > 0
    counts, sizes = counts[used], sizes[used]
    if counts.size == 0:
        return 0
    if sizes.min() < 1 or sizes.max() >= MAX_SIZE:
        raise ValueError(f"sizes must be in [1, 2^53), got {sizes.min()}..{sizes.max()}")
    small = counts <= FEW_USERS
    offsets_total = _direct(rng, counts[small], sizes[small])
    counts, sizes = counts[~small], sizes[~small]
    if counts.size == 0:
        return offsets_total
    width = int(sizes.max()).bit_length()
    longer = np.zeros(width, dtype=np.int64)  # M_j: users whose block has more than j bits
    for start in range(0, counts.size, CHUNK_ROWS):
        chunk = slice(start, start + CHUNK_ROWS)
        offsets_total += _blocks(rng, counts[chunk], sizes[chunk], longer)
    bits = rng.binomial(longer, 0.5)
    return offsets_total + sum(int(b) << j for j, b in enumerate(bits.tolist()))


def _direct(rng: np.random.Generator, counts: np.ndarray, sizes: np.ndarray) -> int:
    """The sum drawn user by user (rows with few users, where it is cheaper)."""
    draws = rng.integers(0, np.repeat(sizes, counts))
    if draws.size * float(sizes.max(initial=0)) < 2.0**62:
        return int(draws.sum())
    return sum(draws.tolist())


def _blocks(rng: np.random.Generator, counts: np.ndarray, sizes: np.ndarray, longer) -> int:
    """Split each row's users over its blocks; add their free bits to ``longer`` and return
    the sum of their blocks' offsets."""
    width = longer.shape[0]
    top = np.frexp(sizes.astype(np.float64))[1] - 1  # exact: sizes < 2^53
    bit = np.arange(width)
    lower = ((sizes[:, None] >> bit) & 1).astype(bool) & (bit < top[:, None])
    pvals = np.empty((sizes.shape[0], width + 1))
    pvals[:, :width] = np.where(lower, np.ldexp(1.0, bit) / sizes[:, None], 0.0)
    pvals[:, width] = np.ldexp(1.0, top) / sizes  # the top block: numpy's remainder
    drawn = rng.multinomial(counts, pvals)
    in_lower, in_top = drawn[:, :width], drawn[:, width]
    # a lower block i has i free bits: it adds to M_j for j < i
    per_bit = in_lower.sum(axis=0)
    longer[:-1] += np.cumsum(per_bit[::-1])[::-1][1:]
    # the top block has `top` free bits
    at_top = np.zeros(width + 1, dtype=np.int64)
    np.add.at(at_top, top, in_top)
    longer += np.cumsum(at_top[::-1])[::-1][1:]
    offsets = (sizes[:, None] >> (bit + 1)) << (bit + 1)
    if float(np.dot(counts.astype(np.float64), sizes.astype(np.float64))) < 2.0**62:
        return int((in_lower * offsets).sum())
    rows, columns = np.nonzero(in_lower)
    return sum(
        int(a) * int(b)
        for a, b in zip(in_lower[rows, columns], offsets[rows, columns], strict=True)
    )
