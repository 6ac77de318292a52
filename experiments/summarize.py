"""``python -m experiments.summarize <experiment>``: one compact table per experiment.

Reads the experiment's parts (reporting any corrupt one by name) and prints one row per
setting: the parameters that vary across settings (short names: ``protocol``, ``eps``,
``eta``), the number of trials, and ``mean ± std`` of the experiment's headline metrics
with, for an oracle, the analytical value beside it.  A setting is one ``config_hash``;
its trials are counted once each, and settings that read different data (surrogate or
real file) are never pooled.  ``--metric NAME`` (repeatable) picks other metrics,
``--per-value`` prints the per-value rows instead.  The metrics are described in
``docs/metrics.md``.  Also refreshes ``<results_dir>/<experiment>/table.csv.gz``.

``--where`` (repeatable) keeps the rows that pass a filter (those of
:mod:`experiments.select`: ``protocol=OLH,MyPlugin``, ``epsilon>=1``).  ``--by COLUMN``
(repeatable) or ``--format csv|markdown|latex`` print instead a statistics table, one
row per group and metric: ``trials``, ``mean``, ``std``, ``se`` (the standard error of
the mean, std/√trials), ``ci95_low``/``ci95_high`` (Student's t interval of the mean)
and ``analytic``; ``--out FILE`` writes it to a file.  A group never pools settings: one
that would is an error naming the columns that tell them apart.  ``experiment`` may also
be the path of an experiment's directory (``results/oracle_variance``).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.provenance import short_commit
from experiments.select import SelectionError, apply_where, check_one_setting, resolve
from experiments.store import EFFECTIVE, CorruptPartWarning, ResultsStore
from experiments.tables import FORMATS, META_COLUMNS, export, number, short_name

#: The metrics shown by default, in this order, when a table has them.
HEADLINE = ("f1", "ncr", "sq_error_n", "sq_error_f.split", "sq_error_f.partition")


def parameter_columns(table: pd.DataFrame) -> tuple[list[str], dict[str, object]]:
    """The parameter columns that vary across rows, and the fixed ones with their value.

    Labels and kinds (display only), the protocol's effective parameters (``effective.*``:
    they follow from the parameters) and columns with no value at all are left out.
    """
    varying, fixed = [], {}
    for column in table.columns:
        if column in META_COLUMNS or column.endswith((".kind", ".label")):
            continue
        if column.startswith(EFFECTIVE):
            continue
        values = table[column].drop_duplicates()
        if values.isna().all():
            continue
        if len(values) > 1:
            varying.append(column)
        elif len(values) == 1:
            fixed[column] = values.iloc[0]
    return varying, fixed


def _at_default(column: str, value: object) -> bool:
    """Whether a fixed ``options.*`` column holds its schema default (not worth a word in
    the summary's "fixed:" line: a new option must not lengthen every summary)."""
    from dataclasses import MISSING, fields

    from experiments.schema import TrialOptions

    name = column.removeprefix("options.")
    if name == column:
        return False
    default = {f.name: f.default for f in fields(TrialOptions)}.get(name, MISSING)
    if default is MISSING or default is None:
        return False
    try:
        return bool(value == default) or str(value).lower() == str(default).lower()
    except (TypeError, ValueError):
        return False


def apart(rows: pd.DataFrame) -> list[str]:
    """The columns that tell settings apart in a summary: the varying parameters, then the
    data source, the seeding scheme (``streams``) and the digest of the code that computed
    the rows (``code_digest``) when they vary: results of real and surrogate data, of two
    seeding schemes or of two versions of a protocol's code are never shown as one."""
    varying, _ = parameter_columns(rows)
    for column in ("data_source", "streams", "code_digest"):
        if column in rows and rows[column].astype(str).nunique(dropna=False) > 1:
            varying.append(column)
    return varying


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
    varying = apart(rows)
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


#: The statistics columns of :func:`statistics`, in order.
STAT_COLUMNS = col.STATISTICS


def statistics(
    table: pd.DataFrame,
    *,
    by: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    per_value: bool = False,
) -> pd.DataFrame:
    """One row per group of ``by`` (default: the varying parameters) and metric, with
    :data:`STAT_COLUMNS`: mean over trials, its standard error and 95% t interval.

    Raises :class:`~experiments.select.SelectionError` when a group holds rows of more
    than one setting (pooling different settings' trials is never what a mean means).
    """
    from scipy import stats as sps

    rows = table[table["item"].notna()] if per_value else table[table["item"].isna()]
    if metrics:
        rows = rows[rows["metric"].isin(list(metrics))]
    if rows.empty:
        raise SelectionError("no rows of these metrics pass the filters")
    rows = rows.drop_duplicates(subset=["config_hash", "trial", "metric", "item"])
    if by:
        columns = [resolve(rows, name) for name in by]
    else:
        columns = apart(rows)
    keys = [*columns, "metric"] + (["item"] if per_value else [])
    check_one_setting(rows, keys)
    out = (
        rows.groupby(keys, dropna=False, sort=True)
        .agg(
            trials=("value", "size"),
            mean=("value", "mean"),
            std=("value", "std"),
            analytic=("analytic", "mean"),
        )
        .reset_index()
    )
    out["se"] = out["std"] / np.sqrt(out["trials"])
    t = sps.t.ppf(0.975, np.maximum(out["trials"] - 1, 1))
    half = np.where(out["trials"] > 1, t * out["se"], np.nan)
    out["ci95_low"], out["ci95_high"] = out["mean"] - half, out["mean"] + half
    return out[[*keys, *STAT_COLUMNS]]


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


def _load(args: argparse.Namespace) -> tuple[ResultsStore, pd.DataFrame] | int:
    """The experiment's store and rows (an int: the exit code when there are none)."""
    given = Path(args.experiment)
    if (given / "parts").is_dir():  # the path of an experiment's directory
        store = ResultsStore(given.parent, given.name)
    else:
        if not Path(args.results_dir).is_dir():
            print(
                f"no results for {args.experiment!r}: results directory "
                f"{args.results_dir!r} does not exist",
                file=sys.stderr,
            )
            return 1
        store = ResultsStore(args.results_dir, args.experiment)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorruptPartWarning)
        table, corrupt = store.load()
    for message in corrupt:
        print(f"warning: corrupt results part excluded: {message}", file=sys.stderr)
    if table.empty:
        print(f"no results for {args.experiment!r} under {store.root}", file=sys.stderr)
        return 1
    warning = stale_warning(table, store)
    if warning:
        print(warning, file=sys.stderr)
    try:
        store.export(table)
    except OSError as error:  # a read-only results directory: the table stays as it was
        print(
            f"warning: {store.directory / 'table.csv.gz'} not refreshed: {error}", file=sys.stderr
        )
    try:
        table = apply_where(table, args.where)
    except SelectionError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if table.empty:
        print(f"error: no rows pass the filters {', '.join(args.where)}", file=sys.stderr)
        return 1
    return store, table


def stale_warning(table: pd.DataFrame, store: ResultsStore) -> str:
    """One line when ``table`` holds rows of settings a later run recomputed under other
    code (:meth:`~experiments.store.ResultsStore.superseded`), else empty.  Their rows are
    shown apart (``code_digest`` tells them from the current ones), never pooled."""
    replaced = set(store.superseded()) & set(table["config_hash"].astype(str))
    if not replaced:
        return ""
    return (
        f"warning: {len(replaced)} settings hold rows computed by code a later run replaced "
        "(stale, shown apart by code_digest; table.csv.gz leaves them out): "
        "--where code_digest=<digest> keeps one code's rows"
    )


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Command line entry point; returns the exit code (``prog``: the name its usage shows)."""
    parser = argparse.ArgumentParser(
        prog=prog or "python -m experiments.summarize", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "experiment", help="experiment name (a directory of the results dir), or its path"
    )
    parser.add_argument("--results-dir", default="results", help="default: results")
    parser.add_argument(
        "--metric", action="append", help="this metric (repeatable; default: the headline ones)"
    )
    parser.add_argument("--per-value", action="store_true", help="the per-value rows instead")
    parser.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FILTER",
        help="keep rows: KEY=a,b  KEY!=v  KEY>=v  KEY<=v  KEY>v  KEY<v (repeatable)",
    )
    parser.add_argument(
        "--by",
        action="append",
        help="group by these columns (repeatable, or comma-separated): a statistics table",
    )
    parser.add_argument(
        "--format", choices=FORMATS, help="statistics table as text, csv, markdown or latex"
    )
    parser.add_argument("--out", help="write the statistics table to this file")
    parser.add_argument(
        "--caption",
        default="",
        help="LaTeX only: the table's caption (LaTeX text; default: what the cells are)",
    )
    parser.add_argument("--label", help="LaTeX only: the table's label (default: tab:<experiment>)")
    args = parser.parse_args(argv)
    if args.by:  # --by protocol,epsilon is --by protocol --by epsilon
        args.by = [column for item in args.by for column in item.split(",") if column]
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    store, table = loaded
    try:
        metrics = _choose_metrics(table, args.metric, args.per_value)
    except SystemExit as error:
        print(error, file=sys.stderr)
        return 2
    if args.by or args.format or args.out:
        try:
            frame = statistics(table, by=args.by, metrics=metrics, per_value=args.per_value)
        except SelectionError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        fmt = args.format or _format_of(args.out)
        label = args.label if args.label is not None else f"tab:{store.experiment}"
        text = export(frame, fmt, caption=args.caption, label=label)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(text if text.endswith("\n") else text + "\n")
            print(f"{args.out}: {len(frame)} rows ({fmt})")
        else:
            print(text.rstrip("\n"))
        return 0
    _, fixed = parameter_columns(table)
    sources = ", ".join(sorted(table["data_source"].astype(str).unique()))
    commits = ", ".join(sorted({short_commit(c) for c in table["git_commit"].astype(str)}))
    print(
        f"{store.experiment}: {table['config_hash'].nunique()} settings; data: {sources}; "
        f"commit: {commits}"
    )
    shown = {
        k: v for k, v in fixed.items() if k not in ("seed", "results_dir") and not _at_default(k, v)
    }
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


def _format_of(path: str | None) -> str:
    """The export format a file name implies (``.csv``, ``.md``, ``.tex``), else text."""
    suffix = Path(path).suffix.lower() if path else ""
    return {".csv": "csv", ".md": "markdown", ".tex": "latex"}.get(suffix, "text")


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
