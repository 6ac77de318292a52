"""Reading a run's results: parts parsed a header at a time against one ``read_csv`` a part.

A run keeps each setting's trials in small checksummed part files (a quick run of every
figure writes about 1,300).  ``ResultsStore.load`` parses the parts of sound settings
that share a header as one CSV (``ResultsStore._load_together``); the part-by-part path
it replaced (``_load_key`` for every setting) is what it still does for a setting with a
damaged part.  For each point (settings, trials a part, headers) a store is written once
in a temporary directory, then both loads run alternately ``rounds`` times in one
process; per point: milliseconds of each (median), the ratio part-by-part ÷ together
(median and range), and whether the two tables are identical, dtypes included.  Run it
as ``python -m benchmarks --only results_store``.

The second table times ``ldp.oracles.exact.below`` (U's top 8 bits for every coin, its 45
low bits only where they tie with T's) against a draw of all 53 bits of every coin, the
same law: 10^6 coins at one threshold, and 10^6 coins each with its own.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.side_by_side import alternate
from experiments.store import ResultsStore
from ldp.oracles import exact

POINTS = ((400, 8, 1), (1_288, 8, 3), (100, 100, 2))
QUICK_POINTS = ((400, 8, 1),)


def _rows(key: str, trials: range, header: int) -> pd.DataFrame:
    """A part's rows as a trial writes them: a few metrics per trial, text and numbers."""
    n = len(trials)
    frame = pd.DataFrame(
        {
            "config_hash": key,
            "trial": np.repeat(np.array(trials), 3),
            "metric": ["f1", "ncr", "var"] * n,
            "value": np.linspace(0.0, 1.0, 3 * n),
            "protocol.name": "plain",
            "epsilon": 1.0,
        }
    )
    if header:  # other protocols' settings carry other columns
        frame[f"protocol.option{header}"] = "left"
    return frame


def _store(directory: Path, settings: int, trials: int, headers: int) -> ResultsStore:
    store = ResultsStore(directory, "bench")
    for s in range(settings):
        key = f"{s:016x}"
        store.write_part(key, range(trials), _rows(key, range(trials), s % headers))
    return store


def measure(settings: int, trials: int, headers: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(Path(tmp), settings, trials, headers)

        def part_by_part() -> pd.DataFrame:
            alone = ResultsStore(store.root, store.experiment)
            alone._load_together = lambda keys, every=False: {}  # noqa: SLF001
            return alone.load()[0]

        def together() -> pd.DataFrame:
            return ResultsStore(store.root, store.experiment).load()[0]

        same = part_by_part().equals(together()) and all(part_by_part().dtypes == together().dtypes)
        timed = alternate(part_by_part, together, rounds)
    return {"settings": settings, "trials": trials, "headers": headers, "same": same, **timed}


def coins(rounds: int) -> list[dict]:
    """``exact.below`` against every coin's 53 bits, one T and a T per coin (10^6 coins)."""
    size, rng = 10**6, np.random.default_rng(0)
    own = rng.integers(0, exact.GRID, size=size)
    rows = []
    for label, t in (("one T", exact.GRID // 3), ("a T per coin", own)):

        def full(t=t) -> np.ndarray:
            return rng.integers(0, exact.GRID, size=size) < t

        def top_bits(t=t) -> np.ndarray:
            return exact.below(rng, t, size)

        rows.append({"label": label, **alternate(full, top_bits, rounds)})
    return rows


def render(rows: list[dict], coin_rows: list[dict]) -> str:
    lines = [
        "| settings | trials a part | headers | part by part ms | together ms | "
        "part by part ÷ together (range) | identical |",
        "|---:|---:|---:|---:|---:|---|---|",
    ]
    lines += [
        f"| {r['settings']:,} | {r['trials']} | {r['headers']} | {r['first_ms']:.0f} | "
        f"{r['second_ms']:.0f} | {r['ratio']:.1f} ({r['low']:.1f}-{r['high']:.1f}) | "
        f"{'yes' if r['same'] else 'NO'} |"
        for r in rows
    ]
    lines += [
        "",
        "| 10^6 coins | 53 bits each ms | exact.below ms | 53 bits ÷ below (range) |",
        "|---|---:|---:|---|",
    ]
    lines += [
        f"| {r['label']} | {r['first_ms']:.1f} | {r['second_ms']:.1f} | "
        f"{r['ratio']:.1f} ({r['low']:.1f}-{r['high']:.1f}) |"
        for r in coin_rows
    ]
    return "\n".join(lines)


def bench(quick: bool, peers: bool) -> None:
    """The ``results_store`` entry of ``python -m benchmarks`` (no peers involved)."""
    points, rounds = (QUICK_POINTS, 3) if quick else (POINTS, 7)
    rows = [measure(s, t, h, rounds) for s, t, h in points]
    print(render(rows, coins(rounds)))


if __name__ == "__main__":
    import sys

    bench(quick="--quick" in sys.argv, peers=False)
