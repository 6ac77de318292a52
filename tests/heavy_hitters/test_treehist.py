"""TreeHist ([BNST] Sec. 3): engines agree, the threshold rule is what it says, the top-k form
is PEM with γ = 0 and η = 1, privacy is the oracle's.

Every statistical assertion states its false-failure rate α.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp import audit, metrics, registry
from ldp.datasets.base import Dataset
from ldp.heavy_hitters import PEM, TreeHist
from ldp.oracles import GRR, OLH, OUE
from ldp.privacy import max_privacy_loss
from tests.heavy_hitters.synthetic import exponential, zipf

ALPHA = 1e-4


def _chi2_same_distribution(a: np.ndarray, b: np.ndarray) -> float:
    """p-value of a chi-square test that two samples of small integers share one law
    (levels seen fewer than 5 times in all are pooled into one cell)."""
    levels, totals = np.unique(np.concatenate([a, b]), return_counts=True)
    rare = levels[totals < 5]
    cells = [
        [np.sum(x == v) for v in levels[totals >= 5]] + [np.isin(x, rare).sum()] for x in (a, b)
    ]
    table = np.array(cells)
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] < 2:
        return 1.0
    return stats.chi2_contingency(table)[1]


def test_engines_agree_in_law():
    """Reports and sampled engines: same law of the number of true top-k values found and of
    the number of prefixes kept at levels 4, 8 and 12.  Chi-square, α = 1e-4 each.  (The
    top-k form is PEM's loop, seed for seed: below, and PEM's own engine test.)"""
    data = zipf(n=6_000, m=12, s=1.2, support=300, seed=3)
    protocol = TreeHist(epsilon=3.0, k=6, m=12, z=2.0)
    true_top = data.top_k(6)
    samples = {}
    for engine, first in (("sampled", 0), ("reports", 10_000)):
        found, kept = [], []
        for seed in range(first, first + 250):
            result = protocol.run(data, np.random.default_rng(seed), engine=engine)
            found.append(metrics.identified_mask(true_top, result.identified).sum())
            per_level = result.diagnostics["kept_per_step"] + [0] * 12
            kept.append([per_level[3], per_level[7], per_level[11]])
        samples[engine] = [np.array(found)] + list(np.array(kept).T)
    for sampled, reports in zip(samples["sampled"], samples["reports"], strict=True):
        assert _chi2_same_distribution(sampled, reports) > ALPHA


@pytest.mark.parametrize("engine", ["sampled", "reports"])
def test_top_k_form_is_pem_with_one_bit_per_group(engine):
    """The top-k form draws exactly what PEM(γ = 0, η = 1, |C_i| = k) draws, seed for seed,
    so [PEM] Eq. (4) applies to it through ``pem_config``."""
    data = zipf(n=5_000, m=10, s=1.3, support=200, seed=1)
    tree = TreeHist(epsilon=2.0, k=4, m=10, form="top-k")
    pem = PEM(epsilon=2.0, k=4, m=10, eta=1, gamma=0)
    assert pem.config == tree.pem_config()
    for seed in range(3):
        a = tree.run(data, np.random.default_rng(seed), engine=engine)
        b = pem.run(data, np.random.default_rng(seed), engine=engine)
        np.testing.assert_array_equal(a.identified, b.identified)
        np.testing.assert_allclose(a.estimates, b.estimates)


def test_threshold_constant_and_order_sqrt_n():
    """z = Φ⁻¹(1 - β/(2 m w)) (≈ 4.22 at m = 64, w = 32, β = 0.05); τ_ℓ grows as √n_ℓ."""
    protocol = TreeHist(epsilon=2.0, k=16, m=64)
    assert protocol.width == 32
    assert protocol.z_value == pytest.approx(stats.norm.isf(0.05 / (2 * 64 * 32)))
    assert protocol.z_value == pytest.approx(4.2201, abs=1e-4)
    tau = protocol.level_threshold(10, 10_000)
    assert protocol.level_threshold(10, 40_000) == pytest.approx(2 * tau)
    oracle = OLH(epsilon=2.0, domain_size=2**10)
    p, q = oracle.p_star, oracle.q_star
    assert tau == pytest.approx(protocol.z_value * math.sqrt(10_000 * q * (1 - q)) / (p - q))
    assert TreeHist(epsilon=2.0, k=16, m=64, z=3.0).z_value == 3.0


def test_unheld_prefixes_survive_at_the_rate_the_threshold_implies():
    """Two values, 0...0 and 1...1: every other child the walk queries is held by nobody.

    With GRR at level ℓ, a zero-count child's support is Bin(n_ℓ, q) (the other candidates'
    supports only change the law jointly, not this margin), so it survives with probability
    P[Bin(n_ℓ, q) >= n_ℓ q + τ_ℓ (p - q)].  Over many runs, the number of survivors among
    the zero-count children queried at level 2 is binomial with that mean: two-sided exact
    binomial test, α = 1e-4.
    """
    m, n = 6, 6_000
    values = np.repeat(np.array([0, 2**m - 1], dtype=np.uint64), n // 2)
    data = Dataset(name="two", values=values, m=m, source="synthetic")
    protocol = TreeHist(epsilon=1.0, k=2, m=m, oracle=GRR, z=1.0)
    queried = survived = 0
    expected = 0.0
    for seed in range(400):
        result = protocol.run(data, np.random.default_rng(seed), engine="sampled")
        if len(result.diagnostics["kept_prefixes"]) < 2:
            continue
        level1 = result.diagnostics["kept_prefixes"][0]
        level2 = result.diagnostics["kept_prefixes"][1]
        zero_children = np.setdiff1d(
            np.concatenate([[2 * c, 2 * c + 1] for c in level1]).astype(np.uint64),
            np.array([0, 3], dtype=np.uint64),
        )
        n2 = result.diagnostics["groups"][1]
        oracle = GRR(epsilon=1.0, domain_size=4)
        p, q = oracle.p_star, oracle.q_star
        tau = protocol.level_threshold(2, n2)
        need = math.ceil(n2 * q + tau * (p - q) - 1e-9)
        expected += len(zero_children) * stats.binom.sf(need - 1, n2, q)
        queried += len(zero_children)
        survived += int(np.isin(zero_children, level2).sum())
    assert queried > 200
    rate = expected / queried
    assert stats.binomtest(survived, queried, rate).pvalue > ALPHA


def test_finds_the_heavy_hitters_at_large_epsilon():
    """Exponential data (n = 10^6, m = 64, [PEM] Sec. VI-A), ε = 4: both forms find most of the
    top 16 (mean F1 over 5 runs > 0.8), and every threshold-form survivor passed τ_m."""
    data = exponential(n=10**6, m=64, seed=5)
    for form in ("threshold", "top-k"):
        protocol = TreeHist(epsilon=4.0, k=16, m=64, form=form)
        results = [protocol.run(data, np.random.default_rng(s)) for s in range(5)]
        assert np.mean([metrics.f1(data.top_k(16), r.identified) for r in results]) > 0.8
    result = results[0]
    assert result.diagnostics["kept_per_step"][-1] <= protocol.k


def test_threshold_version_outputs_only_values_above_theta():
    data = exponential(n=10**6, m=64, seed=5)
    protocol = TreeHist(epsilon=4.0, k=32, m=64, threshold=0.023)
    result = protocol.run(data, np.random.default_rng(0))
    assert np.all(result.estimates >= 0.023 * data.n)
    assert 0 < len(result.identified) <= protocol.width


def test_values_wider_than_64_bits_both_engines():
    """160-bit byte values: prefixes cross the word boundary; both engines find the top 2."""
    rng = np.random.default_rng(0)
    names = np.array([f"site{i:02d}.example.org".ljust(20).encode() for i in range(20)], "S20")
    weights = 0.5 ** np.arange(20)
    data = Dataset(
        name="urls",
        values=names[rng.choice(20, size=40_000, p=weights / weights.sum())],
        m=160,
        source="synthetic",
    )
    protocol = TreeHist(epsilon=4.0, k=2, m=160)
    for engine in ("sampled", "reports"):
        result = protocol.run(data, np.random.default_rng(1), engine=engine)
        assert result.identified.dtype == np.dtype("S20")
        assert metrics.f1(data.top_k(2), result.identified) == 1.0


@pytest.mark.parametrize("oracle", [OLH, OUE, GRR])
def test_a_level_report_is_exactly_epsilon_ldp(oracle):
    """A level-ℓ user's report is the oracle's report of the prefix: its declared privacy
    loss ([FO] Warner model, ``ldp.privacy``) between values with distinct prefixes is ε."""
    protocol = TreeHist(epsilon=1.5, k=2, m=8, oracle=oracle)
    client = protocol.client(3)
    prefixes = np.array([client.oracle_input(v) for v in (0, 37, 255)])
    assert prefixes.tolist() == [0, 1, 7]
    loss = max_privacy_loss(client.oracle, values=prefixes)
    assert loss == pytest.approx(1.5, rel=1e-9)


AUDIT_TRIALS = 50_000
V, V_PRIME = 0x0123456789ABCDEF, 0x0123456789ABCDEF ^ (1 << 40)  # first differ at bit 24


def _audit(client, v, v_prime, key):
    rng = np.random.default_rng(np.random.SeedSequence(14, spawn_key=key))
    return audit.lower_bound(client, v, v_prime, rng=rng, trials=AUDIT_TRIALS, alpha=ALPHA)


@pytest.mark.parametrize(
    ("oracle", "epsilon", "m", "level"),
    [
        (OLH, 0.5, 64, 30),
        (OLH, 2.0, 64, 30),
        (OLH, 6.0, 64, 64),
        (OUE, 2.0, 16, 8),
        (GRR, 2.0, 16, 7),
    ],
)
def test_a_level_client_passes_the_audit(oracle, epsilon, m, level):
    """``ldp.audit`` on the real client of one level (the prefixes of the two values differ):
    no false alarm (bound <= ε; it exceeds the true loss with probability <= α = 1e-4), and
    tight: at least the bound the optimal event reaches except with probability α
    (``audit.expected_lower_bound`` at the α/2 quantile)."""
    v, v_prime = (V, V_PRIME) if m == 64 else (0x89AB, 0x89AB ^ (1 << 9))
    client = TreeHist(epsilon=epsilon, k=4, m=m, oracle=oracle).client(level)
    assert client.oracle_input(v) != client.oracle_input(v_prime)
    result = _audit(client, v, v_prime, (int(epsilon * 10), m, level))
    assert result.epsilon <= epsilon * (1 + 1e-12), str(result)
    p, p_other = audit.optimal_event_probabilities(client.oracle)
    reachable = audit.expected_lower_bound(
        p,
        p_other,
        result.trials,
        alpha=result.alpha,
        hypotheses=result.hypotheses,
        quantile=ALPHA / 2,
    )
    assert result.epsilon >= reachable >= 0.7 * epsilon, str(result)


def test_a_level_above_the_first_difference_leaks_nothing():
    """Level 20: V and V' share their 20-bit prefix, so the reports have one law; the audit's
    bound stays at its noise floor (below 0.1 at 50,000 trials, ε = 6)."""
    client = TreeHist(epsilon=6.0, k=4, m=64).client(20)
    assert client.oracle_input(V) == client.oracle_input(V_PRIME)
    result = _audit(client, V, V_PRIME, (20,))
    assert result.epsilon < 0.1, str(result)


def test_registered_and_oracle_is_a_parameter():
    entry = registry.get("TreeHist")
    assert entry.kind == "heavy_hitter" and entry.cls is TreeHist
    names = [p.name for p in registry.parameters(TreeHist)]
    assert {"oracle", "form", "beta", "z", "width", "threshold"} <= set(names)
    data = zipf(n=2_000, m=8, support=60, seed=0)
    result = TreeHist(epsilon=2.0, k=2, m=8, oracle=OUE).run(data, np.random.default_rng(0))
    assert result.diagnostics["groups"] and sum(result.diagnostics["groups"]) == 2_000


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"k": 2**16 + 1, "m": 16}, "k"),
        ({"m": 0}, "m"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"form": "bottom"}, "form"),
        ({"beta": 1.0}, "beta"),
        ({"z": -1.0}, "z"),
        ({"z": float("inf")}, "z"),
        ({"width": 3}, "width"),
        ({"threshold": 1.5}, "threshold"),
        ({"oracle": int}, "oracle"),
        ({"oracle": GRR, "m": 64}, "domain_size"),
    ],
)
def test_bad_parameters_fail_at_construction(params, name):
    arguments = {"epsilon": 1.0, "k": 16, "m": 64} | params
    with pytest.raises((ValueError, TypeError), match=name):
        TreeHist(**arguments)


def test_bad_engine_and_mismatched_data():
    data = zipf(n=1000, m=16)
    with pytest.raises(ValueError, match="engine"):
        TreeHist(epsilon=1.0, k=4, m=16).run(data, np.random.default_rng(0), engine="fast")
    with pytest.raises(ValueError, match="m"):
        TreeHist(epsilon=1.0, k=4, m=32).run(data, np.random.default_rng(0))


def test_the_sampled_levels_histogram_is_the_generic_aggregate():
    """The one-pass histogram of a level's prefixes (distinct values in increasing order)
    holds the keys and counts, in the order, that the generic sort-based aggregate gives."""
    from ldp import bits
    from ldp.datasets import load
    from ldp.heavy_hitters.base import aggregate
    from ldp.heavy_hitters.treehist import _increasing, _prefix_histogram

    rng = np.random.default_rng(7)
    for m in (12, 64, 160):
        data = load("url" if m == 160 else "zipf", n=3000, **({} if m == 160 else {"m": m}))
        words = bits.to_words(data.histogram()[0], m)
        weights = rng.integers(0, 3, len(words))
        order = _increasing(words)
        for ell in (1, 5, min(m, 64)):
            held, counts = _prefix_histogram(bits.prefix(words[order], m, ell), weights[order])
            keys, totals = aggregate(bits.prefix(words, m, ell), weights)
            np.testing.assert_array_equal(held, keys[totals > 0])
            np.testing.assert_array_equal(counts, totals[totals > 0])


@pytest.mark.parametrize(("shuffled", "collide"), [(False, False), (True, False), (True, True)])
def test_aggregate_of_word_rows_sums_each_distinct_row(monkeypatch, shuffled, collide):
    """Word rows sorted as numbers merge in one pass, others by their digests (or their
    bytes, when every digest is forced equal): each gives each distinct row once with its
    summed count (a dict of the rows' bytes is the reference); the one-pass result
    ascends as numbers.  Shuffled rows put repeats apart, which a one-pass merge would
    count twice."""
    from ldp.heavy_hitters import base
    from ldp.heavy_hitters.base import aggregate

    if collide:
        monkeypatch.setattr(base, "row_hashes", lambda rows: np.zeros(len(rows), np.uint64))

    rng = np.random.default_rng(3)
    rows = rng.integers(0, 4, size=(400, 3), dtype=np.uint64)
    rows = rows[np.lexsort(rows.T[::-1])]
    if shuffled:
        rows = rows[rng.permutation(len(rows))]
    counts = rng.integers(0, 5, len(rows))
    keys, totals = aggregate(rows, counts)
    expected: dict[bytes, int] = {}
    for row, count in zip(rows, counts, strict=True):
        expected[row.tobytes()] = expected.get(row.tobytes(), 0) + int(count)
    assert {k.tobytes(): int(t) for k, t in zip(keys, totals, strict=True)} == expected
    assert len(keys) == len(expected)
    if not shuffled:
        numbers = [sum(int(w) << (64 * (2 - i)) for i, w in enumerate(row)) for row in keys]
        assert numbers == sorted(numbers)
