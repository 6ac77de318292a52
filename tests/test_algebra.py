"""The shared arithmetic of :mod:`ldp.algebra`: primality against a sieve, the transform
against Sylvester's matrix."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import hadamard

from ldp.algebra import INVERSE_MOD_LIMIT, PRIME_TEST_LIMIT, inverse_mod, is_prime, walsh_hadamard
from ldp.validation import ParameterError


def test_is_prime_agrees_with_a_sieve() -> None:
    sieve = np.ones(20_000, dtype=bool)
    sieve[:2] = False
    for m in range(2, 142):
        sieve[m * m :: m] = False
    assert [m for m in range(20_000) if is_prime(m)] == np.flatnonzero(sieve).tolist()
    assert is_prime(2**31 - 1) and not is_prime(2**32 + 1)  # 641 x 6,700,417
    assert is_prime(np.int64(151)) and not is_prime(-7)


def test_is_prime_is_exact_where_fewer_bases_are_fooled() -> None:
    """3,825,123,056,546,413,051 = 149491 x 747451 x 34233211 is a strong pseudoprime to
    every prime base up to 31: base 37 shows it composite."""
    assert 149491 * 747451 * 34233211 == 3_825_123_056_546_413_051
    assert not is_prime(3_825_123_056_546_413_051)
    assert is_prime(2**61 - 1) and not is_prime(2**67 - 1)  # Mersenne: prime, composite
    with pytest.raises(ParameterError, match="m must be <"):
        is_prime(PRIME_TEST_LIMIT)
    with pytest.raises(TypeError):
        is_prime(7.0)


def test_walsh_hadamard_is_sylvesters_matrix() -> None:
    rng = np.random.default_rng(3)
    for k in (1, 2, 8, 64):
        x = rng.integers(-50, 50, size=k)
        out = walsh_hadamard(x)
        assert out.dtype == x.dtype and np.array_equal(out, hadamard(k) @ x)
    rows = rng.normal(size=(3, 64))
    before = rows.copy()
    np.testing.assert_allclose(walsh_hadamard(rows), before @ hadamard(64), atol=1e-10)
    assert np.array_equal(rows, before)  # the input is left as it was
    for bad in (np.zeros(6), np.zeros((2, 6)), np.float64(1.0)):
        with pytest.raises(ValueError, match="power-of-two length"):
            walsh_hadamard(bad)


def test_inverse_mod_inverts_every_residue_up_to_the_largest_prime() -> None:
    for q in (2, 3, 7, 101, 65_537):
        c = np.arange(q, dtype=np.int64)
        inverse = inverse_mod(c, q)
        assert inverse[0] == 0 and np.all(c[1:] * inverse[1:] % q == 1)
    q = 2**31 - 1  # PI-RAPPOR's largest field, where a table over F_q never finished
    c = np.random.default_rng(3).integers(1, q, size=100_000)
    inverse = inverse_mod(c, q)
    assert np.all(c * inverse % q == 1) and np.all((inverse >= 1) & (inverse < q))
    assert inverse[:1000].tolist() == [pow(int(x), -1, q) for x in c[:1000]]
    with pytest.raises(ParameterError, match="^q "):
        inverse_mod([1], INVERSE_MOD_LIMIT + 1)
