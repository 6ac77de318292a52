"""[PEM] Fig. 9 (Sec. VI-B6): squared error of the identified heavy hitters against ε.

Var = mean over v in C_T ∩ C_g of (n_v - ñ_v)^2 (metric ``sq_error``), exponential data,
k = 16, 10 runs, sampled engine.  PEM (its optimiser's shape, and the authors' rule,
``pem_paper``: g = 6, "one sixth of users"), and MCM and SPM as Sec. VI-B6 ran them, the
budget split (the improved variant: the final test at ε/2 for MCM, ε/3 for SPM, all
users).  Beside each, the variance of an OLH estimate from the users and budget of the
final test, Eq. (3).  MCM and SPM both ways (ε split, and the users partitioned as in
Sec. VI-B4: 10% of them for the final test at ε) and PEM's paper shape are
``pem_fig9``'s; PEM with the optimiser is read from Fig. 5's ``pem_fig5``.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.results import figure_config, summary

EXPERIMENTS = ("pem_fig9", "pem_fig5", "pem_fig5_spm")
METRIC = "sq_error"
#: Runs that identified a true heavy hitter needed for a point to be drawn / to enter
#: the claim (with fewer, the mean rests on one or two values of a few runs).
MIN_RUNS_DRAWN, MIN_RUNS_CLAIM = 5, 8
#: Line style of PEM's paper-shape variance line.
PAPER_LS = ":"
#: The claim's protocols (``pem_fig9``'s ``figure:`` block): PEM, then MCM and SPM.
SERIES = figure_config("pem_fig9").series


def rows_of(table: pd.DataFrame) -> pd.DataFrame:
    """Exponential data, k = 16, PEM optimised under the default (zipf) assumption."""
    rows = table[(table["dataset.name"] == "exponential") & np.isclose(table["k"], 16)]
    pem = rows["protocol.name"] == SERIES[0]
    assumed = rows.get("protocol.assumed", pd.Series("zipf", index=rows.index))
    fixed = rows.get("protocol.eta", pd.Series(np.nan, index=rows.index)).notna()
    default = assumed.fillna("zipf").eq("zipf")
    rows = rows[~pem | (default & ~fixed)]
    # MCM/SPM from pem_fig9 only: Fig. 5's improved MCM and SPM are the same split versions
    pem = rows["protocol.name"] == SERIES[0]
    rows = rows[pem | (rows["experiment"] == "pem_fig9")]
    shape = rows.get("protocol.shape", pd.Series("optimizer", index=rows.index))
    pem_mode = shape.map({"paper": "paper"}).fillna("-")  # PEM: optimiser or paper shape
    return rows.assign(budget=sec6.budget(rows).where(~pem, pem_mode))


def _series(name: str, budget: str) -> str:
    """The series' label as in every figure (its colour and marker): PEM's paper shape is
    the "PEM (paper shape)" preset; the budget modes are drawn by fill and line style."""
    return f"{name} (paper shape)" if name == SERIES[0] and budget == "paper" else name


def _series_label(name: str, budget: str) -> str:
    if name == SERIES[0]:
        if budget == "paper":
            return f"{name} (paper shape), last of g = 6 groups at m = 64"
        return f"{name}, last of g groups"
    return f"{name}, " + ("ε split" if budget == "split" else "users partitioned (10%)")


def draw(table: pd.DataFrame) -> plt.Figure:
    """One panel, log y: each protocol's mean squared error with its OLH variance line."""
    style.apply_theme()
    rows = rows_of(table)
    stats = summary(rows, METRIC, ["protocol.name", "budget", "epsilon"])
    stats = stats[stats["trials"] >= min(MIN_RUNS_DRAWN, stats["trials"].max())]
    # ± one standard error: on a log axis ± one standard deviation (up to 1.4 x the mean
    # at small ε, where a run averages over one or two identified values) leaves the axis
    stats["std"] = stats["std"] / np.sqrt(stats["trials"])
    figure, ax = plt.subplots(figsize=(7.2, 4.8))
    grid = np.linspace(stats["epsilon"].min(), stats["epsilon"].max(), 60)
    for name in sec6.ordered(stats["protocol.name"]):
        for mode in ("-", "paper", "partition", "split"):
            series = stats[(stats["protocol.name"] == name) & (stats["budget"] == mode)]
            if series.empty:
                continue
            series = series.sort_values("epsilon")
            sec6.series_points(
                ax,
                series,
                "epsilon",
                _series(name, mode),
                join=False,
                filled=mode not in ("split", "paper"),
                label=_series_label(name, mode),
            )
            row = rows[(rows["protocol.name"] == name) & (rows["budget"] == mode)].iloc[0]
            xs = series["epsilon"].to_numpy() if name == SERIES[0] else grid  # optimiser per ε
            model = [sec6.squared_error_model(row, e) for e in xs]
            ls = PAPER_LS if mode == "paper" else sec6.BUDGET_LS.get(mode, "-")
            sec6.model_line(ax, xs, model, style.series_color(_series(name, mode)), ls=ls)
    ax.set_yscale("log")
    ax.set_xlabel(style.EPSILON_LABEL)
    ax.set_ylabel("squared error of identified heavy hitters' counts (log)")
    ax.set_title("Estimation accuracy (synthetic)")
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color="0.4", lw=0.9), Line2D([], [], color="0.4", lw=0.9, ls="--")]
    labels += ["OLH variance, Eq. (3), of the final test", "the same, ε split"]
    ax.legend(handles, labels, loc="upper right", fontsize=8)
    figure.tight_layout()
    return figure


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B6: MCM below SPM (split ε); PEM similar with one group of the users."""
    rows = rows_of(table)
    stats = summary(rows, METRIC, ["protocol.name", "budget", "epsilon"])
    stats = stats[stats["trials"] >= min(MIN_RUNS_CLAIM, stats["trials"].max())]
    key = stats["protocol.name"] + "/" + stats["budget"]
    wide = stats.assign(series=key).pivot_table(index="epsilon", columns="series", values="mean")
    pem, mcm, spm = SERIES
    columns = {pem: f"{pem}/-", mcm: f"{mcm}/split", spm: f"{spm}/split"}  # listed in this order
    if any(c not in wide for c in columns.values()):
        return []
    wide = wide.dropna(subset=list(columns.values()))
    mcm_spm = wide[columns[mcm]] / wide[columns[spm]]
    pem_mcm = wide[columns[pem]] / wide[columns[mcm]]
    pem_row = rows[(rows["protocol.name"] == pem) & (rows["budget"] == "-")].iloc[0]
    groups = sec6.built(pem_row).config.g
    listed = "; ".join(
        f"ε = {e:g}: " + ", ".join(f"{name} {wide.loc[e, c]:.2g}" for name, c in columns.items())
        for e in wide.index
    )
    below = bool((mcm_spm < 1).all())
    similar = bool(((pem_mcm > 0.5) & (pem_mcm < 2)).all())
    partitioned = ""
    split_up = [f"{mcm}/partition", f"{spm}/partition"]
    if all(column in wide for column in split_up):
        ratio = (wide[split_up[0]] / wide[split_up[1]]).median()
        lower = wide[columns[pem]] < wide[split_up].min(axis=1)
        partitioned = (
            f" Partitioned versions (10% of the users at ε): {mcm}/{spm} median ratio "
            f"{ratio:.2f}; {pem} below both at {int(lower.sum())} of {len(lower)} ε."
        )
    if f"{pem}/paper" in wide:
        paper = (wide[f"{pem}/paper"] / wide[columns[mcm]]).dropna()
        partitioned += (
            f" {pem} with the paper's shape (g = 6, one sixth of the users): {pem}/{mcm} ratio "
            f"{paper.min():.2f}-{paper.max():.2f}."
        )
    if below and similar:
        verdict = "reproduced"
        reason = (
            f"(our {pem}'s optimiser chose g = {groups} groups, so 1/{groups} of the users "
            "estimate, not one sixth)"
            if groups != 6
            else ""
        )
    elif below or similar:
        verdict = "partly"
        reason = "one of the two comparisons does not hold at every ε (see the numbers)"
    else:
        verdict, reason = "differs", "the final tests' budgets differ from the paper's"
    return [
        ClaimCheck(
            source="PEM Sec. VI-B6 (Fig. 9)",
            paper=(
                "MCM's estimation variance is smaller than SPM's (its final test uses ε/2, "
                "SPM's ε/3); PEM, using only its last group (one sixth of the users), "
                "achieves similar accuracy, as Eq. (3) predicts"
            ),
            ours=(
                f"mean squared error ({sec6.runs_note(rows)}; at the ε where at least "
                f"{MIN_RUNS_CLAIM} runs of each identified a heavy hitter), ε split: {listed}. "
                f"{mcm}/{spm} ratio {mcm_spm.min():.2f}-{mcm_spm.max():.2f}, {pem}/{mcm} "
                f"{pem_mcm.min():.2f}-{pem_mcm.max():.2f}.{partitioned}"
            ),
            tolerance=(
                "two parts at every ε: 'smaller' read as MCM/SPM below 1; 'similar accuracy' "
                "as PEM/MCM between 0.5 and 2 (a stated reading: within a factor of two)"
            ),
            verdict=verdict,
            reason=reason,
        )
    ]


FIGURE = FigureSpec(
    name="pem_fig9",
    experiment=EXPERIMENTS,
    draw=draw,
    title="PEM Fig. 9: squared error of the identified heavy hitters against ε (synthetic)",
    caption=(
        "Mean over the identified true top-16 values of (n_v - ñ_v)^2 against ε (log "
        "scale), synthetic exponential data (n = 10^6, m = 64), k = 16. PEM (its estimates "
        "come from the last of its g groups, scaled up); MCM and SPM splitting ε as in Sec. "
        "VI-B6 (open markers, dashed: final test at ε/2 for MCM, ε/3 for SPM, all users) "
        "and partitioning the users, Sec. VI-B4's variant (filled, solid: 10% of the users "
        "at ε). Points: mean of 10 runs (runs that identified none left out; "
        "points with fewer than 5 such runs are not drawn), error bars ± 1 standard error "
        "(the log axis cannot show ± 1 standard deviation at small ε), sampled engine. "
        "Lines: the variance of the "
        "final test's OLH estimate, Eq. (3) with its n_v term, scaled to all users, plus "
        "the sampling of who is in the final group, averaged over the true top 16; the "
        "two partitioned versions share theirs."
    ),
    claim=(
        "PEM Sec. VI-B6: MCM's variance is below SPM's (final test at ε/2 vs ε/3); PEM, "
        "estimating from one sixth of the users, achieves similar accuracy."
    ),
    quick=sec6.QUICK_FIG5,
    order=20.9,
    claims=claims,
)
