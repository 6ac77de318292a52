"""RAPPOR at paper scale: both engines at n = 10^6, decoding 10^4 candidates, pure-ldp.

``python -m benchmarks.rappor [--n N] [--peer-n N] [--no-peer] [--decoder-only]`` prints one
table:

* ``ldp`` reports engine: n clients perturb (cohort, Bloom filter, PRR, IRR), the server
  counts ones per cohort and bit and fits the whole domain by least squares;
* ``ldp`` sampled engine: the same estimates drawn from their exact law;
* ``ldp`` decoder: 10^4 candidate strings, 128 cohorts x 32 bits (counts from the sampled
  engine for a Zipf population over the first 100 candidates): LASSO, least squares, SEs;
* ``pure-ldp`` 1.2.0's ``RAPPORClient``/``RAPPORServer`` in its own environment
  (``.bench-venv-pure-ldp``, :mod:`benchmarks.peers`): per-user Python loops.

Workload: d = 1024 values, Zipf(1.1) counts, one-time RAPPOR (no IRR, as pure-ldp's client
has none) with h = 2, k = 32 bits, m = 64 cohorts, f from ε∞ = 4.  The error column is
the mean over the 32 most frequent values of (estimate - truth)^2 / n; ``ldp``'s is the
exact variance (:meth:`RAPPOR.variances`) beside the measured one.  pure-ldp's client
never turns a 1 into a 0 (so it is not ε-LDP), and its server unbiases as if it did: its
estimates are biased, and its error is mostly bias.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ldp.oracles.rappor.decoder import decode
from ldp.oracles.rappor.protocol import RAPPOR, bloom_table, sample_cohort_counts

D, K, H, M, EPSILON, TOP = 1024, 32, 2, 64, 4.0, 32
PEER_PYTHON = Path(__file__).resolve().parent.parent / ".bench-venv-pure-ldp" / "bin" / "python"


def population(n: int, seed: int = 0) -> np.ndarray:
    weights = 1.0 / np.arange(1, D + 1) ** 1.1
    return np.random.default_rng(seed).multinomial(n, weights / weights.sum())


def error_n(estimates: np.ndarray, counts: np.ndarray, n: int) -> float:
    return float(np.mean((estimates[:TOP] - counts[:TOP]) ** 2) / n)


def ldp_rows(n: int, reps: int) -> list[dict]:
    oracle = RAPPOR(epsilon=EPSILON, domain_size=D, k=K, h=H, m=M, p=0.0, q=1.0)
    counts = population(n)
    values = np.repeat(np.arange(D), counts)
    rng = np.random.default_rng(1)
    oracle.estimate(oracle.perturb(values[:1000], rng))  # builds the Bloom table and solver
    rows = []
    for engine in ("reports", "sampled"):
        errors, seconds = [], []
        for _ in range(reps):
            start = time.perf_counter()
            if engine == "reports":
                estimates = oracle.estimate(oracle.perturb(values, rng))
            else:
                estimates = oracle.simulate(counts, rng)
            seconds.append(time.perf_counter() - start)
            errors.append(error_n(estimates, counts, n))
        exact = float(np.mean(oracle.variances(counts)[:TOP]) / n)
        rows.append(
            {
                "implementation": f"ldp {engine}",
                "n": n,
                "seconds": min(seconds),
                "error_n": float(np.mean(errors)),
                "exact_n": exact,
            }
        )
    return rows


def decoder_row(n: int) -> dict:
    candidates, cohorts = 10_000, 128
    oracle = RAPPOR(epsilon=EPSILON, domain_size=2, k=K, h=H, m=cohorts)
    start = time.perf_counter()
    positions = bloom_table([f"value{i}".encode() for i in range(candidates)], cohorts, H, K)
    hashed = time.perf_counter() - start
    weights = 1.0 / np.arange(1, 101) ** 1.1
    counts = np.zeros(candidates, dtype=np.int64)
    counts[:100] = np.random.default_rng(2).multinomial(n, weights / weights.sum())
    collected = sample_cohort_counts(oracle, positions, counts, np.random.default_rng(3))
    start = time.perf_counter()
    result = decode(oracle, collected, positions)
    seconds = time.perf_counter() - start
    return {
        "implementation": "ldp decoder (10^4 candidates, 128 x 32)",
        "n": n,
        "seconds": seconds,
        "hash_seconds": hashed,
        "detected": int(result.detected.sum()),
        "false": int(result.detected[100:].sum()),
    }


PEER_DRIVER = r"""
import json, math, sys, time
import numpy as np
from pure_ldp.frequency_oracles.rappor import RAPPORClient, RAPPORServer
spec = json.loads(sys.argv[1])
n, d, k, h, m, eps = spec["n"], spec["d"], spec["k"], spec["h"], spec["m"], spec["epsilon"]
f = 2 / (1 + math.exp(eps / (2 * h)))
weights = 1.0 / np.arange(1, d + 1) ** 1.1
counts = np.random.default_rng(0).multinomial(n, weights / weights.sum())
values = np.repeat(np.arange(1, d + 1), counts)
server = RAPPORServer(f, k, h, d, num_of_cohorts=m)
client = RAPPORClient(f, k, server.get_hash_funcs(), num_of_cohorts=m)
start = time.perf_counter()
for v in values:
    server.aggregate(client.privatise(int(v)))
perturb = time.perf_counter() - start
start = time.perf_counter()
est = np.array([server.estimate(i, suppress_warnings=True) for i in range(1, 33)])
estimate = time.perf_counter() - start
err = float(np.mean((est - counts[:32]) ** 2) / n)
print("RESULT " + json.dumps({"perturb": perturb, "estimate": estimate, "error_n": err}))
"""


def peer_row(n: int, python: Path) -> dict:
    spec = json.dumps({"n": n, "d": D, "k": K, "h": H, "m": M, "epsilon": EPSILON})
    done = subprocess.run(
        [str(python), "-c", PEER_DRIVER, spec], capture_output=True, text=True, timeout=7200
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        raise RuntimeError(done.stderr[-500:])
    result = json.loads(lines[-1][len("RESULT ") :])
    return {
        "implementation": "pure-ldp 1.2.0",
        "n": n,
        "seconds": result["perturb"] + result["estimate"],
        "error_n": result["error_n"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rappor", description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--peer-n", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--peer-python", type=Path, default=PEER_PYTHON)
    parser.add_argument("--decoder-only", action="store_true", help="only the decoder row")
    args = parser.parse_args(argv)
    rows = [] if args.decoder_only else ldp_rows(args.n, args.reps)
    rows.append(decoder_row(args.n))
    if not args.no_peer and not args.decoder_only:
        if args.peer_python.exists():
            rows.append(peer_row(args.peer_n, args.peer_python))
            rows += [
                r | {"implementation": r["implementation"] + " (peer n)"}
                for r in ldp_rows(args.peer_n, args.reps)
            ]
        else:
            print(f"pure-ldp environment missing: {args.peer_python}", file=sys.stderr)
    print("| implementation | n | seconds | error/n (measured) | Var/n (exact) | notes |")
    print("|---|---:|---:|---:|---:|---|")
    for r in rows:
        notes = ""
        if "detected" in r:
            notes = (
                f"MD5 table {r['hash_seconds']:.1f} s; detected {r['detected']} "
                f"({r['false']} absent)"
            )
        print(
            f"| {r['implementation']} | {r['n']:,} | {r['seconds']:.2f} | "
            f"{r.get('error_n', float('nan')):.4g} | {r.get('exact_n', float('nan')):.4g} | "
            f"{notes} |"
        )


if __name__ == "__main__":
    main()
