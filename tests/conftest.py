"""Settings of the whole test session, applied before any test module imports numpy, and
the session's one ``figures --quick`` run, which several test files read.

BLAS on one thread per process: the suite runs one pytest worker per core (``make test``,
pytest-xdist) and the harness's own workers limit BLAS the same way (loky), while
OpenBLAS's default threads wait for each other: on the busy 2-core machine an in-process
SPM trial took 4x to 60x the CPU time with them (``python -m benchmarks.blas_threads``).
An explicit setting in the environment wins; subprocesses the tests start inherit it.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest  # none of these imports numpy

for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


REPO = Path(__file__).resolve().parent.parent
#: A hard stop for ``figures --quick`` far beyond its few minutes.
QUICK_TIMEOUT = 1800


@pytest.fixture(scope="session")
def figures_quick_run(request: pytest.FixtureRequest, tmp_path_factory) -> dict:
    """``python -m experiments.figures --quick`` (what ``make figures-quick`` runs) into a
    temporary results directory, once for the whole session, shared by the test files
    that read it: under pytest-xdist the first worker to ask runs it while the others wait
    on a lock, then every worker reads the same directory.  Returns the directory, the
    exit code, the seconds and the output's tails (the tests assert on them)."""
    root = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):  # an xdist worker: share the session's root
        root = root.parent
    results, outcome = root / "figures-quick", root / "figures-quick.json"
    with open(root / "figures-quick.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not outcome.exists():
            results.mkdir(exist_ok=True)
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "experiments.figures", "--quick"]
                + ["--results-dir", str(results)],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=QUICK_TIMEOUT,
            )
            ran = {
                "results": str(results),
                "returncode": done.returncode,
                "seconds": time.perf_counter() - started,
                "stdout": done.stdout[-3000:],
                "stderr": done.stderr[-3000:],
            }
            outcome.write_text(json.dumps(ran), encoding="utf-8")
    return json.loads(outcome.read_text(encoding="utf-8"))
