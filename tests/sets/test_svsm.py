"""SVSM: the three phases split the users, pick ℓ by the percentile rule, find the top-k;
both engines draw the same law."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import metrics, registry
from ldp.sets import SVSM, as_sets
from ldp.sets.svsm import SVSM_PHASES, length_percentile
from ldp.validation import ParameterError

D = 40


def _rows(n: int, seed: int) -> np.ndarray:
    """Items 0..5 held by 45%..20% of users each, the rest rare; sizes up to 8."""
    rng = np.random.default_rng(seed)
    heavy = np.linspace(0.45, 0.2, 6)
    rows = np.full((n, 8), -1)
    for user in range(n):
        chosen = np.flatnonzero(rng.random(6) < heavy)
        extra = rng.choice(np.arange(6, D), rng.integers(0, 3), replace=False)
        items = np.sort(np.r_[chosen, extra])
        rows[user, : items.size] = items
    return rows


ROWS = _rows(6000, 0)


def test_length_percentile() -> None:
    # lengths 0..4 estimated as 50, 10, 60, 20, 10: shares of 1.. are 0.1, 0.7, 0.9, 1.0
    assert length_percentile(np.array([50, 10, 60, 20, 10.0]), 0.9, 30) == 3
    assert length_percentile(np.array([50, 10, 60, 20, 10.0]), 0.7, 30) == 2
    assert length_percentile(np.array([50, 10, 60, 20, 10.0]), 0.9, 2) == 2
    assert length_percentile(np.array([5, -3, -1.0]), 0.9, 30) == 1
    assert length_percentile(np.array([0, -5, 10, -2.0]), 0.9, 30) == 2


def test_every_user_is_in_exactly_one_phase() -> None:
    groups = SVSM(epsilon=1.0, domain_size=D).groups(1001, np.random.default_rng(0))
    joined = np.sort(np.concatenate(groups))
    assert np.array_equal(joined, np.arange(1001))
    assert [g.size for g in groups] == [400, 100, 501]
    assert len(groups) == len(SVSM_PHASES)


@pytest.mark.parametrize("engine", ["reports", "sampled"])
def test_finds_the_heavy_items(engine: str) -> None:
    result = SVSM(epsilon=4.0, domain_size=D).top_items(
        ROWS, 6, np.random.default_rng(3), engine=engine
    )
    truth = np.argsort(-np.bincount(as_sets(ROWS, D)[1], minlength=D), kind="stable")[:6]
    assert metrics.f1(truth, result.items) == 1.0
    assert np.all(np.diff(result.estimates) <= 0)


@pytest.mark.slow
def test_both_engines_draw_the_same_estimates() -> None:
    """40 runs per engine at ε = 2: the mean and variance of the estimate of each of the
    three heaviest items agree (Welch t and F tests at 0.001 over 6 statistics); a planted
    sampled engine that skips the division by the percentile fails the t test."""
    svsm = SVSM(epsilon=2.0, domain_size=D)

    def estimates(engine: str, seed: int, planted: float = 1.0) -> np.ndarray:
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(40):
            result = svsm.top_items(ROWS, 6, rng, engine=engine)
            found = dict(zip(result.items.tolist(), result.estimates.tolist(), strict=True))
            out.append([found.get(item, np.nan) * planted for item in (0, 1, 2)])
        return np.array(out)

    real, sampled = estimates("reports", 1), estimates("sampled", 2)
    assert not np.isnan(real).any() and not np.isnan(sampled).any()
    alpha = 0.001 / 6
    for j in range(3):
        assert stats.ttest_ind(real[:, j], sampled[:, j], equal_var=False).pvalue > alpha
        f = real[:, j].var(ddof=1) / sampled[:, j].var(ddof=1)
        assert 2 * min(stats.f.cdf(f, 39, 39), stats.f.sf(f, 39, 39)) > alpha
    planted = estimates("sampled", 2, planted=svsm.percentile)
    assert (
        min(stats.ttest_ind(real[:, j], planted[:, j], equal_var=False).pvalue for j in range(3))
        < alpha
    )


def test_registered_as_a_set_protocol() -> None:
    assert registry.get("SVSM").kind == "set"
    assert [p.name for p in registry.parameters(SVSM)] == ["percentile", "max_ell"]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"percentile": 0.0}, "percentile"),
        ({"percentile": 1.5}, "percentile"),
        ({"max_ell": 0}, "max_ell"),
    ],
)
def test_bad_parameters(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError) as error:
        SVSM(epsilon=1.0, domain_size=D, **kwargs)
    assert error.value.name == name


def test_bad_k_and_engine() -> None:
    svsm = SVSM(epsilon=1.0, domain_size=D)
    with pytest.raises(ParameterError, match="k"):
        svsm.top_items(ROWS, 0, np.random.default_rng(0))
    with pytest.raises(ParameterError, match="engine"):
        svsm.top_items(ROWS, 3, np.random.default_rng(0), engine="fast")
