"""What ``python -m experiments.run --help`` lists: every protocol, preset, data set and
experiment, read from the registry (:mod:`ldp.registry`) and ``conf/``.

A plug-in protocol (entry point ``ldp.protocols``) shows up here as soon as its package
is installed, with its parameters and defaults as its class declares them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ldp import registry

TITLES = {
    "oracle": "Frequency oracles",
    "heavy_hitter": "Heavy-hitter protocols",
    "mean": "Mean protocols, values in [-1, 1]",
    "set": "Protocols over users' item sets (kosarak_sets, planted)",
}


def _default(spec: dataclasses.Field) -> str:
    if spec.default is not dataclasses.MISSING:
        value = spec.default
    elif spec.default_factory is not dataclasses.MISSING:
        value = spec.default_factory()
    else:
        return "(required)"
    if isinstance(value, type):
        return getattr(value, "name", None) or value.__name__
    return "null" if value is None else str(value)


def _first_comment(path: Path) -> str:
    """The first line of a config file's header comment."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") and not line.startswith("# @package"):
            return line.lstrip("# ").strip()
    return ""


def protocols_text() -> str:
    """One line per registered protocol: choice, label, source, parameters=defaults."""
    lines = []
    for kind, title in TITLES.items():
        lines.append(f"{title} (protocol=<choice>; each parameter as protocol.<name>=...):")
        for entry in registry.protocols(kind).values():
            params = " ".join(
                f"{spec.name}={_default(spec)}" for spec in registry.parameters(entry.cls)
            )
            origin = "" if entry.source.startswith("ldp.") else f"  [{entry.source}]"
            lines.append(f"  {entry.name.lower():<10} {params or '(no parameters)'}{origin}")
        lines.append("")
    return "\n".join(lines)


def files_text(conf_dir: Path, group: str, title: str) -> str:
    """One line per config file of a group, with its header comment's first line."""
    lines = [f"{title} ({group}=<choice>):"]
    for path in sorted((conf_dir / group).glob("*.yaml")):
        lines.append(f"  {path.stem:<26} {_first_comment(path)}"[:110])
    return "\n".join(lines) + "\n"


def help_template(conf_dir: Path) -> str:
    """Hydra's help template for the app (``hydra/help=ldp``)."""
    text = "\n".join(
        [
            "python -m experiments.run [experiment=NAME] [protocol=P] [dataset=D] "
            "[epsilon=E] [k=K] [n_trials=N] [engine=sampled|reports] [key=value ...]",
            "",
            protocols_text(),
            files_text(conf_dir, "protocol", "Protocol presets"),
            files_text(conf_dir, "dataset", "Data sets"),
            files_text(conf_dir, "experiment", "Experiments (one per paper figure)"),
            "== Config (with your overrides) ==",
            "$CONFIG",
        ]
    )
    return text.replace("${", "\\${")  # no interpolation in the listing's text
