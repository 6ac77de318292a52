"""A billion users: every registered oracle's sampled engine at n = 10^9, d = 2^20.

For each frequency oracle in :mod:`ldp.registry` (plug-ins included), in a fresh
subprocess of its own: ``oracle.simulate(counts, rng)``, a full-domain estimate of a
Zipf-like population (s = 1.1 over the d ranks, n = 10^9 users), timed once after the
oracle is built; peak memory as ``tracemalloc``'s peak (numpy's arrays included) and
``ru_maxrss`` of that process.  The target is under 1 s per estimate.

An oracle that does not finish within ``LIMIT_S`` seconds is stopped and its row says
why: the budget's refusal (:mod:`ldp.budget`), or for a timeout the cost its sampled
engine documents.  The sampled engines are exact: the oracles whose estimates are tied
across values through the whole population (a shared pool, a Hadamard code or block, a
projective hyperplane, a sketch's hash family) draw the population's whole report
histogram; the Hadamard and projective ones merge the users whose reports have the same
law (cost about one binomial per report value plus a draw per user of the values with
few users), FLH draws one (function, cell) pair per kept user of a value with few users.

``python -m benchmarks --only billion_users`` (``--quick``: n = 10^7, d = 2^14, 20 s
limit).  Each row runs in its own process, with its data segment capped at ``MEMORY_CAP``
so that a runaway engine cannot take the machine.
"""

from __future__ import annotations

import argparse
import inspect
import json
import re
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Sequence

import numpy as np

from benchmarks.oracles import markdown_table

N_USERS, DOMAIN, EPSILON = 10**9, 2**20, 1.0
QUICK_N, QUICK_DOMAIN = 10**7, 2**14
#: Seconds a row may take before it is stopped.
LIMIT_S, QUICK_LIMIT_S = 60.0, 20.0
#: The data segment of a row's process (bytes): above it, allocation fails (MemoryError).
MEMORY_CAP = 6 * 2**30
ZIPF_S = 1.1
SEED = 2017


def zipf_counts(n: int, d: int, s: float = ZIPF_S) -> np.ndarray:
    """n users over d values with counts ∝ (rank)^-s, rounded down, the rest on rank 1."""
    weights = np.arange(1, d + 1, dtype=float) ** -s
    counts = np.floor(weights / weights.sum() * n).astype(np.int64)
    counts[0] += n - int(counts.sum())
    return counts


def cost_note(cls: type) -> str:
    """The sentence of the oracle's sampled engine that states its cost, if it has one."""
    for method in ("_simulate_population", "_simulate_counts"):
        own = getattr(cls, method, None)
        if own is None or own.__qualname__.startswith("FrequencyOracle."):
            continue  # the base class's generic text says nothing of this oracle
        doc = " ".join((inspect.getdoc(own) or "").split())
        for sentence in re.split(r"(?<=\.)\s+", doc):
            if re.search(r"\b[Cc]ost\b", sentence):
                return sentence.strip()
    return f"see {cls.__module__}.{cls.__qualname__}._simulate_population"


def child(name: str, n: int, d: int) -> dict:
    """Build the oracle, then time one full-domain ``simulate`` (run in the row's process)."""
    from ldp import registry

    cls = registry.get(name, "oracle").cls
    counts = zipf_counts(n, d)
    try:
        oracle = cls(epsilon=EPSILON, domain_size=d)
    except ValueError as error:
        return {"error": f"not built at d = {d}: {error}"}
    rng = np.random.default_rng(SEED)
    try:
        oracle.simulate(zipf_counts(1000, d), rng)  # warm-up: numba compilation, caches
    except (ValueError, MemoryError) as error:
        return {"error": f"{type(error).__name__}: {error}"}
    tracemalloc.start()
    start = time.perf_counter()
    try:
        estimates = oracle.simulate(counts, rng)
    except (ValueError, MemoryError) as error:
        return {"error": f"{type(error).__name__}: {error}"}
    seconds = time.perf_counter() - start
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rel = float(np.sqrt(np.mean((estimates - counts) ** 2)) / n)
    return {"seconds": seconds, "traced_mb": traced, "rss_mb": rss, "rmse_n": rel}


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (MEMORY_CAP, MEMORY_CAP))


def row(name: str, n: int, d: int, limit: float) -> list[str]:
    """One oracle's row, measured in a fresh capped subprocess."""
    from ldp import registry

    command = [sys.executable, "-m", "benchmarks.billion_users", "--child", name]
    command += ["--n", str(n), "--d", str(d)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=limit, preexec_fn=_cap_memory
        )
    except subprocess.TimeoutExpired:
        note = cost_note(registry.get(name, "oracle").cls)
        return [name, f"> {limit:g}", "-", "-", "-", "no", f"stopped after {limit:g} s; {note}"]
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [name, "-", "-", "-", "-", "no", f"failed: {tail[:200]}"]
    result = json.loads(lines[-1])
    if "error" in result:
        return [name, "-", "-", "-", "-", "no", result["error"][:240]]
    met = "yes" if result["seconds"] < 1.0 else "no"
    why = "" if met == "yes" else cost_note(registry.get(name, "oracle").cls)
    return [
        name,
        f"{result['seconds']:.3g}",
        f"{result['traced_mb']:.0f}",
        f"{result['rss_mb']:.0f}",
        f"{result['rmse_n']:.2g}",
        met,
        why,
    ]


def bench(quick: bool, peers: bool) -> None:
    from ldp import registry

    n, d = (QUICK_N, QUICK_DOMAIN) if quick else (N_USERS, DOMAIN)
    limit = QUICK_LIMIT_S if quick else LIMIT_S
    rows = []
    for name in registry.protocols("oracle"):
        rows.append(row(name, n, d, limit))
        print(" | ".join(rows[-1]), flush=True)
    header = [
        "oracle",
        "s / estimate",
        "traced peak MB",
        "peak RSS MB",
        "RMSE / n",
        "< 1 s",
        "why not",
    ]
    print(
        f"\nSampled engine, full-domain estimate: n = {n:.0e} users, d = 2^{d.bit_length() - 1}, "
        f"ε = {EPSILON:g}, Zipf(s = {ZIPF_S}) counts, one run per oracle in its own process "
        f"(data segment capped at {MEMORY_CAP / 2**30:g} GiB)\n"
    )
    print(markdown_table(header, rows))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.billion_users")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=N_USERS, help=argparse.SUPPRESS)
    parser.add_argument("--d", type=int, default=DOMAIN, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.n, args.d)))
    else:
        bench(args.quick, peers=False)


if __name__ == "__main__":
    main()
