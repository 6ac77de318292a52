"""Settings: the key ignores run-only fields; the in-process grid equals Hydra's multirun."""

from __future__ import annotations

from experiments.settings import grid_points, make_setting


def test_the_key_ignores_how_a_run_goes(compose_config):
    base = make_setting(compose_config("epsilon=2"))
    other = make_setting(
        compose_config(
            "epsilon=2",
            "n_jobs=2",
            "n_trials=99",
            "progress=false",
            "results_dir=/elsewhere",
            "batch_size=3",
            "format=csv",
            "name=renamed",
        )
    )
    assert other.key == base.key
    assert make_setting(compose_config("epsilon=2.5")).key != base.key
    assert make_setting(compose_config("epsilon=2", "seed=1")).key != base.key
    assert make_setting(compose_config("epsilon=2", "engine=reports")).key != base.key


def test_labels_are_columns_but_not_part_of_the_key(compose_config):
    base = make_setting(compose_config("protocol=the"))
    relabelled = make_setting(compose_config("protocol=the", "protocol.label=other"))
    assert relabelled.key == base.key
    assert relabelled.params["protocol.label"] == "other"


def test_grid_points_follow_hydra_sweep_syntax():
    points = grid_points({"epsilon": "1,2", "engine": "sampled", "k": "range(1,4)"}, [])
    assert len(points) == 2 * 1 * 3
    assert points[0] == ["epsilon=1", "engine=sampled", "k=1"]
    assert grid_points({"epsilon": "1,2"}, ["epsilon=5"]) == []


def test_a_grid_point_is_the_setting_multirun_would_compose(settings_of, compose_config):
    settings = settings_of("experiment=oracle_variance")
    for setting in settings[:2] + settings[137:139] + settings[-2:]:
        direct = make_setting(compose_config("experiment=oracle_variance", *setting.overrides))
        assert direct.key == setting.key
        assert direct.config == setting.config


def test_the_command_line_narrows_the_grid(settings_of):
    settings = settings_of("experiment=oracle_variance", "protocol=olh", "epsilon=1")
    assert len(settings) == 2 * 2  # domain sizes x engines
    assert {s.config["protocol"]["name"] for s in settings} == {"OLH"}
    assert {s.config["epsilon"] for s in settings} == {1.0}
