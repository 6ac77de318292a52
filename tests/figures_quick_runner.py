"""Run ``python -m experiments.figures --quick`` into a directory and record the outcome.

Started in the background by ``tests/conftest.py`` as soon as a test session has collected
a test that reads the run, so the run overlaps the other tests instead of making a pytest
worker wait for it.  Usage::

    python tests/figures_quick_runner.py RESULTS_DIR OUTCOME_JSON WATCHED_PID TIMEOUT

Writes OUTCOME_JSON atomically (the results directory, the exit code, the seconds and the
output's tails).  Stops the run, with its workers, if WATCHED_PID (the pytest process that
owns the session) exits first or TIMEOUT seconds pass.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def main(results: str, outcome: str, watched: int, timeout: float) -> int:
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        run = subprocess.Popen(
            [sys.executable, "-m", "experiments.figures", "--quick", "--results-dir", results],
            cwd=REPO,
            stdout=out,
            stderr=err,
            text=True,
            start_new_session=True,  # its own process group: stopped with its workers
        )
        while run.poll() is None:
            if not _alive(watched) or time.perf_counter() - started > timeout:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
                break
            time.sleep(0.5)
        out.seek(0)
        err.seek(0)
        ran = {
            "results": results,
            "returncode": run.returncode,
            "seconds": time.perf_counter() - started,
            "stdout": out.read()[-3000:],
            "stderr": err.read()[-3000:],
        }
    partial = Path(outcome).with_suffix(".partial")
    partial.write_text(json.dumps(ran), encoding="utf-8")
    os.replace(partial, outcome)
    return 0


if __name__ == "__main__":
    results_dir, outcome_json, watched_pid, seconds = sys.argv[1:5]
    raise SystemExit(main(results_dir, outcome_json, int(watched_pid), float(seconds)))
