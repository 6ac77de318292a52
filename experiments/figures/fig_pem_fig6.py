"""[PEM] Fig. 6 a–f (Sec. VI-B2): F1 and NCR against k at ε = 2 on URL, AOL and synthetic.

The protocols of Fig. 5, 10 runs, sampled engine.  ``pem_fig6`` runs PEM and MCM at
k = 2 ... 64, ``pem_fig6_spm`` SPM on AOL and synthetic at k <= 24 (from 32 on, one run takes
2-20 s), ``pem_fig6_spm_url`` SPM on URL at k <= 16; the sensitivity lines of Fig. 5:
``pem_fig6_sens`` (PEM's paper group rule, MCM with √n channels) and ``pem_fig6_block`` (MCM
with 8-bit OLH blocks, k <= 32: at 64 its queries exceed 2^20).
"""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.figures import pem_section6 as sec6
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.results import summary

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


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B2: near full utility up to k = 30 on synthetic; PEM ahead of MCM and SPM (the
    paper's versions; the sensitivity lines are drawn, not judged)."""
    table = sec6.main_rows(table[np.isclose(table["epsilon"], EPSILON)])
    f1 = summary(table, "f1", ["dataset.name", "protocol.name", "k"])
    name = sec6.proposed()
    pem = f1[(f1["dataset.name"] == "exponential") & (f1["protocol.name"] == name)]
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
        ClaimCheck(
            source="PEM Sec. VI-B2 (Fig. 6c)",
            paper="synthetic data, ε = 2: PEM achieves almost full utility for up to k = 30",
            ours=f"{name} F1 ({sec6.runs_note(table)}): {listed}",
            tolerance=(
                "a stated reading of 'almost full utility': PEM's mean F1 at least 0.85 at "
                "every k ≤ 32 (the grid's points around 30); 0.7 is 'partly'"
            ),
            verdict=verdict,
            reason=reason,
        )
    ]
    wide = f1.pivot_table(index=["dataset.name", "k"], columns="protocol.name", values="mean")
    if name in wide and wide.shape[1] > 1:
        others = wide.drop(columns=name).max(axis=1)
        # "utility decreases with k": PEM's F1 at each data set's largest k below its
        # F1 at the smallest k
        drop = sec6.end_to_end(wide[name])
        out.append(
            sec6.ahead_claim(
                wide,
                others,
                "k",
                drop,
                max(drop.values()) < 0 if drop else None,
                source="PEM Sec. VI-B2 (Fig. 6)",
                paper="PEM outperforms MCM and SPM at every k; utility decreases with k",
                trend_text=f"{name}'s F1 at the largest minus the smallest k",
                tolerance=(
                    "two parts: 'outperforms' read as PEM's mean F1 within 0.02 of the best "
                    "baseline's or above it at every point; 'decreases with k' as PEM's F1 "
                    "lower at each data set's largest k than at its smallest"
                ),
                reasons=(
                    "PEM's F1 does not fall from the smallest to the largest k on every data set",
                    "a baseline matches PEM at small k, where few candidates compete",
                ),
            )
        )
    return [*out, *f1_ncr_claims(table)]


#: Two means closer than this are a tie for :func:`f1_ncr_claims` (about a standard error
#: of a 10-run mean at the larger spreads of Figs. 5-6).
TIE = 0.02


def f1_ncr_claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """VI-B2: "a protocol with better F1 score will also have a better NCR score": every
    pair of protocols at every (data set, k) ordered alike by both metrics."""
    by = ["dataset.name", "k", "protocol.name"]
    f1, ncr = (summary(table, metric, by).set_index(by)["mean"] for metric in ("f1", "ncr"))
    both_metrics = pd.concat({"f1": f1, "ncr": ncr}, axis=1).dropna()
    pairs = agree = 0
    disagree = []
    for (dataset, k), group in both_metrics.groupby(level=[0, 1]):
        group = group.droplevel([0, 1])  # one row per protocol
        for a, b in itertools.combinations(group.index, 2):
            d_f1, d_ncr = group.loc[a] - group.loc[b]
            if abs(d_f1) < TIE:  # F1 does not order the pair: nothing to agree with
                continue
            pairs += 1
            if d_f1 * d_ncr > 0 or abs(d_ncr) < TIE:
                agree += 1
            else:
                disagree.append(f"{dataset} k = {int(k)} {a} vs {b}")
    if pairs == 0:
        verdict, ours = "not measurable", "no pair of protocols with F1 apart by 0.02 or more"
    else:
        verdict = "reproduced" if agree == pairs else "partly" if agree > pairs / 2 else "differs"
        ours = (
            f"of {pairs} (data set, k, pair of protocols) whose mean F1 differ by ≥ {TIE}, "
            f"{agree} have NCR in the same order (or tied)"
            + (f"; reversed at {', '.join(disagree)}" if disagree else "")
            + f" ({sec6.runs_note(table)})"
        )
    return [
        ClaimCheck(
            source="PEM Sec. VI-B2 (Figs. 5, 6: F1 against NCR)",
            paper="a protocol with better F1 score will also have a better NCR score",
            ours=ours,
            tolerance=(
                f"every pair that F1 orders (mean F1 apart by ≥ {TIE}, about one standard "
                f"error of a 10-run mean) ordered the same way by NCR, or tied within {TIE}"
            ),
            verdict=verdict,
            reason=(
                ""
                if verdict == "reproduced"
                else "NCR weights the top ranks, F1 does not: a protocol that finds many "
                "lower values but misses the top one can lead on F1 and trail on NCR"
                if verdict != "not measurable"
                else "no F1 gap to compare"
            ),
        )
    ]


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
