"""The Bayesian adversary's success rate (:mod:`ldp.adversary`), against brute force.

1. The closed forms: :func:`support_success` against the sum over every support set
   (2^d of them) and over every hash function [d] -> [g] (g^d of them); each protocol's
   own ``adversary_success`` against an independent sum over its declared reports (a
   categorical table, every bit vector of a product of bits, real hash seeds).
2. ε-LDP caps every adversary: S(π) <= π_max e^ε/(π_max(e^ε-1)+1) (uniform prior:
   e^ε/(e^ε+d-1), attained by randomized response), and S(π) >= π_max (the report can
   only help), for every registered oracle with a method.
3. The empirical estimate (real ``perturb``, MAP on ``log_likelihoods``) agrees with the
   exact value within its standard error.

Statistical assertions are at level ALPHA = 1e-4 each (two-sided z), with fixed seeds.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldp import adversary
from ldp.adversary import (
    adversary_method,
    adversary_success,
    baseline,
    check_prior,
    contenders,
    empirical_success,
    enumerated_success,
    ldp_bound,
    own_coordinate_success,
    support_success,
    table_success,
)
from ldp.contract import capabilities_of
from ldp.oracles import ORACLES
from ldp.privacy import DEFAULT_SEEDS
from ldp.validation import ParameterError

ALPHA = 1e-4
Z = float(stats.norm.isf(ALPHA / 2))
RTOL = 1e-12
EPSILONS = (0.3, 1.0, 3.0)


def priors(d: int, seed: int) -> list[np.ndarray]:
    """A uniform, a skewed random, a point-like and a tied prior over d values."""
    rng = np.random.default_rng(seed)
    tied = np.ones(d)
    tied[: d // 2] = 3.0
    spike = np.full(d, 1e-3)
    spike[d - 1] = 1.0
    skewed = rng.dirichlet(np.full(d, 0.5))
    return [np.full(d, 1.0 / d), skewed, spike / spike.sum(), tied / tied.sum()]


def build(name: str, epsilon: float, d: int):
    return ORACLES[name](epsilon=epsilon, domain_size=d)


def with_method(d: int) -> list[str]:
    return [n for n in ORACLES if adversary_method(build(n, 1.0, d)) is not None]


# ------------------------------------------------------------------ 1. closed forms
@pytest.mark.parametrize("d", [1, 2, 3, 6])
@pytest.mark.parametrize(("p", "q"), [(0.5, 0.2), (0.9, 0.1), (0.3, 0.3), (0.7, 0.5)])
def test_support_success_is_the_sum_over_support_sets(d, p, q):
    a, b = p / q, (1 - p) / (1 - q)
    for prior in priors(max(d, 2), d)[: 3 if d > 1 else 1]:
        prior = check_prior(prior[:d], d)
        total = 0.0
        for bits in itertools.product([0, 1], repeat=d):
            inside = np.array(bits, dtype=bool)
            chance = q ** inside.sum() * (1 - q) ** (d - inside.sum())
            total += chance * np.max(prior * np.where(inside, a, b))
        assert support_success(prior, p, q) == pytest.approx(total, rel=RTOL)


@pytest.mark.parametrize(("d", "g"), [(2, 2), (4, 2), (4, 3), (5, 4)])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_support_success_is_randomised_response_over_every_hash_function(d, g, epsilon):
    """Local hashing with an ideal hash: the mean over all g^d functions of Σ_y max_v."""
    p = math.exp(epsilon) / (math.exp(epsilon) + g - 1)
    other = (1 - p) / (g - 1)
    for prior in priors(d, 7):
        total = 0.0
        for function in itertools.product(range(g), repeat=d):
            table = np.where(np.arange(g)[None, :] == np.array(function)[:, None], p, other)
            total += table_success(prior, table)
        assert support_success(prior, p, 1 / g) == pytest.approx(total / g**d, rel=RTOL)


def bits_table(oracle, d: int) -> np.ndarray:
    """Pr[y | v] for every bit vector y of a product-of-bits report (rows: values)."""
    every = np.array(list(itertools.product([0, 1], repeat=d)), dtype=bool)
    rows = []
    for v in range(d):
        ones = np.asarray(oracle.report_probabilities(v))
        rows.append(np.prod(np.where(every, ones, 1 - ones), axis=1))
    return np.stack(rows)


def own_formula(d: int) -> list[str]:
    return [n for n in ORACLES if callable(getattr(build(n, 1.0, d), "adversary_success", None))]


@pytest.mark.parametrize("name", own_formula(5))
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_own_formula_against_brute_force(name, epsilon):
    """Each protocol's closed form against the sum over its declared report distribution."""
    d = 5
    oracle = build(name, epsilon, d)
    model = capabilities_of(oracle).report_model
    for prior in priors(d, 11):
        exact = oracle.adversary_success(prior)
        if model == "categorical":
            assert exact == pytest.approx(enumerated_success(oracle, prior), rel=RTOL)
        elif model == "bits" and not capabilities_of(oracle).public_randomness:
            assert exact == pytest.approx(table_success(prior, bits_table(oracle, d)), rel=RTOL)
        elif model == "bits":  # public draws, each equally likely (dBitFlip's buckets, d = 1)
            draws = oracle.public_draws()
            total = 0.0
            for draw in draws:
                every = np.array(list(itertools.product([0, 1], repeat=len(draw))), dtype=bool)
                table = []
                for v in range(d):
                    ones = np.asarray(oracle.report_probabilities(v, draw))
                    table.append(np.prod(np.where(every, ones, 1 - ones), axis=1))
                total += table_success(prior, np.stack(table))
            assert exact == pytest.approx(total / len(draws), rel=RTOL)
        elif model == "hashed":
            # the real seeded family: the mean over 256 fixed seeds of the per-seed sum,
            # against the ideal-hash closed form, within Z standard errors over seeds
            tables = np.stack([oracle.report_probabilities(v, DEFAULT_SEEDS) for v in range(d)])
            per_seed = np.max(prior[:, None, None] * tables, axis=0).sum(axis=1)
            error = per_seed.std(ddof=1) / math.sqrt(per_seed.size)
            assert abs(per_seed.mean() - exact) <= Z * error + 1e-12
        elif model == "product":  # d (2T+1)-valued coordinates: brute force at d = 2 below
            assert 0 < exact <= 1
        else:
            pytest.fail(f"{name}: no brute force for the {model!r} model")


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_own_formula_of_a_product_report_at_two_values(epsilon):
    """A product report over d = 2: Σ_{r0, r1} max(π_0 P(r0|0) P(r1|0), π_1 P(r0|1) P(r1|1))
    over every pair of coordinates (each of the 2T+1 values)."""
    for name in own_formula(2):
        oracle = build(name, epsilon, 2)
        if capabilities_of(oracle).report_model != "product":
            continue
        law = [np.asarray(oracle.report_probabilities(v)) for v in (0, 1)]  # (2, cells) each
        for prior in priors(2, 13):
            joint = [prior[v] * np.outer(law[v][0], law[v][1]) for v in (0, 1)]
            expected = np.maximum(*joint).sum()
            assert oracle.adversary_success(prior) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize(("d", "cells"), [(2, 2), (3, 3), (4, 2), (3, 5)])
def test_own_coordinate_success_is_the_sum_over_every_report(d, cells):
    rng = np.random.default_rng(d * 10 + cells)
    own, other = rng.dirichlet(np.ones(cells)), rng.dirichlet(np.ones(cells))
    every = np.array(list(itertools.product(range(cells), repeat=d)))
    for prior in priors(d, cells):
        own_cells, other_cells = own[every], other[every]  # (reports, d)
        rows = [
            prior[v] * np.prod(np.where(np.arange(d) == v, own_cells, other_cells), axis=1)
            for v in range(d)
        ]
        expected = np.max(np.stack(rows), axis=0).sum()
        got = own_coordinate_success(prior, own / other, other)
        assert got == pytest.approx(expected, rel=RTOL)


@pytest.mark.parametrize(("p", "q"), [(0.6, 0.2), (0.9, 0.3), (0.5, 0.01)])
def test_two_cells_are_the_support_formula(p, q):
    for d in (2, 9, 40):
        for prior in priors(d, d):
            two = own_coordinate_success(prior, [(1 - p) / (1 - q), p / q], [1 - q, q])
            assert two == pytest.approx(support_success(prior, p, q), rel=RTOL)


def test_own_coordinate_success_declines_a_costly_prior(monkeypatch):
    monkeypatch.setattr(adversary, "MAX_OWN_COORDINATE", 10)
    assert own_coordinate_success(np.full(4, 0.25), [0.5, 2.0], [2 / 3, 1 / 3]) is not None
    spread = np.linspace(1.0, 1.2, 8)
    assert own_coordinate_success(spread / spread.sum(), [0.5, 2.0], [2 / 3, 1 / 3]) is None


@pytest.mark.parametrize("epsilon", [0.3, 1.5, 4.0])
def test_categorical_enumeration_is_the_table_sum(epsilon):
    """enumerated_success (contenders only, running maximum) = the full table's sum."""
    d = 7
    zipf = 1.0 / np.arange(1, d + 1) ** 1.5
    for name in ORACLES:
        oracle = build(name, epsilon, d)
        if capabilities_of(oracle).report_model != "categorical":
            continue
        table = np.stack([oracle.report_probabilities(v) for v in range(d)])
        np.testing.assert_allclose(table.sum(axis=1), 1.0, rtol=1e-12)
        for prior in [*priors(d, 3), zipf / zipf.sum()]:
            expected = table_success(prior, table)
            assert enumerated_success(oracle, prior) == pytest.approx(expected, rel=RTOL)


def test_contenders_are_the_values_within_e_epsilon_of_the_top():
    prior = np.array([0.5, 0.3, 0.15, 0.05, 0.0])
    assert contenders(prior, 0.1).tolist() == [0]
    assert contenders(prior, math.log(0.5 / 0.15) + 1e-9).tolist() == [0, 1, 2]
    assert contenders(prior, 50.0).tolist() == [0, 1, 2, 3]  # never a value nobody holds


# ------------------------------------------------------------------ 2. the ε-LDP caps
@pytest.mark.parametrize("d", [2, 6])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_every_protocol_respects_the_ldp_bound(d, epsilon):
    rng = np.random.default_rng(int(epsilon * 10) + d)
    checked = 0
    for name in ORACLES:
        oracle = build(name, epsilon, d)
        if adversary_method(oracle) is None:
            continue
        for prior in priors(d, d):
            result = adversary_success(oracle, prior, rng=rng, n_samples=4000)
            slack = Z * result.standard_error + 1e-12
            assert result.value <= ldp_bound(epsilon, prior) + slack, name
            assert result.value >= baseline(prior) - slack, name
            checked += 1
    assert checked >= 4 * 10


@pytest.mark.parametrize("d", [2, 3, 10, 1000])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_uniform_prior_bound_and_randomised_response_attains_it(d, epsilon):
    uniform = np.full(d, 1.0 / d)
    bound = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    assert ldp_bound(epsilon, uniform) == pytest.approx(bound, rel=RTOL)
    for name in ORACLES:
        if capabilities_of(ORACLES[name]).randomized_response:
            oracle = build(name, epsilon, d)
            value = adversary_success(oracle, uniform).value
            assert value == pytest.approx(oracle.p_star, rel=RTOL)
            assert value == pytest.approx(bound, rel=1e-12)  # p* is e^ε/(e^ε+d-1) rounded down


def test_point_prior_is_always_guessed():
    prior = np.zeros(6)
    prior[2] = 1.0
    for name in with_method(6):
        result = adversary_success(build(name, 1.0, 6), prior, rng=np.random.default_rng(0))
        assert result.value == pytest.approx(1.0, rel=RTOL), name


# ------------------------------------------------------------------ 3. empirical vs exact
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_empirical_agrees_with_exact(epsilon):
    d, n = 6, 20_000
    compared = 0
    for name in ORACLES:
        oracle = build(name, epsilon, d)
        if adversary_method(oracle) != "exact" or not hasattr(oracle, "log_likelihoods"):
            continue
        for k, prior in enumerate(priors(d, 5)[:2]):
            exact = adversary_success(oracle, prior).value
            rng = np.random.default_rng([k, int(epsilon * 10), len(name)])
            estimate = empirical_success(oracle, prior, rng, n)
            assert estimate.method == "empirical"
            assert abs(estimate.value - exact) <= Z * math.sqrt(exact * (1 - exact) / n), name
            compared += 1
    assert compared >= 2 * 6


# ------------------------------------------------------------------ input and dispatch
def test_check_prior_refuses_bad_weights():
    with pytest.raises(ValueError, match="one weight per domain value"):
        check_prior([0.5, 0.5], 3)
    with pytest.raises(ValueError, match="non-negative"):
        check_prior([1.0, -0.5, 0.5], 3)
    with pytest.raises(ParameterError, match="prior weights must not all be 0"):
        check_prior([0, 0, 0], 3)
    with pytest.raises(TypeError, match="array of numbers"):
        check_prior(["a", "b", "c"], 3)
    np.testing.assert_allclose(check_prior([2, 1, 1], 3), [0.5, 0.25, 0.25])


def test_support_success_refuses_p_below_q():
    with pytest.raises(ValueError, match="q <= p"):
        support_success(np.full(3, 1 / 3), 0.2, 0.5)


def test_dispatch_without_a_method_or_rng():
    class Opaque:
        epsilon, domain_size = 1.0, 4

    with pytest.raises(adversary.NoAdversary, match="cannot be computed"):
        adversary_success(Opaque(), np.ones(4))
    empirical_only = next(
        (n for n in ORACLES if adversary_method(build(n, 1.0, 6)) == "empirical"), None
    )
    if empirical_only is not None:
        with pytest.raises(TypeError, match="needs rng"):
            adversary_success(build(empirical_only, 1.0, 6), np.ones(6))


def test_enumeration_stops_at_its_cost(monkeypatch):
    """Above MAX_ENUMERATION products a categorical protocol is not enumerated."""
    name = next(
        n
        for n in ORACLES
        if capabilities_of(ORACLES[n]).report_model == "categorical"
        and not hasattr(ORACLES[n], "adversary_success")
    )
    oracle = build(name, 1.0, 6)
    assert adversary_method(oracle) == "exact"
    monkeypatch.setattr(adversary, "MAX_ENUMERATION", 5)
    assert adversary_method(oracle) in (None, "empirical")


# ------------------------------------------------------------------ per-report likelihoods
def declared_loglik(oracle, reports) -> np.ndarray | None:
    """ln Pr[report_i | v] from the protocol's declared ``report_probabilities``."""
    d, name = oracle.domain_size, oracle.name
    if name == "RAPPOR":
        ones = np.unpackbits(reports.bits, axis=1, count=oracle.k, bitorder="little")
        law = [oracle.report_probabilities(v, reports.cohorts) for v in range(d)]
    elif name == "CMS":
        ones = np.unpackbits(reports.bits, axis=1, count=oracle.m)
        law = [oracle.report_probabilities(v, reports.seeds) for v in range(d)]
    elif name == "HCMS":
        index = np.arange(len(reports.seeds))
        return np.stack(
            [
                np.log(oracle.report_probabilities(v, reports.seeds))[
                    index, reports.coefficients, reports.bits.astype(np.int64)
                ]
                for v in range(d)
            ],
            axis=1,
        )
    elif name == "SHE":
        ones = None
        law = None
    elif name in ("GRR", "LGRR"):
        return np.stack([np.log(oracle.report_probabilities(v))[reports] for v in range(d)], 1)
    elif capabilities_of(oracle).report_model == "hashed":  # BLH, OLH, FLH: (seed, cell)
        index = np.arange(len(reports.values))
        law = [oracle.report_probabilities(v, reports.seeds) for v in range(d)]
        return np.stack([np.log(p)[index, reports.values] for p in law], axis=1)
    elif name == "dBitFlip":  # the bits of each report's sampled buckets
        ones = reports.bits.astype(np.int64)
        law = [oracle.report_probabilities(v, reports.buckets) for v in range(d)]
    elif capabilities_of(oracle).report_model == "bits":  # unary encodings
        ones = np.unpackbits(reports.bits, axis=1, count=d)
        law = [np.broadcast_to(oracle.report_probabilities(v), ones.shape) for v in range(d)]
    else:
        return None
    if law is None:  # SHE: independent integer coordinates, one pmf table per coordinate
        offset = oracle.noise.support
        return np.stack(
            [
                np.log(oracle.report_probabilities(v))[np.arange(d), reports + offset].sum(axis=1)
                for v in range(d)
            ],
            axis=1,
        )
    return np.stack([np.where(ones == 1, np.log(p), np.log1p(-p)).sum(axis=1) for p in law], axis=1)


@pytest.mark.parametrize("name", [n for n in ORACLES if hasattr(ORACLES[n], "log_likelihoods")])
def test_log_likelihoods_are_the_declared_law_up_to_a_constant(name):
    d = 6
    oracle = build(name, 1.5, d)
    rng = np.random.default_rng(len(name))
    values = rng.integers(0, d, size=300)
    reports = oracle.perturb(values, rng)
    mine = oracle.log_likelihoods(reports)
    assert mine.shape == (300, d)
    declared = declared_loglik(oracle, reports)
    assert declared is not None, f"{name}: add its declared law to declared_loglik"
    shift = declared - mine  # a constant per report
    np.testing.assert_allclose(shift - shift[:, :1], 0.0, atol=1e-9)
