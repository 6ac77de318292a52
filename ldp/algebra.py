"""Exact arithmetic several protocols share: primality, inverses modulo a prime and the
Walsh-Hadamard transform.

* :func:`is_prime`: the field size q of the projective-geometry oracles
  (:mod:`ldp.oracles.projective`, [PGR]) and of PI-RAPPOR (:mod:`ldp.oracles.pi_rappor`,
  [FT21]) must be prime;
* :func:`inverse_mod`: PI-RAPPOR's decoder solves each report's hyperplane for its top
  digit, dividing by a coefficient of F_q;
* :func:`walsh_hadamard`: Hadamard response (:mod:`ldp.oracles.hadamard`, [HR]) and
  Apple's one-bit Hadamard count-mean sketch (:mod:`ldp.oracles.count_mean_sketch`,
  [Apple]) sum their ±1 reports through the unnormalised Sylvester-Hadamard matrix.

The tags are those of the modules named.

>>> [q for q in range(20) if is_prime(q)]
[2, 3, 5, 7, 11, 13, 17, 19]
>>> inverse_mod([1, 2, 3, 4, 5, 6], 7).tolist()
[1, 4, 5, 2, 3, 6]
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


#: The largest modulus whose products of two residues stay below 2^63 (int64).
INVERSE_MOD_LIMIT = 3_037_000_499


def inverse_mod(values: object, q: int) -> np.ndarray:
    """c^-1 mod q for each c (0 for c = 0 mod q), q prime: Fermat's c^(q-2) by squaring,
    vectorised, so its cost is O(len(values) log q) whatever q (a table over all of F_q
    took minutes and gigabytes at q near 2^31).  Products of two residues stay below 2^63
    for q <= :data:`INVERSE_MOD_LIMIT`; a larger q is refused."""
    q = int(q)
    if not 2 <= q <= INVERSE_MOD_LIMIT:
        raise ParameterError("q", q, f"a prime in [2, {INVERSE_MOD_LIMIT}]")
    residues = np.asarray(values, dtype=np.int64) % q
    result, base, exponent = np.ones_like(residues), residues.copy(), q - 2
    while exponent:
        if exponent & 1:
            result = result * base % q
        base = base * base % q
        exponent >>= 1
    result[residues == 0] = 0
    return result


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
