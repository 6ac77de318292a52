"""The harness options of the new oracles: ``postprocess`` (applied to the full domain's
estimates, keyed) and ``time_server`` (the aggregator's seconds, real reports only)."""

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


def test_time_server_records_the_aggregators_seconds(compose_config) -> None:
    overrides = ("protocol=hr", "dataset=point", "dataset.n=400", "options.domain_size=8")
    overrides += ("options.track=absent", "progress=false", "options.time_server=true")
    real = make_setting(compose_config(*overrides, "engine=reports")).config
    timed = [m for m in run_trial(real, 0).measurements if m.metric == "server_seconds"]
    assert len(timed) == 1 and 0 < timed[0].value < 60
    sampled = make_setting(compose_config(*overrides, "engine=sampled")).config
    assert not [m for m in run_trial(sampled, 0).measurements if m.metric == "server_seconds"]
