"""Subset selection's client at a large domain: the previous ``SS.perturb`` against today's.

``SS.perturb`` draws, for each user, the ω - 1 (kept) or ω other members of its subset.
It used to run Floyd's algorithm as ω rounds of numpy calls vectorised over the users of
a chunk; at d = 10^6 a chunk holds 4 users and ω = 268,941 (ε = 1), so a user cost
~270,000 small numpy calls (9.7 s).  Now, when ω exceeds the chunk's users, each user's
members come from ``Generator.choice(d - 1, r, replace=False)`` (compiled).

For each point (d, n users of uniform values, ε) both run alternately, ``rounds`` times
in one process (round r runs the new one first when r is even), so they share the
machine's load:

* **previous**: :func:`previous_perturb`, the loop as it was (same keep coins, same
  output format);
* **now**: ``SS(epsilon=ε, domain_size=d).perturb(values, rng)``.

Per point: seconds per user of each (median over the rounds), the ratio previous ÷ now
(median and range over the rounds), and whether every report of both has exactly ω
members.  Run it as ``python -m benchmarks --only subset [--quick]``; the table lands in
``results/bench/subset.md``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from benchmarks.kernel import machine
from benchmarks.oracles import RESULTS, markdown_table, publish
from ldp.oracles import SS, exact
from ldp.oracles.unary import CHUNK, UnaryReports

#: The target: the new client at least this many times faster at d = 10^6.
TARGET_RATIO = 100.0


@dataclass(frozen=True)
class Workload:
    """What to run.  The defaults measure d = 10^6; ``quick()`` is a smoke check."""

    points: tuple[tuple[int, int], ...] = ((10**6, 1), (10**6, 4), (10**5, 8))  #: (d, n)
    epsilon: float = 1.0
    rounds: int = 3
    seed: int = 35

    @classmethod
    def quick(cls, **changes) -> Workload:
        return replace(cls(points=((20_000, 4),), rounds=2), **changes)


def previous_perturb(oracle: SS, values: np.ndarray, rng: np.random.Generator) -> UnaryReports:
    """``SS.perturb`` before vectorising: Floyd's ω rounds over each chunk of users."""
    d, n, w = oracle.domain_size, values.shape[0], oracle.omega
    out = np.empty((n, -(-d // 8)), dtype=np.uint8)
    rows = max(1, min(n, CHUNK // d))
    for start in range(0, n, rows):
        chunk = values[start : start + rows]
        index = np.arange(chunk.shape[0])
        keep = exact.bernoulli(rng, oracle._keep, chunk.shape[0])
        bits = np.zeros((chunk.shape[0], d), dtype=bool)
        m = d - 1
        for j in range(m - w, m):
            active = (j >= m - w + 1) | ~keep
            t = rng.integers(0, j + 1, size=chunk.shape[0])
            t_value = t + (t >= chunk)
            j_value = j + (j >= chunk)
            pick = np.where(bits[index, t_value], j_value, t_value)
            bits[index[active], pick[active]] = True
        bits[index, chunk] = keep
        out[start : start + rows] = np.packbits(bits, axis=1)
    return UnaryReports(out, d)


@dataclass
class Point:
    d: int
    n: int
    omega: int
    previous_s: list[float]
    now_s: list[float]
    sizes_ok: bool

    @property
    def ratios(self) -> list[float]:
        return [p / q for p, q in zip(self.previous_s, self.now_s, strict=True)]


def _sizes_ok(reports: UnaryReports, omega: int) -> bool:
    bits = np.unpackbits(reports.bits, axis=1, count=reports.domain_size)
    return bool((bits.sum(axis=1) == omega).all())


def measure(d: int, n: int, work: Workload) -> Point:
    """Both clients on the same n uniform values, alternately, ``work.rounds`` times."""
    oracle = SS(epsilon=work.epsilon, domain_size=d)
    values = np.random.default_rng(work.seed).integers(0, d, size=n)
    clients = {"now": oracle.perturb, "previous": lambda v, r: previous_perturb(oracle, v, r)}
    seconds: dict[str, list[float]] = {"now": [], "previous": []}
    sizes_ok = True
    for r in range(work.rounds):
        for name in ("now", "previous") if r % 2 == 0 else ("previous", "now"):
            rng = np.random.default_rng([work.seed, r])
            started = time.perf_counter()
            reports = clients[name](values, rng)
            seconds[name].append(time.perf_counter() - started)
            sizes_ok &= _sizes_ok(reports, oracle.omega)
    return Point(d, n, oracle.omega, seconds["previous"], seconds["now"], sizes_ok)


def run(work: Workload, output: Path | None = None) -> tuple[list[Point], str]:
    """Measure every point; print the table and write it to ``output`` (if given)."""
    points = [measure(d, n, work) for d, n in work.points]
    cells = []
    for p in points:
        ratios = p.ratios
        cells.append(
            [
                f"{p.d:,}",
                str(p.n),
                f"{p.omega:,}",
                f"{statistics.median(p.previous_s) / p.n:.3g}",
                f"{statistics.median(p.now_s) / p.n:.3g}",
                f"{statistics.median(ratios):.0f} ({min(ratios):.0f}-{max(ratios):.0f})",
                "yes" if p.sizes_ok else "NO",
            ]
        )
    header = ("d", "n", "ω", "previous s/user", "now s/user", "ratio (range)", "ω each")
    text = (
        f"SS.perturb, previous vs now, ε = {work.epsilon}, {work.rounds} alternating rounds "
        f"(target ratio >= {TARGET_RATIO:.0f} at d = 10^6)\n\n"
        + markdown_table(header, cells)
        + f"\n\n{machine()}\n"
    )
    publish(text, output)
    return points, text


def bench(quick: bool, peers: bool) -> None:
    """The ``subset`` entry of ``python -m benchmarks`` (no peers involved)."""
    work = Workload.quick() if quick else Workload()
    run(work, RESULTS / ("subset-quick.md" if quick else "subset.md"))


def main(argv: Sequence[str] | None = None) -> None:
    bench(quick=bool(argv and "--quick" in argv), peers=False)


if __name__ == "__main__":
    main()
