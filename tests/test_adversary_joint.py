"""The heavy hitters' adversary when a user sends several reports of one value.

A user of the group perturbs key_1(v), ..., key_r(v) independently; the success at guessing
v is Σ_{y_1..y_r} max_x π_x Π_t Pr_t[y_t | key_t(x)].  Brute force here sums over every
joint report (every GRR output; every hash function of an ideal family and every cell)
and maximises over the whole domain, zero-prior values included.  Empirical estimates are
held to 4 standard errors of the exact value (two-sided level 6e-5 per assertion).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from ldp import adversary
from ldp.heavy_hitters import SPM
from ldp.heavy_hitters.base import ReportGroup, UserReport
from ldp.heavy_hitters.baseline import segment
from ldp.oracles import GRR, OLH

M = 4
#: A prior over the 4-bit values with ties, zeros and segments shared by several values.
COUNTS = np.array([0, 7, 7, 3, 0, 2, 11, 1, 4, 0, 9, 1, 3, 3, 0, 6], dtype=float)
PRIOR = COUNTS / COUNTS.sum()
WORDS = np.arange(2**M, dtype=np.uint64)


def halves(oracle, epsilon: float) -> tuple[UserReport, UserReport]:
    """The high and the low 2 bits of a 4-bit value, each through its own oracle run."""
    return tuple(
        UserReport(oracle(epsilon=epsilon, domain_size=4), functools.partial(segment, m=M,
                   start=start, length=2))
        for start in (0, 2)
    )  # fmt: skip


class Stand:
    """A stand-in heavy hitter: one group of the given reports."""

    m = M

    def __init__(self, *reports):
        self.reports = reports

    def report_groups(self):
        return (ReportGroup(1.0, self.reports),)


def table(oracle) -> np.ndarray:
    """Pr[y | u] for every input u (rows) and every report y (columns), by enumeration."""
    d = oracle.domain_size
    if isinstance(oracle, GRR):  # the formula, not report_probabilities
        return np.where(np.eye(d, dtype=bool), oracle.p_star, oracle.q_star)
    if isinstance(oracle, OLH):  # every hash function [d] -> [g] (ideal family), every cell
        g, p = oracle.g, oracle.p_star
        functions = np.array(list(itertools.product(range(g), repeat=d)))
        out = np.empty((d, functions.shape[0], g))
        for u in range(d):
            hit = functions[:, u, None] == np.arange(g)[None, :]
            out[u] = np.where(hit, p, (1 - p) / (g - 1)) / functions.shape[0]
        return out.reshape(d, -1)
    raise AssertionError(type(oracle))


def brute_force(reports, prior=PRIOR) -> float:
    """Σ over every joint report of max over every x of π_x Π_t Pr_t[y_t | key_t(x)]."""
    best = None
    for x in range(2**M):
        joint = np.array([prior[x]])
        for report in reports:
            key = int(report.key(WORDS[x : x + 1])[0])
            joint = np.outer(joint, table(report.oracle)[key]).ravel()
        best = joint if best is None else np.maximum(best, joint)
    return float(best.sum())


def test_two_grr_segments_are_exact_and_match_brute_force():
    reports = halves(GRR, 0.7)
    found = adversary.heavy_hitter_success(Stand(*reports), WORDS, COUNTS)
    assert found.method == "exact" and found.standard_error == 0
    assert found.value == pytest.approx(brute_force(reports), rel=1e-12)
    assert PRIOR.max() < found.value < adversary.ldp_bound(1.4, PRIOR)


def test_a_segment_beside_the_whole_value_is_exact():
    """Three reports (two segments and the value itself), the split budget's shape."""
    whole = UserReport(GRR(epsilon=0.4, domain_size=2**M), lambda words: words)
    reports = (*halves(GRR, 0.3), whole)
    found = adversary.heavy_hitter_success(Stand(*reports), WORDS, COUNTS)
    assert found.method == "exact"
    assert found.value == pytest.approx(brute_force(reports), rel=1e-12)


def test_the_empirical_estimate_agrees_with_the_exact_value():
    reports = halves(GRR, 1.0)
    support = COUNTS > 0
    words, prior = WORDS[support], PRIOR[support]
    exact = adversary.enumerated_joint_success(
        [r.oracle for r in reports], [r.key(words) for r in reports], prior
    )
    rng = np.random.default_rng(11)
    found = adversary.empirical_joint_success([(1.0, reports)], words, prior, rng, n_samples=20_000)
    assert found.method == "empirical" and found.standard_error > 0
    assert abs(found.value - exact) < 4 * found.standard_error


def test_olh_segments_match_brute_force_over_an_ideal_hash_family():
    """Real seeded hashes against every hash function [4] -> [3]: within 4 standard errors
    (a real family deviates from an ideal one far less than that)."""
    reports = halves(OLH, 0.5)
    assert reports[0].oracle.g == 3
    found = adversary.heavy_hitter_success(
        Stand(*reports), WORDS, COUNTS, rng=np.random.default_rng(4), n_samples=20_000
    )
    assert found.method == "empirical"
    assert abs(found.value - brute_force(reports)) < 4 * found.standard_error


def test_partitioned_spm_matches_brute_force():
    """The value group (10%, π(v) at ε) is exact; the pair group's two OLH segment reports at
    ε/2 are estimated: together within 4 standard errors of brute force."""
    spm = SPM(epsilon=1.0, k=2, m=M, variant="partitioned", segment_bits=2)
    groups = spm.report_groups()
    assert [len(g.reports) for g in groups] == [1, 2]
    assert [g.weight for g in groups] == pytest.approx([0.1, 0.9])
    (value,) = groups[0].reports  # OLH on the whole value: its exact form (tested elsewhere)
    expected = 0.1 * value.oracle.adversary_success(PRIOR) + 0.9 * brute_force(groups[1].reports)
    found = adversary.heavy_hitter_success(
        spm, WORDS, COUNTS, rng=np.random.default_rng(8), n_samples=20_000
    )
    assert found.method == "empirical"
    assert abs(found.value - expected) < 4 * found.standard_error


def test_split_spm_sends_three_reports_per_pair_group():
    """g = 3 segments: three pair groups, each with its two segments and π(v) at ε/3."""
    spm = SPM(epsilon=2.0, k=2, m=6, variant="improved", segment_bits=2)
    groups = spm.report_groups()
    assert [g.weight for g in groups] == pytest.approx([1 / 3] * 3)
    assert all(len(g.reports) == 3 for g in groups)
    values = np.arange(64, dtype=np.uint64)
    counts = np.random.default_rng(1).integers(0, 20, size=64).astype(float)
    found = adversary.heavy_hitter_success(spm, values, counts, rng=np.random.default_rng(2))
    prior = counts / counts.sum()
    spread = 4 * found.standard_error
    assert prior.max() - spread < found.value < adversary.ldp_bound(2.0, prior) + spread


def test_many_groups_share_one_sample_of_users():
    """Two groups (weights 0.3 and 0.7) estimated from one sample: the weighted sum of their
    exact values, within 4 standard errors."""
    first, second = halves(GRR, 0.6), halves(GRR, 1.5)
    support = COUNTS > 0
    words, prior = WORDS[support], PRIOR[support]
    exact = [
        adversary.enumerated_joint_success(
            [r.oracle for r in reports], [r.key(words) for r in reports], prior
        )
        for reports in (first, second)
    ]
    rng = np.random.default_rng(12)
    groups = [(0.3, first), (0.7, second)]
    found = adversary.empirical_joint_success(groups, words, prior, rng, n_samples=20_000)
    assert found.method == "empirical"
    assert abs(found.value - (0.3 * exact[0] + 0.7 * exact[1])) < 4 * found.standard_error
    part = adversary.empirical_joint_success(groups[:1], words, prior, rng, n_samples=20_000)
    assert abs(part.value - 0.3 * exact[0]) < 4 * part.standard_error  # W x the hit rate


def test_too_costly_groups_are_refused():
    reports = halves(OLH, 0.5)
    with pytest.raises(adversary.NoAdversary, match="too costly"):
        adversary.empirical_joint_success(
            [(1.0, reports)], WORDS, PRIOR, np.random.default_rng(0), n_samples=2**22
        )


def test_a_unary_whole_value_over_2_64_values_is_refused_not_attempted():
    """Original SPM sends π(v) through SUE over 2^64 values: refused by its report size."""
    spm = SPM(epsilon=2.0, k=2, m=64, variant="original")
    values = np.array([1, 2, 3], dtype=np.uint64)
    with pytest.raises(adversary.NoAdversary, match="too costly"):
        adversary.heavy_hitter_success(spm, values, [5, 3, 2], rng=np.random.default_rng(0))
