"""[PEM] Sec. II-B's worked examples and Prop. 1 / Lemma 1 (Sec. IV-D and the appendix).

Sec. II-B: GRR at ε = ln 49, d = 2^16 has p = 49/65584 ≈ 0.00075 and Var ≈ 28.5 n (Eq. (1));
OLH at e^ε = 10 has standard deviation sqrt(40 n/81) ≈ 0.7 √n (Eq. (3)), so a value held by
0.1% of the users stands 3 standard deviations clear only when n ≥ 4,410,000.  Prop. 1:
partitioning the users among g questions identifies more than splitting ε among them;
Lemma 1, the step its proof rests on: E(ε/g) < E(ε)/g with E(ε) = (e^ε - 1)^2/e^ε.  With
OLH, Var[f̂] = 4/(E(ε) n) per answer, so Lemma 1 is exactly "the n/g users of a partition
at ε estimate a frequency with less variance than all n users at ε/g".

Each is checked in closed form (to the digits the paper prints) and by simulation:
``pem_section2_grr`` (GRR, ε = ln 49, d = 2^16) and ``pem_section2_olh`` (OLH at e^ε = 10,
and at ε = 0.5, 1, 2 with 25,000, 50,000 and 100,000 users, the partition-against-split
pairs), 300 trials each, the squared error of the counts nobody holds (every user holds
value 0).  Closed forms: :mod:`ldp.theory`.

The figure's claims also check, with no runs: MCM's h-fold report (Sec. III-D) and its
k^1.5 channels against Sec. VII's "around √n channels" (closed forms of the reports the
paper describes), and Sec. VI-A's data-set figures against the data the runs use
(:mod:`ldp.datasets`: the calibrated surrogates unless a real file is configured).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import norm

from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec, both, cause, verdict_of
from experiments.results import per_trial, protocol_name, summary
from ldp import theory

EXPERIMENTS = ("pem_section2_grr", "pem_section2_olh")
#: The worked examples' experiments, each of one protocol: Eq. (1)'s and Eq. (3)'s.
GRR_EXAMPLE, OLH_EXAMPLE = EXPERIMENTS
METRIC = "sq_error_n"
#: The examples' parameters as the paper prints them.
GRR_E, GRR_D = 49.0, 2**16
OLH_E = 10.0
#: The closed forms as printed: Eq. (1)'s Var/n = 65583/2304 and Eq. (3)'s 40/81.
GRR_EQ1 = (GRR_D - 2 + GRR_E) / (GRR_E - 1) ** 2
OLH_EQ3 = 4 * OLH_E / (OLH_E - 1) ** 2
#: Standard errors a simulated mean may stray from its closed form (two-sided false alarm
#: 6e-5 per comparison).
Z = 4.0
#: Lemma 1's (ε, g) pairs the ``pem_section2_olh`` grid holds: n/g users at ε against n
#: users at ε/g, n = 100,000.
PAIRS = ((1.0, 2), (2.0, 2), (2.0, 4))
N_FULL = 100_000


def big_e(epsilon: float | np.ndarray) -> float | np.ndarray:
    """E(ε) = (e^ε - 1)^2 / e^ε of [PEM]'s appendix (4/E(ε) is OLH's Var/n, Eq. (3))."""
    return np.expm1(epsilon) ** 2 / np.exp(epsilon)


def stats(table: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard error and exact expectation of ``sq_error_n`` per setting."""
    if per_trial(table, METRIC).empty:
        columns = ["experiment", "protocol", "epsilon", "n", "mean", "se", "exact", "trials"]
        return pd.DataFrame(columns=columns)
    out = summary(table, METRIC, ["experiment", "protocol.name", "epsilon", "dataset.n"])
    return out.rename(columns={"protocol.name": "protocol", "dataset.n": "n", "analytic": "exact"})


def _at(frame: pd.DataFrame, experiment: str, e_power: float) -> pd.DataFrame:
    """The rows of ``experiment`` at e^ε = ``e_power`` (to 1e-9)."""
    at = np.isclose(np.exp(frame["epsilon"].astype(float)), e_power)
    return frame[(frame["experiment"] == experiment) & at]


def _pooled(rows: pd.DataFrame) -> tuple[float, float, int]:
    """Var/n pooled over settings that differ only in n (Var/n does not depend on n):
    inverse-variance weighted mean, its standard error, trials."""
    if rows.empty:
        return math.nan, math.nan, 0
    weight = 1 / rows["se"].clip(lower=1e-300) ** 2
    mean = float((weight * rows["mean"]).sum() / weight.sum())
    return mean, float(1 / np.sqrt(weight.sum())), int(rows["trials"].sum())


def _sim_verdict(mean: float, se: float, exact: float) -> str:
    return verdict_of(abs(mean - exact) <= Z * se if math.isfinite(mean) else None)


def _printed(value: float, printed: float, digits: int) -> str:
    """'reproduced' when ``value`` rounds to the paper's ``printed`` at ``digits`` significant
    digits."""
    return verdict_of(float(f"{value:.{digits}g}") == printed)


def _reason(parts: tuple[str, ...]) -> str:
    """The cause column for a claim of several parts (closed forms first, simulation last)."""
    if "not measurable" in parts:
        return "no simulated rows: run pem_section2_grr and pem_section2_olh"
    if set(parts) == {"reproduced"}:
        return ""
    return "a part is outside its tolerance (see the numbers): " + ", ".join(parts)


def grr_claim(frame: pd.DataFrame) -> ClaimCheck:
    """Sec. II-B: GRR, ε = ln 49, d = 2^16: p ≈ 0.00075, Var ≈ 28.5 n (Eq. (1))."""
    epsilon = math.log(GRR_E)
    p, q = theory.grr_pq(epsilon, GRR_D)
    exact = float(theory.pure_variance(1, p, q))  # Var/n of a value nobody holds
    mean, se, trials = _pooled(_at(frame, GRR_EXAMPLE, GRR_E))
    verdicts = (_printed(p, 0.00075, 2), _printed(exact, 28.5, 3), _sim_verdict(mean, se, exact))
    return ClaimCheck(
        source="PEM Sec. II-B1 (GRR, Eq. (1))",
        paper="ε = ln 49, d = 2^16: p = 49/65584 ≈ 0.00075, variance 65583/2304 n ≈ 28.5 n",
        ours=(
            f"closed form (ldp.theory): p = {p:.6f}, Var/n = {exact:.4f} (Eq. (1) as printed: "
            f"{GRR_EQ1:.4f}); simulated (sampled engine, {trials} trials of a count nobody "
            f"holds): Var/n = {mean:.3f} ± {se:.3f} (1 SE)"
        ),
        tolerance=(
            "three parts: p and Var/n round to the paper's printed digits (0.00075, 28.5); "
            f"the simulated Var/n within {Z:g} SE of the exact value (false alarm 6e-5)"
        ),
        verdict=both(*verdicts),
        reason=_reason(verdicts),
    )


def olh_claims(frame: pd.DataFrame) -> list[ClaimCheck]:
    """Sec. II-B: OLH at e^ε = 10: sd ≈ 0.7 √n; n ≥ 4,410,000 for 3 sd at 0.1%."""
    epsilon = math.log(OLH_E)
    g = math.ceil(OLH_E + 1)  # d' = ⌈e^ε + 1⌉ = 11 (the paper's integer e^ε)
    p, q = theory.olh_pq(epsilon, g)
    exact = float(theory.pure_variance(1, p, q))
    mean, se, trials = _pooled(_at(frame, OLH_EXAMPLE, OLH_E))
    sd, sd_se = (math.sqrt(mean), se / (2 * math.sqrt(mean))) if mean > 0 else (math.nan,) * 2
    sim = _sim_verdict(mean, se, exact)
    sd_claim = ClaimCheck(
        source="PEM Sec. II-B ('The importance of group size', Eq. (3))",
        paper="OLH with e^ε = 10: standard deviation sqrt(40n/81) ≈ 0.7 √n",
        ours=(
            f"closed form: sqrt(40/81) = {math.sqrt(OLH_EQ3):.4f}; OLH's exact Var/n at "
            f"d' = {g} is {exact:.4f} (Eq. (3) takes d' = e^ε + 1 = 11: equal); simulated "
            f"({trials} trials): Var/n = {mean:.4f} ± {se:.4f}, sd/√n = {sd:.4f} ± {sd_se:.4f}"
        ),
        tolerance=(
            "sqrt(40/81) rounds to the printed 0.7 (one digit); the simulated Var/n within "
            f"{Z:g} SE of the exact value"
        ),
        verdict=both(_printed(math.sqrt(OLH_EQ3), 0.7, 1), sim),
        reason=_reason((sim,)),
    )
    # 0.001 n >= 3 sd √n  <=>  n >= (3 sd / 0.001)^2
    printed_n = (3 * 0.7 / 0.001) ** 2
    exact_n = 9 * OLH_EQ3 / 0.001**2
    sim_n = 9 * mean / 0.001**2 if math.isfinite(mean) else math.nan
    sim_n_se = 9 * se / 0.001**2 if math.isfinite(se) else math.nan
    low, high = (3 * 0.65 / 0.001) ** 2, (3 * 0.75 / 0.001) ** 2
    parts = (
        verdict_of(round(printed_n) == 4_410_000),
        verdict_of(round(exact_n / 1e6, 1) == 4.4 and exact_n <= 4.5e6),
        verdict_of(low <= sim_n <= high if sim_n == sim_n else None),
    )
    n_claim = ClaimCheck(
        source="PEM Sec. II-B ('The importance of group size')",
        paper=(
            "a value held by 0.1% of the users, e^ε = 10: the true count 0.001n is at least 3 "
            "standard deviations (0.001n ≥ 3 × 0.7√n) when n ≥ 4,410,000, 'about 4.5 million'; "
            "quadrupling n halves the 0.1%"
        ),
        ours=(
            f"with the printed 0.7: n ≥ {printed_n:,.0f}; with the unrounded sqrt(40/81): "
            f"n ≥ 9·(40/81)/0.001² = {exact_n:,.0f}; with the simulated Var/n: "
            f"{sim_n:,.0f} ± {sim_n_se:,.0f}. The threshold 3·sd/√n falls as n^(-1/2): ×4 "
            "users halve it, exactly"
        ),
        tolerance=(
            "the printed arithmetic exact; the unrounded bound within 'about 4.5 million' "
            "(at most 4.5 M, 4.4 M to one decimal); the simulated bound inside the range the "
            f"printed 0.7 stands for ([0.65, 0.75): {low / 1e6:.2f} M to {high / 1e6:.2f} M)"
        ),
        verdict=both(*parts),
        reason=_reason(parts),
    )
    return [sd_claim, n_claim]


def lemma1_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (ε, g) of :data:`PAIRS` with rows in the table: n·Var[f̂] of the partition (n/g
    users at ε) and of the split (n users at ε/g), with standard errors and closed forms."""
    olh = frame[frame["experiment"] == OLH_EXAMPLE]
    out = []
    for epsilon, g in PAIRS:
        part = olh[np.isclose(olh["epsilon"], epsilon) & (olh["n"] == N_FULL // g)]
        split = olh[np.isclose(olh["epsilon"], epsilon / g) & (olh["n"] == N_FULL)]
        if part.empty or split.empty:
            continue
        # sq_error_n = E[(ĉ - c)^2]/n_group and f̂ = ĉ/n_group: Var[f̂] = sq_error_n/n_group;
        # times the n = N_FULL of the whole population, the partition's is g · sq_error_n
        a, b = part.iloc[0], split.iloc[0]
        out.append(
            {
                "epsilon": epsilon,
                "g": g,
                "partition": g * a["mean"],
                "partition_se": g * a["se"],
                "partition_exact": g * a["exact"],
                "split": b["mean"],
                "split_se": b["se"],
                "split_exact": b["exact"],
                "partition_eq3": g * 4 / big_e(epsilon),
                "split_eq3": 4 / big_e(epsilon / g),
            }
        )
    return pd.DataFrame(out)


def lemma1_verdict(pairs: pd.DataFrame) -> str:
    """Lemma 1 simulated: the split's n·Var[f̂] above the partition's by more than
    :data:`Z` SE of the difference at every pair of :func:`lemma1_pairs`."""
    if pairs.empty:
        return "not measurable"
    gap_se = np.hypot(pairs["partition_se"], pairs["split_se"])
    return verdict_of(bool((pairs["split"] - pairs["partition"] > Z * gap_se).all()))


def lemma1_claim(frame: pd.DataFrame) -> ClaimCheck:
    """Lemma 1 on a grid in closed form, then partition against split simulated."""
    eps = np.linspace(0.01, 10, 1000)
    gs = np.arange(2, 17)
    grid = big_e(eps[:, None]) / gs[None, :] - big_e(eps[:, None] / gs[None, :])
    holds = bool((grid > 0).all())
    pairs = lemma1_pairs(frame)
    parts = (verdict_of(holds), lemma1_verdict(pairs))
    listed = "no simulated pair in the table"
    if len(pairs):
        listed = "; ".join(
            f"ε = {r.epsilon:g}, g = {r.g}: n·Var[f̂] partition {r.partition:.2f} ± "
            f"{r.partition_se:.2f} (exact {r.partition_exact:.2f}) vs split {r.split:.2f} ± "
            f"{r.split_se:.2f} (exact {r.split_exact:.2f})"
            for r in pairs.itertuples()
        )
    return ClaimCheck(
        source="PEM appendix, Lemma 1 (proof of Prop. 1)",
        paper="E(ε/g) < E(ε)/g, E(ε) = (e^ε - 1)^2/e^ε (equality at ε = 0)",
        ours=(
            f"closed form on ε ∈ [0.01, 10] (1,000 points) × g = 2..16: "
            f"{'holds everywhere' if holds else 'fails somewhere'} (smallest margin "
            f"E(ε)/g - E(ε/g) = {grid.min():.2e}, at the smallest ε); simulated with OLH, "
            f"300 trials each: {listed}"
        ),
        tolerance=(
            "closed form: strict at every grid point; simulation: the split's variance above "
            f"the partition's by more than {Z:g} SE of the difference at each pair (OLH's "
            "Var/n is 4/E(ε) with d' = e^ε + 1, so the lemma is exactly this comparison)"
        ),
        verdict=both(*parts),
        reason=_reason(parts),
    )


def prop1_grid() -> pd.DataFrame:
    """The appendix's P1 (partition) and P2 (split) over a grid of its variables.

    P1 = A/√(1 + B E(ε)) + C/√(g/E(ε) + g B) and P2 = A/√(1 + B E(ε/g)) + C/√(1/E(ε/g) + B)
    with A = Φ^-1((k-j)/N[i]) < 0, B = f/2 (1 - f/2), C = f √n[i] / 2, as printed.
    """
    grid = pd.MultiIndex.from_product(
        [
            [0.5, 1.0, 2.0, 4.0],  # ε
            [2, 4, 8],  # g
            [0.001, 0.01, 0.05, 0.2, 0.5, 0.9],  # f_j
            [1e4, 1e5, 1e6],  # n[i]
            [1e-4, 1e-2, 0.2],  # (k - j)/N[i]
        ],
        names=["epsilon", "g", "f", "n", "slots"],
    ).to_frame(index=False)
    e, g, f = grid["epsilon"], grid["g"], grid["f"]
    a = norm.ppf(grid["slots"])
    b = f / 2 * (1 - f / 2)
    c = f * np.sqrt(grid["n"]) / 2
    grid["P1"] = a / np.sqrt(1 + b * big_e(e)) + c / np.sqrt(g / big_e(e) + g * b)
    grid["P2"] = a / np.sqrt(1 + b * big_e(e / g)) + c / np.sqrt(1 / big_e(e / g) + b)
    return grid


def prop1_claim(frame: pd.DataFrame) -> ClaimCheck:
    """Prop. 1 in the appendix's closed form (P1 > P2 'in most cases'), with the variance
    it rests on simulated (Lemma 1's pairs)."""
    grid = prop1_grid()
    wins = grid["P1"] > grid["P2"]
    small = grid["f"] <= 0.01  # the frequencies the proof cares about (B ~ 0)
    lost = grid[~wins]
    where = (
        ", ".join(
            f"{k} {sorted(set(lost[k].round(4)))}" for k in ("epsilon", "f") if lost[k].nunique()
        )
        or "nowhere"
    )
    share, share_small = float(wins.mean()), float(wins[small].mean())
    exact = verdict_of(share > 0.5 and share_small > 0.5)
    sim = lemma1_verdict(lemma1_pairs(frame))
    return ClaimCheck(
        source="PEM Sec. IV-D, Prop. 1 (appendix, Eq. (6))",
        paper=(
            "partitioning the users among g questions identifies a value with higher "
            "probability than splitting ε among them; 'numerical calculation also validates "
            "P1 > P2 in most cases'"
        ),
        ours=(
            f"P1 > P2 at {wins.sum()} of {len(grid)} grid points ({100 * share:.0f}%; "
            f"{100 * share_small:.0f}% of those with f ≤ 1%) over ε ∈ {{0.5, 1, 2, 4}} × g ∈ "
            "{2, 4, 8} × f ∈ {0.001, 0.01, 0.05, 0.2, 0.5, 0.9} × n[i] ∈ {10^4, 10^5, 10^6} × "
            f"(k-j)/N[i] ∈ {{1e-4, 0.01, 0.2}}; P1 ≤ P2 at {where}. Simulated: the noise "
            "term Var[f̂] is smaller partitioned at every Lemma 1 pair (row above); the "
            "identification itself is Fig. 8a's row (MCM, SPM partitioned vs split)"
        ),
        tolerance=(
            "'most cases' read as more than half of the grid and of its f ≤ 1% points; "
            f"simulation: the partition's variance below the split's by more than {Z:g} SE"
        ),
        verdict=both(exact, sim),
        reason=_reason((exact, sim)),
    )


#: Bits of a hash seed in an OLH report (a 32-bit seed names the user's hash function).
SEED_BITS = 32
#: [PEM] Sec. VI-A's population sizes (n, the data set's name).
SEC6_N = {"url": 1_200_000, "aol": 500_000, "exponential": 1_000_000}


def olh_bits(epsilon: float) -> int:
    """Bits of one OLH report ⟨H, y⟩: the seed and y in {0 .. d'-1}, d' = ⌈e^ε + 1⌉."""
    return SEED_BITS + math.ceil(math.log2(theory.olh_default_g(epsilon)))


def communication_claims(epsilon: float = 2.0, m: int = 64) -> list[ClaimCheck]:
    """Sec. III-D / VII: MCM's h channels multiply its report by h; its k^1.5 channels
    against the "around √n" of Sec. VII.  Closed forms, from the reports the paper
    describes (PEM ⟨H, y⟩; SPM improved: a segment-pair report and a whole-value report,
    both OLH; MCM ⟨π(v), ℓ, b_1..b_h⟩)."""
    ks = (8, 16, 32, 64)
    pem = olh_bits(epsilon)
    spm = 2 * olh_bits(epsilon / 2) + math.ceil(math.log2(28))  # g = 8: C(8, 2) pair indices
    mcm = {k: olh_bits(epsilon / 2) + math.ceil(math.log2(m)) + math.ceil(k**1.5) for k in ks}
    bits = (
        f"ε = {epsilon:g}, m = {m}, {SEED_BITS}-bit hash seeds: PEM {pem} bits a user, SPM "
        "(two OLH reports at ε/2, a pair index of C(8,2) for g = 8 segments) "
        f"{spm}, MCM (an OLH report at ε/2, ℓ, h = ⌈k^1.5⌉ channel bits) "
        + ", ".join(f"k = {k}: {b} ({b / pem:.1f}× PEM)" for k, b in mcm.items())
    )
    roots = {name: math.sqrt(n) for name, n in SEC6_N.items()}
    channel_ratio = {k: math.ceil(k**1.5) / roots["exponential"] for k in ks}
    around = verdict_of(all(0.5 <= r <= 2 for r in channel_ratio.values()))
    return [
        ClaimCheck(
            source="PEM Sec. III-D (MCM's limitations)",
            paper=(
                "each user reports on all h channels: a multiplicative factor h on the "
                "communication (and on the aggregator's queries)"
            ),
            ours=(
                f"closed form of the reports: MCM's bit part is h bits where a one-channel "
                f"report has 1 (exactly ×h); whole reports: {bits}"
            ),
            tolerance="exact arithmetic on the report formats the paper describes",
            verdict="reproduced",
        ),
        ClaimCheck(
            source="PEM Sec. VII (related work: Bassily et al. [5])",
            paper="'in our experimental comparison with MCM, we already use around √n channels'",
            ours=(
                "the MCM of Sec. VI-A uses k^1.5 channels: "
                + ", ".join(f"k = {k}: {math.ceil(k**1.5)}" for k in ks)
                + "; √n is "
                + ", ".join(f"{name} {root:.0f}" for name, root in roots.items())
                + " (the data of Sec. VI-A): k^1.5/√n = "
                + ", ".join(f"{r:.2f}" for r in channel_ratio.values())
                + " on the synthetic data"
            ),
            tolerance="'around' read as within a factor 2 of √n at every k the figures use",
            verdict=around,
            reason=cause(
                around,
                "k^1.5 reaches √n only at k = n^(1/3) = 100 for n = 10^6: over k = "
                f"{ks[0]}..{ks[-1]} the improved MCM has {min(channel_ratio.values()):.2f} to "
                f"{max(channel_ratio.values()):.2f} of √n channels. Figs. 5, 6 and 8a draw MCM "
                "with √n channels beside it (the 'MCM (√n channels)' line)",
            ),
        ),
    ]


#: [PEM] Sec. VI-A's data-set figures (n, distinct values, bits per value); USENIX'17 Sec.
#: 6 for Kosarak (990,002 users, 41,270 items).
PAPER_DATA = {
    "url": (1_200_000, 27_000, 160, "1.2 million data points, 27 thousand unique urls, 20 bytes"),
    "aol": (500_000, 200_000, 48, "around 0.5 million queries, 0.2 million unique, 6 bytes"),
    "exponential": (1_000_000, None, 64, "n = 1,000,000, m = 64 bits, scale 0.05"),
    "kosarak": (990_002, 41_270, 32, "990,002 users, 41,270 items (USENIX'17 Sec. 6)"),
}
#: The domain our runs give a data set where the paper's count is its domain, not the
#: values held (Kosarak: oracle_mse_kosarak's options.domain_size).
DOMAIN_NOTE = {
    "kosarak": "; the runs' domain is all 41,270 items (options.domain_size), held or not",
}
#: What each surrogate (or synthetic) data set is calibrated to.
CALIBRATED = {
    "url": "the paper's own figures (1.2 M visits, 27,000 distinct 20-byte URLs)",
    "aol": "the authors' release of the log measured as 6-byte first queries "
    "(657,427 users, about 121,000 distinct; top-16 share 12.8%)",
    "exponential": "synthetic: the paper's law itself (geometric, scale 0.05)",
    "kosarak": "kosarak.dat's counts (990,002 transactions, 41,270 items; the 16th and "
    "32nd supports)",
}
#: Why a surrogate's counts are not the paper's, where they are not.
SURROGATE_REASON = {
    "aol": "the surrogate follows the measured release (657,427 first queries, ~121,000 "
    "distinct at 6 bytes), whose counts are not the paper's rounded 0.5 M and 0.2 M",
    "kosarak": "41,270 is the item domain; a one-item-per-user draw of 990,002 users holds "
    "fewer of them (the rare items go unheld)",
}


def dataset_claims() -> list[ClaimCheck]:
    """Sec. VI-A's data-set statistics against the data our runs use (the calibrated
    surrogates when the real files are absent)."""
    from ldp import datasets

    out = []
    for name, (n, distinct, m, text) in PAPER_DATA.items():
        data = datasets.load(name)
        parts = [verdict_of(abs(data.n - n) <= 0.05 * n), verdict_of(data.m == m)]
        if distinct is not None:
            parts.append(verdict_of(abs(data.n_distinct - distinct) <= 0.1 * distinct))
        calibrated = data.source in ("surrogate", "synthetic")
        verdict = both(*parts)
        out.append(
            ClaimCheck(
                source="PEM Sec. VI-A (data sets)"
                if name != "kosarak"
                else "USENIX'17 Sec. 6 (Kosarak)",
                paper=f"{name}: {text}",
                ours=(
                    f"{data.source} data: n = {data.n:,}, {data.n_distinct:,} distinct values "
                    f"held, m = {data.m} bits"
                    + (f"; calibrated to {CALIBRATED[name]}" if calibrated else "")
                    + DOMAIN_NOTE.get(name, "")
                ),
                tolerance=(
                    "n within 5% and distinct values within 10% (the paper rounds to one or "
                    "two digits: '1.2 million', '27 thousand'); m exact"
                ),
                verdict=verdict,
                reason=cause(
                    verdict,
                    SURROGATE_REASON.get(name, "see the numbers")
                    if data.source == "surrogate"
                    else "see the numbers",
                ),
            )
        )
    return out


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """Sec. II-B's two worked examples, Lemma 1 and Prop. 1; Sec. III-D / VII's channel
    counts and report sizes; Sec. VI-A's data sets (closed forms and data, no runs)."""
    frame = stats(table)
    return [
        grr_claim(frame),
        *olh_claims(frame),
        lemma1_claim(frame),
        prop1_claim(frame),
        *communication_claims(),
        *dataset_claims(),
    ]


def _protocol(table: pd.DataFrame, experiment: str) -> str:
    """The one protocol of a worked example's experiment (its name while it has no rows)."""
    rows = table[table["experiment"] == experiment]
    return protocol_name(rows) if len(rows) else experiment


def draw(table: pd.DataFrame) -> plt.Figure:
    """(a) the worked examples' Var/n, simulated against Eq. (1) / (3); (b) Lemma 1's pairs:
    n·Var[f̂] partitioned against split."""
    style.apply_theme()
    frame = stats(table)
    figure, (left, right) = plt.subplots(1, 2, figsize=(10.5, 4.0))
    grr, olh = (_protocol(table, name) for name in EXPERIMENTS)
    examples = [
        (GRR_EXAMPLE, grr, GRR_E, f"{grr}, ε = ln 49\nd = 2^16 (Eq. 1)", GRR_EQ1),
        (OLH_EXAMPLE, olh, OLH_E, f"{olh}, e^ε = 10\n(Eq. 3)", OLH_EQ3),
    ]
    for i, (experiment, name, e_power, _label, closed) in enumerate(examples):
        mean, se, _ = _pooled(_at(frame, experiment, e_power))
        colour = style.color(name)
        left.errorbar(i, mean, yerr=2 * se, fmt="o", color=colour, ms=6, capsize=3)
        left.hlines(closed, i - 0.3, i + 0.3, color=colour, lw=1.2)
        left.annotate(f"{closed:.3g}", (i + 0.32, closed), va="center", fontsize=8)
    left.set_xticks(range(len(examples)), [e[3] for e in examples])
    left.set_xlim(-0.6, len(examples) - 0.2)
    left.set_yscale("log")
    left.set_ylabel("Var[ĉ(v)] / n")
    left.set_title("(a) Sec. II-B worked examples")
    pairs = lemma1_pairs(frame)
    colour = style.color(olh)
    x = np.arange(len(pairs))
    if len(pairs):
        right.errorbar(
            x - 0.08, pairs["partition"], yerr=2 * pairs["partition_se"], fmt="o",
            color=colour, capsize=3, label="partition: n/g users at ε",
        )  # fmt: skip
        right.errorbar(
            x + 0.08, pairs["split"], yerr=2 * pairs["split_se"], fmt="s", mfc="white",
            color=colour, capsize=3, label="split: n users at ε/g",
        )  # fmt: skip
        for xi, r in zip(x, pairs.itertuples(), strict=True):
            right.hlines([r.partition_eq3, r.split_eq3], xi - 0.25, xi + 0.25, color="0.4", lw=0.8)
        right.set_xticks(x, [f"ε = {r.epsilon:g}, g = {r.g}" for r in pairs.itertuples()])
    right.set_yscale("log")
    right.set_ylabel("n · Var[f̂]")
    right.set_title(f"(b) Lemma 1: partition vs split ({olh})")
    right.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    figure.tight_layout()
    return figure


FIGURE = FigureSpec(
    name="pem_section2",
    experiment=EXPERIMENTS,
    draw=draw,
    title="PEM Sec. II-B examples and Lemma 1: oracle variances, simulated",
    caption=(
        "(a) Var[ĉ(v)]/n of a count nobody holds: GRR at ε = ln 49, d = 2^16 and OLH at "
        "e^ε = 10 (d = 1024), points the simulated mean over 300 trials of 100,000 users "
        "(± 2 standard errors, sampled engine), short lines the paper's Eqs. (1) and (3). "
        "(b) Lemma 1 as a variance: n·Var[f̂] of OLH when n/g of 100,000 users answer at ε "
        "(filled) against all of them at ε/g (open), ± 2 SE; grey lines: 4g/E(ε) and "
        "4/E(ε/g) (Eq. (3) with d' = e^ε + 1; our d' = ⌈e^ε + 1⌉ sits slightly above)."
    ),
    claim=(
        "PEM Sec. II-B: GRR at ε = ln 49, d = 2^16 has Var ≈ 28.5n; OLH at e^ε = 10 has "
        "sd ≈ 0.7√n, so n ≥ 4.41 M for 0.1% at 3 sd. Lemma 1 / Prop. 1: partitioning users "
        "beats splitting ε."
    ),
    quick=("n_trials=50",),
    order=19.0,
    claims=claims,
)
