"""Shared by the figures of [PEM] Section V (``fig_pem_fig2``, ``fig_pem_fig3``, ``fig_pem_fig4``).

Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*, Sec. V
validates the analysis: empirical identification and utility of PEM beside the model,
Eq. (5) for one value and Eq. (4) for F1 and NCR.  The model of a setting is computed
for the very configuration its trials ran: the ``protocol.*`` columns of the table are
handed to the trial's own builder (:func:`experiments.build.build_heavy_hitter`), whose
PEM derives its shape exactly as in the run (for the optimal PEM of Fig. 4 by
:func:`ldp.theory.pem.optimize` with the same k, m, n, ε, query limit, assumed
distribution and goal); :func:`check_recorded` compares it with the oracle queries and γ
each trial recorded.  Nothing here simulates: the model is closed form, the data's true
frequencies come from the table's ``frequency`` rows (``options.per_value``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import style
from experiments.figures.pem_section6 import built, n_users, proposed
from experiments.figures.tolerance import Part, WithinSE
from ldp.theory import pem as theory


def dataset_colors() -> dict[str, tuple[float, float, float]]:
    """Colour per data set in Figs. 3 and 4: every series is PEM (the protocol Sec. VI
    proposes), so two shades of its colour, zipf(-20) light and zipf dark."""
    return dict(zip(("zipf(-20)", "zipf"), style.shades(proposed(), 2), strict=True))


#: Marker and line style per metric: F1 filled circles and solid lines, NCR open squares
#: and dashed lines.
METRICS = {
    "f1": {"label": "F1", "marker": "o", "ls": "-", "filled": True},
    "ncr": {"label": "NCR", "marker": "s", "ls": "--", "filled": False},
}
#: Error bars: ± this many standard errors of the mean over runs.
ERROR_SE = 2
#: Parameters a setting is told apart by (besides the data set), and their symbols.
SETTING_COLUMNS = (col.DATASET_N, col.DATASET_M, col.EPSILON)
SYMBOL = {col.DATASET_N: col.N, col.DATASET_M: "m", col.EPSILON: "ε"}
#: The columns of :func:`point` (a figure adds its own after them).
POINT_COLUMNS = [
    col.CONFIG_HASH,
    "panel",
    "x",
    "dataset",
    col.METRIC,
    col.MEAN,
    col.SE,
    "runs",
    col.K,
    "model",
]


def settings(table: pd.DataFrame) -> pd.DataFrame:
    """One row per setting (``config_hash``): its parameter columns, and ``label``."""
    params = [c for c in table.columns if c.startswith(("protocol.", "dataset."))]
    params += [
        c for c in (col.EPSILON, col.K, col.N, col.ENGINE, col.EXPERIMENT) if c in table.columns
    ]
    rows = table.drop_duplicates(col.CONFIG_HASH).set_index(col.CONFIG_HASH)[params].copy()
    labels = rows[col.DATASET_LABEL] if col.DATASET_LABEL in rows else rows[col.DATASET]
    rows["label"] = labels.fillna(rows[col.DATASET]).astype(str)
    return rows


def pem_config(row: pd.Series) -> theory.PEMConfig:
    """The PEM configuration a setting (a row of :func:`settings`) ran with."""
    return built(row).config


def true_frequencies(table: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per setting, the true frequencies f_1 >= f_2 >= ... of its top-k values."""
    rows = table[table[col.METRIC] == "frequency"]
    means = rows.groupby([col.CONFIG_HASH, col.ITEM])[col.VALUE].mean()
    return {
        key: np.sort(group.to_numpy())[::-1] for key, group in means.groupby(level=col.CONFIG_HASH)
    }


def model_utility(row: pd.Series, frequencies: np.ndarray, goal: str) -> float:
    """[PEM] Eq. (4) with weights of ``goal`` (f1 or ncr) for a setting's configuration."""
    k = int(row[col.K])
    return theory.utility(
        frequencies[:k], n_users(row), float(row[col.EPSILON]), pem_config(row), k, goal
    )


def refined_scores(table: pd.DataFrame, goal: str) -> pd.Series:
    """The refined model's score (:mod:`ldp.theory.pem_refined`: Eq. (4) with identification
    probabilities that let the step's other candidates be the data's own prefixes) per
    setting, from the ``refined.<goal>`` rows its trial 0 recorded (``options.model``);
    a setting run without them is absent."""
    rows = table[table[col.METRIC] == f"refined.{goal}"]
    return rows.groupby(col.CONFIG_HASH)[col.VALUE].first()


def check_recorded(table: pd.DataFrame) -> list[str]:
    """Settings whose rebuilt configuration disagrees with what the trials recorded
    (``diag.oracle_queries`` = Σ|D_i|, ``diag.gamma``); empty when all agree."""
    wrong = []
    for key, row in settings(table).iterrows():
        config = pem_config(row)
        for metric, expected in (
            ("diag.oracle_queries", config.queries),
            ("diag.gamma", config.gamma),
        ):
            seen = table.loc[
                (table[col.CONFIG_HASH] == key) & (table[col.METRIC] == metric), col.VALUE
            ]
            if len(seen) and not np.allclose(seen.to_numpy(), expected):
                wrong.append(f"{key}: {metric} {seen.iloc[0]:g} != model {expected}")
    return wrong


def default_values(rows: pd.DataFrame, columns: Sequence[str] = SETTING_COLUMNS) -> dict:
    """The default of each varied parameter: the value most settings share (the panels
    vary one parameter each, so the default point's value is the most common one)."""
    return {c: rows[c].mode().iloc[0] for c in columns}


def panel_rows(rows: pd.DataFrame, varied: str, defaults: dict) -> pd.DataFrame:
    """The settings of the panel that varies ``varied``: the others at their default."""
    keep = np.ones(len(rows), dtype=bool)
    for column, value in defaults.items():
        if column != varied:
            keep &= np.isclose(rows[column].astype(float), float(value))
    return rows[keep]


def errorbar(ax, x, mean, se, colour, metric: str, **kwargs) -> None:
    """One empirical point (or several) in the house style of the Section V figures."""
    spec = METRICS[metric]
    ax.errorbar(
        x,
        mean,
        yerr=ERROR_SE * np.asarray(se),
        fmt=spec["marker"],
        color=colour,
        mfc=colour if spec["filled"] else "white",
        ms=5,
        mew=1.1,
        capsize=2,
        lw=0.8,
        **kwargs,
    )


def show(column: str, value: float) -> str:
    """A parameter's value as a title or a claim prints it (n as :func:`format_count`)."""
    return format_count(value) if column == col.DATASET_N else f"{value:g}"


def fixed(defaults: dict, varied: str) -> str:
    """The parameters a panel holds at their defaults, e.g. "m = 64, ε = 1"."""
    return ", ".join(f"{SYMBOL[c]} = {show(c, v)}" for c, v in defaults.items() if c != varied)


def point(stats: pd.DataFrame, key: str, row: pd.Series, metric: str, **columns) -> dict:
    """One point of Figs. 3 and 4: a setting's mean and SE of ``metric`` over its runs (from
    ``stats``, a summary by ``config_hash``), with ``columns`` (panel, x, model, ...)."""
    return {
        col.CONFIG_HASH: key,
        "dataset": row["label"],
        col.METRIC: metric,
        col.MEAN: stats.loc[key, col.MEAN],
        col.SE: stats.loc[key, col.SE],
        "runs": int(stats.loc[key, col.TRIALS]),
        col.K: int(row[col.K]),
        **columns,
    }


def draw_utility(ax, points: pd.DataFrame, refined: bool = False) -> None:
    """Figs. 3 and 4: each (data set, metric)'s runs as points beside the model (4) as a thin
    line (and the refined model as a thick pale one), in the data set's colour."""
    for (dataset, metric), series in points.groupby(["dataset", col.METRIC], sort=False):
        colour, ls = dataset_colors().get(dataset, "0.3"), METRICS[metric]["ls"]
        ax.plot(series["x"], series["model"], color=colour, lw=1.0, ls=ls, alpha=0.9)
        if refined:
            ax.plot(series["x"], series["refined"], color=colour, lw=1.6, ls=ls, alpha=0.35)
        errorbar(ax, series["x"], series[col.MEAN], series[col.SE], colour, metric)


def format_count(value: float) -> str:
    """10^5 as "10⁵", 50,000 as "50,000"."""
    exponent = math.log10(value) if value > 0 else 0.5
    if exponent.is_integer() and exponent >= 3:
        return "10" + str(int(exponent)).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{value:,.0f}"


def model_part(points: pd.DataFrame, column: str = "model", what: str = "the model (4)") -> Part:
    """'On the line' read as: every (setting, metric) point's mean within sampling error of
    the model (z from a family-wise 0.01).  An SE of 0 (every run alike) is raised to one
    heavy hitter in one run, 1/(k runs).  Failing is 'partly': the points sit near the
    line, but not within what the runs' own spread allows."""
    return Part(
        "mean utility per (setting, metric)",
        points[col.MEAN].to_numpy(),
        WithinSE(points[column].to_numpy(), model_se(points), alpha=0.01, what=what),
        otherwise="partly",
    )


def model_se(points: pd.DataFrame) -> np.ndarray:
    """The points' standard errors, floored at 1/(k runs) (one value in one run)."""
    k = points[col.K].to_numpy(dtype=float) if col.K in points else np.full(len(points), 16.0)
    return np.maximum(points[col.SE].to_numpy(dtype=float), 1.0 / (k * points["runs"].to_numpy()))


def model_text(
    points: pd.DataFrame, where: Callable[[pd.Series], str], column: str = "model"
) -> tuple[str, np.ndarray]:
    """How far the runs sit from a model: a sentence, and which points are beyond z SE."""
    part = model_part(points, column)
    scores = part.tolerance.scores(part.array)
    beyond = np.abs(scores) > part.tolerance.z()
    worst = points.iloc[int(np.nanargmax(np.abs(scores)))]
    gap = (points[col.MEAN] - points[column]).abs()
    text = (
        f"{int(beyond.sum())} of {len(points)} (setting, metric) points beyond "
        f"{part.tolerance.z():.1f} SE (mean |empirical − model| {gap.mean():.3f}); largest "
        f"{np.nanmax(np.abs(scores)):.1f} SE at {where(worst)} ({worst[col.MEAN]:.3f} vs "
        f"{worst[column]:.3f})"
    )
    return text, beyond


def optimism(points: pd.DataFrame, beyond: np.ndarray, column: str = "model") -> str:
    """Which side of the runs the model lies at the points beyond sampling error."""
    above = int((points[column].to_numpy() > points[col.MEAN].to_numpy())[beyond].sum())
    return (
        f"at {above} of the {int(beyond.sum())} points beyond sampling error the model is "
        "above the runs"
    )


def metric_legend(figure, data: pd.DataFrame, datasets: Sequence[str]) -> None:
    """The shared legend of Figs. 3 and 4: one colour per data set, one marker per metric."""
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=dataset_colors()[d], lw=6, label=d)
        for d in datasets
        if d in set(data["dataset"])
    ]
    for spec in METRICS.values():
        handles.append(
            Line2D(
                [],
                [],
                color="0.3",
                marker=spec["marker"],
                mfc="0.3" if spec["filled"] else "white",
                ls=spec["ls"],
                lw=1.0,
                label=f"{spec['label']}: runs (±2 SE) / model (4)",
            )
        )
    figure.legend(handles=handles, loc="upper center", ncol=4, bbox_to_anchor=(0.5, 1.07))
