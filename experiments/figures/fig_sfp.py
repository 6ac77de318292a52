"""Apple's sequence fragment puzzle (SFP) beside [PEM] Figs. 5 and 6: F1 and NCR.

The PEM, SPM and MCM points are those figures' own results (``fig_pem_fig5``,
``fig_pem_fig6``: their configs are read, not run again); SFP
(:class:`ldp.heavy_hitters.sfp.SFP`) comes from ``sfp_eps.yaml`` and ``sfp_k.yaml``.
Drawn with the Section VI grid of :mod:`experiments.figures.pem_section6`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Band, Part, bonferroni_z
from experiments.results import figure_config, summary


def _legend(figure: plt.Figure) -> plt.Figure:
    """One legend over the grid with every protocol drawn (SFP included)."""
    for legend in list(figure.legends):
        legend.remove()
    seen = style.drawn_handles(figure.axes)
    series = figure_config("sfp_eps").series  # both figures' legend order
    labels = [sec6.protocol_label(n) for n in series if sec6.protocol_label(n) in seen]
    figure.legend(
        [seen[label] for label in labels],
        labels,
        loc="lower center",
        ncol=len(labels),
        bbox_to_anchor=(0.5, -0.02),
    )
    return figure


def draw_eps(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 (top) and NCR (bottom) against ε at k = 16."""
    table = table[np.isclose(table[col.K], 16)]
    return _legend(sec6.utility_grid(table, col.EPSILON, style.EPSILON_LABEL))


def draw_k(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 and NCR against k at ε = 2 (log2 axis)."""
    table = table[np.isclose(table[col.EPSILON], 2.0)]
    return _legend(sec6.utility_grid(table, col.K, col.K, log2_x=True))


def claims_for(by: str, best: str, fixed: str):
    """SFP's rows: it assembles heavy hitters without a dictionary, i.e. its mean F1 above
    0 beyond sampling error on every data set at the grid's most favourable ``by`` (the
    largest ε, the smallest k: ``best`` "max" or "min")."""

    def claims(table: pd.DataFrame) -> list[ClaimCheck]:
        name = figure_config("sfp_eps").series[-1]
        rows = table[table[col.PROTOCOL] == name]
        if rows.empty:
            return []
        f1 = summary(rows, "f1", list(dict.fromkeys([col.DATASET, by, col.K])))
        means, se = sec6.wide(f1.assign(series=name), [col.DATASET, by], column="series")
        known = means[name].dropna()
        points = pd.MultiIndex.from_tuples(
            [
                (dataset, getattr(s.index.get_level_values(1), best)())
                for dataset, s in known.groupby(level=0)
            ]
        )
        mean, err = means.loc[points, name], se.loc[points, name]
        z = bonferroni_z(len(points), 0.01, one_sided=True, df=sec6.dof(f1))
        symbol = "ε" if by == col.EPSILON else col.K
        return [
            ClaimCheck(
                source=f"Apple 2017 (SFP), beside [PEM] Sec. VI ({fixed})",
                paper="frequent values are assembled from (hash, fragment) pairs without a "
                "dictionary",
                ours=f"{sec6.runs_note(rows)}; {name}'s mean F1 ± 1 SE at each data set's "
                f"{'largest' if best == 'max' else 'smallest'} {symbol}: "
                + ", ".join(
                    f"{d} {symbol} = {x:g}: {m:.2f} ± {e:.2f}"
                    for (d, x), m, e in zip(points, mean, err, strict=True)
                ),
                parts=Part(
                    f"{name}'s mean F1 in SE, per data set",
                    (mean / err).to_numpy(),
                    Band(
                        z,
                        reading=f"'assembled' read as F1 above 0 beyond {z:.1f} SE (one-sided, "
                        "family-wise 0.01)",
                    ),
                ),
                reason=f"{name} finds no heavy hitter beyond sampling error on some data set",
            )
        ]

    return claims


CAPTION = (
    "SFP (Apple 2017's sequence fragment puzzle over the m-bit values: an 8-bit hash of "
    "the whole value with one fragment per user, fragments as long as 2^20 queries allow, "
    "OLH, 10% of the users for the whole-value test, top-k output) beside PEM and the "
    "improved SPM and MCM of [PEM] Sec. VI, same data and settings (URL and AOL are the "
    "calibrated surrogates). Points: mean of 10 runs, error bars ± 1 standard deviation, "
    "sampled engine."
)

FIGURES = [
    FigureSpec(
        name="sfp_eps",
        experiment=("pem_fig5", "pem_fig5_spm", "pem_fig5_spm_url", "sfp_eps"),
        draw=draw_eps,
        title="SFP beside PEM Fig. 5: F1 and NCR against ε (k = 16)",
        caption=CAPTION,
        claim=(
            "Apple 2017 (SFP): frequent values are assembled from (hash, fragment) pairs "
            "without a dictionary; here compared with [PEM] Sec. VI's protocols."
        ),
        quick=sec6.QUICK_FIG5,
        order=20.6,
        claims=claims_for(col.EPSILON, "max", "k = 16"),
    ),
    FigureSpec(
        name="sfp_k",
        experiment=("pem_fig6", "pem_fig6_spm", "pem_fig6_spm_url", "sfp_k"),
        draw=draw_k,
        title="SFP beside PEM Fig. 6: F1 and NCR against k (ε = 2)",
        caption=CAPTION,
        claim="Apple 2017 (SFP) against [PEM] Sec. VI-B2's protocols as k grows.",
        quick=sec6.QUICK_FIG6,
        order=21.6,
        claims=claims_for(col.K, "min", "ε = 2"),
    ),
]
