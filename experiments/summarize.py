"""``python -m experiments.summarize <experiment>``: mean ± std per setting, as a table.

Reads the experiment's parts (reporting any corrupt one by name), groups the rows by
setting and metric, and prints the parameters that vary across settings, the number of
trials, mean ± standard deviation, and the mean analytical value where the trial
recorded one.  Also refreshes ``<results_dir>/<experiment>/table.csv.gz``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

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


def parameter_columns(table: pd.DataFrame) -> tuple[list[str], dict[str, object]]:
    """The parameter columns that vary across rows, and the fixed ones with their value."""
    varying, fixed = [], {}
    for column in table.columns:
        if column in META_COLUMNS or column.endswith(".kind"):
            continue
        values = table[column].drop_duplicates()
        if len(values) > 1:
            varying.append(column)
        elif len(values) == 1 and pd.notna(values.iloc[0]):
            fixed[column] = values.iloc[0]
    return varying, fixed


def _fmt(value: float) -> str:
    return "nan" if pd.isna(value) else f"{value:.4g}"


def summarize(
    table: pd.DataFrame, *, metrics: Sequence[str] | None = None, per_value: bool = False
) -> pd.DataFrame:
    """One row per (setting, metric[, item]): varying parameters, trials, mean, std, analytic."""
    rows = table if per_value else table[table["item"].isna()]
    if metrics:
        rows = rows[rows["metric"].isin(list(metrics))]
    varying, _ = parameter_columns(table)
    keys = [*varying, "metric"] + (["item"] if per_value else [])
    grouped = rows.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        trials=("value", "size"),
        mean=("value", "mean"),
        std=("value", "std"),
        analytic=("analytic", "mean"),
    ).reset_index()
    return out


def render(summary: pd.DataFrame) -> str:
    """The summary as aligned text: ``mean ± std`` and the analytical value."""
    shown = summary.drop(columns=["mean", "std", "analytic"]).copy()
    shown["mean ± std"] = [
        f"{_fmt(m)} ± {_fmt(s)}" for m, s in zip(summary["mean"], summary["std"], strict=True)
    ]
    shown["analytic"] = [_fmt(a) if pd.notna(a) else "-" for a in summary["analytic"]]
    return shown.to_string(index=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m experiments.summarize", description=__doc__.splitlines()[0]
    )
    parser.add_argument("experiment", help="experiment name (a directory of the results dir)")
    parser.add_argument("--results-dir", default="results", help="default: results")
    parser.add_argument("--metric", action="append", help="only this metric (repeatable)")
    parser.add_argument("--per-value", action="store_true", help="per-value rows as well")
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
    store.export(table)
    _, fixed = parameter_columns(table)
    sources = ", ".join(sorted(table["data_source"].astype(str).unique()))
    commits = ", ".join(sorted({short_commit(c) for c in table["git_commit"].astype(str)}))
    print(
        f"{args.experiment}: {table['config_hash'].nunique()} settings, {len(table)} rows; "
        f"data: {sources}; commit: {commits}"
    )
    print("fixed: " + ", ".join(f"{k}={v}" for k, v in fixed.items()))
    print(render(summarize(table, metrics=args.metric, per_value=args.per_value)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
