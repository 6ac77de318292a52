"""What the figures read from an experiment's results table: its per-trial rows, their
summary per group, what a metric's rows mean, and the protocol a row was measured with.

Figures use this module, never the Hydra app or the trial code: a table's ``protocol.*``
columns give back the protocol node (:func:`protocol_from_row`), built as the trial built
it (:func:`build_protocol`, :func:`build_heavy_hitter`) to draw its closed forms; the
protocols a paper's comparison names come from the experiment's ``figure:`` block
(:func:`figure_config`), so a figure's code names none.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from experiments import columns as col
from experiments.build import build_heavy_hitter, build_protocol, protocol_from_row
from experiments.check import check_figure
from experiments.schema import FigureConfig

__all__ = [
    "FRONTIER_SKIPS",
    "FRONTIER_VALUES",
    "SHUFFLE_DELTA",
    "build_heavy_hitter",
    "build_protocol",
    "figure_config",
    "frequency_mse",
    "label_of",
    "per_trial",
    "protocol_from_row",
    "protocol_name",
    "sources_text",
    "summary",
    "worst_t",
]

#: δ of the central (ε, δ) that an oracle trial's ``shuffle_epsilon`` rows record.
SHUFFLE_DELTA = 1e-6

#: Why the frontier trial lacks an oracle's number at a setting: the ``skipped.<NAME>``
#: row's value is the sum of these flags.
FRONTIER_SKIPS = {
    1: "not built at this (d, ε) with its default parameters",
    2: "its reports engine (n reports, full-domain decode) is over the frontier's budget "
    "or not offered",
    4: "its sampled engine is over the frontier's budget or not offered (its closed form "
    "is still used)",
}

#: Values nobody holds whose estimates measure an oracle's variance (the first ones).
FRONTIER_VALUES = 256


#: Where the experiment configs live.
EXPERIMENT_DIR = Path(__file__).resolve().parent.parent / "conf/experiment"


@functools.cache
def figure_config(experiment: str) -> FigureConfig:
    """The ``figure:`` block of ``conf/experiment/<experiment>.yaml``, checked: the
    protocols the figure reproduces in legend order (``series``), its reference
    (``reference``) and its claims' subjects (``subjects``), in the registry's spelling.

    It is read from the file itself (a figure-level key, written in the experiment's own
    yaml, not composed into a setting); ConfigError if a name is not registered.
    """
    node = OmegaConf.load(EXPERIMENT_DIR / f"{experiment}.yaml").get("figure")
    container = OmegaConf.to_container(node, resolve=True) if node is not None else {}
    return FigureConfig(**check_figure(container))


def per_trial(table: pd.DataFrame, metric: str | Collection[str]) -> pd.DataFrame:
    """The per-trial rows of a metric (or of several), without per-value rows."""
    metrics = [metric] if isinstance(metric, str) else list(metric)
    return table[table[col.METRIC].isin(metrics) & table[col.ITEM].isna()].copy()


def frequency_mse(row: pd.Series, epsilon: float, n: int, d: int) -> float:
    """Exact mean over the d values of Var[ĉ(v)]/n², n users spread over them, of the
    protocol of ``row`` (rebuilt as the trial built it) at ``epsilon``: its variance at the
    mean count n/d, Var being affine in the count ([FO] Eq. (3))."""
    oracle = build_protocol(protocol_from_row(row), float(epsilon), domain_size=d)
    return oracle.variance(n, n / d) / n**2


def label_of(rows: pd.DataFrame, name: str) -> str:
    """A protocol's legend text: the ``protocol.label`` of its rows, else its name."""
    labels = rows[col.PROTOCOL_LABEL].dropna().unique() if col.PROTOCOL_LABEL in rows else []
    return str(labels[0]) if len(labels) else name


def sources_text(table: pd.DataFrame) -> str:
    """Where a table's data came from, for a title: "real", "surrogate", ... or "unknown"."""
    sources = sorted(str(s) for s in table[col.DATA_SOURCE].dropna().unique())
    return ", ".join(s.split(":")[0] for s in sources) or "unknown"


def protocol_name(table: pd.DataFrame) -> str:
    """The one protocol whose trials ``table`` holds (its registry name), for a figure of a
    single protocol that colours it without naming it; ValueError if there are several."""
    names = table[col.PROTOCOL].dropna().astype(str).unique()
    if len(names) != 1:
        raise ValueError(f"expected the rows of one protocol, got {sorted(names)}")
    return str(names[0])


def summary(
    table: pd.DataFrame,
    metric: str | Collection[str] | None,
    by: Sequence[str],
    *,
    per: str | None = None,
    first: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Per group of ``by``: the mean of the trials' values and its spread.

    Parameters
    ----------
    table
        A results table (tidy: one row per trial and metric), or rows already chosen
        when ``metric`` is None.
    metric
        The metric(s) to summarise (their per-trial rows), or None for all of ``table``.
    by
        Grouping columns (a missing value is a group of its own).
    per
        A column to divide each row's ``value`` and ``analytic`` by first (e.g. ``"n"``).
    first
        Extra columns ``{name: column}``: the column's first value in each group.

    Returns
    -------
    pandas.DataFrame
        ``by``, ``mean``, ``std`` (0 for one trial), ``trials`` (trials with a value: a
        squared error is NaN in a run that identified nothing, and left out), ``analytic``
        (mean of the rows' exact expectations), the ``first`` columns, and ``se`` = std /
        √trials.
    """
    rows = table if metric is None else per_trial(table, metric)
    rows = rows.dropna(subset=[col.VALUE])
    if col.ANALYTIC not in rows:  # a table built by hand may leave it out
        rows = rows.assign(**{col.ANALYTIC: np.nan})
    if per is not None:
        rows = rows.assign(
            **{col.VALUE: rows[col.VALUE] / rows[per], col.ANALYTIC: rows[col.ANALYTIC] / rows[per]}
        )
    groups = rows.groupby(list(by), dropna=False)
    values = groups[col.VALUE]
    out = pd.DataFrame(
        {
            col.MEAN: values.mean(),
            col.STD: values.std(),
            col.TRIALS: values.size(),
            col.ANALYTIC: groups[col.ANALYTIC].mean(),
            **{name: groups[column].first() for name, column in (first or {}).items()},
        }
    ).reset_index()
    out[col.STD] = out[col.STD].fillna(0.0)
    out[col.SE] = out[col.STD] / np.sqrt(out[col.TRIALS])
    return out


def worst_t(table: pd.DataFrame, level: float) -> tuple[float, float]:
    """Each setting's mean against its exact expectation: the largest |t| and its limit.

    ``table`` has one row per setting with ``mean``, ``std``, ``trials`` and ``analytic``
    (as :func:`summary` gives).  The limit is the two-sided t quantile with the fewest
    trials - 1 degrees of freedom at the overall false-alarm rate ``level`` split over the
    settings (Bonferroni).  Returns ``(largest |t|, limit)``.
    """
    from scipy.stats import t as student_t  # scipy only where a figure checks its claims

    settings = len(table)
    limit = float(student_t.isf(level / (2 * settings), int(table[col.TRIALS].min()) - 1))
    t = (table[col.MEAN] - table[col.ANALYTIC]) / (table[col.STD] / np.sqrt(table[col.TRIALS]))
    return float(np.abs(t).max()), limit
