"""The heavy hitters' adversary when keys go through a public hash drawn per run.

MCM sends its block through the channel H(v) (:class:`ldp.heavy_hitters.mcm.ChannelReport`),
SFP its puzzle key H(v) ‖ v[α]; the strawman has no hash but sends a segment beside π(v).
The adversary knows the run's hash, so the success is exact given it.  Brute force sums
over every report (every channel row of patterns, every GRR output, every hash function of
an ideal family and every cell) and maximises over the whole domain; empirical estimates
are held to 4 standard errors (two-sided level 6e-5 per assertion).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from ldp import adversary
from ldp.heavy_hitters import MCM, SFP
from ldp.heavy_hitters.mcm import ChannelReport
from ldp.heavy_hitters.strawman import Strawman
from ldp.oracles import GRR
from tests.test_adversary_heavy_hitters import report_table

M = 4
COUNTS = np.array([0, 7, 7, 3, 0, 2, 11, 1, 4, 0, 9, 1, 3, 3, 0, 6], dtype=float)
PRIOR = COUNTS / COUNTS.sum()
WORDS = np.arange(2**M, dtype=np.uint64)


def channel_table(report: ChannelReport) -> np.ndarray:
    """Pr[r | key] for every key (rows) and every row r of h patterns (columns)."""
    d, h, own = 2**report.bits, report.channels, report.own
    rows = np.array(list(itertools.product(range(d), repeat=h)))
    out = np.empty((h * d, rows.shape[0]))
    for key in range(h * d):
        channel, pattern = divmod(key, d)
        hit = rows[:, channel] == pattern
        out[key] = np.where(hit, own.p_star, own.q_star) / d ** (h - 1)
    return out


def oracle_table(oracle) -> np.ndarray:
    """Pr[y | u] of a channel row, or of GRR / OLH (every hash function of an ideal family)."""
    return channel_table(oracle) if isinstance(oracle, ChannelReport) else report_table(oracle)


def brute_force(groups, prior=PRIOR) -> float:
    """Σ_j w_j Σ over every joint report of max_x π_x Π_t Pr_t[y_t | key_t(x)]."""
    total = 0.0
    for group in groups:
        tables = [oracle_table(report.oracle) for report in group.reports]
        keys = [report.key(WORDS).astype(np.int64) for report in group.reports]
        best = None
        for x in range(2**M):
            joint = np.array([prior[x]])
            for table, key in zip(tables, keys, strict=True):
                joint = np.outer(joint, table[key[x]]).ravel()
            best = joint if best is None else np.maximum(best, joint)
        total += group.weight * float(best.sum())
    return total


@pytest.mark.parametrize(
    "channels, bits, epsilon", [(1, 2, 1.5), (2, 1, 0.3), (3, 1, 1.0), (2, 2, 0.7), (4, 1, 2.5)]
)
def test_channel_report_success_matches_brute_force(channels, bits, epsilon):
    report = ChannelReport(epsilon, channels, bits)
    rng = np.random.default_rng(channels * 10 + bits)
    prior = rng.random(report.domain_size) * (rng.random(report.domain_size) < 0.7)
    prior[0] += 0.05  # never all zero; zeros elsewhere (channels nobody holds)
    prior /= prior.sum()
    expected = float(np.max(prior[:, None] * channel_table(report), axis=0).sum())
    assert report.adversary_success(prior) == pytest.approx(expected, rel=1e-12)


def test_channel_report_rows_follow_the_stated_law():
    """Rows drawn by perturb for one key against Pr[r | key], chi-square at level 1e-4;
    and log_likelihoods equals ln Pr[r | key] up to one constant per row."""
    report = ChannelReport(1.2, 3, 1)
    key, n = 3, 40_000  # channel 1, pattern 1
    rows = report.perturb(np.full(n, key), np.random.default_rng(5))
    assert rows.dtype == np.uint8 and rows.shape == (n, 3)
    index = (rows.astype(np.int64) * np.array([4, 2, 1])).sum(axis=1)
    observed = np.bincount(index, minlength=8)
    law = channel_table(report)[key]
    assert law.sum() == pytest.approx(1.0)
    assert stats.chisquare(observed, n * law).pvalue > 1e-4
    all_rows = np.array(list(itertools.product(range(2), repeat=3)))
    log_likelihoods = report.log_likelihoods(all_rows)
    offsets = log_likelihoods - np.log(channel_table(report).T)
    assert np.allclose(offsets, offsets[:, :1])


def test_partitioned_mcm_is_exact_given_the_run_hash():
    """10% send π(v) at ε (OLH), the others one bit on their channel: exact, equal to brute
    force over the groups of the same hash."""
    mcm = MCM(epsilon=1.0, k=2, m=M, variant="partitioned", channels=2)
    groups = mcm.report_groups(n_users=100, rng=np.random.default_rng(3))
    assert [len(g.reports) for g in groups] == [1] * (1 + M)
    (value,) = groups[0].reports
    expected = groups[0].weight * value.oracle.adversary_success(PRIOR) + brute_force(groups[1:])
    found = adversary.heavy_hitter_success(mcm, WORDS, COUNTS, rng=np.random.default_rng(3))
    assert found.method == "exact"
    assert found.value == pytest.approx(expected, rel=1e-12)
    assert PRIOR.max() < found.value < adversary.ldp_bound(1.0, PRIOR)


def test_split_mcm_estimate_matches_brute_force():
    """Every user sends its channel row and π(v) (GRR over 16 values): the joint enumerated
    exactly would need the rows' law, so the estimate is empirical; within 4 standard errors."""
    mcm = MCM(epsilon=1.4, k=2, m=M, variant="improved", oracle=GRR, channels=2)
    groups = mcm.report_groups(n_users=100, rng=np.random.default_rng(6))
    assert all(len(g.reports) == 2 for g in groups)
    found = adversary.heavy_hitter_success(
        mcm, WORDS, COUNTS, rng=np.random.default_rng(6), n_samples=20_000
    )
    assert found.method == "empirical"
    assert abs(found.value - brute_force(groups)) < 4 * found.standard_error


def test_the_block_key_is_the_channel_hash_a_run_draws():
    """report_groups draws H's seed as run does, and the key is H(v) 2^b + v[block]."""
    mcm = MCM(epsilon=1.0, k=2, m=M, variant="partitioned", channels=3, block_bits=2)
    groups = mcm.report_groups(n_users=50, rng=np.random.default_rng(9))
    seed = int(np.random.default_rng(9).integers(0, 2**64, dtype=np.uint64))
    channel = MCM.channel_of(WORDS, 3, seed)
    for group, shift in zip(groups[1:], (2, 0), strict=True):
        (report,) = group.reports
        expected = channel * 4 + ((WORDS.astype(np.int64) >> shift) & 3)
        np.testing.assert_array_equal(report.key(WORDS), expected)


def test_partitioned_sfp_is_exact_and_matches_brute_force():
    """Puzzle keys H(v) ‖ v[α] with a 1-bit hash: values colliding on a key are told apart
    only by the value group."""
    sfp = SFP(epsilon=0.5, k=2, m=M, variant="partitioned", hash_bits=1, segment_bits=2)
    groups = sfp.report_groups(rng=np.random.default_rng(2))
    assert [g.weight for g in groups] == pytest.approx([0.1, 0.45, 0.45])
    (value,) = groups[0].reports
    expected = groups[0].weight * value.oracle.adversary_success(PRIOR) + brute_force(groups[1:])
    found = adversary.heavy_hitter_success(sfp, WORDS, COUNTS, rng=np.random.default_rng(2))
    assert found.method == "exact"
    assert found.value == pytest.approx(expected, rel=1e-12)


def test_split_strawman_with_grr_is_enumerated_exactly():
    straw = Strawman(epsilon=1.0, k=2, m=M, variant="improved", oracle=GRR, segment_bits=2)
    groups = straw.report_groups()
    assert [len(g.reports) for g in groups] == [2, 2]
    found = adversary.heavy_hitter_success(straw, WORDS, COUNTS)
    assert found.method == "exact"
    assert found.value == pytest.approx(brute_force(groups), rel=1e-12)


def test_a_public_hash_needs_rng():
    mcm = MCM(epsilon=1.0, k=2, m=M, variant="partitioned", channels=2)
    with pytest.raises(TypeError, match="rng"):
        adversary.heavy_hitter_success(mcm, WORDS, COUNTS)
