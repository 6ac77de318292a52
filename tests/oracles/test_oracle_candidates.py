"""``estimate(reports, candidates=C)`` equals the full-domain estimate at C, same reports.

Deterministic: one set of reports per protocol, candidates unsorted, repeated and of
several integer dtypes, and the wide-domain (multi-word) path of the hashing protocols.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle_testing import COUNTS, PROTOCOLS, make_oracle, seed_for, users

from ldp.oracles import GRR, OLH
from ldp.oracles.base import PureOracle

CANDIDATE_SETS = {
    "unsorted-repeated": np.array([7, 0, 15, 7, 3], dtype=np.int64),
    "uint64": np.array([15, 14, 1], dtype=np.uint64),
    "single": np.array([5], dtype=np.int32),
    "all-reversed": np.arange(16)[::-1].copy(),
    "empty": np.array([], dtype=np.int64),
}


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
@pytest.mark.parametrize("name", PROTOCOLS)
def test_candidate_estimates_equal_full_domain(name: str, epsilon: float) -> None:
    oracle = make_oracle(name, epsilon)
    reports = oracle.perturb(users(COUNTS), seed_for("candidates", name, epsilon))
    full = oracle.estimate(reports)
    assert full.shape == (16,)
    for label, chosen in CANDIDATE_SETS.items():
        estimate = oracle.estimate(reports, candidates=chosen)
        expected = full[chosen.astype(np.int64)]
        assert estimate.shape == expected.shape, label
        if name == "SHE":  # a sum of floats over users: the order of additions may differ
            np.testing.assert_allclose(estimate, expected, rtol=0, atol=1e-9, err_msg=label)
        else:  # integer support counts through the same affine map: bit-identical
            np.testing.assert_array_equal(estimate, expected, err_msg=label)


def test_wide_domain_candidates_match_their_one_word_equivalents() -> None:
    """Keys below 2^64 written as two words hash as two words, consistently.

    An OLH over 2^80 values takes values and candidates as (n, 2) uint64 words; the
    estimate of a candidate must not depend on which other candidates are asked about.
    """
    oracle = OLH(epsilon=2.0, domain_size=2**80)
    rng = seed_for("wide-candidates")
    values = np.array([[1, 5]] * 300 + [[0, 5]] * 200 + [[2**15, 2**64 - 1]] * 100, dtype=np.uint64)
    reports = oracle.perturb(values, rng)
    chosen = np.array([[1, 5], [0, 5], [2**15, 2**64 - 1], [3, 3]], dtype=np.uint64)
    together = oracle.estimate(reports, candidates=chosen)
    one_by_one = np.concatenate([oracle.estimate(reports, candidates=c[None]) for c in chosen])
    np.testing.assert_array_equal(together, one_by_one)


@pytest.mark.parametrize(
    ("domain_size", "n"), [(3_000_000, 10_000), (1000, 50), (1000, 100_000), (17, 3), (5, 0)]
)
def test_grr_full_domain_estimate_is_the_generic_one_bit_for_bit(domain_size: int, n: int):
    """GRR's full-domain estimate counts only the reported values when they are few (the
    others share one constant); it must equal the generic histogram path exactly, on both
    sides of its switch (n < d/8, n >= d/8) and with no report at all."""
    oracle = GRR(epsilon=5.0, domain_size=domain_size)
    rng = np.random.default_rng(domain_size + n)
    reports = oracle.perturb(rng.integers(0, domain_size, n), rng)
    fast, generic = oracle.estimate(reports), PureOracle.estimate(oracle, reports)
    assert fast.dtype == generic.dtype and fast.shape == generic.shape
    assert np.array_equal(fast.view(np.int64), generic.view(np.int64))
