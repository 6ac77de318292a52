"""The protocol registry: registration, lookup, parameters, and refusals that name the problem."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ldp import registry
from ldp.heavy_hitters import PEM
from ldp.numeric import MeanProtocol
from ldp.oracles import OLH, ORACLES, FrequencyOracle
from ldp.sets import SetProtocol


@pytest.fixture
def private_registry(monkeypatch):
    """A copy of the registry that this test may change."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def test_every_built_in_protocol_is_registered_with_its_kind():
    oracles = registry.protocols("oracle")
    assert set(ORACLES) <= set(oracles)
    table1 = [name for name in oracles if name in ("GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH")]
    assert table1 == ["GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH"]  # Table 1's order
    assert {"PEM", "SPM", "MCM", "Strawman"} <= set(registry.protocols("heavy_hitter"))
    for entry in registry.protocols().values():
        assert entry.kind in registry.KINDS
        if entry.kind == "oracle":
            assert issubclass(entry.cls, FrequencyOracle)
        elif entry.kind == "mean":
            assert issubclass(entry.cls, MeanProtocol)
        elif entry.kind == "set":
            assert issubclass(entry.cls, SetProtocol)
        else:
            assert callable(entry.cls.run)


def test_lookup_is_case_insensitive_and_unknown_names_list_the_known_ones():
    assert registry.get("olh").cls is OLH and registry.get("OLH", "oracle").cls is OLH
    with pytest.raises(registry.RegistryError, match=r"unknown protocol 'XYZ'; known: GRR, "):
        registry.get("XYZ")
    with pytest.raises(registry.RegistryError, match=r"unknown oracle 'PEM'; known: GRR"):
        registry.get("PEM", "oracle")  # a heavy hitter is not an oracle
    assert registry.resolve("OLH", "oracle") is OLH and registry.resolve(OLH, "oracle") is OLH
    with pytest.raises(TypeError, match="expected an? oracle class or its name, got int"):
        registry.resolve(3, "oracle")


def test_parameters_leave_out_what_the_caller_supplies():
    assert [spec.name for spec in registry.parameters(OLH)] == ["g"]
    names = [spec.name for spec in registry.parameters(PEM)]
    assert "epsilon" not in names and "k" not in names and "m" not in names
    assert "eta" in names and "config" not in names  # init=False fields are not parameters


def test_a_new_class_registers_once_and_a_taken_name_is_refused(private_registry):
    @registry.register(label="Mine", color="#123456", order=5)
    @dataclass(frozen=True, kw_only=True)
    class Mine(OLH):
        name = "Mine"

    entry = registry.get("mine")
    assert (entry.label, entry.color, entry.order, entry.kind) == ("Mine", "#123456", 5.0, "oracle")
    assert list(registry.protocols())[0] == "Mine"  # legend order first

    @dataclass(frozen=True, kw_only=True)
    class Impostor(OLH):
        name = "Mine"

    with pytest.raises(registry.RegistryError, match="protocol name 'Mine' is taken by"):
        registry.register(Impostor)


def test_a_class_that_is_not_a_protocol_is_refused(private_registry):
    class Plain:
        pass

    with pytest.raises(registry.RegistryError, match="must be a dataclass type"):
        registry.register(Plain)

    @dataclass
    class NoDomain:
        epsilon: float

    with pytest.raises(
        registry.RegistryError, match=r"an? oracle class needs the fields \['domain_size'\]"
    ):
        registry.register(NoDomain)
    with pytest.raises(registry.RegistryError, match="kind of NoDomain must be one of"):
        registry.register(NoDomain, kind="sketch")
    with pytest.raises(registry.RegistryError, match="must be an identifier"):
        registry.register(NoDomain, name="no domain")


def test_an_override_that_drops_a_parameter_of_its_base_is_refused(private_registry):
    @dataclass(frozen=True, kw_only=True)
    class Narrow(OLH):
        name = "Narrow"

        def variances(self, true_counts):  # the base also takes candidates
            return super().variances(true_counts)

    with pytest.raises(registry.RegistryError, match=r"Narrow.variances .*\['candidates'\]"):
        registry.register(Narrow)

    @dataclass(frozen=True, kw_only=True)
    class Wide(OLH):
        name = "Wide"

        def variances(self, true_counts, candidates=None, *, exact=True):  # adds, drops none
            return super().variances(true_counts, candidates)

    registry.register(Wide)
    assert registry.get("wide").cls is Wide


def test_every_registered_override_keeps_its_bases_parameters():
    for entry in registry.protocols().values():
        registry._check_overrides(entry.cls, entry.name)  # raises on a dropped parameter
