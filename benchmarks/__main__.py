"""``python -m benchmarks [--quick] [--only NAME] [--no-peers]``: run benchmarks, print tables.

``make bench`` runs this.  ``kernel`` times the support-counting kernel against the
issue's reference loop, side by side; ``small_n`` OLH at n = 10^4 against pure-ldp, three
times.  ``harness`` measures the experiment harness's overhead per trial and its 1 -> 2
worker speed-up.  ``subset`` SS's client at d = 10^6 before and after vectorising.
``oracles`` writes ``results/bench/oracles.md`` (``--quick``: small n,
peers only if their environments exist already, into ``results/bench/oracles-quick.md``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace

from benchmarks import (
    audit_time,
    billion_users,
    blas_threads,
    budget,
    clients,
    decode_reference,
    full_domain,
    hadamard_anchor,
    harness,
    heavy_hitters,
    kernel,
    new_oracles,
    oracles,
    pool_lookup,
    results_store,
    shuffle_bounds,
    sketches,
    small_n,
    streaming,
    subset,
)


def _oracles(quick: bool, peers: bool) -> None:
    work = oracles.Workload.quick() if quick else oracles.Workload()
    if not peers:
        work = replace(work, peers=())
    oracles.run(work, oracles.RESULTS / ("oracles-quick.md" if quick else "oracles.md"))


def _harness(quick: bool, peers: bool) -> None:
    harness.main(["--quick"] if quick else [])


#: name -> run(quick, peers); each prints its own tables.
BENCHMARKS: dict[str, Callable[[bool, bool], None]] = {
    "kernel": kernel.bench,
    "oracles": _oracles,
    "small_n": small_n.bench,  # OLH at n = 10^4 against pure-ldp, repeated side by side
    "harness": _harness,
    "heavy_hitters": heavy_hitters.bench,
    "sketches": sketches.bench,  # Apple's CMS/HCMS against pure-ldp's
    "new_oracles": new_oracles.bench,  # HR, HM, FLH, SS against pure-ldp / multi-freq-ldpy
    "subset": subset.bench,  # SS.perturb at d = 10^6, previous loop vs now, side by side
    "hadamard_anchor": hadamard_anchor.bench,  # HR, BHR, RHR, SS, PGR, HPGR at the anchor
    "shuffle_bounds": shuffle_bounds.bench,  # variation-ratio vs FMT21 shuffle bound, n to 1e8
    "blas_threads": blas_threads.bench,  # in-process SPM trials: 1 BLAS thread vs default
    "decode_reference": decode_reference.bench,  # decode at k = 3,307,948 vs the C++ reference
    "billion_users": billion_users.bench,  # every oracle's sampled engine at n = 10^9, d = 2^20
    "streaming": streaming.bench,  # chunked reports engine at n = 10^8: time and peak RSS
    "clients": clients.bench,  # every oracle's perturb: seconds and ns per report bit
    "budget": budget.bench,  # every budgeted call: what its checks count, what it takes
    "pool_lookup": pool_lookup.bench,  # FLH's lookup: key-by-key vs row-by-row kernel
    "full_domain": full_domain.bench,  # GRR's full-domain estimate vs the generic path
    "results_store": results_store.bench,  # results parts: together vs one read_csv each
    "audit_time": audit_time.bench,  # the default audit of every protocol, at d = 1024
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke check: small n only, no peers unless their environments exist already",
    )
    parser.add_argument(
        "--only",
        choices=sorted(BENCHMARKS),
        action="append",
        help="run only this benchmark (may be repeated); default: all",
    )
    parser.add_argument(
        "--no-peers", action="store_true", help="time this project only, without the peers"
    )
    args = parser.parse_args(argv)
    for name in args.only or list(BENCHMARKS):
        BENCHMARKS[name](args.quick, not args.no_peers)


if __name__ == "__main__":
    main()
