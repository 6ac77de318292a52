"""Settings: checked configs, their result key, and an experiment's grid expanded in-process.

A *setting* is one fully resolved config; a trial is (setting, trial index).  The key of a
setting hashes only what changes a trial's numbers (:data:`experiments.schema.RUN_ONLY_FIELDS`
and display labels are left out), so ``n_jobs``, ``results_dir`` or the progress bar never
change which trials count as done.  Nulls are left out too (a null is the class's default),
and the protocol node holds only its own protocol's fields, so a parameter added to one
protocol does not re-key the others.  A setting that reads a real data file is keyed by
the file's content instead of its path (:mod:`experiments.datafiles`).

An experiment config lists its grid in ``hydra.sweeper.params`` (Hydra's sweep syntax).
Under ``-m`` Hydra's sweeper turns the grid into jobs; without ``-m`` :func:`expand` turns
it into settings that share one worker pool.  Both compose each point the same way, so a
point has the same key either way and either run resumes the other.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hydra import compose
from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from experiments.check import check_config
from experiments.codedigest import code_digest
from experiments.datafiles import data_source
from experiments.provenance import plugin_of
from experiments.schema import RUN_ONLY_FIELDS, ConfigError
from experiments.seeding import STREAMS


def _the_store_itself(store: ConfigStore, memo: dict) -> ConfigStore:
    """``copy.deepcopy`` of the ConfigStore singleton: the store itself.

    Hydra deep-copies its config repository at every composition, to keep the original's
    list of sources unchanged, and with it the store those sources read, which holds every
    registered protocol's schema: a quarter of a composition's time.  The store is a
    singleton that nothing changes while a config is composed, so its copy would only
    ever equal it."""
    return store


ConfigStore.__deepcopy__ = _the_store_itself  # type: ignore[attr-defined]

#: Display-only fields inside groups, left out of the key.
LABEL_FIELDS = ("protocol.label", "dataset.label")


@dataclass(frozen=True)
class Setting:
    """One checked configuration and its key."""

    config: dict[str, Any]  #: the checked, resolved config (plain containers)
    key: str  #: hash of :func:`result_config`: names the setting in the results store
    overrides: tuple[str, ...] = ()  #: the grid point that made it, e.g. ("epsilon=2",)
    data: str = ""  #: which data it reads, one line (e.g. "kosarak: calibrated surrogate (...)")
    #: the config group choices it was composed with, e.g. {"protocol": "spm"} (from expand)
    choices: dict[str, str] = field(default_factory=dict)
    #: digest of the code that computes its rows (:func:`experiments.codedigest.code_digest`)
    code_digest: str = ""
    #: that code's files: SHA-256 per module name (to name the files an edit changed)
    code_files: dict[str, str] = field(default_factory=dict)
    #: the key without the code digest: the same config under any code
    base_key: str = ""

    @property
    def params(self) -> dict[str, Any]:
        """The parameters as table columns (dotted names): what the key hashes, plus labels."""
        kept = {k: v for k, v in self.config.items() if k not in RUN_ONLY_FIELDS}
        return flatten(kept)


def _without_nulls(node: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _without_nulls(value) if isinstance(value, dict) else value
        for key, value in node.items()
        if value is not None
    }


def result_config(config: dict[str, Any]) -> dict[str, Any]:
    """What the key hashes: ``config`` without run-only fields, labels and nulls.

    A null means "the default", so a parameter added to a protocol (null in every existing
    config) does not re-key the settings that do not use it.
    """
    kept = {key: value for key, value in config.items() if key not in RUN_ONLY_FIELDS}
    for dotted in LABEL_FIELDS:
        group, name = dotted.split(".")
        if isinstance(kept.get(group), dict):
            kept[group] = {k: v for k, v in kept[group].items() if k != name}
    return _without_nulls(kept)


def setting_key(
    config: dict[str, Any],
    data_id: str | None = None,
    plugin: dict[str, str] | None = None,
    code: str | None = None,
) -> str:
    """16 hex digits of the SHA-256 of the canonical JSON of :func:`result_config`.

    ``data_id`` is the content id of the real data file the setting reads
    (:func:`experiments.datafiles.data_source`); it replaces ``dataset.path`` in the key.
    ``plugin`` (:func:`experiments.provenance.plugin_of`) is the distribution and version of a
    plug-in protocol: another version of the plug-in is another setting.  ``code`` is the
    digest of the code that computes the rows (:func:`experiments.codedigest.code_digest`):
    another code is another setting.  Without it the key is the setting's *base key*, the
    same under any code (and the key results were stored under before code digests).
    """
    kept = result_config(config)
    if data_id is not None:
        kept["dataset"] = {k: v for k, v in kept["dataset"].items() if k != "path"}
        kept["dataset"]["content"] = data_id
    kept["streams"] = STREAMS  # the seeding scheme: another one draws other numbers
    if plugin and plugin.get("plugin"):
        kept["protocol"] = {**kept["protocol"], "plugin": dict(plugin)}
    if code:
        kept["code"] = code
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def flatten(node: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts to dotted keys; list values become JSON text (one table cell each)."""
    flat: dict[str, Any] = {}
    for key, value in node.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, list | tuple):
            flat[name] = json.dumps(list(value))
        else:
            flat[name] = value
    return flat


def make_setting(cfg: DictConfig | dict[str, Any], overrides: Sequence[str] = ()) -> Setting:
    """Check a composed config and wrap it as a :class:`Setting`."""
    config = check_config(cfg)
    try:
        data_id, data = data_source(config["dataset"])
    except (OSError, ValueError) as error:
        raise ConfigError(f"dataset: {str(error).splitlines()[0]}") from None
    plugin = plugin_of(config["protocol"])
    digest, files = code_digest(config)
    return Setting(
        config=config,
        key=setting_key(config, data_id, plugin, digest),
        overrides=tuple(overrides),
        data=data,
        code_digest=digest,
        code_files=files,
        base_key=setting_key(config, data_id, plugin),
    )


@functools.lru_cache(maxsize=4096)
def _parse(override: str):
    return OverridesParser.create().parse_override(override)


def _key_of(override: str) -> str:
    return _parse(override).key_or_group


def grid_points(params: dict[str, Any] | None, overrides: Sequence[str]) -> list[list[str]]:
    """The grid of ``hydra.sweeper.params`` as override lists, one per point.

    Keys also set in ``overrides`` (the command line) are left out of the grid: the command
    line wins, as it does under Hydra's own sweeper.  An empty grid gives ``[]``.
    """
    if not params:
        return []
    fixed = {_key_of(text) for text in overrides}
    parser = OverridesParser.create()
    axes: list[list[str]] = []
    for key, value in params.items():
        if key in fixed:
            continue
        parsed = parser.parse_override(f"{key}={value}")
        if parsed.is_sweep_override():
            values = list(parsed.sweep_string_iterator())
        else:
            values = [parsed.get_value_element_as_str()]
        axes.append([f"{key}={item}" for item in values])
    return [list(point) for point in itertools.product(*axes)] if axes else []


def _compose(config_name: str, overrides: list[str], hydra: bool = False) -> DictConfig:
    try:
        return compose(config_name=config_name, overrides=overrides, return_hydra_config=hydra)
    except (OmegaConfBaseException, ValueError) as error:
        if isinstance(error, ConfigError):
            raise
        line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise ConfigError(f"{' '.join(overrides)}: {line}") from None
    except Exception as error:  # hydra's composition errors
        if type(error).__module__.startswith("hydra"):
            line = str(error).strip().splitlines()[0]
            raise ConfigError(f"config: {line}") from None
        raise


def _is_group(key: str) -> bool:
    """Whether ``key`` names a config group (protocol, dataset, ...) rather than a value."""
    from hydra.core.global_hydra import GlobalHydra

    if "." in key or key.startswith(("+", "~")):
        return False
    loader = GlobalHydra.instance().config_loader()
    return bool(loader.get_group_options(key))


def _apply(template: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A copy of ``template`` (a plain config) with value overrides set at dotted keys.

    Values are parsed as Hydra parses them; the schema types them in ``check_config``.
    """
    node = copy.deepcopy(template)
    for text in overrides:
        parsed = _parse(text)
        *path, last = parsed.key_or_group.split(".")
        target = node
        for part in path:
            if not isinstance(target.get(part), dict):
                raise ConfigError(f"{parsed.key_or_group}: no such field")
            target = target[part]
        if last not in target:
            raise ConfigError(f"{parsed.key_or_group}: no such field (a grid axis must name one)")
        target[last] = parsed.value()
    return node


def expand(config_name: str, overrides: Sequence[str], grid: Sequence[str] = ()) -> list[Setting]:
    """Every setting of the experiment chosen by ``overrides`` (needs Hydra initialised).

    Composes ``config_name`` with ``overrides``, reads its grid from
    ``hydra.sweeper.params``, and builds each point as ``overrides + point`` would compose:
    group choices (``protocol=...``) by composing once per distinct choice, plain values
    (``epsilon=...``) by applying them to a copy (composing every point costs ~0.1 s).
    ``grid`` holds axes ``key=<sweep>`` (e.g. ``epsilon=1,4``) that replace or add an
    axis of that grid.  Every setting is checked before any is returned, so one bad point
    stops the run before a trial starts.  Duplicate points (same key) are kept once.
    """
    overrides = list(overrides)
    base = _compose(config_name, overrides, hydra=True)
    sweeper = base.hydra.sweeper
    params = OmegaConf.to_container(sweeper.params) if sweeper.get("params") else {}
    for text in grid:
        key, _, values = text.partition("=")
        params[key] = values
    points = grid_points(params, overrides)
    chosen = {str(g): str(c) for g, c in base.hydra.runtime.choices.items() if g in base and c}
    if not points:
        return [replace(make_setting(base, ()), choices=chosen)]
    groups = {_key_of(text) for text in points[0] if _is_group(_key_of(text))}
    # a grid of plain values only: its one composition is the base's, without Hydra's node
    composed: dict[tuple[str, ...], dict[str, Any]] = {}
    if not groups:
        composed[()] = OmegaConf.to_container(base, resolve=False)
        del composed[()]["hydra"]
    settings: dict[str, Setting] = {}
    for point in points:
        choice = tuple(text for text in point if _key_of(text) in groups)
        if choice not in composed:
            cfg = _compose(config_name, overrides + list(choice))
            composed[choice] = OmegaConf.to_container(cfg, resolve=False)
        values = [text for text in point if _key_of(text) not in groups]
        setting = make_setting(_apply(composed[choice], values), point)
        picked = dict(text.split("=", 1) for text in choice)
        setting = replace(setting, choices={**chosen, **picked})
        settings.setdefault(setting.key, setting)
    return list(settings.values())
