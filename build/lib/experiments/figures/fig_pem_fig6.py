"""[PEM] Fig. 6 a–f (Sec. VI-B2): F1 and NCR against k at ε = 2 on URL, AOL and synthetic.

The protocols of Fig. 5, 10 runs, sampled engine.  ``pem_fig6`` runs PEM and MCM at
k = 2 ... 64, ``pem_fig6_spm`` SPM on AOL and synthetic at k <= 24 (from 32 on, one run takes
2-20 s), ``pem_fig6_spm_url`` SPM on URL at k <= 16; the sensitivity lines of Fig. 5:
``pem_fig6_sens`` (PEM's paper group rule, MCM with √n channels) and ``pem_fig6_block`` (MCM
with 8-bit OLH blocks, k <= 32: at 64 its queries exceed 2^20).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.figures import pem_section6 as sec6
from experiments.figures.spec import Claim, FigureSpec

EXPERIMENTS = (
    "pem_fig6",
    "pem_fig6_spm",
    "pem_fig6_spm_url",
    "pem_fig6_sens",
    "pem_fig6_block",
)
EPSILON = 2.0


def draw(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 (top) and NCR (bottom) against k (log scale); URL, AOL, synthetic."""
    table = table[np.isclose(table["epsilon"], EPSILON)]
    ks = sorted(int(k) for k in table["k"].unique())
    return sec6.utility_grid(table, "k", "heavy hitters wanted k", model_x=ks, log2_x=True)


def claims(table: pd.DataFrame) -> list[Claim]:
    """VI-B2: near full utility up to k = 30 on synthetic; PEM ahead of MCM and SPM (the
    paper's versions; the sensitivity lines are drawn, not judged)."""
    table = sec6.main_rows(table[np.isclose(table["epsilon"], EPSILON)])
    f1 = sec6.summary(table, "f1", ["dataset.name", "protocol.name", "k"])
    pem = f1[(f1["dataset.name"] == "exponential") & (f1["protocol.name"] == "PEM")]
    pem = pem.sort_values("k")
    upto = pem[pem["k"] <= 32]
    listed = ", ".join(f"k = {int(r.k)}: {r.mean:.2f} ± {r.std:.2f}" for r in pem.itertuples())
    worst = float(upto["mean"].min()) if len(upto) else float("nan")
    if worst >= 0.85:
        verdict, reason = "reproduced", ""
    elif worst >= 0.7:
        verdict = "partly"
        reason = (
            "PEM stays high but not at full utility up to k = 30: the exponential data's "
            "k-th frequency 0.05·0.95^(k-1) is only 1.1% at k = 30, and our optimiser "
            "keeps the zipf assumption (Sec. VI-A)."
        )
    else:
        verdict = "differs"
        reason = "the optimiser's zipf assumption and the synthetic data's thin tail at k = 30"
    out = [
        Claim(
            source="PEM Sec. VI-B2 (Fig. 6c)",
            paper="synthetic data, ε = 2: PEM achieves almost full utility for up to k = 30",
            ours=f"PEM F1 ({sec6.runs_note(table)}): {listed}",
            verdict=verdict,
            reason=reason,
        )
    ]
    wide = f1.pivot_table(index=["dataset.name", "k"], columns="protocol.name", values="mean")
    if "PEM" in wide and wide.shape[1] > 1:
        others = wide.drop(columns="PEM").max(axis=1)
        best = wide["PEM"] >= others - 0.02
        losses = [
            f"{d} k = {int(k)} (PEM {wide.loc[(d, k), 'PEM']:.2f} vs {others[(d, k)]:.2f})"
            for d, k in wide.index[~best.to_numpy()]
        ]
        out.append(
            Claim(
                source="PEM Sec. VI-B2 (Fig. 6)",
                paper="PEM outperforms MCM and SPM at every k; utility decreases with k",
                ours=(
                    f"PEM's mean F1 is the highest (within 0.02) at {int(best.sum())} of "
                    f"{len(best)} (data set, k) points"
                    + (f"; not at {', '.join(losses)}" if losses else "")
                ),
                verdict="reproduced" if not losses else "partly",
                reason=(
                    ""
                    if not losses
                    else "a baseline matches PEM at small k, where few candidates compete; "
                    "not investigated further"
                ),
            )
        )
    return out


FIGURE = FigureSpec(
    name="pem_fig6",
    experiment=EXPERIMENTS,
    draw=draw,
    title="PEM Fig. 6: F1 and NCR against k (ε = 2), URL, AOL, synthetic",
    caption=(
        "F1 (top) and NCR (bottom) against k (log scale) at ε = 2 on the data of Fig. 5 "
        "(URL and AOL are calibrated surrogates). Filled, solid: PEM optimised as in Sec. "
        "VI-A and the improved MCM and SPM (ε split, as the paper ran them). Open markers, "
        "dashed: the sensitivity lines of Fig. 5, PEM with the authors' group rule, MCM with "
        "~√n channels, and MCM with 8-bit OLH blocks up to k = 32 (at k = 64 its 512 "
        "channels x 2^8 block values exceed the 2^20 queries). Points: mean of 10 runs, "
        "error bars ± 1 standard deviation, sampled engine. Dotted: PEM's model, Eq. (4), for "
        "the configuration the optimiser chose at each k, the exponential law as the "
        "truth (optimistic: it takes the values below the top k as absent, and the "
        "exponential law's neighbours differ by only 5%). SPM is run at k <= 24 (URL: "
        "k <= 16): its candidate rebuilding from segment pairs takes 2-20 s a run beyond "
        "that, which would not fit a short `make figures`."
    ),
    claim=(
        "PEM Sec. VI-B2: PEM outperforms MCM and SPM at every k; on the synthetic data it "
        "achieves almost full utility for up to k = 30."
    ),
    quick=sec6.QUICK_FIG6,
    quick_for=sec6.QUICK_FOR_FIG6,
    order=20.6,
    claims=claims,
)
