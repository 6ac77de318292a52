"""Variance of HR, BHR, RHR, SS, PGR and HPGR at n = 1,000, d = 22,000, ε = 4, against the
anchors; server decode time at the projective-geometry paper's timing setting.

For each oracle: the exact variance of one value's estimated count, averaged over the d
values, for n users spread uniformly over the domain (n/d per value; BHR's and RHR's
variance also depends on the users sharing a value's block or symbol, n s/d for a block
of s values), and the mean squared error measured with the sampled engine over ``reps``
populations of n users drawn uniformly (± one standard error).  The anchors are the
numbers quoted for the papers' schemes at this setting (HR 1,077 is HR's closed form; PGR
76.03 is the projective-geometry paper's measured mean squared error; HPGR has none here).

Decode time (full mode only): ``estimate(reports)`` over the whole domain for n = 10^4
reports of one value at d = 3,307,948, ε = 5 (the projective-geometry paper's timing
experiment), beside the reference C++ times quoted from the paper and re-measured on a
2-core machine (GRR stands for its RR).

``python -m benchmarks --only hadamard_anchor [--quick]`` (``--quick``: 30 populations,
no decode timing).
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks.oracles import markdown_table
from ldp.oracles import BHR, GRR, HPGR, HR, PGR, RHR, SS

N, D, EPSILON = 1000, 22_000, 4.0
#: The numbers quoted for the papers' schemes at (N, D, EPSILON).
ANCHORS = {"HR": 1077.0, "BHR": 182.9, "RHR": 152.7, "SS": 76.48, "PGR": 76.03}
#: The projective-geometry paper's timing setting: n reports, d values, ε.
TIMING_N, TIMING_D, TIMING_EPSILON = 10_000, 3_307_948, 5.0
#: Reference decode seconds at the timing setting: (paper, re-measured on 2 cores).
TIMING_ANCHORS = {
    "GRR": (0.015, None),
    "BHR": (0.64, None),
    "RHR": (1.2, None),
    "HPGR": (5.9, "2.3-2.8"),
    "PGR": (36.9, "11.9-12.9"),
}


def exact_mean_variance(oracle) -> float:
    """Mean over the values of Var[ĉ(x)] with n/d users per value."""
    per_value = N / D
    if isinstance(oracle, BHR | RHR | HPGR):
        groups = oracle.local_part if isinstance(oracle, RHR) else oracle.block_of
        sizes = np.bincount(groups(np.arange(D)))
        return float(sum(s * oracle.variance(N, per_value, N * s / D) for s in sizes) / D)
    return oracle.variance(N, per_value)


def measured_mse(oracle, reps: int, rng: np.random.Generator) -> tuple[float, float]:
    """Mean over populations of the mean squared error over the values, and its SE."""
    errors = []
    for _ in range(reps):
        counts = np.bincount(rng.integers(0, D, N), minlength=D)
        errors.append(float(np.mean((oracle.simulate(counts, rng) - counts) ** 2)))
    return float(np.mean(errors)), float(np.std(errors, ddof=1) / math.sqrt(reps))


def rows(reps: int, seed: int = 2024) -> list[list[str]]:
    out = []
    classes = (("HR", HR), ("BHR", BHR), ("RHR", RHR), ("SS", SS), ("PGR", PGR), ("HPGR", HPGR))
    for name, cls in classes:
        oracle = cls(epsilon=EPSILON, domain_size=D)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(len(out),)))
        start = time.perf_counter()
        mse, se = measured_mse(oracle, reps, rng)
        seconds = time.perf_counter() - start
        exact = exact_mean_variance(oracle)
        anchor = ANCHORS.get(name)
        out.append(
            [
                name,
                f"{exact:.2f}",
                f"{mse:.2f} ± {se:.2f}",
                f"{(mse - exact) / se:+.1f}",
                "-" if anchor is None else f"{anchor:g}",
                "-" if anchor is None else f"{exact / anchor - 1:+.2%}",
                f"{seconds:.1f}",
            ]
        )
    return out


def render(cells: list[list[str]], reps: int) -> str:
    header = ["oracle", "exact", "measured", "z", "anchor", "exact vs anchor", "s"]
    return (
        f"Variance at n = {N}, d = {D}, ε = {EPSILON:g}: mean over the values, users spread "
        f"uniformly; measured over {reps} populations (sampled engine)\n\n"
        + markdown_table(header, cells)
    )


def decode_rows(names=tuple(TIMING_ANCHORS), seed: int = 2022) -> list[list[str]]:
    """Seconds of ``estimate(reports)`` over the whole domain at the timing setting."""
    out = []
    for name in names:
        cls = {"GRR": GRR, "BHR": BHR, "RHR": RHR, "HPGR": HPGR, "PGR": PGR}[name]
        oracle = cls(epsilon=TIMING_EPSILON, domain_size=TIMING_D)
        reports = oracle.perturb(np.zeros(TIMING_N, dtype=np.int64), np.random.default_rng(seed))
        start = time.perf_counter()
        oracle.estimate(reports)
        seconds = time.perf_counter() - start
        paper, two_core = TIMING_ANCHORS[name]
        out.append([name, f"{seconds:.3g}", f"{paper:g}", two_core or "-"])
    return out


def render_decode(cells: list[list[str]]) -> str:
    header = ["oracle", "decode s (ours)", "reference s (paper)", "reference s (2 cores)"]
    return (
        f"Server decode time, n = {TIMING_N:,} reports, d = {TIMING_D:,}, ε = "
        f"{TIMING_EPSILON:g}: estimate() over the whole domain\n\n" + markdown_table(header, cells)
    )


def bench(quick: bool, peers: bool) -> None:
    reps = 30 if quick else 200
    print(render(rows(reps), reps))
    if not quick:
        print()
        print(render_decode(decode_rows()))


if __name__ == "__main__":
    bench(quick=False, peers=False)
