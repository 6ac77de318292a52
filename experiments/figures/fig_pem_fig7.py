"""[PEM] Fig. 7 a–c (Sec. VI-B3): F1 of the threshold versions of PEM, SPM and MCM.

Exponential data (n = 10^6, m = 64), 10 runs, sampled engine.  Each protocol releases the
values it estimates at >= θ n; F1 is against the true set {v : n_v >= θ n}.  (a) against ε
at θ = 0.023 (``pem_fig7_eps``); (b), (c) against θ at ε = 2 and 4 (``pem_fig7_theta``,
with θ = 0.023 read from (a)'s config).  k = 32 sizes every protocol (see the config).
Dashed beside SPM's and MCM's lines: their partitioned threshold versions (10% of the users
for the final test, Sec. VI-B4), ``pem_fig7_partitioned`` (a) and
``pem_fig7_partitioned_theta`` (b, c); drawn, not judged by the claim.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec, both, verdict_of
from experiments.results import summary

EXPERIMENTS = (
    "pem_fig7_eps",
    "pem_fig7_theta",
    "pem_fig7_partitioned",
    "pem_fig7_partitioned_theta",
)
SUFFIX = " (threshold)"
THETA = 0.023
PANELS = (
    ("epsilon", None, f"(a) vary ε, θ = {THETA:g}"),
    ("protocol.threshold", 2.0, "(b) vary θ, ε = 2"),
    ("protocol.threshold", 4.0, "(c) vary θ, ε = 4"),
)


def _label(name: str) -> str:
    return f"{name} (threshold)"


def draw(table: pd.DataFrame) -> plt.Figure:
    """Three panels side by side: F1 against ε (θ = 0.023), against θ at ε = 2, 4."""
    style.apply_theme()
    figure, axes = plt.subplots(1, 3, figsize=(13.5, 4.3), squeeze=False)
    table = table.assign(series=sec6.series_of(table))
    by = ["protocol.name", "series", "protocol.threshold", "epsilon"]
    stats = summary(table, "f1", by)
    truth = summary(table, "n_true", ["protocol.threshold"])
    for ax, (x, epsilon, title) in zip(axes[0], PANELS, strict=True):
        if epsilon is None:
            panel = stats[np.isclose(stats["protocol.threshold"], THETA)]
        else:
            panel = stats[np.isclose(stats["epsilon"], epsilon)]
        sec6.draw_series(ax, panel, x, _label, suffix=SUFFIX)
        ax.set_title(title)
        sec6.utility_axis(ax, "F1" if epsilon is None else None)
        if x == "epsilon":
            ax.set_xlabel(style.EPSILON_LABEL)
        else:  # θ ticks, each with the number of values at or above it
            thetas = sorted(panel["protocol.threshold"].unique())
            counts = dict(zip(truth["protocol.threshold"], truth["mean"], strict=True))
            ax.set_xticks(thetas)
            ax.set_xticklabels(
                [f"{t:g}\n({counts.get(t, float('nan')):.0f})" for t in thetas], fontsize=8
            )
            ax.set_xlabel("threshold θ (values with frequency ≥ θ)")
    handles, labels = sec6.legend_entries(axes, [_label(n) for n in sec6.comparison().series])
    figure.legend(
        handles, labels, loc="lower center", ncol=min(len(labels), 5), bbox_to_anchor=(0.5, -0.03)
    )
    figure.tight_layout(rect=(0, 0.1, 1, 1))
    return figure


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B3: PEM's threshold version beats SPM's and MCM's, most at ε = 2 (the split
    versions the paper ran; the partitioned ones are drawn, not judged)."""
    table = sec6.main_rows(table, SUFFIX)
    stats = summary(table, "f1", ["protocol.name", "protocol.threshold", "epsilon"])
    panel = stats[np.isclose(stats["protocol.threshold"], THETA)]
    wide = panel.pivot_table(index="epsilon", columns="protocol.name", values="mean")
    name = sec6.proposed()
    if name not in wide or wide.shape[1] < 2:
        return theta_claims(table)
    gap = wide[name] - wide.drop(columns=name).max(axis=1)
    listed = "; ".join(
        f"ε = {e:g}: "
        + ", ".join(f"{p} {wide.loc[e].get(p, np.nan):.2f}" for p in sec6.comparison().series)
        for e in wide.index
    )
    widest = float(gap.idxmax())
    from_two = gap[gap.index >= 2.0 - 1e-9]
    widest_from_two = float(from_two.idxmax()) if len(from_two) else float("nan")
    always = bool((gap >= -0.05).all())  # ahead, or tied within 0.05
    if always and abs(widest - 2.0) < 0.25:
        verdict, reason = "reproduced", ""
    elif always and abs(widest_from_two - 2.0) < 0.25:
        verdict = "partly"
        reason = (
            f"PEM is ahead (or tied) at every ε and, from ε = 2 up, its lead is widest at "
            f"ε = 2; but below 2 it is wider still (ε = {widest:g}), where SPM and MCM "
            "find few values. The paper does not give Fig. 7a's ε range; if it starts at "
            "2 the two agree."
        )
    elif always:
        verdict = "partly"
        reason = (
            f"PEM is ahead (or tied) at every ε, but its lead is widest at ε = {widest:g}: "
            "the improved MCM (k^1.5 channels, ε split with the final test) "
            "catches up sooner than the paper's."
        )
    else:
        verdict = "differs"
        reason = (
            "a baseline beats PEM's threshold version somewhere: PEM's threshold version "
            "only tests θ at its last step"
        )
    return [
        *theta_claims(table),
        ClaimCheck(
            source="PEM Sec. VI-B3 (Fig. 7a)",
            paper=(
                "threshold versions, θ = 0.023: PEM performs better than SPM and MCM, the "
                "advantage most profound at ε = 2"
            ),
            ours=(
                f"mean F1 ({sec6.runs_note(table)}): {listed}; {name}'s lead over the best "
                f"baseline is widest at ε = {widest:g} ({gap.max():+.2f}); at ε = 2 it is "
                f"{gap.get(2.0, np.nan):+.2f}"
            ),
            tolerance=(
                "two parts: 'performs better' read as PEM's mean F1 ahead of or within 0.05 of "
                "the best baseline's at every ε; 'most profound at ε = 2' as the widest lead "
                "at the grid point 2 (within 0.25)"
            ),
            verdict=verdict,
            reason=reason,
        ),
    ]


def theta_claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B3 on Figs. 7b, 7c: at ε = 2 and 4 against θ, PEM's threshold version ahead (the
    section's "PEM performs better than SPM and MCM"), and "the lower the θ, the bigger the
    k" (the number of values at or above θ), one claim per panel."""
    f1 = summary(table, "f1", ["protocol.name", "protocol.threshold", "epsilon"])
    truth = summary(table, "n_true", ["protocol.threshold"]).sort_values("protocol.threshold")
    counts = truth["mean"].to_numpy()
    more_below = "not measurable"
    if len(counts) >= 2:
        more_below = verdict_of(bool((np.diff(counts) <= 0).all() and counts[0] > counts[-1]))
    counted = ", ".join(
        f"θ = {t:g}: {c:.0f}" for t, c in zip(truth["protocol.threshold"], counts, strict=True)
    )
    out, name = [], sec6.proposed()
    for panel, epsilon in (("b", 2.0), ("c", 4.0)):
        rows = f1[np.isclose(f1["epsilon"], epsilon) & ~np.isclose(f1["protocol.threshold"], THETA)]
        wide = rows.pivot_table(index="protocol.threshold", columns="protocol.name", values="mean")
        if name not in wide or wide.shape[1] < 2:
            ahead, listed = "not measurable", f"no θ point with {name} and a baseline"
        else:
            gap = wide[name] - wide.drop(columns=name).max(axis=1)
            ahead = verdict_of(bool((gap >= -0.05).all()), "partly")
            ahead = ahead if bool((gap >= -0.05).any()) else "differs"
            listed = "; ".join(
                f"θ = {t:g}: {name} {wide.loc[t, name]:.2f}, "
                + ", ".join(f"{p} {wide.loc[t, p]:.2f}" for p in wide.columns if p != name)
                for t in wide.index
            )
        verdicts = (ahead, more_below)
        out.append(
            ClaimCheck(
                source=f"PEM Sec. VI-B3 (Fig. 7{panel})",
                paper=(
                    f"threshold versions against θ at ε = {epsilon:g}: 'the effects of fixing ε "
                    "and varying θ are also demonstrated in Figure 7(b) and 7(c)', with the "
                    "section's 'PEM performs better than SPM and MCM' and 'the lower the θ, "
                    "the bigger the k'"
                ),
                ours=(
                    f"mean F1 ({sec6.runs_note(table)}): {listed}; values at or above θ: "
                    f"{counted or 'none recorded'}"
                ),
                tolerance=(
                    "two parts: 'performs better' read as PEM's mean F1 ahead of or within "
                    "0.05 of the best baseline's at every θ of the panel ('partly' when only "
                    "at some); 'the lower the θ, the bigger the k' as the true number of "
                    "values at or above θ never smaller at a lower θ"
                ),
                verdict=both(*verdicts),
                reason=(
                    ""
                    if set(verdicts) == {"reproduced"}
                    else "no θ points in the table (pem_fig7_theta not run)"
                    if "not measurable" in verdicts
                    else "a baseline leads PEM by more than 0.05 at some θ: PEM's threshold "
                    "version tests θ only at its last step, with k = 32 candidates"
                ),
            )
        )
    return out


FIGURE = FigureSpec(
    name="pem_fig7",
    experiment=EXPERIMENTS,
    draw=draw,
    title="PEM Fig. 7: threshold versions, F1 against ε and θ (synthetic)",
    caption=(
        "F1 of the threshold versions of PEM, SPM and MCM on the synthetic exponential data "
        "(n = 10^6, m = 64): (a) against ε at θ = 0.023 (about the 16th frequency); (b), "
        "(c) against θ at ε = 2 and 4, the number of values with frequency ≥ θ under each "
        "tick. Each protocol releases the values it estimates at ≥ θn; the truth is every "
        "value with frequency ≥ θ. All are sized with k = 32 (PEM keeps 32 final "
        "candidates, MCM has 32^1.5 channels), enough for the 24 values above the smallest "
        "θ; SPM's stages keep the patterns and pairs estimated ≥ θ. Points: mean of 10 "
        "runs, error bars ± 1 standard deviation, sampled engine. Solid: SPM and MCM "
        "splitting ε between their steps and the final test, as the paper ran them; dashed, "
        "open markers: holding out 10% of the users for the final test instead (Sec. VI-B4). "
        "θ < 0.015 is left out: SPM's runs there take up to ~15 s."
    ),
    claim=(
        "PEM Sec. VI-B3: the threshold version of PEM performs better than SPM and MCM, "
        "the advantage most profound at ε = 2."
    ),
    quick=sec6.QUICK_FIG7,
    quick_for=sec6.QUICK_FOR_FIG7,
    order=20.7,
    claims=claims,
)
