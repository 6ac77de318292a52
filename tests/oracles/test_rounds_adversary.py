"""The Bayesian adversary from τ reports of a memoized protocol (ldp.adversary.rounds_success).

Exact forms against brute force over every report sequence at tiny d and τ (the memo
summed out by hand); the sequence likelihoods of real reports against the same brute
force; the empirical estimate against the exact value; the rate grows with τ and stays
below the ε-LDP bounds of the exact loss and of ε_∞.  Statistical tolerances: 4.5
standard errors (two-sided false-alarm rate ~7e-6 per assertion).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ldp import adversary, hashing
from ldp.oracles import LGRR, LOSUE, LOUE
from ldp.oracles.dbitflip import DBitFlip
from ldp.oracles.loloha import LOLOHA

PRIOR = np.array([0.45, 0.3, 0.15, 0.1])
Z = 4.5


def _grr_sequence_probability(oracle, cells: int, own: int, sequence) -> float:
    """Pr[sequence | memo drawn from the value's cell ``own``], summing over the memo."""
    (p1, q1), (p2, q2) = oracle.prr, oracle.irr
    total = 0.0
    for memo in range(cells):
        weight = p1 if memo == own else q1
        total += weight * math.prod(p2 if y == memo else q2 for y in sequence)
    return total


def _brute_grr(oracle, prior, tau) -> float:
    d = prior.shape[0]
    return sum(
        max(prior[v] * _grr_sequence_probability(oracle, d, v, seq) for v in range(d))
        for seq in itertools.product(range(d), repeat=tau)
    )


def _brute_unary(oracle, prior, tau) -> float:
    """Every (d x τ) bit array; positions independent, each memo bit summed out."""
    (p1, q1), (p2, q2) = oracle.prr, oracle.irr
    d = prior.shape[0]

    def position(bits, memo_one):
        one = math.prod(p2 if b else 1 - p2 for b in bits)
        zero = math.prod(q2 if b else 1 - q2 for b in bits)
        return memo_one * one + (1 - memo_one) * zero

    total = 0.0
    for flat in itertools.product((0, 1), repeat=d * tau):
        rows = np.reshape(flat, (d, tau))
        best = 0.0
        for v in range(d):
            likelihood = math.prod(position(rows[j], p1 if j == v else q1) for j in range(d))
            best = max(best, prior[v] * likelihood)
        total += best
    return total


@pytest.mark.parametrize("tau", [1, 2, 3, 4])
def test_l_grr_exact_matches_brute_force(tau):
    oracle = LGRR(epsilon=0.8, domain_size=3, epsilon_inf=2.0)
    prior = np.array([0.5, 0.3, 0.2])
    exact = oracle.rounds_adversary_success(prior, tau)
    assert exact == pytest.approx(_brute_grr(oracle, prior, tau), rel=1e-12)


@pytest.mark.parametrize("cls", [LOSUE, LOUE])
@pytest.mark.parametrize("tau", [1, 2, 3])
def test_unary_exact_matches_brute_force(cls, tau):
    oracle = cls(epsilon=0.8, domain_size=3, epsilon_inf=2.0)
    prior = np.array([0.5, 0.3, 0.2])
    exact = oracle.rounds_adversary_success(prior, tau)
    assert exact == pytest.approx(_brute_unary(oracle, prior, tau), rel=1e-12)


def test_one_report_is_the_one_report_adversary():
    """At τ = 1 the sequence is one report: the protocol's own (one-report) success."""
    for oracle in (
        LGRR(epsilon=1.0, domain_size=4),
        LOSUE(epsilon=1.0, domain_size=4),
        LOUE(epsilon=1.0, domain_size=4),
        DBitFlip(epsilon=2.0, domain_size=4),
    ):
        one = adversary.adversary_success(oracle, PRIOR).value
        assert oracle.rounds_adversary_success(PRIOR, 1) == pytest.approx(one, rel=1e-12)


def test_sequence_likelihoods_of_real_reports_match_brute_force():
    """The likelihood differences between values of real report sequences are exact."""
    rng = np.random.default_rng(3)
    tau, d = 3, 3
    values = np.repeat(rng.integers(0, d, size=(50, 1)), tau, axis=1)
    grr = LGRR(epsilon=0.8, domain_size=d, epsilon_inf=2.0)
    rounds = grr.perturb_rounds(values, rng)
    loglik = grr.sequence_log_likelihoods(rounds)
    for i in range(50):
        sequence = [int(r[i]) for r in rounds]
        truth = np.log([_grr_sequence_probability(grr, d, v, sequence) for v in range(d)])
        np.testing.assert_allclose(loglik[i] - loglik[i, 0], truth - truth[0], atol=1e-12)
    hashed = LOLOHA(epsilon=0.8, domain_size=5, epsilon_inf=2.0, g=3)
    rounds = hashed.perturb_rounds(np.repeat(rng.integers(0, 5, size=(50, 1)), tau, 1), rng)
    loglik = hashed.sequence_log_likelihoods(rounds)
    seeds = rounds[0].seeds
    for i in range(50):
        cells = hashing.hash_values(np.arange(5, dtype=np.uint64), np.repeat(seeds[i], 5), 3)
        sequence = [int(r.values[i]) for r in rounds]
        truth = np.log([_grr_sequence_probability(hashed, 3, c, sequence) for c in cells])
        np.testing.assert_allclose(loglik[i] - loglik[i, 0], truth - truth[0], atol=1e-12)


def _empirical(oracle, prior, tau, n, seed):
    """rounds_success with the exact form hidden: the empirical MAP on real reports."""

    class Hidden:
        domain_size = oracle.domain_size
        perturb_rounds = staticmethod(oracle.perturb_rounds)
        sequence_log_likelihoods = staticmethod(oracle.sequence_log_likelihoods)

    return adversary.rounds_success(Hidden(), prior, tau, np.random.default_rng(seed), n)


@pytest.mark.parametrize(
    "oracle",
    [
        LGRR(epsilon=1.0, domain_size=4),
        LOSUE(epsilon=1.0, domain_size=4),
        LOUE(epsilon=1.0, domain_size=4),
        DBitFlip(epsilon=2.0, domain_size=4),
    ],
    ids=lambda o: o.name,
)
def test_empirical_matches_exact(oracle):
    exact = adversary.rounds_success(oracle, PRIOR, 5)
    assert {e.method for e in exact} == {"exact"}
    found = _empirical(oracle, PRIOR, 5, 20_000, 11)
    for e, f in zip(exact, found, strict=True):
        assert f.method == "empirical"
        assert abs(f.value - e.value) <= Z * math.sqrt(e.value * (1 - e.value) / 20_000)


def _brute_loloha(oracle, prior, tau) -> float:
    """Ideal hash: the mean over every function [d] -> [g] of the L-GRR sum over cells."""
    d, g = prior.shape[0], oracle.g
    total = 0.0
    for table in itertools.product(range(g), repeat=d):
        for seq in itertools.product(range(g), repeat=tau):
            total += max(
                prior[v] * _grr_sequence_probability(oracle, g, table[v], seq) for v in range(d)
            )
    return total / g**d


def test_loloha_empirical_matches_the_ideal_hash_brute_force():
    oracle = LOLOHA(epsilon=1.0, domain_size=4, epsilon_inf=2.5, g=2)
    found = adversary.rounds_success(oracle, PRIOR, 3, np.random.default_rng(5), 20_000)
    assert {f.method for f in found} == {"empirical"}
    for t, f in enumerate(found, start=1):
        exact = _brute_loloha(oracle, PRIOR, t)
        assert abs(f.value - exact) <= Z * math.sqrt(exact * (1 - exact) / 20_000)


@pytest.mark.parametrize(
    "oracle",
    [
        LGRR(epsilon=1.0, domain_size=4),
        LOSUE(epsilon=1.0, domain_size=4),
        LOUE(epsilon=1.0, domain_size=4),
        LOSUE(epsilon=2.0, domain_size=32),
    ],
    ids=lambda o: f"{o.name}-{o.domain_size}",
)
@pytest.mark.parametrize("prior", ["skewed", "uniform"])
def test_the_rate_grows_with_tau_and_stays_below_both_bounds(oracle, prior):
    weights = (
        np.ones(oracle.domain_size)
        if prior == "uniform"
        else 1 / np.arange(1, oracle.domain_size + 1) ** 1.2
    )
    weights = weights / weights.sum()
    tau = 8
    rates = [s.value for s in adversary.rounds_success(oracle, weights, tau)]
    assert all(b >= a - 1e-12 for a, b in zip(rates, rates[1:], strict=False))
    assert rates[-1] > rates[0] + 1e-3  # more reports of the memo do reveal more
    for t, rate in enumerate(rates, start=1):
        assert rate <= adversary.ldp_bound(oracle.rounds_epsilon(t), weights) + 1e-12
        assert rate <= adversary.ldp_bound(float(oracle.epsilon_inf), weights) + 1e-12
        assert rate >= adversary.baseline(weights) - 1e-12


def test_loloha_empirical_stays_below_the_bound():
    oracle = LOLOHA(epsilon=1.5, domain_size=8)
    weights = np.ones(8) / 8
    found = adversary.rounds_success(oracle, weights, 6, np.random.default_rng(2), 5000)
    bound = adversary.ldp_bound(float(oracle.epsilon_inf), weights)
    assert all(f.value <= bound + Z * f.standard_error for f in found)
    assert found[-1].value > found[0].value  # 0.43 -> 0.51 at these settings, se 0.007


def test_dbitflip_replays_add_nothing_and_d_above_one_is_empirical():
    oracle = DBitFlip(epsilon=2.0, domain_size=4)
    rates = [s.value for s in adversary.rounds_success(oracle, PRIOR, 4)]
    assert rates == [rates[0]] * 4
    wide = DBitFlip(epsilon=2.0, domain_size=4, d=2)
    assert wide.adversary_success(PRIOR) is None
    found = adversary.adversary_success(wide, PRIOR, rng=np.random.default_rng(1))
    assert found.method == "empirical"


def test_rounds_success_needs_rng_for_an_empirical_estimate_and_checks_tau():
    oracle = LOLOHA(epsilon=1.0, domain_size=4)
    with pytest.raises(TypeError, match="rng"):
        adversary.rounds_success(oracle, PRIOR, 2)
    with pytest.raises(ValueError, match="tau"):
        adversary.rounds_success(oracle, PRIOR, 0, np.random.default_rng(0))
    point = adversary.rounds_success(oracle, [1, 0, 0, 0], 3)
    assert [p.value for p in point] == [1.0, 1.0, 1.0]
