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

from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import FigureSpec
from experiments.results import figure_config


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
    table = table[np.isclose(table["k"], 16)]
    return _legend(sec6.utility_grid(table, "epsilon", style.EPSILON_LABEL))


def draw_k(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 and NCR against k at ε = 2 (log2 axis)."""
    table = table[np.isclose(table["epsilon"], 2.0)]
    return _legend(sec6.utility_grid(table, "k", "k", log2_x=True))


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
    ),
]
