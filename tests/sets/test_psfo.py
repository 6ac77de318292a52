"""PSFO: unbiased for its declared target, variance equal to its closed form, both engines
alike, and ε-LDP as emitted (the amplified GRR included), with planted faults caught.

Tolerances: each statistic is a z (or F) against its exact law; with m statistics per
test the limit is the two-sided normal quantile at 0.001/m, so a correct protocol fails
a test with probability <= 0.001 (fixed seeds make it deterministic).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp.audit import lower_bound
from ldp.sets import PSFO, amplified_epsilon, as_sets, padded_sample, prefers_grr
from ldp.sets import base as set_base
from ldp.validation import ParameterError

RUNS = 300
D = 24


def _rows(n: int, seed: int) -> np.ndarray:
    """n users' sets over D items, sizes 0..6 (some above ℓ), a skewed item law."""
    rng = np.random.default_rng(seed)
    law = np.r_[np.full(4, 0.12), np.full(D - 4, 0.52 / (D - 4))]
    rows = np.full((n, 6), -1)
    for user, size in enumerate(rng.integers(0, 7, n)):
        rows[user, :size] = np.sort(rng.choice(D, size, replace=False, p=law))
    return rows


ROWS = _rows(3000, 0)


def _limit(m: int, alpha: float = 0.001) -> float:
    return float(stats.norm.isf(alpha / (2 * m)))


def _z_means(draws: np.ndarray, expected: np.ndarray, variance: np.ndarray) -> np.ndarray:
    return (draws.mean(axis=0) - expected) / np.sqrt(variance / draws.shape[0])


def _z_variances(draws: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """(s²/σ² - 1) over its SE under normality, sqrt(2/(R-1)) (the estimates are sums of
    thousands of independent terms)."""
    ratio = draws.var(axis=0, ddof=1) / variance
    return (ratio - 1) / math.sqrt(2 / (draws.shape[0] - 1))


@pytest.mark.parametrize("oracle", ["GRR", "OLH"])
@pytest.mark.parametrize("engine", ["reports", "sampled"])
def test_unbiased_and_variance_is_the_closed_form(oracle: str, engine: str) -> None:
    psfo = PSFO(epsilon=1.0, domain_size=D, ell=3, oracle=oracle)
    rng = np.random.default_rng(11)
    run = psfo.simulate if engine == "sampled" else lambda s, r: psfo.estimate(psfo.perturb(s, r))
    draws = np.array([run(ROWS, rng) for _ in range(RUNS)])
    expected, variance = psfo.expected_counts(ROWS), psfo.variances(ROWS)
    assert np.abs(_z_means(draws, expected, variance)).max() < _limit(D)
    assert np.abs(_z_variances(draws, variance)).max() < _limit(D)


def test_a_planted_bias_and_a_wrong_variance_are_caught() -> None:
    """The checks above have power: counting a user with |v| > ℓ as a full holder (the
    target a naive reading of "unbiased" would use) is 10+ SE off on the heavy items, and
    a variance without the A and B terms (the n q(1-q) term alone) fails the F check."""
    psfo = PSFO(epsilon=1.0, domain_size=D, ell=3, oracle="GRR")
    rng = np.random.default_rng(12)
    draws = np.array([psfo.simulate(ROWS, rng) for _ in range(RUNS)])
    holders = np.bincount(as_sets(ROWS, D)[1], minlength=D).astype(float)
    variance = psfo.variances(ROWS)
    assert np.abs(_z_means(draws, holders, variance)).max() > 10
    p, q = psfo.inner.p_star, psfo.inner.q_star
    leading = np.full(D, psfo.ell**2 * ROWS.shape[0] * q * (1 - q) / (p - q) ** 2)
    assert np.abs(_z_variances(draws, leading)).max() > _limit(D)


def test_expected_counts_are_holders_when_no_set_exceeds_ell() -> None:
    rows = _rows(500, 3)
    psfo = PSFO(epsilon=2.0, domain_size=D, ell=6)
    holders = np.bincount(as_sets(rows, D)[1], minlength=D)
    np.testing.assert_allclose(psfo.expected_counts(rows), holders)


def test_padded_sample_is_uniform_over_the_padded_set() -> None:
    """One user {3, 7} padded to ℓ = 4: items 3, 7 and dummies d+2, d+3, each 1/4
    (chi-square at 0.001); a user of 5 items with ℓ = 4: each item 1/5."""
    offsets, items = as_sets(np.array([[3, 7, -1, -1, -1], [0, 1, 2, 3, 4]]), 10)
    rng = np.random.default_rng(5)
    n = 40_000
    users = np.repeat(np.array([[3, 7, -1, -1, -1]]), n, axis=0)
    drawn = padded_sample(*as_sets(users, 10), 4, 10, rng)
    seen = np.bincount(drawn, minlength=14)
    assert set(np.flatnonzero(seen)) == {3, 7, 12, 13}
    assert stats.chisquare(seen[[3, 7, 12, 13]]).pvalue > 0.001
    big = np.repeat(np.array([[0, 1, 2, 3, 4]]), n, axis=0)
    seen = np.bincount(padded_sample(*as_sets(big, 10), 4, 10, rng), minlength=14)
    assert set(np.flatnonzero(seen)) == {0, 1, 2, 3, 4}
    assert stats.chisquare(seen[:5]).pvalue > 0.001
    assert offsets.tolist() == [0, 2, 7] and items.tolist() == [3, 7, 0, 1, 2, 3, 4]


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
@pytest.mark.parametrize("ell", [1, 2, 3, 7, 30, 1000])
def test_the_realised_ratio_never_exceeds_e_to_the_epsilon(epsilon: float, ell: int) -> None:
    for oracle in ("GRR", "OLH"):
        psfo = PSFO(epsilon=epsilon, domain_size=50, ell=ell, oracle=oracle)
        assert psfo.privacy_ratio() <= math.exp(epsilon)
        assert psfo.privacy_ratio() > math.exp(epsilon) * (1 - 1e-9) or oracle == "OLH"
    assert 1 + math.expm1(amplified_epsilon(epsilon, ell)) / ell <= math.exp(epsilon)


def _one_dummy(psfo: PSFO):
    """A peer's PSFO: every padding slot is one shared dummy symbol d (the amplified ε'
    kept), so an empty set reports d with probability p*, a full one with q*."""

    class OneDummy(PSFO):
        def perturb(self, sets, rng):
            offsets, items = self.sets(sets)
            drawn = set_base.padded_sample(offsets, items, self.ell, self.domain_size, rng)
            return self.inner.perturb(np.minimum(drawn, self.domain_size), rng)

    return OneDummy(epsilon=psfo.epsilon, domain_size=psfo.domain_size, ell=psfo.ell, oracle="GRR")


@pytest.mark.parametrize("ell", [2, 4])
def test_the_auditor_holds_psfo_and_catches_a_shared_dummy(ell: int) -> None:
    """An empty set against a full one: the honest GRR-PSFO's bound stays under ε and
    close to it; the shared dummy's true loss, ln(ℓ(e^ε-1)+1), is caught above ε."""
    honest = PSFO(epsilon=1.0, domain_size=8, ell=ell, oracle="GRR")
    empty, full = np.full(ell, -1), np.arange(ell)
    fair = lower_bound(honest, empty, full, rng=np.random.default_rng(1))
    assert 0.85 < fair.epsilon <= 1.0
    leaky = lower_bound(_one_dummy(honest), empty, full, rng=np.random.default_rng(1))
    assert leaky.epsilon > 1.0
    assert leaky.epsilon <= amplified_epsilon(1.0, ell)


def test_the_adaptive_rule_picks_the_smaller_leading_variance() -> None:
    """prefers_grr(d, ℓ, ε) against the two oracles' n q*(1-q*)/(p*-q*)² per user, as
    realised (OLH's integer g included), away from the boundary (a 25% margin)."""
    checked = 0
    for d in (2, 10, 100, 1000, 41_270):
        for ell in (1, 2, 5, 20):
            for epsilon in (0.5, 1.0, 2.0, 4.0):
                leading = {}
                for oracle in ("GRR", "OLH"):
                    inner = PSFO(epsilon=epsilon, domain_size=d, ell=ell, oracle=oracle).inner
                    p, q = inner.p_star, inner.q_star
                    leading[oracle] = q * (1 - q) / (p - q) ** 2
                ratio = leading["GRR"] / leading["OLH"]
                if abs(math.log(ratio)) > math.log(1.25):
                    assert prefers_grr(d, ell, epsilon) == (ratio < 1), (d, ell, epsilon)
                    checked += 1
    assert checked > 60


def test_reports_carry_their_stamp() -> None:
    one = PSFO(epsilon=1.0, domain_size=D, ell=2)
    other = PSFO(epsilon=2.0, domain_size=D, ell=2)
    reports = one.perturb(ROWS[:50], np.random.default_rng(0))
    assert one.estimate(reports).shape == (D,)
    with pytest.raises(ParameterError, match="made by"):
        other.estimate(reports)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"ell": 0}, "ell"),
        ({"ell": 2**17}, "ell"),
        ({"oracle": "OUE"}, "oracle"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"domain_size": 1}, "domain_size"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs: dict, name: str) -> None:
    params = {"epsilon": 1.0, "domain_size": D, **kwargs}
    with pytest.raises(ParameterError) as error:
        PSFO(**params)
    assert error.value.name == name


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (np.array([[1, 1, -1]]), "distinct"),
        (np.array([[1, D, -1]]), "item"),
        (np.array([[1, -2]]), "-1"),
        (np.array([1, 2]), "2-D"),
    ],
)
def test_bad_sets_are_refused(rows: np.ndarray, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        PSFO(epsilon=1.0, domain_size=D).perturb(rows, np.random.default_rng(0))


def _battery(cls: type) -> dict:
    from ldp.testing import set_checks

    return {c.name: c for c in set_checks(cls, epsilon=1.0, domain_size=16)}


def test_the_conformance_battery_catches_planted_faults() -> None:
    """A variance understated by 15%, and the shared dummy at ℓ = 4, each fail their check
    of ``ldp.testing.set_checks``; the honest class passes both."""

    class Understated(PSFO):
        def variances(self, sets, candidates=None):
            return 0.85 * super().variances(sets, candidates)

    class SharedDummy(PSFO):
        def perturb(self, sets, rng):
            offsets, items = self.sets(sets)
            drawn = set_base.padded_sample(offsets, items, self.ell, self.domain_size, rng)
            return self.inner.perturb(np.minimum(drawn, self.domain_size), rng)

    honest = _battery(PSFO)
    assert "variance z" in honest["unbiased_variance"].run()
    with pytest.raises(AssertionError, match="variance"):
        _battery(Understated)["unbiased_variance"].run()
    from ldp.testing import set_checks

    leaky = {
        c.name: c for c in set_checks(SharedDummy, epsilon=1.0, domain_size=16, ell=4, oracle="GRR")
    }
    fair = {c.name: c for c in set_checks(PSFO, epsilon=1.0, domain_size=16, ell=4, oracle="GRR")}
    assert "empty vs full" in fair["privacy_audit"].run()
    with pytest.raises(AssertionError, match="empty vs full"):
        leaky["privacy_audit"].run()


def test_weight_sums_of_candidates_in_any_order_with_repeats() -> None:
    """The candidates' (A_x, B_x) are the full domain's, picked in the candidates' order,
    repeats and an empty list included (computed without a d-long array)."""
    psfo = PSFO(epsilon=1.0, domain_size=D, ell=2)
    full = psfo.weight_sums(ROWS)
    picked = np.array([5, 3, 3, D - 1, 0])
    assert np.allclose(psfo.weight_sums(ROWS, picked), full[:, picked])
    assert psfo.weight_sums(ROWS, np.array([], dtype=np.int64)).shape == (2, 0)
    # the items 0..D'-1 skip the search (all of them, or a prefix): the same sums as the
    # search over any other list, and as a sum over the holders
    assert np.array_equal(psfo.weight_sums(ROWS, np.arange(7)), full[:, :7])
    assert np.array_equal(psfo.weight_sums(ROWS, np.arange(7)[::-1]), full[:, 6::-1])
    sizes = (ROWS >= 0).sum(axis=1)
    weights = np.minimum(1.0, 2 / np.maximum(sizes, 1))
    direct = [[weights[(ROWS == x).any(axis=1)] ** p for x in range(D)] for p in (1, 2)]
    assert np.allclose(full, [[w.sum() for w in row] for row in direct], rtol=1e-12)
