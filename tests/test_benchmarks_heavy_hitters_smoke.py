"""The heavy-hitter benchmark's table logic on a tiny workload (no peers, no timing assertions).

Run in-process (``isolate=False``): every paper-scale protocol gives a row, the side-by-side
rows' ratios are relative to ldp's reports engine at the peer's shape, an absent peer gives
a row instead of an error, and the targets compare speed and mean F1 as the issue asks.
"""

from __future__ import annotations

import pytest

from benchmarks import heavy_hitters as hh
from benchmarks.peers import Peer


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    absent = Peer(
        name="absent-peer",
        venv=tmp_path_factory.mktemp("peers") / "never-made",
        requirements=("absent-peer==0",),
        distribution="absent-peer",
        module="absent_peer",
    )
    work = hh.Workload(
        paper_n=20_000,
        peer_points=((2_000, 16),),
        runs=2,
        ldp_budget_s=5.0,
        peers=(absent,),
        install_peers=False,
        isolate=False,
    )
    paper, side, text = hh.run(work, output=None)
    return work, paper, side, text


def test_every_paper_protocol_has_a_row(tiny) -> None:
    _, paper, _, _ = tiny
    assert [(row.protocol, row.variant) for row in paper] == list(hh.PAPER_PROTOCOLS)
    for row in paper:
        assert row.seconds is not None and row.seconds > 0, row
        assert 1 <= row.runs <= 10
        assert 0 <= row.f1 <= 1
        assert row.traced_mb is not None and row.traced_mb > 0


def test_side_rows_and_ratios(tiny) -> None:
    work, _, side, _ = tiny
    ours = [row for row in side if row.role == "ours"]
    assert len(ours) == len(work.peer_points)
    for row in ours:
        assert row.implementation == "ldp PEM reports"
        assert row.config.startswith("same shape: γ=4 η=6,6")
        assert row.ratio == pytest.approx(1.0)
    timed = [row for row in side if row.seconds]
    assert len(timed) == 4 * len(work.peer_points)  # 2 configurations x 2 engines
    for row in timed:
        assert len(row.seconds) == len(row.f1) == work.runs
        assert row.ratio == pytest.approx(row.mean_s / ours[0].mean_s)
        assert row.std_f1 is not None and 0 <= row.mean_f1 <= 1


def test_an_absent_peer_gives_a_row_not_an_error(tiny) -> None:
    _, _, side, text = tiny
    absent = [row for row in side if row.implementation == "absent-peer"]
    assert len(absent) == 1
    assert absent[0].mean_s is None and "not installed" in absent[0].note
    assert "absent-peer" in text


def test_rendered_tables_are_aligned(tiny) -> None:
    _, _, _, text = tiny
    tables = [line for line in text.splitlines() if line.startswith("|")]
    assert tables
    lengths: dict[int, int] = {}
    for line in tables:  # each table's lines have one length (no stray '|' in a cell)
        lengths[len(line)] = lengths.get(len(line), 0) + 1
    assert all(count >= 3 for count in lengths.values())
    assert "## The issue's targets" in text


def _row(role: str, seconds: list[float], f1: list[float], name: str = "x") -> hh.PeerRow:
    return hh.PeerRow(name, 32, "γ=4 η=7, more", seconds=seconds, f1=f1, role=role, n=10**5)


def test_targets_compare_speed_and_mean_f1() -> None:
    work = hh.Workload()
    side = [
        _row("peer", [4.0, 6.0], [0.5, 0.6], "pure-ldp PEM"),
        _row("ours", [0.5, 0.5], [0.55, 0.55]),
        _row("", [20.0], [0.9]),
    ]
    hh.fill_ratios(side)
    assert [row.ratio for row in side] == pytest.approx([10.0, 1.0, 40.0])
    lines = hh.targets(work, [], side)
    assert len(lines) == 2
    assert lines[0][1].startswith("10.0x") and lines[0][2] == "yes"
    assert lines[1][1] == "F1 0.550 vs 0.550" and lines[1][2] == "yes"
    side[1].f1 = [0.5, 0.5]
    assert hh.targets(work, [], side)[1][2] == "NO"
    paper = [hh.PaperRow("PEM", None, seconds=0.7)]
    assert hh.targets(work, paper, [])[0][2] == "under 1 s"
