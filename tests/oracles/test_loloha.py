"""LOLOHA (Arcolezi et al., EDBT 2023): one report is OLH at ε₁, the memo is keyed by the
hashed value (at most g of them), rounds are unbiased, and the audit of a user's sequence
holds ε_∞ and catches a client without a memo.  Statistical tests at level 1e-4 each."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldp import audit, hashing
from ldp.oracles import OLH
from ldp.oracles.loloha import LOLOHA, optimal_g
from ldp.oracles.longitudinal import Rounds
from ldp.privacy import max_privacy_loss

ALPHA = 1e-4


def test_one_report_is_olh_at_epsilon_1() -> None:
    for epsilon, g in ((0.5, None), (1.0, 2), (2.0, None), (3.0, 9)):
        oracle = LOLOHA(epsilon=epsilon, domain_size=32, epsilon_inf=2.5 * epsilon, g=g)
        twin = OLH(epsilon=epsilon, domain_size=32, g=oracle.g)
        assert oracle.p_star == pytest.approx(twin.p_star, rel=1e-12)
        assert oracle.q_star == twin.q_star
        assert max_privacy_loss(oracle) <= epsilon * (1 + 1e-12)
        assert oracle.rounds_epsilon(1) == pytest.approx(epsilon, rel=1e-9)
        assert oracle.rounds_epsilon(400) == pytest.approx(2.5 * epsilon, rel=1e-6)


def test_the_default_g_minimizes_the_variance() -> None:
    for epsilon in (0.1, 0.5, 1.0, 2.0, 4.0):
        best = min(
            range(2, 200),
            key=lambda g: LOLOHA(epsilon=epsilon, domain_size=8, g=g).variance(1000, 0),
        )
        assert optimal_g(epsilon) == best


def test_the_memo_is_keyed_by_the_hashed_value() -> None:
    """Users alternate between values 0 and 1: where their hash maps both to one cell the
    rounds share a memo (agree with p2² + (g-1) q2²), elsewhere they agree with
    2 p_s q_s + (g-2) q_s² (two independent ε₁ reports of distinct cells)."""
    n = 60_000
    oracle = LOLOHA(epsilon=1.0, domain_size=8, epsilon_inf=3.0, g=3)
    rounds = oracle.perturb_rounds(np.tile([[0, 1]], (n, 1)), np.random.default_rng(5))
    seeds = rounds[0].seeds
    same = hashing.hash_values(np.zeros(n, np.uint64), seeds, 3) == hashing.hash_values(
        np.ones(n, np.uint64), seeds, 3
    )
    agree = rounds[0].values == rounds[1].values
    (p2, q2), g = oracle.irr, oracle.g
    p_s, q_s = oracle.p_star, (1 - oracle.p_star) / (g - 1)
    z = stats.norm.isf(ALPHA / 2)
    for chosen, expected in (
        (same, p2**2 + (g - 1) * q2**2),
        (~same, 2 * p_s * q_s + (g - 2) * q_s**2),
    ):
        sample = agree[chosen]
        assert abs(sample.mean() - expected) <= z * math.sqrt(
            expected * (1 - expected) / sample.size
        )
    assert oracle.memoized_epsilon(50, distinct=20) == 3 * 3.0  # at most g = 3 memos


def test_every_round_is_unbiased() -> None:
    d, n, tau, runs = 6, 1000, 3, 200
    oracle = LOLOHA(epsilon=1.0, domain_size=d, epsilon_inf=2.0)
    data = np.random.default_rng(11)
    values = np.stack([data.integers(0, d, n) for _ in range(tau)], axis=1)
    values[: n // 2] = values[: n // 2, :1]  # half the users never change
    truth = np.stack([np.bincount(values[:, t], minlength=d) for t in range(tau)])
    rng = np.random.default_rng(12)
    estimates = np.array(
        [[oracle.estimate(r) for r in oracle.perturb_rounds(values, rng)] for _ in range(runs)]
    )
    limit = float(stats.t.isf(ALPHA / 2, runs - 1))
    t_stats = (estimates.mean(axis=0) - truth) / (estimates.std(axis=0, ddof=1) / math.sqrt(runs))
    assert np.abs(t_stats).max() <= limit


class NoMemoLOLOHA(LOLOHA):
    """A deliberately broken client: a fresh permanent step (and seed) every round."""

    def perturb_rounds(self, values, rng):
        values = np.asarray(values)
        first = self.perturb(values[:, 0], rng)
        rounds = [first]
        for t in range(1, values.shape[1]):  # same seeds, fresh memos
            cells = hashing.hash_values(values[:, t], first.seeds, self.g).astype(np.int64)
            rounds.append(
                first._replace(values=self.instantaneous(self.permanent(cells, rng), rng))
            )
        return rounds


def test_the_audit_of_a_sequence_holds_epsilon_inf_and_catches_a_missing_memo() -> None:
    params = {"epsilon": 0.5, "domain_size": 4, "epsilon_inf": 1.0, "g": 3}
    options = {"trials": 60_000, "alpha": ALPHA, "max_trials": 60_000}
    fair = audit.lower_bound(
        Rounds(LOLOHA(**params), 8), 0, 1, rng=np.random.default_rng(1), **options
    )
    assert fair.epsilon <= 1.0, str(fair)
    caught = audit.lower_bound(
        Rounds(NoMemoLOLOHA(**params), 8), 0, 1, rng=np.random.default_rng(2), **options
    )
    assert caught.epsilon > 1.0, str(caught)
