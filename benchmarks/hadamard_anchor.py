"""Variance of HR, BHR, RHR and SS at n = 1,000, d = 22,000, ε = 4, against the anchors.

For each oracle: the exact variance of one value's estimated count, averaged over the d
values, for n users spread uniformly over the domain (n/d per value; BHR's and RHR's
variance also depends on the users sharing a value's block or symbol, n s/d for a block
of s values), and the mean squared error measured with the sampled engine over ``reps``
populations of n users drawn uniformly (± one standard error).  The anchors are the
numbers quoted for the papers' schemes at this setting (HR 1,077 is HR's closed form).

``python -m benchmarks --only hadamard_anchor [--quick]`` (``--quick``: 30 populations).
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmarks.oracles import markdown_table
from ldp.oracles import BHR, HR, RHR, SS

N, D, EPSILON = 1000, 22_000, 4.0
#: The numbers quoted for the papers' schemes at (N, D, EPSILON).
ANCHORS = {"HR": 1077.0, "BHR": 182.9, "RHR": 152.7, "SS": 76.48}


def exact_mean_variance(oracle) -> float:
    """Mean over the values of Var[ĉ(x)] with n/d users per value."""
    per_value = N / D
    if isinstance(oracle, BHR | RHR):
        groups = oracle.block_of if isinstance(oracle, BHR) else oracle.local_part
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
    for name, cls in (("HR", HR), ("BHR", BHR), ("RHR", RHR), ("SS", SS)):
        oracle = cls(epsilon=EPSILON, domain_size=D)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(len(out),)))
        start = time.perf_counter()
        mse, se = measured_mse(oracle, reps, rng)
        seconds = time.perf_counter() - start
        exact = exact_mean_variance(oracle)
        anchor = ANCHORS[name]
        out.append(
            [
                name,
                f"{exact:.2f}",
                f"{mse:.2f} ± {se:.2f}",
                f"{(mse - exact) / se:+.1f}",
                f"{anchor:g}",
                f"{exact / anchor - 1:+.2%}",
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


def bench(quick: bool, peers: bool) -> None:
    reps = 30 if quick else 200
    print(render(rows(reps), reps))


if __name__ == "__main__":
    bench(quick=False, peers=False)
