"""The sketches' variance claims: the tolerance of a largest gap over many settings."""

from __future__ import annotations

import pytest
from scipy import stats

from experiments.figures import fig_cms
from experiments.run import run_settings

QUIET = ("n_jobs=1", "progress=false")


@pytest.fixture(autouse=True)
def _dataset_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def table(settings_of):
    settings = []
    for epsilon in (1, 3):
        settings += settings_of(
            "experiment=cms_variance",
            "protocol=cms",
            f"epsilon={epsilon}",
            "engine=sampled",
            "n_trials=12",
            *QUIET,
        )
    _, store = run_settings(settings)
    return store.load()[0]


def test_the_tolerance_is_the_bonferroni_bound_of_the_largest_gap(table):
    (claim,) = fig_cms.claims(table)
    bound = stats.t.isf(fig_cms.FAMILY_ALPHA / (2 * 2), df=12 - 1)
    assert "over 2 settings" in claim.ours and f"within {bound:.1f} SE" in claim.tolerance
    assert "Student's t with 11 degrees of freedom" in claim.tolerance
    assert claim.verdict == "reproduced"


def test_a_gap_beyond_the_tolerance_differs(table):
    rows = table[(table["metric"] == fig_cms.METRIC) & table["item"].isna()]
    shifted = table.copy()
    one = rows.index[rows["epsilon"] == 1]
    # a bias of ten standard errors of the mean in one setting
    shifted.loc[one, "value"] += 10 * rows.loc[one, "value"].std() / len(one) ** 0.5
    (claim,) = fig_cms.claims(shifted)
    assert claim.verdict == "differs", claim.ours
