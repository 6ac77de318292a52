"""A setting's protocol built from its config node (and rebuilt from a results row), through
:mod:`ldp.registry`."""

from __future__ import annotations

import dataclasses
import functools
import json
import typing
from typing import Any

import numpy as np

from experiments.population import drop_nulls
from experiments.schema import protocol_schema
from ldp import registry


def protocol_arguments(protocol: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments a protocol node gives its class: the non-null parameters.

    Lists become tuples (the classes are frozen) and a name where the class expects a
    protocol class (PEM's ``oracle``) becomes that class, through :mod:`ldp.registry`.
    """
    entry = registry.get(protocol["name"])
    references = {
        spec.name: spec.metadata["registry"]
        for spec in dataclasses.fields(protocol_schema(entry.name))
        if "registry" in spec.metadata
    }
    kwargs = {}
    for name, value in drop_nulls(protocol, "name", "kind", "label").items():
        if name in references:
            value = registry.resolve(value, references[name])
        kwargs[name] = tuple(value) if isinstance(value, list) else value
    return kwargs


def build_protocol(
    protocol: dict[str, Any],
    epsilon: float,
    *,
    domain_size: int | None = None,
    k: int | None = None,
    m: int | None = None,
    n: int | None = None,
):
    """The protocol of a config node: an oracle over ``domain_size`` values, or a heavy
    hitter for ``k``, values of ``m`` bits and ``n`` users (passed as ``n_hint`` to a
    class that plans for a number of users, e.g. PEM's optimizer, unless the node sets it).
    """
    entry = registry.get(protocol["name"])
    kwargs = protocol_arguments(protocol)
    if entry.kind in ("oracle", "set"):
        return entry.cls(epsilon=epsilon, domain_size=domain_size, **kwargs)
    if "n_hint" in {f.name for f in registry.parameters(entry.cls)}:
        kwargs.setdefault("n_hint", n)
    return entry.cls(epsilon=epsilon, k=k, m=m, **kwargs)


def protocol_from_row(row: Any) -> dict[str, Any]:
    """The protocol node of a results-table row (its ``protocol.*`` columns), for figures
    that rebuild a protocol to draw its closed forms.  Empty cells (NaN) are nulls; values
    are cast back to the types the protocol's schema declares (tables store floats)."""
    schema = protocol_schema(str(row["protocol.name"]))
    node: dict[str, Any] = {}
    for spec in dataclasses.fields(schema):
        value = row.get(f"protocol.{spec.name}")
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        if isinstance(value, str) and value.startswith("["):
            value = json.loads(value)
        elif isinstance(value, np.generic):
            value = value.item()
        kinds = typing.get_args(spec.type) or (spec.type,)
        if int in kinds and isinstance(value, float) and value.is_integer():
            value = int(value)
        node[spec.name] = value
    return node


def build_heavy_hitter(config: dict[str, Any], m: int, n: int):
    """The heavy-hitter protocol of a config, for values of m bits and n users."""
    return build_protocol(config["protocol"], config["epsilon"], k=config["k"], m=m, n=n)


@functools.lru_cache(maxsize=16)
def cached_heavy_hitter(built_json: str, m: int, n: int):
    """:func:`build_heavy_hitter` memoised per worker: the protocols are frozen, so every
    trial of a setting can share one, and PEM's optimizer (Sec. IV-C, ~0.2 s) runs once."""
    return build_heavy_hitter(json.loads(built_json), m, n)
