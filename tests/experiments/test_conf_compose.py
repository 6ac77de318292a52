"""Every config composes and checks; bad values fail early with one line naming the field."""

from __future__ import annotations

import pytest

from experiments.check import check_config
from experiments.preflight import preflight
from experiments.run import CONF_DIR
from experiments.schema import ConfigError
from experiments.settings import make_setting
from ldp import registry

from .conftest import run_cli

#: protocol=<choice>: every registered protocol by its name in lower case, and the presets
PRESETS = sorted(p.stem for p in (CONF_DIR / "protocol").glob("*.yaml"))
PROTOCOLS = sorted({name.lower() for name in registry.protocols()} | set(PRESETS))
DATASETS = sorted(p.stem for p in (CONF_DIR / "dataset").glob("*.yaml"))
EXPERIMENTS = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))


def test_the_groups_are_complete():
    for name in (
        "grr",
        "sue",
        "oue",
        "she",
        "the",
        "blh",
        "olh",
        "pem",
        "spm",
        "mcm",
        "spm_original",
        "spm_improved",
        "mcm_original",
        "mcm_improved",
        "pem_threshold",
        "spm_threshold",
        "mcm_threshold",
        "mcm_partitioned",
        "spm_partitioned",
        "mcm_partitioned_threshold",
        "spm_partitioned_threshold",
        "mcm_block",
        "mcm_block_partitioned",
        "mcm_sqrt_n",
        "pem_paper",
    ):
        assert name in PROTOCOLS
    for name in ("zipf", "zipf20", "exponential", "kosarak", "aol", "url", "point"):
        assert name in DATASETS
    assert "oracle_variance" in EXPERIMENTS


def test_the_groups_list_choices_only(compose_config):
    compose_config()  # registers the schemas
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        protocols = loader.get_group_options("protocol")
        datasets = loader.get_group_options("dataset")
    assert sorted(protocols) == PROTOCOLS
    assert sorted(datasets) == DATASETS


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_protocol_composes(compose_config, protocol):
    means = {name.lower() for name in registry.protocols("mean")}
    sets = {name.lower() for name in registry.protocols("set")} | {"psfo_padded", "split_padded"}
    # mean protocols take real values, set protocols item sets
    data = "bounded" if protocol in means else "planted" if protocol in sets else "exponential"
    config = check_config(compose_config(f"protocol={protocol}", f"dataset={data}"))
    entry = registry.get(config["protocol"]["name"])
    assert config["protocol"]["kind"] == entry.kind
    assert config["protocol"]["label"]
    if protocol == entry.name.lower():  # the generated choice: the class's own parameters
        own = {spec.name for spec in registry.parameters(entry.cls)}
        assert set(config["protocol"]) == own | {"name", "kind", "label"}


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_dataset_composes(compose_config, dataset):
    # real values: a mean protocol; item sets: a set protocol
    protocol = {"bounded": "duchi", "kosarak_sets": "psfo", "planted": "psfo"}.get(dataset, "grr")
    config = check_config(compose_config(f"dataset={dataset}", f"protocol={protocol}"))
    assert config["dataset"]["name"] == {"zipf20": "zipf"}.get(dataset, dataset)
    if dataset in ("kosarak", "aol", "url", "kosarak_sets"):
        assert config["dataset"]["path"] is None  # the surrogate unless a file is given


def test_zipf20_drops_the_top_20(compose_config):
    assert check_config(compose_config("dataset=zipf20"))["dataset"]["drop_top"] == 20


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_experiment_expands(settings_of, experiment):
    settings = settings_of(f"experiment={experiment}")
    assert settings and len({s.key for s in settings}) == len(settings)
    assert all(s.config["name"] == experiment for s in settings)


def test_oracle_variance_grid(settings_of):
    settings = settings_of("experiment=oracle_variance")
    assert len(settings) == 10 * 10 * 2 * 2
    protocols = {s.config["protocol"]["name"] for s in settings}
    assert protocols == {"GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH", "HR", "HM", "SS"}
    assert {s.config["options"]["domain_size"] for s in settings} == {2, 1024}
    assert {s.config["engine"] for s in settings} == {"sampled", "reports"}
    assert sorted({s.config["epsilon"] for s in settings})[::9] == [0.5, 5.0]


@pytest.mark.parametrize(
    ("launcher", "target"),
    [
        ("local", "BasicLauncher"),
        ("parallel", "JoblibLauncher"),
        ("slurm", "SlurmLauncher"),
        ("joblib", "JoblibLauncher"),
        ("submitit_slurm", "SlurmLauncher"),
    ],
)
def test_launcher_presets_compose(compose_config, launcher, target):
    cfg = compose_config(f"hydra/launcher={launcher}", hydra=True)
    assert cfg.hydra.launcher._target_.endswith(target)
    if launcher == "slurm":
        assert cfg.hydra.launcher.cpus_per_task == 8
        assert cfg.hydra.launcher.max_num_timeout == 0


BAD = [
    (("epsilon=-1",), r"^epsilon: must be > 0, got -1\.0$"),
    (("epsilon=0",), r"^epsilon: must be > 0"),
    (("k=0",), r"^k: must be >= 1, got 0$"),
    (("n_trials=0",), r"^n_trials: must be >= 1"),
    (("n_jobs=0",), r"^n_jobs: "),
    (("seed=-3",), r"^seed: must be >= 0"),
    (("engine=fast",), r"^engine: must be one of sampled, reports"),
    (("format=xlsx",), r"^format: must be one of"),
    (("protocol=olh", "protocol.g=1"), r"^protocol\.g: must be >= 2"),
    (("protocol=the", "protocol.theta=1.5"), r"^protocol\.theta: must lie in \(0, 1\]"),
    (("protocol=pem", "protocol.eta=70"), r"^protocol\.eta: must be <= .*m = 64\)$"),
    (("protocol=pem", "dataset=aol", "protocol.eta=47"), r"^protocol\.eta: .*m = 48\)$"),
    (
        ("protocol=pem", "protocol.etas=[6,6]"),
        r"^protocol: PEM rejects this setting: gamma \+ sum\(etas\)",
    ),
    (("protocol=pem", "k=0"), r"^k: must be >= 1"),
    (("protocol=mcm", "protocol.channels=lots"), r"^protocol\.channels: must be an integer"),
    (("protocol=spm", "protocol.budget=half"), r"^protocol\.budget: must be one of"),
    (("protocol=spm", "protocol.oracle=XYZ"), r"^protocol\.oracle: unknown oracle 'XYZ'"),
    (("protocol=pem", "dataset=point"), r"^dataset\.name: 'point' serves oracle trials only"),
    (("dataset=kosarak", "dataset.path=/no/such/kosarak.dat"), r"^dataset\.path: no such file"),
    (("dataset=zipf", "dataset.s=0"), r"^dataset\.s: must be > 0"),
    (("dataset=exponential", "dataset.scale=1.5"), r"^dataset\.scale: must be < 1"),
    (("protocol.name=XYZ",), r"^protocol\.name: unknown protocol 'XYZ'"),
]


@pytest.mark.parametrize(("overrides", "message"), BAD, ids=[" ".join(o) for o, _ in BAD])
def test_bad_values_fail_with_one_line_naming_the_field(settings_of, overrides, message):
    with pytest.raises(ConfigError, match=message) as caught:  # as the app checks: then preflight
        preflight([setting.config for setting in settings_of(*overrides)])
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (("epsilon=abc",), "epsilon"),
        (("protocol=nonexistent",), "protocol"),
        (("experiment=nonexistent",), "experiment"),
    ],
)
def test_type_errors_and_unknown_choices_name_the_field(settings_of, overrides, field):
    with pytest.raises(ConfigError) as caught:
        settings_of(*overrides)
    assert field in str(caught.value) and "\n" not in str(caught.value)


def test_the_library_checks_run_before_any_trial(compose_config):
    cfg = compose_config(
        "protocol=pem", "dataset=exponential", "protocol.eta=30", "protocol.query_limit=1000"
    )
    with pytest.raises(ConfigError, match=r"^protocol\.query_limit: 1000 is below"):
        preflight([make_setting(cfg).config])


def test_a_malformed_data_file_stops_preflight_with_its_line(compose_config, tmp_path):
    bad = tmp_path / "kosarak.dat"
    bad.write_bytes(b"1 2 3\n4 x 5\n")
    cfg = compose_config("protocol=pem", "dataset=kosarak", f"dataset.path={bad}")
    with pytest.raises(ConfigError, match=rf"^dataset\.path: {bad}, line 2: not a list of") as e:
        preflight([make_setting(cfg).config])
    assert "\n" not in str(e.value)


def test_the_app_refuses_a_bad_value_before_running(results_dir):
    done = run_cli("epsilon=-1", "dataset=point", f"results_dir={results_dir}")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "error: epsilon: must be > 0, got -1.0"
    assert not (results_dir / "custom" / "parts").exists()
