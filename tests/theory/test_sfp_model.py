"""ldp.theory.sfp: the mean-field model of what SFP identifies, against SFP's own runs.

* The top-K event is exact where symmetry makes it so: N keys alike share K slots, each
  kept with probability K/N; with no more keys than slots every key is kept.
* Simulations: at four ε on a small exponential data set, the mean F1 of 100 sampled runs
  is within 0.04 + z SE of the model (z for a two-sided 1e-4 over the four points).  The
  0.04 is the model's own allowance (mean field: the K-th largest estimate replaced by its
  threshold, hash-consistent false combinations left out); measured here it is off by at
  most 0.025.  The check has power: a model with half the kept fragments, or one at 1.1 ε,
  misses the runs by more (both planted below).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import bits, metrics
from ldp.heavy_hitters import SFP
from ldp.theory import sfp as model
from tests.heavy_hitters.synthetic import exponential

EPSILONS = (1.0, 1.5, 2.0, 3.0)
RUNS = 100
ALLOWANCE = 0.04
Z = stats.norm.isf(1e-4 / (2 * len(EPSILONS)))
K, M, HASH_BITS, SEGMENT_BITS = 8, 32, 6, 8


def test_alike_keys_share_the_slots_evenly():
    levels, multiplicity = np.array([500.0]), np.array([40])
    kept = model._kept(levels, multiplicity, np.array([30.0]), 10, zeros=0, zero_sd=30.0)
    assert kept == pytest.approx([10 / 40], rel=1e-9)
    # zeros alike too: 10 slots among 40 keys at 0
    kept = model._kept(np.zeros(1), np.array([30]), np.array([5.0]), 10, zeros=10, zero_sd=5.0)
    assert kept == pytest.approx([10 / 40], rel=1e-9)
    everything = model._kept(np.array([3.0, 1.0]), np.array([2, 3]), np.ones(2), 8, 3, 1.0)
    assert np.all(everything == 1.0)


def test_weighted_candidates_fill_exactly_k_slots():
    means, sds = np.linspace(0, 100, 50), np.full(50, 20.0)
    weights = np.linspace(1.0, 0.2, 50)
    found = model._weighted_top(means, sds, weights, 10)
    assert found.sum() == pytest.approx(10, rel=1e-6)
    assert np.all(found <= weights + 1e-15)
    assert np.all(model._weighted_top(means, sds, weights * 0.1, 10) == weights * 0.1)


@pytest.fixture(scope="module")
def runs_and_data():
    data = exponential(100_000, M, scale=0.1, support=500, seed=3)
    words = bits.to_words(np.asarray(data.values), data.m)
    distinct, counts = np.unique(words, return_counts=True)
    measured = {}
    for epsilon in EPSILONS:
        protocol = SFP(epsilon=epsilon, k=K, m=M, hash_bits=HASH_BITS, segment_bits=SEGMENT_BITS)
        f1 = [
            metrics.f1(data.top_k(K), protocol.run(data, np.random.default_rng(seed)).identified)
            for seed in range(RUNS)
        ]
        measured[epsilon] = (np.mean(f1), np.std(f1, ddof=1) / np.sqrt(RUNS))
    return data, distinct, counts, measured


def _predicted(data, distinct, counts, epsilon, **changes) -> float:
    protocol = SFP(epsilon=epsilon, k=K, m=M, hash_bits=HASH_BITS, segment_bits=SEGMENT_BITS)
    if changes:
        protocol = SFP(
            epsilon=epsilon * changes.get("epsilon_factor", 1.0),
            k=K,
            m=M,
            hash_bits=HASH_BITS,
            segment_bits=SEGMENT_BITS,
            fragment_keep=changes.get("fragment_keep"),
        )
    keys = model.puzzle_keys(protocol, distinct, counts, range(8))
    return model.sfp_utility(protocol, keys, data.n, "f1")


def _misses(runs_and_data, **changes) -> list[float]:
    """Per ε: how far the runs sit outside the model's tolerance (<= 0: inside)."""
    data, distinct, counts, measured = runs_and_data
    out = []
    for epsilon in EPSILONS:
        mean, se = measured[epsilon]
        predicted = _predicted(data, distinct, counts, epsilon, **changes)
        out.append(abs(mean - predicted) - (ALLOWANCE + Z * se))
    return out


def test_the_runs_sit_on_the_model(runs_and_data):
    assert max(_misses(runs_and_data)) <= 0
    # and the F1 spans the curve: neither all nor nothing is found throughout
    means = [runs_and_data[3][e][0] for e in EPSILONS]
    assert min(means) < 0.3 and max(means) > 0.9


@pytest.mark.parametrize(
    "planted", [{"fragment_keep": K}, {"epsilon_factor": 1.1}], ids=["half-kept", "eps+10%"]
)
def test_a_wrong_model_misses_the_runs(runs_and_data, planted):
    assert max(_misses(runs_and_data, **planted)) > 0


def test_ncr_and_bad_input():
    data = exponential(20_000, 16, scale=0.2, support=100, seed=1)
    words = bits.to_words(np.asarray(data.values), data.m)
    distinct, counts = np.unique(words, return_counts=True)
    protocol = SFP(epsilon=8.0, k=4, m=16, hash_bits=4, segment_bits=4)
    keys = model.puzzle_keys(protocol, distinct, counts, (0, 1))
    # ε = 8 on 20,000 users: the four most frequent are found all but surely
    assert model.sfp_utility(protocol, keys, data.n, "ncr") == pytest.approx(1.0, abs=1e-3)
    assert model.sfp_utility(protocol, keys, data.n, "f1") == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match="goal"):
        model.sfp_utility(protocol, keys, data.n, "recall")
    threshold = SFP(epsilon=8.0, k=4, m=16, hash_bits=4, segment_bits=4, output="threshold")
    with pytest.raises(Exception, match="output"):
        model.sfp_utility(threshold, keys, data.n)


def test_puzzle_keys_refuse_counts_that_do_not_fit():
    protocol = SFP(epsilon=1.0, k=2, m=16, hash_bits=4, segment_bits=4)
    words = np.arange(4, dtype=np.uint64)
    with pytest.raises(ValueError, match="one positive count"):
        model.puzzle_keys(protocol, words, [1, 2, 3], (0,))
    with pytest.raises(ValueError, match="positive"):
        model.puzzle_keys(protocol, words, [1, 0, 3, 4], (0,))
