"""RAPPOR ([RAPPOR] Erlingsson, Pihur, Korolova, CCS 2014): privacy and decoding.

Both figures read the ``rappor`` experiment: google/rappor's three presets (regression,
no PRR, client defaults; ``conf/protocol/rappor_*.yaml``) decoding a Zipf population.
``rappor_privacy`` draws the closed forms of [RAPPOR] Sec. 3 for the presets' (p, q, f, h):
ε₁ of one report, ε∞ of the permanent response, and the exact loss of T reports with the
memoized PRR (:func:`ldp.oracles.rappor.rappor_longitudinal_epsilon`) against T ε₁ without
it.  ``rappor_decode`` draws the decoder's estimates, standard errors and detections
([RAPPOR] Sec. 4: LASSO selection, least squares, Bonferroni cut-off).
"""

from __future__ import annotations

import inspect
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from experiments import columns as col
from experiments.build import build_protocol, protocol_from_row
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Digits, Part, WithinSE
from experiments.results import protocol_name
from ldp.oracles.rappor import (
    rappor_epsilon_inf,
    rappor_epsilon_one,
    rappor_longitudinal_epsilon,
)
from ldp.oracles.rappor.decoder import decode

EXPERIMENT = "rappor"
#: google/rappor's published (ε₁, ε∞) of its presets, by (p, q, f, h).
PUBLISHED = {
    (0.39, 0.61, 0.45, 2): (0.9728, 4.9471),
    (0.225, 0.775, 0.0, 2): (4.9471, math.inf),
    (0.5, 0.75, 0.5, 2): (1.0743, 4.3944),
}
#: Line style and marker per preset, in the order they are drawn (RAPPOR has one colour).
LOOKS = (("-", "o"), ("--", "s"), (":", "D"))
REPORTS = np.unique(np.round(np.logspace(0, 2, 40)).astype(int))


def presets(table: pd.DataFrame) -> pd.DataFrame:
    """One row per preset in the table: ``label``, ``p``, ``q``, ``f``, ``h``, ``k``, ``m``."""
    columns = {f"protocol.{c}": c for c in ("label", "p", "q", "f", "h", "k", "m")}
    found = table[list(columns)].drop_duplicates().rename(columns=columns)
    found["h"] = found["h"].astype(int)
    return found.sort_values(["f", "p"], ascending=[False, True]).reset_index(drop=True)


def _closed(row: pd.Series) -> tuple[float, float]:
    return rappor_epsilon_one(row.f, row.p, row.q, row.h), rappor_epsilon_inf(row.f, row.h)


def draw_privacy(table: pd.DataFrame) -> plt.Figure:
    """ε₁ and ε∞ against f (left); the loss of T reports with and without memoization (right)."""
    style.apply_theme()
    colour = style.color(protocol_name(table))
    rows = presets(table)
    figure, (left, right) = plt.subplots(1, 2, figsize=(11.0, 4.3))
    f_grid = np.linspace(0.005, 0.99, 300)
    for h in sorted(rows["h"].unique()):
        left.plot(f_grid, [rappor_epsilon_inf(f, h) for f in f_grid], color="0.25", lw=1.6)
    handles = []
    for (ls, marker), row in zip(LOOKS, rows.itertuples(), strict=False):
        one = [rappor_epsilon_one(f, row.p, row.q, row.h) for f in f_grid]
        left.plot(f_grid, one, color=colour, ls=ls, lw=1.3)
        eps_one, eps_inf = _closed(row)
        left.plot(row.f, eps_one, marker=marker, color=colour, ms=7, ls="")
        if math.isfinite(eps_inf):
            left.plot(row.f, eps_inf, marker=marker, color="0.25", ms=7, ls="", mfc="white")
        else:
            left.annotate("ε∞ = ∞", (row.f, 9.0), ha="left", va="top", fontsize=8, color="0.25")
        memo = [rappor_longitudinal_epsilon(row.f, row.p, row.q, row.h, t) for t in REPORTS]
        right.plot(REPORTS, memo, color=colour, ls=ls, lw=1.5)
        right.plot(REPORTS, REPORTS * eps_one, color="0.55", ls=ls, lw=1.0)
        if math.isfinite(eps_inf):
            right.axhline(eps_inf, color="0.25", ls=ls, lw=0.7, alpha=0.6)
        text = f"{row.label}: (p, q, f, h) = ({row.p:g}, {row.q:g}, {row.f:g}, {row.h})"
        handles.append(style.key(text, colour, ls=ls, marker=marker))
    left.set(yscale="log", ylim=(0.05, 10.0), ylabel="ε")
    left.set(xlabel="f (PRR: each Bloom bit randomized w.p. f)")
    left.set_title("ε₁ (one report, colour) and ε∞ (grey) against f")
    right.set(xscale="log", yscale="log", ylabel="privacy loss ε")
    right.set(xlabel="T reports of one value by one client")
    right.set_title("longitudinal: memoized PRR vs T ε₁")
    handles += [
        style.key("ε∞ = 2h ln((1 - f/2)/(f/2))", "0.25", lw=1.6),
        style.key("T reports, memoized PRR (exact)", colour, lw=1.5),
        style.key("T reports, no memoization: T ε₁", "0.55", lw=1.0),
    ]
    figure.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2)
    figure.tight_layout()
    return figure


def decode_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per preset: mean ``n_detected``, ``n_false_detected``, ``n_selected``, ``within_2se``
    over trials, and the number of ``trials``."""
    rows = table[table[col.ITEM].isna()]
    # a metric with no value in any trial is left out, not a column of NaN
    means = rows.groupby([col.PROTOCOL_LABEL, col.METRIC])[col.VALUE].mean().dropna()
    out = means.unstack().reset_index()
    out[col.TRIALS] = rows.groupby(col.PROTOCOL_LABEL)[col.TRIAL].nunique().to_numpy()
    return out


def draw_decode(table: pd.DataFrame) -> plt.Figure:
    """Estimate vs truth of the tracked values, ±2 SE, one panel per preset (trial 0)."""
    style.apply_theme()
    colour = style.color(protocol_name(table))
    rows = presets(table)
    summary = decode_summary(table).set_index(col.PROTOCOL_LABEL)
    figure, axes = plt.subplots(
        1, len(rows), figsize=(4.3 * len(rows), 4.3), squeeze=False, sharey=True
    )
    first = int(table[col.TRIAL].min())
    for ax, (_, marker), row in zip(axes[0], LOOKS, rows.itertuples(), strict=False):
        mine = table[(table[col.PROTOCOL_LABEL] == row.label) & (table[col.TRIAL] == first)]
        wide = mine[mine[col.ITEM].notna()].pivot_table(
            index=col.ITEM, columns=col.METRIC, values=col.VALUE, aggfunc="first"
        )
        truth = mine[mine[col.METRIC] == "estimate_n"].set_index(col.ITEM)[col.ANALYTIC]
        wide = wide.join(truth.rename("truth"))
        floor = wide["truth"].min() / 4
        ax.plot([floor, 1], [floor, 1], color="0.5", lw=0.8)
        selected = wide["std_error_n"].notna()
        look = {"fmt": marker, "color": colour, "ms": 4.5, "capsize": 2, "lw": 0.8}
        for detected, fill in ((True, colour), (False, "white")):
            part = wide[selected & ((wide["detected"] > 0) == detected)]
            estimate, half = part["estimate_n"].clip(lower=floor), 2 * part["std_error_n"]
            ax.errorbar(part["truth"], estimate, yerr=half, mfc=fill, **look)
        dropped = wide[~selected]
        ax.plot(dropped["truth"], np.full(len(dropped), floor), "x", color="0.3", ms=5)
        ax.set(xscale="log", yscale="log", ylim=(floor * 0.8, 1))
        stats = summary.loc[row.label]
        ax.set_title(
            f"{row.label}\ndetected {stats['n_detected']:.1f} "
            f"(false {stats['n_false_detected']:.2f}), "
            f"within 2 SE {100 * stats['within_2se']:.0f}%",
            fontsize=9,
        )
        ax.set_xlabel("true frequency c(v)/n")
    axes[0][0].set_ylabel("decoded ĉ(v)/n (±2 SE)")
    handles = [
        style.key("detected (Bonferroni, α = 0.05)", colour, marker="o", ls=""),
        style.key("selected, not significant", colour, marker="o", mfc="white", ls=""),
        style.key("not selected by the LASSO", marker="x", ls=""),
        style.key("ĉ = c", "0.5", lw=0.8),
    ]
    figure.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4)
    figure.tight_layout()
    return figure


# ------------------------------------------------------------------------------ claims
def _oracle(table: pd.DataFrame, label: str):
    """The RAPPOR object the harness ran for a preset, rebuilt from one of its rows."""
    row = table[table[col.PROTOCOL_LABEL] == label].iloc[0]
    return build_protocol(
        protocol_from_row(row),
        float(row[col.EPSILON]),
        domain_size=int(row[col.DOMAIN_SIZE]),
    )


def privacy_claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """The presets' ε₁ and ε∞, from the protocol objects, to google/rappor's 4 decimals."""
    found = []
    for row in presets(table).itertuples():
        key = (row.p, row.q, row.f, row.h)
        if key not in PUBLISHED:
            continue
        oracle = _oracle(table, row.label)
        one, inf = oracle.epsilon_one, oracle.epsilon_inf
        found.append(
            ClaimCheck(
                source=f"[RAPPOR] Sec. 3, google/rappor preset (p, q, f, h) = {key}",
                paper=f"ε₁ = {PUBLISHED[key][0]:.4f}, ε∞ = {PUBLISHED[key][1]:.4f}",
                ours=f"ε₁ = {one:.4f}, ε∞ = {inf:.4f} ({row.label}'s protocol object)",
                parts=Part("(ε₁, ε∞)", [one, inf], Digits(PUBLISHED[key], decimals=4)),
                note="" if math.isfinite(inf) else "ε∞ = ∞ (no PRR) equals the printed ∞.",
            )
        )
    return found


def decode_claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """False detections at most α per decode; detected values within 2 SE at the normal
    rate 0.9545 (pooled over presets and trials)."""
    summary = decode_summary(table)
    if summary.empty:
        return []
    lines = [
        f"{r[col.PROTOCOL_LABEL]}: {r['n_detected']:.1f} detected, "
        f"{r['n_false_detected']:.2f} false, {100 * r['within_2se']:.0f}% within 2 SE "
        f"({int(r[col.TRIALS])} trials)"
        for _, r in summary.iterrows()
    ]
    weights = summary["n_detected"] * summary[col.TRIALS]
    coverage = float((summary["within_2se"] * weights).sum() / weights.sum())
    nominal = 1 - 2 * stats.norm.sf(2)
    decodes = float(summary[col.TRIALS].sum())
    false_rate = float((summary["n_false_detected"] * summary[col.TRIALS]).sum()) / decodes
    alpha = inspect.signature(decode).parameters["alpha"].default
    return [
        ClaimCheck(
            source="[RAPPOR] Sec. 4 (decoding: LASSO, least squares, Bonferroni cut-off)",
            paper="the detected values are estimated within their standard errors, with "
            "family-wise false-detection rate at most α",
            ours="; ".join(lines)
            + f"; pooled {100 * coverage:.1f}% within 2 SE; {false_rate:.3f} false detections "
            f"per decode over {int(decodes)} decodes (α = {alpha:g})",
            parts=(
                Part(
                    "pooled share of detected values within 2 SE",
                    coverage,
                    WithinSE(
                        nominal,
                        math.sqrt(nominal * (1 - nominal) / weights.sum()),
                        side="above",
                        what=f"the normal rate {100 * nominal:.2f}% (binomial SE)",
                    ),
                ),
                Part(
                    "false detections per decode",
                    false_rate,
                    WithinSE(
                        alpha,
                        math.sqrt(alpha * (1 - alpha) / decodes),
                        side="below",
                        what="α (binomial SE over the decodes)",
                    ),
                ),
            ),
            note="The decodes of one preset share nothing but the population; the detected "
            "values of one decode are pooled as if independent.",
            reason=(
                "post-selection: the estimates are refit on the values the LASSO keeps, "
                "absent candidates whose noise fits their bits included; in "
                "tests/oracles/test_rappor.py (10 true values among 200 candidates) the refit "
                "estimates shift by about -0.35 SE, while decoding against the true values "
                "alone gives the nominal spread"
            ),
        )
    ]


FIGURES = [
    FigureSpec(
        name="rappor_privacy",
        experiment=EXPERIMENT,
        draw=draw_privacy,
        title="RAPPOR: ε₁ and ε∞ against f, and the longitudinal loss",
        caption=(
            "Left: one report's ε₁ = h ln(q*(1-p*)/(p*(1-q*))) (colour, one line style per "
            "preset's p, q, h) and the PRR's ε∞ = 2h ln((1-f/2)/(f/2)) (grey) against f; "
            "markers: google/rappor's presets at their f (filled ε₁, open ε∞). Right: the "
            "privacy loss of T reports of one value by one client, exact with the memoized "
            "PRR (colour; tends to ε∞, thin grey horizontal lines) and T ε₁ without "
            "memoization (grey); without a PRR (f = 0) the two coincide. Closed forms."
        ),
        claim=(
            "[RAPPOR] Sec. 3: ε∞ bounds any number of reports of a memoized value, one "
            "report costs ε₁ < ε∞; google/rappor's presets give (ε₁, ε∞) = (0.9728, 4.9471), "
            "(4.9471, ∞), (1.0743, 4.3944)."
        ),
        quick=("n_trials=3",),
        order=95.0,
        claims=privacy_claims,
    ),
    FigureSpec(
        name="rappor_decode",
        experiment=EXPERIMENT,
        draw=draw_decode,
        title="RAPPOR decoding a Zipf population: estimates, standard errors, detections",
        caption=(
            "google/rappor's presets (ε = 5 admits each), Zipf(1.1) over 500 values, 10^6 "
            "users, all 1000 domain values as candidates (500 absent), sampled engine. "
            "Each panel: the decoder's estimate of the 30 most frequent values against the "
            "truth in trial 0, error bars ±2 of the decoder's standard errors; filled: "
            "detected (Bonferroni at α = 0.05), open: selected by the LASSO but not "
            "significant, crosses: not selected. Titles: means over all trials."
        ),
        claim=(
            "[RAPPOR] Sec. 4: LASSO selection, least-squares estimates with standard "
            "errors and a Bonferroni cut-off find the frequent values without false "
            "detections; a larger ε₁ (no PRR) detects far more of the tail."
        ),
        quick=("n_trials=3",),
        order=96.0,
        claims=decode_claims,
    ),
]
