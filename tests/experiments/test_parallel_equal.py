"""The same sweep gives exactly the same table with 1 and with 2 workers, in any order."""

from __future__ import annotations

import pandas as pd

from experiments.run import run_settings
from experiments.store import ResultsStore

from .conftest import TINY

#: Columns that record how the run went rather than what it computed.
TIMING = ["wall_time"]


def test_one_and_two_workers_give_equal_tables(settings_of, tmp_path):
    overrides = (
        "experiment=oracle_variance",
        "epsilon=1",
        "options.domain_size=8",
        *TINY[:2],
        "n_trials=3",
    )
    tables = []
    for jobs in (1, 2):
        settings = settings_of(
            *overrides, f"n_jobs={jobs}", f"results_dir={tmp_path / f'jobs{jobs}'}", "batch_size=1"
        )
        report, store = run_settings(settings)
        assert report.ran == len(settings) * 3 == 10 * 2 * 3  # 10 oracles, 2 engines
        tables.append(store.load()[0].drop(columns=TIMING))
    pd.testing.assert_frame_equal(tables[0], tables[1])


def test_adding_trials_keeps_the_existing_ones(settings_of, tmp_path):
    first = settings_of("protocol=olh", *TINY, "n_trials=2", "n_jobs=1")
    run_settings(first)
    store = ResultsStore(first[0].config["results_dir"], "custom")
    before = store.load()[0]
    report, _ = run_settings(settings_of("protocol=olh", *TINY, "n_trials=4", "n_jobs=1"))
    assert (report.done_before, report.ran) == (2, 2)
    after = store.load()[0]
    pd.testing.assert_frame_equal(after[after["trial"] < 2].reset_index(drop=True), before)
