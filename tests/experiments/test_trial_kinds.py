"""The two trial kinds record the right metrics, and with the same streams the same numbers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from experiments.kinds.oracle import adversary_rows
from experiments.settings import make_setting
from experiments.trials import run_trial
from ldp.adversary import adversary_success
from ldp.heavy_hitters.base import HeavyHitterResult
from ldp.oracles import ORACLES
from ldp.theory.shuffle import shuffle_epsilon

from .conftest import TINY


def test_an_oracle_trial_records_error_and_analytical_variance(compose_config):
    config = make_setting(compose_config("protocol=grr", "epsilon=1", *TINY)).config
    result = run_trial(config, 0)
    metrics = {m.metric: m for m in result.measurements}
    assert set(metrics) == {
        "sq_error_n",
        "error_n",
        "shuffle_epsilon",
        "adversary_success",
        "adversary_baseline",
    }
    # every user holds value 0 (dataset point): the prior alone names it, exactly
    assert metrics["adversary_success"].value == metrics["adversary_success"].analytic == 1.0
    shuffled = metrics["shuffle_epsilon"]  # central ε of the 400 reports after a shuffle
    assert shuffled.analytic == 1.0
    assert shuffled.value == shuffle_epsilon(
        1.0, 400, 1e-6, "best", domain_size=config["options"]["domain_size"]
    )
    e = np.exp(1.0)
    assert metrics["sq_error_n"].analytic == pytest.approx((8 - 2 + e) / (e - 1) ** 2)
    assert result.n == 400 and result.data_source == "point" and result.wall_time > 0
    again = run_trial(config, 0)
    assert [m.value for m in again.measurements] == [m.value for m in result.measurements]
    assert run_trial(config, 1).measurements[0].value != metrics["sq_error_n"].value


def test_per_value_rows_name_their_value(compose_config):
    config = make_setting(
        compose_config("protocol=oue", *TINY, "options.per_value=true", "engine=reports")
    ).config
    rows = [m for m in run_trial(config, 0).measurements if m.item is not None]
    assert [m.item for m in rows] == list(range(2, 9))  # values 1..7 (absent), 1-based ranks


@dataclass(frozen=True, kw_only=True)
class StandIn:
    """A heavy-hitter protocol with a known answer: finds the 2nd and 5th values, and junk."""

    epsilon: float
    k: int
    m: int

    def run(self, dataset, rng, engine="sampled"):
        top, counts = dataset.top_k(5, with_counts=True)
        junk = np.setdiff1d(np.arange(2**12, dtype=np.uint64), dataset.histogram()[0])[:2]
        found = np.concatenate([top[[1, 4]], junk])
        estimates = np.concatenate([counts[[1, 4]] + 10.0, [0.0, 0.0]])
        return HeavyHitterResult(found, estimates, {"groups": 3, "note": "text is skipped"})


def test_a_heavy_hitter_trial_records_f1_ncr_and_squared_error(compose_config, register_protocol):
    register_protocol(StandIn)
    config = make_setting(
        compose_config(
            "protocol=standin",
            "dataset=zipf",
            "dataset.n=3000",
            "dataset.m=12",
            "k=4",
            "options.per_value=true",
            "progress=false",
        )
    ).config
    result = run_trial(config, 0)
    values = {(m.metric, m.item): m.value for m in result.measurements}
    assert values["f1", None] == pytest.approx(2 * 0.25 * 0.25 / 0.5)  # 1 hit of 4 and 4
    assert values["ncr", None] == pytest.approx(3 / 10)  # the 2nd of k = 4 scores 3
    assert values["sq_error", None] == pytest.approx(100.0)
    assert values["diag.groups", None] == 3.0 and ("diag.note", None) not in values
    assert [values["identified", j] for j in range(1, 5)] == [0.0, 1.0, 0.0, 0.0]
    assert values["frequency", 1] > values["frequency", 4] > 0
    assert result.data_source == "synthetic"


def test_a_real_pem_trial_runs(compose_config):
    config = make_setting(
        compose_config(
            "protocol=pem", "dataset=zipf", "dataset.n=5000", "dataset.m=12", "k=4", "epsilon=4"
        )
    ).config
    values = {m.metric: m.value for m in run_trial(config, 0).measurements}
    assert 0 <= values["f1"] <= 1 and 0 <= values["ncr"] <= 1
    assert values["n_true"] == 4


def test_a_mean_trial_records_error_and_its_closed_forms(compose_config):
    """A mean protocol on the bounded data: n·err² and the per-report variance beside
    Σ Var[t*|t_i]/n; the same seed gives the same rows; sampled records no per-report
    variance."""
    from ldp.numeric import PM

    overrides = ("protocol=pm", "dataset=bounded", "dataset.n=300", "dataset.law=ends")
    config = make_setting(compose_config(*overrides, "epsilon=2", "engine=reports")).config
    result = run_trial(config, 0)
    metrics = {m.metric: m for m in result.measurements}
    assert set(metrics) == {"sq_error_n", "error", "report_variance"}
    assert metrics["sq_error_n"].analytic == pytest.approx(
        float(PM(epsilon=2.0).paper_variance(1.0))
    )
    assert result.n == 300 and result.data_source == "synthetic"
    again = run_trial(config, 0)
    assert [m.value for m in again.measurements] == [m.value for m in result.measurements]
    sampled = make_setting(compose_config(*overrides, "engine=sampled")).config
    assert {m.metric for m in run_trial(sampled, 0).measurements} == {"sq_error_n", "error"}
    duchi = make_setting(compose_config("protocol=duchi", *overrides[1:], "engine=sampled")).config
    assert {m.metric for m in run_trial(duchi, 0).measurements} == {"sq_error_n", "error"}


def test_adversary_rows_exact_empirical_or_none():
    """Exact: the value beside itself; empirical: NaN analytic and a standard-error row
    (the same number every trial); neither: no row."""
    counts = np.array([50, 30, 10, 5, 3, 2, 0, 0])
    for name, cls in ORACLES.items():
        try:
            oracle = cls(epsilon=1.0, domain_size=8)
        except ValueError:
            continue
        rows = {m.metric: m for m in adversary_rows(oracle, counts, ".x")}
        assert rows == {m.metric: m for m in adversary_rows(oracle, counts, ".x")}, name
        if not rows:
            continue
        found = rows["adversary_success.x"]
        if np.isnan(found.analytic):
            assert 0 < rows["adversary_success_se.x"].value < 0.05, name
        else:
            assert found.value == found.analytic == adversary_success(oracle, counts).value
        assert rows["adversary_baseline.x"].value == 0.5, name  # π_max = 50/100
        assert found.value >= 0.5 - 0.05, name  # never far below the blind guess


def test_multiple_questions_record_each_approach_adversary(compose_config):
    """On Zipf data: the split's report (ε/2) gives less away than the partition's (ε)."""
    skewed = ("dataset=zipf", "dataset.n=2000", "dataset.support=8", "options.domain_size=8")
    config = make_setting(
        compose_config(
            "protocol=olh", "protocol.kind=multiple_questions", "epsilon=4", *skewed,
            "options.track=top", "progress=false",
        )
    ).config  # fmt: skip
    metrics = {m.metric: m for m in run_trial(config, 0).measurements}
    split, partition = metrics["adversary_success.split"], metrics["adversary_success.partition"]
    assert split.value == split.analytic and partition.value == partition.analytic
    assert split.value < partition.value < 1


def test_a_heavy_hitter_trial_records_the_refined_model_once_with_options_model(compose_config):
    """``options.model``: trial 0 records Eq. (4)'s scores with the protocol's refined
    identification model on the trial's own data, the numbers the theory gives; the other
    trials, and a run without the option, record none."""
    from experiments.population import load_dataset
    from ldp.heavy_hitters import PEM
    from ldp.theory import pem_refined

    overrides = ("protocol=pem", "dataset=zipf", "dataset.n=20000", "dataset.m=16")
    overrides += ("dataset.support=4096", "k=8", "protocol.etas=[6,6]", "protocol.gamma=4")
    config = make_setting(compose_config(*overrides, "options.model=true")).config
    first = {m.metric: m.value for m in run_trial(config, 0).measurements}
    data = load_dataset(config["dataset"])
    pem = PEM(epsilon=config["epsilon"], k=8, m=16, etas=(6, 6), gamma=4)
    for goal in ("f1", "ncr"):
        values, counts = data.histogram()
        expected = pem_refined.refined_utility(
            values, counts, 16, config["epsilon"], pem.config, 8, goal
        )
        assert first[f"refined.{goal}"] == pytest.approx(expected, rel=1e-12)
    assert 0 < first["refined.ncr"] < 1
    assert not any(m.metric.startswith("refined.") for m in run_trial(config, 1).measurements)
    plain = make_setting(compose_config(*overrides)).config
    assert not any(m.metric.startswith("refined.") for m in run_trial(plain, 0).measurements)


def test_pem_declines_a_model_for_an_oracle_the_model_does_not_describe():
    from ldp.heavy_hitters import PEM

    values, counts = np.arange(40), np.arange(40, 0, -1)
    assert PEM(epsilon=2.0, k=4, m=8, oracle="GRR").identification_model(values, counts) is None
    found = PEM(epsilon=2.0, k=4, m=8).identification_model(values, counts, refined=False)
    assert found.shape == (4,) and np.all((0 <= found) & (found <= 1))
