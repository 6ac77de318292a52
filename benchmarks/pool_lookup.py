"""FLH's aggregation: the pool's two lookup kernels side by side, and the size that picks one.

``ldp.hashing.table_lookup`` sums, for each candidate, one cell of every row of a
k' x g table.  Two numba kernels compute the same sums:

* **by key**: a parallel loop over candidates, each summing all k' rows in a register;
  every (row, candidate) is a gather from anywhere in the table;
* **by row**: blocks of candidates in parallel, the rows outermost, so one row serves a
  whole block while it is in L1.

``table_lookup`` runs the second when the table exceeds ``LOOKUP_CACHE_BYTES``.  For each
point (k', g, d candidates; random counts and seeds) both run alternately, ``rounds`` times
in one process; per point: milliseconds of each (median), the ratio by key ÷ by row
(median and range over the rounds), whether the sums are identical, and which one
``table_lookup`` picks.  Run it as ``python -m benchmarks --only pool_lookup [--quick]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from benchmarks.side_by_side import alternate
from ldp import hashing

#: (k', g, candidates): FLH's pools at ε = 1 (g = 4) and 4 (g = 56), the domains of the
#: oracle_flh and oracle_domain experiments.
POINTS = (
    (1_000, 4, 1024),
    (10_000, 4, 1024),
    (1_000, 56, 1024),
    (5_000, 56, 1024),
    (10_000, 56, 1024),
    (10_000, 56, 16_384),
    (10_000, 1000, 1024),
)
QUICK_POINTS = ((1_000, 4, 1024), (10_000, 56, 1024))


def measure(k: int, g: int, d: int, rounds: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 1000, (k, g)).astype(np.int64)
    seeds = rng.integers(0, 2**63, k, dtype=np.uint64)
    a, b = hashing.user_functions(seeds)
    digests = hashing.digest(hashing.as_words(np.arange(d, dtype=np.int64)))
    g64 = np.uint64(g)

    def by_key() -> np.ndarray:
        return hashing._lookup_kernel(table, a, b, digests, g64)

    def by_row() -> np.ndarray:
        return hashing._lookup_rows_kernel(table, a, b, digests, g64)

    same = np.array_equal(by_key(), by_row())  # also compiles both
    timed = alternate(by_key, by_row, rounds)
    return {
        "k": k,
        "g": g,
        "d": d,
        "table_mib": table.nbytes / 2**20,
        "key_ms": timed["first_ms"],
        "row_ms": timed["second_ms"],
        "ratio": timed["ratio"],
        "low": timed["low"],
        "high": timed["high"],
        "same": same,
        "picked": "row" if table.nbytes > hashing.LOOKUP_CACHE_BYTES else "key",
    }


def render(rows: Sequence[dict]) -> str:
    head = (
        "| k' | g | candidates | table MiB | by key ms | by row ms | by key ÷ by row "
        "(range) | identical | picked |\n|---:|---:|---:|---:|---:|---:|---|---|---|"
    )
    lines = [
        f"| {r['k']:,} | {r['g']} | {r['d']:,} | {r['table_mib']:.2f} | {r['key_ms']:.2f} | "
        f"{r['row_ms']:.2f} | {r['ratio']:.2f} ({r['low']:.2f}-{r['high']:.2f}) | "
        f"{'yes' if r['same'] else 'NO'} | {r['picked']} |"
        for r in rows
    ]
    return "\n".join([head, *lines])


def bench(quick: bool, peers: bool) -> None:
    """The ``pool_lookup`` entry of ``python -m benchmarks`` (no peers involved)."""
    if not hashing.HAVE_NUMBA:
        print("pool_lookup: numba is not installed; nothing to compare")
        return
    points, rounds = (QUICK_POINTS, 3) if quick else (POINTS, 15)
    print(render([measure(k, g, d, rounds) for k, g, d in points]))


if __name__ == "__main__":
    import sys

    bench(quick="--quick" in sys.argv, peers=False)
