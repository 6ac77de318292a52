"""A setting's rows are keyed by the code that computes them: an edit recomputes exactly the
settings whose code changed, names the changed files, and never mixes old rows with new."""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from hydra import initialize_config_dir

from experiments import codedigest, plot, summarize
from experiments.codedigest import code_modules
from experiments.run import CONF_DIR, run_settings
from experiments.schema import register_configs
from experiments.select import SelectionError, load_results
from experiments.settings import expand
from experiments.store import ResultsStore, read_part

from .conftest import TINY

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
"""A plug-in oracle: GRR under another name, with a parameter of its own."""

from dataclasses import dataclass

from ldp.oracles import GRR


@dataclass(frozen=True, kw_only=True)
class DigestGRR(GRR):
    """GRR with an unused weight (the plug-in's own parameter)."""

    name = "DigestGRR"
    weight: float = 0.25
'''


@pytest.fixture(autouse=True)
def _fresh_digests():
    codedigest.clear_cache()
    yield
    codedigest.clear_cache()


def _write_plugin(folder: Path, weight: str = "0.25") -> None:
    package = folder / "digest_plugin"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text('"""A plug-in package."""\n')
    text = textwrap.dedent(PLUGIN).replace("weight: float = 0.25", f"weight: float = {weight}")
    (package / "oracle.py").write_text(text)


@pytest.fixture
def plugin(tmp_path, monkeypatch, register_protocol):
    """The plug-in package, importable from ``tmp_path/site`` and registered."""
    site = tmp_path / "site"
    _write_plugin(site)
    monkeypatch.syspath_prepend(str(site))
    for name in ("digest_plugin", "digest_plugin.oracle"):
        sys.modules.pop(name, None)
    module = importlib.import_module("digest_plugin.oracle")
    register_protocol(module.DigestGRR)
    yield site / "digest_plugin" / "oracle.py"
    for name in ("digest_plugin", "digest_plugin.oracle"):
        sys.modules.pop(name, None)


@pytest.fixture
def grid_of(results_dir):
    """The settings of a run with these overrides and grid axes (``protocol=grr,oue``)."""
    register_configs()

    def _expand(*overrides: str, grid: tuple[str, ...] = ()):
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return expand("config", [f"results_dir={results_dir}", *overrides], grid)

    return _expand


def _by_protocol(settings):
    return {s.config["protocol"]["name"]: s for s in settings}


def test_the_code_of_a_setting_is_its_protocol_kind_and_loaders_and_nothing_else():
    grr = code_modules({"protocol": {"name": "GRR", "kind": "oracle"}})
    assert {"ldp.oracles.direct", "ldp.oracles.base", "experiments.trials"} <= set(grr)
    assert {"experiments.kinds.oracle", "experiments.population", "ldp.datasets.synthetic"} <= set(
        grr
    )
    # another protocol's module, another kind's module, the figures: not this setting's code
    assert "ldp.oracles.unary" not in grr and "experiments.kinds.heavy_hitter" not in grr
    assert not [m for m in grr if m.startswith("experiments.figures")]
    assert "ldp.oracles" not in grr  # `from ldp.oracles import X` reaches X's own module
    pem = code_modules({"protocol": {"name": "PEM", "kind": "heavy_hitter", "oracle": "OUE"}})
    assert {"ldp.heavy_hitters.pem", "ldp.oracles.unary", "experiments.kinds.heavy_hitter"} <= set(
        pem
    )
    assert "experiments.kinds.oracle" not in pem


def test_the_auditor_is_no_settings_code(tmp_path, monkeypatch):
    """Imports inside a protocol's audit hooks are not followed, so an edit to the auditor
    re-keys no setting; the same import in any other method is followed (planted)."""
    from ldp import registry

    kinds = [p.stem for p in (REPO / "experiments" / "kinds").glob("[!_]*.py")]
    own = {"oracle": "oracle", "heavy_hitter": "heavy_hitter", "mean": "mean", "set": "sets"}
    configs = [{"name": name, "kind": own[entry.kind], "oracle": "OLH"}
               for name, entry in registry.protocols().items()]  # fmt: skip
    configs += [{"name": "GRR", "kind": kind} for kind in kinds]  # every kind's module
    for protocol in configs:
        modules = code_modules({"protocol": protocol})
        assert not [m for m in modules if m.startswith("ldp.audit")], protocol
    package = tmp_path / "hooked_plugin"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("X = 1\n")
    (package / "events.py").write_text("Y = 2\n")
    hook = "    def audit_events(self, v, w):\n        from hooked_plugin import events\n"
    other = "    def estimate(self, r):\n        from hooked_plugin import helper\n"
    (package / "oracle.py").write_text(f"class Oracle:\n{hook}{other}")
    monkeypatch.syspath_prepend(str(tmp_path))
    codedigest.clear_cache()
    try:
        closure = codedigest._closure(("hooked_plugin.oracle",), ("hooked_plugin",), "oracle")
        assert "hooked_plugin.helper" in closure and "hooked_plugin.events" not in closure
        (package / "oracle.py").write_text(
            f"class Oracle:\n{other.replace('estimate', 'audit')}"
            f"{hook.replace('audit_events', 'estimate_all')}"
        )
        codedigest.clear_cache()
        closure = codedigest._closure(("hooked_plugin.oracle",), ("hooked_plugin",), "oracle")
        assert {"hooked_plugin.helper", "hooked_plugin.events"} <= set(closure)
    finally:
        codedigest.clear_cache()


#: The harness's layers that compute no row: storing, scheduling, the command line.
NOT_A_TRIALS_CODE = ("experiments.store", "experiments.execute", "experiments.run")


def test_the_storage_and_scheduling_layers_are_no_settings_code():
    """Editing how rows are stored or scheduled re-keys nothing: no trial's code imports
    them (an import of the store from the schema once made every recorded setting stale
    at each storage edit)."""
    for config in (
        {"protocol": {"name": "GRR", "kind": "oracle"}},
        {"protocol": {"name": "PEM", "kind": "heavy_hitter", "oracle": "OLH"}},
    ):
        modules = set(code_modules(config))
        assert "experiments.schema" in modules  # the edge through which the store came in
        assert not modules & set(NOT_A_TRIALS_CODE), modules & set(NOT_A_TRIALS_CODE)


def test_an_edited_built_in_protocol_recomputes_exactly_its_settings(
    grid_of, results_dir, monkeypatch, capsys
):
    def settings_of(*args):
        return grid_of(*args, grid=("protocol=grr,oue", "epsilon=1,2"))

    grid = (*TINY, "n_trials=3", "n_jobs=1", "name=exp")
    first = run_settings(settings_of(*grid))[0]
    assert first.ran == 12
    store = ResultsStore(results_dir, "exp")
    before = store.load()[0]
    assert before["code_digest"].notna().all() and before["code_digest"].nunique() == 2

    read = codedigest.source_bytes
    edited = {"ldp.oracles.direct", "experiments.figures.fig_oracle_variance"}
    monkeypatch.setattr(
        codedigest,
        "source_bytes",
        lambda module: read(module) + (b"\n# edited\n" if module in edited else b""),
    )
    codedigest.clear_cache()
    settings = settings_of(*grid)
    capsys.readouterr()
    report, _ = run_settings(settings, announce=True)
    line = capsys.readouterr().out.splitlines()[0]
    assert (report.done_before, report.ran) == (6, 6)  # OUE reused, GRR recomputed
    assert "2 settings have rows computed by other code (changed: ldp/oracles/direct.py)" in line
    assert "fig_oracle_variance" not in line and "protocol=grr" in line
    assert "protocol=oue" not in line.split("(changed")[1]

    # the table keeps only the current rows; summarize shows the stale ones apart
    table = pd.read_csv(store.directory / "table.csv.gz", dtype={"config_hash": str})
    current = {s.key for s in settings}
    assert set(table["config_hash"]) == current and len(table) == len(before)
    stale = set(store.superseded())
    assert len(stale) == 2 and not stale & current
    assert summarize.main(["exp", "--results-dir", str(results_dir)]) == 0
    captured = capsys.readouterr()
    assert "2 settings hold rows computed by code a later run replaced" in captured.err
    assert "code_digest" in captured.out
    with pytest.raises(SelectionError, match="settings that differ in code_digest"):
        plot.points(load_results(results_dir), x="epsilon", y="sq_error_n", hue="protocol.name")

    # back to the old code: its rows count again, nothing runs, nothing is mixed
    monkeypatch.setattr(codedigest, "source_bytes", read)
    codedigest.clear_cache()
    report, _ = run_settings(settings_of(*grid), announce=True)
    assert (report.done_before, report.ran) == (12, 0)
    table = pd.read_csv(store.directory / "table.csv.gz", dtype={"config_hash": str})
    assert set(table["code_digest"]) == set(before["code_digest"])


def test_an_edited_plugin_recomputes_its_settings_without_a_version_bump(
    plugin, grid_of, results_dir, capsys
):
    def settings_of(*args):
        return grid_of(*args, grid=("protocol=grr,digestgrr",))

    grid = (*TINY, "n_trials=2", "n_jobs=1", "name=exp")
    assert run_settings(settings_of(*grid))[0].ran == 4
    plugin.write_text(plugin.read_text().replace("weight: float = 0.25", "weight: float = 0.5"))
    codedigest.clear_cache()
    settings = settings_of(*grid)
    capsys.readouterr()
    report, _ = run_settings(settings, announce=True)
    line = capsys.readouterr().out.splitlines()[0]
    assert (report.done_before, report.ran) == (2, 2)
    assert "1 settings have rows computed by other code" in line
    assert "changed: digest_plugin/oracle.py)" in line
    keys = {s.config["protocol"]["name"]: s.key for s in settings}
    assert set(ResultsStore(results_dir, "exp").superseded().values()) == {keys["DigestGRR"]}


def test_an_installed_copy_is_what_counts(tmp_path, monkeypatch, register_protocol, settings_of):
    """A plug-in installed as a copy (not editable): editing its source checkout changes
    nothing that runs, so no setting is re-keyed; installing the edit re-keys its settings."""
    checkout, target = tmp_path / "checkout", tmp_path / "target"
    _write_plugin(checkout)
    shutil.copytree(checkout / "digest_plugin", target / "digest_plugin")  # "pip install"
    monkeypatch.syspath_prepend(str(target))
    for name in ("digest_plugin", "digest_plugin.oracle"):
        sys.modules.pop(name, None)
    try:
        module = importlib.import_module("digest_plugin.oracle")
        register_protocol(module.DigestGRR)
        grid = ("protocol=digestgrr", *TINY, "n_trials=1", "n_jobs=1")
        installed = _by_protocol(settings_of(*grid))["DigestGRR"]
        _write_plugin(checkout, weight="0.5")
        codedigest.clear_cache()
        assert _by_protocol(settings_of(*grid))["DigestGRR"].key == installed.key
        shutil.copytree(checkout / "digest_plugin", target / "digest_plugin", dirs_exist_ok=True)
        codedigest.clear_cache()
        reinstalled = _by_protocol(settings_of(*grid))["DigestGRR"]
        assert reinstalled.key != installed.key
        assert reinstalled.base_key == installed.base_key
        changed = codedigest.changed_files(installed.code_files, reinstalled.code_files)
        assert changed == ["digest_plugin/oracle.py"]
    finally:
        for name in ("digest_plugin", "digest_plugin.oracle"):
            sys.modules.pop(name, None)


def test_rows_recorded_before_code_digests_are_stale(settings_of, results_dir, capsys):
    """Results stored under a key without a code digest (older runs) are never reused."""
    settings = settings_of("protocol=grr", *TINY, "n_trials=2", "n_jobs=1", "name=exp")
    run_settings(settings)
    store = ResultsStore(results_dir, "exp")
    (setting,) = settings
    old = store.parts_dir / setting.base_key
    (store.parts_dir / setting.key).rename(old)
    for part in list(old.iterdir()):  # rows say what their part's name says
        rows = read_part(part).assign(config_hash=setting.base_key)
        part.unlink()
        store.write_part(setting.base_key, sorted(set(rows["trial"])), rows)
    (store.directory / "code" / f"{setting.key}.json").unlink()
    capsys.readouterr()
    report, _ = run_settings(settings, announce=True)
    line = capsys.readouterr().out.splitlines()[0]
    assert (report.done_before, report.ran) == (0, 2)
    assert "1 settings have rows computed by other code (recorded before code digests)" in line
    assert store.superseded() == {setting.base_key: setting.key}
