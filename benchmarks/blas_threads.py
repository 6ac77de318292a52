"""BLAS threads of a process that runs trials itself: one thread against the default.

``python -m benchmarks.blas_threads [--quick]`` runs the same SPM trials (Fig. 7a's
threshold SPM at ε = 4: exponential data, n = 10^6, m = 64; its pair stage multiplies
0/1 matrices of ~16 x 170,000) in fresh processes, alternately with
``OPENBLAS_NUM_THREADS=1`` and with the library's default, and prints the CPU and wall
seconds per trial of each and their ratio.  The harness's workers already get one BLAS
thread per core from joblib; the process that runs trials itself (``n_jobs=1``, the
estimate's probe, a test) does not, and OpenBLAS's idle threads spin.  The test suite
sets one thread (``tests/conftest.py``) from this.  Nothing here is asserted.

Measured on the project's 2-core machine (OpenBLAS starts 2 threads) while other jobs
kept it busy (load average 4-11): one thread 0.14 s CPU per trial; the default 0.65-0.81 s
in one run and 8.4 s (x60) in another, as each small product waits for both threads to
be scheduled.  On an idle machine the two are close.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence

#: One process: compose the setting, run one trial untimed (data, protocol), time the rest.
SCRIPT = """
import json, sys, time
from hydra import initialize_config_dir
from experiments.run import CONF_DIR
from experiments.schema import register_configs
from experiments.settings import expand
from experiments.trials import run_trial
register_configs()
overrides = ["experiment=pem_fig7_eps", "protocol=spm_threshold", "epsilon=4",
             "results_dir=/nonexistent-never-written"]
with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
    (setting,) = expand("config", overrides)
trials = int(sys.argv[1])
run_trial(setting.config, 0)
cpu, wall = time.process_time(), time.perf_counter()
for trial in range(1, trials + 1):
    run_trial(setting.config, trial)
print(json.dumps([(time.process_time() - cpu) / trials, (time.perf_counter() - wall) / trials]))
"""


def measure(threads: str | None, trials: int) -> tuple[float, float]:
    """(CPU, wall) seconds per trial in a fresh process with ``threads`` BLAS threads."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS",)}
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = threads
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(trials)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=1800,
    )
    cpu, wall = json.loads(done.stdout.strip().splitlines()[-1])
    return cpu, wall


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round of 2 trials each")
    args = parser.parse_args(argv)
    rounds, trials = (1, 2) if args.quick else (3, 3)
    results: dict[str, list[tuple[float, float]]] = {"1 thread": [], "default": []}
    for _ in range(rounds):  # alternate, so both see the same machine load
        results["1 thread"].append(measure("1", trials))
        results["default"].append(measure(None, trials))
    print("| BLAS threads | CPU s / trial | wall s / trial |")
    print("|---|---:|---:|")
    medians = {}
    for name, runs in results.items():
        medians[name] = [statistics.median(r[i] for r in runs) for i in (0, 1)]
        print(f"| {name} | {medians[name][0]:.3f} | {medians[name][1]:.3f} |")
    cpu = medians["default"][0] / max(medians["1 thread"][0], 1e-9)
    wall = medians["default"][1] / max(medians["1 thread"][1], 1e-9)
    print(f"\ndefault / 1 thread: CPU x{cpu:.1f}, wall x{wall:.1f} (medians of {rounds} rounds)")


def bench(quick: bool, peers: bool) -> None:
    """``python -m benchmarks --only blas_threads``."""
    main(["--quick"] if quick else [])


if __name__ == "__main__":
    main()
