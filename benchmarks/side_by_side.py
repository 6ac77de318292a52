"""Two calls timed alternately in one process, so that they share the machine's load.

Round r runs ``first`` then ``second`` when r is even, the other way round when odd.
Returns each one's median milliseconds and the ratio first ÷ second of each round's two
times, median and range (the columns of the benchmarks that compare two code paths).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def _seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def alternate(first: Callable[[], object], second: Callable[[], object], rounds: int) -> dict:
    """``{"first_ms", "second_ms", "ratio", "low", "high"}`` over ``rounds`` rounds."""
    times: dict[str, list[float]] = {"first": [], "second": []}
    calls = {"first": first, "second": second}
    for r in range(rounds):
        for name in ("first", "second") if r % 2 == 0 else ("second", "first"):
            times[name].append(_seconds(calls[name]))
    ratios = [a / b for a, b in zip(times["first"], times["second"], strict=True)]
    return {
        "first_ms": 1e3 * statistics.median(times["first"]),
        "second_ms": 1e3 * statistics.median(times["second"]),
        "ratio": statistics.median(ratios),
        "low": min(ratios),
        "high": max(ratios),
    }
