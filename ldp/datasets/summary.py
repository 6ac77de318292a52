"""Summary figures of a dataset: what ``python -m ldp.datasets describe`` prints.

The figures are the ones the surrogates are calibrated to: the number of users and of
distinct values, the shares of the top 1, 16 and 32 values, the frequencies of the 16th
and 32nd values (k = 16 is the paper's default, Section VI-B) and a Zipf slope.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ldp.datasets.base import Dataset

__all__ = ["describe", "format_description", "zipf_slope"]

#: Ranks over which :func:`zipf_slope` fits its line.
SLOPE_RANKS = 1000


def zipf_slope(counts: np.ndarray, ranks: int = SLOPE_RANKS) -> float:
    """Zipf slope of a rank-frequency curve: minus the least-squares slope of log count on log rank.

    Parameters
    ----------
    counts : numpy.ndarray
        Counts sorted in descending order (``Dataset.histogram()[1]``).
    ranks : int
        Fit over ranks 1 .. min(ranks, number of distinct values), every rank weighted
        equally (ordinary least squares of ln(count_r) on ln(r)).

    Returns
    -------
    float
        s such that count_r is roughly proportional to r^(-s); NaN with fewer than 2 ranks.
    """
    top = np.asarray(counts[:ranks], dtype=float)
    top = top[top > 0]
    if len(top) < 2:
        return float("nan")
    log_rank = np.log(np.arange(1, len(top) + 1))
    slope = np.polyfit(log_rank, np.log(top), 1)[0]
    return float(-slope)


def describe(dataset: Dataset) -> dict[str, Any]:
    """The calibration figures of a dataset, as a dict (shares are fractions of users).

    Keys: ``name``, ``source``, ``m``, ``n``, ``distinct``, ``top1_share``,
    ``top16_share``, ``top32_share``, ``f16``, ``f32`` (frequencies of the 16th and 32nd
    most frequent values), ``zipf_slope`` (see :func:`zipf_slope`), ``top_values`` (the
    five most frequent, formatted) and ``notes``.
    """
    values, counts = dataset.histogram()
    n = max(dataset.n, 1)

    def kth(k: int) -> float:
        return float(counts[k - 1] / n) if len(counts) >= k else 0.0

    return {
        "name": dataset.name,
        "source": dataset.source,
        "m": dataset.m,
        "n": dataset.n,
        "distinct": len(counts),
        "top1_share": float(counts[:1].sum() / n),
        "top16_share": float(counts[:16].sum() / n),
        "top32_share": float(counts[:32].sum() / n),
        "f16": kth(16),
        "f32": kth(32),
        "zipf_slope": zipf_slope(counts),
        "top_values": [dataset.format(v) for v in values[:5]],
        "notes": list(dataset.notes),
    }


def format_description(figures: dict[str, Any]) -> str:
    """The figures of :func:`describe` as the lines the CLI prints."""
    lines = [
        f"{figures['name']} ({figures['source']}), m = {figures['m']} bits",
        f"  n                 {figures['n']:,}",
        f"  distinct values   {figures['distinct']:,}",
        f"  top-1 share       {100 * figures['top1_share']:.3f}%",
        f"  top-16 share      {100 * figures['top16_share']:.3f}%",
        f"  top-32 share      {100 * figures['top32_share']:.3f}%",
        f"  16th frequency    {100 * figures['f16']:.4f}%",
        f"  32nd frequency    {100 * figures['f32']:.4f}%",
        f"  Zipf slope        {figures['zipf_slope']:.3f}  "
        f"(OLS of ln count on ln rank, ranks 1..{SLOPE_RANKS})",
        f"  top values        {', '.join(figures['top_values'])}",
    ]
    lines += [f"  note: {note}" for note in figures["notes"]]
    return "\n".join(lines)
