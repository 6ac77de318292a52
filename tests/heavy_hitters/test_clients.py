"""What every heavy hitter's users send (``perturb``), and the rules all four share.

* The client: ``perturb(values, rng)`` is what ``run(engine="reports")`` aggregates; its
  groups follow the protocol's fractions and each part is reported at the ε the budget
  gives it (split: shares of ε; partition: all of ε).  The budgets are checked on the
  reports themselves: every user holds one value v, so the number of reports supporting
  v (or a fixed other value v') is Binomial(users, p*) (or (users, q*)) of the oracle at
  the expected ε; two-sided z-tests at α = 1e-4 each, with enough users that the other
  budget's p* or q* lies more than 8 standard deviations away.
* Parameters every protocol checks at construction (ε unsupported by its oracle, oracle
  names, which m are valid) and a data set with no users.
"""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
import pytest
from scipy import stats

from ldp import bits
from ldp.datasets import Dataset, load
from ldp.heavy_hitters import MCM, PEM, SFP, SPM, ClientReports, Strawman, TreeHist
from ldp.heavy_hitters.baseline import segment
from ldp.oracles import GRR, OLH, SUE

ALPHA = 1e-4
Z = stats.norm.isf(ALPHA / 2)
V, OTHER = 0xABCD, 0x1234  # a user's value and a value nobody holds (m = 16)


def _z(count: int, n: int, p: float) -> float:
    return (count - n * p) / math.sqrt(n * p * (1 - p))


def _assert_rate(oracle, reports, value: int, rate: float, other_rate: float) -> None:
    """#reports supporting ``value`` is Bin(n, rate) and far from Bin(n, other_rate)."""
    n = oracle.n_reports(reports)
    count = int(oracle.support_counts(reports, np.array([value], dtype=np.uint64))[0])
    assert abs(_z(count, n, rate)) < Z
    assert abs(_z(count, n, other_rate)) > 2 * Z


def _olh(epsilon: float, bits_: int) -> OLH:
    return OLH(epsilon=epsilon, domain_size=2**bits_)


# ------------------------------------------------------------------------- the client
def test_pem_client_reports_each_prefix_through_olh_at_epsilon():
    pem = PEM(epsilon=2.0, k=4, m=16, eta=6, gamma=2)  # prefixes of 8 and 14 bits, then 16
    n = 60_000
    reports = pem.perturb(np.full(n, V, dtype=np.uint64), np.random.default_rng(0))
    assert isinstance(reports, ClientReports) and len(reports.parts) == pem.config.g == 3
    counts = np.bincount(reports.groups, minlength=3)
    assert stats.chisquare(counts, n * np.array(pem.config.fractions)).pvalue > ALPHA
    for i, ell in enumerate(pem.config.lengths):
        oracle = pem.step_oracle(i)
        assert oracle.n_reports(reports.parts[i]) == counts[i]
        prefix = V >> (16 - ell)
        other = (OTHER >> (16 - ell)) ^ (prefix == OTHER >> (16 - ell))
        q_other = 1 / _olh(0.5, ell).g  # what a smaller ε would give
        _assert_rate(oracle, reports.parts[i], other, oracle.q_star, q_other)


def test_treehist_client_reports_each_level_prefix_through_olh_at_epsilon():
    """Level ℓ's users (group ℓ - 1, uniform) send their ℓ-bit prefix through OLH at ε."""
    tree = TreeHist(epsilon=2.0, k=4, m=4)
    n = 40_000
    reports = tree.perturb(np.full(n, 0b1011, dtype=np.uint64), np.random.default_rng(1))
    assert isinstance(reports, ClientReports) and len(reports.parts) == 4
    counts = np.bincount(reports.groups, minlength=4)
    assert stats.chisquare(counts, np.full(4, n / 4)).pvalue > ALPHA
    for index, level in enumerate(tree.levels):
        oracle = tree.client(level).oracle
        assert oracle.n_reports(reports.parts[index]) == counts[index]
        other = (0b1011 >> (4 - level)) ^ 1  # the sibling prefix nobody holds
        q_other = 1 / _olh(0.5, level).g  # what a smaller ε would give
        _assert_rate(oracle, reports.parts[index], other, oracle.q_star, q_other)


@pytest.mark.parametrize("budget", ["split", "partition"])
def test_baseline_clients_spend_the_budget_they_announce(budget):
    """SPM splits ε three ways (value 1/3, each segment 1/3) or partitions the users
    (value group at ε, segments at ε/2 each); the strawman halves ε or partitions."""
    epsilon, n = 3.0, 60_000
    values = np.full(n, V, dtype=np.uint64)
    #: (value ε, segment ε) under each budget
    budgets = {
        SPM: {"split": (1.0, 1.0), "partition": (3.0, 1.5)},
        Strawman: {"split": (1.5, 1.5), "partition": (3.0, 3.0)},
    }
    other_budget = "partition" if budget == "split" else "split"
    for cls, table in budgets.items():
        protocol = cls(epsilon=epsilon, k=2, m=16, segment_bits=8, budget=budget)
        (value_eps, part_eps), (wrong_value, wrong_part) = table[budget], table[other_budget]
        assert protocol.epsilon_per_part == {"value": value_eps, "segment": part_eps}
        reports = protocol.perturb(values, np.random.default_rng(1))
        value_users = np.isin(reports.groups, protocol.value_groups(len(reports.parts)))
        assert value_users.sum() == (n if budget == "split" else (reports.groups == 0).sum())
        right, wrong = _olh(value_eps, 16), _olh(wrong_value, 16)
        _assert_rate(right, reports.value, OTHER, right.q_star, wrong.q_star)
        for alpha, (start, length) in enumerate(protocol.bounds):
            right, wrong = _olh(part_eps, length), _olh(wrong_part, length)
            other = int(segment(np.array([OTHER], np.uint64), 16, start, length)[0])
            _assert_rate(right, reports.parts[alpha], other, right.q_star, wrong.q_star)


@pytest.mark.parametrize("budget", ["split", "partition"])
def test_mcm_client_randomises_its_own_channel_only(budget):
    """Own channel: v's bit kept with GRR's p* at ε2 (ε/2 split, ε partition); every other
    channel: a fair coin; π(v) at ε1 (ε/2 split, ε partition), by the value group."""
    epsilon, n, h = 2.0, 40_000, 8
    mcm = MCM(epsilon=epsilon, k=2, m=16, channels=h, budget=budget)
    eps2 = epsilon / 2 if budget == "split" else epsilon
    assert mcm.epsilon_per_part == {"value": eps2, "bits": eps2}
    values = np.full(n, V, dtype=np.uint64)
    reports = mcm.perturb(values, np.random.default_rng(2), hash_seed=12345)
    assert reports.public == {"channels": h, "hash_seed": 12345}
    own = int(mcm.channel_of(bits.to_words(values[:1], 16), h, 12345)[0])
    offset = int(budget == "partition")
    kept = total = coins = coin_users = 0
    for position, matrix in enumerate(reports.parts):
        assert matrix.shape == (int((reports.groups == position + offset).sum()), h)
        bit = (V >> (15 - position)) & 1
        kept += int((matrix[:, own] == bit).sum())
        total += matrix.shape[0]
        others = np.delete(matrix, own, axis=1)
        coins, coin_users = coins + int(others.sum()), coin_users + others.size
    p_keep = GRR(epsilon=eps2, domain_size=2).p_star
    p_wrong = GRR(epsilon=2 * eps2 if budget == "split" else eps2 / 2, domain_size=2).p_star
    assert abs(_z(kept, total, p_keep)) < Z and abs(_z(kept, total, p_wrong)) > 2 * Z
    assert abs(_z(coins, coin_users, 0.5)) < Z
    value_oracle = _olh(eps2, 16)
    wrong = _olh(2 * eps2 if budget == "split" else eps2 / 2, 16)
    _assert_rate(value_oracle, reports.value, OTHER, value_oracle.q_star, wrong.q_star)


def test_mcm_oracle_blocks_report_channel_and_block_through_the_oracle():
    """block_encoding="oracle": the user's (H(v), v[block]) is one OLH value at ε2."""
    mcm = MCM(epsilon=2.0, k=2, m=16, channels=4, block_bits=8, block_encoding="oracle")
    values = np.full(30_000, V, dtype=np.uint64)
    reports = mcm.perturb(values, np.random.default_rng(3), hash_seed=7)
    own = int(mcm.channel_of(bits.to_words(values[:1], 16), 4, 7)[0])
    for position, part in enumerate(reports.parts):
        oracle = mcm.block_oracle(8, 4)
        assert (oracle.name, oracle.epsilon, oracle.domain_size) == ("OLH", 1.0, 4 * 256)
        block = (V >> (8 - 8 * position)) & 0xFF
        other_key = ((own + 1) % 4) * 256 + block  # the same block, another channel
        _assert_rate(oracle, part, other_key, oracle.q_star, _olh(2.0, 10).q_star)


@pytest.mark.parametrize(
    "protocol",
    [
        PEM(epsilon=2.0, k=4, m=16, eta=6),
        SPM(epsilon=2.0, k=4, m=16, segment_bits=8),
        MCM(epsilon=2.0, k=4, m=16),
        Strawman(epsilon=2.0, k=4, m=16),
        TreeHist(epsilon=2.0, k=4, m=16),
        SFP(epsilon=2.0, k=4, m=16, hash_bits=4, segment_bits=4),
    ],
    ids=["PEM", "SPM", "MCM", "Strawman", "TreeHist", "SFP"],
)
def test_reports_engine_aggregates_the_client(protocol):
    """run(engine="reports") gets its reports from perturb and from nowhere else."""
    data = load("exponential", n=2000, m=16, seed=0)
    with mock.patch.object(type(protocol), "perturb", side_effect=RuntimeError("client")):
        with pytest.raises(RuntimeError, match="client"):
            protocol.run(data, np.random.default_rng(0), engine="reports")
        protocol.run(data, np.random.default_rng(0), engine="sampled")  # no client needed


# ------------------------------------------------------------------ shared parameter rules
PROTOCOLS = (PEM, SPM, MCM, Strawman)


@pytest.mark.parametrize(
    ("cls", "variant", "too_large", "fits"),
    [
        (PEM, {}, 21.5, 21.4),
        (SPM, {"variant": "improved"}, 3 * 21.5, 3 * 21.4),  # every part at ε/3
        (SPM, {"variant": "partitioned"}, 21.5, 21.4),  # π(v) at ε
        (MCM, {"variant": "improved"}, 2 * 21.5, 2 * 21.4),  # π(v) and the bits at ε/2
        (MCM, {"variant": "partitioned"}, 21.5, 21.4),
        (Strawman, {"variant": "partitioned"}, 21.5, 21.4),
    ],
)
def test_epsilon_beyond_the_oracle_fails_at_construction(cls, variant, too_large, fits):
    """OLH's default g = ⌈e^ε + 1⌉ exceeds the hash family's 2^31 cells from ε ≈ 21.49 on
    (e^21.49 = 2.15e9): refused when the protocol is built, naming epsilon."""
    with pytest.raises(ValueError, match="^epsilon"):
        cls(epsilon=too_large, k=4, m=16, **variant)
    cls(epsilon=fits, k=4, m=16, **variant)


@pytest.mark.parametrize("cls", PROTOCOLS)
def test_oracle_by_name_or_class(cls):
    assert cls(epsilon=2.0, k=4, m=16, oracle="BLH").oracle.name == "BLH"
    with pytest.raises(ValueError, match="^oracle"):
        cls(epsilon=2.0, k=4, m=16, oracle="NO_SUCH_ORACLE")
    with pytest.raises(TypeError, match="^oracle"):
        cls(epsilon=2.0, k=4, m=16, oracle=OLH(epsilon=1.0, domain_size=4))


@pytest.mark.parametrize("cls", PROTOCOLS)
def test_valid_m_is_the_same_everywhere(cls):
    """m <= 64 (integers) or a multiple of 8 up to 4096 (byte strings), for every protocol."""
    for m in (0, 65, 161, 4104):
        with pytest.raises(ValueError, match="^m must"):
            cls(epsilon=2.0, k=4, m=m)
    for m in (2, 63, 64, 72, 160):
        assert cls(epsilon=2.0, k=4, m=m).m == m


@pytest.mark.parametrize("cls", PROTOCOLS)
def test_no_users_no_heavy_hitters(cls):
    """A data set without users is refused by both engines (it has no top k to find)."""
    empty = Dataset(name="empty", values=np.zeros(0, dtype=np.uint64), m=16, source="synthetic")
    for engine in ("sampled", "reports"):
        with pytest.raises(ValueError, match="^dataset has no users"):
            cls(epsilon=2.0, k=4, m=16).run(empty, np.random.default_rng(0), engine=engine)


def test_pem_reports_engine_refuses_unary_reports_over_a_huge_domain():
    """PEM with SUE over m = 64 would send 2^64 bits a user in the last group: refused
    before any allocation; the sampled engine runs it."""
    data = load("exponential", n=1000, seed=0)
    protocol = PEM(epsilon=2.0, k=4, m=64, oracle=SUE)
    with pytest.raises(ValueError, match="sampled"):
        protocol.run(data, np.random.default_rng(0), engine="reports")
    assert len(protocol.run(data, np.random.default_rng(0)).identified) == 4
