"""[PEM] Fig. 4 a–c (Sec. V-C): F1 and NCR of the optimal PEM against n, m and ε, beside
the utility model, Eq. (4), of the configuration the optimizer chose.

"Optimal PEM" has no shape given, so PEM takes it from the optimizer of Sec. IV-C
(:func:`ldp.theory.pem.optimize`).  The figure rebuilds that configuration from the
table's parameters with the trial's own builder (so with the same optimizer inputs) and
checks it against the oracle queries and γ every run recorded.  Settings: the caption.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import pem_section5 as sec5
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Beyond, Identity, Part, WithinSE
from experiments.results import summary

DATASETS = ("zipf", "zipf(-20)")
#: The panels: the parameter each varies, its title, x label, and which way is favourable.
PANELS = (
    (col.DATASET_N, "(a) vary n", "number of users n (log scale)", +1),
    (col.DATASET_M, "(b) vary m", "bits per value m", -1),
    (col.EPSILON, "(c) vary ε", style.EPSILON_LABEL, +1),
)


def _where(row: pd.Series) -> str:
    return (
        f"{sec5.SYMBOL[row['panel']]} = {sec5.show(row['panel'], row['x'])}, {row['dataset']} "
        f"{sec5.METRICS[row[col.METRIC]]['label']}"
    )


def points(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (setting, metric, panel): x, empirical mean and SE, model (4), and the
    optimizer's configuration (g, η)."""
    rows = sec5.settings(table)
    defaults = sec5.default_values(rows)
    frequencies = sec5.true_frequencies(table)
    out = []
    for varied, *_ in PANELS:
        panel = sec5.panel_rows(rows, varied, defaults)
        for metric in sec5.METRICS:
            stats = summary(table, metric, [col.CONFIG_HASH]).set_index(col.CONFIG_HASH)
            for key, row in panel.iterrows():
                if key not in stats.index:
                    continue
                config = sec5.pem_config(row)
                extra = {
                    "x": float(row[varied]),
                    "model": sec5.model_utility(row, frequencies[key], metric),
                    "g": config.g,
                    "eta": max(config.etas),
                }
                out.append(sec5.point(stats, key, row, metric, panel=varied, **extra))
    frame = pd.DataFrame(out, columns=[*sec5.POINT_COLUMNS, "g", "eta"])
    return frame.sort_values(["panel", "dataset", col.METRIC, "x"])


def draw(table: pd.DataFrame) -> plt.Figure:
    """Three panels (n, m, ε): F1 and NCR on both data sets, runs beside the model."""
    style.apply_theme()
    data = points(table)
    defaults = sec5.default_values(sec5.settings(table))
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.6), sharey=True)
    for ax, (varied, title, xlabel, _) in zip(axes, PANELS, strict=True):
        here = data[data["panel"] == varied]
        sec5.draw_utility(ax, here)
        # the optimizer's choice at each x (the same for both data sets: it assumes 1/j)
        for x, chosen in here.drop_duplicates("x").set_index("x").iterrows():
            ax.annotate(
                f"g={chosen['g']}\nη={chosen['eta']}",
                (x, 0.0),
                xycoords=("data", "axes fraction"),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize="x-small",
                color="0.35",
            )
        ax.set_title(f"{title}  ({sec5.fixed(defaults, varied)})")
        ax.set_xlabel(xlabel)
        if varied == col.DATASET_N:
            ax.set_xscale("log")
        elif len(here):
            ax.set_xticks(sorted(here["x"].unique()))
    axes[0].set_ylim(-0.12, 1.04)
    axes[0].set_ylabel("utility score (F1, NCR)")
    sec5.metric_legend(figure, data, DATASETS)
    figure.tight_layout()
    return figure


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """Sec. V-C: the model still matches (within sampling error, for the configuration each
    run recorded); zipf wins where noise is large, zipf(-20) draws level or wins on the
    favourable side."""
    data = points(table)
    unique = data.drop_duplicates([col.CONFIG_HASH, col.METRIC]).reset_index(drop=True)
    text, beyond = sec5.model_text(unique, _where)
    wrong = sec5.check_recorded(table)
    found = [
        ClaimCheck(
            source="PEM Sec. V-C (Fig. 4)",
            paper="for the optimal configuration the analysis still matches the empirical "
            "results well",
            ours=f"{text}; the optimizer's configuration rebuilt for the model disagrees with "
            f"the oracle queries and γ the runs recorded at {len(wrong)} settings",
            parts=(
                sec5.model_part(unique),
                Part(
                    "settings whose rebuilt configuration disagrees with the runs'",
                    len(wrong),
                    Identity(0.0),
                ),
            ),
            reason=f"{sec5.optimism(unique, beyond)}; why is not shown",
        )
    ]
    worst_gap, worst_se, worst_model, best_gap, best_se, shown = [], [], [], [], [], []
    for varied, _, _, favourable in PANELS:
        here = data[data["panel"] == varied]
        xs = sorted(here["x"].unique())
        if len(xs) < 2:
            continue
        worst_x, best_x = (xs[0], xs[-1]) if favourable > 0 else (xs[-1], xs[0])
        for metric in sec5.METRICS:
            m = here[here[col.METRIC] == metric].assign(**{col.SE: lambda f: sec5.model_se(f)})
            m = m.set_index(["dataset", "x"])
            try:
                gaps = [
                    m.loc[("zipf", x), col.MEAN] - m.loc[("zipf(-20)", x), col.MEAN]
                    for x in (worst_x, best_x)
                ]
                ses = [
                    np.hypot(m.loc[("zipf", x), col.SE], m.loc[("zipf(-20)", x), col.SE])
                    for x in (worst_x, best_x)
                ]
                lead = m.loc[("zipf", worst_x), "model"] - m.loc[("zipf(-20)", worst_x), "model"]
            except KeyError:
                continue
            worst_gap.append(gaps[0])
            worst_se.append(ses[0])
            worst_model.append(lead)
            best_gap.append(gaps[1])
            best_se.append(ses[1])
            shown.append(
                f"{sec5.METRICS[metric]['label']} zipf − zipf(-20) at {sec5.SYMBOL[varied]} = "
                f"{sec5.show(varied, worst_x)}: {gaps[0]:+.3f} (model {lead:+.3f}), at "
                f"{sec5.show(varied, best_x)}: {gaps[1]:+.2f}"
            )
    if shown:
        worst_gap, worst_se = np.array(worst_gap), np.array(worst_se)
        found.append(
            ClaimCheck(
                source="PEM Sec. V-C (Fig. 4)",
                paper="when the setting is not favourable (small ε, small n or large m) zipf "
                "has better results, while zipf(-20) gives similar or better results on the "
                "other extreme",
                ours="; ".join(shown),
                parts=(
                    Part(
                        "zipf − zipf(-20) at each panel's unfavourable end",
                        worst_gap,
                        Beyond(0.0, worst_se, reading="'better' read as ahead"),
                    ),
                    Part(
                        "zipf − zipf(-20) at each panel's unfavourable end, against the model",
                        worst_gap,
                        WithinSE(
                            np.array(worst_model),
                            worst_se,
                            what="the lead the model (4) predicts there",
                        ),
                        otherwise="partly",
                    ),
                    Part(
                        "zipf − zipf(-20) at each panel's favourable end",
                        np.array(best_gap),
                        WithinSE(0.0, np.array(best_se), what="a tie", side="below"),
                    ),
                ),
                note="The lead is read against the model (4) at the unfavourable ends; at the "
                "favourable ends, where the row above finds the model above the runs on "
                "zipf(-20), only the order is read.",
                reason="at an unfavourable end zipf is not ahead beyond sampling error, or its "
                "lead is off the model's, or at a favourable end zipf stays ahead beyond it",
            )
        )
    return found


FIGURE = FigureSpec(
    name="pem_fig4",
    experiment=("pem_fig4_n", "pem_fig4_m", "pem_fig4_eps"),
    draw=draw,
    title="PEM Fig. 4: utility of the optimal PEM (Sec. V-C)",
    caption=(
        "F1 (filled circles, solid lines) and NCR (open squares, dashed lines) of the top "
        "k = 32 for the optimal PEM on zipf (dark) and zipf(-20) (light), varying (a) "
        "n = 10⁵, 10⁶, 10⁷, (b) m = 16, 32, 48, 64, (c) ε = 0.5, 1, 2, 4, the others at "
        "n = 10⁶, m = 64, ε = 1; OLH, sampled engine, 100 runs. The configuration is the "
        "optimizer's of Sec. IV-C (query limit 2^20, assumed f_j ∝ 1/j, goal F1); its number "
        "of groups g and largest η are printed above each x. Points: mean over runs, error "
        "bars ±2 standard errors; thin lines: the utility model (4) with (5) for that "
        "configuration and the data's true top-32 frequencies. m stops at 64 (the loader's "
        "values are 64-bit words)."
    ),
    claim=(
        "PEM Sec. V-C: the analysis matches the empirical utility of the optimal "
        "configuration; zipf is better when ε or n is small or m large, zipf(-20) similar "
        "or better at the other extreme."
    ),
    quick=("n_trials=5",),
    order=20.4,
    claims=claims,
)
