"""Exact arithmetic several protocols share: primality and the Walsh-Hadamard transform.

* :func:`is_prime`: the field size q of the projective-geometry oracles
  (:mod:`ldp.oracles.projective`, [PGR]) and of PI-RAPPOR (:mod:`ldp.oracles.pi_rappor`,
  [FT21]) must be prime;
* :func:`walsh_hadamard`: Hadamard response (:mod:`ldp.oracles.hadamard`, [HR]) and
  Apple's one-bit Hadamard count-mean sketch (:mod:`ldp.oracles.count_mean_sketch`,
  [Apple]) sum their ±1 reports through the unnormalised Sylvester-Hadamard matrix.

The tags are those of the modules named.

>>> [q for q in range(20) if is_prime(q)]
[2, 3, 5, 7, 11, 13, 17, 19]
>>> walsh_hadamard([1, 0, 0, 0]).tolist(), walsh_hadamard([0, 1, 0, 0]).tolist()
([1, 1, 1, 1], [1, -1, 1, -1])
"""

from __future__ import annotations

import numbers

import numpy as np

from ldp.validation import ParameterError

#: Miller-Rabin with these 13 bases (the primes up to 41) decides primality exactly below
#: :data:`PRIME_TEST_LIMIT` (Sorenson and Webster, Math. Comp. 86 (2017), psi_13).
PRIME_TEST_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
PRIME_TEST_LIMIT = 3_317_044_064_679_887_385_961_981


def is_prime(m: int) -> bool:
    """Whether the integer ``m`` is prime: deterministic Miller-Rabin, exact for every
    ``m`` below :data:`PRIME_TEST_LIMIT` (about 3.3 x 10^24); larger ``m`` are refused."""
    if isinstance(m, bool) or not isinstance(m, numbers.Integral):
        raise TypeError(f"m must be an integer, got {type(m).__name__}")
    m = int(m)
    if m >= PRIME_TEST_LIMIT:
        raise ParameterError("m", m, f"< {PRIME_TEST_LIMIT}", "where the test is exact")
    if m < 2:
        return False
    if m in PRIME_TEST_BASES:
        return True
    if any(m % b == 0 for b in PRIME_TEST_BASES):
        return False
    d, s = m - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for b in PRIME_TEST_BASES:
        x = pow(b, d, m)
        if x in (1, m - 1):
            continue
        for _ in range(s - 1):
            x = x * x % m
            if x == m - 1:
                break
        else:
            return False
    return True


def walsh_hadamard(x: object) -> np.ndarray:
    """x H_K along the last axis of ``x`` (K its length, a power of two), in x's dtype.

    H_K is Sylvester's, unnormalised and symmetric: (x H_K)[c] = Σ_y (-1)^popcount(c & y)
    x[y].  log2 K butterfly passes over the whole array, K log2 K additions per row; exact
    on integers.  A 2-D ``x`` transforms each row.
    """
    out = np.array(x, copy=True)
    k = out.shape[-1] if out.ndim else 0
    if k < 1 or k & (k - 1):
        raise ValueError(f"x must have a power-of-two length, got shape {out.shape}")
    lead = out.shape[:-1]
    h = 1
    while h < k:
        pairs = out.reshape(*lead, k // (2 * h), 2, h)  # a view: ``out`` is contiguous
        top, bottom = pairs[..., 0, :].copy(), pairs[..., 1, :]
        pairs[..., 0, :] += bottom
        pairs[..., 1, :] = top - bottom
        h *= 2
    return out
