"""Heavy-hitter trials record the adversary's success and the blind guess beside it."""

from __future__ import annotations

import json

import numpy as np

from experiments.build import cached_heavy_hitter
from experiments.population import load_dataset
from experiments.settings import make_setting
from experiments.trials import run_trial
from ldp.adversary import heavy_hitter_success, ldp_bound


def test_a_pem_trial_records_the_adversary_once_per_setting(compose_config):
    overrides = ("protocol=pem", "dataset=zipf", "dataset.n=5000", "dataset.m=12", "k=4")
    config = make_setting(compose_config(*overrides, "epsilon=2", "progress=false")).config
    rows = {m.metric: m for m in run_trial(config, 0).measurements}
    data = load_dataset(config["dataset"])
    values, counts = data.histogram()
    built = {key: config[key] for key in ("protocol", "epsilon", "k")}
    pem = cached_heavy_hitter(json.dumps(built, sort_keys=True), data.m, data.n)
    expected = heavy_hitter_success(pem, values, counts).value
    success, baseline = rows["adversary_success"], rows["adversary_baseline"]
    assert success.value == success.analytic == expected  # exact: beside itself
    assert baseline.value == counts.max() / data.n
    assert baseline.value < success.value < ldp_bound(2.0, counts / counts.sum())
    assert "adversary_success_se" not in rows
    again = {m.metric: m.value for m in run_trial(config, 1).measurements}
    assert again["adversary_success"] == success.value  # the same number every trial


def test_an_spm_trial_records_an_empirical_adversary(compose_config):
    """SPM's pair groups send two segment reports and π(v): estimated, with its standard
    error, and the same number in every trial of the setting."""
    overrides = ("protocol=spm_improved", "dataset=zipf", "dataset.n=5000", "dataset.m=12")
    config = make_setting(compose_config(*overrides, "k=4", "epsilon=2", "progress=false")).config
    rows = {m.metric: m for m in run_trial(config, 0).measurements}
    data = load_dataset(config["dataset"])
    _, counts = data.histogram()
    success, error = rows["adversary_success"], rows["adversary_success_se"]
    assert np.isnan(success.analytic) and 0 < error.value < 0.02
    baseline = rows["adversary_baseline"].value
    assert baseline == counts.max() / data.n
    bound = ldp_bound(2.0, counts / counts.sum())
    assert baseline - 4 * error.value < success.value < bound + 4 * error.value
    again = {m.metric: m.value for m in run_trial(config, 1).measurements}
    assert again["adversary_success"] == success.value


def test_mcm_and_sfp_trials_record_the_adversary_given_one_public_hash(compose_config):
    """MCM and SFP hash through a public function drawn per run: their rows are given one
    draw, the same in every trial of the setting; partitioned MCM's exact (beside itself),
    original SFP's (π(v) beside the puzzle key) estimated with a standard error."""
    base = ("dataset=zipf", "dataset.n=5000", "dataset.m=12", "k=4", "epsilon=2")
    for protocol in ("mcm_partitioned", "sfp_original"):
        config = make_setting(compose_config(f"protocol={protocol}", *base, "progress=false"))
        rows = {m.metric: m for m in run_trial(config.config, 0).measurements}
        data = load_dataset(config.config["dataset"])
        _, counts = data.histogram()
        success = rows["adversary_success"]
        bound = ldp_bound(2.0, counts / counts.sum())
        spread = 4 * (rows["adversary_success_se"].value if "adversary_success_se" in rows else 0)
        assert counts.max() / data.n - spread < success.value < bound + spread, protocol
        assert (success.analytic == success.value) == (protocol == "mcm_partitioned")
        again = {m.metric: m.value for m in run_trial(config.config, 1).measurements}
        assert again["adversary_success"] == success.value
