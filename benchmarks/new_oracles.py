"""The field's newer oracles against their peers: HR, HM, FLH (pure-ldp) and SS (multi-freq-ldpy).

Workload: perturb + full-domain estimate at d = 1024, ε = 1, n = 10^4 and 10^5 Zipf-like
values (the same values for every implementation), ``ldp``'s reports engine against the
peer's client and server, each in its own environment (:mod:`benchmarks.peers`); the
ratio is peer seconds / ldp seconds.  ε = 1 because pure-ldp's HR switches to its blocked
scheme above ε = 1; d = 1024 is a power of two, where pure-ldp's HM samples j in [d]
exactly as ours does.  pure-ldp's FLH builds its k' x d hash matrix when its server is made:
that is counted as aggregation time (it is what the aggregator must do for these ε, d, k').

Variance check: at d = 64, n = 5000 the peer runs ``reps`` times with different seeds; the
mean over values of its empirical mean squared error (its unbiased estimates against the
true counts) divided by the mean of our exact variance given the histogram
(``variances``; FLH's includes the pool's draw, while pure-ldp's pool is fixed, so that is
a comparison of the average over values) should be 1 within sampling error:
±2 sqrt(2/(reps d)) for independent normal estimates (HR's and SS's values are
correlated and FLH's pool is one draw, so the band is indicative).  SS uses
multi-freq-ldpy's ω = rint(d/(e^ε+1)) on both sides; FLH pure-ldp's g = round(e^ε) + 1 and
k' = 1000.

``python -m benchmarks --only new_oracles [--quick]``; ``make bench`` runs it with the rest.
This file is also the peer driver (``<peer python> new_oracles.py --drive JSON``), so its
top level imports the standard library only.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import time
from pathlib import Path

RESULT_MARKER = "BENCH-RESULT "  # as benchmarks.peers
#: (protocol, peer) pairs: the library whose implementation each new oracle is timed against.
PAIRS = (("HR", "pure-ldp"), ("HM", "pure-ldp"), ("FLH", "pure-ldp"), ("SS", "multi-freq-ldpy"))
K_PRIME = 1000


# --- the peer drivers (run inside the peer's environment) ----------------------------------
def _pure_ldp(protocol: str, d: int, epsilon: float):
    """(privatise(value) -> report, finish(reports) -> unbiased estimates) for pure-ldp."""
    import numpy as np
    from pure_ldp import frequency_oracles as fo

    def identity(value):
        return value

    if protocol == "HR":
        make_server = lambda: fo.HadamardResponseServer(epsilon, d, index_mapper=identity)  # noqa: E731
        template = make_server()
        client = fo.HadamardResponseClient(
            epsilon, d, template.get_hash_funcs(), index_mapper=identity
        )
        scale = 1.0
    elif protocol == "HM":
        make_server = lambda: fo.HadamardMechServer(epsilon, d, 1, index_mapper=identity)  # noqa: E731
        client = fo.HadamardMechClient(epsilon, d, 1, index_mapper=identity)
        scale = 1.0
    elif protocol == "FLH":
        make_server = lambda: fo.FastLHServer(  # noqa: E731
            epsilon, d, K_PRIME, use_olh=True, index_mapper=identity
        )
        client = fo.FastLHClient(epsilon, d, K_PRIME, use_olh=True, index_mapper=identity)
        scale = 1.0
    else:
        raise ValueError(f"no pure-ldp driver for {protocol}")

    def finish(reports):
        server = make_server()  # FLH: builds its hash matrix here (aggregation work)
        for report in reports:
            server.aggregate(report)
        estimates = server.estimate_all(range(d), suppress_warnings=True)
        return np.asarray(estimates, dtype=float) * scale, {"g": int(getattr(server, "g", 0))}

    return client.privatise, finish


def _multi_freq(protocol: str, d: int, epsilon: float):
    import numpy as np
    from multi_freq_ldpy.pure_frequency_oracles import SS

    if protocol != "SS":
        raise ValueError(f"no multi-freq-ldpy driver for {protocol}")
    SS.SS_Client(0, d, epsilon)  # compile outside the timing

    def finish(reports):
        seen = {}
        original = SS.MI

        def recording(count_report, n, p, q):
            seen.update(counts=np.array(count_report, dtype=float), n=n, p=p, q=q)
            return original(count_report, n, p, q)

        SS.MI = recording
        try:
            SS.SS_Aggregator_MI(reports, d, epsilon)
        finally:
            SS.MI = original
        unbiased = (seen["counts"] - seen["n"] * seen["q"]) / (seen["p"] - seen["q"])
        return unbiased, {"omega": int(max(1, np.rint(d / (np.exp(epsilon) + 1))))}

    return (lambda value: SS.SS_Client(value, d, epsilon)), finish


def drive(spec: dict) -> dict:
    """Time the peer on ``spec['n']`` values, or run it ``spec['reps']`` times (estimates)."""
    import random

    import numpy as np

    values = np.load(spec["values"])[: spec["n"]].tolist()
    maker = _pure_ldp if spec["peer"] == "pure-ldp" else _multi_freq
    runs = []
    for rep in range(spec["reps"]):
        random.seed(spec["seed"] + rep)
        np.random.seed(spec["seed"] + rep)  # noqa: NPY002 - the peers draw from the globals
        if spec["peer"] == "multi-freq-ldpy":
            import numba

            @numba.njit
            def seed_numba(value):
                np.random.seed(value)  # noqa: NPY002

            seed_numba(spec["seed"] + rep)
        privatise, finish = maker(spec["protocol"], spec["d"], spec["epsilon"])
        t0 = time.perf_counter()
        reports = [privatise(value) for value in values]
        t1 = time.perf_counter()
        estimates, info = finish(reports)
        t2 = time.perf_counter()
        runs.append((t1 - t0, t2 - t1, estimates, info))
    np.save(spec["out"], np.array([run[2] for run in runs]))
    best = min(runs, key=lambda run: run[0] + run[1])
    return {"perturb_s": best[0], "estimate_s": best[1], **runs[0][3]}


# --- the orchestrator (this project's environment) ------------------------------------------
def _zipf_values(d: int, n: int, seed: int = 2017):
    import numpy as np

    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, d + 1) ** 1.1
    return rng.permutation(d)[rng.choice(d, size=n, p=weights / weights.sum())].astype(np.int64)


def _ours(protocol: str, d: int, epsilon: float, **peer_info):
    from ldp.oracles import FLH, HM, HR, SS

    if protocol == "FLH":
        return FLH(epsilon=epsilon, domain_size=d, k_prime=K_PRIME, g=peer_info.get("g") or None)
    if protocol == "SS":
        return SS(epsilon=epsilon, domain_size=d, omega=peer_info.get("omega"))
    return {"HR": HR, "HM": HM}[protocol](epsilon=epsilon, domain_size=d)


def _time_ours(oracle, values, repeats: int = 3) -> tuple[float, float]:
    import numpy as np

    best = (math.inf, math.inf)
    for seed in range(repeats):
        rng = np.random.default_rng(seed)
        t0 = time.perf_counter()
        reports = oracle.perturb(values, rng)
        t1 = time.perf_counter()
        oracle.estimate(reports)
        t2 = time.perf_counter()
        if (t1 - t0) + (t2 - t1) < sum(best):
            best = (t1 - t0, t2 - t1)
    return best


def _exact_variances(oracle, counts):
    return oracle.variances(counts)


def run(quick: bool = False, install: bool = True) -> str:
    """Time each new oracle against its peer and check our variance against the peer's."""
    import numpy as np

    from benchmarks import peers as peer_envs

    d, epsilon = 1024, 1.0
    sizes = (10**3, 10**4) if quick else (10**4, 10**5)
    small_d, small_n, reps = 64, 5000, (5 if quick else 40)
    lines = [
        "# New oracles against their peers (perturb + full-domain estimate)",
        "",
        f"d = {d}, ε = {epsilon:g}; seconds are the best of the runs; ratio = peer / ldp.",
        "",
        "| oracle | peer | n | ldp s | peer s | ratio | variance check (peer MSE / our Var) |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    scratch = Path(tempfile.mkdtemp(prefix="ldp-bench-new-"))
    big = _zipf_values(d, max(sizes))
    np.save(scratch / "values.npy", big)
    small = _zipf_values(small_d, small_n, seed=2018)
    np.save(scratch / "small.npy", small)
    counts = np.bincount(small, minlength=small_d)
    for protocol, peer_name in PAIRS:
        peer = next(p for p in peer_envs.PEERS if p.name == peer_name)
        try:
            python = peer_envs.ensure_peer(peer, install=install)
        except peer_envs.PeerUnavailable as error:
            lines.append(f"| {protocol} | {peer_name} | - | - | - | - | not run: {error} |")
            continue

        def call(
            values_file, n, d_, reps_, tag, protocol=protocol, peer_name=peer_name, python=python
        ):
            spec = {
                "peer": peer_name,
                "protocol": protocol,
                "d": d_,
                "epsilon": epsilon,
                "values": str(scratch / values_file),
                "n": n,
                "seed": 11,
                "reps": reps_,
                "out": str(scratch / f"{protocol}-{tag}.npy"),
            }
            command = [str(python), str(Path(__file__).resolve()), "--drive", json.dumps(spec)]
            return peer_envs.run_subprocess(command, timeout=1800)

        try:
            checked = call("small.npy", small_n, small_d, reps, "var")
        except RuntimeError as error:
            lines.append(f"| {protocol} | {peer_name} | - | - | - | - | peer failed: {error} |")
            continue
        peer_estimates = np.load(scratch / f"{protocol}-var.npy")
        info = {k: v for k, v in checked.items() if k in ("g", "omega")}
        ours_small = _ours(protocol, small_d, epsilon, **info)
        mse = ((peer_estimates - counts) ** 2).mean(axis=0)
        ratio = mse.mean() / _exact_variances(ours_small, counts).mean()
        band = 2 * math.sqrt(2 / (reps * small_d))  # 2 SE for independent normal values
        check = f"{ratio:.3f} (±{band:.3f}; {reps} runs x {small_d} values, n = {small_n})"
        for n in sizes:
            oracle = _ours(protocol, d, epsilon, **info)
            ours_s = sum(_time_ours(oracle, big[:n]))
            try:
                timed = call("values.npy", n, d, 1 if n >= 10**5 else 2, f"time-{n}")
                peer_s = timed["perturb_s"] + timed["estimate_s"]
                cells = f"{peer_s:.3g} | {peer_s / ours_s:.0f}x"
            except RuntimeError as error:
                cells = f"failed: {error} | -"
            lines.append(f"| {protocol} | {peer_name} | {n:,} | {ours_s:.3g} | {cells} | {check} |")
            check = ""
    table = "\n".join(lines)
    print(table, flush=True)
    return table


def bench(quick: bool, peers: bool) -> None:
    """``python -m benchmarks --only new_oracles``: the table, printed and saved."""
    from benchmarks.peers import ROOT

    if not peers:
        print("new_oracles: every row compares with a peer; skipped with --no-peers")
        return
    table = run(quick=quick, install=not quick)
    out = ROOT / "results" / "bench" / ("new_oracles-quick.md" if quick else "new_oracles.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(table + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--drive":
        sys.exit("usage: python new_oracles.py --drive JSON")
    print(RESULT_MARKER + json.dumps(drive(json.loads(sys.argv[2]))), flush=True)
