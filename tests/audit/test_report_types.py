"""Reports of any type are audited: strings, bytes, objects, complex, datetimes, records.

Each mechanism below claims ε = 1 but returns the user's value itself, as a string, bytes,
an object, a complex number, a datetime, a timedelta or a field of a structured record:
a deterministic leak (ε = ∞).  The search reads such reports by the bytes of each entry
(:func:`ldp.audit.events.symbols`), so every audit must report a lower bound far above 1.
Before, no column was read from a report of these dtypes and the audit certified ε >= 0.
An honest GRR whose reports are strings must still hold (and come close to its ε).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp import audit
from ldp.oracles import GRR

TRIALS = 20_000


class Box:
    """An object holding a value, printed with it."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Box({self.value})"


def _as(kind: str, values: np.ndarray, rng: np.random.Generator):
    values = np.asarray(values, dtype=np.int64)
    n = len(values)
    if kind == "str":
        return np.array([f"user said {v}" for v in values])
    if kind == "bytes":
        return np.array([bytes([65 + int(v)]) for v in values])
    if kind == "str list":
        return [str(v) for v in values]
    if kind == "object str":
        return np.array([str(v) for v in values], dtype=object)
    if kind == "object":
        return np.array([Box(int(v)) for v in values], dtype=object)
    if kind == "complex":
        return rng.normal(size=n) + 1j * values
    if kind == "datetime":
        return np.datetime64("2024-01-01") + values.astype("timedelta64[D]")
    if kind == "timedelta":
        return values.astype("timedelta64[s]")
    if kind == "record":
        out = np.zeros(n, dtype=[("noise", "f8"), ("label", "U8")])
        out["noise"] = rng.normal(size=n)
        out["label"] = [f"v{v}" for v in values]
        return out
    if kind == "tuple with strings":
        return (rng.integers(0, 4, size=n), np.array([str(v) for v in values]))
    if kind == "tuple with a list":
        return (rng.integers(0, 4, size=n), [f"v{v}" for v in values])
    raise AssertionError(kind)


KINDS = [
    "str",
    "bytes",
    "str list",
    "object str",
    "object",
    "complex",
    "datetime",
    "timedelta",
    "record",
    "tuple with strings",
    "tuple with a list",
]


class Leak:
    """Claims 1-LDP; returns the value itself in the report type ``kind``."""

    epsilon = 1.0

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def perturb(self, values, rng):
        return _as(self.kind, values, rng)


@pytest.mark.parametrize("kind", KINDS)
def test_a_value_returned_as_any_type_is_caught(kind: str) -> None:
    result = audit.lower_bound(Leak(kind), 0, 1, rng=np.random.default_rng(7), trials=TRIALS)
    assert result.epsilon > 3 * Leak.epsilon, str(result)


class StringGRR(GRR):
    """GRR with its reports written as strings: honest, ε-LDP."""

    def perturb(self, values, rng):
        return np.array([f"category {r}" for r in super().perturb(values, rng)])


def test_honest_string_reports_hold_and_are_read() -> None:
    mechanism = StringGRR(epsilon=1.0, domain_size=4)
    result = audit.lower_bound(mechanism, 0, 1, rng=np.random.default_rng(3), trials=TRIALS)
    assert 0.6 < result.epsilon <= mechanism.epsilon, str(result)


@pytest.mark.parametrize("output", [None, {"a": 1}, 3, (1, 2)])
def test_an_output_that_holds_no_reports_is_refused(output) -> None:
    class Broken:
        epsilon = 1.0

        def perturb(self, values, rng):
            return output

    with pytest.raises(TypeError, match="perturb"):
        audit.lower_bound(Broken(), 0, 1, rng=np.random.default_rng(0), trials=1000)
