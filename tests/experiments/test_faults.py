"""The harness under faults: a full disk midway, a results_dir it cannot create or write.

Each ends in one line naming the directory and what to do, and what was recorded before
the fault is kept exactly once: the rerun resumes.  (A ``kill -9`` of the run and of its
workers: ``test_run_resume.py``.)
"""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

import pytest

from experiments import names
from experiments import store as store_module
from experiments.run import prepare, run_settings
from experiments.schema import ConfigError
from experiments.store import ResultsDirError, ResultsStore

from .conftest import TINY

RUN = ("protocol=grr", *TINY, "n_trials=10", "n_jobs=1", "batch_size=2", "name=exp")
RUN += ("warn_minutes=null",)


def test_a_full_disk_midway_keeps_the_parts_written_and_the_rerun_completes(
    settings_of, results_dir, monkeypatch
):
    write = store_module.atomic_write_bytes
    parts_written = []

    def fill_up(path, data):
        if "parts" in path.parts:
            if len(parts_written) == 2:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            parts_written.append(path.name)
        write(path, data)

    settings = settings_of(*RUN)
    monkeypatch.setattr(store_module, "atomic_write_bytes", fill_up)
    with pytest.raises(ResultsDirError) as raised:
        run_settings(settings)
    line = str(raised.value)
    assert "\n" not in line and "No space left on device" in line and "rerun" in line
    store = ResultsStore(results_dir, "exp")
    (key,) = store.keys()
    assert store.done_trials(key) == {0, 1, 2, 3}  # the two parts written before the fault
    assert not [p for p in (store.parts_dir / key).iterdir() if p.name.endswith(".tmp")]

    monkeypatch.setattr(store_module, "atomic_write_bytes", write)  # space again
    report, _ = run_settings(settings)
    assert (report.done_before, report.ran) == (4, 6)
    table, _ = store.load()
    assert sorted(table.drop_duplicates("trial")["trial"]) == list(range(10))
    assert not table.duplicated(["trial", "metric", "item"]).any()


def test_a_results_dir_under_a_file_is_one_line_before_hydra_starts(tmp_path):
    afile = tmp_path / "a-file"
    afile.write_text("")
    with pytest.raises(ConfigError, match=r"results_dir: cannot write to .*a-file/results"):
        prepare([*RUN, f"results_dir={afile / 'results'}"])


def test_a_read_only_results_dir_is_one_line_before_hydra_starts(tmp_path, monkeypatch):
    # root passes any permission check, so the read-only file system is what access() says
    monkeypatch.setattr(store_module.os, "access", lambda path, mode: False)
    with pytest.raises(ConfigError, match=r"results_dir: .* is read-only"):
        prepare([*RUN, f"results_dir={tmp_path / 'results'}"])


def test_a_missing_results_dir_is_created(settings_of, tmp_path):
    deep = tmp_path / "not" / "yet" / "there"
    prepare([*RUN, f"results_dir={deep}"])  # no error
    report, store = run_settings(settings_of(*RUN, f"results_dir={deep}"))
    assert report.ran == 10 and store.directory.is_dir()


def _read_only(monkeypatch):
    """What a read-only file system does to the store, as root (who passes any permission
    check): no lock file, no probe file, and os.access says no."""

    def refuse_open(path, flags, mode=0o777):
        raise PermissionError(errno.EROFS, "Read-only file system", str(path))

    def refuse_write(path, data):
        raise PermissionError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(store_module.os, "open", refuse_open)
    monkeypatch.setattr(store_module, "atomic_write_bytes", refuse_write)
    monkeypatch.setattr(store_module.os, "access", lambda path, mode: False)


def test_a_read_only_results_dir_fully_recorded_is_read_and_left_as_it_is(
    settings_of, tmp_path, monkeypatch
):
    """The rerun of a finished sweep on a read-only copy runs nothing and writes nothing
    (it used to be refused before Hydra started); Hydra's logs go to the temp directory."""
    results_dir = tmp_path / "results"
    settings = settings_of(*RUN)
    run_settings(settings)
    before = sorted((p, p.stat().st_mtime_ns) for p in results_dir.rglob("*"))
    _read_only(monkeypatch)
    prepare([*RUN, f"results_dir={results_dir}"])  # no ConfigError
    assert names.log_root(results_dir, "exp").startswith(str(Path(tempfile.gettempdir())))
    report, store = run_settings(settings)
    assert (report.done_before, report.ran) == (10, 0)
    after = sorted((p, p.stat().st_mtime_ns) for p in results_dir.rglob("*"))
    assert set(after) - set(before) == set() and set(before) - set(after) == set()
    assert store.load()[0]["trial"].nunique() == 10


def test_a_read_only_results_dir_with_trials_to_run_is_one_line(settings_of, tmp_path, monkeypatch):
    run_settings(settings_of(*RUN))
    _read_only(monkeypatch)
    more = settings_of(*(o if o != "n_trials=10" else "n_trials=12" for o in RUN))
    with pytest.raises(ResultsDirError, match=r"cannot write to .* 2 trials would be lost"):
        run_settings(more)


def test_progress_off_a_terminal_is_lines_not_carriage_returns(settings_of, capsys):
    """A log file gets a line every tenth of the trials, never tqdm's redrawn line."""
    run_settings(settings_of(*RUN), progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert "exp: 10/10 trials" in err.splitlines()
