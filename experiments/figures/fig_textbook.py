"""The teaching texts' numbers: error rates against n and D, the GRR table, the examples.

Three texts state numbers the library's protocols can check:

* [Tutorial] *Mobile Data Collection and Analysis with Local Differential Privacy*,
  tutorial slides (2019): slide 4 (the AOL release), slides 12-13 (Warner's
  randomized response and its 80/20 example), slide 15 (GRR's p for d = 2, 8, 128, 1024).
* [Notes] *Section 10: Distributed Models of Differential Privacy*, CS 208 lecture notes
  (2022): Sec. 2 (local against central error), Sec. 3 (the shuffled binary sum), Sec. 4
  (the one-hot histogram's per-bin and largest error), Sec. 5.1-5.2 (hashing).
* [Book] the chapter *Local Differential Privacy* of a textbook on programming DP:
  Dwork and Roth's two-coin randomized response is ε = log(3)-DP.

The rates are read on cheap runs of the library's own protocols (sampled engine; four
configs, ``conf/experiment/textbook*.yaml``): GRR over d = 2 (randomized response on a bit)
and SUE (the notes' one-hot vector with ε/2 per coordinate) against n; SUE's largest error
over D bins; GRR at the ε0 that [BBGN19] Theorem 3.1 allows at central (1, 10^-6) against
n ([BBGN19]: Balle, Bell, Gascón, Nissim, CRYPTO 2019); Apple's CMS with one row (the
notes' hashing estimator).  An "O(n^a)" is read as the exponent a fitted by weighted least
squares to the log of the measured error against log n, with its standard error from the
trials.  Closed forms: :mod:`ldp.theory.textbook`.
"""

from __future__ import annotations

import functools
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.build import build_protocol, protocol_from_row
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Band, Calibrated, Identity, Part, Truncated, WithinSE
from experiments.results import figure_config, summary
from ldp import hashing
from ldp.datasets import surrogates
from ldp.theory import textbook as theory

#: [Notes] Sec. 3's central (ε, δ) the shuffled binary sum is calibrated to.
CENTRAL, DELTA = 1.0, 1e-6
#: [Tutorial] slide 15: GRR's p, printed per ε (rows) and d (columns), and the decimals
#: printed.  The slide's text sets the d labels in a math font whose digits read one up
#: (𝟑, 𝟗, 𝟐𝟑𝟗, 𝟐𝟏𝟑𝟓 are 2, 8, 128, 1024: the glyph for 1 is 𝟐, for 0 is 𝟏).
SLIDE_EPSILONS = (0.1, 1.0, 2.0, 4.0)
SLIDE_TABLE = {
    2: ((0.52, 0.73, 0.88, 0.98), 2),
    8: ((0.13, 0.27, 0.51, 0.88), 2),
    128: ((0.016, 0.027, 0.057, 0.307), 3),
    1024: ((0.001, 0.002, 0.007, 0.050), 3),
}
#: [Tutorial] slide 4: users of the AOL release.
AOL_USERS = 650_000
#: [Tutorial] slide 13: true yes/no counts, the observed ones, the estimates.
EXAMPLE_TRUTH, EXAMPLE_OBSERVED = (80, 20), (65, 35)
#: The oracles of the rate rows (``textbook``'s ``figure:`` block): randomized response on
#: one bit (the local mean) and the one-hot histogram (the per-bin count).
LOCAL, HISTOGRAM = figure_config("textbook").subjects
#: The shuffled binary sum is no registered protocol: a neutral grey of its own.
SHUFFLED = "0.55"
#: [Notes] Sec. 5.2: cells and rows of the hash-collision check, and the pairs it hashes.
COLLISION_CELLS, COLLISION_ROWS, COLLISION_PAIRS = 16, (1, 2, 3), 1 << 20


# ------------------------------------------------------------------------------ the data
def _of(table: pd.DataFrame, experiment: str) -> pd.DataFrame:
    return table[table[col.EXPERIMENT] == experiment]


def exponent(x: np.ndarray, mean: np.ndarray, se: np.ndarray) -> tuple[float, float]:
    """The slope of log(mean) against log(x) by weighted least squares (weights from the
    relative SEs) and its standard error."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(mean, dtype=float))
    weight = (np.asarray(mean, dtype=float) / np.asarray(se, dtype=float)) ** 2
    centre = np.sum(weight * lx) / np.sum(weight)
    spread = np.sum(weight * (lx - centre) ** 2)
    slope = np.sum(weight * (lx - centre) * ly) / spread
    return float(slope), float(1 / math.sqrt(spread))


def rates(table: pd.DataFrame) -> pd.DataFrame:
    """Per (protocol, n) of the ``textbook`` runs: the mean squared error of the frequency
    of the value nobody holds (Var[f̂]: sq_error_n / n) and of its count (sq_error_n · n),
    with SEs and the exact expectations."""
    rows = _of(table, "textbook")
    stats = summary(rows, "sq_error_n", [col.PROTOCOL, col.N], first={"eps": col.EPSILON})
    stats["frequency"], stats["frequency_se"] = (
        stats[col.MEAN] / stats[col.N],
        stats[col.SE] / stats[col.N],
    )
    stats["exact"] = stats[col.ANALYTIC] / stats[col.N]
    stats["count"], stats["count_se"] = stats[col.MEAN] * stats[col.N], stats[col.SE] * stats[col.N]
    return stats.sort_values([col.PROTOCOL, col.N])


def shuffled(table: pd.DataFrame) -> pd.DataFrame:
    """The ``textbook_shuffle`` settings whose ε0 is [BBGN19]'s for their n at central
    (ε, δ) = (1, 10^-6): the MSE of the frequency of the absent value and its exact value."""
    rows = _of(table, "textbook_shuffle")
    stats = summary(rows, "sq_error_n", [col.N, col.EPSILON])
    if stats.empty:
        return stats
    wanted = [theory.binary_sum_epsilon0(CENTRAL, int(n), DELTA) for n in stats[col.N]]
    stats = stats[np.isclose(stats[col.EPSILON], wanted, rtol=1e-10, atol=0)].sort_values(col.N)
    stats["frequency"], stats["frequency_se"] = (
        stats[col.MEAN] / stats[col.N],
        stats[col.SE] / stats[col.N],
    )
    stats["exact"] = stats[col.ANALYTIC] / stats[col.N]
    return stats


def largest_errors(table: pd.DataFrame) -> pd.DataFrame:
    """Per D of the ``textbook_max`` runs: the mean over trials of the largest |ĉ(v) - c(v)|
    over the D - 1 values nobody holds, its SE, σ of one bin and the number of bins."""
    rows = _of(table, "textbook_max")
    rows = rows[(rows[col.METRIC] == "sq_error_n") & rows[col.ITEM].notna()]
    if rows.empty:
        return pd.DataFrame()
    largest = rows.groupby([col.DOMAIN_SIZE, col.TRIAL]).agg(
        **{
            "top": (col.VALUE, "max"),
            col.N: (col.N, "first"),
            "exact": (col.ANALYTIC, "first"),
            "bins": (col.ITEM, "size"),
        }
    )
    largest["error"] = np.sqrt(largest["top"] * largest[col.N])
    groups = largest.groupby(level=0)
    out = pd.DataFrame(
        {
            col.MEAN: groups["error"].mean(),
            col.STD: groups["error"].std(),
            col.TRIALS: groups["error"].size(),
            col.N: groups[col.N].first(),
            "variance": groups["exact"].first(),
            "bins": groups["bins"].first(),
        }
    )
    out[col.SE] = out[col.STD] / np.sqrt(out[col.TRIALS])
    out["sigma"] = np.sqrt(out["variance"] * out[col.N])  # analytic is Var[ĉ]/n
    out["expected"] = [
        theory.expected_max_abs_normal(s, int(b))
        for s, b in zip(out["sigma"], out["bins"], strict=True)
    ]
    out["bound"] = [
        theory.max_abs_normal_bound(s, int(b))
        for s, b in zip(out["sigma"], out["bins"], strict=True)
    ]
    return out


# ------------------------------------------------------------------------------ drawing
def draw(table: pd.DataFrame) -> plt.Figure:
    style.apply_theme()
    figure, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.4))
    stats, binary = rates(table), shuffled(table)
    grr = stats[stats[col.PROTOCOL] == LOCAL]
    if not grr.empty:
        colour, epsilon = style.color(LOCAL), float(grr["eps"].iloc[0])
        scale = 2.0  # the mean of ±1 values is 2 f - 1: its error is twice the frequency's
        left.errorbar(
            grr[col.N],
            scale * np.sqrt(grr["frequency"]),
            yerr=scale * grr["frequency_se"] / np.sqrt(grr["frequency"]),
            fmt="o",
            color=colour,
            ms=5,
            capsize=2,
            label=f"local: randomized response, ε = {epsilon:g}",
        )
        left.plot(grr[col.N], scale * np.sqrt(grr["exact"]), color=colour, lw=1.0)
        central = [theory.central_laplace_mean_sd(epsilon, int(n)) for n in grr[col.N]]
        left.plot(
            grr[col.N], central, color="0.3", ls=":", label=f"central Laplace, ε = {epsilon:g}"
        )
    if not binary.empty:
        left.errorbar(
            binary[col.N],
            scale * np.sqrt(binary["frequency"]),
            yerr=scale * binary["frequency_se"] / np.sqrt(binary["frequency"]),
            fmt="s",
            color=SHUFFLED,
            ms=5,
            capsize=2,
            label=f"shuffled binary sum, central ({CENTRAL:g}, {DELTA:g})",
        )
        left.plot(binary[col.N], scale * np.sqrt(binary["exact"]), color=SHUFFLED, lw=1)
    left.set(xscale="log", yscale="log", xlabel="users n", ylabel="RMSE of the mean of ±1 values")
    left.set_title("(a) local, central and shuffled error against n")
    sue = stats[stats[col.PROTOCOL] == HISTOGRAM]
    if not sue.empty:
        colour = style.color(HISTOGRAM)
        middle.errorbar(
            sue[col.N],
            np.sqrt(sue["count"]),
            yerr=sue["count_se"] / np.sqrt(sue["count"]),
            fmt="o",
            color=colour,
            ms=5,
            capsize=2,
            label="measured",
        )
        middle.plot(
            sue[col.N], np.sqrt(sue[col.ANALYTIC] * sue[col.N]), color=colour, label="exact"
        )
    middle.set(xscale="log", yscale="log", xlabel="users n", ylabel="RMSE of one bin's count")
    middle.set_title("(b) one-hot histogram (SUE): per-bin error")
    top = largest_errors(table)
    if not top.empty:
        colour = style.color(HISTOGRAM)
        right.errorbar(
            top.index,
            top[col.MEAN],
            yerr=2 * top[col.SE],
            fmt="o",
            color=colour,
            ms=5,
            capsize=2,
            label="measured (± 2 se)",
        )
        right.plot(top.index, top["expected"], color=colour, label="E[max] of normal bins")
        right.plot(top.index, top["bound"], color="0.4", ls="--", label="σ √(2 ln 2(D - 1))")
    right.set(xscale="log", xlabel="bins D", ylabel="largest |ĉ(v) - c(v)| over the bins")
    right.set_title("(c) one-hot histogram: largest error over D bins")
    for axis in (left, middle, right):
        style.legend_if_any(axis, fontsize=7.5)
    figure.tight_layout()
    return figure


# ------------------------------------------------------------------------------ claims
def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    found = [*_slide_table_claims(), _aol_claim(), _example_claim(), _book_claim()]
    stats = rates(table)
    found += _local_central_claim(stats)
    found += _shuffle_claim(stats, shuffled(table))
    found += _per_bin_claim(stats)
    found += _largest_claim(largest_errors(table))
    found += _hashing_claim(table)
    found.append(_collision_claim())
    return found


def _grr_p(epsilon: float, d: int) -> float:
    """p of the GRR object the harness runs (its p*)."""
    return float(build_protocol({"name": LOCAL}, epsilon, domain_size=d).p_star)


def _slide_table_claims() -> list[ClaimCheck]:
    """[Tutorial] slide 15: GRR's p against the printed table, column by column."""
    good = [d for d in SLIDE_TABLE if d != 128]
    values = [_grr_p(e, d) for d in good for e in SLIDE_EPSILONS]
    printed = tuple(p for d in good for p in SLIDE_TABLE[d][0])
    places = tuple(SLIDE_TABLE[d][1] for d in good for _ in SLIDE_EPSILONS)
    rounded = sum(round(v, k) != p for v, p, k in zip(values, printed, places, strict=True))
    column, places128 = SLIDE_TABLE[128]
    ours128 = [_grr_p(e, 128) for e in SLIDE_EPSILONS]
    implied = [
        math.exp(e) / p - math.exp(e) + 1 for e, p in zip(SLIDE_EPSILONS, column, strict=True)
    ]
    grid = ", ".join(f"{e:g}" for e in SLIDE_EPSILONS)
    return [
        ClaimCheck(
            source="[Tutorial] slide 15 (GRR), columns d = 2, 8, 1024",
            paper=(
                "p = e^ε/(e^ε + d - 1); ε = 0.1, 1, 2, 4: d = 2: 0.52, 0.73, 0.88, 0.98; d = 8: "
                "0.13, 0.27, 0.51, 0.88; d = 1024: 0.001, 0.002, 0.007, 0.05"
            ),
            ours=(
                f"p* of the GRR objects at ε = {grid}: "
                + "; ".join(
                    f"d = {d}: " + ", ".join(f"{_grr_p(e, d):.4f}" for e in SLIDE_EPSILONS)
                    for d in good
                )
                + f" ({rounded} of the {len(values)} printed values would differ if rounded)"
            ),
            parts=Part("GRR's p* per (d, ε)", values, Truncated(printed, places)),
        ),
        ClaimCheck(
            source="[Tutorial] slide 15 (GRR), column d = 128",
            paper="p = e^ε/(e^ε + d - 1); d = 128, ε = 0.1, 1, 2, 4: 0.016, 0.027, 0.057, 0.307",
            ours=(
                f"p* of the GRR objects (d = 128) at ε = {grid}: "
                + ", ".join(f"{p:.4f}" for p in ours128)
            ),
            parts=Part("GRR's p* at d = 128 per ε", ours128, Truncated(column, places128)),
            reason=(
                "the printed column does not follow the slide's own formula, which the GRR "
                "object computes: e^ε/(e^ε + 127) = "
                + ", ".join(f"{p:.4f}" for p in ours128)
                + "; the d that would give each printed value is "
                + ", ".join(f"{d:.1f}" for d in implied)
                + " (no single domain size), so the column, not the formula, is off"
            ),
        ),
    ]


def _aol_claim() -> ClaimCheck:
    """[Tutorial] slide 4: the AOL release's users, as the AOL surrogate draws them."""
    users = surrogates.AOL_FIGURES["users"]
    return ClaimCheck(
        source="[Tutorial] slide 4 (AOL data release, 2006)",
        paper="AOL released search keywords of 650,000 users over a 3-month period",
        ours=(
            f"the AOL data set's users as the harness loads it: {users:,} (the count measured "
            "on the released log, which the AOL surrogate reproduces)"
        ),
        parts=Part("users of the AOL data set", users, Calibrated(AOL_USERS, rtol=0.02)),
        note="'650,000' read as the round figure of the release's count (within 2%).",
    )


def _example_claim() -> ClaimCheck:
    """[Tutorial] slides 12-13: Warner's randomized response (yes w.p. 75%) on 80/20."""
    oracle = build_protocol(
        {"name": LOCAL}, math.log(3), domain_size=2
    )  # truth kept w.p. 3/4: e^ε = 3
    yes, no = EXAMPLE_TRUTH
    n = yes + no
    expected = [yes * oracle.p_star + no * oracle.q_star, yes * oracle.q_star + no * oracle.p_star]
    reports = np.repeat([0, 1], EXAMPLE_OBSERVED)
    estimate = oracle.estimate(reports)
    return ClaimCheck(
        source="[Tutorial] slides 12-13 (randomized response, concrete example)",
        paper=(
            "answer 'yes' w.p. 75% for a yes, 25% for a no: 80 yes / 20 no give 65/35 "
            "expected answers, and (I - 0.25 n)/(0.75 - 0.25) estimates 80/20 back"
        ),
        ours=(
            f"GRR over d = 2 at ε = ln 3 (p* = {oracle.p_star:g}): expected answers "
            f"{expected[0]:g}/{expected[1]:g} of {n}; its estimate from 65 yes and 35 no "
            f"reports {estimate[0]:g}/{estimate[1]:g}"
        ),
        parts=(
            Part("expected yes/no answers", expected, Identity(EXAMPLE_OBSERVED)),
            Part("estimate from the observed answers", estimate, Identity(EXAMPLE_TRUTH)),
        ),
    )


def _book_claim() -> ClaimCheck:
    """[Book]: the two-coin randomized response is log(3)-DP."""
    oracle = build_protocol({"name": LOCAL}, math.log(3), domain_size=2)
    loss = math.log(oracle.p_star / oracle.q_star)
    return ClaimCheck(
        source="[Book] LDP chapter, 'Randomized Response'",
        paper=(
            "truth on heads, else a second coin's answer: this randomized response satisfies "
            "ε-differential privacy for ε = log(3) = 1.09"
        ),
        ours=(
            f"the two coins answer 'yes' w.p. 1/2 + 1/4 for a yes and 1/4 for a no: GRR over "
            f"d = 2 at ε = ln 3 (its answer probabilities are checked by the 80/20 example); "
            f"its loss ln(p*/q*) = {loss:.4f}"
        ),
        parts=Part("ln(p*/q*) of GRR at ε = ln 3", loss, Truncated(1.09, 2)),
        note="log(3) = 1.0986 rounds to 1.10; the chapter's 1.09 cuts the digits.",
    )


def _local_central_claim(stats: pd.DataFrame) -> list[ClaimCheck]:
    """[Notes] Sec. 2: local error O(1/(ε√n)) against central O(1/(εn))."""
    grr = stats[stats[col.PROTOCOL] == LOCAL]
    if len(grr) < 2:
        return []
    slope, se = exponent(grr[col.N], grr["frequency"], grr["frequency_se"])
    epsilon = float(grr["eps"].iloc[0])
    central = [theory.central_laplace_mean_sd(epsilon, int(n)) ** 2 for n in grr[col.N]]
    central_slope, _ = exponent(grr[col.N], np.array(central), np.array(central))
    return [
        ClaimCheck(
            source="[Notes] Sec. 2 (local against central DP)",
            paper=(
                "local: randomized response, standard deviation O(1/(ε√n)) (central: "
                "O(1/(εn)), the next row)"
            ),
            ours=(
                f"randomized response (GRR, d = 2, ε = {epsilon:g}) at n = "
                f"{', '.join(f'{n:.0e}' for n in grr[col.N])} ({int(grr[col.TRIALS].min())} "
                f"trials each): RMSE ∝ n^{slope / 2:.3f} ± {se / 2:.3f}"
            ),
            parts=Part(
                "exponent of n in the local RMSE",
                slope / 2,
                WithinSE(-0.5, se / 2, alpha=0.01, what="-1/2, the rate O(1/√n)"),
            ),
        ),
        ClaimCheck(
            source="[Notes] Sec. 2 (central DP)",
            paper="the mean plus Lap(2/(εn)): standard deviation O(1/(εn))",
            ours=(
                f"ldp.theory.textbook.central_laplace_mean_sd, 2√2/(εn), at ε = {epsilon:g} on "
                f"the same n: ∝ n^{central_slope / 2:g}"
            ),
            parts=Part(
                "exponent of n in the central standard deviation",
                central_slope / 2,
                Identity(-1.0),
            ),
        ),
    ]


def _shuffle_claim(stats: pd.DataFrame, binary: pd.DataFrame) -> list[ClaimCheck]:
    """[Notes] Sec. 3: the shuffled binary sum's error O(√log(1/δ)/(εn))."""
    grr = stats[stats[col.PROTOCOL] == LOCAL]
    if len(binary) < 2 or len(grr) < 2:
        return []
    slope, se = exponent(binary[col.N], binary["frequency"], binary["frequency_se"])
    exact, _ = exponent(binary[col.N], binary["exact"], binary["frequency_se"])
    local, local_se = exponent(grr[col.N], grr["frequency"], grr["frequency_se"])
    gammas = [theory.binary_sum_noise_probability(CENTRAL, int(n), DELTA) for n in binary[col.N]]
    return [
        ClaimCheck(
            source="[Notes] Sec. 3 (binary sums in the shuffle model); [BBGN19] Theorem 3.1",
            paper=(
                "x_i w.p. 1 - p, Bern(1/2) w.p. p, shuffled: error O(√log(1/δ)/(εn)) instead "
                "of O(√log(1/δ)/(ε√n))"
            ),
            ours=(
                f"GRR over d = 2 at the ε0 that keeps central (ε, δ) = ({CENTRAL:g}, {DELTA:g}) "
                f"at n = {', '.join(f'{n:.0e}' for n in binary[col.N])} (p = γ = "
                f"{', '.join(f'{g:.2g}' for g in gammas)}; ε0 = "
                f"{', '.join(f'{e:.2f}' for e in binary[col.EPSILON])}): RMSE ∝ n^"
                f"{slope / 2:.3f} ± {se / 2:.3f} (its exact variance: n^{exact / 2:.3f}); "
                f"local at ε = {float(grr['eps'].iloc[0]):g}: n^{local / 2:.3f} ± "
                f"{local_se / 2:.3f}"
            ),
            parts=(
                Part(
                    "exponent of n in the shuffled sum's RMSE",
                    slope / 2,
                    WithinSE(
                        exact / 2,
                        se / 2,
                        alpha=0.01,
                        what="its exact variance's exponent, the rate O(1/(εn)) up to the "
                        "(1 - γ)² of the debiasing",
                    ),
                ),
                Part(
                    "exponent of n in the local RMSE",
                    local / 2,
                    WithinSE(-0.5, local_se / 2, alpha=0.01, what="-1/2, the rate O(1/(ε√n))"),
                ),
            ),
            note=(
                "The trials run GRR at each n's ε0 from [BBGN19] Theorem 3.1 (k = 2): "
                "shuffling changes the privacy, not the estimate."
            ),
        )
    ]


def _per_bin_claim(stats: pd.DataFrame) -> list[ClaimCheck]:
    """[Notes] Sec. 4: the one-hot histogram's per-bin error O(√n/ε)."""
    sue = stats[stats[col.PROTOCOL] == HISTOGRAM]
    if len(sue) < 2:
        return []
    slope, se = exponent(sue[col.N], sue["count"], sue["count_se"])
    return [
        ClaimCheck(
            source="[Notes] Sec. 4 (histograms: error per bin)",
            paper=(
                "one-hot vector, ε/2-randomized response per coordinate: expected error per "
                "bin ± O(√n/ε)"
            ),
            ours=(
                f"SUE (ε/2 per coordinate, ε = {float(sue['eps'].iloc[0]):g}) at n = "
                f"{', '.join(f'{n:.0e}' for n in sue[col.N])}: RMSE of a bin's count ∝ "
                f"n^{slope / 2:.3f} ± {se / 2:.3f}"
            ),
            parts=Part(
                "exponent of n in a bin's count RMSE",
                slope / 2,
                WithinSE(0.5, se / 2, alpha=0.01, what="1/2, the rate O(√n)"),
            ),
        )
    ]


def _largest_claim(top: pd.DataFrame) -> list[ClaimCheck]:
    """[Notes] Sec. 4: the largest error over D bins O(√(n log D)/ε)."""
    if len(top) < 2:
        return []
    ratio = top[col.MEAN] / top["bound"]
    lines = [
        f"D = {d}: {row[col.MEAN]:.1f} ± {row[col.SE]:.1f} (normal bins: {row['expected']:.1f}; "
        f"σ√(2 ln 2(D-1)) = {row['bound']:.1f})"
        for d, row in top.iterrows()
    ]
    return [
        ClaimCheck(
            source="[Notes] Sec. 4 (histograms: largest error)",
            paper="the expected max error over all D bins is ± O(√(n log D)/ε)",
            ours=(
                f"SUE, n = {int(top[col.N].iloc[0]):,}, {int(top[col.TRIALS].min())} trials: mean "
                f"largest |ĉ - c| over the D - 1 empty bins: {'; '.join(lines)}"
            ),
            parts=(
                Part(
                    "mean largest error over the bins, per D",
                    top[col.MEAN],
                    WithinSE(
                        top["expected"],
                        top[col.SE],
                        alpha=0.01,
                        what="E[max] of D - 1 independent normal bins",
                    ),
                ),
                Part(
                    "mean largest error / σ√(2 ln 2(D-1)), per D",
                    ratio,
                    Band(high=1.0, reading="'O(√(log D))' read as below the union bound"),
                ),
            ),
        )
    ]


def _hashing_claim(table: pd.DataFrame) -> list[ClaimCheck]:
    """[Notes] Sec. 5.1: (m f̂[h(v)] - n)/(m - 1) is unbiased over the hash."""
    rows = _of(table, "textbook_hash")
    stats = summary(rows, ["error_n", "sq_error_n"], [col.METRIC])
    if len(stats) < 2:
        return []
    stats = stats.set_index(col.METRIC)
    bias, mse = stats.loc["error_n"], stats.loc["sq_error_n"]
    m, k = int(rows[col.PROTOCOL_M].iloc[0]), int(rows[col.PROTOCOL_K].iloc[0])
    exact = _sketch_mse(rows.iloc[0])
    return [
        ClaimCheck(
            source="[Notes] Sec. 5.1 (handling large domains: hashing)",
            paper=(
                "E[f̂(v)] = (m-1)/m f(v) + n/m for a random hash, so (m f̂[h(v)] - n)/(m - 1) "
                "estimates f(v)"
            ),
            ours=(
                f"CMS with k = {k} row (the notes' estimator), m = {m}, d = "
                f"{int(rows[col.DOMAIN_SIZE].iloc[0])}, n = {int(rows[col.N].iloc[0]):,}, a "
                f"fresh hash in each of {int(bias[col.TRIALS])} trials: mean error / n "
                f"{bias[col.MEAN]:+.4f} ± {bias[col.SE]:.4f}; MSE/n {mse[col.MEAN]:.1f} ± "
                f"{mse[col.SE]:.1f} "
                f"against its exact {exact:.1f}"
            ),
            parts=(
                Part(
                    "mean error / n over the domain",
                    bias[col.MEAN],
                    WithinSE(0.0, bias[col.SE], alpha=0.01, what="0 (unbiased)"),
                ),
                Part(
                    "mean squared error / n",
                    mse[col.MEAN],
                    WithinSE(
                        exact,
                        mse[col.SE],
                        alpha=0.01,
                        what="the exact variance, with collisions of probability 1/m",
                    ),
                ),
            ),
        )
    ]


def _sketch_mse(row: pd.Series) -> float:
    """The exact mean over the domain of Var[ĉ(v)]/n of the sketch a ``textbook_hash`` row
    ran, on its point-mass population, collisions included (the protocol's ``variances``)."""
    d, n = int(row[col.DOMAIN_SIZE]), int(row[col.N])
    oracle = build_protocol(protocol_from_row(row), float(row[col.EPSILON]), domain_size=d)
    counts = np.zeros(d, dtype=np.int64)
    counts[0] = n  # dataset=point: every user holds value 0
    return float(np.mean(oracle.variances(counts))) / n


@functools.cache
def _collision_rates() -> tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]:
    """Per k of :data:`COLLISION_ROWS`: the share of :data:`COLLISION_PAIRS` pairs of
    distinct keys whose cells agree under k hash functions of :mod:`ldp.hashing` (seeds from
    ``SeedSequence(0)``), 1/m^k and its binomial SE."""
    keys = np.arange(2 * COLLISION_PAIRS, dtype=np.int64)
    seeds = np.random.SeedSequence(0).generate_state(max(COLLISION_ROWS), dtype=np.uint64)
    together = np.ones(COLLISION_PAIRS, dtype=bool)
    rates, expected, ses = [], [], []
    for row in range(max(COLLISION_ROWS)):
        cells = hashing.hash_values(keys, np.full(keys.shape, seeds[row]), COLLISION_CELLS)
        together &= cells[0::2] == cells[1::2]
        if row + 1 in COLLISION_ROWS:
            chance = theory.collision_probability(COLLISION_CELLS, row + 1)
            rates.append(float(together.mean()))
            expected.append(chance)
            ses.append(math.sqrt(chance * (1 - chance) / COLLISION_PAIRS))
    return tuple(rates), tuple(expected), tuple(ses)


def _collision_claim() -> ClaimCheck:
    """[Notes] Sec. 5.2: k independent hashes collide together w.p. 1/m^k."""
    rates, expected, ses = _collision_rates()
    return ClaimCheck(
        source="[Notes] Sec. 5.1-5.2 (hash collisions)",
        paper="Pr[h(v') = h(v)] = 1/m; for k independent hashes Pr[all k collide] = 1/m^k",
        ours=(
            f"the library's hash functions (ldp.hashing, {len(COLLISION_ROWS)} seeds), m = "
            f"{COLLISION_CELLS}, over {COLLISION_PAIRS:,} pairs of distinct values: "
            + ", ".join(
                f"k = {k}: {r:.3g} (1/m^k = {e:.3g})"
                for k, r, e in zip(COLLISION_ROWS, rates, expected, strict=True)
            )
        ),
        parts=Part(
            "share of pairs colliding in all k hashes, per k",
            rates,
            WithinSE(expected, ses, alpha=0.01, what="1/m^k (binomial SE over the pairs)"),
        ),
        note="Computed from the hash functions on fixed keys and seeds, not from a trial.",
    )


FIGURE = FigureSpec(
    name="textbook",
    experiment=("textbook", "textbook_shuffle", "textbook_max", "textbook_hash"),
    draw=draw,
    title="Teaching texts: local, central and shuffled error rates; the histogram's errors",
    caption=(
        "(a) RMSE of the mean of ±1 values against n: randomized response (GRR over d = 2, "
        "ε = 1, markers ± 2 se, line its exact variance), the central Laplace mean's "
        "2√2/(εn) (dotted), and the shuffled binary sum at the ε0 that keeps central "
        "(1, 10^-6) by Balle et al.'s Theorem 3.1 (squares). (b) RMSE of one bin's count of "
        "the one-hot histogram with ε/2-randomized response per coordinate (SUE, ε = 1) "
        "against n (± 2 se). (c) Mean over trials of the largest error over the D - 1 empty bins "
        "(SUE, n = 10^5, ± 2 se), the expectation for independent normal bins and the union "
        "bound σ√(2 ln 2(D - 1)). Sampled engine, every user holding value 0."
    ),
    claim=(
        "Lecture notes (distributed DP) Sec. 2-5: local error O(1/(ε√n)) against central "
        "O(1/(εn)) and shuffled O(√log(1/δ)/(εn)); the histogram's per-bin O(√n/ε) and largest "
        "O(√(n log D)/ε); the hashing estimator. Tutorial slides: GRR's p table, the 80/20 "
        "example. Book chapter: randomized response is ln 3-DP."
    ),
    quick=("n_trials=10",),
    order=97.0,
    claims=claims,
)
