"""[PEM] Fig. 5 a–f (Sec. VI-B1): F1 and NCR against ε at k = 16 on URL, AOL and synthetic.

PEM (optimised as in Sec. VI-A: zipf assumption, 2^20 queries, F1 goal) against the
improved MCM and SPM (``protocol=mcm``, ``spm``: variant "improved", ε split), 10 runs,
sampled engine.  Four configs feed the one table: ``pem_fig5`` (PEM, MCM), ``pem_fig5_spm``
(SPM on AOL and synthetic), ``pem_fig5_spm_url`` (SPM on URL at ε = 2, 4 only: ~6.5 s a
run) and ``pem_fig5_sens``, the sensitivity lines: PEM's paper group rule (Sec. VI-B6),
MCM with √n channels (Sec. VII) and MCM with 8-bit OLH blocks (a reading of Sec. III-D).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.results import summary

EXPERIMENTS = ("pem_fig5", "pem_fig5_spm", "pem_fig5_spm_url", "pem_fig5_sens")
#: ε of the model line on the synthetic panels.
MODEL_EPSILONS = np.arange(1.0, 5.01, 0.25)


def draw(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 (top) and NCR (bottom) against ε; URL, AOL, synthetic."""
    table = table[np.isclose(table["k"], 16)]
    eps = table["epsilon"]
    model = MODEL_EPSILONS[(MODEL_EPSILONS >= eps.min()) & (MODEL_EPSILONS <= eps.max())]
    return sec6.utility_grid(table, "epsilon", style.EPSILON_LABEL, model_x=model)


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B1: ε = 4 on URL; and PEM best at every (data set, ε), among the paper's versions
    (the sensitivity lines are drawn, not judged)."""
    table = sec6.main_rows(table[np.isclose(table["k"], 16)])
    f1 = summary(table, "f1", ["dataset.name", "protocol.name", "epsilon"])
    name, baselines = sec6.proposed(), sec6.comparison().reference
    at = {
        p: sec6.pick(f1, dataset__name="url", protocol__name=p, epsilon=4.0)
        for p in [name, *baselines]
    }
    mean = {p: sec6.mean_of(rows) for p, rows in at.items()}
    pem = mean[name]
    ours = f"URL (surrogate), ε = 4, {sec6.runs_note(table)}: {name} F1 {sec6.fmt(at[name])}; "
    ours += "; ".join(
        f"{p} {sec6.fmt(at[p])}"
        + (f" (≈ {16 * mean[p]:.1f} of 16 found)" if mean[p] == mean[p] else "")
        for p in baselines
    )
    known = [mean[p] for p in baselines if mean[p] == mean[p]]
    baseline = max(known) if known else float("nan")
    if pem >= 0.8 and baseline <= 0.25:
        verdict, reason = "reproduced", ""
    elif pem >= 0.8 and pem > baseline:
        verdict = "partly"
        reason = (
            "PEM's F1 matches and PEM is far ahead; each baseline finds the sites above its "
            "detection level, and how many there are depends on the URL data's head, which "
            "is an assumption (docs/notes/fig5a-cause.md). MCM finds the sites above ≈ 4% "
            "of visits (all 160 channel votes right at ε/2; the per-rank rates agree) and "
            "the surrogate's head (rank^-1.338: 28.6, 11.3, 6.5, 4.5%) has four; no MCM knob "
            "changes that (3.4-3.9 of 16 with k^1.5 or √n channels, top-k or threshold, "
            "split or partitioned), a flatter head with the same 27,000 distinct sites "
            "gives 2.4-2.6 (top site 6-7.5%). SPM with the top-k stages of Sec. VI-A finds "
            "5.4; with Fanti et al.'s threshold stages it finds exactly the two top sites "
            "in 10 of 10 runs (a site needs all 45 segment pairs above the significance "
            "bar, ≈ 7.7% of visits). Two dominant sites then a flat head, with threshold "
            "SPM, give PEM 14, MCM 2, SPM 2 of 16; the real visitor counts are not "
            "published, so the paper's head cannot be checked."
        )
    else:
        verdict = "differs"
        reason = (
            "URL is a calibrated surrogate (no visitor counts: a fitted rank^-1.338 law with "
            "the top site at ≈ 29%), and the baselines are the harness's improved versions."
        )
    if np.isnan(pem):
        return []
    out = [
        ClaimCheck(
            source="PEM Sec. VI-B1 (Fig. 5a)",
            paper=(
                "ε = 4 on URL: PEM achieves F1 = 0.9 (more than ten URLs); MCM and SPM "
                "identify only two (F1 ≈ 0.125)"
            ),
            ours=ours,
            measured=pem,
            se=float(at[name]["se"].iloc[0]) if len(at[name]) else float("nan"),
            tolerance=(
                "from the paper's digits and its reading: PEM's 'F1 = 0.9 (more than ten "
                "URLs)' as a mean F1 of at least 0.8; 'only two' (F1 ≈ 0.125) as the better "
                "baseline's mean F1 at most 0.25 (four of 16)"
            ),
            verdict=verdict,
            reason=reason,
        )
    ]
    wide = f1.pivot_table(index=["dataset.name", "epsilon"], columns="protocol.name", values="mean")
    if name in wide:
        others = wide.drop(columns=name).max(axis=1)
        # "more so as ε grows": PEM's lead over the best baseline at each data set's largest
        # ε at least its lead at the smallest
        grows = sec6.end_to_end((wide[name] - others).dropna())
        out.append(
            sec6.ahead_claim(
                wide,
                others,
                "ε",
                grows,
                min(grows.values()) > 0 if grows else None,
                source="PEM Sec. VI-B1 (Fig. 5)",
                paper="PEM performs best among the three protocols, more so as ε grows",
                trend_text=f"{name}'s lead at the largest minus at the smallest ε",
                tolerance=(
                    "two parts: 'best' read as PEM's mean F1 within 0.02 of the best "
                    "baseline's or above it at every point (ties where F1 saturates count); "
                    "'more so as ε grows' as PEM's lead over the best baseline larger at each "
                    "data set's largest ε than at its smallest"
                ),
                reasons=(
                    "PEM's lead shrinks as ε grows: at small ε the baselines find few "
                    "values while PEM already finds most, and at large ε they catch up",
                    "a baseline matches PEM where F1 saturates or the data's head is steep",
                ),
            )
        )
    return out


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
        "only (one run takes ~6.5 s there)."
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
