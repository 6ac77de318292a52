"""Every attribute the library and the harness read from a protocol by name is declared.

A capability probed with ``getattr(oracle, "some_method", None)`` is a second, informal
contract: a plug-in author cannot see it, and a typo in either place silently switches a
path off.  Optional methods are therefore typing Protocols of :mod:`ldp.contract`
(``isinstance(oracle, HasRounds)``), flags are :class:`~ldp.contract.Capabilities` fields,
and this test reads the source of ``ldp/`` and ``experiments/`` (``ast``) for the
remaining ``getattr`` / ``hasattr`` calls with a literal name on an object called like a
protocol, and checks each name against :data:`DECLARED`, where each entry says where it
is declared; the declaration is checked too.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from ldp import contract, registry
from ldp.numeric.base import MeanProtocol
from ldp.oracles.base import FrequencyOracle

REPO = Path(__file__).resolve().parent.parent
#: The names a protocol object goes by in the code.
PROTOCOL_NAMES = {"oracle", "protocol", "cls", "mechanism", "self.oracle", "type(oracle)"}

#: name -> where it is declared (checked by test_each_declared_name_is_where_it_says).
DECLARED = {
    "capabilities": "ldp.contract.Capabilities, read by capabilities_of",
    "name": "every base class: the paper's acronym (a ClassVar)",
    "epsilon": "FrequencyOracleLike / HeavyHitterLike / MeanProtocol: the privacy budget",
    "domain_size": "FrequencyOracleLike: d, read by the auditor's support check",
    "perturb": "FrequencyOracleLike / HeavyHitterLike: probed only to refuse a non-protocol",
    "run": "HeavyHitterLike: the registry's default kind for a class with run()",
    "report_bits": "FrequencyOracle.report_bits: the bits of one report",
    "bounded": "MeanProtocol.bounded (a ClassVar)",
    "exact_bytes": "MeanProtocol.exact_bytes (a ClassVar)",
    "g": "the hashed oracles' hash range (a dataclass field of OLH, BLH, FLH, LOLOHA)",
    "threshold": "a heavy hitter's optional threshold parameter (a dataclass field)",
    "oracle": "a heavy hitter's client wrapping one oracle (ldp.audit's hooks)",
    "oracle_input": "a heavy hitter's client: the oracle's input of a user's value",
    "has_independent_support": "FrequencyOracle.has_independent_support (a classmethod)",
}


def probes(source: str) -> set[tuple[str, str]]:
    """(object, name) of each getattr/hasattr call with a literal name in ``source``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.add((ast.unparse(node.args[0]), node.args[1].value))
    return found


def names_read() -> dict[str, list[str]]:
    where: dict[str, list[str]] = {}
    for package in ("ldp", "experiments"):
        for path in sorted((REPO / package).rglob("*.py")):
            for obj, name in probes(path.read_text(encoding="utf-8")):
                if obj in PROTOCOL_NAMES and not name.startswith("__"):  # Python's own
                    where.setdefault(name, []).append(str(path.relative_to(REPO)))
    return where


def test_every_name_read_from_a_protocol_is_declared() -> None:
    undeclared = {n: w for n, w in names_read().items() if n not in DECLARED}
    assert not undeclared, (
        f"read by name but not declared: {undeclared}; declare it in ldp.contract (a "
        "Capabilities field or a runtime-checkable Protocol) and read it from there"
    )


def test_a_planted_probe_is_found() -> None:
    """The collector's power: the FLH-only probe the figures used to make is reported."""
    planted = 'if hasattr(oracle, "variance_given_counts"):\n    pass\n'
    assert ("oracle", "variance_given_counts") in probes(planted)
    assert "variance_given_counts" not in DECLARED


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_each_declared_name_is_where_it_says(name: str) -> None:
    fields = {
        f.name for entry in registry.protocols().values() for f in dataclasses.fields(entry.cls)
    }
    homes = (FrequencyOracle, MeanProtocol, contract.Capabilities)
    members = {m for home in homes for m in dir(home)}
    members |= {"epsilon", "perturb", "run", "k", "m"}  # HeavyHitterLike's members
    assert {"epsilon", "perturb", "run"} <= set(vars(contract.HeavyHitterLike)) | set(
        contract.HeavyHitterLike.__annotations__
    )
    if name in ("oracle", "oracle_input"):  # the auditor's hooks of a heavy hitter's client
        source = (REPO / "ldp" / "audit" / "events.py").read_text(encoding="utf-8")
        assert f'"{name}"' in source and name in (REPO / "docs" / "privacy.md").read_text()
        return
    assert name in members or name in fields, f"{name}: not found where DECLARED says"


def test_optional_hooks_are_runtime_checkable_protocols() -> None:
    """What the code asks with isinstance is what the protocols define."""
    from ldp.oracles import GRR, OUE
    from ldp.oracles.longitudinal import LGRR

    grr, oue, lgrr = (c(epsilon=1.0, domain_size=4) for c in (GRR, OUE, LGRR))
    assert isinstance(grr, contract.HasExactAdversary)
    assert isinstance(lgrr, contract.HasRounds) and not isinstance(grr, contract.HasRounds)
    assert issubclass(LGRR, contract.HasRounds)
    assert contract.capabilities_of(oue).adversary_support_only
    assert not contract.capabilities_of(grr).adversary_support_only
