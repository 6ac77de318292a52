"""USENIX'17 Table 1 checked: Var[ĉ(v)]/n against ε for the seven oracles, d = 2 and 1024.

Thin lines: Table 1 (:func:`ldp.theory.table1_variance`; THE at θ = 1, OLH at the
continuous optimum g = e^ε + 1).  Points: the mean over trials of each trial's squared
error (ĉ(v) - c(v))^2/n averaged over the values nobody holds, filled circles for the
sampled engine and open squares for real reports, in the protocol's colour, with error
bars of ±2 standard errors over trials.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from experiments.figures import style
from experiments.figures.spec import FigureSpec
from ldp.theory import table1_variance

METRIC = "sq_error_n"
#: Horizontal offset of the two engines' points, so their error bars do not overlap.
DODGE = {"sampled": -0.04, "reports": 0.04}


def _label(rows: pd.DataFrame, name: str) -> str:
    labels = rows["protocol.label"].dropna().unique() if "protocol.label" in rows else []
    return str(labels[0]) if len(labels) else name


def draw(table: pd.DataFrame) -> plt.Figure:
    """Two panels (d = 2, d = 1024): Table 1 as lines, both engines as points, log y."""
    style.apply_theme()
    rows = table[(table["metric"] == METRIC) & table["item"].isna()]
    domains = sorted(int(d) for d in rows["options.domain_size"].dropna().unique())
    figure, axes = plt.subplots(
        1,
        max(len(domains), 1),
        figsize=(5.2 * max(len(domains), 1), 4.2),
        sharey=True,
        squeeze=False,
    )
    protocols = style.order(list(rows["protocol.name"].unique()))
    for ax, d in zip(axes[0], domains, strict=False):
        panel = rows[rows["options.domain_size"] == d]
        grid = np.linspace(panel["epsilon"].min(), panel["epsilon"].max(), 200)
        for name in protocols:
            points = panel[panel["protocol.name"] == name]
            colour = style.color(name)
            ax.plot(grid, table1_variance(name, grid, d), color=colour, lw=1.0, alpha=0.9)
            stats = points.groupby(["engine", "epsilon"])["value"].agg(["mean", "std", "size"])
            for (engine, epsilon), row in stats.iterrows():
                half = 2 * row["std"] / np.sqrt(row["size"]) if row["size"] > 1 else 0.0
                marker = style.ENGINE_MARKERS.get(engine, "o")
                ax.errorbar(
                    epsilon + DODGE.get(engine, 0.0),
                    row["mean"],
                    yerr=half,
                    fmt=marker,
                    color=colour,
                    ms=4.5,
                    capsize=2,
                    lw=0.8,
                    mfc=colour if engine == "sampled" else "white",
                    mew=1.0,
                )
        ax.set_yscale("log")
        means = panel.groupby(["protocol.name", "engine", "epsilon"])["value"].mean()
        means = means[means > 0]
        if len(means):  # bars reaching below zero leave the axis instead of stretching it
            ax.set_ylim(means.min() / 4, means.max() * 4)
        ax.set_title(f"d = {d}")
        ax.set_xlabel(style.EPSILON_LABEL)
    axes[0][0].set_ylabel("Var[ĉ(v)] / n")
    handles = [
        Line2D(
            [], [], color=style.color(n), lw=1.5, label=_label(rows[rows["protocol.name"] == n], n)
        )
        for n in protocols
    ]
    handles += [
        Line2D([], [], color="0.3", marker="o", ls="", label="sampled engine"),
        Line2D([], [], color="0.3", marker="s", mfc="white", ls="", label="reports engine"),
        Line2D([], [], color="0.3", lw=1.0, label="Table 1 (analytical)"),
    ]
    figure.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5))
    figure.tight_layout()
    return figure


FIGURE = FigureSpec(
    name="oracle_variance",
    experiment="oracle_variance",
    draw=draw,
    title="Frequency-oracle variance against ε (USENIX'17 Table 1)",
    caption=(
        "Var[ĉ(v)]/n against ε for GRR, SUE, OUE, SHE, THE (θ = 1), BLH and OLH at d = 2 "
        "(left) and d = 1024 (right), n = 2000 users all holding one value, v ranging over "
        "the values nobody holds. Thin lines: Table 1. Points: mean squared error over "
        "trials, filled circles for the sampled engine, open squares for real reports; "
        "error bars ±2 standard errors."
    ),
    claim=(
        "USENIX'17 Table 1 and Sec. 5: the empirical variance of every oracle matches its "
        "closed form; OUE and OLH have equal variance; GRR's grows with d (best at d = 2, "
        "worst at d = 1024 when d > 3e^ε + 2); at large ε OLH beats SUE several times over "
        "and BLH by more than an order of magnitude."
    ),
    quick=("n_trials=8",),
)
