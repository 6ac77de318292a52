"""The benchmark's table logic on a tiny workload (no peers, no timing assertions).

Run in-process (``isolate=False``): ratios to the reports engine, the variance ratio
against the formula, the skip rule for slow peers, and a peer that is not installed
giving a row instead of an error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import oracles
from benchmarks.peers import Peer

#: Two-sided normal quantile for a false-failure rate of 1e-4 per assertion.
Z_1E4 = 3.89


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    absent = Peer(
        name="absent-peer",
        venv=tmp_path_factory.mktemp("peers") / "never-made",
        requirements=("absent-peer==0",),
        distribution="absent-peer",
        module="absent_peer",
    )
    work = oracles.Workload(
        sizes=(3_000, 10_000),
        peers=(absent,),
        install_peers=False,
        support_users_numba=2_000,
        support_users_numpy=2_000,
        big_domain=2**12,
        big_users=10**7,
        isolate=False,
    )
    rows, text = oracles.run(work, output=None)
    return work, rows, text


def _tolerance(oracle, true_counts: np.ndarray) -> float:
    """Z_1E4 standard deviations of the ratio Σ e_v² / Σ σ_v² for independent normal e_v.

    Var(Σ e_v²) = 2 Σ σ_v⁴, so the ratio's standard deviation is √(2 Σ σ⁴) / Σ σ².
    """
    n = int(true_counts.sum())
    variances = np.array([oracle.variance(n, count) for count in true_counts.tolist()])
    return Z_1E4 * math.sqrt(2 * np.sum(variances**2)) / np.sum(variances)


def test_every_protocol_and_size_has_both_engines(tiny) -> None:
    work, rows, _ = tiny
    found = {(row.implementation, row.protocol, row.n) for row in rows}
    for protocol in work.protocols:
        for n in work.sizes:
            assert (oracles.LDP_REPORTS, protocol, n) in found
            assert (oracles.LDP_SAMPLED, protocol, n) in found


def test_ratios_are_relative_to_the_reports_engine(tiny) -> None:
    _, rows, _ = tiny
    reports = {(r.protocol, r.n): r for r in rows if r.implementation == oracles.LDP_REPORTS}
    for row in rows:
        if row.implementation == oracles.LDP_REPORTS:
            assert row.ratio == pytest.approx(1.0)
            assert row.total_s == pytest.approx(row.perturb_s + row.estimate_s)
        elif row.implementation == oracles.LDP_SAMPLED:
            base = reports[(row.protocol, row.n)]
            assert row.perturb_s is None
            assert row.ratio == pytest.approx(row.estimate_s / base.total_s)
        else:  # target rows and rows that did not run have no ratio
            assert row.ratio is None


def test_variance_ratios_are_near_one(tiny) -> None:
    work, rows, _ = tiny
    values = oracles.workload_values(work)
    counts = {n: np.bincount(values[:n], minlength=work.domain_size) for n in work.sizes}
    counts[work.big_users] = oracles.big_counts(work)
    checked = 0
    for row in rows:
        if row.var_ratio is None:
            continue
        domain = work.big_domain if row.n == work.big_users else work.domain_size
        oracle = oracles.make_oracle(row.protocol, work.epsilon, domain)
        tolerance = _tolerance(oracle, counts[row.n])
        assert abs(row.var_ratio - 1) < tolerance, (row, tolerance)
        checked += 1
    assert checked == 2 * len(work.protocols) * len(work.sizes) + len(work.protocols)


def test_variance_ratio_is_mse_over_mean_formula() -> None:
    oracle = oracles.make_oracle("OUE", 1.0, 16)
    true_counts = np.arange(16) * 10
    estimates = true_counts + 3.0
    n = int(true_counts.sum())
    mean_formula = np.mean([oracle.variance(n, c) for c in true_counts])
    assert oracles.variance_ratio(oracle, estimates, true_counts) == pytest.approx(
        9.0 / mean_formula
    )


def test_support_rows_count_checks_and_agree(tiny) -> None:
    work, rows, _ = tiny
    support = {r.implementation: r for r in rows if r.implementation.startswith("ldp support")}
    assert set(support) == {"ldp support numba", "ldp support numpy"}
    for row in support.values():
        rate = row.extra["checks_per_s"]
        assert rate == pytest.approx(row.n * work.domain_size / row.estimate_s)
    from ldp import hashing

    if hashing.HAVE_NUMBA:
        assert support["ldp support numpy"].extra["same_as_numba"] is True


def test_an_absent_peer_gives_rows_not_an_error(tiny) -> None:
    work, rows, text = tiny
    absent = [row for row in rows if row.implementation == "absent-peer"]
    assert len(absent) == len(work.protocols)
    assert all(row.total_s is None and "not installed" in row.note for row in absent)
    assert "absent-peer" in text


def test_rendered_tables_are_aligned(tiny) -> None:
    _, _, text = tiny
    tables = [line for line in text.splitlines() if line.startswith("|")]
    assert tables
    blocks: dict[int, int] = {}
    for line in tables:  # each table's lines have one length: count lines per length
        blocks[len(line)] = blocks.get(len(line), 0) + 1
    assert all(count >= 3 for count in blocks.values())
    assert "## The issue's targets" in text


def _row(n: int, total: float, peak_mb: float | None = None, delta_mb: float | None = None):
    return oracles.Row("peer", "OLH", n, perturb_s=0.0, estimate_s=total, runs=1,
                       peak_mb=peak_mb, delta_mb=delta_mb)  # fmt: skip


def test_predict_skip_extrapolates_linearly() -> None:
    limit, memory = 120.0, 4 * 2**30
    assert oracles.predict_skip(None, 10**4, limit, memory) is None
    assert oracles.predict_skip(_row(10**4, 10.0), 10**5, limit, memory) is None
    reason = oracles.predict_skip(_row(10**5, 10.0), 10**7, limit, memory)
    assert reason == "skipped: would take ~1,000 s"
    big = _row(10**5, 1.0, peak_mb=1000.0, delta_mb=800.0)  # 200 MB + 800 MB x 10
    assert oracles.predict_skip(big, 10**6, limit, memory) == "skipped: would need ~8.0 GB"
    assert oracles.predict_skip(oracles.Row("peer", "OLH", 10**4), 10**5, limit, memory) is None


def test_small_n_table_gives_each_ratio_and_the_median() -> None:
    """small_n: pure-ldp ÷ ldp per repetition, medians, and the target verdict."""
    from benchmarks import small_n

    totals = [(0.004, 8.0), (0.002, 10.0), (0.010, 5.0)]  # ratios 2,000, 5,000 and 500
    text = small_n.render(small_n.Workload(), totals, 1.0, (1.0, 1.0))
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if "|" in line}
    assert "2,000" in rows["1"] and "5,000" in rows["2"] and "500" in rows["3"]
    assert "4" in rows["median"] and "8" in rows["median"] and "2,000" in rows["median"]
    assert "(median): met" in text
    assert "NOT met" in small_n.render(small_n.Workload(), totals[2:], 1.0, (1.0, 1.0))
