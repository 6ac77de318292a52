"""SFP (Apple's sequence fragment puzzle): puzzle keys, assembly, engines, identification.

False-failure rates: the two-sample tests are at α = 1e-3 each (as in test_pem.py and
test_mcm.py); the fragment-estimate z-tests at 1e-4 (Bonferroni over the keys); the
identification test is guarded by a margin that a correct run misses with probability at
most 1e-4 (normal approximation, union bound over every key and candidate).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp import bits, metrics
from ldp.datasets import Dataset
from ldp.heavy_hitters.base import Population
from ldp.heavy_hitters.baseline import join_segments, segment
from ldp.heavy_hitters.sfp import SFP
from ldp.oracles import CMS, GRR, OLH
from tests.heavy_hitters.synthetic import ranked_dataset
from tests.heavy_hitters.test_strawman import chi2_same_law

ALPHA = 1e-3


def planted(n: int, m: int, heavy: int, share: float, seed: int) -> Dataset:
    """``heavy`` values holding ``share`` of the users each; the rest spread over 3000."""
    tail = (1 - heavy * share) / 3000
    return ranked_dataset(np.r_[np.full(heavy, share), np.full(3000, tail)], n, m, seed)


# ------------------------------------------------------------------------ parameters
@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"epsilon": 0}, ValueError, "epsilon"),
        ({"k": 0}, ValueError, "k"),
        ({"hash_bits": 0}, ValueError, "hash_bits"),
        ({"hash_bits": 25}, ValueError, "hash_bits"),
        ({"fragment_keep": 0}, ValueError, "fragment_keep"),
        ({"segment_bits": 0}, ValueError, "segment_bits"),
        ({"segment_bits": "long"}, ValueError, "segment_bits"),
        ({"segment_bits": 16, "query_limit": 2**12}, ValueError, "query_limit"),
        ({"variant": "best"}, ValueError, "variant"),
        ({"oracle": 3}, TypeError, "oracle"),
        ({"final_fraction": 1.5}, ValueError, "final_fraction"),
    ],
)
def test_bad_parameters_fail_at_construction(kwargs, error, name):
    with pytest.raises(error, match=name):
        SFP(**({"epsilon": 1.0, "k": 4, "m": 16} | kwargs))


def test_variants_and_budget_split():
    """original = Apple (CMS, ε/2 + ε/2 per user); improved = [PEM]'s conventions (OLH,
    budget split); partitioned = 10% of the users for the whole value."""
    original = SFP(epsilon=2.0, k=16, m=48, variant="original")
    improved = SFP(epsilon=2.0, k=16, m=48)
    assert (original.oracle, original.budget) == (CMS, "split")
    assert original.epsilon_per_part == {"value": 1.0, "fragment": 1.0}
    assert sum(original.epsilon_per_part.values()) == pytest.approx(2.0)  # composition
    assert (improved.oracle, improved.budget, improved.fragment_keep) == (OLH, "split", 32)
    assert improved.epsilon_per_part == {"value": 1.0, "fragment": 1.0}
    partitioned = SFP(epsilon=2.0, k=16, m=48, variant="partitioned")
    assert (partitioned.oracle, partitioned.budget) == (OLH, "partition")
    assert partitioned.epsilon_per_part == {"value": 2.0, "fragment": 2.0}  # one report each
    # auto: the fewest fragments whose Σ 2^{b+s} + k queries fit 2^20 (m = 48: 6 x 8 bits)
    assert improved.segment_bits == 8 and improved.queries(improved.bounds) <= 2**20


# ------------------------------------------------------------------------ the puzzle
def test_puzzle_keys_put_the_hash_above_the_fragment():
    protocol = SFP(epsilon=1.0, k=2, m=16, hash_bits=4, segment_bits=4)
    words = np.array([0xABCD, 0x1234], dtype=np.uint64)
    hashes = protocol.short_hash(words, np.uint64(99))
    for alpha, bound in enumerate(protocol.bounds):
        keys = protocol.puzzle_keys(words, hashes, bound)
        np.testing.assert_array_equal(keys >> np.uint64(4), hashes)
        np.testing.assert_array_equal(keys & np.uint64(15), segment(words, 16, *bound))
        assert bound == (4 * alpha, 4)


def test_assemble_combines_fragments_within_a_hash_only():
    """Candidates are per-hash products, and a candidate must hash to its bucket."""
    protocol = SFP(epsilon=1.0, k=2, m=16, hash_bits=4, segment_bits=8)
    seed = np.uint64(5)
    values = np.array([0x1122, 0x3344, 0x5566], dtype=np.uint64)
    hashes = protocol.short_hash(values, seed)
    assert len(set(hashes.tolist())) == 3  # (this seed keeps the three buckets apart)
    kept = [protocol.puzzle_keys(values, hashes, bound) for bound in protocol.bounds]
    # a stray fragment in value 0's bucket at position 1: two candidates there, one of
    # which (0x11 ‖ 0x77) hashes elsewhere and is dropped
    stray = (hashes[0] << np.uint64(8)) | np.uint64(0x77)
    kept[1] = np.r_[kept[1], stray]
    candidates = protocol.assemble(kept, seed)
    expected = set(values.tolist())
    if protocol.short_hash(np.array([0x1177], dtype=np.uint64), seed)[0] == hashes[0]:
        expected.add(0x1177)
    assert set(candidates.tolist()) == expected
    # no cross-bucket products (the strawman's 3 x 4 = 12 would include 0x1144)
    assert 0x1144 not in set(candidates.tolist())
    # a bucket missing at one position yields nothing
    assert protocol.assemble([kept[0], kept[1][:0]], seed).size == 0


def test_join_matches_segments_for_wide_values():
    """Fragments of 160-bit values glue back into the value (the URL data's width)."""
    protocol = SFP(epsilon=1.0, k=2, m=160, hash_bits=4)
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2**63, size=(5, 3), dtype=np.uint64)
    words[:, 0] &= np.uint64(2**32 - 1)  # 160 bits = 32 + 64 + 64
    parts = [segment(words, 160, *bound) for bound in protocol.bounds]
    np.testing.assert_array_equal(join_segments(parts, protocol.bounds, 160), words)


# ------------------------------------------------------------------------ engines
@pytest.mark.parametrize("engine", ["sampled", "reports"])
def test_fragment_estimates_are_unbiased(engine):
    """The per-position key estimates average to the keys' true counts (z-test at 1e-4),
    from :meth:`SFP.perturb`'s reports or from the sampled engine's histogram of keys."""
    data = planted(6000, 16, heavy=2, share=0.2, seed=3)
    protocol = SFP(epsilon=4.0, k=2, m=16, hash_bits=3, segment_bits=4, oracle=GRR)
    alpha, seed, reps = 1, np.uint64(17), 300
    bound, oracle = protocol.bounds[alpha], protocol.fragment_oracle(alpha)
    domain = np.arange(2**7, dtype=np.uint64)
    words = bits.to_words(data.values, 16)
    rng = np.random.default_rng(11)
    total, truth_sum = np.zeros(2**7), np.zeros(2**7)
    for _ in range(reps):
        if engine == "sampled":
            population = Population.sampled(
                data, 16, protocol.group_fractions(len(protocol.bounds)), rng
            )
            held, weights = population.words, population.weights([alpha])
        else:
            reports = protocol.perturb(data.values, rng, hash_seed=seed)
            assert reports.public["hash_seed"] == seed
            population = Population.reported(
                reports, len(protocol.group_fractions(len(protocol.bounds)))
            )
            held, weights = words, population.groups == alpha
        keys = protocol.puzzle_keys(held, protocol.short_hash(held, seed), bound)
        truth_sum += np.bincount(keys.astype(np.int64), weights=weights, minlength=2**7)
        total += population.estimates(oracle, domain, rng, groups=[alpha], part=alpha, keys=keys)
    # an upper bound of one estimate's variance: the group has ~1500 users (+10%), a key
    # at most half of them (GRR's variance grows with the count at this d)
    sd = math.sqrt(oracle.variance(1650, 825)) / math.sqrt(reps)
    z = (total - truth_sum) / reps / sd
    assert np.abs(z).max() < stats.norm.isf(1e-4 / (2 * 2**7)), z


def test_perturb_sends_what_the_budget_says():
    """split: every user sends a fragment and the value; partition: group 0 the value only."""
    data = planted(2000, 16, heavy=2, share=0.2, seed=3)
    for variant, value_senders in (("improved", 2000), ("partitioned", None)):
        protocol = SFP(epsilon=2.0, k=2, m=16, hash_bits=3, segment_bits=4, variant=variant)
        reports = protocol.perturb(data.values, np.random.default_rng(0))
        sizes = np.bincount(
            reports.groups, minlength=len(protocol.group_fractions(len(protocol.bounds)))
        )
        offset = int(variant == "partitioned")
        for alpha, part in enumerate(reports.parts):
            assert protocol.fragment_oracle(alpha).n_reports(part) == sizes[alpha + offset]
        expected = value_senders if value_senders is not None else sizes[0]
        assert protocol.value_oracle().n_reports(reports.value) == expected


def test_engines_agree_on_what_is_found():
    """The number of true heavy hitters found has the same law under both engines."""
    data = planted(8000, 16, heavy=4, share=0.06, seed=4)
    truth = data.top_k(4)
    protocol = SFP(epsilon=3.0, k=4, m=16, hash_bits=4, segment_bits=4)
    found = {}
    for engine in ("sampled", "reports"):
        rng = np.random.default_rng(21 if engine == "sampled" else 22)
        found[engine] = np.array(
            [
                metrics.identified_mask(truth, protocol.run(data, rng, engine).identified).sum()
                for _ in range(120)
            ]
        )
    assert 0 < found["sampled"].mean() < 4  # the test has power: neither all nor none
    assert chi2_same_law(found["sampled"], found["reports"]) > ALPHA


@pytest.mark.parametrize("variant", ["improved", "original", "partitioned"])
@pytest.mark.parametrize("engine", ["sampled", "reports"])
def test_finds_planted_heavy_hitters(engine, variant):
    """Four values with 20% of the users each are found, with a margin of > z(1e-4).

    The margin: the smallest gap between a planted key's expected count and the bar set
    by the biggest null key, in units of the estimates' standard deviation, exceeds the
    normal critical value Bonferroni-corrected over every key and candidate of a run.
    """
    data = planted(20_000, 16, heavy=4, share=0.2, seed=5)
    protocol = SFP(epsilon=4.0, k=4, m=16, hash_bits=4, segment_bits=4, variant=variant)
    eps = protocol.epsilon_per_part["fragment"]
    share_per_fragment = (1 - 0.1) / 4 if protocol.budget == "partition" else 1 / 4
    n_fragment = int(20_000 * share_per_fragment)
    oracle = protocol.oracle(epsilon=eps, domain_size=2**8)
    heavy = 0.2 * n_fragment
    # CMS: Σ n_u(n_u - 1) <= n max_u n_u bounds its collision term (keys hold <= 20%)
    extra = {"collisions": 0.2 * n_fragment**2} if protocol.oracle is CMS else {}
    sd = math.sqrt(oracle.variance(n_fragment, heavy, **extra))
    tests = 4 * 2**8 + protocol.query_limit
    assert heavy / (2 * sd) > stats.norm.isf(1e-4 / tests)
    result = protocol.run(data, np.random.default_rng(8), engine)
    assert metrics.f1(data.top_k(4), result.identified) == 1.0
    assert result.diagnostics["candidates_per_step"][:4] == [256] * 4
