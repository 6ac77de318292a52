"""Structured-config schemas of the harness: every field's type and range.

Hydra checks *types* while composing (the dataclasses below are stored in its
``ConfigStore``: ``base_config`` for the root, ``protocol/base_*`` and ``dataset/base_*``
for the group files to extend).  :func:`experiments.check.check_config` then checks
*ranges* (the ``metadata`` of each field) and the rules that tie fields together (an η
that fits m, a real-data file that exists), so a bad value fails before any trial runs,
with one line naming the field: ``epsilon: must be > 0, got -1.0``.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass, field, make_dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

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
    "oracle_frontier",
    "set",
)
#: The trial kinds that run a frequency oracle (``oracle_frontier``: every registered one).
ORACLE_KINDS = ("oracle", "multiple_questions", "rappor_decode", "longitudinal", "oracle_frontier")
#: The protocol node of every ``oracle_frontier`` setting: its trial builds every registered
#: oracle with its defaults, so the node names none of them (``*`` is no protocol's name);
#: each row names the oracle it measures in its metric (``sq_error_n.<NAME>``, ...).
FRONTIER_PROTOCOL = {"name": "*", "kind": "oracle_frontier", "label": "every registered oracle"}


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
KIND_TRIALS = {
    "oracle": ORACLE_KINDS,
    "heavy_hitter": ("heavy_hitter",),
    "mean": ("mean",),
    "set": ("set",),
}


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
    trial by :func:`experiments.preflight.preflight`.
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


@dataclass
class KosarakSetsConfig(RealDataConfig):
    """Kosarak as transactions: each user holds a set of items (set trials)."""

    name: str = "kosarak_sets"


@dataclass
class PlantedConfig(DatasetConfig):
    """Synthetic item sets with planted frequent itemsets (set trials;
    :func:`ldp.datasets.synthetic_sets`)."""

    name: str = "planted"
    n: int | None = ranged(100_000, ge=1)
    domain_size: int | None = ranged(None, ge=2)  #: items {0..d-1} (None: the loader's)
    mean_size: float | None = ranged(None, gt=0)  #: background items per user, on average


#: The data sets of item sets: the only ones set trials run on, and only they.
SET_DATASETS = ("kosarak_sets", "planted")

DATASET_SCHEMAS: dict[str, type[DatasetConfig]] = {
    "zipf": ZipfConfig,
    "exponential": ExponentialConfig,
    "point": PointConfig,
    "bounded": BoundedConfig,
    "kosarak": KosarakConfig,
    "aol": AOLConfig,
    "url": URLConfig,
    "kosarak_sets": KosarakSetsConfig,
    "planted": PlantedConfig,
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
    #: heavy-hitter trials: trial 0 also records the protocol's refined identification
    #: model as Eq. (4)'s scores (refined.f1, refined.ncr), once per setting
    model: bool = False
    #: longitudinal trials: τ, the collections from the same users (None: 1)
    rounds: int | None = ranged(None, ge=1, le=1000)
    #: longitudinal trials: ρ, the chance that a user redraws their value at each round after
    #: the first (from the population's distribution); 0: values never change
    change_prob: float = ranged(0.0, ge=0.0, le=1.0)


@dataclass
class FigureConfig:
    """The paper comparison that a figure drawn from this experiment reproduces.

    Set in the experiment's own yaml (``figure:``) and read by its figure module through
    :func:`experiments.results.figure_config`, so a figure's code names no protocol.  Each
    list holds registered protocol names (any case; kept in the registry's spelling).  Not
    part of any setting: it is in :data:`RUN_ONLY_FIELDS`, so it never changes a key.
    """

    #: the protocols the figure reproduces, in legend order
    series: typing.List[str] = field(  # noqa: UP006 (OmegaConf wants typing.List)
        default_factory=list, metadata={"registry": None}
    )
    #: the reference of the comparison: a closed-form line, a ratio's denominator
    reference: typing.List[str] = field(  # noqa: UP006
        default_factory=list, metadata={"registry": None}
    )
    #: the protocols the figure's claims are about (compared with the reference)
    subjects: typing.List[str] = field(  # noqa: UP006
        default_factory=list, metadata={"registry": None}
    )


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
    figure: FigureConfig = field(default_factory=FigureConfig)  #: what its figure compares


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
    "figure",
)


#: The protocol schemas the ConfigStore holds, as :func:`register_configs` last stored them.
_STORED: dict[str, dict[str, type]] = {}


def register_configs() -> None:
    """Store the schemas in Hydra's ConfigStore (idempotent).

    Every registered protocol becomes a choice of the ``protocol`` group under its name in
    lower case (``protocol=olh``), from :func:`protocol_schema`; the files in
    ``conf/protocol/`` are presets that extend them (``defaults: [spm]``).  The data-set
    schemas live apart, in ``schema/dataset``, so that ``dataset=`` lists data sets only.
    """
    from omegaconf import OmegaConf

    from experiments.names import log_root, plain_name

    # Hydra's run and sweep directories name the experiment: a name such as ../../etc is
    # refused while they are resolved, before Hydra creates them (conf/config.yaml); a
    # results directory that cannot be written sends Hydra's logs to the temp directory
    OmegaConf.register_new_resolver("plain_name", plain_name, replace=True)
    OmegaConf.register_new_resolver("log_root", log_root, replace=True)
    store = ConfigStore.instance()
    schemas = {entry.name: protocol_schema(entry.name) for entry in registry.protocols().values()}
    held = store.repo.get("protocol", {})
    if _STORED.get("schemas") == schemas and all(f"{n.lower()}.yaml" in held for n in schemas):
        return  # stored already: storing again costs a tenth of a second
    store.store(name="base_config", node=Config)
    for name, schema in schemas.items():  # protocol=<name>: every registered one
        store.store(group="protocol", name=name.lower(), node=schema)
    for name, schema in DATASET_SCHEMAS.items():  # extended by conf/dataset/<name>.yaml
        store.store(group="schema/dataset", name=name, node=schema)
    from experiments.listing import help_template  # --help lists what the registry holds

    conf_dir = Path(__file__).resolve().parent.parent / "conf"
    store.store(
        group="hydra/help",
        name="ldp",
        node={"app_name": "ldp", "header": "", "footer": "", "template": help_template(conf_dir)},
    )
    _STORED["schemas"] = schemas
