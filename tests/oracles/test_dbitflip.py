"""dBitFlip (Ding, Kulkarni, Yekhanin 2017): the battery at d > 1, the closed-form variance
against the paper's, the likelihood's loss, and memoization over rounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import audit
from ldp.oracles.dbitflip import DBitFlip
from ldp.privacy import max_privacy_loss
from ldp.testing import check_oracle
from ldp.validation import ParameterError


def test_the_battery_passes_with_several_sampled_buckets() -> None:
    results = check_oracle(DBitFlip, epsilon=1.0, domain_size=6, d=3)
    assert {r.name for r in results if r.status == "passed"} >= {"unbiased", "variance"}


def test_the_variance_is_the_papers_with_q_equal_to_1_minus_p() -> None:
    """At the ideal p = e^{ε/2}/(e^{ε/2}+1), q = 1-p: (p³ + q³) and pq per user."""
    oracle = DBitFlip(epsilon=2.0, domain_size=10, d=2)
    half = math.exp(1.0)
    p, q = half / (half + 1), 1 / (half + 1)
    ratio, gap = 5.0, (p - q) ** 2
    paper = 30 * (ratio * (p**3 + q**3) / gap - 1) + 70 * ratio * p * q / gap
    assert oracle.variance(100, 30) == pytest.approx(paper, rel=1e-12)


@pytest.mark.parametrize(("d", "loss"), [(1, 0.5), (2, 1.0), (5, 1.0)])
def test_one_report_is_epsilon_ldp(d: int, loss: float) -> None:
    """Both inputs sampled: ε; with one bucket a report holds one bit: ε/2."""
    oracle = DBitFlip(epsilon=1.0, domain_size=5, d=d)
    assert max_privacy_loss(oracle) == pytest.approx(loss, rel=1e-9)
    assert max_privacy_loss(oracle) <= 1.0 * (1 + 1e-12)


def test_memoized_rounds_replay_a_value_and_only_that_value() -> None:
    oracle = DBitFlip(epsilon=1.0, domain_size=8, d=4)
    rng = np.random.default_rng(3)
    values = np.tile(np.array([[1, 1, 5, 1]]), (2000, 1))
    rounds = oracle.perturb_rounds(values, rng)
    assert all(np.array_equal(r.buckets, rounds[0].buckets) for r in rounds)
    for t in (1, 3):  # value 1 again: the same bits
        assert np.array_equal(rounds[t].bits, rounds[0].bits)
    sampled_both = ((rounds[0].buckets == 1) | (rounds[0].buckets == 5)).any(axis=1)
    changed = (rounds[2].bits != rounds[0].bits).any(axis=1)
    assert changed[sampled_both].mean() > 0.3  # fresh bits for value 5
    assert oracle.rounds_epsilon(50) == 1.0
    assert oracle.memoized_epsilon(4, distinct=2) == 2.0


def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(ParameterError) as error:
        DBitFlip(epsilon=1.0, domain_size=4, d=5)
    assert error.value.name == "d"
    with pytest.raises(ParameterError):
        DBitFlip(epsilon=1.0, domain_size=4, d=0)
    oracle = DBitFlip(epsilon=1.0, domain_size=4, d=2)
    reports = oracle.perturb(np.zeros(5, dtype=np.int64), np.random.default_rng(0))
    with pytest.raises(ValueError, match="reports"):
        oracle.estimate(reports._replace(buckets=reports.buckets + 4))
    with pytest.raises(ValueError, match="2-D"):
        oracle.perturb_rounds(np.zeros(3, dtype=np.int64), np.random.default_rng(0))


@pytest.mark.parametrize(("d", "loss"), [(1, 0.5), (2, 1.0)])
def test_the_audit_finds_the_loss_of_one_report(d: int, loss: float) -> None:
    """The audit's events reach 0.85 of the loss of one report at ε = 1: ε/2 with one
    sampled bucket (a bit on the user's bucket or not), ε with two (one bit up, one down),
    and never above it."""
    oracle = DBitFlip(epsilon=1.0, domain_size=4, d=d)
    result = audit.lower_bound(oracle, 0, 1, rng=np.random.default_rng(7))
    assert 0.85 * loss <= result.epsilon <= loss
