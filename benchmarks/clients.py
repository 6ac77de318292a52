"""Every frequency oracle's client, timed: seconds and nanoseconds per report bit.

For each registered oracle at (d, n, ε), ``perturb`` of the same n uniform values runs
``rounds`` times in this process; the table shows the median seconds, the bits a user
sends (``report_bits``) and the median nanoseconds per report bit.  A bit-vector client
(the unary encodings, subset selection, the sketches) draws one exact coin per bit, so
its time grows with n d; a client that sends a value or a seed grows with n alone.

Below it, dBitFlip's bucket sampling side by side: the d smallest of k uniform keys a user
(``keys``, O(n k), what the client did for every d) against Floyd's algorithm
(``floyd``, O(n d²), what it does when d² <= k), alternately in one process.

Run it as ``python -m benchmarks --only clients [--quick]``; the tables land in
``results/bench/clients.md``.
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
from ldp import registry
from ldp.oracles.dbitflip import CHUNK, floyd_sample
from ldp.validation import ParameterError


@dataclass(frozen=True)
class Workload:
    """What to run.  The defaults are n = 10^6 at d = 1024; ``quick()`` is a smoke check."""

    domain_size: int = 1024
    n: int = 10**6
    epsilon: float = 1.0
    rounds: int = 2
    #: dBitFlip's sampling: (k, d, n) points.
    buckets: tuple[tuple[int, int, int], ...] = ((2**16, 1, 10**4), (2**20, 4, 2_000))
    seed: int = 43

    @classmethod
    def quick(cls, **changes) -> Workload:
        return replace(cls(n=2_000, rounds=1, buckets=((2**10, 2, 500),)), **changes)


def keys_sample(n_users: int, k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """d distinct buckets a user as the d smallest of k uniform keys (O(n k)), in chunks
    of users as the client drew them (``CHUNK`` keys at a time)."""
    out = np.empty((n_users, d), dtype=np.int64)
    rows = max(1, CHUNK // k)
    for start in range(0, n_users, rows):
        size = min(rows, n_users - start)
        out[start : start + size] = np.argpartition(rng.random((size, k)), d - 1, axis=1)[:, :d]
    return out


def clients(work: Workload) -> list[list[str]]:
    values = np.random.default_rng(work.seed).integers(0, work.domain_size, size=work.n)
    rows = []
    for name, entry in registry.protocols("oracle").items():
        oracle = entry.cls(epsilon=work.epsilon, domain_size=work.domain_size)
        seconds = []
        try:
            for r in range(work.rounds):
                rng = np.random.default_rng([work.seed, r])
                started = time.perf_counter()
                oracle.perturb(values, rng)
                seconds.append(time.perf_counter() - started)
        except ParameterError:  # over the memory budget (SHE's int32 reports at 10^6 users)
            rows.append([name, "over the budget", f"{oracle.report_bits():.0f}", "–"])
            continue
        median = statistics.median(seconds)
        bits = oracle.report_bits()
        per_bit = 1e9 * median / (work.n * bits) if bits and bits == bits else float("nan")
        rows.append([name, f"{median:.3g}", f"{bits:.0f}", f"{per_bit:.3g}"])
    return rows


def buckets(work: Workload) -> list[list[str]]:
    rows = []
    for k, d, n in work.buckets:
        seconds: dict[str, list[float]] = {"keys": [], "floyd": []}
        draws = {"keys": keys_sample, "floyd": floyd_sample}
        for r in range(max(work.rounds, 2)):
            for name in ("keys", "floyd") if r % 2 == 0 else ("floyd", "keys"):
                rng = np.random.default_rng([work.seed, r])
                started = time.perf_counter()
                out = draws[name](n, k, d, rng)
                seconds[name].append(time.perf_counter() - started)
                assert all(len(set(row)) == d for row in out[:100].tolist())
        ratios = [a / b for a, b in zip(seconds["keys"], seconds["floyd"], strict=True)]
        rows.append(
            [
                f"{k:,}",
                str(d),
                f"{n:,}",
                f"{statistics.median(seconds['keys']):.3g}",
                f"{statistics.median(seconds['floyd']):.3g}",
                f"{statistics.median(ratios):.0f} ({min(ratios):.0f}-{max(ratios):.0f})",
            ]
        )
    return rows


def run(work: Workload, output: Path | None = None) -> str:
    """Both tables; printed and written to ``output`` (if given)."""
    text = (
        f"perturb of n = {work.n:,} uniform values, d = {work.domain_size}, "
        f"ε = {work.epsilon}, median of {work.rounds}\n\n"
        + markdown_table(("oracle", "seconds", "bits a user", "ns per bit"), clients(work))
        + "\n\ndBitFlip's buckets: keys (O(n k)) vs Floyd's (O(n d²)), alternating rounds\n\n"
        + markdown_table(
            ("k", "d", "n", "keys s", "floyd s", "keys ÷ floyd (range)"), buckets(work)
        )
        + f"\n\n{machine()}\n"
    )
    publish(text, output)
    return text


def bench(quick: bool, peers: bool) -> None:
    """The ``clients`` entry of ``python -m benchmarks`` (no peers involved)."""
    work = Workload.quick() if quick else Workload()
    run(work, RESULTS / ("clients-quick.md" if quick else "clients.md"))


def main(argv: Sequence[str] | None = None) -> None:
    bench(quick=bool(argv and "--quick" in argv), peers=False)


if __name__ == "__main__":
    main()
