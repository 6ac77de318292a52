"""``python -m experiments.summarize <experiment>``: one compact table per experiment.

Reads the experiment's parts (reporting any corrupt one by name) and prints one row per
setting: the parameters that vary across settings (short names: ``protocol``, ``eps``,
``eta``), the number of trials, and ``mean ± std`` of the experiment's headline metrics
with, for an oracle, the analytical value beside it.  A setting is one ``config_hash``;
its trials are counted once each, and settings that read different data (surrogate or
real file) are never pooled.  ``--metric NAME`` (repeatable) picks other metrics,
``--per-value`` prints the per-value rows instead.  The metrics are described in
``docs/metrics.md``.  Also refreshes ``<results_dir>/<experiment>/table.csv.gz``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from experiments.execute import short_commit
from experiments.store import CorruptPartWarning, ResultsStore

#: Columns that are not parameters of a setting.
META_COLUMNS = (
    "experiment",
    "config_hash",
    "trial",
    "metric",
    "item",
    "value",
    "analytic",
    "data_source",
    "n",
    "wall_time",
    "ldp_version",
    "numpy_version",
    "git_commit",
)
#: The metrics shown by default, in this order, when a table has them.
HEADLINE = ("f1", "ncr", "sq_error_n", "sq_error_f.split", "sq_error_f.partition")
#: Short names for the common parameter columns.
SHORT = {
    "protocol.name": "protocol",
    "dataset.name": "dataset",
    "epsilon": "eps",
    "options.domain_size": "d",
    "data_source": "data",
}


def parameter_columns(table: pd.DataFrame) -> tuple[list[str], dict[str, object]]:
    """The parameter columns that vary across rows, and the fixed ones with their value.

    Labels and kinds (display only) and columns with no value at all are left out.
    """
    varying, fixed = [], {}
    for column in table.columns:
        if column in META_COLUMNS or column.endswith((".kind", ".label")):
            continue
        values = table[column].drop_duplicates()
        if values.isna().all():
            continue
        if len(values) > 1:
            varying.append(column)
        elif len(values) == 1:
            fixed[column] = values.iloc[0]
    return varying, fixed


def short_name(column: str, taken: Sequence[str] = ()) -> str:
    """A column's display name: :data:`SHORT`, else the part after the group's dot
    (``protocol.eta`` -> ``eta``) unless another column would get the same name."""
    if column in SHORT:
        return SHORT[column]
    tail = column.rsplit(".", 1)[-1]
    clash = sum(c.rsplit(".", 1)[-1] == tail for c in taken) > 1
    return column if clash else tail


def number(value: object) -> str:
    """A cell as text: integers without a decimal point, other numbers to 4 digits."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, bool | np.bool_):
        return str(bool(value)).lower()
    if isinstance(value, int | float):
        if float(value).is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


def metrics_of(table: pd.DataFrame, per_value: bool = False) -> list[str]:
    """The metrics recorded in ``table`` (per-value rows' metrics with ``per_value``)."""
    rows = table[table["item"].notna()] if per_value else table[table["item"].isna()]
    return sorted(rows["metric"].astype(str).unique())


def summarize(
    table: pd.DataFrame, *, metrics: Sequence[str] | None = None, per_value: bool = False
) -> pd.DataFrame:
    """One row per (setting, metric[, item]): varying parameters, trials, mean, std, analytic.

    A setting is a ``config_hash`` (and its data source), so two settings that read
    different data are never pooled, and each of its trials counts once.
    """
    rows = table[table["item"].notna()] if per_value else table[table["item"].isna()]
    if metrics:
        rows = rows[rows["metric"].isin(list(metrics))]
    rows = rows.drop_duplicates(subset=["config_hash", "trial", "metric", "item"])
    varying, _ = parameter_columns(rows)
    if rows["data_source"].nunique() > 1 and "data_source" not in varying:
        varying.append("data_source")
    keys = ["config_hash", *varying, "metric"] + (["item"] if per_value else [])
    grouped = rows.groupby(keys, dropna=False, sort=False)
    out = grouped.agg(
        trials=("trial", "nunique"),
        mean=("value", "mean"),
        std=("value", "std"),
        analytic=("analytic", "mean"),
    ).reset_index()
    return out.sort_values([*varying, "metric"] + (["item"] if per_value else []), kind="stable")


def compact(summary: pd.DataFrame, *, per_value: bool = False) -> pd.DataFrame:
    """The summary as a table of text: one row per setting (per item with ``per_value``),
    a ``mean ± std`` column per metric and its analytical value where one exists."""
    params = [
        c
        for c in summary.columns
        if c not in ("config_hash", "metric", "item", "trials", "mean", "std", "analytic")
    ]
    index = ["config_hash", *params] + (["item"] if per_value else [])
    # empty parameters (another protocol's field) become "-": pivots drop NaN keys
    summary = summary.assign(**{c: summary[c].map(number) for c in index[1:]})
    cells = summary.assign(
        cell=[
            f"{number(m)} ± {number(s)}"
            for m, s in zip(summary["mean"], summary["std"], strict=True)
        ]
    )
    order = list(dict.fromkeys(cells["metric"]))
    wide = cells.pivot_table(
        index=index, columns="metric", values="cell", aggfunc="first", sort=False
    )
    trials = cells.groupby(index, dropna=False, sort=False)["trials"].max()
    analytic = cells.dropna(subset=["analytic"]).pivot_table(
        index=index, columns="metric", values="analytic", aggfunc="first", sort=False
    )
    shown = pd.DataFrame(index=wide.index)
    shown["trials"] = trials.reindex(wide.index).map(number)
    for metric in order:
        shown[metric] = wide[metric]
        if metric in analytic.columns:
            shown[f"{metric} (theory)"] = analytic[metric].reindex(wide.index).map(number)
    shown = shown.reset_index().drop(columns="config_hash")
    for column in params + (["item"] if per_value else []):
        shown[column] = shown[column].map(number)
    return shown.rename(columns={c: short_name(c, params) for c in params})


def render(summary: pd.DataFrame, *, per_value: bool = False) -> str:
    """The compact table (:func:`compact`) as aligned text."""
    return compact(summary, per_value=per_value).to_string(index=False)


def _choose_metrics(table: pd.DataFrame, asked: Sequence[str] | None, per_value: bool) -> list[str]:
    known = metrics_of(table, per_value)
    if asked:
        wrong = [m for m in asked if m not in known]
        if wrong:
            raise SystemExit(
                f"error: no metric {', '.join(map(repr, wrong))} in this experiment; "
                f"recorded: {', '.join(known)} (see docs/metrics.md)"
            )
        return list(asked)
    headline = [m for m in HEADLINE if m in known]
    return headline or known


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m experiments.summarize", description=__doc__.splitlines()[0]
    )
    parser.add_argument("experiment", help="experiment name (a directory of the results dir)")
    parser.add_argument("--results-dir", default="results", help="default: results")
    parser.add_argument(
        "--metric", action="append", help="this metric (repeatable; default: the headline ones)"
    )
    parser.add_argument("--per-value", action="store_true", help="the per-value rows instead")
    args = parser.parse_args(argv)
    store = ResultsStore(args.results_dir, args.experiment)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptPartWarning)
        table, corrupt = store.load()
    for message in corrupt:
        print(f"warning: corrupt results part excluded: {message}", file=sys.stderr)
    if table.empty:
        print(f"no results for {args.experiment!r} under {args.results_dir}", file=sys.stderr)
        return 1
    try:
        store.export(table)
    except OSError as error:  # a read-only results directory: the table stays as it was
        print(
            f"warning: {store.directory / 'table.csv.gz'} not refreshed: {error}", file=sys.stderr
        )
    try:
        metrics = _choose_metrics(table, args.metric, args.per_value)
    except SystemExit as error:
        print(error, file=sys.stderr)
        return 2
    _, fixed = parameter_columns(table)
    sources = ", ".join(sorted(table["data_source"].astype(str).unique()))
    commits = ", ".join(sorted({short_commit(c) for c in table["git_commit"].astype(str)}))
    print(
        f"{args.experiment}: {table['config_hash'].nunique()} settings; data: {sources}; "
        f"commit: {commits}"
    )
    shown = {k: v for k, v in fixed.items() if k not in ("seed", "results_dir")}
    print(
        "fixed: " + ", ".join(f"{short_name(k, list(fixed))}={number(v)}" for k, v in shown.items())
    )
    others = [m for m in metrics_of(table, args.per_value) if m not in metrics]
    print(
        render(
            summarize(table, metrics=metrics, per_value=args.per_value), per_value=args.per_value
        )
    )
    if others:
        print(f"other metrics (--metric NAME): {', '.join(others)}")
    return 0


def run(argv: Sequence[str] | None = None) -> int:
    """:func:`main`, quiet when the reader of its output goes away (``| head``)."""
    try:
        code = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(run())
