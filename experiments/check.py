"""Checking a composed config against :mod:`experiments.schema`: every field's range, then
the rules that tie fields together (an η that fits m, a real-data file that exists), so a
bad value fails before any trial runs, with one line naming the field:
``epsilon: must be > 0, got -1.0``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from dataclasses import fields
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from experiments.schema import (
    DATASET_SCHEMAS,
    FRONTIER_PROTOCOL,
    KIND_TRIALS,
    SET_DATASETS,
    Config,
    ConfigError,
    FigureConfig,
    TrialOptions,
    protocol_schema,
)
from ldp import registry


def _check_value(key: str, value: Any, meta: dict) -> None:
    if value is None:
        return
    if "registry" in meta:  # the name of a registered protocol of that kind (or a list)
        for name in value if isinstance(value, list | tuple) else [value]:
            try:
                registry.get(str(name), meta["registry"])
            except registry.RegistryError as error:
                raise ConfigError(f"{key}: {error}") from None
        return
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(f"{key}: must be one of {', '.join(meta['choices'])}; got {value!r}")
    bounds = meta.get("bounds", {})
    items = value if isinstance(value, list | tuple) else [value]
    for item in items:
        if isinstance(item, float) and not math.isfinite(item):
            raise ConfigError(f"{key}: must be finite, got {item}")
        for op, limit in bounds.items():
            ok = {"gt": item > limit, "ge": item >= limit, "lt": item < limit, "le": item <= limit}[
                op
            ]
            if not ok:
                sign = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}[op]
                raise ConfigError(f"{key}: must be {sign} {limit:g}, got {item!r}")


def _check_fields(node: dict, schema: type, prefix: str = "") -> None:
    for spec in fields(schema):
        key = f"{prefix}{spec.name}"
        value = node.get(spec.name)
        if schema is Config and spec.name == "options":
            _check_fields(value or {}, TrialOptions, f"{key}.")
            continue
        _check_value(key, value, dict(spec.metadata))


@functools.lru_cache(maxsize=64)
def _template(schema: type) -> DictConfig:
    return OmegaConf.structured(schema)


@functools.lru_cache(maxsize=1024)
def _typed_json(text: str, schema: type, prefix: str) -> str:
    try:
        merged = OmegaConf.merge(_template(schema), json.loads(text))
        return json.dumps(OmegaConf.to_container(merged, resolve=True, throw_on_missing=True))
    except OmegaConfBaseException as error:
        key = getattr(error, "full_key", None) or ""
        first = str(error).splitlines()[0]
        raise ConfigError(f"{prefix}{key}: {first}") from None


def typed(node: dict, schema: type, prefix: str) -> dict:
    """``node`` merged onto ``schema`` (type check), as a new plain dict; ConfigError if wrong.

    Memoised on the node's JSON: a grid repeats the same protocol and dataset nodes.
    """
    return json.loads(_typed_json(json.dumps(node, sort_keys=True), schema, prefix))


def check_config(cfg: DictConfig | dict) -> dict:
    """Check every field of a composed config; return it as a plain, resolved dict.

    Raises
    ------
    ConfigError
        One line, starting with the dotted name of the first wrong field.
    """
    if isinstance(cfg, DictConfig):
        if "hydra" in cfg:  # the hydra node needs Hydra's runtime to resolve; not ours
            cfg = OmegaConf.masked_copy(cfg, [key for key in cfg if key != "hydra"])
        try:
            cfg = OmegaConf.to_container(cfg, resolve=True)
        except OmegaConfBaseException as error:
            key = getattr(error, "full_key", None) or "config"
            raise ConfigError(f"{key}: {str(error).splitlines()[0]}") from None
    raw = {key: value for key, value in cfg.items() if key != "hydra"}
    if "${" in json.dumps(raw, default=str):  # interpolations left by a plain-dict caller
        raw = OmegaConf.to_container(OmegaConf.create(raw), resolve=True)
    for group in ("protocol", "dataset"):
        if not isinstance(raw.get(group), dict):
            raise ConfigError(f"{group}: missing; choose one with {group}=<name>")
    frontier = raw["protocol"].get("kind") == FRONTIER_PROTOCOL["kind"]
    if frontier:
        protocol = _frontier_protocol(raw["protocol"])
    else:
        protocol_name = raw["protocol"].get("name")
        protocol = typed(raw["protocol"], protocol_schema(str(protocol_name)), "protocol.")
    if protocol["label"] is None:
        protocol["label"] = registry.get(protocol["name"]).label
    dataset_name = raw["dataset"].get("name")
    if dataset_name not in DATASET_SCHEMAS:
        raise ConfigError(
            f"dataset.name: unknown data set {dataset_name!r}; known: {', '.join(DATASET_SCHEMAS)}"
        )
    dataset = typed(raw["dataset"], DATASET_SCHEMAS[dataset_name], "dataset.")
    root = typed({**raw, "protocol": {}, "dataset": {}}, Config, "")
    config = {**root, "protocol": protocol, "dataset": dataset}
    config["figure"] = check_figure(config["figure"])
    _check_fields(config, Config)
    if not frontier:
        _check_fields(protocol, protocol_schema(protocol["name"]), "protocol.")
    _check_fields(dataset, DATASET_SCHEMAS[dataset_name], "dataset.")
    _check_rules(config)
    return config


def _frontier_protocol(node: dict) -> dict:
    """:data:`~experiments.schema.FRONTIER_PROTOCOL` for the protocol node of an
    ``oracle_frontier`` setting, whichever protocol it was composed from (the experiment
    only sets ``protocol.kind``); ConfigError if it sets a parameter, which no oracle of
    the frontier would use (each is built with its defaults)."""
    if node.get("name") != FRONTIER_PROTOCOL["name"]:
        node = typed(node, protocol_schema(str(node.get("name"))), "protocol.")
    unused = sorted(k for k, v in node.items() if v is not None and k not in FRONTIER_PROTOCOL)
    if unused:
        raise ConfigError(
            f"protocol.{unused[0]}: the oracle_frontier trial builds every registered oracle "
            f"with its defaults, so it uses no protocol parameter; got {node[unused[0]]!r}"
        )
    return dict(FRONTIER_PROTOCOL)


def check_figure(node: dict | None) -> dict[str, list[str]]:
    """Check an experiment's ``figure`` block (:class:`experiments.schema.FigureConfig`);
    return it with every protocol in the registry's spelling (``olh`` -> ``OLH``).

    Raises
    ------
    ConfigError
        One line naming the field: an unknown key, a value that is not a list of names,
        or a name no protocol is registered under.
    """
    for key, value in (node or {}).items():
        if not isinstance(value, list | tuple):
            raise ConfigError(f"figure.{key}: must be a list of protocol names, got {value!r}")
    figure = typed(node or {}, FigureConfig, "figure.")
    _check_fields(figure, FigureConfig, "figure.")
    return {key: [registry.get(name).name for name in names] for key, names in figure.items()}


def _check_rules(config: dict) -> None:
    """The checks that involve more than one field, or the outside world.

    A protocol's own ranges and its fit with the data (an η that fits m, k <= 2^m) are
    its class's checks, run on the real data by :func:`experiments.preflight.preflight`.
    """
    protocol, dataset, options = config["protocol"], config["dataset"], config["options"]
    frontier = protocol["kind"] == FRONTIER_PROTOCOL["kind"]
    kind = "oracle" if frontier else registry.get(protocol["name"]).kind
    allowed = KIND_TRIALS[kind]
    if protocol["kind"] not in allowed:
        raise ConfigError(
            f"protocol.kind: {protocol['name']} runs as "
            f"{' or '.join(repr(kind) for kind in allowed)}, got {protocol['kind']!r}"
        )
    n_jobs = config["n_jobs"]
    if n_jobs is not None and n_jobs != -1 and n_jobs < 1:
        raise ConfigError(f"n_jobs: must be >= 1, or -1/null for all cores; got {config['n_jobs']}")
    if dataset.get("path") is not None and not Path(dataset["path"]).expanduser().is_file():
        raise ConfigError(f"dataset.path: no such file: {dataset['path']}")
    if dataset["name"] == "point" and kind != "oracle":
        raise ConfigError("dataset.name: 'point' serves oracle trials only")
    if (dataset["name"] in SET_DATASETS) != (kind == "set"):
        raise ConfigError(
            f"dataset.name: set protocols run on item sets ({', '.join(SET_DATASETS)}) and "
            "those serve set trials only"
        )
    if (dataset["name"] == "bounded") != (kind == "mean"):
        raise ConfigError(
            "dataset.name: mean protocols run on 'bounded' (real values in [-1, 1]) and it "
            "serves mean trials only"
        )
    if config["format"] == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ConfigError("format: parquet needs pyarrow (pip install pyarrow); use csv.gz")
    if config["backend"] == "dask" and importlib.util.find_spec("distributed") is None:
        raise ConfigError("backend: dask needs dask.distributed (pip install 'dask[distributed]')")
    if (
        kind == "oracle"
        and options["track"] == "absent"
        and dataset["name"] != "point"
        and not options["domain_size"]
    ):
        raise ConfigError(
            "options.track: 'absent' needs options.domain_size above the number of distinct values"
        )
