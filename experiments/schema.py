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
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

ENGINES = ("sampled", "reports")
FORMATS = ("csv.gz", "csv", "parquet")
BACKENDS = ("loky", "multiprocessing", "threading", "sequential", "dask")
TRACKS = ("top", "all", "absent")
TRIAL_KINDS = ("oracle", "heavy_hitter", "multiple_questions")
#: The trial kinds that run a frequency oracle (``protocol.name`` in ``ORACLES``).
ORACLE_KINDS = ("oracle", "multiple_questions")
HEAVY_HITTERS = ("PEM", "SPM", "MCM")


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
@dataclass
class ProtocolConfig:
    """Shared by every protocol: the class to build and how it is shown."""

    name: str = MISSING  #: the class: an oracle acronym (GRR, ..., OLH) or PEM, SPM, MCM
    #: which trial runs it: oracle | heavy_hitter | multiple_questions (an oracle)
    kind: str = choice(MISSING, TRIAL_KINDS)
    label: str | None = None  #: legend text in figures (default: ``name``)


@dataclass
class OracleConfig(ProtocolConfig):
    """A frequency oracle of USENIX'17 Table 1 (``ldp.oracles.ORACLES``)."""

    kind: str = choice("oracle", TRIAL_KINDS)
    g: int | None = ranged(None, ge=2)  #: OLH's hash range; None: ⌈e^ε + 1⌉
    theta: float | None = ranged(None, gt=0, le=1)  #: THE's θ; None: variance-optimal θ


@dataclass
class HeavyHitterConfig(ProtocolConfig):
    """Shared by the heavy-hitter protocols of the PEM paper (``ldp.heavy_hitters``).

    A None field is not passed to the class, which then uses its own default.
    """

    kind: str = choice("heavy_hitter", TRIAL_KINDS)
    oracle: str | None = None  #: the frequency oracle reported through (None: the default)
    threshold: float | None = ranged(None, gt=0, lt=1)  #: θ: threshold version (Sec. VI-B3)
    query_limit: int | None = ranged(None, ge=2)  #: oracle queries allowed (2^20)


@dataclass
class PEMProtocolConfig(HeavyHitterConfig):
    """PEM ([PEM] Sec. IV); every shape parameter None lets the optimizer choose."""

    name: str = "PEM"
    eta: int | None = ranged(None, ge=1)  #: η, bits added per step
    gamma: int | None = ranged(None, ge=0)  #: γ, bits of the first step (⌈log2 k⌉)
    etas: list[int] | None = ranged(None, ge=1)  #: η[i] per step (Fig. 3b)
    fractions: list[float] | None = ranged(None, gt=0, lt=1)  #: n[i]/n per step (Fig. 3c)
    candidate_sizes: list[int] | None = ranged(None, ge=1)  #: |C_i| per step
    assumed: str | None = None  #: the distribution the optimizer assumes (Fig. 8c)
    goal: str | None = choice(None, ("f1", "ncr"))  #: the optimizer's goal
    n_hint: int | None = ranged(None, ge=1)  #: users the optimizer plans for (None: n)


@dataclass
class _BaselineConfig(HeavyHitterConfig):
    """Shared by SPM and MCM: the two versions of [PEM] Sec. VI-A and their knobs."""

    variant: str | None = choice(None, ("original", "improved"))  #: sets every None knob
    budget: str | None = choice(None, ("split", "partition"))  #: split ε or partition users
    output: str | None = choice(None, ("top_k", "threshold"))  #: what is released
    significance: float | None = ranged(None, gt=0, lt=1)  #: level of the threshold test
    final_fraction: float | None = ranged(None, gt=0, lt=1)  #: users of the final test
    value_share: float | None = ranged(None, gt=0, lt=1)  #: share of ε for π(v) (split)


@dataclass
class SPMProtocolConfig(_BaselineConfig):
    """SPM ([PEM] Sec. III-C): segments and segment pairs."""

    name: str = "SPM"
    #: bits per segment: an integer >= 1, or "auto" (the longest under the query limit)
    segment_bits: Any = field(default=None, metadata={"int_or": ("auto",)})


@dataclass
class MCMProtocolConfig(_BaselineConfig):
    """MCM ([PEM] Sec. III-D): hashing into channels, majority vote per bit."""

    name: str = "MCM"
    #: number of channels: an integer >= 1, "sqrt_n" (original) or "k1.5" (improved)
    channels: Any = field(default=None, metadata={"int_or": ("sqrt_n", "k1.5")})
    block_bits: int | None = ranged(None, ge=1)  #: bits per reported block


PROTOCOL_SCHEMAS: dict[str, type[ProtocolConfig]] = {
    "PEM": PEMProtocolConfig,
    "SPM": SPMProtocolConfig,
    "MCM": MCMProtocolConfig,
}


def protocol_schema(name: str) -> type[ProtocolConfig]:
    """The schema of protocol ``name``; a ConfigError naming ``protocol.name`` if unknown."""
    from ldp.oracles import ORACLES

    if name in ORACLES:
        return OracleConfig
    if name in PROTOCOL_SCHEMAS:
        return PROTOCOL_SCHEMAS[name]
    known = ", ".join([*ORACLES, *PROTOCOL_SCHEMAS])
    raise ConfigError(f"protocol.name: unknown protocol {name!r}; known: {known}")


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
    top: int | None = ranged(None, ge=1)  #: keep the most visited sites only


@dataclass
class PointConfig(DatasetConfig):
    """The harness's own noise-floor population: every user holds value 0 (oracle trials)."""

    name: str = "point"
    n: int | None = ranged(10_000, ge=1)


def dataset_bits(dataset: dict[str, Any]) -> int | None:
    """m, the bits per value, when the config fixes it (else the loader decides)."""
    if dataset.get("m") is not None:
        return int(dataset["m"])
    if dataset.get("n_bytes") is not None:
        return 8 * int(dataset["n_bytes"])
    return None


DATASET_SCHEMAS: dict[str, type[DatasetConfig]] = {
    "zipf": ZipfConfig,
    "exponential": ExponentialConfig,
    "point": PointConfig,
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
)


def register_configs() -> None:
    """Store the schemas in Hydra's ConfigStore (idempotent)."""
    store = ConfigStore.instance()
    store.store(name="base_config", node=Config)
    store.store(group="protocol", name="base_oracle", node=OracleConfig)
    store.store(group="protocol", name="base_pem", node=PEMProtocolConfig)
    store.store(group="protocol", name="base_spm", node=SPMProtocolConfig)
    store.store(group="protocol", name="base_mcm", node=MCMProtocolConfig)
    store.store(group="dataset", name="base_kosarak", node=KosarakConfig)
    store.store(group="dataset", name="base_aol", node=AOLConfig)
    store.store(group="dataset", name="base_url", node=URLConfig)
    store.store(group="dataset", name="base_zipf", node=ZipfConfig)
    store.store(group="dataset", name="base_exponential", node=ExponentialConfig)
    store.store(group="dataset", name="base_point", node=PointConfig)


# --------------------------------------------------------------------------- checking
def _check_value(key: str, value: Any, meta: dict) -> None:
    if value is None:
        return
    if "int_or" in meta:
        ok = (isinstance(value, int) and not isinstance(value, bool) and value >= 1) or (
            value in meta["int_or"]
        )
        if not ok:
            raise ConfigError(
                f"{key}: must be an integer >= 1 or one of "
                f"{', '.join(meta['int_or'])}; got {value!r}"
            )
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
    """The checks that involve more than one field, or the outside world."""
    from ldp.oracles import ORACLES

    protocol, dataset, options = config["protocol"], config["dataset"], config["options"]
    expected = "oracle" if protocol["name"] in ORACLES else "heavy_hitter"
    allowed = ORACLE_KINDS if expected == "oracle" else (expected,)
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
    if dataset["name"] == "point" and expected != "oracle":
        raise ConfigError("dataset.name: 'point' serves oracle trials only")
    if config["format"] == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise ConfigError("format: parquet needs pyarrow (pip install pyarrow); use csv.gz")
    if config["backend"] == "dask" and importlib.util.find_spec("distributed") is None:
        raise ConfigError("backend: dask needs dask.distributed (pip install 'dask[distributed]')")
    if expected == "oracle":
        if (
            options["track"] == "absent"
            and dataset["name"] != "point"
            and not options["domain_size"]
        ):
            raise ConfigError(
                "options.track: 'absent' needs options.domain_size above the "
                "number of distinct values"
            )
        return
    if protocol["oracle"] is not None and protocol["oracle"] not in ORACLES:
        raise ConfigError(
            f"protocol.oracle: unknown oracle {protocol['oracle']!r}; known: {', '.join(ORACLES)}"
        )
    if dataset_bits(dataset) is not None:
        _check_fits_m(protocol, config["k"], dataset_bits(dataset))


def _check_fits_m(protocol: dict, k: int, m: int) -> None:
    """PEM's shape must fit values of m bits ([PEM] Sec. IV-A: γ + Σ η[i] = m)."""
    if k > 2 ** min(m, 62):
        raise ConfigError(f"k: {k} heavy hitters cannot exist among 2^{m} values (dataset.m)")
    if protocol["name"] != "PEM":
        bits = protocol.get("segment_bits")
        if isinstance(bits, int) and bits > m:
            raise ConfigError(
                f"protocol.segment_bits: must be <= dataset.m = {m}, got {protocol['segment_bits']}"
            )
        return
    gamma = protocol["gamma"]
    if gamma is None:
        gamma = min(m - 1, math.ceil(math.log2(k))) if k > 1 else 0
    if gamma >= m:
        raise ConfigError(f"protocol.gamma: must be < dataset.m = {m}, got {gamma}")
    if protocol["eta"] is not None and protocol["eta"] > m - gamma:
        raise ConfigError(
            f"protocol.eta: must be <= m - gamma = {m} - {gamma} = {m - gamma} "
            f"(dataset.m = {m}), got {protocol['eta']}"
        )
    etas = protocol["etas"]
    if etas is not None and gamma + sum(etas) != m:
        raise ConfigError(
            f"protocol.etas: gamma + sum(etas) must equal dataset.m = {m}, "
            f"got {gamma} + {sum(etas)}"
        )
    steps = len(etas) if etas is not None else None
    for name in ("fractions", "candidate_sizes"):
        value = protocol[name]
        if value is not None and steps is not None and len(value) != steps:
            raise ConfigError(
                f"protocol.{name}: needs one entry per step ({steps}), got {len(value)}"
            )
    if protocol["fractions"] is not None and not math.isclose(sum(protocol["fractions"]), 1.0):
        raise ConfigError(f"protocol.fractions: must sum to 1, got {sum(protocol['fractions'])}")
