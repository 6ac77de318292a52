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
    assert [part.verdict for part in claims[2].parts[:2]] == ["identity", "reproduced"]
    # a loss planted 1% above ε_∞ in one setting is caught
    planted = table.copy()
    spent = (planted["metric"] == "epsilon_spent") & (planted["item"] == 3)
    planted.loc[spent & (planted["epsilon"] == 3.0), "value"] *= 1.01
    assert FIGURE.claims(planted)[2].parts[1].verdict == "differs"
    plt.close(FIGURE.draw(table))
    assert FIGURE.claims(table.iloc[0:0]) == []


def test_changing_values_the_privacy_spent_and_the_adversary_per_round(compose_config):
    """ρ = 0.5 on a Zipf population: each round's error beside that round's expectation,
    the claimed loss of the distinct values held so far, the adversary's rate per round."""
    overrides = ("protocol=lgrr", "epsilon=1", "dataset=zipf", "dataset.n=3000")
    overrides += ("dataset.support=6", "options.domain_size=6", "options.change_prob=0.5")
    config = make_setting(compose_config(*overrides, *LONGITUDINAL)).config
    result = run_trial(config, 0)
    by = {}
    for m in result.measurements:
        by.setdefault(m.metric, []).append(m)
    changing = by["epsilon_spent_changing"]
    assert [m.item for m in changing] == [1, 2, 3]
    assert changing[0].value == 1.0  # one report: ε₁ for everybody
    # ε_∞ = 2 per distinct value; with ρ = 0.5 some users changed, none held more than t
    assert 2.0 < changing[1].value < changing[2].value <= changing[2].analytic <= 6.0
    success = by["adversary_success"]
    assert [m.item for m in success] == [1, 2, 3]
    assert all(m.value == m.analytic for m in success)  # exact: L-GRR at d = 6, τ <= 3
    assert success[0].value < success[2].value
    bounds = by["adversary_bound"]
    assert all(s.value <= b.value <= b.analytic for s, b in zip(success, bounds, strict=True))
    assert by["adversary_baseline"][0].value <= success[0].value + 1e-12
    again = run_trial(config, 0)
    assert [m.value for m in again.measurements] == [m.value for m in result.measurements]


def test_change_prob_is_checked(compose_config):
    bad = ("protocol=lgrr", *TINY, *LONGITUDINAL, "options.change_prob=1.5")
    with pytest.raises((ConfigError, ValueError), match="change_prob"):
        make_setting(compose_config(*bad))


def test_the_loloha_figure_draws_and_checks_its_claims(compose_config):
    """A tiny sweep (5 protocols x 2 ε, 2 trials, 3 rounds, ρ = 0.5) as the results table."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from experiments.figures.fig_longitudinal_loloha import FIGURE
    from experiments.figures.spec import VERDICTS

    rows = []
    for protocol in ("loloha", "biloloha", "lgrr", "losue", "dbitflip"):
        for epsilon in (1.0, 2.0):
            overrides = (f"protocol={protocol}", f"epsilon={epsilon}", "dataset=zipf")
            overrides += ("dataset.n=2000", "dataset.support=32", "options.domain_size=32")
            overrides += ("options.change_prob=0.5",)
            config = make_setting(compose_config(*overrides, *LONGITUDINAL)).config
            node = config["protocol"]
            for trial in (0, 1):
                result = run_trial(config, trial)
                for m in result.measurements:
                    rows.append(
                        {
                            "protocol.name": node["name"],
                            "protocol.label": node.get("label"),
                            "protocol.g": node.get("g"),
                            "epsilon": epsilon,
                            "metric": m.metric,
                            "item": m.item,
                            "value": m.value,
                            "analytic": m.analytic,
                            "n": result.n,
                            "options.domain_size": 32,
                            "options.rounds": 3,
                            "options.change_prob": 0.5,
                        }
                    )
    table = pd.DataFrame(rows)
    claims = FIGURE.claims(table)
    assert len(claims) == 4 and all(c.verdict in VERDICTS for c in claims)
    # the claimed accounting is exact whatever the data: LOLOHA-type users within g ε_∞
    assert claims[2].parts[0].verdict == "reproduced"
    # the adversary's exact rates planted above their bound are caught
    planted = table.copy()
    success = (planted["metric"] == "adversary_success") & planted["analytic"].notna()
    planted.loc[success, "value"] += 0.5
    assert FIGURE.claims(planted)[3].verdict != "reproduced"
    plt.close(FIGURE.draw(table))
