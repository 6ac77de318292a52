"""[PEM] Fig. 5 a–f (Sec. VI-B1): F1 and NCR against ε at k = 16 on URL, AOL and synthetic.

PEM (optimised as in Sec. VI-A: zipf assumption, 2^20 queries, F1 goal) against the
improved MCM and SPM (``protocol=mcm``, ``spm``: variant "improved", ε split), 10 runs,
sampled engine.  Four configs feed the one table: ``pem_fig5`` (PEM, MCM), ``pem_fig5_spm``
(SPM on AOL and synthetic), ``pem_fig5_spm_url`` (SPM on URL at ε = 2, 4 only: ~1-3 s a
run) and ``pem_fig5_sens``, the sensitivity lines: PEM's paper group rule (Sec. VI-B6),
MCM with √n channels (Sec. VII) and MCM with 8-bit OLH blocks (a reading of Sec. III-D).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Digits, Monotone, Part, WithinSE, bonferroni_z
from experiments.results import summary

EXPERIMENTS = ("pem_fig5", "pem_fig5_spm", "pem_fig5_spm_url", "pem_fig5_sens")
#: ε of the model line on the synthetic panels.
MODEL_EPSILONS = np.arange(1.0, 5.01, 0.25)


def draw(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 (top) and NCR (bottom) against ε; URL, AOL, synthetic."""
    table = table[np.isclose(table[col.K], 16)]
    eps = table[col.EPSILON]
    model = MODEL_EPSILONS[(MODEL_EPSILONS >= eps.min()) & (MODEL_EPSILONS <= eps.max())]
    return sec6.utility_grid(table, col.EPSILON, style.EPSILON_LABEL, model_x=model)


def url_claim(f1: pd.DataFrame, runs: str) -> ClaimCheck | None:
    """VI-B1 (Fig. 5a): ε = 4 on URL, PEM's F1 against the paper's digit, the baselines'
    heavy hitters found against 'only two'."""
    name, baselines = sec6.proposed(), sec6.comparison().reference
    means, se = sec6.wide(f1[f1[col.DATASET] == "url"], [col.EPSILON])
    if name not in means or 4.0 not in means.index:
        return None
    at, at_se = means.loc[4.0], se.loc[4.0]
    known = [p for p in baselines if p in at and at[p] == at[p]]
    found = pd.Series({p: 16 * at[p] for p in known}, dtype=float)
    found_se = pd.Series({p: 16 * at_se[p] for p in known}, dtype=float)
    return ClaimCheck(
        source="PEM Sec. VI-B1 (Fig. 5a)",
        paper=(
            "ε = 4 on URL: PEM achieves F1 = 0.9 (more than ten URLs); MCM and SPM "
            "identify only two (F1 ≈ 0.125)"
        ),
        ours=f"URL (surrogate), ε = 4, {runs}: {name} F1 {at[name]:.2f} ± {at_se[name]:.2f} "
        "(1 SE); found of 16 (16 × mean F1): "
        + ", ".join(f"{p} {found[p]:.1f} ± {found_se[p]:.1f}" for p in known),
        parts=(
            Part(f"{name}'s mean F1", at[name], Digits(0.9, decimals=1)),
            Part(
                "heavy hitters each baseline finds (16 × mean F1)",
                found.to_numpy(),
                WithinSE(
                    2.0,
                    found_se.to_numpy(),
                    alpha=0.01,
                    what="'only two'",
                    side="below",
                    df=sec6.dof(f1),
                ),
            ),
        ),
        reason=(
            "each baseline finds the sites above its detection level, and how many there "
            "are depends on the URL data's head, an assumption of the surrogate (its visitor "
            "counts are not published): MCM finds the sites above ≈ 4% of visits and the "
            "surrogate's head (rank^-1.338: 28.6, 11.3, 6.5, 4.5%) has four; measured in "
            "docs/fig5a.md (a flatter head with the same 27,000 sites gives "
            "MCM 2.4-2.6 of 16; SPM with Fanti et al.'s threshold stages finds exactly the "
            "two top sites in 10 of 10 runs)"
        ),
    )


def best_claims(f1: pd.DataFrame, runs: str) -> list[ClaimCheck]:
    """VI-B1's three sentences on Fig. 5: PEM best at every (data set, ε); the heavy hitters
    found (16 × F1) rising with ε for every protocol; and "the improvement is more
    significant when ε is larger", read as PEM's lead over the best baseline larger at
    each data set's largest ε than at its smallest (the paper's versions only)."""
    name, baselines = sec6.proposed(), sec6.comparison().reference
    means, se = sec6.wide(f1, [col.DATASET, col.EPSILON])
    if name not in means or not any(b in means for b in baselines):
        return []
    lead, lead_se, best = sec6.lead_over(means, se, name, baselines)
    parts, reason = sec6.lead_parts(
        f"{name}'s lead over the best baseline per (data set, ε)",
        lead,
        lead_se,
        "a baseline",
        df=sec6.dof(f1),
    )
    found = [
        ClaimCheck(
            source="PEM Sec. VI-B1 (Fig. 5)",
            paper="it is clear that PEM performs best among all three protocols",
            ours=f"{runs}; {name}'s mean F1 minus the best baseline's per (data set, ε): "
            f"{sec6.listed(lead)}",
            parts=parts,
            reason=reason,
        )
    ]
    series = [(p, d) for p in means.columns for d in means.index.get_level_values(0).unique()]
    steps = sum(max(means.loc[d, p].notna().sum() - 1, 0) for p, d in series)
    z = bonferroni_z(max(steps, 1), 0.01, one_sided=True, df=sec6.dof(f1))
    parts, shown = [], []
    for protocol, dataset in series:
        mine = means.loc[dataset, protocol].dropna()
        if len(mine) < 2:
            continue
        err = se.loc[dataset, protocol].loc[mine.index]
        parts.append(
            Part(
                f"{protocol} on {dataset}: heavy hitters found (16 × mean F1) along ε",
                16 * mine.to_numpy(),
                Monotone("increasing", se=16 * err.to_numpy(), z=z, reading="'will increase'"),
            )
        )
        shown.append(f"{protocol} {dataset} " + "/".join(f"{16 * v:.1f}" for v in mine))
    if parts:
        found.append(
            ClaimCheck(
                source="PEM Sec. VI-B1 (Fig. 5)",
                paper="when ε increases, the number of heavy hitters that can be identified "
                "will increase",
                ours=f"{runs}; heavy hitters found of 16 along the ε grid: " + "; ".join(shown),
                parts=tuple(parts),
                note=f"A step back allowed within {z:.1f} SE (one-sided, family-wise 0.01 over "
                f"the {steps} steps): F1 saturates near 1.",
                reason="the count falls from one ε to the next beyond sampling error somewhere",
            )
        )
    ends, change, change_se, falls = [], {}, {}, []
    for dataset, mine in lead.groupby(level=0):
        if len(mine) < 2:
            continue
        first, last = mine.index[0], mine.index[-1]
        change[dataset] = mine.iloc[-1] - mine.iloc[0]
        change_se[dataset] = float(np.hypot(lead_se[first], lead_se[last]))
        ends.append(
            f"{dataset} ε = {first[1]:g}: {mine.iloc[0]:+.2f} → ε = {last[1]:g}: "
            f"{mine.iloc[-1]:+.2f}"
        )
        if change[dataset] < 0:
            falls.append(
                f"on {dataset} the best baseline ({best[first]} → {best[last]}) rises from "
                f"F1 {means.loc[first, best[first]]:.2f} to {means.loc[last, best[last]]:.2f} "
                f"while {name} goes from {means.loc[first, name]:.2f} to "
                f"{means.loc[last, name]:.2f}"
            )
    if change:
        found.append(
            ClaimCheck(
                source="PEM Sec. VI-B1 (Fig. 5)",
                paper="the improvement is more significant when ε is larger",
                ours=f"{runs}; {name}'s lead over the best baseline from each data set's "
                "smallest to its largest ε: " + "; ".join(ends),
                parts=sec6.tie_part(
                    f"change of {name}'s lead from each data set's smallest to its largest ε",
                    pd.Series(change, dtype=float),
                    pd.Series(change_se, dtype=float),
                    otherwise="partly",
                    df=sec6.dof(f1),
                ),
                note="'The improvement' read as PEM's lead over the best baseline (the "
                "sentence may also mean the count's rise); a reading, so a data set where "
                "it fails makes the row 'partly'.",
                reason="; ".join(falls),
            )
        )
    return found


def channel_claims(table: pd.DataFrame, by: str, runs: str) -> list[ClaimCheck]:
    """Sec. VI-A ("k^1.5 channels", collisions do not matter much) and Sec. VII ("around
    √n channels ... significantly under-perform"): MCM with k^1.5 channels against the
    'MCM (√n channels)' line, and PEM against that line, at every (data set, ``by``)."""
    table = table.assign(series=sec6.series_of(table))
    name, (mcm, _) = sec6.proposed(), sec6.comparison().reference
    root = f"{mcm} (√n channels)"
    rows = table[table["series"].isin([name, mcm, root])]
    f1 = summary(rows, "f1", [col.DATASET, "series", by])
    means, se = sec6.wide(f1, [col.DATASET, by], column="series")
    if root not in means or mcm not in means or name not in means:
        return []
    both = means[[mcm, root]].dropna().index
    gap = means.loc[both, mcm] - means.loc[both, root]
    gap_se = pd.Series(np.hypot(se.loc[both, mcm], se.loc[both, root]), index=both)
    lead, lead_se, _ = sec6.lead_over(means, se, name, [root])
    symbol = "ε" if by == col.EPSILON else col.K
    df = sec6.dof(f1)
    z_gap = WithinSE(0.0, gap_se.to_numpy(), df=df).z()
    ahead = gap[gap < -z_gap * gap_se]
    more = (
        f"{root} is ahead beyond sampling error at {len(ahead)} of {len(gap)} points, on "
        f"{', '.join(sorted(set(ahead.index.get_level_values(0))))}; most at "
        f"{sec6.where(ahead.idxmin())} ({ahead.min():+.2f})"
        if len(ahead)
        else ""
    )
    z_lead = sec6.beyond_part("", lead, lead_se, "", df=df).tolerance.low
    level = lead[lead <= z_lead * lead_se]
    tied = ", ".join(
        f"{sec6.where(i)} ({name} {means.loc[i, name]:.2f}, {root} {means.loc[i, root]:.2f})"
        for i in level.index
    )
    return [
        ClaimCheck(
            source=f"PEM Sec. VI-A (MCM's channels; {FIGURE_NAME[by]})",
            paper=(
                "collision of other non-frequent values does not affect much: k^1.5 channels "
                "(instead of n^1.5)"
            ),
            ours=f"{runs}; mean F1 of {mcm} (k^1.5 channels) minus {root} per (data set, "
            f"{symbol}): {sec6.listed(gap)}",
            parts=Part(
                f"F1 of {mcm} with k^1.5 channels minus with √n channels",
                gap.to_numpy(),
                WithinSE(0.0, gap_se.to_numpy(), what="no difference", df=df),
                otherwise="partly",
            ),
            note="√n (~700-1100 here) is many times k^1.5 at the grid's k, so the √n line "
            "stands for 'more channels'.",
            reason=more,
        ),
        ClaimCheck(
            source=f"PEM Sec. VII (on Bassily et al.'s √n channels; {FIGURE_NAME[by]})",
            paper="MCM with around √n channels significantly under-performs PEM",
            ours=f"{runs}; {name}'s mean F1 minus {root}'s per (data set, {symbol}): "
            f"{sec6.listed(lead)}",
            parts=(
                sec6.tie_part(f"{name}'s lead over {root}", lead, lead_se, df=sec6.dof(f1)),
                sec6.beyond_part(
                    f"{name}'s lead over {root} in SE",
                    lead,
                    lead_se,
                    "'significantly' read as beyond sampling error at every point",
                    df=sec6.dof(f1),
                ),
            ),
            reason=f"the lead is not beyond {z_lead:.1f} SE at {tied}" if tied else "",
        ),
    ]


#: The figure each axis of :func:`channel_claims` is drawn in.
FIGURE_NAME = {col.EPSILON: "Fig. 5", col.K: "Fig. 6"}


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B1: ε = 4 on URL; PEM best at every (data set, ε), the count found rising with ε,
    the improvement larger at large ε (the paper's versions); and the MCM channel rows of
    Secs. VI-A and VII (the √n line)."""
    table = table[np.isclose(table[col.K], 16)]
    main = sec6.main_rows(table)
    f1 = summary(main, "f1", [col.DATASET, col.PROTOCOL, col.EPSILON, col.K])
    runs = sec6.runs_note(main)
    found = [url_claim(f1, runs), *best_claims(f1, runs)]
    return [c for c in found if c is not None] + channel_claims(table, col.EPSILON, runs)


FIGURE = FigureSpec(
    name="pem_fig5",
    experiment=EXPERIMENTS,
    draw=draw,
    title="PEM Fig. 5: F1 and NCR against ε (k = 16), URL, AOL, synthetic",
    caption=(
        "F1 (top) and NCR (bottom) against ε at k = 16 on URL (calibrated surrogate: 1.2M "
        "visits, m = 160), AOL (calibrated surrogate: 657,427 first queries, m = 48) and the "
        "synthetic exponential data (n = 10^6, m = 64). Filled markers, solid lines: the "
        "versions the paper ran, PEM optimised (zipf assumption, 2^20 queries, F1 goal) and "
        "the improved MCM and SPM of Sec. VI-A (OLH, k^1.5 channels / longest segments under "
        "2^20 queries, top-k output, ε split between the steps and the final test). Open "
        "markers, dashed: sensitivity lines, PEM with the authors' group rule (Sec. VI-B6, "
        "g = 1 + ⌈(m − ⌊log2 k⌋ − 1)/η⌉), MCM with ~√n channels (Sec. VII) and MCM "
        "reporting 8-bit blocks through OLH (a reading of Sec. III-D, not its stated "
        "protocol). Points: mean of 10 runs, error bars ± 1 standard deviation, sampled "
        "engine. Dotted: PEM's model, Eq. (4), for the configuration it ran with, the "
        "exponential law as the truth (optimistic: it takes the values below the top k as "
        "absent, while the 17th is 0.95 times the 16th). SPM on URL is run at ε = 2 and 4 "
        "only (one run takes ~1-3 s there, several times the other lines' runs)."
    ),
    claim=(
        "PEM Sec. VI-B1: PEM performs best; at ε = 4 on URL PEM reaches F1 = 0.9 while MCM "
        "and SPM identify only two of the 16."
    ),
    quick=sec6.QUICK_FIG5,
    quick_for=sec6.QUICK_FOR_FIG5,
    order=20.5,
    claims=claims,
)
