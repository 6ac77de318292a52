"""RAPPOR in the harness: the presets compose with their ε; the decode trial; its figures."""

from __future__ import annotations

import io
import math

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from experiments.build import build_protocol
from experiments.check import check_config
from experiments.figures.fig_rappor import FIGURES
from experiments.run import run_settings
from experiments.settings import make_setting
from experiments.trials import run_trial

#: conf/protocol/<preset>: (p, q, f, h) as google/rappor states them, and (ε₁, ε∞) to 4 decimals
PRESETS = {
    "rappor_regression": ((0.39, 0.61, 0.45, 2), 0.9728, 4.9471),
    "rappor_no_prr": ((0.225, 0.775, 0.0, 2), 4.9471, math.inf),
    "rappor_google_defaults": ((0.5, 0.75, 0.5, 2), 1.0743, 4.3944),
}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_preset_composes_into_the_oracle_with_its_epsilons(compose_config, preset):
    (p, q, f, h), eps_one, eps_inf = PRESETS[preset]
    config = check_config(compose_config(f"protocol={preset}", "dataset=point", "epsilon=5"))
    node = config["protocol"]
    assert node["name"] == "RAPPOR" and node["kind"] == "oracle" and node["label"]
    assert (node["p"], node["q"], node["f"], node["h"]) == (p, q, f, h)
    oracle = build_protocol(node, config["epsilon"], domain_size=64)
    assert round(oracle.epsilon_one, 4) == eps_one
    if math.isinf(eps_inf):
        assert math.isinf(oracle.epsilon_inf)
    else:
        assert round(oracle.epsilon_inf, 4) == eps_inf


def test_google_defaults_are_the_client_library_parameters(compose_config):
    node = check_config(compose_config("protocol=rappor_google_defaults"))["protocol"]
    assert (node["k"], node["h"], node["m"]) == (16, 2, 64)
    # f = 0.5 = 64/128: Google's PRR (f quantized up to a multiple of 1/128) realises it
    oracle = build_protocol(node, 5.0, domain_size=64)
    assert oracle.f_realised == 0.5


def test_a_preset_refuses_an_epsilon_below_its_epsilon_one(compose_config):
    config = check_config(compose_config("protocol=rappor_no_prr", "epsilon=4.9"))
    with pytest.raises(ValueError, match="epsilon_1 = 4.947"):
        build_protocol(config["protocol"], config["epsilon"], domain_size=64)


#: A Zipf(1.1) population of 20,000 users over 50 values, 100 candidates (50 absent).
SMALL_DECODE = (
    "experiment=rappor",
    "dataset.n=20000",
    "dataset.support=50",
    "options.domain_size=100",
    "k=10",
    "n_trials=2",
    "n_jobs=1",
    "progress=false",
)


def test_the_decode_trial_records_detections_and_per_value_rows(compose_config):
    config = make_setting(compose_config(*SMALL_DECODE, "protocol=rappor_no_prr")).config
    assert config["protocol"]["kind"] == "rappor_decode"
    result = run_trial(config, 0)
    overall = {m.metric: m for m in result.measurements if m.item is None}
    assert set(overall) == {
        "n_detected",
        "n_false_detected",
        "n_selected",
        "within_2se",
        "adversary_success",  # RAPPOR's is empirical: with its standard error
        "adversary_success_se",
        "adversary_baseline",  # π_max, beside it
    }
    assert overall["n_selected"].value >= overall["n_detected"].value >= 1
    assert 0 <= overall["within_2se"].value <= 1
    assert overall["within_2se"].analytic == pytest.approx(0.9545, abs=1e-4)
    rows = [m for m in result.measurements if m.item is not None]
    assert sorted({m.item for m in rows}) == list(range(1, 11))  # the top k = 10 ranks
    estimates = {m.item: m for m in rows if m.metric == "estimate_n"}
    errors = {m.item: m.value for m in rows if m.metric == "std_error_n"}
    detected = {m.item: m.value for m in rows if m.metric == "detected"}
    # the most frequent value (18% of the users) is far above the cut-off at ε₁ = 4.95:
    # detected, and its truth within 5 standard errors (a 1e-6 two-sided event otherwise)
    top = estimates[1]
    assert detected[1] == 1.0 and top.analytic > 0.1
    assert abs(top.value - top.analytic) < 5 * errors[1]
    # the same streams give the same numbers
    again = run_trial(config, 0)
    assert [m.value for m in again.measurements] == [m.value for m in result.measurements]


def test_the_decode_trial_runs_the_reports_engine(compose_config):
    overrides = (*SMALL_DECODE, "protocol=rappor_regression", "engine=reports")
    result = run_trial(make_setting(compose_config(*overrides)).config, 0)
    assert result.n == 20000
    assert {m.metric for m in result.measurements} >= {"n_detected", "estimate_n"}


def test_the_decode_trial_refuses_an_oracle_without_a_decoder(compose_config):
    config = make_setting(
        compose_config(*SMALL_DECODE, "protocol=olh", "protocol.kind=rappor_decode")
    ).config
    with pytest.raises(ValueError, match="protocol.kind: rappor_decode needs RAPPOR"):
        run_trial(config, 0)


def test_the_rappor_figures_draw_from_a_tiny_table(settings_of, tmp_path):
    settings = settings_of(*SMALL_DECODE, "n_trials=1")
    assert len(settings) == 3  # the three presets
    _, store = run_settings(settings)
    table, _ = store.load()
    for spec in FIGURES:  # (PNG and PDF of every figure: tests/test_figures_quick.py, slow)
        figure = spec.draw(table)
        assert len(figure.axes) == (2 if spec.name == "rappor_privacy" else 3)
        image = io.BytesIO()
        figure.savefig(image, format="png", dpi=30)
        plt.close(figure)
        assert image.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"
    privacy = {c.source: c for c in FIGURES[0].claims(table)}
    assert len(privacy) == 3 and all(c.verdict == "reproduced" for c in privacy.values())
    decode = FIGURES[1].claims(table)
    assert len(decode) == 1 and "no PRR" in decode[0].ours


def _decode_table(within: float, false: float, trials: int = 20) -> pd.DataFrame:
    """Per-trial decode rows of the three presets: 40 detections each, ``within`` of them
    within 2 SE, ``false`` false detections per decode."""
    rows = []
    for label in ("A", "B", "C"):
        for trial in range(trials):
            for metric, value in (
                ("n_detected", 40.0),
                ("n_false_detected", false),
                ("n_selected", 45.0),
                ("within_2se", within),
            ):
                rows.append(
                    {"protocol.label": label, "trial": trial, "item": math.nan}
                    | {"metric": metric, "value": value}
                )
    return pd.DataFrame(rows)


def test_the_decode_claim_holds_at_the_nominal_rates_and_fails_below():
    (claim,) = FIGURES[1].claims(_decode_table(within=0.955, false=0.0))
    assert claim.verdict == "reproduced"
    assert claim.detection.within(), claim.detection.text()
    assert claim.mutated(2.0).verdict != "reproduced"
    (short,) = FIGURES[1].claims(_decode_table(within=0.90, false=0.0))
    assert short.verdict == "partly" and short.cause != "not shown"
    (loose,) = FIGURES[1].claims(_decode_table(within=0.955, false=0.2))
    assert loose.verdict == "partly"


def test_a_privacy_claim_fails_on_a_planted_last_digit(settings_of):
    settings = settings_of(*SMALL_DECODE, "n_trials=1")
    table = pd.DataFrame(
        [
            {f"protocol.{k}": v for k, v in s.config["protocol"].items() if not isinstance(v, dict)}
            | {
                "epsilon": s.config["epsilon"],
                "options.domain_size": s.config["options"]["domain_size"],
            }
            for s in settings
        ]
    )
    for claim in FIGURES[0].claims(table):
        assert claim.verdict == "reproduced" and claim.detection.within()
        part = claim.parts[0]
        planted = part.with_values(part.array + [1e-4, 0.0])  # ε₁ off by one last digit
        assert planted.verdict == "differs", claim.source
