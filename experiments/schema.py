"""Structured-config schemas of the harness: every field's type and range.

Hydra checks *types* while composing (the dataclasses below are stored in its
``ConfigStore``: ``base_config`` for the root, ``protocol/base_*`` and ``dataset/base_*``
for the group files to extend).  :func:`check_config` then checks *ranges* (the
``metadata`` of each field) and the rules that tie fields together (an η that fits m, a
real-data file that exists), so a bad value fails before any trial runs, with one line
naming the field: ``epsilon: must be > 0, got -1.0``.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, make_dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from ldp import registry
from ldp.datasets.synthetic import BOUNDED_LAWS
from ldp.postprocess import METHODS as POSTPROCESS_METHODS

ENGINES = ("sampled", "reports")
FORMATS = ("csv.gz", "csv", "parquet")
BACKENDS = ("loky", "multiprocessing", "threading", "sequential", "dask")
TRACKS = ("top", "all", "absent")
TRIAL_KINDS = (
    "oracle",
    "heavy_hitter",
    "multiple_questions",
    "rappor_decode",
    "longitudinal",
    "mean",
)
#: The trial kinds that run a frequency oracle.
ORACLE_KINDS = ("oracle", "multiple_questions", "rappor_decode", "longitudinal")


class ConfigError(ValueError):
    """A configuration value is wrong; the message is one line that starts with the field."""


def _bounds(
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> dict[str, float]:
    return {
        key: value
        for key, value in (("gt", gt), ("ge", ge), ("lt", lt), ("le", le))
        if value is not None
    }


def ranged(default: Any, **bounds: float) -> Any:
    """A dataclass field whose value (or each element of a list value) must obey ``bounds``."""
    return field(default=default, metadata={"bounds": _bounds(**bounds)})


def choice(default: Any, choices: Iterable[str]) -> Any:
    """A dataclass field that must be one of ``choices`` (or None, if the type allows it)."""
    return field(default=default, metadata={"choices": tuple(choices)})


# --------------------------------------------------------------------------- protocols
#: The trial kinds each protocol kind can run as (``protocol.kind``).
KIND_TRIALS = {"oracle": ORACLE_KINDS, "heavy_hitter": ("heavy_hitter",), "mean": ("mean",)}


def _config_type(annotation: Any) -> tuple[Any, dict[str, Any]]:
    """The OmegaConf type standing for a class field's annotation, and checks to attach.

    Plain ``int``/``float``/``str``/``bool`` stay; tuples and lists of one of them become
    lists; ``Literal[...]`` becomes ``str`` with its choices; ``type[...]`` (a protocol
    class, e.g. PEM's ``oracle``) becomes ``str``: a registered name; anything else
    (unions such as ``int | str``) is ``Any``, left to the class's own checks.
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return _config_type(kept[0]) if len(kept) == 1 else (Any, {})
    if annotation in (int, float, str, bool):
        return annotation, {}
    if origin is typing.Literal:
        return str, {"choices": tuple(str(a) for a in args)}
    if origin in (tuple, list) and args and args[0] in (int, float, str, bool):
        return typing.List[args[0]], {}  # noqa: UP006 (OmegaConf wants typing.List)
    if origin is type:
        return str, {"registry": "oracle"}
    return Any, {}


@functools.cache
def _schema_of(name: str) -> type:
    entry = registry.get(name)
    try:
        hints = typing.get_type_hints(entry.cls)
    except Exception:  # an annotation that cannot be resolved: every field is Any
        hints = {}
    specs: list[tuple[str, Any, Any]] = [
        ("name", str, field(default=entry.name)),
        ("kind", str, field(default=entry.kind)),  # checked against KIND_TRIALS
        ("label", str | None, field(default=None)),
    ]
    for spec in registry.parameters(entry.cls):
        kind, metadata = _config_type(hints.get(spec.name, Any))
        specs.append((spec.name, kind | None, field(default=None, metadata=metadata)))
    return make_dataclass(f"{entry.name}Config", specs)


def protocol_schema(name: str) -> type:
    """The structured-config schema of protocol ``name``, made from its class's fields.

    Its fields are ``name``, ``kind`` (the trial that runs it), ``label`` and every
    parameter of the class (:func:`ldp.registry.parameters`) with its declared type; a
    null means "the class's default".  Ranges are the class's own checks, run before any
    trial by :func:`experiments.trials.preflight`.
    """
    try:
        return _schema_of(registry.get(str(name)).name)
    except registry.RegistryError as error:
        raise ConfigError(f"protocol.name: {error}") from None


# ---------------------------------------------------------------------------- datasets
@dataclass
class DatasetConfig:
    """Shared by every data set: ``ldp.datasets.load(name, **non-null fields)``."""

    name: str = MISSING  #: the loader: zipf, exponential, kosarak, aol, url (or point)
    label: str | None = None  #: legend text in figures
    n: int | None = ranged(None, ge=1)  #: number of users (None: the loader's default)
    seed: int | None = ranged(None, ge=0)  #: the data set's own seed (None: the loader's)


@dataclass
class ZipfConfig(DatasetConfig):
    """Zipf(s) over random m-bit values ([PEM] Sec. V); ``drop_top`` = 20 is zipf(-20)."""

    name: str = "zipf"
    m: int | None = ranged(64, ge=1, le=64)  #: bits per value
    s: float = ranged(1.5, gt=0)
    support: int | None = ranged(None, ge=1)  #: ranks (None: 2^20)
    drop_top: int = ranged(0, ge=0)


@dataclass
class ExponentialConfig(DatasetConfig):
    """Geometric rank frequencies f_j = scale (1 - scale)^(j-1) ([PEM] Sec. VI-A)."""

    name: str = "exponential"
    m: int | None = ranged(64, ge=1, le=64)
    scale: float = ranged(0.05, gt=0, lt=1)
    support: int | None = ranged(None, ge=1)


@dataclass
class RealDataConfig(DatasetConfig):
    """A real data set: the file at ``path``, or the calibrated surrogate when None."""

    path: str | None = None  #: the real file; checked before any trial runs


@dataclass
class KosarakConfig(RealDataConfig):
    """Kosarak click-stream (FIMI): one item per transaction."""

    name: str = "kosarak"
    m: int | None = ranged(None, ge=1, le=64)  #: bits per item id (None: the loader's 32)
    item_rule: str | None = None  #: which item of a transaction a user holds


@dataclass
class AOLConfig(RealDataConfig):
    """AOL queries, each user's first, cut to ``n_bytes`` ([PEM] Sec. VI-A)."""

    name: str = "aol"
    n_bytes: int | None = ranged(None, ge=1, le=512)  #: m = 8 n_bytes (6: 48 bits)


@dataclass
class URLConfig(RealDataConfig):
    """Frequent URLs cut to ``n_bytes`` ([PEM] Sec. VI-A)."""

    name: str = "url"
    n_bytes: int | None = ranged(None, ge=1, le=512)  #: m = 8 n_bytes (20: 160 bits)
    s: float | None = ranged(None, gt=0)  #: the surrogate's Zipf exponent
    q: float | None = ranged(None, ge=0)  #: its Zipf-Mandelbrot offset: (rank + q)^-s
    top: int | None = ranged(None, ge=1)  #: keep the most visited sites only


@dataclass
class PointConfig(DatasetConfig):
    """The harness's own noise-floor population: every user holds value 0 (oracle trials)."""

    name: str = "point"
    n: int | None = ranged(10_000, ge=1)


@dataclass
class BoundedConfig(DatasetConfig):
    """Real values in [-1, 1] for mean trials (:func:`ldp.datasets.synthetic.bounded_values`)."""

    name: str = "bounded"
    n: int | None = ranged(2000, ge=1)
    law: str = choice("uniform", BOUNDED_LAWS)  #: centre (all 0), ends (±1), uniform


DATASET_SCHEMAS: dict[str, type[DatasetConfig]] = {
    "zipf": ZipfConfig,
    "exponential": ExponentialConfig,
    "point": PointConfig,
    "bounded": BoundedConfig,
    "kosarak": KosarakConfig,
    "aol": AOLConfig,
    "url": URLConfig,
}


# -------------------------------------------------------------------------------- root
@dataclass
class TrialOptions:
    """What a trial measures beyond its protocol and data."""

    #: oracle trials: values are relabelled by frequency rank onto {0..d-1}; None: distinct
    domain_size: int | None = ranged(None, ge=2)
    #: oracle trials: which values' errors are recorded: top (k most frequent), all, absent
    track: str = choice("top", TRACKS)
    #: record one row per tracked value (oracle) or per true top-k value (heavy hitter)
    per_value: bool = False
    #: oracle trials: a consistency post-processing of ldp.postprocess (None: unbiased)
    postprocess: str | None = choice(None, POSTPROCESS_METHODS)
    #: oracle trials with engine=reports: also record the aggregator's seconds (server_seconds)
    time_server: bool = False
    #: longitudinal trials: τ, the collections from the same users (None: 1)
    rounds: int | None = ranged(None, ge=1, le=1000)
    #: longitudinal trials: ρ, the chance that a user redraws their value at each round after
    #: the first (from the population's distribution); 0: values never change
    change_prob: float = ranged(0.0, ge=0.0, le=1.0)


@dataclass
class Config:
    """The root config; its top-level names are the public override interface."""

    name: str = "custom"  #: results go to ``<results_dir>/<name>/``
    protocol: Any = MISSING  #: one of conf/protocol/*.yaml
    dataset: Any = MISSING  #: one of conf/dataset/*.yaml
    epsilon: float = ranged(1.0, gt=0, le=700)  #: privacy budget ε
    k: int = ranged(16, ge=1)  #: heavy hitters wanted / values tracked
    n_trials: int = ranged(10, ge=1)  #: trials per setting (indices 0 .. n_trials-1)
    n_jobs: int | None = None  #: joblib workers: None or -1 = all cores
    seed: int = ranged(0, ge=0)  #: the root seed (NumPy SeedSequence entropy)
    engine: str = choice("sampled", ENGINES)  #: sampled or reports
    results_dir: str = "results"  #: root of the results store
    format: str = choice("csv.gz", FORMATS)  #: part-file format
    progress: bool = True  #: show a progress bar
    batch_size: int | None = ranged(None, ge=1)  #: trials per part file (None: automatic)
    backend: str = choice("loky", BACKENDS)  #: joblib backend (dask: see docs/cluster.md)
    dask_scheduler: str | None = None  #: address of a running Dask scheduler
    rerun: bool = False  #: recompute the recorded trials of the settings (else: resume)
    #: estimate the run's time up front and warn above this many minutes (None: no estimate)
    warn_minutes: float | None = ranged(10.0, ge=0)
    options: TrialOptions = field(default_factory=TrialOptions)


#: Fields that change how a run goes but never what a trial computes: not in the key.
RUN_ONLY_FIELDS = (
    "name",
    "n_trials",
    "n_jobs",
    "results_dir",
    "format",
    "progress",
    "batch_size",
    "backend",
    "dask_scheduler",
    "rerun",
    "warn_minutes",
)


def register_configs() -> None:
    """Store the schemas in Hydra's ConfigStore (idempotent).

    Every registered protocol becomes a choice of the ``protocol`` group under its name in
    lower case (``protocol=olh``), from :func:`protocol_schema`; the files in
    ``conf/protocol/`` are presets that extend them (``defaults: [spm]``).  The data-set
    schemas live apart, in ``schema/dataset``, so that ``dataset=`` lists data sets only.
    """
    store = ConfigStore.instance()
    store.store(name="base_config", node=Config)
    for entry in registry.protocols().values():  # protocol=<name>: every registered one
        store.store(group="protocol", name=entry.name.lower(), node=protocol_schema(entry.name))
    for name, schema in DATASET_SCHEMAS.items():  # extended by conf/dataset/<name>.yaml
        store.store(group="schema/dataset", name=name, node=schema)
    from experiments.listing import help_template  # --help lists what the registry holds

    conf_dir = Path(__file__).resolve().parent.parent / "conf"
    store.store(
        group="hydra/help",
        name="ldp",
        node={"app_name": "ldp", "header": "", "footer": "", "template": help_template(conf_dir)},
    )


# --------------------------------------------------------------------------- checking
def _check_value(key: str, value: Any, meta: dict) -> None:
    if value is None:
        return
    if "registry" in meta:  # the name of a registered protocol of that kind
        try:
            registry.get(str(value), meta["registry"])
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
    _check_fields(config, Config)
    _check_fields(protocol, protocol_schema(protocol["name"]), "protocol.")
    _check_fields(dataset, DATASET_SCHEMAS[dataset_name], "dataset.")
    _check_rules(config)
    return config


def _check_rules(config: dict) -> None:
    """The checks that involve more than one field, or the outside world.

    A protocol's own ranges and its fit with the data (an η that fits m, k <= 2^m) are
    its class's checks, run on the real data by :func:`experiments.trials.preflight`.
    """
    protocol, dataset, options = config["protocol"], config["dataset"], config["options"]
    kind = registry.get(protocol["name"]).kind
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
