"""Harness benchmark: overhead per trial against the trial's own time, and 1 -> 2 workers.

``python -m benchmarks.harness [--quick]`` prints two tables (issue 5, "Speed"):

1. **Overhead.**  For a cheap oracle trial and a sampled-engine PEM trial (zipf, n = 10^6,
   m = 64, k = 16, ε = 1), the mean time of the trial alone (``run_trial``: seeding, data,
   protocol) and the harness's extra time per trial when the same trials go through
   ``execute`` with one worker (planning, reading what is done, building rows, writing
   and compacting parts).  Target: overhead under 5% of a sampled-engine PEM trial.
   Measured on the project's 2-core machine (issue 11), PEM: 7.1-7.9 ms per trial with
   parts written by pandas ``to_csv`` + gzip level 9 + fsync and merged through pandas;
   0.61-0.66 ms (about 1% of a 60-90 ms trial under load, 2.5% of the 26 ms quiet one)
   with the csv-module writer, gzip level 6, no fsync and byte-level compaction.
2. **Scaling.**  The same 200-trial sweep of PEM trials with ``n_jobs=1`` and ``n_jobs=2``
   (the pool started before timing), and the speed-up.

Nothing here is asserted; numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import joblib
from hydra import initialize_config_dir

from experiments.execute import execute
from experiments.provenance import provenance
from experiments.run import CONF_DIR
from experiments.schema import register_configs
from experiments.settings import Setting, expand
from experiments.store import ResultsStore
from experiments.trials import run_trial

WORKLOADS = {
    "oracle OLH sampled (d = 1024, top 16)": (
        "protocol=olh",
        "dataset=zipf",
        "dataset.n=100000",
        "dataset.m=10",
        "options.domain_size=1024",
        "engine=sampled",
    ),
    "PEM sampled (zipf n = 10^6, m = 64, k = 16)": (
        "protocol=pem",
        "dataset=zipf",
        "engine=sampled",
    ),
}
SWEEP = "PEM sampled (zipf n = 10^6, m = 64, k = 16)"


def settings(overrides: Sequence[str], results_dir: Path) -> list[Setting]:
    """The settings the app would run for ``overrides``."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return expand("config", [*overrides, f"results_dir={results_dir}", "progress=false"])


def overhead(overrides: Sequence[str], trials: int, root: Path) -> tuple[float, float]:
    """(mean trial time, harness overhead per trial), in seconds, with one worker."""
    setting = settings(overrides, root / "overhead")[0]
    run_trial(setting.config, 10**6)  # warm caches (data set, JIT) outside the timing
    provenance()  # the git commit, read once per process
    alone = [run_trial(setting.config, t).wall_time for t in range(trials)]
    store = ResultsStore(root / "overhead", "bench")
    start = time.perf_counter()
    execute([setting], store, n_trials=trials, n_jobs=1, progress=False)
    total = time.perf_counter() - start
    recorded = store.load()[0].drop_duplicates("trial")["wall_time"].sum()
    return statistics.fmean(alone), (total - recorded) / trials


def sweep(overrides: Sequence[str], trials: int, jobs: int, root: Path) -> float:
    """Seconds to run ``trials`` trials with ``jobs`` workers (pool already started)."""
    setting = settings(overrides, root / f"sweep{jobs}")[0]
    joblib.Parallel(n_jobs=jobs)(
        joblib.delayed(run_trial)(setting.config, 10**6 + i) for i in range(jobs)
    )  # start and warm the workers
    store = ResultsStore(root / f"sweep{jobs}", "bench")
    start = time.perf_counter()
    execute([setting], store, n_trials=trials, n_jobs=jobs, progress=False)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> None:
    """Run both measurements and print their tables."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.harness", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer trials (a smoke run)")
    args = parser.parse_args(argv)
    per_kind, sweep_trials = (10, 20) if args.quick else (50, 200)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        print(f"Harness overhead per trial (one worker, {per_kind} trials)\n")
        print("| trial | trial time (ms) | harness overhead (ms) | overhead |")
        print("|---|---:|---:|---:|")
        for label, overrides in WORKLOADS.items():
            alone, extra = overhead(overrides, per_kind, root)
            print(
                f"| {label} | {1e3 * alone:.2f} | {1e3 * extra:.2f} | {100 * extra / alone:.1f}% |"
            )
        one = sweep(WORKLOADS[SWEEP], sweep_trials, 1, root)
        two = sweep(WORKLOADS[SWEEP], sweep_trials, 2, root)
        print(f"\nScaling: {sweep_trials} trials of {SWEEP}\n")
        print("| workers | seconds | speed-up |")
        print("|---:|---:|---:|")
        print(f"| 1 | {one:.2f} | 1.00 |")
        print(f"| 2 | {two:.2f} | {one / two:.2f} |")


if __name__ == "__main__":
    main()
