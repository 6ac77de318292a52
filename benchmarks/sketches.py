"""Apple's count-mean sketches, CMS and HCMS: this project against pure-ldp's.

``python -m benchmarks --only sketches [--quick]`` times, on one workload (n users with
Zipf(1.1) values over d = 1024, ε = 4, k = 256 hash functions, m = 1024 cells):

* ``ldp``: :class:`ldp.oracles.CMS` / :class:`~ldp.oracles.HCMS`, the reports engine
  (``perturb`` then ``estimate`` of all d values) and the sampled engine (``simulate``);
* ``pure-ldp`` 1.2.0: ``pure_ldp.frequency_oracles.apple_cms`` ``CMSClient`` /
  ``CMSServer`` (``is_hadamard`` for HCMS), one ``privatise`` and one ``aggregate`` per
  user, then ``estimate`` per value, in its own environment (:mod:`benchmarks.peers`).

and reports each one's time and the variance it achieves: the mean over the d values of
(estimate - count)² / n, beside the exact mean Var/n (:meth:`ldp.oracles.CMS.variances`,
collision term included).  One run per row (the best of several when a run is cheap).
Written to ``results/bench/sketches.md``.

This file is also the peer driver: ``<pure-ldp python> sketches.py --drive JSON`` (the
standard library and numpy only at import, as in :mod:`benchmarks.peers`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EPSILON, D, K, M = 4.0, 1024, 256, 1024


def _drive(spec: dict) -> dict:
    """Inside pure-ldp's environment: time its CMS/HCMS client and server on the values."""
    import random

    import numpy as np
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer

    sys.path.insert(0, str(HERE))
    import peers  # the shared timing rule (best of several cheap runs)

    values = np.load(spec["values"]).tolist()
    hadamard = spec["protocol"] == "HCMS"

    def run(users=values):
        random.seed(spec["seed"])
        np.random.seed(spec["seed"])  # noqa: NPY002 - pure-ldp draws from the global generators
        server = CMSServer(EPSILON, K, M, is_hadamard=hadamard)
        client = CMSClient(EPSILON, server.get_hash_funcs(), M, is_hadamard=hadamard)
        perturb_s = estimate_s = 0.0
        for start in range(0, len(users), peers.PEER_CHUNK):
            chunk = users[start : start + peers.PEER_CHUNK]
            t0 = time.perf_counter()
            reports = [client.privatise(value) for value in chunk]
            t1 = time.perf_counter()
            for report in reports:
                server.aggregate(report)
            perturb_s += t1 - t0
            estimate_s += time.perf_counter() - t1
        t0 = time.perf_counter()
        estimates = np.array([server.estimate(v, suppress_warnings=True) for v in range(D)])
        return perturb_s, estimate_s + time.perf_counter() - t0, estimates

    run(values[:100])  # warm-up
    timed = peers.best_of(run)
    np.save(spec["out"], timed.pop("first"))
    from importlib.metadata import version

    return {**timed, "version": version("pure-ldp")}


def _workload(n: int, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    weights = np.arange(1, D + 1, dtype=float) ** -1.1
    values = rng.choice(D, size=n, p=weights / weights.sum()).astype(np.int64)
    return values, np.bincount(values, minlength=D)


def _row(name: str, engine: str, n: int, perturb_s: float, estimate_s: float, mse_n: float):
    return {
        "implementation": name,
        "engine": engine,
        "n": n,
        "perturb_s": perturb_s,
        "estimate_s": estimate_s,
        "total_s": perturb_s + estimate_s,
        "mse_n": mse_n,
    }


def measure(n: int, peers_allowed: bool, install: bool, seed: int = 7) -> list[dict]:
    """Every row of the table at one n."""
    import tempfile

    import numpy as np

    from benchmarks import peers
    from ldp.oracles import CMS, HCMS

    values, counts = _workload(n, seed)
    rows = []
    for cls in (CMS, HCMS):
        oracle = cls(epsilon=EPSILON, domain_size=D, k=K, m=M)
        exact = float(oracle.variances(counts).mean()) / n
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        reports = oracle.perturb(values, rng)
        t1 = time.perf_counter()
        estimates = oracle.estimate(reports)
        t2 = time.perf_counter()
        mse = float(np.mean((estimates - counts) ** 2)) / n
        rows.append(_row(f"ldp {cls.name}", "reports", n, t1 - t0, t2 - t1, mse) | {"exact": exact})
        t0 = time.perf_counter()
        simulated = oracle.simulate(counts, rng)
        t1 = time.perf_counter()
        mse = float(np.mean((simulated - counts) ** 2)) / n
        rows.append(_row(f"ldp {cls.name}", "sampled", n, 0.0, t1 - t0, mse) | {"exact": exact})
        if not peers_allowed:
            continue
        try:
            python = peers.ensure_peer(peers.PEERS[0], install=install)
        except peers.PeerUnavailable as error:
            rows.append({"implementation": f"pure-ldp {cls.name}", "error": str(error), "n": n})
            continue
        with tempfile.TemporaryDirectory() as folder:
            path, out = Path(folder) / "values.npy", str(Path(folder) / "estimates.npy")
            np.save(path, values)
            spec = {"values": str(path), "out": out, "protocol": cls.name, "seed": seed}
            command = [str(python), str(Path(__file__).resolve()), "--drive", json.dumps(spec)]
            try:
                result = peers.run_subprocess(command, timeout=3600)
            except RuntimeError as error:
                rows.append({"implementation": f"pure-ldp {cls.name}", "error": str(error)})
                continue
            theirs = np.load(out)
        mse = float(np.mean((theirs - counts) ** 2)) / n
        row = _row(
            f"pure-ldp {result['version']} {cls.name}",
            "reports",
            n,
            result["perturb_s"],
            result["estimate_s"],
            mse,
        )
        rows.append(row | {"exact": exact})
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| implementation | engine | n | perturb s | estimate s | total s | Var/n achieved "
        "| exact Var/n |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        if "error" in row:
            lines.append(f"| {row['implementation']} | - | - | - | - | - | {row['error']} | - |")
            continue
        lines.append(
            f"| {row['implementation']} | {row['engine']} | {row['n']:,} | "
            f"{row['perturb_s']:.2f} | {row['estimate_s']:.2f} | {row['total_s']:.2f} | "
            f"{row['mse_n']:.4f} | {row.get('exact', float('nan')):.4f} |"
        )
    return "\n".join(lines)


def bench(quick: bool, peers_allowed: bool) -> None:
    """``python -m benchmarks --only sketches``: n = 10^5 (10^4 with --quick)."""
    n = 10_000 if quick else 100_000
    rows = measure(n, peers_allowed, install=not quick)
    text = (
        f"# CMS and HCMS against pure-ldp\n\nZipf(1.1) over d = {D}, ε = {EPSILON:g}, "
        f"k = {K}, m = {M}; Var/n achieved = mean over the d values of (estimate - count)²"
        f"/n from one run; exact = the mean exact Var/n.\n\n{table(rows)}\n"
    )
    out = HERE.parent / "results" / "bench" / ("sketches-quick.md" if quick else "sketches.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--drive":
        sys.exit("usage: python sketches.py --drive JSON")
    sys.path.insert(0, str(HERE))
    import peers

    print(peers.RESULT_MARKER + json.dumps(_drive(json.loads(sys.argv[2]))), flush=True)
