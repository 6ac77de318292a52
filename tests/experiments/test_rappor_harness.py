"""RAPPOR in the harness: the reference implementation's presets compose with their ε."""

from __future__ import annotations

import math

import pytest

from experiments.schema import check_config
from experiments.trials import build_protocol

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
