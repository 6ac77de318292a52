"""The small-n end of the oracle benchmark, repeated side by side (issue 11).

OLH perturb + full-domain estimate at n = 10^4, d = 1024, ε = 1: the ``ldp reports`` row
and the ``pure-ldp`` row of :mod:`benchmarks.oracles` (the same values, drivers, warm-ups
and best-of rule), run alternately ``repeats`` times in one run, each in a fresh
subprocess, so both see the same load.  Per repetition the ratio pure-ldp total ÷ ldp
total; the table gives each repetition and the median.

Run it as ``python -m benchmarks --only small_n``.  It needs pure-ldp's environment
(``python -m benchmarks --only oracles`` creates it); ``--quick`` runs one repetition.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks import oracles
from benchmarks import peers as peer_envs
from benchmarks.kernel import machine
from benchmarks.oracles import RESULTS, markdown_table, publish

#: The issue's target: pure-ldp's total at least this many times ours.
TARGET_RATIO = 1000.0


@dataclass(frozen=True)
class Workload:
    n: int = 10**4
    protocol: str = "OLH"
    repeats: int = 3


def run(work: Workload, output: Path | None = None) -> list[tuple[float, float]]:
    """(ldp total s, pure-ldp total s) per repetition; prints and writes the table."""
    base = oracles.Workload(sizes=(work.n,), protocols=(work.protocol,))
    peer = next(p for p in peer_envs.PEERS if p.name == "pure-ldp")
    python = peer_envs.ensure_peer(peer, install=base.install_peers)
    started, load_start = time.perf_counter(), os.getloadavg()[0]
    totals = []
    with tempfile.TemporaryDirectory(prefix="ldp-bench-small-") as scratch:
        values_path = Path(scratch) / "values.npy"
        np.save(values_path, oracles.workload_values(base))
        spec = {
            "protocol": work.protocol,
            "n": work.n,
            "d": base.domain_size,
            "epsilon": base.epsilon,
            "seed": base.mechanism_seed,
            "values": str(values_path),
        }
        for repeat in range(work.repeats):
            ours = oracles._run_ldp({**spec, "kind": "reports"}, base)
            out = str(Path(scratch) / f"peer-{repeat}.npy")
            theirs = peer_envs.run_peer_row(
                python, {**spec, "peer": peer.name, "out": out}, 4 * base.peer_limit_s + 120
            )
            totals.append(
                (ours["perturb_s"] + ours["estimate_s"], theirs["perturb_s"] + theirs["estimate_s"])
            )
            print(
                f"[bench] small_n {repeat + 1}/{work.repeats}: ldp {totals[-1][0] * 1e3:.3g} ms, "
                f"pure-ldp {totals[-1][1]:.3g} s, x{totals[-1][1] / totals[-1][0]:,.0f}",
                file=sys.stderr,
                flush=True,
            )
    text = render(work, totals, time.perf_counter() - started, (load_start, os.getloadavg()[0]))
    publish(text, output)
    return totals


def render(work: Workload, totals: list[tuple[float, float]], elapsed_s: float, load) -> str:
    ratios = [theirs / ours for ours, theirs in totals]
    rows = [
        [str(i + 1), f"{ours * 1e3:.3g}", f"{theirs:.3g}", f"{theirs / ours:,.0f}"]
        for i, (ours, theirs) in enumerate(totals)
    ]
    median = statistics.median(ratios)
    rows.append(
        [
            "median",
            f"{statistics.median(o for o, _ in totals) * 1e3:.3g}",
            f"{statistics.median(t for _, t in totals):.3g}",
            f"{median:,.0f}",
        ]
    )
    met = "met" if median >= TARGET_RATIO else "NOT met"
    return "\n".join(
        [
            f"# {work.protocol} perturb + full-domain estimate at n = {work.n:,}, d = 1024: "
            "ldp against pure-ldp",
            "",
            f"Run: {time.strftime('%Y-%m-%d %H:%M')}, {elapsed_s:.0f} s in all; load average "
            f"{load[0]:.2f} at the start, {load[1]:.2f} at the end; {machine()}.",
            "",
            markdown_table(("repetition", "ldp reports ms", "pure-ldp s", "pure-ldp ÷ ldp"), rows),
            "",
            f"Target pure-ldp ÷ ldp >= {TARGET_RATIO:,.0f} (median): {met}.  Each total is "
            "the best of the row's runs (see the oracle benchmark's README).",
            "",
        ]
    )


def bench(quick: bool, peers: bool) -> None:
    """The ``small_n`` entry of ``python -m benchmarks``."""
    if not peers:
        print("[bench] small_n: needs pure-ldp; skipped with --no-peers", file=sys.stderr)
        return
    work = Workload(repeats=1) if quick else Workload()
    run(work, RESULTS / ("small_n-quick.md" if quick else "small_n.md"))
