"""Kill a run midway (SIGINT, then SIGKILL), damage a part, resume: nothing finished is redone."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from experiments.store import ResultsStore

from .conftest import REPO, Gate, run_cli

#: A run whose trials wait at the test's gate (``protocol=gated``: GRR behind a gate, one
#: ticket per trial), so each signal below arrives at a known point, never in a race.
GATED = (
    "protocol=gated",
    "engine=reports",
    "dataset=point",
    "dataset.n=400",
    "options.domain_size=8",
    "options.track=absent",
    "n_trials=60",
    "n_jobs=1",
    "batch_size=1",
    "progress=false",
    "name=resume",
)


def start(results_dir: Path, gate: Gate, *overrides: str) -> subprocess.Popen:
    overrides = overrides or GATED
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.run", *overrides, f"results_dir={results_dir}"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=gate.env(),
        # Ctrl-C's default action, even when this suite was started where SIGINT is
        # ignored (a shell's background job): Python then never installs its handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def recorded(store: ResultsStore) -> pd.DataFrame:
    return store.load()[0].set_index(["trial", "metric"]).sort_index()


def trials_of(frame: pd.DataFrame) -> list[int]:
    return sorted(set(frame.index.get_level_values("trial")))


def test_interrupt_kill_and_resume(results_dir, new_gate, tmp_path):
    store = ResultsStore(results_dir, "resume")
    gate = new_gate()
    gate.allow(3)
    process = start(results_dir, gate)
    gate.wait_until_blocked(process)  # trials 0-2 done, trial 3 waits at the gate
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "rerun the same command to resume" in err
    after_sigint = recorded(store)
    assert trials_of(after_sigint) == [0, 1, 2]

    gate = new_gate()
    gate.allow(3)
    process = start(results_dir, gate)
    gate.wait_until_blocked(process)  # trials 3-5 done, trial 6 waits
    process.kill()
    process.communicate(timeout=60)
    after_kill = recorded(store)
    kept = trials_of(after_kill)
    assert kept == list(range(6))
    pd.testing.assert_frame_equal(after_kill.loc[[0, 1, 2]], after_sigint)

    damaged = store.parts(store.keys()[0])[-1]  # a part that does not decompress
    damaged.path.write_bytes(damaged.path.read_bytes()[:20])
    lost = set(damaged.trials)

    gate = new_gate()
    gate.allow(10**6)
    done = run_cli(*GATED, f"results_dir={results_dir}", timeout=120, env=gate.env())
    assert done.returncode == 0, done.stderr
    match = re.search(r"(\d+) already recorded, (\d+) run now", done.stdout)
    assert match, done.stdout
    assert int(match.group(1)) == len(kept) - len(lost)
    assert int(match.group(2)) == 60 - len(kept) + len(lost)
    assert "corrupt results part excluded" in done.stderr and damaged.path.name in done.stderr

    final = recorded(store)
    assert not final.index.duplicated().any()  # nothing recorded twice
    assert trials_of(final) == list(range(60))
    untouched = after_kill.drop(index=list(lost), level="trial")
    pd.testing.assert_frame_equal(final.loc[untouched.index], untouched)  # wall times too

    fresh = run_cli(*GATED, f"results_dir={tmp_path / 'fresh'}", timeout=120, env=gate.env())
    assert fresh.returncode == 0, fresh.stderr
    how = ["wall_time", "git_commit"]  # how the run went (others may commit meanwhile)
    fresh_rows = recorded(ResultsStore(tmp_path / "fresh", "resume"))
    pd.testing.assert_frame_equal(fresh_rows.drop(columns=how), final.drop(columns=how))


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _workers(pid: int) -> set[int]:
    return {
        child
        for child in _children(pid)
        if "Loky" in (Path("/proc") / str(child) / "cmdline").read_text()
    }


@pytest.mark.parametrize(
    ("n_trials", "allowed", "waiting"),
    [(60, 2, 4), (1, 0, 1)],
    ids=["both-busy", "one-never-given-a-batch"],
)
def test_the_workers_die_with_a_killed_run(results_dir, new_gate, n_trials, allowed, waiting):
    """``kill -9`` of the run: its loky workers exit within 10 s, busy or idle, and the
    rerun records every trial once."""
    overrides = [o for o in GATED if not o.startswith(("n_jobs", "n_trials"))]
    overrides += ["n_jobs=2", f"n_trials={n_trials}", "warn_minutes=null"]  # all in workers
    gate = new_gate()
    gate.allow(allowed)
    process = start(results_dir, gate, *overrides)
    deadline = time.monotonic() + 120
    while gate.started() < waiting or len(_workers(process.pid)) < 2:
        assert process.poll() is None and time.monotonic() < deadline, "no two workers waiting"
        time.sleep(0.02)
    workers = _workers(process.pid)
    assert len(workers) == 2
    process.kill()
    process.wait(timeout=10)  # not communicate(): a surviving worker holds the pipes open
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.2)
    survivors = [pid for pid in workers if _alive(pid)]
    for pid in survivors:  # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    process.communicate(timeout=10)
    assert survivors == []

    gate.allow(10**6)
    done = run_cli(*overrides, f"results_dir={results_dir}", timeout=120, env=gate.env())
    assert done.returncode == 0, done.stderr
    final = recorded(ResultsStore(results_dir, "resume"))
    assert not final.index.duplicated().any()
    assert trials_of(final) == list(range(n_trials))


def test_the_launchers_workers_die_with_a_killed_sweep(results_dir, new_gate):
    """``kill -9`` of a ``-m`` sweep under Hydra's joblib launcher, each job waiting at the
    gate in a launcher worker: the workers exit within 10 s; the rerun records each trial
    of each job once."""
    sweep = ["-m", "hydra/launcher=parallel", "hydra.launcher.n_jobs=2", "epsilon=1,2"]
    sweep += [o for o in GATED if not o.startswith(("n_jobs", "n_trials"))] + ["n_trials=3"]
    gate = new_gate()
    process = start(results_dir, gate, *sweep)
    deadline = time.monotonic() + 120
    while gate.started() < 2 or len(_workers(process.pid)) < 2:  # a job per worker, waiting
        assert process.poll() is None and time.monotonic() < deadline, "no two jobs waiting"
        time.sleep(0.02)
    workers = _workers(process.pid)
    process.kill()
    process.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.2)
    survivors = [pid for pid in workers if _alive(pid)]
    for pid in survivors:
        os.kill(pid, signal.SIGKILL)
    process.communicate(timeout=10)
    assert survivors == []

    gate.allow(10**6)
    done = run_cli(*sweep, f"results_dir={results_dir}", timeout=180, env=gate.env())
    assert done.returncode == 0, done.stderr
    table = ResultsStore(results_dir, "resume").load()[0]
    assert not table.duplicated(["config_hash", "trial", "metric", "item"]).any()
    assert sorted(table.groupby("config_hash")["trial"].nunique()) == [3, 3]
