"""SPLIT: ε split over ℓ reports per user, unbiased for PSFO's padded count with its own
closed-form variance, both engines alike, and ε-LDP over the whole report; a client that
spends ε on each of its ℓ reports is caught by the auditor.

Tolerances as in test_psfo.py: a z per item against the exact law at 0.001/m.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp.audit import lower_bound
from ldp.oracles import GRR
from ldp.oracles.local_hashing import HashReports
from ldp.sets import PSFO, SPLIT, as_sets
from ldp.sets.split import chosen_elements, split_prefers_grr
from tests.sets.test_psfo import ROWS, RUNS, D, _limit, _z_means, _z_variances


@pytest.mark.parametrize("oracle", ["GRR", "OLH"])
@pytest.mark.parametrize("engine", ["reports", "sampled"])
def test_unbiased_and_variance_is_the_closed_form(oracle: str, engine: str) -> None:
    split = SPLIT(epsilon=2.0, domain_size=D, ell=3, oracle=oracle)
    rng = np.random.default_rng(21)
    run = (
        split.simulate if engine == "sampled" else lambda s, r: split.estimate(split.perturb(s, r))
    )
    draws = np.array([run(ROWS, rng) for _ in range(RUNS)])
    expected, variance = split.expected_counts(ROWS), split.variances(ROWS)
    assert np.abs(_z_means(draws, expected, variance)).max() < _limit(D)
    assert np.abs(_z_variances(draws, variance)).max() < _limit(D)


def test_the_same_padded_count_as_psfo() -> None:
    np.testing.assert_allclose(
        SPLIT(epsilon=1.0, domain_size=D, ell=3).expected_counts(ROWS),
        PSFO(epsilon=1.0, domain_size=D, ell=3).expected_counts(ROWS),
    )


def test_a_wrong_variance_is_caught() -> None:
    """The variance check has power: PSFO's formula (ℓ² times the n q(1-q) term) put in
    SPLIT's place is far off."""
    split = SPLIT(epsilon=2.0, domain_size=D, ell=3, oracle="GRR")
    rng = np.random.default_rng(22)
    draws = np.array([split.simulate(ROWS, rng) for _ in range(RUNS)])
    a, b = split.weight_sums(ROWS)
    wrong = PSFO.pure_variance(split, ROWS.shape[0], a, b)
    assert np.abs(_z_variances(draws, wrong)).max() > _limit(D)


def test_each_user_sends_ell_reports_of_a_uniform_subset() -> None:
    """A user of 5 items with ℓ = 2: each of the 20 ordered pairs chosen equally often
    (chi-square at 0.001), never a dummy, beside users of 2 items (sent as they are, in
    their order); a user of 1 item: the item and the dummies d+1, ..., d+ℓ-1."""
    n = 20_000
    rows = np.tile(np.array([[1, 3, 4, 6, 8], [2, 5, -1, -1, -1]]), (n // 2, 1))
    offsets, items = as_sets(rows, 10)
    chosen = chosen_elements(offsets, items, 2, 10, np.random.default_rng(3))
    assert chosen.shape == (n, 2) and chosen.max() < 10
    assert np.array_equal(chosen[1::2], np.tile([2, 5], (n // 2, 1)))
    pairs = chosen[0::2]
    codes = np.unique(pairs[:, 0] * 10 + pairs[:, 1], return_counts=True)[1]
    assert codes.size == 20 and stats.chisquare(codes).pvalue > 0.001
    single = chosen_elements(*as_sets(np.array([[7, -1]]), 10), 3, 10, np.random.default_rng(0))
    assert sorted(single[0].tolist()) == [7, 11, 12]
    reports = SPLIT(epsilon=1.0, domain_size=D, ell=4, oracle="OLH").perturb(
        ROWS[:10], np.random.default_rng(0)
    )
    assert isinstance(reports, HashReports) and reports.values.shape == (10, 4)


def _overspent(split: SPLIT) -> SPLIT:
    """A client that reports each of its ℓ elements at ε, not ε/ℓ: its loss is ℓε."""

    class Overspent(SPLIT):
        def perturb(self, sets, rng):
            offsets, items = self.sets(sets)
            chosen = chosen_elements(offsets, items, self.ell, self.domain_size, rng)
            whole = GRR(epsilon=self.epsilon, domain_size=self.domain_size + self.ell)
            return np.asarray(whole.perturb(chosen.ravel(), rng)).reshape(chosen.shape)

    return Overspent(
        epsilon=split.epsilon, domain_size=split.domain_size, ell=split.ell, oracle="GRR"
    )


def test_the_auditor_holds_split_and_catches_an_overspent_client() -> None:
    honest = SPLIT(epsilon=1.0, domain_size=8, ell=3, oracle="GRR")
    empty, full = np.full(3, -1), np.arange(3)
    fair = lower_bound(honest, empty, full, rng=np.random.default_rng(1))
    assert fair.epsilon <= 1.0
    leaky = lower_bound(_overspent(honest), empty, full, rng=np.random.default_rng(1))
    assert leaky.epsilon > 1.0


def test_the_adaptive_rule() -> None:
    assert split_prefers_grr(8, 1.0) and not split_prefers_grr(1000, 1.0)
    assert SPLIT(epsilon=4.0, domain_size=8, ell=2).inner.name == "GRR"
    assert SPLIT(epsilon=1.0, domain_size=1000, ell=2).inner.name == "OLH"
    assert math.isclose(SPLIT(epsilon=1.0, domain_size=8, ell=4).inner.epsilon, 0.25)


def test_a_report_count_over_the_budget_is_refused_before_allocating() -> None:
    """10^5 users × ℓ = 2^16 reports (6.6·10^9 elements) under 256 MiB: a ParameterError
    naming the users, not an allocation of the (n, ℓ) elements."""
    from ldp import budget
    from ldp.validation import ParameterError

    rows = np.full((100_000, 1), -1)
    split = SPLIT(epsilon=1.0, domain_size=D, ell=2**16)
    with budget.limits(memory_bytes="256 MiB"):
        for call in (split.perturb, split.simulate):
            with pytest.raises(ParameterError, match="users"):
                call(rows, np.random.default_rng(0))


@pytest.mark.parametrize("oracle", ["GRR", "OLH"])
@pytest.mark.parametrize("ell", [1, 2, 3, 8])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_the_realised_loss_of_two_disjoint_padded_sets_is_at_most_epsilon(
    oracle: str, ell: int, epsilon: float
) -> None:
    """The ℓ reports' realised ratio (the inner oracle's, to the power ℓ) stays <= e^ε in
    float64, and reaches it for GRR (its p*/q* is e^{ε/ℓ} rounded down)."""
    split = SPLIT(epsilon=epsilon, domain_size=64, ell=ell, oracle=oracle)
    loss = math.log(split.privacy_ratio())
    assert loss <= epsilon
    if oracle == "GRR":
        assert loss >= epsilon * (1 - 1e-9)


@pytest.mark.parametrize("cls", [PSFO, SPLIT])
@pytest.mark.parametrize("oracle", ["GRR", "OLH"])
def test_reports_outside_the_inner_oracles_support_are_flagged_per_user(cls, oracle) -> None:
    """Honest reports lie in the inner oracle's support (ldp.audit.support reads
    ``in_support``); a user with one report moved out of [0, d+ℓ) (GRR) or a cell out of
    [0, g) (OLH) is flagged, and no other user (SPLIT: one of its ℓ = 3 reports)."""
    protocol = cls(epsilon=1.0, domain_size=D, ell=3, oracle=oracle)
    reports = protocol.perturb(np.tile(np.array([0, 1, -1]), (50, 1)), np.random.default_rng(5))
    assert protocol.in_support(reports).all()
    where = (7, 2) if cls is SPLIT else 7
    if oracle == "GRR":
        reports[where] = D + 3
    else:
        reports.values[where] = protocol.inner.g
    assert np.flatnonzero(~protocol.in_support(reports)).tolist() == [7]


@pytest.mark.parametrize(
    ("ell", "v", "v_prime", "least"),
    [
        (1, [0, -1], [1, -1], 0.9),  # one report at ε: the loss is ε
        (3, [-1, -1, -1], [0, 1, 2], 0.8),  # three reports at ε/3, all differing: ε
    ],
)
def test_the_audit_reaches_the_loss_of_olh_reports_in_columns(
    ell: int, v: list, v_prime: list, least: float
) -> None:
    """SPLIT's (n, ℓ) OLH reports hide the hashed evidence from a search over whole fields
    (the default audit's bound was 0 for both pairs); ``audit_events`` gives the inner
    oracle's events per column and their conjunction, and the bound comes near ε, never
    above it."""
    split = SPLIT(epsilon=1.0, domain_size=8, ell=ell, oracle="OLH")
    found = lower_bound(split, np.array(v), np.array(v_prime), rng=np.random.default_rng(1))
    assert least <= found.epsilon <= 1.0, found
