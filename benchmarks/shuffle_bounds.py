"""Shuffle accounting at large n: Wang et al.'s variation-ratio bound next to [FMT21]'s.

For each n, ``variation_ratio_epsilon`` and ``fmt_numerical_epsilon`` (both exact
evaluations of a pair of clone-count laws, O(√n) per δ(ε)) are timed from a cold cache,
one after the other, at ε0 = 1 and δ = 10^-8 (generic ε0-LDP randomizer); the table gives
both ε, both times and their ratio.  The authors' released code reports "2 minutes for
n = 100,000,000" for its own evaluation.

``python -m benchmarks --only shuffle_bounds [--quick]`` (``--quick``: n <= 10^6).
"""

from __future__ import annotations

import time

from benchmarks.oracles import markdown_table
from ldp.theory import shuffle

SIZES = (10**6, 10**7, 10**8)
EPSILON0, DELTA = 1.0, 1e-8


def _clear() -> None:
    for cached in (
        shuffle._variation_ratio_epsilon,
        shuffle._variation_ratio_delta_function,
        shuffle._fmt_numerical_epsilon,
        shuffle._fmt_delta_function,
    ):
        cached.cache_clear()


def measure(n: int) -> tuple[float, float, float, float]:
    """(ε variation ratio, seconds, ε FMT21 numerical, seconds) from cold caches."""
    _clear()
    start = time.perf_counter()
    ours = shuffle.variation_ratio_epsilon(EPSILON0, n, DELTA)
    ours_s = time.perf_counter() - start
    _clear()
    start = time.perf_counter()
    fmt = shuffle.fmt_numerical_epsilon(EPSILON0, n, DELTA)
    return ours, ours_s, fmt, time.perf_counter() - start


def render(rows: list[tuple[int, float, float, float, float]]) -> str:
    header = ["n", "ε variation ratio", "s", "ε FMT21 numerical", "s", "ε ratio", "time ratio"]
    cells = [
        [f"10^{len(str(n)) - 1}", f"{a:.6g}", f"{sa:.2f}", f"{b:.6g}", f"{sb:.2f}"]
        + [f"{a / b:.3f}", f"{sa / sb:.2f}"]
        for n, a, sa, b, sb in rows
    ]
    return (
        f"Shuffle bounds at ε0 = {EPSILON0:g}, δ = {DELTA:g} (generic ε0-LDP randomizer)\n\n"
        + markdown_table(header, cells)
    )


def bench(quick: bool, peers: bool) -> None:
    rows = [(n, *measure(n)) for n in (SIZES[:1] if quick else SIZES)]
    print(render(rows))


if __name__ == "__main__":
    bench(quick=False, peers=False)
