"""The one progress line of a multirun (issue 16 item 8): redrawn cleanly on a terminal,
moving within a long job, and each job's own line kept in its log file."""

from __future__ import annotations

import io

from experiments import sweep_progress
from experiments.sweep_progress import Sweep

from .conftest import TINY, run_cli


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _terminal(monkeypatch) -> _Terminal:
    """A terminal as stderr (set in the test: pytest's capture resets it between phases)."""
    screen = _Terminal()
    monkeypatch.setattr("sys.stderr", screen)
    return screen


def _drawn(screen: _Terminal) -> list[str]:
    """The successive states of the redrawn line."""
    return screen.getvalue().split("\r")[1:]


def test_a_redrawn_line_covers_the_longer_line_before_it(monkeypatch):
    terminal = _terminal(monkeypatch)
    monkeypatch.setattr(sweep_progress, "CURRENT", Sweep(name="s", total=2))
    sweep_progress.job_done(5, 0, "/r/s")  # "..., ~1s left"
    sweep_progress.job_done(5, 0, "/r/s")  # the last one has no "left": shorter
    first, last = _drawn(terminal)
    assert "left" in first and "left" not in last
    # a carriage return alone would leave the tail of the first line ("left") on screen
    assert len(last) >= len(first) and last.rstrip().endswith("elapsed")


def test_on_a_terminal_the_line_moves_with_the_trials_of_a_running_job(monkeypatch):
    terminal = _terminal(monkeypatch)
    monkeypatch.setattr(sweep_progress, "CURRENT", Sweep(name="s", total=4))
    sweep_progress.job_done(10, 0, "/r/s")
    sweep_progress.trials_done(3)
    sweep_progress.trials_done(4)
    sweep_progress.job_done(10, 0, "/r/s")
    lines = [line.rstrip() for line in _drawn(terminal)]
    assert [line.split("]")[1].split(",")[0] for line in lines] == [
        " 10 trials run now",
        " 13 trials run now",
        " 17 trials run now",
        " 20 trials run now",  # the job's own count replaces its running one
    ]
    assert lines[1].startswith("s: [1/4 jobs]") and lines[3].startswith("s: [2/4 jobs]")


def test_off_a_terminal_trials_within_a_job_print_nothing(monkeypatch, capsys):
    monkeypatch.setattr(sweep_progress, "CURRENT", Sweep(name="s", total=4))
    sweep_progress.trials_done(3)
    assert capsys.readouterr().err == ""


def test_outside_a_sweep_nothing_is_drawn(monkeypatch):
    terminal = _terminal(monkeypatch)
    monkeypatch.setattr(sweep_progress, "CURRENT", None)
    sweep_progress.trials_done(3)
    sweep_progress.job_done(3, 0, "/r/s")
    assert terminal.getvalue() == ""


def test_each_job_keeps_its_own_line_in_its_log_file(tmp_path):
    done = run_cli(
        "-m", "protocol=grr,oue", *TINY, "n_trials=2", "n_jobs=1", f"results_dir={tmp_path}"
    )
    assert done.returncode == 0, done.stderr
    assert "settings x" not in done.stdout + done.stderr  # not on the console
    logs = sorted((tmp_path / "custom" / "hydra").glob("multirun_*/*/run.log"))
    texts = [path.read_text() for path in logs]
    assert len(texts) == 2, logs
    for protocol, text in zip(("grr", "oue"), texts, strict=True):
        assert f"protocol={protocol}" in text
        assert "custom: 1 settings x 2 trials; 0 already recorded, 2 run now" in text
    # the sweep's last line says where they are
    assert "job lines in" in done.stdout and "run.log" in done.stdout
