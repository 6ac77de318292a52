"""The gallery page ``index.md``: each figure with its caption, command, config, data and claim."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from experiments import columns as col
from experiments.figures.spec import FigureSpec
from experiments.provenance import short_commit
from experiments.settings import Setting


@dataclass(frozen=True)
class Entry:
    """One drawn figure and what the gallery says about it."""

    spec: FigureSpec
    files: list[Path]
    settings: Sequence[Setting]
    table: pd.DataFrame
    overrides: tuple[str, ...]  #: overrides beyond ``experiment=<name>`` (quick mode, dirs)


def _number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _value_text(value: str) -> str:
    number = _number(value)
    if number is None:
        return value
    return str(int(number)) if number.is_integer() else f"{number:g}"


def _resolved(config: dict, key: str) -> object:
    """The value at a dotted ``key`` of a resolved config (None if absent)."""
    node: object = config
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _grid(settings: Sequence[Setting]) -> str:
    """Each swept field with every value the settings really take: the swept ones and, for a
    figure reading several configs, the value (or group choice) a config fixes (Fig. 2's
    m = 64 comes from the config that sweeps n, Fig. 5's protocol spm from pem_fig5_spm).
    2 and 2.0 are one value; numbers in increasing order."""
    axes: dict[str, dict[str, None]] = {}
    for setting in settings:
        for text in setting.overrides:
            key, _, value = text.partition("=")
            axes.setdefault(key, {})[_value_text(value)] = None
    for key, values in axes.items():
        for setting in settings:
            if any(o.partition("=")[0] == key for o in setting.overrides):
                continue
            value = _resolved(setting.config, key)
            if isinstance(value, dict):  # a config group: the choice a config fixes (spm)
                value = setting.choices.get(key)
            if value is not None and not isinstance(value, dict | list):
                values[_value_text(str(value))] = None
    parts = []
    for key, values in axes.items():
        shown = list(values)
        if all(_number(value) is not None for value in shown):
            shown.sort(key=float)
        parts.append(f"{key} ∈ {{{', '.join(shown)}}}")
    return "; ".join(parts) or "-"


def render_entry(entry: Entry) -> str:
    """The Markdown block of one figure."""
    spec, table = entry.spec, entry.table
    png, *pdf = (path.name for path in entry.files)  # no PDF under --quick
    command = "; ".join(
        " ".join(
            [
                "python -m experiments.run",
                f"experiment={experiment}",
                *(o for o in entry.overrides if not o.startswith("--")),
            ]
        )
        for experiment in spec.experiments
    )
    directories = [o.partition("=")[2] for o in entry.overrides if o.startswith("results_dir=")]
    results_dir = f" --results-dir {directories[0]}" if directories else ""
    configs = ", ".join(f"`conf/experiment/{experiment}.yaml`" for experiment in spec.experiments)
    sources = ", ".join(sorted(table[col.DATA_SOURCE].astype(str).unique())) or "-"
    datasets = ", ".join(sorted(table[col.DATASET].astype(str).unique()))
    trials = table.groupby(col.CONFIG_HASH)[col.TRIAL].nunique()
    commits = ", ".join(sorted({short_commit(c) for c in table[col.GIT_COMMIT].astype(str)}))
    return "\n".join(
        [
            f"## {spec.title}",
            "",
            f"![{spec.title}]({png})",
            "",
            f"*{spec.caption}*" + (f" ([PDF]({pdf[0]}))" if pdf else ""),
            "",
            f"- **Paper claim checked:** {spec.claim}",
            f"- **Command:** `{command}`, then `python -m experiments.figures"
            f"{' --quick' if '--quick' in entry.overrides else ''}{results_dir}`",
            f"- **Config:** {configs}; grid: {_grid(entry.settings)}",
            f"- **Data:** {datasets} (source: {sources})",
            f"- **Trials:** {len(trials)} settings, "
            f"{trials.min() if trials.min() == trials.max() else f'{trials.min()}–{trials.max()}'}"
            " trials each, "
            f"{len(table)} rows; code commit {commits}",
            "",
        ]
    )


def existing_blocks(path: Path) -> dict[str, str]:
    """The figure blocks of an existing ``index.md``, by figure name (its image file)."""
    if not path.exists():
        return {}
    blocks: dict[str, str] = {}
    for block in re.split(r"(?m)^(?=## )", path.read_text())[1:]:
        # the image's file, whatever brackets its alt text (the title) holds: "[-1, 1]"
        image = re.search(r"^!\[.*\]\(([^)/\s]+)\.png\)$", block, re.MULTILINE)
        if image:
            blocks[image.group(1)] = block.rstrip("\n") + "\n"
    return blocks


def write_gallery(
    directory: Path,
    entries: Sequence[Entry],
    *,
    quick: bool,
    order: Sequence[str] | None = None,
) -> Path:
    """Write ``<directory>/index.md`` listing every entry; return its path.

    With ``order`` (every figure's name, in gallery order) the file is updated, not
    replaced: a figure not in ``entries`` keeps the block the file already has (``--only``,
    or a figure without results yet).
    """
    today = _dt.date.today().isoformat()
    scale = (
        "quick mode (few trials: shapes only, not the paper's precision)"
        if quick
        else "the trial counts each figure states"
    )
    head = [
        "# Figures",
        "",
        f"Generated by `python -m experiments.figures{' --quick' if quick else ''}` on "
        f"{today}, {scale}. Each figure reads only its experiment's results table; "
        "analytical curves come from `ldp.theory`.",
        "",
    ]
    path = directory / "index.md"
    directory.mkdir(parents=True, exist_ok=True)
    drawn = {entry.spec.name: render_entry(entry) for entry in entries}
    if order is not None:
        kept = existing_blocks(path)
        blocks = [drawn.get(name) or kept.get(name) for name in order]
        blocks = [block for block in blocks if block]
    else:
        blocks = list(drawn.values())
    path.write_text("\n".join(head + blocks))
    return path
