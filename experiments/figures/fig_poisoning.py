"""Fake users against every registered oracle: the frequency gains of [CJG21]'s attacks.

Read from the ``oracle_frontier`` table (:func:`experiments.kinds.oracle_frontier.attack_rows`):
per (d, ε, oracle, attack), the frequency gain Σ_t (f̃_t after − f̃_t before) that a share
β = 0.05 of fake users gives three target values nobody holds (n = 10,000 genuine users
on one value), beside its closed form (:func:`ldp.poisoning.expected_gain`; at the
collection's measured S where the protocol does not know it exactly).  Robustness then
sits beside the frontier's variance, bits and decode time, for every oracle the registry
holds (plug-ins included).

Source: Cao, Jia, Gong, *Data Poisoning Attacks to Local Differential Privacy Protocols*,
USENIX Security 2021 ([CJG21]): Sec. 4 derives each attack's expected gain against kRR
(GRR), OUE and OLH, finds the maximal gain attack (MGA) the strongest of the three, and
names a fundamental security-privacy trade-off: the smaller ε, the larger the gain.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Band, ExactOrder, Part, WithinSE
from experiments.results import figure_config

ATTACKS = ("RPA", "RIA", "MGA")
#: The protocols [CJG21] attacks (the ``series`` of ``oracle_frontier``'s figure block).
STUDIED = figure_config("oracle_frontier").series
#: Below this |gain| the y axis is linear (a gain of 0 or slightly negative is common).
LINEAR_BELOW = 1e-2


def _rows(table: pd.DataFrame) -> pd.DataFrame:
    """The gain rows, with ``oracle``, ``attack`` and ``gap`` (measured − closed form)."""
    rows = table[table[col.METRIC].str.startswith("gain_")].copy()
    names = rows[col.METRIC].str.split(".", n=1, expand=True)
    if rows.empty:
        return rows.assign(oracle=[], attack=[], gap=[])
    rows["oracle"] = names[1]
    rows["attack"] = names[0].str.removeprefix("gain_")
    rows["gap"] = rows[col.VALUE] - rows[col.ANALYTIC]
    return rows


def gains(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (d, ε, oracle, attack): the mean measured ``gain`` and the mean closed
    form ``expected`` over the trials."""
    grouped = _rows(table).groupby([col.DOMAIN_SIZE, col.EPSILON, "oracle", "attack"])
    out = pd.DataFrame(
        {"gain": grouped[col.VALUE].mean(), "expected": grouped[col.ANALYTIC].mean()}
    ).reset_index()
    out = out.rename(columns={col.DOMAIN_SIZE: "d"})
    out["d"] = out["d"].astype(int)
    return out


def draw(table: pd.DataFrame) -> plt.Figure:
    """A row per d, a column per attack: each oracle's mean gain (points) and its closed
    form (lines) against ε."""
    style.apply_theme()
    found = gains(table)
    ds = sorted(found["d"].unique())
    figure, axes = plt.subplots(
        max(len(ds), 1), len(ATTACKS), figsize=(12, 3.4 * max(len(ds), 1)), squeeze=False
    )
    for (i, d), (j, attack) in ((a, b) for a in enumerate(ds) for b in enumerate(ATTACKS)):
        ax = axes[i][j]
        panel = found[(found["d"] == d) & (found["attack"] == attack)]
        for oracle, rows in panel.groupby("oracle"):
            rows = rows.sort_values(col.EPSILON)
            colour = style.color(oracle)
            ax.plot(rows[col.EPSILON], rows["expected"], color=colour, lw=1)
            ax.plot(
                rows[col.EPSILON],
                rows["gain"],
                ls="",
                marker=style.marker(oracle),
                color=colour,
                ms=4,
            )
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=LINEAR_BELOW)
        ax.set_title(f"{attack}, d = {d}", fontsize=9)
        if i == len(ds) - 1:
            ax.set_xlabel("ε")
        if j == 0:
            ax.set_ylabel("frequency gain of the 3 targets")
    names = style.order(list(found["oracle"].unique()))
    handles = [style.key(n, style.color(n), marker=style.marker(n), ls="") for n in names]
    handles.append(style.key("closed form", "0.3"))
    return style.legend_right(figure, handles)


def _pooled_gaps(rows: pd.DataFrame) -> tuple[pd.Series, pd.Series, pd.Series]:
    """Per (oracle, attack) of ``rows`` (:func:`_rows`): the mean gap (measured − closed
    form) over its collections at every setting, its standard error and the count.  Each
    collection's gap has mean 0 if the closed form holds, whatever its setting, so the
    collections of all settings pool."""
    pairs = rows.groupby(["oracle", "attack"])["gap"]
    runs = pairs.size()
    return pairs.mean(), pairs.std() / np.sqrt(runs), runs


def _gaps_part(rows: pd.DataFrame, quantity: str) -> Part | None:
    """The pooled gaps of ``rows`` within their standard errors of 0 (Student's t,
    family-wise 0.01 over the pairs); None with fewer than two collections a pair."""
    mean_gap, se, runs = _pooled_gaps(rows)
    if runs.empty or runs.min() < 2:
        return None
    return Part(
        quantity,
        mean_gap,
        WithinSE(
            0.0,
            se,
            alpha=0.01,
            df=max(int(runs.min()) - 1, 1),
            what="0 (the closed form, at the measured S where it is not known exactly)",
        ),
    )


def _closed_form_claim(table: pd.DataFrame) -> ClaimCheck | None:
    """Every (oracle, attack): the mean gap (measured − closed form) over its collections,
    at every setting, is 0 within its standard error (Student's t, family-wise over the
    pairs)."""
    rows = _rows(table)
    part = _gaps_part(rows, "mean of (measured − closed-form gain) per (oracle, attack)")
    if part is None:
        return None
    mean_gap, se, runs = _pooled_gaps(rows)
    worst = (mean_gap.abs() / se.where(se > 0)).max()
    return ClaimCheck(
        source="Cao, Jia, Gong USENIX Security 2021 Sec. 4 (the attacks' expected gains)",
        paper="the expected frequency gain of each attack in closed form: RPA and MGA from "
        "the support S of a fake report, β[(S − r q*)/(p* − q*) − f_T]; RIA β(1 − f_T)",
        ours=(
            f"{len(mean_gap)} (oracle, attack) pairs of {rows['oracle'].nunique()} oracles, "
            f"{int(runs.min())}-{int(runs.max())} collections each (every d ≤ 1024 and ε, "
            f"β = 0.05, 3 targets nobody holds); largest |mean gap|/SE {worst:.2f}"
        ),
        parts=(part,),
        note="A pair's collections come from every setting: each gap has mean 0 under the "
        "closed form, so their mean is tested against 0 with their own spread.",
        reason="an attack's measured gain is off its closed form",
    )


def _ratio_parts(quantity: str, measured, closed_form, word: str) -> tuple[Part, Part]:
    """An order read as a ratio above 1, on the measured gains and (exactly) on their
    closed forms; ``quantity`` has a ``{}`` for "mean gain" or "closed-form gain"."""
    return (
        Part(
            quantity.format("mean gain"),
            measured,
            Band(low=1.0, strict=True, reading=f"{word} read as a ratio > 1"),
        ),
        Part(
            quantity.format("closed-form gain"),
            closed_form,
            ExactOrder(low=1.0, strict=True, reading="a ratio > 1"),
        ),
    )


def _trade_off_claims(found: pd.DataFrame, rows: pd.DataFrame) -> list[ClaimCheck]:
    """For the studied protocols: MGA over the stronger of RPA and RIA per setting, and
    MGA's gain at the smallest ε over the largest, per d.  Each ordering is checked twice:
    on the measured gains (a ratio above 1), and as the closed forms' ordering (``found``'s
    ``expected``) with the measured gains of the attacks it compares on their closed forms
    (pooled gaps within sampling error), so that a gain off its closed form by a few
    standard errors changes the verdict, not only one that reverses the order."""
    studied = found[found["oracle"].isin(STUDIED)]
    index = ["d", col.EPSILON, "oracle", "attack"]
    wide = studied.set_index(index)["gain"].unstack("attack")
    model = studied.set_index(index)["expected"].unstack("attack")
    if wide.empty or not set(ATTACKS) <= set(wide.columns):
        return []
    strongest = wide["MGA"] / wide[["RPA", "RIA"]].max(axis=1)
    strongest_model = model["MGA"] / model[["RPA", "RIA"]].max(axis=1)
    mga = studied[studied["attack"] == "MGA"]
    low, high = mga[col.EPSILON].min(), mga[col.EPSILON].max()
    ends = mga.set_index(["d", "oracle", col.EPSILON])["gain"].unstack(col.EPSILON)
    ends_model = mga.set_index(["d", "oracle", col.EPSILON])["expected"].unstack(col.EPSILON)
    if low == high:
        return []
    falls = ends[low] / ends[high]
    falls_model = ends_model[low] / ends_model[high]
    names = ", ".join(STUDIED)
    own = rows[rows["oracle"].isin(STUDIED)]
    all_gaps = _gaps_part(own, f"mean of (measured − closed-form gain) per attack on {names}")
    mga_gaps = _gaps_part(
        own[own["attack"] == "MGA"], f"mean of (measured − closed-form MGA gain) on {names}"
    )
    if all_gaps is None or mga_gaps is None:
        return []
    return [
        ClaimCheck(
            source="Cao, Jia, Gong USENIX Security 2021 Sec. 4 and 6 (MGA against RPA, RIA)",
            paper=f"the maximal gain attack gains the most of the three against {names}",
            ours=f"MGA's gain over the larger of RPA's and RIA's: {strongest.min():.3g} at "
            f"least, {strongest.median():.3g} in the median over {len(strongest)} settings "
            f"(closed forms: {strongest_model.min():.3g} at least, "
            f"{strongest_model.median():.3g} in the median)",
            parts=(
                *_ratio_parts(
                    "MGA / max(RPA, RIA) {} per (d, ε, protocol)",
                    strongest,
                    strongest_model,
                    "'gains the most'",
                ),
                all_gaps,
            ),
            note="The order holds on the measured gains and on the closed forms, and each "
            "attack's measured gains on these protocols sit on their closed forms (pooled "
            "over the settings, as in the row above).",
            reason="another attack gained as much as MGA, or a measured gain is off its "
            "closed form",
        ),
        ClaimCheck(
            source="Cao, Jia, Gong USENIX Security 2021 Sec. 1 and 4 (security-privacy trade-off)",
            paper="the stronger the privacy (the smaller ε), the larger the gain of the "
            f"maximal gain attack, against {names}",
            ours=f"MGA's gain at ε = {low:g} over ε = {high:g}: {falls.min():.3g} to "
            f"{falls.max():.3g} over {len(falls)} (d, protocol) (closed forms: "
            f"{falls_model.min():.3g} to {falls_model.max():.3g})",
            parts=(
                *_ratio_parts(
                    f"MGA {{}} at ε = {low:g} / at ε = {high:g} per (d, protocol)",
                    falls,
                    falls_model,
                    "'larger'",
                ),
                mga_gaps,
            ),
            note="The order holds on the measured gains and on the closed forms, and MGA's "
            "measured gains on these protocols sit on their closed forms (pooled over the "
            "settings).",
            reason="MGA gained as much at the largest ε as at the smallest, or its measured "
            "gain is off its closed form",
        ),
    ]


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    found = gains(table)
    if found.empty:
        return []
    checked = _closed_form_claim(table)
    return ([checked] if checked else []) + _trade_off_claims(found, _rows(table))


FIGURE = FigureSpec(
    name="poisoning",
    experiment="oracle_frontier",
    draw=draw,
    title="Fake users against every oracle: the attacks' frequency gains (Cao et al. 2021)",
    caption=(
        "The frequency gain Σ_t (f̃_t after − f̃_t before) of three target values nobody "
        "holds when fake users make up β = 0.05 of n = 10,000 + m users, for every "
        "registered oracle and each attack it can express (RPA: uniform reports; RIA: "
        "honest reports of a random target; MGA: crafted reports, or the best of 256 honest "
        "ones where the oracle declares none): mean of the trials (points) and the closed "
        "form (lines), per d ≤ 1024 and ε. Symmetric log scale, linear below 0.01."
    ),
    claim=(
        "Cao, Jia, Gong (USENIX Security 2021) Sec. 4: each attack's expected gain in "
        "closed form; MGA gains the most; the smaller ε, the larger its gain."
    ),
    # the quick run: d = 1024 at the ends of the ε axis (the claims read both ends)
    quick=("n_trials=2", "options.domain_size=1024", "hydra.sweeper.params.epsilon='0.5,4'"),
    order=66.5,
    claims=claims,
)
