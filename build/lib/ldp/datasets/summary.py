"""Summary figures of a dataset: what ``python -m ldp.datasets describe`` prints.

The figures are the ones the surrogates are calibrated to: the number of users and of
distinct values, the shares of the top 1, 16 and 32 values, the frequencies of the 16th
and 32nd values (k = 16 is the paper's default, Section VI-B) and a Zipf slope.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ldp.bits import prefix
from ldp.datasets import surrogates
from ldp.datasets.base import Dataset

__all__ = ["PREFIX_BITS", "describe", "format_description", "prefix_table", "zipf_slope"]

#: Ranks over which :func:`zipf_slope` fits its line.
SLOPE_RANKS = 1000
#: Prefix lengths of :func:`prefix_table` (for m = 48: PEM's steps at m = 48 and
#: eta = 11 report 15, 26, 37 and 48 bits).
PREFIX_BITS = (8, 12, 15, 16, 20, 24, 26, 28, 32, 36, 37, 40, 44, 48)
#: How many top values :func:`prefix_table` follows.
PREFIX_TOP = 16


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


def prefix_table(
    values: np.ndarray, counts: np.ndarray, m: int, bits: tuple[int, ...] = PREFIX_BITS
) -> list[dict[str, Any]]:
    """How the users' values share prefixes: one row per prefix length ell <= m.

    What PEM's candidate extension meets (Section IV): a top value survives a step of
    ell bits only if its ell-bit prefix ranks among the kept candidates.

    Parameters
    ----------
    values, counts : numpy.ndarray
        ``Dataset.histogram()``: distinct values and counts, most frequent first.
    m : int
        Bits per value.
    bits : tuple of int
        Prefix lengths (those above m are left out).

    Returns
    -------
    list of dict
        Keys ``bits``, ``distinct`` (distinct ell-bit prefixes), ``top1``, ``top16``,
        ``p16``, ``p32`` (shares of users: the largest prefix, the 16 largest together,
        the 16th and the 32nd), and ``ranks``: for the values of rank 1..16, the rank of
        their ell-bit prefix among all ell-bit prefixes (1 + the number of prefixes with
        more users; ties share a rank).
    """
    n = max(int(counts.sum()), 1)
    rows = []
    for ell in (b for b in bits if b <= m):
        heads, inverse = np.unique(prefix(values, m, ell), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        mass = np.bincount(inverse, weights=counts, minlength=len(heads))
        ordered = np.sort(mass)[::-1]
        top = inverse[: min(PREFIX_TOP, len(values))]
        ranks = 1 + (mass[None, :] > mass[top][:, None]).sum(axis=1)

        def share(k: int, ordered: np.ndarray = ordered) -> float:
            return float(ordered[k - 1] / n) if len(ordered) >= k else 0.0

        rows.append(
            {
                "bits": ell,
                "distinct": len(heads),
                "top1": share(1),
                "top16": float(ordered[:PREFIX_TOP].sum() / n),
                "p16": share(16),
                "p32": share(32),
                "ranks": [int(r) for r in ranks],
            }
        )
    return rows


def format_prefix_table(
    rows: list[dict[str, Any]], reference: dict[int, tuple] | None = None
) -> list[str]:
    """The rows of :func:`prefix_table` as aligned text lines.

    ``reference`` (bits -> (distinct, top-1, top-16, 16th, 32nd, ranks), e.g.
    :data:`ldp.datasets.surrogates.AOL_PREFIX_TABLE`) adds a ``real`` line under each row.
    """

    def line(label, bits, distinct, top1, top16, p16, p32, ranks) -> str:
        return (
            f"  {label:<5}{bits:>3} {distinct:>8,} {100 * top1:6.2f}% {100 * top16:5.1f}% "
            f"{100 * p16:6.3f}% {100 * p32:6.3f}%  " + " ".join(f"{r:>2}" for r in ranks)
        )

    lines = [
        "  prefix table: bits, distinct prefixes, shares of the top-1, top-16 together, 16th",
        "  and 32nd prefix, rank of the prefix of each top-16 value (value rank 1..16)",
    ]
    for row in rows:
        keys = ("bits", "distinct", "top1", "top16", "p16", "p32", "ranks")
        lines.append(line("data", *(row[k] for k in keys)))
        if reference and row["bits"] in reference:
            lines.append(line("real", row["bits"], *reference[row["bits"]]))
    return lines


def describe(dataset: Dataset) -> dict[str, Any]:
    """The calibration figures of a dataset, as a dict (shares are fractions of users).

    Keys: ``name``, ``source``, ``m``, ``n``, ``distinct``, ``top1_share``,
    ``top16_share``, ``top32_share``, ``f16``, ``f32`` (frequencies of the 16th and 32nd
    most frequent values), ``zipf_slope`` (see :func:`zipf_slope`), ``top_values`` (the
    five most frequent, formatted), ``notes``, and for text values (AOL, URL) with
    m <= 64 ``prefixes``, the :func:`prefix_table`.
    """
    values, counts = dataset.histogram()
    n = max(dataset.n, 1)

    def kth(k: int) -> float:
        return float(counts[k - 1] / n) if len(counts) >= k else 0.0

    figures = {
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
    if dataset.text and dataset.m <= 64:
        figures["prefixes"] = prefix_table(values, counts, dataset.m)
    return figures


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
    if "prefixes" in figures:
        reference = surrogates.AOL_PREFIX_TABLE if figures["name"] == "aol" else None
        lines += format_prefix_table(figures["prefixes"], reference)
    lines += [f"  note: {note}" for note in figures["notes"]]
    return "\n".join(lines)
