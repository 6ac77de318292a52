"""Mean estimation of values in [-1, 1]: Duchi et al., PM, HM and Laplace against ε.

Wang, Xiao, Yang, Zhao, Hui, Shin, Yang, Yu, *Collecting and Analyzing Multidimensional
Data with Local Differential Privacy* (ICDE 2019), Sec. III: the Piecewise Mechanism's
worst-case variance is below Duchi et al.'s when ε > 1.29 and above it below; the Hybrid
Mechanism's is at most both.  Closed forms: :mod:`ldp.theory.numeric`.  The Laplace
baseline (8/ε² in the paper) is drawn on a grid 1/s with exact discrete noise so that its
float64 reports are private; its closed form (``laplace_grid_variance``) is within 0.04%
of 8/ε².  Panels (a), (b): every user at t = 0 (Duchi's worst case) and at t = ±1 (PM's);
(c) the worst case over t, the larger of the two (each Var[t*|t] is affine in t²).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec, both
from experiments.results import figure_config, held, summary
from ldp import registry
from ldp.theory import numeric as theory

EPS_GRID = np.linspace(0.2, 8.0, 200)
#: Data set -> the value every user's variance is evaluated at.
LAWS = {"centre": 0.0, "ends": 1.0}
#: Overall false-alarm rate of each statistical claim (Bonferroni over its settings).
LEVEL = 1e-3


def _formula(name: str):
    """The paper's closed form Var[t*|t](ε, t) of a registered mechanism (its ``paper_form``)."""
    return registry.get(name).cls.paper_form


def _worst(name: str, epsilon: float) -> float:
    """The paper's worst-case Var[t*|t] of a registered mechanism at ε."""
    return registry.get(name).cls.paper_worst_case(epsilon)


def _stats(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    return summary(table, metric, ["protocol.name", "dataset.law", "epsilon"])


def worst_case(table: pd.DataFrame) -> pd.DataFrame:
    """Per protocol and ε: the larger measured per-report variance of the two data sets."""
    measured = _stats(table, "report_variance")
    index = measured.groupby(["protocol.name", "epsilon"])["mean"].idxmax()
    return measured.loc[index].set_index(["protocol.name", "epsilon"])


def _names(table: pd.DataFrame) -> list[str]:
    present = set(table["protocol.name"])
    return [name for name in registry.protocols("mean") if name in present]


def _panel(axis: plt.Axes, names: list[str], measured: pd.DataFrame, closed_form) -> None:
    """Each mechanism's measured points (± 2 se) and its closed form ``closed_form(name, ε)``
    along :data:`EPS_GRID`, in its colour."""
    for name in names:
        colour, label = style.color(name), registry.get(name).label
        mine = measured[measured["protocol.name"] == name]
        yerr = 2 * mine["se"]
        axis.errorbar(
            mine["epsilon"], mine["mean"], yerr=yerr, fmt="o", ms=4, capsize=2, color=colour
        )
        curve = [closed_form(name, e) for e in EPS_GRID]
        axis.plot(EPS_GRID, curve, color=colour, lw=1.1, label=label)
    axis.set(yscale="log", xlabel="ε")


def draw(table: pd.DataFrame) -> plt.Figure:
    style.apply_theme()
    figure, axes = plt.subplots(1, 3, figsize=(14.5, 4.4))
    errors = _stats(table, "sq_error_n")
    names = _names(table)
    for axis, letter, (law, t) in zip(axes[:2], "ab", LAWS.items(), strict=True):
        mine = errors[errors["dataset.law"] == law]
        _panel(axis, names, mine, lambda name, e, t=t: _formula(name)(e, t))
        axis.set(ylabel="n · (mean error)²")
        where = "t = 0" if law == "centre" else "t = ±1"
        axis.set_title(f"({letter}) every user at {where}")
    worst = worst_case(table).reset_index()
    _panel(axes[2], names, worst, _worst)
    axes[2].axvline(theory.PM_BEATS_DUCHI, color="0.4", ls=":", lw=0.9)
    axes[2].set(ylabel="max over t of Var[t*|t]")
    axes[2].set_title("(c) worst case: per-report variance")
    axes[0].legend(fontsize=8, loc="upper right")
    figure.tight_layout()
    return figure


def _interpolated_crossing(grid: np.ndarray, log_ratio: np.ndarray) -> float | None:
    """Where ``log_ratio`` changes sign, interpolated linearly between grid points; None
    unless it changes sign exactly once."""
    changes = np.flatnonzero(np.diff(np.sign(log_ratio)) != 0)
    if changes.size != 1:
        return None
    i = int(changes[0])
    return grid[i] + (grid[i + 1] - grid[i]) * log_ratio[i] / (log_ratio[i] - log_ratio[i + 1])


def _crossing(worst: pd.DataFrame, pm: str, duchi: str) -> tuple[float, bool]:
    """ε where the measured worst cases of PM and Duchi cross (log ratio interpolated
    linearly between grid points), and whether the sign changes exactly once."""
    pm, duchi = worst.loc[pm]["mean"], worst.loc[duchi]["mean"]
    grid = np.array(sorted(set(pm.index) & set(duchi.index)))
    crossing = _interpolated_crossing(grid, np.log(pm[grid].to_numpy() / duchi[grid].to_numpy()))
    return (math.nan, False) if crossing is None else (float(crossing), True)


def _analytic_crossing_error(grid: np.ndarray, pm: str, duchi: str) -> float:
    """How far the same interpolation of the *closed forms* lands from 1.29 on this grid."""
    ratio = np.log([_worst(pm, e) / _worst(duchi, e) for e in grid])
    return abs(_interpolated_crossing(grid, ratio) - theory.PM_BEATS_DUCHI)


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    config = figure_config("mean_eps")
    (pm, hybrid), (duchi,) = config.subjects, config.reference
    names = set(_names(table))
    if not {duchi, pm, hybrid} <= names or set(table["dataset.law"]) < set(LAWS):
        return []
    worst = worst_case(table)
    crossing, once = _crossing(worst, pm, duchi)
    grid = np.array(sorted(worst.loc[pm].index))
    slack = _analytic_crossing_error(grid, pm, duchi) + 0.05
    # (1) the crossing
    close = once and abs(crossing - theory.PM_BEATS_DUCHI) <= slack
    result = [
        ClaimCheck(
            source="Wang et al., ICDE 2019, Sec. III-B (PM against Duchi et al.)",
            paper="PM's worst-case variance is below Duchi et al.'s exactly when ε > 1.29",
            ours=(
                f"measured worst-case per-report variances cross once, at ε ≈ {crossing:.3f} "
                f"(closed forms: {theory.PM_BEATS_DUCHI:.4f})"
                if once
                else "the measured worst cases do not cross exactly once"
            ),
            tolerance=(
                f"|crossing - 1.29| <= {slack:.3f}: the error of the same linear "
                f"interpolation of the closed forms on this ε grid plus 0.05 for the "
                f"measurement (the per-report variances have ~0.3% spread)"
            ),
            verdict=held(close),
            reason="" if close else "the measured crossing is outside the tolerance",
        )
    ]
    # (2) HM at most both, at every ε, within a one-sided test at LEVEL overall
    hm = worst.loc[hybrid]
    limit = float(stats.norm.isf(LEVEL / len(hm)))
    worst_z, above = -math.inf, []
    for eps, row in hm.iterrows():
        best = min((worst.loc[other].loc[eps] for other in (pm, duchi)), key=lambda r: r["mean"])
        spread = math.hypot(row["se"], best["se"])
        z = (row["mean"] - best["mean"]) / spread if spread > 0 else -math.inf
        worst_z = max(worst_z, z)
        if z > limit:
            above.append(eps)
    result.append(
        ClaimCheck(
            source="Wang et al., ICDE 2019, Sec. III-C (Lemma 3)",
            paper="HM's worst-case variance is at most PM's and Duchi et al.'s at every ε",
            ours=(
                f"measured worst-case per-report variance of HM against the smaller of PM's "
                f"and Duchi's at {len(hm)} values of ε: largest z = {worst_z:+.2f}"
            ),
            tolerance=(
                f"one-sided z <= {limit:.2f} at every ε (overall false-alarm {LEVEL:g}, "
                f"Bonferroni over the ε grid)"
            ),
            verdict=held(not above),
            reason="" if not above else f"HM above the better one at ε = {above}",
        )
    )
    # (3) the estimator's MSE matches the closed forms on both data sets
    errors = _stats(table, "sq_error_n")
    errors = errors[errors["protocol.name"].isin(registry.protocols("mean"))]
    # R n·err²/Var ~ χ²_R when the mean error is normal (CLT over n = 2000 users)
    total = errors["trials"] * errors["mean"] / errors["analytic"]
    chi2 = stats.chi2(errors["trials"])
    tails = np.minimum(chi2.cdf(total), chi2.sf(total))
    smallest = float(2 * tails.min())
    bound = LEVEL / len(errors)

    def paper_form(row: pd.Series) -> float:
        return _formula(row["protocol.name"])(row["epsilon"], LAWS[row["dataset.law"]])

    paper_gap = max(abs(row["analytic"] / paper_form(row) - 1) for _, row in errors.iterrows())
    fits, exact = smallest >= bound, paper_gap <= 1e-6
    result.append(
        ClaimCheck(
            source="Wang et al., ICDE 2019, Eq. (2) (Duchi), Lemma 1 (PM), Lemma 3 (HM)",
            paper=(
                "Var[t*|t] as stated, for Duchi et al., PM, HM and Laplace (8/ε²; ours on a "
                "grid: laplace_grid_variance, within 0.04%)"
            ),
            ours=(
                f"n·(mean error)² over {int(errors['trials'].min())} trials against the closed "
                f"form at {len(errors)} settings: smallest p = {smallest:.2g}; the recorded "
                f"analytic values differ from the paper's formulas by {paper_gap:.1g}"
            ),
            tolerance=(
                f"two-sided p >= {bound:.2g} at every setting (overall false-alarm {LEVEL:g}, "
                f"Bonferroni), R·mean(n·err²)/Var tested as χ²_R (the mean error normal by the "
                f"CLT over n users), and the analytic values (the variance of the mechanism "
                f"as drawn: PM's dyadic grid, docs/numeric.md) within 1e-6 of the paper's "
                f"(Laplace: of its grid form)"
            ),
            verdict=both(held(fits), held(exact)),
            reason=""
            if fits and exact
            else "a setting's MSE is off its closed form"
            if not fits
            else "the recorded closed form is off the paper's",
        )
    )
    return result


FIGURE = FigureSpec(
    name="mean_eps",
    experiment="mean_eps",
    draw=draw,
    title="Mean estimation in [-1, 1]: Duchi et al., PM, HM and Laplace against ε",
    caption=(
        "n = 2000 users, 100 trials, reports engine. (a), (b): n·(mean error)² with every "
        "user at t = 0 (Duchi's worst case) and at t = ±1 (PM's worst case), markers the mean "
        "over trials (± 2 se), lines Var[t*|t] of Wang et al. ICDE 2019 (Duchi Eq. (2), PM "
        "Lemma 1, HM Lemma 3, Laplace 8/ε², drawn here on a grid with exact discrete noise: "
        "within 0.04%). (c): the worst case over t, the larger of (a) "
        "and (b), measured as the per-report variance over n reports (± 2 se); dotted: "
        "ε = 1.29, where PM's and Duchi's worst cases cross."
    ),
    claim=(
        "Wang et al. ICDE 2019 Sec. III: PM beats Duchi et al.'s mechanism in the worst case "
        "when ε > 1.29 and loses below; HM is at least as good as both."
    ),
    quick=("n_trials=5",),
    order=95.0,
    claims=claims,
)
