"""Rows say which code produced them; a rerun says when recorded trials came from other
code, and ``rerun=true`` recomputes them."""

from __future__ import annotations

import subprocess

from experiments import provenance
from experiments.provenance import source_commit
from experiments.run import describe, run_settings
from experiments.store import ResultsStore

from .conftest import TINY


def git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_the_commit_is_marked_dirty_by_code_changes_not_by_results(tmp_path):
    assert source_commit(tmp_path) == "unknown"
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    (tmp_path / "ldp").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "ldp" / "x.py").write_text("a = 1\n")
    (tmp_path / "results" / "index.md").write_text("figures\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    sha = source_commit(tmp_path)
    assert len(sha) == 40 and not sha.endswith("-dirty")
    (tmp_path / "results" / "index.md").write_text("new figures\n")
    assert source_commit(tmp_path) == sha
    (tmp_path / "ldp" / "x.py").write_text("a = 2\n")
    assert source_commit(tmp_path) == f"{sha}-dirty"


def test_trials_of_another_version_are_announced_and_rerun_recomputes_them(
    settings_of, results_dir, monkeypatch, capsys
):
    settings = settings_of("protocol=grr", *TINY, "n_trials=3", "n_jobs=1", "name=exp")
    monkeypatch.setattr(provenance, "git_commit", lambda: "a" * 40 + "-dirty")
    run_settings(settings)
    monkeypatch.setattr(provenance, "git_commit", lambda: "b" * 40)
    capsys.readouterr()
    report, store = run_settings(settings, announce=True)
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("exp: 1 settings x 3 trials; 3 recorded, 0 to run; 3 of the")
    assert "another version (ldp " in first and "commit aaaaaaaaaa-dirty" in first
    assert "rerun=true recomputes them" in first
    assert report.ran == 0 and report.foreign == 3
    assert "3 by another version" in describe(report, store)
    report, _ = run_settings(settings, rerun=True)
    assert (report.done_before, report.ran) == (0, 3)
    table, _ = ResultsStore(results_dir, "exp").load()
    assert set(table["git_commit"]) == {"b" * 40} and table["trial"].nunique() == 3
    report, _ = run_settings(settings)
    assert report.foreign == 0 and report.ran == 0


def test_planning_in_groups_of_settings_counts_every_groups_trials(
    settings_of, results_dir, monkeypatch
):
    """plan() reads PLAN_SETTINGS settings' rows at a time (bounded memory); what it
    finds recorded and by which code adds up over the groups."""
    from experiments import execute

    settings = [
        *settings_of("protocol=grr", *TINY, "n_trials=3", "n_jobs=1", "name=exp"),
        *settings_of("protocol=olh", *TINY, "n_trials=3", "n_jobs=1", "name=exp"),
    ]
    monkeypatch.setattr(provenance, "git_commit", lambda: "a" * 40)
    run_settings(settings)
    monkeypatch.setattr(provenance, "git_commit", lambda: "b" * 40)
    monkeypatch.setattr(execute, "PLAN_SETTINGS", 1)
    report, _ = run_settings(settings)
    assert (report.done_before, report.ran, report.foreign) == (6, 0, 6)
