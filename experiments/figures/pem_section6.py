"""Shared by the figures of [PEM] Section VI (``fig_pem_fig5`` ... ``fig_pem_fig9``).

Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*, Sec. VI
compares PEM with SPM and MCM on URL, AOL and a synthetic exponential data set, 10 runs
each, "the average and standard deviation are reported": every point here is the mean
over runs with an error bar of ± one standard deviation.  The analytical lines are
closed forms: PEM's utility model, Eq. (4) (:func:`ldp.theory.pem.utility`), for the very
configuration a setting ran with (rebuilt from the table's ``protocol.*`` columns by the
trial's own builder), and the variance of an OLH estimate, Eq. (3)
(:func:`ldp.theory.pure_variance`), for Fig. 9.  Nothing here simulates.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from experiments import columns as col
from experiments.figures import style
from experiments.figures.tolerance import Band, Beyond, Part, WithinSE, bonferroni_z
from experiments.results import build_heavy_hitter, figure_config, protocol_from_row, summary
from experiments.schema import FigureConfig
from ldp.theory import pem as pem_theory
from ldp.theory import pem_figures

#: The data sets of Sec. VI, in the paper's column order.
DATASETS = ("url", "aol", "exponential")
DATASET_TITLES = {"url": "URL", "aol": "AOL", "exponential": "synthetic"}
#: The two utility metrics of Figs. 5-6 ([PEM] Sec. IV-B1).
METRIC_LABELS = {"f1": "F1", "ncr": "NCR"}
#: Line style of a budget variant (MCM, SPM): users partitioned (solid), ε split (dashed).
BUDGET_LS = {"partition": "-", "split": "--"}
CAPSIZE = 2.5


# ------------------------------------------------------------------------------ table
def comparison() -> FigureConfig:
    """The protocols Sec. VI compares, from ``pem_fig5``'s ``figure:`` block: ``series`` in
    legend order, ``subjects`` the protocol the paper proposes, ``reference`` its baselines."""
    return figure_config("pem_fig5")


def proposed() -> str:
    """The protocol Sec. VI proposes (the claims' subject; its model, Eq. (4), is drawn)."""
    return comparison().subjects[0]


def budget(rows: pd.DataFrame) -> pd.Series:
    """How MCM/SPM rows used the budget: ``protocol.budget``, else the variant's default
    (``"partitioned"``: the users; ``"original"`` and ``"improved"``: ε split)."""
    explicit = rows[col.PROTOCOL_BUDGET] if col.PROTOCOL_BUDGET in rows else None
    variant = rows.get(col.PROTOCOL_VARIANT, pd.Series("improved", index=rows.index))
    default = variant.map({"partitioned": "partition"}).fillna("split")
    return default if explicit is None else explicit.fillna(default)


def data_title(table: pd.DataFrame, dataset: str) -> str:
    """The data set's column title, saying when a calibrated surrogate stood in."""
    rows = table[table[col.DATASET] == dataset]
    sources = set(rows[col.DATA_SOURCE].astype(str)) if col.DATA_SOURCE in rows else set()
    title = DATASET_TITLES.get(dataset, dataset)
    if dataset == "exponential":
        return f"{title} (exponential)"
    return f"{title} (surrogate)" if "surrogate" in sources else title


def ordered(names: Sequence[str]) -> list[str]:
    """Protocol names in legend order."""
    return style.order(list(dict.fromkeys(names)))


# --------------------------------------------------------------------------- drawing
def points(
    ax: plt.Axes,
    x: Sequence[float],
    stats: pd.DataFrame,
    colour: Any,
    *,
    marker: str = "o",
    ls: str = "-",
    filled: bool = True,
    label: str | None = None,
    join: bool = True,
    dodge: float = 0.0,
) -> None:
    """Means with ± one standard deviation as error bars, optionally joined by a line."""
    x = np.asarray(x, dtype=float) + dodge
    ax.errorbar(
        x,
        stats[col.MEAN].to_numpy(),
        yerr=stats[col.STD].to_numpy(),
        fmt=marker,
        ls=ls if join else "none",
        color=colour,
        lw=1.1,
        ms=4.5,
        capsize=CAPSIZE,
        elinewidth=0.8,
        mfc=colour if filled else "white",
        mew=1.0,
        label=label,
    )


def series_points(ax: plt.Axes, stats: pd.DataFrame, x: str, series: str, **kwargs: Any) -> None:
    """:func:`points` at ``stats[x]`` in the colour and marker of ``series`` (a protocol, or
    a preset's label such as "MCM (√n channels)")."""
    colour, marker = style.series_color(series), style.series_marker(series)
    points(ax, stats[x], stats, colour, marker=marker, **kwargs)


def model_line(ax: plt.Axes, x: Sequence[float], y: Sequence[float], colour: Any, **kw) -> None:
    """An analytical curve: a thin line in the series' colour."""
    ax.plot(np.asarray(x, float), np.asarray(y, float), color=colour, lw=0.9, alpha=0.9, **kw)


def utility_axis(ax: plt.Axes, label: str | None) -> None:
    """y from 0 to 1 (with room for the error bars) and its label."""
    ax.set_ylim(-0.04, 1.06)
    if label:
        ax.set_ylabel(label)


def log2_k_axis(ax: plt.Axes, ks: Sequence[int]) -> None:
    """A base-2 log x axis with a tick at every k of the grid."""
    ax.set_xscale("log", base=2)
    ticks = sorted({int(k) for k in ks})
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(k) for k in ticks])
    ax.minorticks_off()
    ax.set_xlabel("heavy hitters wanted k (log scale)")


# ----------------------------------------------------------------------------- models
def protocol_json(row: pd.Series) -> str:
    """The ``protocol`` config node of a table row, as canonical JSON."""
    return json.dumps(protocol_from_row(row), sort_keys=True)


@functools.lru_cache(maxsize=512)
def _built(protocol: str, epsilon: float, k: int, m: int, n: int):
    config = {"protocol": json.loads(protocol), col.EPSILON: epsilon, col.K: k}
    return build_heavy_hitter(config, m, n)


def n_users(row: pd.Series) -> int:
    """The users of a setting's data set: ``n``, else (a row without it) ``dataset.n``."""
    return int(row[col.N] if col.N in row and not pd.isna(row[col.N]) else row[col.DATASET_N])


def built(row: pd.Series, epsilon: float | None = None, k: int | None = None):
    """The protocol object a row's setting ran with (at ``epsilon``/``k`` if given): for
    PEM its shape is derived exactly as in the run (the optimizer with the same inputs)."""
    return _built(
        protocol_json(row),
        float(row[col.EPSILON] if epsilon is None else epsilon),
        int(row[col.K] if k is None else k),
        int(row[col.DATASET_M]),
        n_users(row),
    )


def exponential_frequencies(row: pd.Series, size: int = 1024) -> np.ndarray:
    """The exponential data set's frequencies for a row's parameters
    (:func:`ldp.theory.pem_figures.exponential_frequencies`)."""
    scale = float(row[col.DATASET_SCALE]) if not pd.isna(row.get(col.DATASET_SCALE)) else 0.05
    support = int(row[col.DATASET_SUPPORT]) if not pd.isna(row.get(col.DATASET_SUPPORT)) else size
    return pem_figures.exponential_frequencies(scale, support)


def pem_model(
    row: pd.Series, goal: str = "f1", epsilon: float | None = None, k: int | None = None
) -> float:
    """[PEM] Eq. (4) for a PEM setting on the exponential data (its law as the truth)."""
    protocol = built(row, epsilon, k)
    k = int(row[col.K] if k is None else k)
    epsilon = float(row[col.EPSILON] if epsilon is None else epsilon)
    f = exponential_frequencies(row)
    return pem_theory.utility(f[:k], int(row[col.N]), epsilon, protocol.config, k, goal)


def final_test(row: pd.Series, epsilon: float) -> tuple[float, float]:
    """(ρ, ε'): the share of users and the budget behind a protocol's released estimates.

    PEM: the last of its g groups at ε; MCM/SPM partitioning the users: their
    ``final_fraction`` at ε; splitting ε: every user at ``value_share`` x ε.
    """
    protocol = built(row, epsilon)
    if row[col.PROTOCOL] == proposed():
        return protocol.config.fractions[-1], epsilon
    if protocol.budget == "partition":
        return protocol.final_fraction, epsilon
    return 1.0, protocol.value_share * epsilon


def squared_error_model(row: pd.Series, epsilon: float) -> float:
    """Expected (ñ_v - n_v)^2 of a released true heavy hitter, averaged over the true top k
    (:func:`ldp.theory.pem_figures.released_squared_error` at the row's final test)."""
    rho, eps = final_test(row, epsilon)
    f = exponential_frequencies(row)[: int(row[col.K])]
    return pem_figures.released_squared_error(int(row[col.N]), f, rho, eps)


# ----------------------------------------------------------------------------- claims
def fmt(stats: pd.DataFrame | pd.Series | None) -> str:
    """Mean ± standard deviation of a one-row summary, e.g. 0.91 ± 0.03 (or n/a)."""
    if stats is None or len(stats) == 0:
        return "n/a"
    row = stats.iloc[0] if isinstance(stats, pd.DataFrame) else stats
    return f"{row[col.MEAN]:.2f} ± {row[col.STD]:.2f}"


def pick(stats: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """The rows of a summary matching every ``column=value`` (floats compared closely)."""
    keep = np.ones(len(stats), dtype=bool)
    for column, value in where.items():
        column = column.replace("__", ".")
        if isinstance(value, float):
            keep &= np.isclose(stats[column].astype(float), value)
        else:
            keep &= (stats[column] == value).to_numpy()
    return stats[keep]


def mean_of(stats: pd.DataFrame, **where: Any) -> float:
    """The mean of the single matching row, NaN if none."""
    rows = pick(stats, **where)
    return float(rows[col.MEAN].iloc[0]) if len(rows) else float("nan")


def wide(stats: pd.DataFrame, index: Sequence[str], column: str = col.PROTOCOL):
    """(means, standard errors) of a summary, one row per ``index``, a column per ``column``
    value.  An SE of 0 (every run alike: F1 all 0 or all 1) is raised to one heavy hitter
    in one run, 1/(k runs), the resolution of a mean F1 at k (16 where k is not a column)."""
    k = stats[col.K].astype(float) if col.K in stats else pd.Series(16.0, index=stats.index)
    floor = 1.0 / (k * stats[col.TRIALS].clip(lower=1))
    stats = stats.assign(**{col.SE: np.maximum(stats[col.SE].fillna(0.0), floor)})
    means = stats.pivot_table(index=list(index), columns=column, values=col.MEAN)
    return means, stats.pivot_table(index=list(index), columns=column, values=col.SE)


def lead_over(means: pd.DataFrame, se: pd.DataFrame, name: str, others: Sequence[str]):
    """The lead of ``name`` over the best of ``others`` at each row where both have a
    mean: (lead, its SE, the best other's name per row)."""
    rivals = means[[c for c in others if c in means]].dropna(how="all")
    rows = rivals.index.intersection(means[name].dropna().index)
    rivals = rivals.loc[rows]
    best = rivals.idxmax(axis=1)
    best_se = pd.Series([se.loc[i, b] for i, b in best.items()], index=rows, dtype=float)
    lead = means.loc[rows, name] - rivals.max(axis=1)
    return lead, pd.Series(np.hypot(se.loc[rows, name], best_se), index=rows), best


def dof(frame: pd.DataFrame) -> float:
    """Degrees of freedom of a standard error from the fewest runs behind it (runs - 1):
    a summary's ``trials``, or a table's distinct ``trial`` per setting.  Ten runs give
    Student's t with 9, not the normal z (conservative for a difference of two means)."""
    if col.TRIALS in frame:
        runs = int(frame[col.TRIALS].min()) if len(frame) else 2
    else:
        runs = int(frame.groupby(col.CONFIG_HASH)[col.TRIAL].nunique().min()) if len(frame) else 2
    return float(max(runs - 1, 1))


def tie_part(
    quantity: str, lead: pd.Series, se: pd.Series, otherwise: str = "differs", df: float = np.inf
) -> Part:
    """'Ahead' read as: every lead at least a tie within sampling error (one-sided, z or
    Student's t with ``df`` from a family-wise 0.01 over the points)."""
    return Part(
        quantity,
        lead.to_numpy(dtype=float),
        WithinSE(0.0, se.to_numpy(dtype=float), alpha=0.01, what="a tie", side="above", df=df),
        otherwise=otherwise,
    )


def lead_parts(
    quantity: str, lead: pd.Series, se: pd.Series, rival: str, df: float = np.inf
) -> tuple[list[Part], str]:
    """'Performs best' read twice: no rival ahead beyond sampling error (:func:`tie_part`,
    "differs" if not), and the means in the order the paper reads on its plot, the leader's
    mean at or above every rival's ("partly" if not, since a reversal within sampling error
    is what a rerun of the paper's plot could show).  With the cause the figures measure."""
    tie = tie_part(quantity, lead, se, df=df)
    plotted = Part(
        f"{quantity}, as plotted",
        lead.to_numpy(dtype=float),
        Beyond(0.0, se.to_numpy(dtype=float), z=0.0, reading="'best' read on the means"),
        otherwise="partly",
    )
    limit = tie.tolerance.z(len(lead))
    beyond = [where(i) for i, v in lead.items() if v < -limit * se[i]]
    behind = [where(i) for i, v in lead.items() if v < 0]
    if beyond:
        reason = f"{rival} ahead beyond sampling error at {', '.join(beyond)}"
    elif behind:
        reason = (
            f"{rival}'s mean above the leader's at {', '.join(behind)}, within sampling "
            f"error (at most {limit:.1f} SE)"
        )
    else:
        reason = ""
    return [tie, plotted], reason


def beyond_part(
    quantity: str, lead: pd.Series, se: pd.Series, reading: str, df: float = np.inf
) -> Part:
    """'Significantly ahead' read as: every lead above z standard errors (one-sided, z or
    Student's t with ``df`` from a family-wise 0.01 over the points); the values are the
    leads in standard errors."""
    z = bonferroni_z(len(lead), 0.01, one_sided=True, df=df)
    score = (lead / se).to_numpy(dtype=float)
    return Part(quantity, score, Band(z, reading=f"{reading} ({z:.1f} SE: one-sided, 0.01)"))


def where(index: Any) -> str:
    """A row of :func:`wide` as text, e.g. "url 4"."""
    parts = index if isinstance(index, tuple) else (index,)
    return " ".join(f"{v:g}" if isinstance(v, (float, np.floating)) else str(v) for v in parts)


def listed(values: pd.Series, digits: int = 2) -> str:
    """Values per index as "url 1: +0.52, url 2: +0.61"."""
    return ", ".join(f"{where(i)}: {v:+.{digits}f}" for i, v in values.items())


def runs_note(table: pd.DataFrame) -> str:
    """How many runs each setting of a table has, e.g. "10 runs" or "1-10 runs"."""
    counts = table.groupby(col.CONFIG_HASH)[col.TRIAL].nunique()
    if counts.empty:
        return "no runs"
    low, high = int(counts.min()), int(counts.max())
    if low == high:
        return "1 run" if low == 1 else f"{low} runs"
    return f"{low}-{high} runs"


# ----------------------------------------------------------------- Figs. 5 and 6 grids
def protocol_label(name: str) -> str:
    """Legend text of the Sec. VI-A versions: PEM, and the improved MCM and SPM."""
    return name if name == proposed() else f"{name} (improved)"


#: Line styles of the sensitivity lines drawn beside a protocol (open markers).
VARIANT_LS = ("--", "-.", ":")


def series_of(rows: pd.DataFrame) -> pd.Series:
    """Each row's line: its preset's label (``protocol.label``), else its protocol's name.
    Presets of one protocol (MCM with √n channels, MCM with blocks) are lines of their own,
    never pooled with the protocol's main line."""
    label = rows[col.PROTOCOL_LABEL] if col.PROTOCOL_LABEL in rows else None
    if label is None:
        return rows[col.PROTOCOL].astype(str)
    return label.where(label.notna(), rows[col.PROTOCOL]).astype(str)


def main_rows(table: pd.DataFrame, suffix: str = "") -> pd.DataFrame:
    """The rows of the paper's versions: a line labelled ``<protocol><suffix>`` (PEM, MCM,
    SPM; Fig. 7's "MCM (threshold)"), not a sensitivity line."""
    if table.empty:
        return table
    return table[series_of(table) == table[col.PROTOCOL].astype(str) + suffix]


def draw_series(
    ax: plt.Axes,
    stats: pd.DataFrame,
    x: str,
    label_of: Any,
    suffix: str = "",
    grid: np.ndarray | None = None,
) -> None:
    """Every protocol's main line (filled, solid) and its sensitivity lines (open markers,
    dashed), from ``stats`` with columns ``protocol.name``, ``series``, ``x``; a series'
    missing points break its line (``grid``: every x of the panel)."""
    for name in ordered(stats[col.PROTOCOL]):
        mine = stats[stats[col.PROTOCOL] == name]
        main = f"{name}{suffix}"
        others = sorted(set(mine["series"]) - {main})
        for index, series_name in enumerate([main, *others]):
            series = mine[mine["series"] == series_name].set_index(x).sort_index()
            if series.empty:
                continue
            if grid is not None:
                series = series.reindex(grid)
            series = series.rename_axis(x).reset_index()
            variant = index > 0
            series_points(
                ax,
                series,
                x,
                series_name,
                ls=VARIANT_LS[(index - 1) % len(VARIANT_LS)] if variant else "-",
                filled=not variant,
                label=series_name if variant else label_of(name),
            )


def legend_entries(axes: Any, mains: Sequence[str]) -> tuple[list[Any], list[str]]:
    """One legend entry per line over ``axes``: the main lines in ``mains`` order, then the
    sensitivity lines in order of appearance."""
    seen: dict[str, Any] = {}
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    labels = [label for label in mains if label in seen]
    labels += [label for label in seen if label not in labels]
    return [seen[label] for label in labels], labels


def utility_grid(
    table: pd.DataFrame,
    x: str,
    xlabel: str,
    model_x: Sequence[float] | None = None,
    log2_x: bool = False,
) -> plt.Figure:
    """Figs. 5 and 6: a 2 x 3 grid, F1 on top and NCR below, columns URL, AOL, synthetic.

    Every protocol's runs as points (mean ± sd) joined by lines, its sensitivity lines
    (other presets of the protocol: :func:`series_of`) dashed with open markers; on the
    synthetic column PEM's model (4) as a thin dotted line at ``model_x`` (values of ``x``).
    """
    style.apply_theme()
    table = table.assign(series=series_of(table))
    datasets = [d for d in DATASETS if d in set(table[col.DATASET])]
    figure, axes = plt.subplots(
        2, len(datasets), figsize=(4.3 * len(datasets), 7.4), sharex="col", squeeze=False
    )
    letters = "abcdefghi"
    for row_index, metric in enumerate(METRIC_LABELS):
        stats = summary(table, metric, [col.DATASET, col.PROTOCOL, "series", x])
        for column, dataset in enumerate(datasets):
            ax = axes[row_index][column]
            panel = stats[stats[col.DATASET] == dataset]
            grid = np.sort(panel[x].unique())  # a protocol's missing points break its line
            draw_series(ax, panel, x, protocol_label, grid=grid)
            pem = main_rows(table[table[col.DATASET] == dataset])
            pem = pem[pem[col.PROTOCOL] == proposed()]
            if dataset == "exponential" and model_x is not None and len(pem):
                row = pem.iloc[0]
                values = [
                    pem_model(row, metric, epsilon=v)
                    if x == col.EPSILON
                    else pem_model(row, metric, k=v)
                    for v in model_x
                ]
                model_line(ax, model_x, values, style.color(proposed()), ls=":")
            letter = letters[row_index * len(datasets) + column]
            ax.set_title(f"({letter}) {data_title(table, dataset)}, {METRIC_LABELS[metric]}")
            utility_axis(ax, METRIC_LABELS[metric] if column == 0 else None)
            if log2_x:
                log2_k_axis(ax, table[x].unique())
            if row_index == 1:
                ax.set_xlabel(xlabel if not log2_x else ax.get_xlabel())
            else:
                ax.set_xlabel("")
    handles, labels = legend_entries(axes, [protocol_label(n) for n in comparison().series])
    if model_x is not None and "exponential" in datasets:
        handles.append(Line2D([], [], color=style.color(proposed()), lw=0.9, ls=":"))
        labels.append(f"{proposed()} model, Eq. (4) (synthetic)")
    figure.legend(
        handles, labels, loc="lower center", ncol=min(len(labels), 4), bbox_to_anchor=(0.5, -0.01)
    )
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    return figure


#: ``--quick`` overrides: one run per setting and a few points of each grid (a quick
#: override of ``hydra.sweeper.params.<axis>`` replaces that axis in every config of the
#: figure, so its values must be cheap for all of them).  Figures that read the same
#: config must have the same overrides (a config runs once, with the first figure's).
QUICK_FIG5 = ("n_trials=1", "hydra.sweeper.params.epsilon='1,2.5,4'")  # also Fig. 9
QUICK_FIG6 = ("n_trials=1", "hydra.sweeper.params.k='4,16'")  # SPM on URL: ~2 s at 16
QUICK_FIG7 = ("n_trials=1", "hydra.sweeper.params.epsilon='2,4'")
QUICK_FIG8 = ("n_trials=1", "hydra.sweeper.params.epsilon='0.9,1.2,2'")
#: ``--quick`` cuts of the sensitivity and partitioned lines' own configs (FigureSpec
#: ``quick_for``): the synthetic data only (~0.05 s a run there; MCM with √n channels on
#: URL and AOL takes ~0.5 s), and Fig. 7b-c's dashed lines at θ = 0.04 only (beside
#: (a)'s θ = 0.023; SPM's runs grow as θ falls).  So they add a few seconds to --quick.
SYNTHETIC_ONLY = ("hydra.sweeper.params.dataset=exponential",)
QUICK_FOR_FIG5 = {"pem_fig5_sens": SYNTHETIC_ONLY}
QUICK_FOR_FIG6 = {"pem_fig6_sens": SYNTHETIC_ONLY, "pem_fig6_block": SYNTHETIC_ONLY}
QUICK_FOR_FIG7 = {"pem_fig7_partitioned_theta": ("protocol.threshold=0.04",)}
#: Fig. 8b's refined model costs 1-3 s a setting (trial 0, ``options.model``): --quick keeps
#: its ε = 0.9 (the claim's) and 2.
QUICK_FOR_FIG8 = {"pem_fig8_eta": ("hydra.sweeper.params.epsilon='0.9,2'",)}
