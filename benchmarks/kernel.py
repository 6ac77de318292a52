"""Support-counting kernel against the simplest loop that does the same checks (issue 11).

For each point (n users, d candidates) two things count, for every candidate, the users
whose OLH report supports it (ε = 1, g = 4; reports from ``OLH.perturb`` on uniform
values, candidates 0..d-1):

* **ldp**: ``ldp.hashing.support_counts(seeds, reports, candidates, g)``, the whole call:
  validation, each user's terms, the candidates' digests, the kernel;
* **reference**: :func:`reference_count`, the issue's ten-line numba kernel (a ``prange``
  over candidates, each reducing over all users into one register), given the user
  functions (a, b), the cell bounds (low, width) and the digests computed beforehand
  (untimed: the comparison favours the reference).

Both run alternately in one process (round r runs ldp first when r is even, the
reference first when odd), so they share the machine's load; each point runs in a fresh
subprocess, which reports its peak RSS.  Per point: checks per second (n·d ÷ seconds),
the median and the range over the rounds, of each; the ratio ldp ÷ reference of each
round's two rates, median and range; whether the counts are identical; and the peak RSS
that ldp's calls add (the reference's inputs are allocated before the mark), beside the
n·d bytes that an n x d intermediate of booleans would take.

Run it as ``python -m benchmarks --only kernel [--quick]``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numba
import numpy as np

from benchmarks import peers as peer_envs
from benchmarks.oracles import RESULTS, _number, _users, markdown_table, publish
from benchmarks.peers import RESULT_MARKER

#: The issue's target: ldp at least this fraction of the reference's checks per second.
TARGET_RATIO = 0.8


@numba.njit(parallel=True, cache=True)
def reference_count(a, b, low, width, digests, out):
    """The issue's reference: one candidate per iteration, all users reduced in a register."""
    for j in numba.prange(digests.shape[0]):
        c = digests[j]
        s = 0
        for i in range(a.shape[0]):
            h = (a[i] * c + b[i]) >> np.uint64(32)
            s += (h - low[i]) < width[i]
        out[j] = s


@dataclass(frozen=True)
class Workload:
    """What to run.  The defaults are the issue's points; ``quick()`` a smoke check."""

    sizes: tuple[int, ...] = (2 * 10**5, 10**6)
    candidates: tuple[int, ...] = (1024, 2**16)
    epsilon: float = 1.0
    seed: int = 11
    rounds: int = 7  #: rounds per point (one ldp and one reference call each) ...
    min_rounds: int = 3  #: ... but after budget_s, no round starts past this many
    budget_s: float = 120.0
    isolate: bool = True  #: each point in a fresh subprocess (its own peak RSS)

    @classmethod
    def quick(cls, **changes) -> Workload:
        base = cls(sizes=(20_000,), candidates=(1024, 4096), rounds=3, budget_s=5.0)
        return replace(base, **changes)


@dataclass
class Point:
    """One (n, d) point: each round's seconds for ldp and the reference."""

    n: int
    d: int
    ours_s: list[float] = field(default_factory=list)
    reference_s: list[float] = field(default_factory=list)
    same_counts: bool | None = None
    delta_mb: float | None = None
    note: str = ""

    def rates(self, seconds: Sequence[float]) -> list[float]:
        return [self.n * self.d / s for s in seconds]

    @property
    def ratios(self) -> list[float]:
        """ldp ÷ reference checks per second, round by round."""
        return [ref / ours for ours, ref in zip(self.ours_s, self.reference_s, strict=True)]


def measure_point(spec: dict) -> dict:
    """Time one point in this process (see the module docstring)."""
    from ldp import hashing
    from ldp.oracles import OLH

    n, d = spec["n"], spec["d"]
    rng = np.random.default_rng(np.random.SeedSequence(spec["seed"], spawn_key=(n, d)))
    olh = OLH(epsilon=spec["epsilon"], domain_size=d)
    seeds, reports = olh.perturb(rng.integers(0, d, size=n), rng)
    candidates = np.arange(d, dtype=np.uint64)
    a, b = hashing.user_functions(seeds)
    low, width = hashing.cell_bounds(reports, olh.g)
    digests = hashing.digest(candidates)
    out = np.zeros(d, dtype=np.int64)

    # warm-up: load both compiled paths (serial and parallel) on few users
    reference_count(a[:1000], b[:1000], low[:1000], width[:1000], digests, out)
    for users in (1, max(1, 2 * hashing.SERIAL_WORK // d)):
        hashing.support_counts(seeds[:users], reports[:users], candidates, olh.g)

    def ours() -> tuple[float, np.ndarray]:
        t0 = time.perf_counter()
        counts = hashing.support_counts(seeds, reports, candidates, olh.g)
        return time.perf_counter() - t0, counts

    def reference() -> float:
        t0 = time.perf_counter()
        reference_count(a, b, low, width, digests, out)
        return time.perf_counter() - t0

    start_kib = peer_envs.peer_rss_kib()
    ours_s, reference_s, same = [], [], True
    started = time.perf_counter()
    while len(ours_s) < spec["rounds"] and (
        len(ours_s) < spec["min_rounds"] or time.perf_counter() - started < spec["budget_s"]
    ):
        if len(ours_s) % 2:
            reference_s.append(reference())
            seconds, counts = ours()
        else:
            seconds, counts = ours()
            reference_s.append(reference())
        ours_s.append(seconds)
        same = same and bool(np.array_equal(counts, out))
    return {
        "ours_s": ours_s,
        "reference_s": reference_s,
        "same_counts": same,
        "delta_kib": peer_envs.peer_rss_kib() - start_kib,
    }


def run_point(work: Workload, n: int, d: int) -> Point:
    point = Point(n, d)
    spec = {
        "n": n,
        "d": d,
        "epsilon": work.epsilon,
        "seed": work.seed,
        "rounds": work.rounds,
        "min_rounds": work.min_rounds,
        "budget_s": work.budget_s,
    }
    try:
        if work.isolate:
            command = [sys.executable, "-m", "benchmarks.kernel", "--point", json.dumps(spec)]
            result = peer_envs.run_subprocess(command, 20 * work.budget_s + 600)
        else:
            result = measure_point(spec)
    except RuntimeError as error:
        point.note = f"failed: {error}"
    else:
        point.ours_s, point.reference_s = result["ours_s"], result["reference_s"]
        point.same_counts = result["same_counts"]
        point.delta_mb = result["delta_kib"] / 1024
    return point


def _spread(values: Sequence[float], scale: float = 1.0, digits: int = 3) -> str:
    """median (min-max), each divided by ``scale``."""
    if not values:
        return "-"
    low, mid, high = (f(values) / scale for f in (min, statistics.median, max))
    return f"{_number(mid, digits)} ({_number(low, digits)}-{_number(high, digits)})"


COLUMNS = (
    "n",
    "candidates",
    "ldp 10^9 checks/s",
    "reference 10^9 checks/s",
    "ldp ÷ reference",
    "same counts",
    "Δ MB (ldp)",
    "n·d MB",
    "rounds",
    "note",
)


def cells(point: Point) -> list[str]:
    same = {None: "-", True: "yes", False: "NO"}[point.same_counts]
    return [
        _users(point.n),
        f"2^{point.d.bit_length() - 1}" if point.d & (point.d - 1) == 0 else str(point.d),
        _spread(point.rates(point.ours_s), 1e9),
        _spread(point.rates(point.reference_s), 1e9),
        _spread(point.ratios, digits=2),
        same,
        _number(point.delta_mb, 4),
        f"{point.n * point.d / 2**20:,.0f}",
        str(len(point.ours_s)) if point.ours_s else "-",
        point.note,
    ]


def machine() -> str:
    """CPU count and model, and the library versions."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({model}), numba {numba.__version__} with "
        f"{numba.config.NUMBA_NUM_THREADS} threads; Python {platform.python_version()}, "
        f"numpy {np.__version__}"
    )


def render(work: Workload, points: Sequence[Point], elapsed_s: float, load: tuple) -> str:
    met = [p for p in points if p.same_counts and statistics.median(p.ratios) >= TARGET_RATIO]
    text = [
        "# Support counting: ldp's kernel against the issue's reference loop",
        "",
        f"OLH reports (ε = {work.epsilon:g}), all d candidates; one process per point, ldp and",
        "the reference timed alternately in it (ratios side by side, one run).",
        f"Run: {time.strftime('%Y-%m-%d %H:%M')}, {elapsed_s:.0f} s in all; load average "
        f"{load[0]:.2f} at the start, {load[1]:.2f} at the end; {machine()}.",
        "",
        markdown_table(COLUMNS, (cells(point) for point in points)),
        "",
        f"Target ldp ÷ reference >= {TARGET_RATIO} (median of the rounds) with identical "
        f"counts: met at {len(met)} of {len(points)} points.",
        "",
        "- **checks/s**: n·d ÷ wall seconds of one call, median (min-max) over the rounds;",
        "  ldp is the whole `support_counts` call, the reference its kernel alone.",
        "- **ldp ÷ reference**: each round's ratio of the two rates, median (min-max).",
        "- **Δ MB (ldp)**: peak RSS added while the rounds ran (ldp's calls allocate; the",
        "  reference's inputs and output exist before); **n·d MB**: an n x d bool array.",
        "",
    ]
    return "\n".join(text)


def run(work: Workload, output: Path | None = None) -> tuple[list[Point], str]:
    """Run every point, print the table, write it to ``output`` (if given)."""
    started, load_start = time.perf_counter(), os.getloadavg()[0]
    points = []
    for n in work.sizes:
        for d in work.candidates:
            point = run_point(work, n, d)
            print(f"[bench] kernel n={n:<9,d} d={d:<6d} " + " | ".join(cells(point)[2:5]),
                  file=sys.stderr, flush=True)  # fmt: skip
            points.append(point)
    text = render(work, points, time.perf_counter() - started, (load_start, os.getloadavg()[0]))
    publish(text, output)
    return points, text


def bench(quick: bool, peers: bool) -> None:
    """The ``kernel`` entry of ``python -m benchmarks`` (it has no peers)."""
    work = Workload.quick() if quick else Workload()
    run(work, RESULTS / ("kernel-quick.md" if quick else "kernel.md"))


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.kernel --point JSON``: one isolated point (internal)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "--point":
        sys.exit("usage: python -m benchmarks.kernel --point JSON (use python -m benchmarks)")
    print(RESULT_MARKER + json.dumps(measure_point(json.loads(args[1]))), flush=True)


if __name__ == "__main__":
    main()
