"""The harness's ``options.postprocess``: applied to the full domain's estimates, keyed."""

from __future__ import annotations

import pytest

from experiments.settings import make_setting
from experiments.trials import run_trial


def test_the_harness_applies_it_to_the_full_domain(compose_config) -> None:
    """postprocess=norm_sub: the tracked estimates are the projected ones (non-negative)."""
    overrides = ("protocol=grr", "dataset=point", "dataset.n=400", "options.domain_size=8")
    overrides += ("options.track=all", "options.per_value=true", "progress=false")
    plain = make_setting(compose_config(*overrides)).config
    post = make_setting(compose_config(*overrides, "options.postprocess=norm_sub")).config
    assert (
        make_setting(compose_config(*overrides)).key
        != make_setting(compose_config(*overrides, "options.postprocess=norm_sub")).key
    )
    rows = [m for m in run_trial(post, 0).measurements if m.metric == "estimate_n"]
    assert len(rows) == 8 and min(m.value for m in rows) >= 0
    assert sum(m.value for m in rows) == pytest.approx(1.0)
    raw = [m for m in run_trial(plain, 0).measurements if m.metric == "estimate_n"]
    assert sum(m.value for m in raw) != pytest.approx(1.0) or min(m.value for m in raw) < 0
