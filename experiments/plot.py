"""``python -m experiments.plot <results_dir> --x epsilon --y mse --hue protocol``: any results.

Draws any metric of any results directory (one experiment's, or a results root holding
several: :func:`experiments.select.load_results`) against any parameter, whatever made
it: a paper experiment, a custom sweep, a plug-in protocol.  Each point is the mean over
a setting's trials with an error bar of ± one standard error (``errorbar="se"``) or the
95% confidence interval of the mean (``"ci95"``: Student's t with trials - 1 degrees of
freedom); ``--hue``, ``--col`` and ``--row`` split the points into coloured series and a
grid of panels.  A point never pools settings: when the rows of one point come from
settings that differ in something else (the engine, the domain size), that is an error
naming the differing columns, to be split by ``--hue/--col/--row`` or fixed by ``--where``.

The analytical curve is drawn as a thin line wherever it is known: for ``sq_error_n``
against ε on values nobody holds (``options.track=absent``) the protocol's own
``variance(n, 0)/n`` on a fine grid of ε, rebuilt from the table through the registry;
otherwise the trials' recorded ``analytic`` values (their exact expectation) at the
measured points.  A protocol declaring no closed-form variance
(:func:`ldp.contract.capabilities_of`) gets no variance curve; one declaring nothing is
tried, and drawn if its ``variance`` works.  Colours: a protocol's registered colour, a
stable distinct one for a protocol without one (or not installed where the plot is drawn).
Each series has its own marker and is shifted a little along x (:func:`dodged`), so that
equal means never hide each other; the y axis names the metric (:func:`metric_label`); an
``adversary_success`` panel draws the blind guess π_max (the ``adversary_baseline`` rows)
as a dotted line.

An axis is logarithmic (``logx``/``logy`` None: automatic) when its values are positive
and span more than two decades.  Filters (``--where``, repeatable) are those of
:mod:`experiments.select`: ``protocol=OLH,MyPlugin``, ``epsilon>=1``, ``engine!=reports``.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from scipy import stats

from experiments.select import (
    SelectionError,
    apply_where,
    check_one_setting,
    differing_columns,
    load_results,
    resolve,
    resolve_metric,
)
from experiments.tables import METRIC_NAMES, number, short_name

ErrorBar = Literal["se", "ci95"]
#: The panel column that holds the metric when several are drawn side by side.
METRIC = "metric"
#: An axis whose positive values span more than this ratio is drawn on a log scale.
LOG_SPAN = 100.0
#: Points of an analytical curve drawn on a fine grid.
CURVE_POINTS = 200
#: The palette of a protocol without a colour of its own, and of non-protocol hues.
FALLBACK_PALETTE = "dark"
HUE_PALETTE = "colorblind"


# ----------------------------------------------------------------------------- points
def points(
    table: pd.DataFrame,
    *,
    x: str,
    y: str,
    hue: str | None = None,
    col: str | None = None,
    row: str | None = None,
    errorbar: ErrorBar = "se",
) -> pd.DataFrame:
    """One row per point: the panel and series keys, ``x``, ``mean``, ``se``, ``half``
    (the error bar's half width), ``trials``, ``analytic`` and ``config_hash``.

    ``table`` holds the rows of metric ``y`` (resolved names); the trial-level rows
    (``item`` empty) are used.  A point whose rows come from several settings is a
    :class:`SelectionError` naming the columns that tell them apart.
    """
    if errorbar not in ("se", "ci95"):
        raise SelectionError(f"errorbar must be 'se' or 'ci95', got {errorbar!r}")
    rows = table[(table["metric"].astype(str) == y) & table["item"].isna()]
    if rows.empty:
        raise SelectionError(f"no trial-level rows of metric {y!r} pass the filters")
    rows = rows.drop_duplicates(subset=["config_hash", "trial", "metric"])
    keys = [c for c in dict.fromkeys([row, col, hue, x]) if c is not None]
    for column in keys:
        if rows[column].isna().all():
            raise SelectionError(f"column {column!r} has no value in the rows of {y!r}")
    check_one_setting(rows, keys)
    grouped = rows.groupby(keys, dropna=False, sort=True)
    out = grouped.agg(
        mean=("value", "mean"),
        sd=("value", "std"),
        trials=("value", "size"),
        analytic=("analytic", "mean"),
        config_hash=("config_hash", "first"),
    ).reset_index()
    out["se"] = out["sd"] / np.sqrt(out["trials"])
    if errorbar == "ci95":
        t = stats.t.ppf(0.975, np.maximum(out["trials"] - 1, 1))
        out["half"] = np.where(out["trials"] > 1, t * out["se"], np.nan)
    else:
        out["half"] = out["se"]
    return out.drop(columns="sd")


# ----------------------------------------------------------------------------- colours
def protocol_color(name: str, taken: Sequence[tuple[float, float, float]] = ()) -> tuple:
    """A protocol's registered colour; else a colour of :data:`FALLBACK_PALETTE` fixed by
    a hash of its name (stable across runs), moved on past colours already ``taken``."""
    from ldp import registry

    try:
        entry = registry.get(name)
    except ValueError:
        entry = None
    if entry is not None and entry.color is not None:
        return mcolors.to_rgb(entry.color)
    palette = [tuple(c) for c in sns.color_palette(FALLBACK_PALETTE, 10)]
    start = int(hashlib.sha256(str(name).upper().encode()).hexdigest(), 16) % len(palette)
    for step in range(len(palette)):
        colour = palette[(start + step) % len(palette)]
        if colour not in taken:
            return colour
    return palette[start]


def series_colors(values: Sequence[Any], protocols: bool) -> dict[Any, tuple]:
    """A colour per hue value: registry colours for protocols, else a palette in order."""
    if not protocols:
        palette = sns.color_palette(HUE_PALETTE, max(len(values), 1))
        return {value: tuple(palette[i]) for i, value in enumerate(values)}
    colours: dict[Any, tuple] = {}
    for value in values:
        colours[value] = protocol_color(str(value), list(colours.values()))
    return colours


# -------------------------------------------------------------------------- analytical
def _closed_form(name: str) -> type | None:
    """The protocol class when its variance may be drawn (declared, or not declared)."""
    from ldp import registry
    from ldp.contract import capabilities_of

    try:
        cls = registry.get(name).cls
    except ValueError:
        return None
    if getattr(cls, "capabilities", None) is not None and not (
        capabilities_of(cls).closed_form_variance
    ):
        return None
    return cls


def variance_curve(rows: pd.DataFrame, grid: np.ndarray) -> np.ndarray | None:
    """``variance(n, 0)/n`` of the rows' protocol along a grid of ε, or None when the
    protocol is unknown here, declares no closed form, or its ``variance`` fails (a
    ``RuntimeWarning`` then says why)."""
    from experiments.build import build_protocol, protocol_from_row

    first = rows.iloc[0]
    d = first.get("options.domain_size")
    if "protocol.name" not in rows or d is None or pd.isna(d) or pd.isna(first.get("n")):
        return None
    if _closed_form(str(first["protocol.name"])) is None:
        return None
    n = int(first["n"])
    try:
        node = protocol_from_row(first)
        node["name"] = str(first["protocol.name"])
        values = [
            build_protocol(node, float(e), domain_size=int(d)).variance(n, 0) / n for e in grid
        ]
    except Exception as error:  # noqa: BLE001 (a plug-in's variance may fail any way)
        warnings.warn(
            f"no variance curve for {first['protocol.name']}: its variance failed "
            f"({type(error).__name__}: {error})",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    curve = np.asarray(values, dtype=float)
    return curve if np.all(np.isfinite(curve)) else None


def analytic_line(
    rows: pd.DataFrame, stats_rows: pd.DataFrame, x: str, y: str
) -> tuple[np.ndarray, np.ndarray] | None:
    """The analytical curve of one series: (x values, y values), or None if none is known.

    ``rows`` are the series' table rows, ``stats_rows`` its points (:func:`points`).
    """
    protocols = rows["protocol.name"].dropna().unique() if "protocol.name" in rows else []
    variance_based = y.startswith("sq_error")
    if variance_based and len(protocols) == 1 and _closed_form(str(protocols[0])) is None:
        if _registered(str(protocols[0])):
            return None  # declares no closed form: its recorded analytic is not one either
    tracks = set(rows["options.track"].dropna().astype(str)) if "options.track" in rows else set()
    xs = stats_rows[x].to_numpy(dtype=float) if _numeric(stats_rows[x]) else None
    if xs is not None and x == "epsilon" and y == "sq_error_n" and tracks == {"absent"}:
        if len(protocols) == 1 and not differing_columns(rows, [x]):
            grid = np.linspace(xs.min(), xs.max(), CURVE_POINTS)
            curve = variance_curve(rows, grid)
            if curve is not None:
                return grid, curve
    analytic = stats_rows["analytic"].to_numpy(dtype=float)
    if xs is None or not np.isfinite(analytic).any():
        return None
    keep = np.isfinite(analytic)
    return xs[keep], analytic[keep]


def _registered(name: str) -> bool:
    from ldp import registry

    try:
        registry.get(name)
    except ValueError:
        return False
    return True


def _numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def auto_log(values: np.ndarray) -> bool:
    """Whether an axis with these values reads better on a log scale: all positive,
    spanning more than :data:`LOG_SPAN`."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return bool(values.size and values.min() > 0 and values.max() / values.min() > LOG_SPAN)


# -------------------------------------------------------------------------------- plot
def plot(
    results_dir: str | Path | pd.DataFrame,
    *,
    x: str,
    y: str,
    hue: str | None = None,
    col: str | None = None,
    row: str | None = None,
    where: Sequence[str] = (),
    errorbar: ErrorBar = "se",
    logx: bool | None = None,
    logy: bool | None = None,
    out: str | Path | None = None,
) -> plt.Figure:
    """Draw metric ``y`` against column ``x`` of any results; save to ``out`` if given.

    Parameters
    ----------
    results_dir : path or DataFrame
        A results directory (one experiment's or a root of several), or a tidy table.
    x, hue, col, row : str
        Columns (table names or short ones: ``protocol``, ``eps``, ``d``, ``domain_size``).
    y : str
        A recorded metric (``sq_error_n``, ``f1``, ...; ``mse`` is ``sq_error_n``), or
        several separated by commas (``mse,adversary_success``): one panel column each,
        side by side, each with its own y axis (``col`` must then be empty).
    where : sequence of str
        Filters, e.g. ``("protocol=OLH,MyPlugin", "epsilon>=1")``.
    errorbar : {"se", "ci95"}
        ± one standard error of the mean, or its 95% confidence interval.
    logx, logy : bool or None
        Log scales; None: automatic (positive values spanning > 2 decades).
    out : path, optional
        Where to save (PNG, PDF, SVG by its suffix).

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = results_dir if isinstance(results_dir, pd.DataFrame) else load_results(results_dir)
    table = apply_where(table, where)
    if table.empty:
        raise SelectionError(f"no rows pass the filters {', '.join(map(str, where))}")
    x, hue, col, row = (resolve(table, c) if c else None for c in (x, hue, col, row))
    metrics = [resolve_metric(table, name.strip()) for name in y.split(",")]
    y = ",".join(metrics)
    if len(metrics) > 1:  # one panel column per metric
        if col is not None:
            raise SelectionError("several metrics fill the panel columns: drop --col")
        col = METRIC
    stats_table = pd.concat(
        [
            points(
                table,
                x=x,
                y=m,
                hue=hue,
                col=None if col == METRIC else col,
                row=row,
                errorbar=errorbar,
            ).assign(**{METRIC: m})
            for m in metrics
        ],
        ignore_index=True,
    )
    rows_of = table[table["metric"].astype(str).isin(metrics) & table["item"].isna()]
    baseline = table[(table["metric"].astype(str) == "adversary_baseline") & table["item"].isna()]
    return _draw(rows_of, stats_table, x, y, hue, col, row, errorbar, logx, logy, out, baseline)


def _levels(frame: pd.DataFrame, column: str | None) -> list[Any]:
    if column is None:
        return [None]
    values = frame[column].drop_duplicates().tolist()
    if column == METRIC:  # the order the metrics were asked in
        return values
    if column == "protocol.name":
        from experiments.figures import style

        return style.order([str(v) for v in values])
    return sorted(values, key=lambda v: (isinstance(v, str), v))


def _select(frame: pd.DataFrame, column: str | None, value: Any) -> pd.DataFrame:
    if column is None:
        return frame
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return frame[frame[column].isna()]
    return frame[frame[column] == value]


def _draw(
    rows: pd.DataFrame,
    stats_table: pd.DataFrame,
    x: str,
    y: str,
    hue: str | None,
    col: str | None,
    row: str | None,
    errorbar: ErrorBar,
    logx: bool | None,
    logy: bool | None,
    out: str | Path | None,
    baseline: pd.DataFrame | None = None,
) -> plt.Figure:
    from experiments.figures import style

    style.apply_theme()
    row_levels, col_levels = _levels(stats_table, row), _levels(stats_table, col)
    hue_levels = _levels(stats_table, hue)
    if hue is None and "protocol.name" in rows and rows["protocol.name"].nunique() == 1:
        colours = {None: protocol_color(str(rows["protocol.name"].iloc[0]))}
    elif hue is None:
        colours = {None: (0.2, 0.2, 0.2)}
    else:
        colours = series_colors(hue_levels, protocols=hue == "protocol.name")
    categorical = not _numeric(stats_table[x])
    categories = _levels(stats_table, x) if categorical else []
    figure, axes = plt.subplots(
        len(row_levels),
        len(col_levels),
        figsize=(4.6 * len(col_levels) + 1.8, 3.8 * len(row_levels)),
        squeeze=False,
        sharex=True,
        sharey=False if col == METRIC else "row",
    )
    drawn_curve = drawn_baseline = False
    log_x = not categorical and (logx if logx is not None else auto_log(stats_table[x]))
    for i, row_value in enumerate(row_levels):
        for j, col_value in enumerate(col_levels):
            ax = axes[i][j]
            panel = _select(_select(stats_table, row, row_value), col, col_value)
            panel_rows = _select(_select(rows, row, row_value), col, col_value)
            metric = col_value if col == METRIC else y
            for h, hue_value in enumerate(hue_levels):
                series = _select(panel, hue, hue_value).sort_values(x)
                if series.empty:
                    continue
                colour = colours[hue_value]
                xs = (
                    np.array([categories.index(v) for v in series[x]], dtype=float)
                    if categorical
                    else series[x].to_numpy(dtype=float)
                )
                label = _label(hue, hue_value, rows)
                ax.errorbar(
                    dodged(xs, h, len(hue_levels), log_x),
                    series["mean"],
                    yerr=series["half"].fillna(0.0),
                    fmt=MARKERS[h % len(MARKERS)],
                    color=colour,
                    ms=4.5,
                    capsize=2,
                    lw=0.9,
                    label=label,
                )
                if categorical:
                    continue
                line = analytic_line(_select(panel_rows, hue, hue_value), series, x, metric)
                if line is not None:
                    ax.plot(*line, color=colour, lw=1.0, alpha=0.85)
                    drawn_curve = True
            if metric == "adversary_success" and baseline is not None:
                blind = _select(baseline, row, row_value)
                blind = blind if col == METRIC else _select(blind, col, col_value)
                drawn_baseline |= baseline_line(ax, blind)
            title = [_label(r, v, rows) for r, v in ((row, row_value), (col, col_value)) if r]
            ax.set_title(
                ", ".join(
                    f"{_short(c)} = {t}"
                    for c, t in zip([c for c in (row, col) if c], title, strict=True)
                )
            )
            if categorical:
                ax.set_xticks(range(len(categories)), [number(c) for c in categories])
            if i == len(row_levels) - 1:
                ax.set_xlabel(style.EPSILON_LABEL if x == "epsilon" else x)
            if j == 0 or col == METRIC:
                ax.set_ylabel(metric_label(metric))
    for j, col_value in enumerate(col_levels):  # one scale per metric, else one for all
        means = _select(stats_table, col, col_value) if col == METRIC else stats_table
        if logy if logy is not None else auto_log(means["mean"].to_numpy(dtype=float)):
            for ax in axes[:, j]:
                ax.set_yscale("log")
    if log_x:
        for ax in axes.ravel():
            ax.set_xscale("log")
    handles, labels = axes[0][0].get_legend_handles_labels()
    seen = dict(zip(labels, handles, strict=True))
    for ax in axes.ravel()[1:]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    bar = "± 1 SE" if errorbar == "se" else "95% CI"
    extra = {}
    if drawn_curve:
        extra["analytical (thin line)"] = {"color": "0.3", "lw": 1.0}
    if drawn_baseline:
        extra[BASELINE_LABEL] = {"color": "0.45", "lw": 1.0, "ls": ":"}
    if seen or extra:
        from matplotlib.lines import Line2D

        labels = [label for label in seen if label] + list(extra)
        handles = [seen[label] for label in labels[: len(labels) - len(extra)]]
        handles += [Line2D([], [], **style_of) for style_of in extra.values()]
        figure.legend(
            handles,
            labels,
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            title=f"{_short(hue) if hue else ''} (mean {bar})".strip(),
        )
    figure.tight_layout()
    if out is not None:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(out, bbox_inches="tight", metadata=_metadata(out))
    return figure


#: Marker shapes by series, so that no series hides another where their means coincide.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")
#: Series at one x are spread over this share of the axis (a decade on a log axis).
DODGE = 0.04
BASELINE_LABEL = "π_max: the blind guess (dotted)"


def dodged(xs: np.ndarray, index: int, count: int, log: bool) -> np.ndarray:
    """Series ``index`` of ``count`` shifted a little along x (by a factor on a log axis),
    centred on the true x, so that equal means stay visible side by side."""
    if count <= 1 or xs.size == 0:
        return xs
    offset = (index - (count - 1) / 2) * DODGE / max(count - 1, 1)
    if log and np.all(xs > 0):
        return xs * 10.0**offset
    spread = float(np.ptp(xs)) or 1.0
    return xs + offset * spread


def metric_label(metric: str) -> str:
    """A metric's axis label: its display name (:data:`experiments.tables.METRIC_NAMES`)
    and, beside it, the column name."""
    shown = METRIC_NAMES.get(metric)
    return f"{shown} ({metric})" if shown and shown != metric else metric


def baseline_line(ax: plt.Axes, rows: pd.DataFrame) -> bool:
    """The blind guess π_max (the ``adversary_baseline`` rows) as a dotted line on an
    ``adversary_success`` panel; whether there was one to draw."""
    baseline = rows.loc[rows["metric"] == "adversary_baseline", "value"]
    if baseline.empty:
        return False
    ax.axhline(float(baseline.mean()), color="0.45", lw=1.0, ls=":", zorder=0)
    return True


def _metadata(path: Path) -> dict[str, Any] | None:
    """No timestamps in the saved file, so the same results give the same bytes."""
    suffix = path.suffix.lower()
    if suffix == ".png":
        return {"Software": None}
    if suffix == ".pdf":
        return {"CreationDate": None, "Creator": None}
    return None


def _short(column: str | None) -> str:
    return short_name(column) if column else ""


def _label(column: str | None, value: Any, rows: pd.DataFrame) -> str | None:
    """A legend or title text for a value: a protocol's label (``protocol.label``)."""
    if column is None:
        return None
    if column == "protocol.name" and "protocol.label" in rows:
        labels = rows.loc[rows["protocol.name"] == value, "protocol.label"].dropna().unique()
        if len(labels) == 1 and str(labels[0]) != str(value):
            return f"{labels[0]}"
    return number(value)


# --------------------------------------------------------------------- command line
def parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command line of ``python -m experiments.plot`` (and ``ldp-harness plot``)."""
    p = argparse.ArgumentParser(
        prog=prog or "python -m experiments.plot",
        description=__doc__.splitlines()[0].split(": ", 1)[-1],
    )
    p.add_argument("results_dir", help="an experiment's results directory, or a results root")
    p.add_argument("--x", required=True, help="column on the x axis, e.g. epsilon")
    p.add_argument(
        "--y",
        required=True,
        help="metric, e.g. sq_error_n (alias: mse), f1; side by side: mse,adversary_success",
    )
    p.add_argument("--hue", help="column whose values are coloured series, e.g. protocol")
    p.add_argument("--col", help="column whose values are panel columns")
    p.add_argument("--row", help="column whose values are panel rows")
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FILTER",
        help="keep rows: KEY=a,b  KEY!=v  KEY>=v  KEY<=v  KEY>v  KEY<v (repeatable)",
    )
    p.add_argument("--ci95", action="store_true", help="95%% confidence intervals (default: ±1 SE)")
    for axis in ("x", "y"):
        group = p.add_mutually_exclusive_group()
        group.add_argument(f"--log{axis}", dest=f"log{axis}", action="store_true", default=None)
        group.add_argument(f"--linear{axis}", dest=f"log{axis}", action="store_false")
    p.add_argument("--out", default=None, help="output file (default: <y>-vs-<x>.png)")
    return p


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Command line entry point; returns the exit code (2: a usage or selection error)."""
    args = parser(prog).parse_args(argv)
    out = Path(args.out) if args.out else Path(f"{args.y.replace(',', '+')}-vs-{args.x}.png")
    try:
        figure = plot(
            args.results_dir,
            x=args.x,
            y=args.y,
            hue=args.hue,
            col=args.col,
            row=args.row,
            where=args.where,
            errorbar="ci95" if args.ci95 else "se",
            logx=args.logx,
            logy=args.logy,
            out=out,
        )
    except SelectionError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    plt.close(figure)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
