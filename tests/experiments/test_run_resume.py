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

from experiments.run import run_settings
from experiments.store import ResultsStore

from .conftest import REPO, run_cli

#: SHE with real reports on 20,000 users x 64 values: tens of ms per trial.
SLOW = (
    "protocol=she",
    "engine=reports",
    "dataset=point",
    "dataset.n=20000",
    "options.domain_size=64",
    "options.track=absent",
    "n_trials=60",
    "n_jobs=1",
    "batch_size=1",
    "progress=false",
    "name=resume",
)


def start(results_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.run", *SLOW, f"results_dir={results_dir}"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_parts(store: ResultsStore, at_least: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        keys = store.keys()
        if keys and len(store.parts(keys[0])) >= at_least:
            return
        time.sleep(0.05)
    pytest.fail(f"no {at_least} parts appeared (exit {process.poll()})")


def recorded(store: ResultsStore) -> pd.DataFrame:
    return store.load()[0].set_index(["trial", "metric"]).sort_index()


def test_interrupt_kill_and_resume(results_dir, settings_of, tmp_path):
    store = ResultsStore(results_dir, "resume")
    process = start(results_dir)
    wait_for_parts(store, 3, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "rerun the same command to resume" in err
    after_sigint = recorded(store)
    assert 3 <= after_sigint.index.get_level_values("trial").nunique() < 60

    process = start(results_dir)
    wait_for_parts(store, len(store.parts(store.keys()[0])) + 3, process)
    process.kill()
    process.communicate(timeout=60)
    after_kill = recorded(store)
    kept = sorted(set(after_kill.index.get_level_values("trial")))
    assert len(kept) > after_sigint.index.get_level_values("trial").nunique()

    damaged = store.parts(store.keys()[0])[-1]  # a part that does not decompress
    damaged.path.write_bytes(damaged.path.read_bytes()[:20])
    lost = set(damaged.trials)

    done = run_cli(*SLOW, f"results_dir={results_dir}", timeout=120)
    assert done.returncode == 0, done.stderr
    match = re.search(r"(\d+) already recorded, (\d+) run now", done.stdout)
    assert match, done.stdout
    assert int(match.group(1)) == len(kept) - len(lost)
    assert int(match.group(2)) == 60 - len(kept) + len(lost)
    assert "corrupt results part excluded" in done.stderr and damaged.path.name in done.stderr

    final = recorded(store)
    assert sorted(set(final.index.get_level_values("trial"))) == list(range(60))
    untouched = after_kill.drop(index=list(lost), level="trial")
    pd.testing.assert_frame_equal(final.loc[untouched.index], untouched)  # wall times too

    fresh = settings_of(*SLOW, f"results_dir={tmp_path / 'fresh'}")
    _, fresh_store = run_settings(fresh)
    how = ["wall_time", "git_commit"]  # how the run went (others may commit meanwhile)
    pd.testing.assert_frame_equal(recorded(fresh_store).drop(columns=how), final.drop(columns=how))


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


def test_the_workers_die_with_a_killed_run(results_dir):
    overrides = [o if not o.startswith("n_jobs") else "n_jobs=2" for o in SLOW]
    overrides.append("warn_minutes=null")  # the parts below must come from the workers
    process = subprocess.Popen(
        [sys.executable, "-m", "experiments.run", *overrides, f"results_dir={results_dir}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_parts(ResultsStore(results_dir, "resume"), 2, process)
    workers = {
        pid for pid in _children(process.pid) if "Loky" in Path(f"/proc/{pid}/cmdline").read_text()
    }
    assert len(workers) == 2
    process.kill()
    process.wait(10)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.2)
    survivors = [pid for pid in workers if _alive(pid)]
    for pid in survivors:  # do not leave them to the next test
        os.kill(pid, signal.SIGKILL)
    assert survivors == []
