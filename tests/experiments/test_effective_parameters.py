"""Every row records the protocol's effective parameters: its constructor state after the
defaults and the derived values (g, n_hint, PEM's shape, RAPPOR's f...), never a blank."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hydra import initialize_config_dir

from experiments.execute import run_batch
from experiments.provenance import provenance
from experiments.run import CONF_DIR
from experiments.schema import register_configs
from experiments.settings import expand
from experiments.store import ResultsStore
from ldp import registry

#: Small data per kind, so that one trial of each protocol takes well under a second.
SMALL = {
    "oracle": ("dataset=point", "dataset.n=400", "options.domain_size=8", "options.track=absent"),
    "heavy_hitter": ("dataset.n=2000", "k=4", "dataset.m=16"),
    "mean": ("dataset=bounded", "dataset.n=400"),
    "set": ("dataset=planted", "dataset.n=400", "dataset.domain_size=64", "k=4"),
}


def _one_trial(results_dir, name: str, *extra: str):
    register_configs()
    kind = registry.get(name).kind
    overrides = [f"results_dir={results_dir}", f"protocol={name.lower()}", *SMALL[kind], *extra]
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        (setting,) = expand("config", overrides)
    key, trials, rows = run_batch(setting, (0,), "probe", provenance())
    return setting, key, trials, rows


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


@pytest.mark.parametrize("name", sorted(registry.protocols()))
def test_every_constructor_parameter_is_recorded_at_the_default_config(name, tmp_path):
    from experiments.build import build_protocol

    setting, *_, rows = _one_trial(tmp_path, name)
    row = dict(zip(rows.columns, rows.values[0], strict=True))
    cls = registry.get(name).cls
    for spec in dataclasses.fields(cls):
        if not spec.init:
            continue
        value = row.get(f"effective.{spec.name}")
        assert not _missing(value), f"{name}.{spec.name} not recorded"
    # the configured parameters stay as configured: a null is still "the class's default"
    for column, configured in setting.params.items():
        assert _missing(row[column]) == _missing(configured)
    if registry.get(name).kind == "oracle":  # "None" only where the protocol holds None
        oracle = build_protocol(setting.config["protocol"], 1.0, domain_size=8)
        for spec in dataclasses.fields(oracle):
            if spec.init and row[f"effective.{spec.name}"] == "None":
                assert getattr(oracle, spec.name) is None


def test_derived_values_are_the_ones_the_protocol_computed(tmp_path):
    olh = _row(tmp_path, "OLH", "epsilon=2")
    assert olh["protocol.g"] is None and olh["effective.g"] == math.ceil(
        math.exp(2) + 1
    )  # ⌈e^ε + 1⌉
    pem = _row(tmp_path, "PEM")
    assert pem["effective.n_hint"] == 2000 == pem["n"]  # planned for the trial's users
    assert pem["effective.gamma"] != "None" and pem["effective.etas"].startswith("[")
    assert pem["effective.threshold"] == "None"  # top-k: None is the effective value
    rappor = _row(tmp_path, "RAPPOR")
    assert 0 < rappor["effective.f"] < 1  # solved from epsilon
    treehist = _row(tmp_path, "TreeHist")
    assert treehist["effective.z"] > 0 and treehist["effective.width"] == 8  # 2 k


def _row(results_dir, name, *extra) -> dict:
    *_, rows = _one_trial(results_dir, name, *extra)
    return dict(zip(rows.columns, rows.values[0], strict=True))


def test_effective_parameters_survive_the_store(tmp_path):
    setting, key, trials, rows = _one_trial(tmp_path, "PEM")
    store = ResultsStore(tmp_path, "probe")
    store.write_part(key, trials, rows)
    table, corrupt = store.load()
    assert not corrupt
    first = table.iloc[0]
    assert first["effective.threshold"] == "None" and first["effective.n_hint"] == 2000
    assert math.isnan(first["protocol.threshold"])  # a configured null reads as missing
