"""Heavy hitters find their frequency oracle through ldp.registry, so a plug-in oracle works
by name exactly as a built-in one does (``PEM(oracle="<plug-in name>")``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from ldp import registry
from ldp.heavy_hitters import PEM, PROTOCOLS
from ldp.oracles import OLH
from ldp.validation import ParameterError

from .synthetic import zipf


@pytest.fixture
def toy_oracle(monkeypatch):
    """A plug-in oracle registered for the duration of one test (OLH's mechanism renamed)."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @dataclass(frozen=True, kw_only=True)
    class ToyRR(OLH):
        name = "ToyRR"

    registry.register(ToyRR, name="ToyRR", kind="oracle")
    return ToyRR


@pytest.mark.parametrize("cls", PROTOCOLS.values(), ids=PROTOCOLS)
def test_a_plugin_oracle_is_found_by_name(cls, toy_oracle):
    built = cls(epsilon=4.0, k=4, m=16, oracle="ToyRR")
    assert built.oracle is toy_oracle
    assert cls(epsilon=4.0, k=4, m=16, oracle="toyrr").oracle is toy_oracle  # case-insensitive


def test_pem_runs_with_the_plugin_oracle(toy_oracle):
    data = zipf(20_000, 16, seed=3)
    result = PEM(epsilon=4.0, k=4, m=16, oracle="ToyRR").run(data, np.random.default_rng(1))
    truth = set(data.top_k(4).tolist())
    assert len(result.identified) == 4
    assert truth & set(result.identified.tolist())  # at ε = 4 the top values are found


def test_an_unknown_oracle_name_names_the_parameter():
    with pytest.raises(ParameterError, match="^oracle must be one of") as raised:
        PEM(epsilon=1.0, k=4, m=16, oracle="NO_SUCH_ORACLE")
    assert raised.value.name == "oracle" and "OLH" in raised.value.allowed
