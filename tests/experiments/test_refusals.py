"""Settings refused at the door: a name that would leave ``results_dir``, and sizes that
would not fit the memory budget, each stopped with one line naming its field before any
directory is made, data set built or trial run."""

from __future__ import annotations

import pytest

from experiments import preflight
from experiments.names import plain_name
from experiments.preflight import check_cost
from experiments.run import prepare
from experiments.schema import ConfigError
from experiments.store import ResultsStore
from ldp import budget

from .conftest import run_cli


def config(n_trials=10, options=None, **dataset):
    return {
        "n_trials": n_trials,
        "dataset": {"name": "zipf", **dataset},
        "options": {"domain_size": None, **(options or {})},
    }


@pytest.mark.parametrize("name", ["../../etc", "..", ".hidden", "a/b", "", "x" * 201])
def test_a_name_that_leaves_the_results_directory_is_refused(name, tmp_path):
    with pytest.raises(ValueError, match="^name: must be a plain directory name"):
        plain_name(name)
    with pytest.raises(ValueError, match="plain directory name"):
        ResultsStore(tmp_path, name)
    with pytest.raises(ConfigError, match="^name: must be a plain directory name"):
        prepare([f"name={name}"] if name else ["name=''"])


def test_plain_names_pass():
    for name in ("pem_fig5", "custom", "a.b-c_1", "x" * 200):
        assert plain_name(name) == name


def test_the_command_creates_nothing_outside_results_dir(tmp_path):
    results = tmp_path / "a" / "results"
    done = run_cli("protocol=grr", "name=../../escape", f"results_dir={results}")
    assert done.returncode == 2 and done.stderr.startswith("error: name: must be a plain")
    assert list(tmp_path.iterdir()) == []  # not even Hydra's run folder


@pytest.mark.parametrize(
    ("setting", "field"),
    [
        (config(n_trials=10**10), "n_trials"),
        (config(n=10**10), "dataset.n"),
        (config(n=10**9), "dataset.n"),
        (config(support=10**12), "dataset.support"),
        (config(options={"domain_size": 2**40}), "options.domain_size"),
    ],
)
def test_a_setting_beyond_the_memory_budget_is_refused_naming_its_field(setting, field):
    with pytest.raises(ConfigError) as caught:
        check_cost([setting])
    text = str(caught.value)
    assert text.startswith(f"{field}: must be <= ") and "memory budget" in text
    assert "\n" not in text and "LDP_MEMORY_BYTES" in text


def test_the_budget_is_the_users_to_raise_and_the_edge_is_exact():
    users = budget.current().memory_bytes // preflight.USER_BYTES
    support = budget.current().memory_bytes // preflight.SUPPORT_BYTES
    check_cost([config(n=users, support=support, options={"domain_size": users})])
    with pytest.raises(ConfigError, match="^dataset.support: "):
        check_cost([config(support=support + 1)])
    with pytest.raises(ConfigError, match="^dataset.n: "):
        check_cost([config(n=users + 1)])
    with budget.limits(memory_bytes=64 * 2**30):
        check_cost([config(n=10**9)])  # 32 GB: within a raised budget
    # the trials of every setting add up: many settings of few trials each
    with pytest.raises(ConfigError, match="^n_trials: "):
        check_cost([config(n_trials=2**20)] * 5)


def test_limits_md_shows_the_refusal_and_the_largest_values_the_code_computes():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "limits.md").read_text()
    with pytest.raises(ConfigError) as caught:
        check_cost([config(n=10**9)])
    shown = "error: " + str(caught.value)
    documented = text.split("error: dataset.n", 1)[1].split("raise it with", 1)[0]
    assert shown.startswith("error: dataset.n" + " ".join(documented.split()))
    limit = budget.DEFAULT_MEMORY_BYTES
    for field, unit in (
        ("n_trials", preflight.TRIAL_BYTES),
        ("dataset.n", preflight.USER_BYTES),
        ("dataset.support", preflight.SUPPORT_BYTES),
        ("options.domain_size", preflight.DOMAIN_BYTES),
    ):
        row = next(line for line in text.splitlines() if line.startswith(f"| `{field}`"))
        assert row.rstrip(" |").endswith(f"{limit // unit:,}"), row
