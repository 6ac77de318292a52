"""Kill a run midway (SIGINT, then SIGKILL), damage a part, resume: nothing finished is redone."""

from __future__ import annotations

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
