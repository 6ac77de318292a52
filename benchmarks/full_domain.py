"""GRR's full-domain estimate: counting only the reported values against the generic path.

``GRR.estimate(reports)`` with no candidates gives every value nobody reported the one
constant (0 - n q*)/(p* - q*) and counts only the reported values when there are fewer
reports than d/8; the generic path (``PureOracle.estimate``) builds the candidates
0..d-1, a histogram of the domain, gathers it and scales it.  Both give the same numbers
bit for bit (checked here on every point).  For each point (d, n, ε) both run alternately
``rounds`` times in one process; per point: milliseconds of each (median) and the ratio
generic ÷ GRR's (median and range).  The first point is the projective-geometry C++
reference's GRR setting (K = 3,307,948, n = 10^4, ε = 5), where that reference decodes in
about 46 ms on this kind of machine.  Run it as ``python -m benchmarks --only full_domain``.
"""

from __future__ import annotations

import numpy as np

from benchmarks.side_by_side import alternate
from ldp.oracles import GRR
from ldp.oracles.base import PureOracle

POINTS = (
    (3_307_948, 10_000, 5.0),
    (3_307_948, 100_000, 5.0),
    (2**20, 10**6, 2.0),
    (1024, 10**4, 1.0),
)
QUICK_POINTS = ((3_307_948, 10_000, 5.0),)


def measure(d: int, n: int, epsilon: float, rounds: int) -> dict:
    oracle = GRR(epsilon=epsilon, domain_size=d)
    rng = np.random.default_rng(0)
    reports = oracle.perturb(rng.integers(0, d, n), rng)

    def generic() -> np.ndarray:
        return PureOracle.estimate(oracle, reports)

    def counted() -> np.ndarray:
        return oracle.estimate(reports)

    same = np.array_equal(generic().view(np.int64), counted().view(np.int64))
    timed = alternate(generic, counted, rounds)
    return {
        "d": d,
        "n": n,
        "epsilon": epsilon,
        "generic_ms": timed["first_ms"],
        "grr_ms": timed["second_ms"],
        "ratio": timed["ratio"],
        "low": timed["low"],
        "high": timed["high"],
        "same": same,
    }


def render(rows: list[dict]) -> str:
    head = (
        "| d | n | ε | generic ms | GRR ms | generic ÷ GRR (range) | identical |\n"
        "|---:|---:|---:|---:|---:|---|---|"
    )
    lines = [
        f"| {r['d']:,} | {r['n']:,} | {r['epsilon']:g} | {r['generic_ms']:.1f} | "
        f"{r['grr_ms']:.1f} | {r['ratio']:.1f} ({r['low']:.1f}-{r['high']:.1f}) | "
        f"{'yes' if r['same'] else 'NO'} |"
        for r in rows
    ]
    return "\n".join([head, *lines])


def bench(quick: bool, peers: bool) -> None:
    """The ``full_domain`` entry of ``python -m benchmarks`` (no peers involved)."""
    points, rounds = (QUICK_POINTS, 3) if quick else (POINTS, 11)
    print(render([measure(d, n, epsilon, rounds) for d, n, epsilon in points]))


if __name__ == "__main__":
    import sys

    bench(quick="--quick" in sys.argv, peers=False)
