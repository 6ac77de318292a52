"""``make clean-results`` removes every raw result and keeps the committed gallery; ``make``
alone creates the venv."""

from __future__ import annotations

import shutil
import subprocess

from .conftest import REPO


def test_clean_results_keeps_only_the_committed_figures_and_report(tmp_path):
    shutil.copy(REPO / "Makefile", tmp_path / "Makefile")
    results = tmp_path / "results"
    for path in (
        "oracle_variance/parts/abc/000000-000009.csv.gz",
        "oracle_variance/table.csv.gz",
        "quick/figures/index.md",
        "custom/hydra/multirun_x/0/.hydra/config.yaml",
        "figures/index.md",
        "figures/pem_fig5.png",
        "REPRODUCTION.md",
    ):
        (results / path).parent.mkdir(parents=True, exist_ok=True)
        (results / path).write_text("x")
    done = subprocess.run(
        ["make", "clean-results"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    left = sorted(str(p.relative_to(results)) for p in results.rglob("*"))
    assert left == ["REPRODUCTION.md", "figures", "figures/index.md", "figures/pem_fig5.png"]
    helped = subprocess.run(["make", "help"], cwd=tmp_path, capture_output=True, text=True)
    assert "clean-results" in helped.stdout


def test_make_alone_creates_the_venv_then_lists_the_targets(tmp_path):
    """`make` with no target is `make venv`: a dry run where the install stamp is out of
    date (-W pretends pyproject.toml changed) creates the venv and installs, then prints
    the targets."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    dry = subprocess.run(
        ["make", "-n", "-W", "pyproject.toml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dry.returncode == 0, dry.stderr
    steps = dry.stdout.splitlines()
    assert any("-m venv .venv" in step for step in steps), dry.stdout
    assert any("pip install" in step and "-e '.[dev]'" in step for step in steps), dry.stdout
    installed = next(i for i, step in enumerate(steps) if "pip install" in step)
    assert any(step.endswith(" help") for step in steps[installed:]), dry.stdout
