"""Custom runs of the figures never rewrite the committed outputs; a plug-in joins a paper
figure from the command line; rows say which plug-in version made them."""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hydra.core.config_store import ConfigStore

from experiments import schema
from experiments.figures import fig_oracle_variance
from experiments.figures import reproduction as report
from experiments.figures.__main__ import main as figures
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Part, WithinSE
from experiments.run import run_settings
from experiments.schema import register_configs
from experiments.store import ResultsStore
from ldp import registry
from ldp.oracles import OUE

from .conftest import REPO, TINY


@dataclass(frozen=True, kw_only=True)
class Toy(OUE):
    """A plug-in oracle of the test: OUE under another name, with a parameter of its own."""

    name = "Toy"
    p: float = 0.5


def _fast_grid() -> list[str]:
    return [
        "--set",
        "n_trials=2",
        "--set",
        "hydra.sweeper.params.epsilon='1,3'",
        "--set",
        "hydra.sweeper.params.protocol='grr,olh'",
        "--set",
        "hydra.sweeper.params.engine=sampled",
    ]


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


def test_a_plugin_joins_a_paper_figure_in_its_own_directory(register_protocol, tmp_path, capsys):
    register_protocol(Toy)
    results = tmp_path / "results"
    (results / "figures").mkdir(parents=True)
    shutil.copy(REPO / "results" / "figures" / "index.md", results / "figures" / "index.md")
    shutil.copy(REPO / "results" / "REPRODUCTION.md", results / "REPRODUCTION.md")
    before = _snapshot(results)
    args = ["--only", "oracle_variance", "--results-dir", str(results), "--n-jobs", "1"]
    args += ["--add", "protocol=toy"]  # a protocol registered here: run in this process
    assert figures([*args, *_fast_grid()]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert f"figures and report go to {results / 'custom'}" in out
    assert _snapshot(results / "figures") == {
        k.removeprefix("figures/"): v for k, v in before.items() if k.startswith("figures/")
    }
    assert (results / "REPRODUCTION.md").read_bytes() == before["REPRODUCTION.md"]
    custom = results / "custom"
    assert (custom / "figures" / "oracle_variance.png").exists()
    index = (custom / "figures" / "index.md").read_text()
    assert index.count("\n## ") == 1  # this run's figure alone, not the committed gallery
    table, _ = ResultsStore(results, "oracle_variance").load()
    assert set(table["protocol.name"]) == {"GRR", "OLH", "Toy"}
    text = (custom / "REPRODUCTION.md").read_text()
    assert "provisional: 2 of the ≥ 200 trials it needs" in text  # the crossing panel: 200


def test_the_figure_draws_a_protocol_missing_from_a_panel_and_splits_its_parameters(
    register_protocol, settings_of
):
    register_protocol(Toy)
    common = ("dataset=point", "dataset.n=400", "options.track=absent", "progress=false")
    settings = []
    for protocol, d, extra in [
        ("grr", 2, ()),
        ("grr", 16, ()),
        ("toy", 16, ()),
        ("toy", 16, ("protocol.p=0.3",)),
    ]:
        for epsilon in (1, 3):
            settings += settings_of(
                f"protocol={protocol}",
                f"epsilon={epsilon}",
                f"options.domain_size={d}",
                *common,
                *extra,
                "n_trials=3",
                "n_jobs=1",
                "name=ov",
            )
    report_, store = run_settings(settings)
    table, _ = store.load()
    figure = fig_oracle_variance.draw(table)  # Toy has no d = 2 panel: it is skipped there
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert "Toy (p=default)" in labels and "Toy (p=0.3)" in labels and "GRR" in labels
    left, right = figure.axes[:2]
    assert left.get_title() == "d = 2" and right.get_title() == "d = 16"
    assert len(right.get_lines()) > len(left.get_lines())


def test_a_missing_results_dir_is_one_line(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    assert figures(["--no-run", "--results-dir", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: --results-dir {missing}: no such directory\n"


def test_a_verdict_states_the_trials_it_needs(tmp_path):
    claim = ClaimCheck("src", "paper", "ours", Part("x", 1.0, WithinSE(1.0, 0.1)))
    spec = FigureSpec(
        "oracle_variance", "oracle_variance", lambda t: None, "t", "c", "claim", claims=None
    )
    assert report.paper_trials("oracle_variance") == 50
    assert report.paper_trials("pem_fig2_eps") == 100
    short = report.write_report(
        tmp_path / "R.md", [(spec, report.Judged(claim, 8, 50))], quick=True
    ).read_text()
    assert "| reproduced, provisional: 8 of the ≥ 50 trials it needs |" in short
    assert "**Summary:** 1 claims: 1 reproduced, 0 partly reproduced, 0 differs" in short
    full = report.write_report(
        tmp_path / "F.md", [(spec, report.Judged(claim, 50, 50))], quick=False
    ).read_text()
    assert "| reproduced (≥ 50 trials) |" in full


def test_only_and_real_data_are_custom_runs():
    import argparse

    from experiments.figures.__main__ import custom_reasons
    from experiments.settings import Setting

    def setting(n_trials: int, path: str | None = None) -> Setting:
        config = {"n_trials": n_trials, "dataset": {"name": "kosarak", "path": path}}
        return Setting(config=config, key="k")

    def args(**given) -> argparse.Namespace:
        defaults = {"only": None, "add": [], "set": [], "quick": False, "results_dir": None}
        return argparse.Namespace(**{**defaults, **given})

    assert custom_reasons(args(), {"oracle_variance": [setting(50)]}) == []
    assert custom_reasons(args(only=["x"]), {"oracle_variance": [setting(50)]}) == ["--only"]
    assert custom_reasons(args(), {"oracle_variance": [setting(50, "/d/k.dat")]}) == ["real data"]
    assert custom_reasons(args(), {"oracle_variance": [setting(3)]}) == [
        "trials other than the configs'"
    ]
    assert custom_reasons(args(quick=True), {"oracle_variance": [setting(8)]}) == []
    committed = args(quick=True, results_dir=str(REPO / "results"))
    assert custom_reasons(committed, {"oracle_variance": [setting(8)]}) == ["--quick"]


# ------------------------------------------------------------------ plug-in versions
PLUGIN = '''
"""A plug-in oracle: OUE under another name."""

from dataclasses import dataclass

from ldp.oracles import OUE
from ldp.registry import register


@register(order=76)
@dataclass(frozen=True, kw_only=True)
class Versioned(OUE):
    name = "Versioned"
'''


def _install(site: Path, version: str) -> None:
    for old in site.glob("versioned_ldp-*.dist-info"):
        shutil.rmtree(old)
    info = site / f"versioned_ldp-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: versioned-ldp\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text("[ldp.protocols]\nversioned = versioned_ldp\n")


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    (site / "versioned_ldp.py").write_text(textwrap.dedent(PLUGIN))
    _install(site, "0.1")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_LOADED", False)
    schema._schema_of.cache_clear()
    registry.protocols()
    register_configs()
    yield site
    schema._schema_of.cache_clear()
    ConfigStore.instance().repo["protocol"].pop("versioned.yaml", None)


def test_rows_name_the_plugin_version_and_a_new_version_is_a_new_setting(
    plugin, settings_of, results_dir
):
    args = ("protocol=versioned", *TINY, "n_trials=2", "n_jobs=1")
    (first,) = settings_of(*args)
    run_settings([first])
    table, _ = ResultsStore(results_dir, "custom").load()
    assert set(table["plugin"]) == {"versioned-ldp"} and set(table["plugin_version"]) == {"0.1"}
    assert set(table["ldp_version"]) and table["git_commit"].notna().all()
    (same,) = settings_of(*args)
    assert same.key == first.key
    _install(plugin, "0.2")
    (bumped,) = settings_of(*args)
    assert bumped.key != first.key  # another version: another setting, nothing reused
    report_, _ = run_settings([bumped])
    assert (report_.done_before, report_.ran) == (0, 2)
    table, _ = ResultsStore(results_dir, "custom").load()
    versions = table.groupby("config_hash")["plugin_version"].first()
    assert versions.to_dict() == {first.key: "0.1", bumped.key: "0.2"}
    (builtin,) = settings_of("protocol=oue", *TINY, "n_trials=2", "n_jobs=1")
    run_settings([builtin])
    table, _ = ResultsStore(results_dir, "custom").load()
    assert table.loc[table["protocol.name"] == "OUE", "plugin"].isna().all()


def test_results_of_the_earlier_stream_scheme_are_another_setting(settings_of):
    """The seeding scheme is part of the key: a key computed without it differs."""
    import hashlib
    import json

    from experiments.settings import result_config

    (setting,) = settings_of("protocol=olh", *TINY)
    old = result_config(setting.config)
    old_key = hashlib.sha256(
        json.dumps(old, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:16]
    assert setting.key != old_key


def test_protocol_streams_make_the_protocols_rows_uncorrelated(settings_of, results_dir):
    """OUE and OLH on the same users, 60 trials: their per-trial errors' correlation is
    within 4.5 / sqrt(60) of zero (false alarm ~1e-5); the one shared stream gave +0.68
    (measured over 200 trials), which this bound rejects."""
    settings = []
    for protocol in ("oue", "olh"):
        settings += settings_of(
            f"protocol={protocol}", "epsilon=2", *TINY, "n_trials=60", "n_jobs=1"
        )
    _, store = run_settings(settings)
    table, _ = store.load()
    rows = table[(table["metric"] == "error_n") & table["item"].isna()]
    wide = rows.pivot(index="trial", columns="protocol.name", values="value")
    r = np.corrcoef(wide["OUE"], wide["OLH"])[0, 1]
    assert abs(r) < 4.5 / np.sqrt(60)


def test_a_plugin_oracle_inside_a_heavy_hitter_is_named_and_keyed(plugin, settings_of):
    from experiments.provenance import plugin_of

    args = ("protocol=pem", "protocol.oracle=Versioned", "dataset=exponential", "dataset.n=1000")
    (first,) = settings_of(*args)
    assert plugin_of(first.config["protocol"]) == {
        "plugin": "versioned-ldp",
        "plugin_version": "0.1",
    }
    _install(plugin, "0.3")
    (bumped,) = settings_of(*args)
    assert bumped.key != first.key
    (builtin,) = settings_of("protocol=pem", "dataset=exponential", "dataset.n=1000")
    assert plugin_of(builtin.config["protocol"]) == {"plugin": "", "plugin_version": ""}


def test_the_frontier_names_every_plugin_oracle_it_runs(plugin):
    """The frontier's protocol node names no oracle but runs every registered one."""
    from experiments.provenance import plugin_of
    from experiments.schema import FRONTIER_PROTOCOL

    expected = {"plugin": "versioned-ldp", "plugin_version": "0.1"}
    assert plugin_of(dict(FRONTIER_PROTOCOL)) == expected


def test_the_domain_figure_splits_a_plugins_parameter_values(register_protocol, settings_of):
    from experiments.figures import fig_oracle_domain

    register_protocol(Toy)
    settings = []
    for protocol, extra in [("grr", ()), ("toy", ()), ("toy", ("protocol.p=0.3",))]:
        for d in (8, 16):
            settings += settings_of(
                f"protocol={protocol}",
                f"options.domain_size={d}",
                "dataset=point",
                "dataset.n=400",
                "options.track=absent",
                "options.time_server=true",
                "engine=reports",
                *extra,
                "n_trials=2",
                "n_jobs=1",
                "progress=false",
                "name=dom",
            )
    _, store = run_settings(settings)
    table, _ = store.load()
    figure = fig_oracle_domain.draw(table)
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert {"GRR", "Toy (p=default)", "Toy (p=0.3)"} <= set(labels)
    variance_axis = figure.axes[0]
    styles = [
        line.get_linestyle() for line in variance_axis.get_lines() if line.get_marker() == "None"
    ]
    assert styles.count("--") == 1 and styles.count("-") == 2  # Toy p=0.3 dashed
