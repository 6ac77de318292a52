"""Reading any results directory and choosing rows of it: what ``plot`` and ``summarize`` share.

A *results directory* is either one experiment's directory (``<results_dir>/<name>``,
holding ``parts/``) or a results root holding several (``results/``): :func:`load_results`
reads every experiment it finds through :class:`~experiments.store.ResultsStore` (checked
parts only; a corrupt part is named on stderr and left out).

Columns are named as the table names them (``protocol.name``, ``epsilon``,
``options.domain_size``) or by a short name: the ones of
:data:`experiments.tables.SHORT` (``protocol``, ``eps``, ``d``, ``dataset``) and any
unambiguous last part of a dotted name (``domain_size``, ``n_users``).  A filter
(:func:`parse_where`) is ``key=a,b`` (one of), ``key!=a``, ``key>=v``, ``key<=v``,
``key>v`` or ``key<v``; values compare as numbers where the column is numeric.  An
unknown column is a :class:`SelectionError` naming the known ones.
"""

from __future__ import annotations

import operator
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from experiments.store import EFFECTIVE, ROW_KEY, CorruptPartWarning, ResultsStore
from experiments.tables import META_COLUMNS, SHORT, number

#: Short names of common columns (the ones ``summarize`` prints), to the column.
ALIASES = {short: column for column, short in SHORT.items()}
#: Metric aliases: what a user may call a recorded metric.
METRIC_ALIASES = {"mse": "sq_error_n", "variance": "sq_error_n"}

OPERATORS: dict[str, Callable[[object, object], object]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}
_WHERE = re.compile(r"^\s*([^<>=!\s]+)\s*(>=|<=|!=|==|=|>|<)\s*(.*?)\s*$")


class SelectionError(ValueError):
    """A results directory, column, metric or filter that cannot be used (one line)."""


@dataclass(frozen=True)
class Where:
    """One filter: ``column op value`` (``=`` takes a comma-separated list: one of)."""

    column: str
    op: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.column}{self.op}{','.join(self.values)}"


def parse_where(text: str) -> Where:
    """``"protocol=OLH,MyPlugin"`` or ``"epsilon>=1"`` as a :class:`Where`."""
    match = _WHERE.match(text)
    if match is None or not match.group(3):
        raise SelectionError(
            f"--where {text!r}: expected KEY=a,b, KEY!=v, KEY>=v, KEY<=v, KEY>v or KEY<v"
        )
    column, op, value = match.groups()
    op = "=" if op == "==" else op
    values = tuple(v.strip() for v in value.split(",")) if op == "=" else (value,)
    return Where(column, op, values)


def experiment_dirs(results_dir: str | Path) -> list[Path]:
    """The experiment directories of ``results_dir`` (itself, if it is one)."""
    root = Path(results_dir)
    if not root.is_dir():
        raise SelectionError(f"results directory {str(root)!r} does not exist")
    if (root / "parts").is_dir():
        return [root]
    found = sorted(p for p in root.iterdir() if (p / "parts").is_dir())
    if not found:
        raise SelectionError(
            f"no results under {str(root)!r} (an experiment's directory holds parts/; "
            "run python -m experiments.run first)"
        )
    return found


def load_results(results_dir: str | Path) -> pd.DataFrame:
    """Every checked row of every experiment under ``results_dir``, one tidy table.

    Corrupt parts are named on stderr and left out (:meth:`ResultsStore.load`); rows of
    settings a later run recomputed under other code are kept (their ``code_digest``
    differs, so no point pools them with current rows) and counted on stderr.
    """
    tables = []
    for directory in experiment_dirs(results_dir):
        store = ResultsStore(directory.parent, directory.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CorruptPartWarning)
            table, corrupt = store.load()
        for message in corrupt:
            print(f"warning: corrupt results part excluded: {message}", file=sys.stderr)
        if not table.empty:
            replaced = set(store.superseded()) & set(table["config_hash"].astype(str))
            if replaced:
                print(
                    f"warning: {directory.name}: {len(replaced)} settings hold rows computed "
                    "by code a later run replaced (stale; code_digest tells them apart)",
                    file=sys.stderr,
                )
            tables.append(table)
    if not tables:
        raise SelectionError(f"no results rows under {str(results_dir)!r}")
    table = pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]
    if len(tables) > 1:
        table = table.drop_duplicates(subset=[c for c in ROW_KEY if c in table.columns])
    return table


def resolve(table: pd.DataFrame, name: str) -> str:
    """The table's column for ``name`` (exact, an alias, or a unique dotted suffix)."""
    if name in table.columns:
        return name
    alias = ALIASES.get(name)
    if alias in table.columns:
        return alias
    matches = [c for c in table.columns if c.rsplit(".", 1)[-1] == name]
    if len(matches) > 1:  # ``eta``: the configured protocol.eta before effective.eta
        matches = [c for c in matches if not c.startswith(EFFECTIVE)] or matches
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise SelectionError(f"column {name!r} is ambiguous: {', '.join(sorted(matches))}")
    raise SelectionError(f"no column {name!r}; known: {', '.join(known_columns(table))}")


def known_columns(table: pd.DataFrame) -> list[str]:
    """The columns worth naming in an error: those with at least one value."""
    return [c for c in table.columns if table[c].notna().any()]


def resolve_metric(table: pd.DataFrame, name: str) -> str:
    """The recorded metric called ``name`` (or its alias, e.g. ``mse``)."""
    recorded = sorted(table["metric"].astype(str).unique())
    if name in recorded:
        return name
    if METRIC_ALIASES.get(name) in recorded:
        return METRIC_ALIASES[name]
    raise SelectionError(
        f"no metric {name!r} in these results; recorded: {', '.join(recorded)} "
        "(see docs/metrics.md)"
    )


def _typed(column: pd.Series, text: str, where: Where) -> object:
    if pd.api.types.is_bool_dtype(column):
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise SelectionError(f"--where {where}: {where.column} is true or false, got {text!r}")
        return lowered == "true"
    if pd.api.types.is_numeric_dtype(column):
        try:
            return float(text)
        except ValueError:
            raise SelectionError(
                f"--where {where}: {where.column} is numeric, got {text!r}"
            ) from None
    return text


def apply_where(table: pd.DataFrame, filters: Sequence[Where | str]) -> pd.DataFrame:
    """The rows of ``table`` that pass every filter (text filters are parsed first).

    Text columns compare case-insensitively for ``=`` and ``!=`` (``protocol=olh``);
    ``<``-style filters on a text column are an error.
    """
    for item in filters:
        where = parse_where(item) if isinstance(item, str) else item
        column = resolve(table, where.column)
        series = table[column]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if where.op == "=":
            values = [_typed(series, v, where) for v in where.values]
            if numeric or pd.api.types.is_bool_dtype(series):
                mask = series.isin(values)
            else:
                mask = series.astype(str).str.lower().isin([str(v).lower() for v in values])
        elif where.op == "!=":
            value = _typed(series, where.values[0], where)
            if numeric or pd.api.types.is_bool_dtype(series):
                mask = series != value
            else:
                mask = series.astype(str).str.lower() != str(value).lower()
        else:
            if not numeric:
                raise SelectionError(f"--where {where}: {column} is not numeric")
            mask = OPERATORS[where.op](series, _typed(series, where.values[0], where))
        table = table[mask.fillna(False).astype(bool)]
    return table


#: Columns that differ between rows of one setting (never what tells settings apart).
PER_ROW = ("experiment", "config_hash", "trial", "metric", "item", "value", "analytic", "wall_time")


def differing_columns(rows: pd.DataFrame, ignore: Sequence[str] = ()) -> list[str]:
    """The columns (parameters first, then provenance: code version, plug-in version, seeding
    scheme) whose value differs between the settings of ``rows``.  A protocol's effective
    parameters (``effective.*``) follow from the others and are not counted."""
    settings = rows.drop_duplicates("config_hash")
    skipped = set(PER_ROW) | set(ignore)
    found = [
        c
        for c in settings.columns
        if c not in skipped
        and not c.endswith((".label", ".kind"))
        and not c.startswith(EFFECTIVE)
        and settings[c].astype(str).nunique(dropna=False) > 1
    ]
    return sorted(found, key=lambda c: c in META_COLUMNS)


def check_one_setting(rows: pd.DataFrame, keys: list[str]) -> None:
    """SelectionError when the rows of one group of ``keys`` come from several settings
    (a mean over them would pool different experiments' trials)."""
    for _, cell in rows.groupby(keys, dropna=False, sort=False):
        if cell["config_hash"].nunique() < 2:
            continue
        differing = differing_columns(cell, keys) or ["config_hash"]
        example = number(cell[differing[0]].iloc[0])
        raise SelectionError(
            f"a point would pool {cell['config_hash'].nunique()} settings that differ in "
            f"{', '.join(differing)}: split them with --hue/--col/--row (--by) or keep one "
            f"with --where (e.g. --where {differing[0]}={example})"
        )
