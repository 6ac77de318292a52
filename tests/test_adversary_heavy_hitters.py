"""The heavy hitters' adversary: exact values against brute force over every report.

A user of group j sends one report of key_j(v); the success at guessing the whole value v
is Σ_j w_j Σ_y max_x π_x Pr_j[y | key_j(x)].  Brute force here sums over every report
(every GRR output, every bit vector of a unary encoding, every hash function of an ideal
family and every cell) and maximises over the whole domain, zero-prior values included.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from ldp import adversary, bits
from ldp.heavy_hitters import PEM, TreeHist
from ldp.heavy_hitters.base import ReportGroup, UserReport
from ldp.oracles import GRR, OLH, SUE
from ldp.validation import ParameterError

M = 3
#: A prior over the 2^M values with ties, zeros and prefixes shared by several values.
COUNTS = np.array([0, 7, 7, 3, 0, 2, 11, 1], dtype=float)
PRIOR = COUNTS / COUNTS.sum()


def report_table(oracle) -> np.ndarray:
    """Pr[y | u] for every input u (rows) and every report y (columns), by enumeration."""
    d = oracle.domain_size
    if isinstance(oracle, GRR):
        return np.stack([oracle.report_probabilities(u) for u in range(d)])
    if isinstance(oracle, SUE):  # every bit vector: Π_j p or q, own bit p
        p, q = oracle.p_star, oracle.q_star
        vectors = np.array(list(itertools.product((0, 1), repeat=d)), dtype=bool)
        table = np.empty((d, vectors.shape[0]))
        for u in range(d):
            on = np.full(d, q)
            on[u] = p
            table[u] = np.prod(np.where(vectors, on, 1 - on), axis=1)
        return table
    if isinstance(oracle, OLH):  # every hash function [d] -> [g] (ideal family), every cell
        g, p = oracle.g, oracle.p_star
        functions = np.array(list(itertools.product(range(g), repeat=d)))
        table = np.empty((d, functions.shape[0], g))
        for u in range(d):
            hit = functions[:, u, None] == np.arange(g)[None, :]
            table[u] = np.where(hit, p, (1 - p) / (g - 1)) / functions.shape[0]
        return table.reshape(d, -1)
    raise AssertionError(type(oracle))


def brute_force(protocol, prior: np.ndarray) -> float:
    """Σ_j w_j Σ_y max_x π_x Pr_j[y | key_j(x)] over every x of {0,1}^M and every report."""
    words = np.arange(2**M, dtype=np.uint64)
    total = 0.0
    for group in protocol.report_groups():
        (report,) = group.reports
        keys = report.key(words).astype(np.int64)
        table = report_table(report.oracle)[keys]  # Pr[y | key(x)] for every x
        total += group.weight * float(np.max(prior[:, None] * table, axis=0).sum())
    return total


def success(protocol, prior=PRIOR):
    values = np.arange(2**M, dtype=np.uint64)
    return adversary.heavy_hitter_success(protocol, values, prior)


@pytest.mark.parametrize("oracle", [GRR, OLH, SUE])
def test_pem_matches_brute_force_over_every_report(oracle):
    """Groups of prefix lengths 1, 2, 3 (γ = 0, η = 1) and unequal weights."""
    pem = PEM(
        epsilon=0.8, k=2, m=M, oracle=oracle, etas=(1, 1, 1), gamma=0, fractions=(0.5, 0.3, 0.2)
    )
    assert [len(g.reports) for g in pem.report_groups()] == [1, 1, 1]
    found = success(pem)
    assert found.method == "exact" and found.standard_error == 0
    assert found.value == pytest.approx(brute_force(pem, PRIOR), rel=1e-12)
    assert PRIOR.max() < found.value < adversary.ldp_bound(0.8, PRIOR)


@pytest.mark.parametrize("oracle", [GRR, OLH, SUE])
def test_treehist_matches_brute_force_over_every_report(oracle):
    tree = TreeHist(epsilon=0.8, k=2, m=M, oracle=oracle, form="top-k")
    assert [g.weight for g in tree.report_groups()] == [1 / M] * M
    found = success(tree)
    assert found.method == "exact"
    assert found.value == pytest.approx(brute_force(tree, PRIOR), rel=1e-12)


def test_the_full_prefix_group_is_the_oracle_on_the_value():
    """One group reporting the whole value: the oracle's own adversary on the prior."""
    pem = PEM(epsilon=1.0, k=1, m=M, oracle=OLH, etas=(M,), gamma=0)
    found = success(pem)
    assert found.value == pytest.approx(
        adversary.adversary_success(OLH(epsilon=1.0, domain_size=2**M), PRIOR).value, rel=1e-12
    )


class Prefixes:
    """A stand-in heavy hitter: half the users report a 4-bit prefix, half a ``top``-bit one."""

    m = 64

    def __init__(self, oracle, epsilon, top=64):
        self.oracle, self.epsilon, self.top = oracle, epsilon, top

    def report_groups(self):
        return tuple(
            ReportGroup(0.5, (UserReport(self.oracle(epsilon=self.epsilon, domain_size=2**ell),
                                         functools.partial(bits.prefix, m=64, ell=ell)),))
            for ell in (4, self.top)
        )  # fmt: skip


def test_support_only_oracles_are_exact_on_huge_domains():
    """Prefixes of 64-bit values through OLH: ρ over the held prefixes only, the same as the
    dense prior over a small domain holding the same weights."""
    rng = np.random.default_rng(5)
    values = np.unique(rng.integers(0, 2**64, size=40, dtype=np.uint64))
    counts = rng.integers(1, 30, size=values.shape[0]).astype(float)
    found = adversary.heavy_hitter_success(Prefixes(OLH, 2.0), values, counts)
    prior = counts / counts.sum()
    expected = 0.0
    for ell in (4, 64):
        held, rho = adversary.pushed_prior(bits.prefix(values, 64, ell), prior)
        small = OLH(epsilon=2.0, domain_size=max(2, held.shape[0]))
        expected += 0.5 * rho.sum() * small.adversary_success(rho / rho.sum())
    assert found.method == "exact" and found.value == pytest.approx(expected, rel=1e-12)
    assert prior.max() < found.value < adversary.ldp_bound(2.0, prior)


def test_pushed_prior_takes_the_most_likely_value_per_key():
    keys = np.array([3, 1, 3, 2, 1], dtype=np.uint64)
    held, rho = adversary.pushed_prior(keys, np.array([0.1, 0.3, 0.25, 0.05, 0.3]))
    assert held.tolist() == [1, 2, 3] and rho.tolist() == [0.3, 0.05, 0.25]
    sorted_keys = np.array([1, 1, 2, 3, 3], dtype=np.uint64)  # the one-pass path
    held, rho = adversary.pushed_prior(sorted_keys, np.array([0.3, 0.3, 0.05, 0.1, 0.25]))
    assert held.tolist() == [1, 2, 3] and rho.tolist() == [0.3, 0.05, 0.25]


def test_a_point_prior_and_what_cannot_be_computed():
    pem = PEM(epsilon=1.0, k=1, m=M, oracle=GRR, eta=1, gamma=1)
    point = np.zeros(2**M)
    point[5] = 4
    assert success(pem, point).value == 1.0

    class Split:
        """Every user sends two reports (a split budget): enumerated, GRR being categorical."""

        m = M

        def report_groups(self):
            half = GRR(epsilon=0.5, domain_size=2**M)
            both = (UserReport(half, np.asarray), UserReport(half, np.asarray))
            return (ReportGroup(1.0, both),)

    assert success(Split()).method == "exact"
    with pytest.raises(adversary.NoAdversary, match="report_groups"):
        success(object())
    for bad in (-PRIOR, PRIOR[:3], np.zeros(2**M)):
        with pytest.raises(ParameterError) as error:
            success(pem, bad)
        assert error.value.name == "counts"
    with pytest.raises(adversary.NoAdversary, match="adversary_support_only"):  # GRR on 2^64
        adversary.heavy_hitter_success(
            Prefixes(GRR, 1.0, top=40), np.array([1, 2], dtype=np.uint64), [1, 1]
        )


def test_an_empirical_group_carries_its_standard_error():
    """A group whose oracle's adversary is empirical (a dense prior, no closed form): the
    estimate lies within 4.5 standard errors of brute force (level ~1e-5)."""
    from ldp.oracles import ORACLES

    cms = ORACLES["CMS"]
    pem = PEM(epsilon=2.0, k=1, m=M, oracle=cms, etas=(M,), gamma=0)
    found = adversary.heavy_hitter_success(
        pem, np.arange(2**M, dtype=np.uint64), PRIOR, rng=np.random.default_rng(3), n_samples=4000
    )
    oracle, rng = cms(epsilon=2.0, domain_size=2**M), np.random.default_rng(9)
    direct = adversary.adversary_success(oracle, PRIOR, rng, 20000)
    assert found.method == "empirical" and found.standard_error > 0
    spread = np.hypot(found.standard_error, direct.standard_error)
    assert abs(found.value - direct.value) < 4.5 * spread


def test_pushed_prior_of_word_rows_sorted_or_not():
    """Keys of more than 64 bits (word rows): the one-pass path on sorted rows and the sort
    on unsorted ones agree."""
    rows = np.array([[0, 5], [0, 5], [1, 0], [1, 0], [1, 2]], dtype=np.uint64)
    weights = np.array([0.1, 0.2, 0.3, 0.15, 0.25])
    held, rho = adversary.pushed_prior(rows, weights)
    assert held.tolist() == [[0, 5], [1, 0], [1, 2]] and rho.tolist() == [0.2, 0.3, 0.25]
    order = [4, 2, 0, 3, 1]
    held, rho = adversary.pushed_prior(rows[order], weights[order])
    assert held.tolist() == [[0, 5], [1, 0], [1, 2]] and rho.tolist() == [0.2, 0.3, 0.25]


def test_values_wider_than_64_bits():
    """160-bit values as bytes: the same as their 64-bit-wide prefix stand-ins would give."""
    rng = np.random.default_rng(2)
    raw = rng.integers(0, 4, size=(30, 20), dtype=np.uint8)  # many shared prefixes
    values = np.unique(raw.view("S20")[:, 0])
    counts = rng.integers(1, 9, size=values.shape[0]).astype(float)
    tree = TreeHist(epsilon=1.0, k=2, m=160, oracle=OLH, form="top-k")
    found = adversary.heavy_hitter_success(tree, values, counts)
    prior = counts / counts.sum()
    words = bits.to_words(values, 160)
    expected = 0.0
    for ell in range(1, 161):  # each level unsorted: the np.unique path
        held, rho = adversary.pushed_prior(bits.prefix(words, 160, ell)[::-1], prior[::-1])
        if rho.shape[0] == 1:
            expected += rho.sum() / 160
            continue
        oracle = OLH(epsilon=1.0, domain_size=held.shape[0])
        expected += rho.sum() * oracle.adversary_success(rho / rho.sum()) / 160
    assert found.method == "exact" and found.value == pytest.approx(expected, rel=1e-12)
