"""The streaming reports engine at n = 10^8: time and peak RSS, against one batch's memory.

For OLH and HR (and PGR when a module registers it: looked up in :mod:`ldp.registry` at
run time), in a fresh process each: :func:`ldp.streaming.stream_histogram` perturbs
10^8 users' real reports 2^20 at a time and adds each chunk's support counts, for a
full-domain estimate.  The table gives wall seconds, the process's peak RSS, the memory
one batch would need (``oracle.working_bytes(n)``: what ``perturb`` of all users holds,
refused by the 4 GiB budget), and the error against the exact standard deviation.

d = 2^8: OLH's decode checks every report against every candidate, n·d = 2.6 x 10^10
hash checks, about 10 s at this machine's 2-3 x 10^9 checks/s; d = 2^10 would be four
times that.  HR's decode is one transform per chunk (O(K log K), K = 2d).

``python -m benchmarks --only streaming`` (``--quick``: n = 10^6).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence

import numpy as np

from benchmarks.billion_users import zipf_counts
from benchmarks.oracles import markdown_table

N_USERS, QUICK_N = 10**8, 10**6
DOMAIN, EPSILON, SEED = 2**8, 1.0, 2017
#: The oracles streamed, when registered.
WANTED = ("OLH", "HR", "PGR")
CHUNK = 1 << 20


def child(name: str, n: int) -> dict:
    """Stream n users of a Zipf population through the oracle (run in the row's process)."""
    from ldp import registry
    from ldp.streaming import stream_histogram

    oracle = registry.get(name, "oracle").cls(epsilon=EPSILON, domain_size=DOMAIN)
    counts = zipf_counts(n, DOMAIN)
    stream_histogram(oracle, zipf_counts(5000, DOMAIN), np.random.default_rng(0))  # warm-up
    start = time.perf_counter()
    estimates = stream_histogram(oracle, counts, np.random.default_rng(SEED), chunk_users=CHUNK)
    seconds = time.perf_counter() - start
    sd = np.sqrt(np.mean([oracle.variance(n, int(c)) for c in counts]))
    z = float(np.sqrt(np.mean((estimates - counts) ** 2)) / sd)
    return {
        "seconds": seconds,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "batch_mb": oracle.working_bytes(n) / 2**20,
        "rmse_over_sd": z,
    }


def row(name: str, n: int) -> list[str]:
    command = [sys.executable, "-m", "benchmarks.streaming", "--child", name, "--n", str(n)]
    done = subprocess.run(command, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [name, "-", "-", "-", "-", f"failed: {tail[:200]}"]
    r = json.loads(lines[-1])
    return [
        name,
        f"{r['seconds']:.1f}",
        f"{r['rss_mb']:.0f}",
        f"{r['batch_mb']:.0f}",
        f"{r['rmse_over_sd']:.3f}",
        f"{n / r['seconds']:.3g}",
    ]


def bench(quick: bool, peers: bool) -> None:
    from ldp import registry

    n = QUICK_N if quick else N_USERS
    known = registry.protocols("oracle")
    names = [name for name in WANTED if name in known]
    rows = [row(name, n) for name in names]
    header = ["oracle", "s", "peak RSS MB", "one batch MB", "RMSE ÷ exact sd", "users/s"]
    missing = [name for name in WANTED if name not in known]
    print(
        f"Streaming reports engine: n = {n:.0e} users, d = {DOMAIN}, ε = {EPSILON:g}, "
        f"chunks of {CHUNK} users, full-domain estimate, Zipf(s = 1.1) counts; one process "
        "per oracle" + (f" (not registered here: {', '.join(missing)})" if missing else "") + "\n"
    )
    print(markdown_table(header, rows))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=N_USERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.n)))
    else:
        bench(args.quick, peers=False)


if __name__ == "__main__":
    main()
