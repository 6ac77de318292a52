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


def _quick_paths(config: pytest.Config) -> tuple[Path, Path, Path]:
    """(results directory, outcome file, lock file) of the session's quick run: under the
    session's temporary root, shared by the pytest-xdist workers (theirs is a child)."""
    root = config._tmp_path_factory.getbasetemp()  # noqa: SLF001 (tmp_path_factory's)
    if hasattr(config, "workerinput"):  # an xdist worker: share the session's root
        root = root.parent
    return root / "figures-quick", root / "figures-quick.json", root / "figures-quick.lock"


def _start_quick_run(config: pytest.Config) -> None:
    """Start the quick run in the background (tests/figures_quick_runner.py), once per
    session: the first process to take the lock starts it, the others find it started.
    It is stopped if the session's pytest process (an xdist worker's parent) exits."""
    results, outcome, lock_path = _quick_paths(config)
    owner = os.getppid() if hasattr(config, "workerinput") else os.getpid()
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        started = lock_path.with_suffix(".started")
        if started.exists():
            return
        results.mkdir(exist_ok=True)
        subprocess.Popen(
            [sys.executable, str(REPO / "tests" / "figures_quick_runner.py")]
            + [str(results), str(outcome), str(owner), str(QUICK_TIMEOUT)],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.touch()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """As soon as the selected tests are known: if one reads the quick run, start it, so
    that it runs beside the other tests rather than holding a worker while it runs."""
    if session.config.option.collectonly:
        return
    if any("figures_quick_run" in getattr(item, "fixturenames", ()) for item in session.items):
        _start_quick_run(session.config)


@pytest.fixture(scope="session")
def figures_quick_run(request: pytest.FixtureRequest) -> dict:
    """``python -m experiments.figures --quick`` (what ``make figures-quick`` runs) into a
    temporary results directory, once for the whole session, shared by the test files
    that read it: started in the background when the session's tests are collected
    (:func:`pytest_collection_finish`), then read here by every worker.  Returns the
    directory, the exit code, the seconds and the output's tails (the tests assert on
    them)."""
    _start_quick_run(request.config)  # a no-op once started
    outcome = _quick_paths(request.config)[1]
    deadline = time.monotonic() + QUICK_TIMEOUT + 60
    while not outcome.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"figures --quick wrote no outcome ({outcome}) in {QUICK_TIMEOUT} s")
        time.sleep(0.5)
    return json.loads(outcome.read_text(encoding="utf-8"))
