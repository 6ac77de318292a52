"""The default audit of every protocol, timed: seconds, the reports it drew, the bound.

For each registered oracle at d = 1024 (ε = 1, inputs 0 and 1), mean protocol (inputs -1
and 1), set protocol with one collection of reports (d = 1024, the sets {0} and {1}) and
heavy hitter (its whole client at k = 4, m = 8, the values 0 and 255), one default audit
(:func:`ldp.audit.lower_bound`, 200,000 reports an input) runs in this process after a
small warm-up audit of the same protocol (numba's kernels load once per process); the
table shows its wall seconds, the reports it counted its event on and the bound over ε.
The aim is at most 10 s each on a quiet 2-core machine.

Run it as ``python -m benchmarks --only audit_time [--quick]``; the table lands in
``results/bench/audit_time.md``.  ``--quick`` audits at d = 16 with 20,000 reports.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from benchmarks.kernel import machine
from benchmarks.oracles import RESULTS, markdown_table, publish
from ldp import registry
from ldp.audit import lower_bound
from ldp.audit.auditor import TRIALS
from ldp.audit.clients import WholeClient
from ldp.audit.power import HEAVY_HITTER, INPUTS, KINDS, covered

#: The time a default audit should take, at most, on a quiet 2-core machine.
AIM_SECONDS = 10.0


@dataclass(frozen=True)
class Workload:
    domain_size: int = 1024
    epsilon: float = 1.0
    trials: int = TRIALS
    seed: int = 11

    @classmethod
    def quick(cls, **changes) -> Workload:
        return replace(cls(domain_size=16, trials=20_000), **changes)


def built(name: str, work: Workload, domain_size: int | None = None):
    entry = registry.get(name)
    if entry.kind == "mean":
        return entry.cls(epsilon=work.epsilon)
    if entry.kind == "heavy_hitter":
        return WholeClient(entry.cls(epsilon=work.epsilon, **HEAVY_HITTER))
    return entry.cls(epsilon=work.epsilon, domain_size=domain_size or work.domain_size)


def audits(work: Workload) -> list[list[str]]:
    rows = []
    for kind in KINDS:
        for name in registry.protocols(kind):
            if not covered(name):
                continue
            pair = INPUTS[kind]
            warm = built(name, work, domain_size=4)
            lower_bound(warm, *pair, rng=np.random.default_rng(0), trials=2_000)
            mechanism = built(name, work)
            started = time.perf_counter()
            found = lower_bound(mechanism, *pair, rng=np.random.default_rng(work.seed),
                                trials=work.trials)  # fmt: skip
            seconds = time.perf_counter() - started
            flag = "" if seconds <= AIM_SECONDS else " (over)"
            rows.append([
                name, kind.replace("_", " "), f"{seconds:.1f}{flag}", f"{found.evaluation:,}",
                f"{found.epsilon / work.epsilon:.3f}",
            ])  # fmt: skip
    return rows


def run(work: Workload, output: Path | None = None) -> str:
    text = (
        f"default audit, ε = {work.epsilon}, d = {work.domain_size} (heavy hitters: whole "
        f"clients, k = {HEAVY_HITTER['k']}, m = {HEAVY_HITTER['m']}), {work.trials:,} "
        f"reports an input; aim {AIM_SECONDS:g} s\n\n"
        + markdown_table(
            ("protocol", "kind", "seconds", "reports counted", "bound / ε"), audits(work)
        )
        + f"\n\n{machine()}\n"
    )
    publish(text, output)
    return text


def bench(quick: bool, peers: bool) -> None:
    """The ``audit_time`` entry of ``python -m benchmarks`` (no peers involved)."""
    work = Workload.quick() if quick else Workload()
    run(work, RESULTS / ("audit_time-quick.md" if quick else "audit_time.md"))


def main(argv: Sequence[str] | None = None) -> None:
    bench(quick=bool(argv and "--quick" in argv), peers=False)


if __name__ == "__main__":
    main()
