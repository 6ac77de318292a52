"""TreeHist ([BNST] Bassily, Nissim, Stemmer, Thakurta, NeurIPS 2017) in [PEM] Sec. VI.

Three figures beside the protocols of the [PEM] figure each extends (their runs are that
figure's configs, drawn again here): ``treehist_eps`` ([PEM] Fig. 5), ``treehist_k``
([PEM] Fig. 6) and ``treehist_threshold`` ([PEM] Fig. 7a).  TreeHist runs in both forms
(:mod:`ldp.heavy_hitters.treehist`): the threshold form of [BNST] (children estimated at
>= z σ_ℓ survive) and the top-k form (k children per level: PEM with γ = 0 and η = 1,
whose F1/NCR [PEM] Eq. (4) predicts).  [PEM] Sec. VII's point is that splitting the users
into m groups (one per bit) costs accuracy (Principle 2); these figures measure how much.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.results import figure_config, summary
from ldp.theory import pem as pem_theory

#: The comparison of [PEM] Sec. VII: ``subjects`` the tree protocol, ``reference`` PEM,
#: ``series`` the legend order (``treehist_eps``'s ``figure:`` block, for all three figures).
COMPARISON = figure_config("treehist_eps")
NAME = COMPARISON.subjects[0]
TOPK_LABEL = f"{NAME} (top-k)"
THRESHOLD_LABEL = f"{NAME} (threshold)"
SOURCE = "[PEM] Sec. VII, on [BNST] (Bassily et al., NeurIPS 2017)"


def _series(table: pd.DataFrame) -> pd.Series:
    """The legend entry of each row: TreeHist's two forms apart, the others as in Sec. VI."""
    names = table[col.PROTOCOL].astype(str)
    form = table.get(col.PROTOCOL_FORM, pd.Series(np.nan, index=table.index))
    tree = np.where(form == "top-k", TOPK_LABEL, THRESHOLD_LABEL)
    labels = [sec6.protocol_label(n) for n in names]
    return pd.Series(np.where(names == NAME, tree, labels), index=table.index)


def _with_series(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(series=_series(table))


def _legend_order(labels) -> list[str]:
    ranked = [
        label
        for n in COMPARISON.series
        for label in ([THRESHOLD_LABEL, TOPK_LABEL] if n == NAME else [sec6.protocol_label(n)])
    ]
    return [label for label in ranked if label in set(labels)]


def _style(label: str) -> dict:
    """The series' colour and marker as in every figure (style.series_color: "TreeHist
    (top-k)" is a variant with a shade of its own); top-k dashed and open."""
    look = {"colour": style.series_color(label), "marker": style.series_marker(label)}
    if label == TOPK_LABEL:
        look |= {"ls": "--", "filled": False}
    elif label.startswith(NAME):
        look |= {"ls": "-", "filled": True}
    return look


def _draw_series(ax: plt.Axes, stats: pd.DataFrame, x: str) -> None:
    """Every series of ``stats`` against ``x`` as points (mean ± sd), in legend order."""
    for label in _legend_order(stats["series"]):
        series = stats[stats["series"] == label].sort_values(x)
        look = _style(label)
        sec6.points(ax, series[x], series, look.pop("colour"), label=label, **look)


def topk_model(row: pd.Series, goal: str, epsilon: float, k: int) -> float:
    """[PEM] Eq. (4) for TreeHist's top-k form on the exponential data (its law as truth),
    built from a top-k ``row``'s setting at ``epsilon`` and ``k``."""
    tree = sec6.built(row, epsilon, k)
    f = sec6.exponential_frequencies(row)
    return pem_theory.utility(f[:k], int(row[col.N]), epsilon, tree.pem_config(), k, goal)


def _grid(table: pd.DataFrame, x: str, xlabel: str, log2_x: bool = False) -> plt.Figure:
    """2 x 3 panels (F1, NCR) x (URL, AOL, synthetic), every series mean ± sd."""
    style.apply_theme()
    table = _with_series(table)
    datasets = [d for d in sec6.DATASETS if d in set(table[col.DATASET])]
    figure, axes = plt.subplots(
        2, len(datasets), figsize=(4.3 * len(datasets), 7.0), sharex="col", squeeze=False
    )
    for row_index, (metric, label) in enumerate(sec6.METRIC_LABELS.items()):
        stats = summary(table, metric, [col.DATASET, "series", x])
        for column, dataset in enumerate(datasets):
            ax = axes[row_index][column]
            _draw_series(ax, stats[stats[col.DATASET] == dataset], x)
            tree = table[(table[col.DATASET] == dataset) & (table["series"] == TOPK_LABEL)]
            if dataset == "exponential" and len(tree):
                row = tree.iloc[0]
                grid = np.sort(tree[x].unique())
                values = []
                for v in grid:
                    epsilon = float(v if x == col.EPSILON else row[col.EPSILON])
                    k = int(v if x == col.K else row[col.K])
                    values.append(topk_model(row, metric, epsilon, k))
                sec6.model_line(ax, grid, values, style.series_color(TOPK_LABEL), ls=":")
            letter = "abcdefghi"[row_index * len(datasets) + column]
            ax.set_title(f"({letter}) {sec6.data_title(table, dataset)}, {label}")
            sec6.utility_axis(ax, label if column == 0 else None)
            if log2_x:
                sec6.log2_k_axis(ax, table[x].unique())
            ax.set_xlabel((ax.get_xlabel() if log2_x else xlabel) if row_index == 1 else "")
    seen = style.drawn_handles(axes)
    labels = _legend_order(seen)
    handles = [seen[label] for label in labels]
    handles.append(style.key("", style.series_color(TOPK_LABEL), lw=0.9, ls=":"))
    labels.append(f"{NAME} top-k model, [PEM] Eq. (4) (synthetic)")
    figure.legend(
        handles, labels, loc="lower center", ncol=min(len(labels), 4), bbox_to_anchor=(0.5, -0.03)
    )
    figure.tight_layout(rect=(0, 0.07, 1, 1))
    return figure


def draw_eps(table: pd.DataFrame) -> plt.Figure:
    return _grid(table[np.isclose(table[col.K], 16)], col.EPSILON, style.EPSILON_LABEL)


def draw_k(table: pd.DataFrame) -> plt.Figure:
    return _grid(table[np.isclose(table[col.EPSILON], 2.0)], col.K, col.K, log2_x=True)


def draw_threshold(table: pd.DataFrame) -> plt.Figure:
    """F1 of the threshold versions against ε at θ = 0.023 (exponential data)."""
    style.apply_theme()
    table = _with_series(table[np.isclose(table[col.PROTOCOL_THRESHOLD], 0.023)])
    stats = summary(table, "f1", ["series", col.EPSILON])
    figure, ax = plt.subplots(figsize=(5.2, 4.3))
    _draw_series(ax, stats, col.EPSILON)
    ax.set_title("θ = 0.023, exponential (n = 10^6, m = 64)")
    sec6.utility_axis(ax, "F1")
    ax.set_xlabel(style.EPSILON_LABEL)
    ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    return figure


def _wide(table: pd.DataFrame, by: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    table = _with_series(table)
    f1 = summary(table, "f1", [col.DATASET, "series", by])
    means, se = sec6.wide(f1, [col.DATASET, by], column="series")
    return means, se, sec6.runs_note(table)


def claims_for(by: str, fixed: str):
    def claims(table: pd.DataFrame) -> list[ClaimCheck]:
        """[PEM] Sec. VII: TreeHist's one-bit-per-group split loses to PEM: PEM at least
        tied with the better TreeHist form (within sampling error) wherever both ran."""
        means, se, runs = _wide(table, by)
        (pem_name,) = COMPARISON.reference
        forms = [c for c in means.columns if c.startswith(NAME)]
        if pem_name not in means or not forms:
            return []
        # a grid point where either protocol has no result (TreeHist sweeps fewer ε or k
        # than PEM) is neither a win nor a loss: lead_over keeps only the points both ran
        lead, lead_se, _ = sec6.lead_over(means, se, pem_name, forms)
        if lead.empty:
            return []
        df = sec6.dof(_with_series(table))
        z = sec6.tie_part("", lead, lead_se, df=df).tolerance.z()
        ahead = int((lead > z * lead_se).sum())
        parts, reason = sec6.lead_parts(
            f"{pem_name}'s lead over the better {NAME} form", lead, lead_se, NAME, df=df
        )
        return [
            ClaimCheck(
                source=SOURCE,
                paper=(
                    "TreeHist (one bit per group, m groups) resembles PEM, but dividing "
                    "the users into m groups gives poor accuracy (Principle 2)"
                ),
                ours=(
                    f"{fixed}, {runs}: {pem_name}'s mean F1 minus the better {NAME} form's "
                    f"per (data set, {by}) at the {len(lead)} points both ran: "
                    f"{sec6.listed(lead)}; ahead beyond {z:.1f} SE at {ahead}"
                ),
                parts=parts,
                reason=reason,
            )
        ]

    return claims


FIGURES = [
    FigureSpec(
        name="treehist_eps",
        experiment=("pem_fig5", "pem_fig5_spm", "pem_fig5_spm_url", "treehist_eps"),
        draw=draw_eps,
        title="TreeHist beside PEM Fig. 5: F1 and NCR against ε (k = 16)",
        caption=(
            "F1 (top) and NCR (bottom) against ε at k = 16 on URL, AOL (calibrated "
            "surrogates) and the exponential data (n = 10^6, m = 64): PEM, the improved SPM "
            "and MCM (the runs of PEM Fig. 5) and TreeHist (Bassily et al., NeurIPS 2017) "
            "over OLH, threshold form (children estimated at >= z σ_ℓ, z = Φ⁻¹(1 - β/(2 m "
            "w)), β = 0.05, w = 2k; solid, filled) and top-k form (k children per level; "
            "dashed, open). Mean ± sd of 10 runs (5 ε for TreeHist), sampled engine. "
            "Dotted: PEM's Eq. (4) for the top-k form (γ = 0, η = 1, g = m)."
        ),
        claim=(
            "PEM Sec. VII: TreeHist, like PEM with one bit per group, divides the users into "
            "m groups, which costs accuracy."
        ),
        quick=sec6.QUICK_FIG5,
        order=20.6,
        claims=claims_for(col.EPSILON, "k = 16"),
    ),
    FigureSpec(
        name="treehist_k",
        experiment=("pem_fig6", "pem_fig6_spm", "pem_fig6_spm_url", "treehist_k"),
        draw=draw_k,
        title="TreeHist beside PEM Fig. 6: F1 and NCR against k (ε = 2)",
        caption=(
            "F1 (top) and NCR (bottom) against k at ε = 2, same protocols and data as "
            "treehist_eps (PEM, SPM, MCM: the runs of PEM Fig. 6). Mean ± sd of 10 runs. "
            "Dotted: Eq. (4) for TreeHist's top-k form."
        ),
        claim="PEM Sec. VII (as treehist_eps), against k.",
        quick=sec6.QUICK_FIG6,
        order=21.6,
        claims=claims_for(col.K, "ε = 2"),
    ),
    FigureSpec(
        name="treehist_threshold",
        experiment=("pem_fig7_eps", "treehist_threshold"),
        draw=draw_threshold,
        title="TreeHist beside PEM Fig. 7a: threshold versions, F1 against ε (θ = 0.023)",
        caption=(
            "F1 against ε of the threshold versions (release what is estimated at >= θ n, "
            "θ = 0.023, about the 16th frequency; truth: every value at or above θ) on the "
            "exponential data, n = 10^6, m = 64, k = 32: PEM, SPM, MCM (the runs of PEM "
            "Fig. 7a) and TreeHist's two forms. Mean ± sd of 10 runs."
        ),
        claim="PEM Sec. VI-B3 / VII: the threshold comparison of Fig. 7, with TreeHist.",
        quick=sec6.QUICK_FIG7,
        order=22.6,
        claims=claims_for(col.EPSILON, "threshold θ = 0.023"),
    ),
]
