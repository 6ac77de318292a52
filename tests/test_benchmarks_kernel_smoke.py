"""The kernel benchmark's logic on a tiny workload (in-process, no timing assertions).

Every point gets its rounds, the reference loop counts exactly what ``support_counts``
counts (so the side-by-side ratio compares equal work), the ratio is the rounds'
reference seconds ÷ ldp seconds, and the table renders aligned.
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from benchmarks import kernel
from ldp import hashing


@pytest.fixture(scope="module")
def tiny():
    work = kernel.Workload(
        sizes=(3_000,), candidates=(64, 257), rounds=3, budget_s=5.0, isolate=False
    )
    points, text = kernel.run(work, output=None)
    return work, points, text


def test_every_point_has_its_rounds_and_equal_counts(tiny) -> None:
    work, points, _ = tiny
    assert [(p.n, p.d) for p in points] == [(3_000, 64), (3_000, 257)]
    for point in points:
        assert point.same_counts is True
        assert len(point.ours_s) == len(point.reference_s) == work.rounds
        assert all(s > 0 for s in point.ours_s + point.reference_s)
        assert point.delta_mb is not None and point.delta_mb >= 0


def test_ratios_are_reference_seconds_over_ours(tiny) -> None:
    _, points, _ = tiny
    for point in points:
        expected = [r / o for o, r in zip(point.ours_s, point.reference_s, strict=True)]
        assert point.ratios == pytest.approx(expected)
        rates = point.rates(point.ours_s)
        assert rates == pytest.approx([point.n * point.d / s for s in point.ours_s])


def test_the_reference_loop_counts_support() -> None:
    """The issue's loop, on its own, gives ldp's counts (1- and 2-word keys alike)."""
    rng = np.random.default_rng(4)
    seeds = rng.integers(0, 2**63, size=2_000, dtype=np.uint64)
    reports = rng.integers(0, 7, size=2_000)
    for keys in (np.arange(50, dtype=np.uint64), rng.integers(0, 2**63, (9, 2), np.uint64)):
        a, b = hashing.user_functions(seeds)
        low, width = hashing.cell_bounds(reports, 7)
        out = np.zeros(len(keys), dtype=np.int64)
        kernel.reference_count(a, b, low, width, hashing.digest(keys), out)
        expected = hashing.support_counts(seeds, reports, keys, 7, use_numba=False)
        np.testing.assert_array_equal(out, expected)


def test_table_is_aligned_and_names_the_machine(tiny) -> None:
    work, points, text = tiny
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(lines) == 2 + len(points)
    assert len({len(line) for line in lines}) == 1
    assert "CPUs (" in text and "load average" in text
    met = sum(statistics.median(p.ratios) >= kernel.TARGET_RATIO for p in points)
    assert f"met at {met} of {len(points)} points" in text
