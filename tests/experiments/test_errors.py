"""Errors survive workers: every exception class of the library pickles, and a failing
trial reaches the user as one line, the same with one worker and with two."""

from __future__ import annotations

import importlib
import inspect
import os
import pickle
import pkgutil
from pathlib import Path

import pytest

import experiments
import ldp
from experiments.execute import TrialError, run_batch

from .conftest import REPO, TINY, run_cli


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in (ldp, experiments):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, BaseException) and obj.__module__ == info.name:
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[name] for name in sorted(found)]


CLASSES = _exception_classes()


def test_the_library_defines_exception_classes():
    names = {cls.__name__ for cls in CLASSES}
    assert {"DataFileError", "ConfigError", "CorruptPartError", "TrialError"} <= names


def _instance(cls: type[BaseException]) -> BaseException:
    """An instance built from its signature: a text for every required argument, and
    an int where the parameter's name says it is a line number."""
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except ValueError:  # no __init__ of its own: the builtin (message) signature
        parameters = []
    args = []
    for p in parameters:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
            continue
        args.append(3 if p.name in ("line", "trial") else f"{p.name}-text")
    if not args:
        args = ["a message"]
    return cls(*args)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_every_exception_class_survives_pickling(cls):
    error = _instance(cls)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and str(copy) == str(error)
    assert vars(copy) == vars(error)


def test_a_data_file_error_with_a_line_pickles():
    from ldp.datasets.readers import DataFileError

    error = DataFileError("/x", "bad", 3)
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == "/x, line 3: bad" and copy.line == 3 and copy.path == "/x"


def test_a_failing_trial_raises_one_picklable_error_naming_setting_and_trial(settings_of):
    setting = settings_of(*TINY, "protocol=grr")[0]
    broken = type(setting)({**setting.config, "protocol": {**setting.config["protocol"]}}, "k1")
    broken.config["protocol"]["kind"] = "no-such-kind"
    with pytest.raises(TrialError) as caught:
        run_batch(broken, [4], "exp", {})
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert "trial 4" in str(copy) and "KeyError" in str(copy) and "\n" not in str(copy)


BROKEN = """
from dataclasses import dataclass

from ldp.oracles import GRR
from ldp.registry import register


class Unpicklable(Exception):
    def __init__(self, where, why):
        super().__init__(f"{where}: {why}")


@register
@dataclass(frozen=True, kw_only=True)
class Broken(GRR):
    name = "Broken"

    def simulate(self, true_counts, rng, candidates=None):
        raise Unpicklable("/data/file.dat", "line 7 is not a number")
"""


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    """A plug-in oracle that fails inside the trial with an exception that cannot pickle."""
    site = tmp_path / "site"
    info = site / "broken_ldp-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "broken_ldp.py").write_text(BROKEN)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-ldp\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ldp.protocols]\nbroken = broken_ldp\n")
    return site


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_trial_failure_is_one_line_whatever_the_workers(broken_site, tmp_path, n_jobs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken_site), str(REPO)])}
    result = run_cli(
        "protocol=broken",
        *TINY,
        "n_trials=2",
        f"n_jobs={n_jobs}",
        f"results_dir={tmp_path / 'results'}",
        env=env,
    )
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: trial ")
    assert "Unpicklable: /data/file.dat: line 7 is not a number" in lines[0]
