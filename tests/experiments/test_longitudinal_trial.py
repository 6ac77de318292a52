"""The longitudinal trial kind: per-round errors beside their expectation, the exact
privacy spent beside the memoization bound, and a clear refusal of what it cannot run."""

from __future__ import annotations

import pytest

from experiments.schema import ConfigError
from experiments.settings import make_setting
from experiments.trials import run_trial
from ldp.oracles import LOSUE

from .conftest import TINY

LONGITUDINAL = ("protocol.kind=longitudinal", "engine=reports", "options.rounds=3")


def test_a_longitudinal_trial_records_every_round(compose_config):
    overrides = ("protocol=losue", "epsilon=1", *TINY, *LONGITUDINAL)
    config = make_setting(compose_config(*overrides)).config
    result = run_trial(config, 0)
    oracle = LOSUE(epsilon=1.0, domain_size=8)
    spent = [m for m in result.measurements if m.metric == "epsilon_spent"]
    assert [m.item for m in spent] == [1, 2, 3]
    assert [m.value for m in spent] == [oracle.rounds_epsilon(t) for t in (1, 2, 3)]
    assert [m.analytic for m in spent] == [1.0, 2.0, 2.0]  # ε₁, then ε_∞ = 2 ε₁
    errors = [m for m in result.measurements if m.metric == "sq_error_f"]
    assert [m.item for m in errors] == [1, 2, 3, None]
    # all 400 users hold value 0: the mean over the 8 values of Var/n² is known exactly
    expected = (oracle.variance(400, 400) + 7 * oracle.variance(400, 0)) / 8 / 400**2
    assert all(m.analytic == pytest.approx(expected, rel=1e-12) for m in errors)
    assert errors[-1].value == pytest.approx(sum(m.value for m in errors[:3]) / 3)
    again = run_trial(config, 0)
    assert [m.value for m in again.measurements] == [m.value for m in result.measurements]


def test_the_sampled_engine_and_a_memoryless_protocol_are_refused(compose_config):
    sampled = ("protocol=lgrr", *TINY, *LONGITUDINAL, "engine=sampled")
    with pytest.raises(ValueError, match="engine"):
        run_trial(make_setting(compose_config(*sampled)).config, 0)
    with pytest.raises((ConfigError, ValueError), match="protocol.kind"):
        config = make_setting(compose_config("protocol=grr", *TINY, *LONGITUDINAL)).config
        run_trial(config, 0)


def test_the_figure_draws_and_checks_its_claims_from_trial_rows(compose_config):
    """A tiny sweep (3 protocols x 2 ε_∞, 2 trials, 3 rounds) as the results table."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from experiments.figures.fig_longitudinal import FIGURE
    from experiments.figures.spec import VERDICTS

    rows = []
    for protocol in ("lgrr", "loue", "losue"):
        for epsilon in (0.5, 3.0):
            overrides = (f"protocol={protocol}", f"epsilon={epsilon}", "dataset=zipf")
            overrides += ("dataset.n=2000", "dataset.support=32", "options.domain_size=32")
            config = make_setting(compose_config(*overrides, *LONGITUDINAL)).config
            for trial in (0, 1):
                result = run_trial(config, trial)
                for m in result.measurements:
                    rows.append(
                        {
                            "protocol.name": config["protocol"]["name"],
                            "epsilon": epsilon,
                            "metric": m.metric,
                            "item": m.item,
                            "value": m.value,
                            "analytic": m.analytic,
                            "n": result.n,
                            "options.domain_size": 32,
                            "options.rounds": 3,
                        }
                    )
    table = pd.DataFrame(rows)
    claims = FIGURE.claims(table)
    assert len(claims) == 3 and all(c.verdict in VERDICTS for c in claims)
    # the exact loss stays below ε_∞ and starts at ε₁ whatever the data (3 rounds here)
    assert "every setting: True; ε₁ at t = 1: True" in claims[2].ours
    plt.close(FIGURE.draw(table))
    assert FIGURE.claims(table.iloc[0:0]) == []
