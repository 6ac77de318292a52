"""[PEM] Fig. 3 a–c (Sec. V-B, Observations 1 and 2): F1 and NCR of PEM under different
configurations, (a) the number of rounds g, (b) η[1], (c) n[1], beside the utility model,
Eq. (4), for the same configuration and the data's true top-16 frequencies (the settings
are in the caption).
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments.figures import pem_section5 as sec5
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec, cause
from experiments.results import summary

DATASETS = ("zipf", "zipf(-20)")
#: The panels: name, title, x label.
PANELS = (
    ("rounds", "(a) vary the number of rounds g", "number of rounds g (groups)"),
    ("eta", "(b) vary η[1]  (g = 2, η[2] = 12 − η[1])", "bits added in round 1, η[1]"),
    ("users", "(c) vary n[1]  (g = 2, η = 6, 6)", "users in group 1, n[1]"),
)


def _cell(value) -> list | None:
    if isinstance(value, str):
        return json.loads(value)
    return None


def points(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (setting, metric, panel): x, empirical mean and SE, model (4)."""
    rows = sec5.settings(table)
    frequencies = sec5.true_frequencies(table)
    sec5.prepare_refined(rows[[_cell(etas) is not None for etas in rows["protocol.etas"]]])
    out = []
    for metric in sec5.METRICS:
        stats = summary(table, metric, ["config_hash"]).set_index("config_hash")
        for key, row in rows.iterrows():
            if key not in stats.index:
                continue
            etas, fractions = _cell(row["protocol.etas"]), _cell(row["protocol.fractions"])
            if etas is None:
                continue
            n = sec5.n_users(row)
            shares = fractions or [1 / len(etas)] * len(etas)
            balanced = max(etas) - min(etas) <= 1 and etas == sorted(etas, reverse=True)
            panels = []
            if fractions is None and balanced:
                panels.append(("rounds", len(etas)))
            if len(etas) == 2 and fractions is None:
                panels.append(("eta", etas[0]))
            if len(etas) == 2 and etas[0] == etas[1]:
                panels.append(("users", shares[0] * n))
            model = sec5.model_utility(row, frequencies[key], metric)
            extra = {"model": model, "refined": sec5.refined_utility(row, metric)}
            for panel, x in panels:
                out.append(sec5.point(stats, key, row, metric, panel=panel, x=float(x), **extra))
    frame = pd.DataFrame(out, columns=[*sec5.POINT_COLUMNS, "refined"])
    return frame.sort_values(["panel", "dataset", "metric", "x"])


def draw(table: pd.DataFrame) -> plt.Figure:
    """Three panels: F1 and NCR, both data sets, points (runs) beside lines (model)."""
    style.apply_theme()
    data = points(table)
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.4), sharey=True)
    for ax, (panel, title, xlabel) in zip(axes, PANELS, strict=True):
        here = data[data["panel"] == panel]
        sec5.draw_utility(ax, here, refined=True)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        if panel == "users":
            ax.xaxis.set_major_formatter(lambda v, _: f"{v / 1000:g}k")
        else:
            ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    axes[0].set_ylabel("utility score (F1, NCR)")
    sec5.metric_legend(figure, data, DATASETS)
    figure.tight_layout()
    return figure


def _noise_tolerance(a: pd.Series, b: pd.Series) -> np.ndarray:
    """2 standard errors of a difference of two independent means."""
    return 2 * np.sqrt(a.to_numpy() ** 2 + b.to_numpy() ** 2)


def _where(row: pd.Series) -> str:
    name = {"rounds": "g", "eta": "η[1]", "users": "n[1]"}[row["panel"]]
    return f"{name} = {row['x']:g}, {row['dataset']} {sec5.METRICS[row['metric']]['label']}"


def _fmt(values) -> str:
    return "/".join(f"{v:.2f}" for v in values)


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """Observation 1 (3a), the optima and symmetry of 3b and 3c, and the model's fit."""
    data = points(table)
    found = []
    # Fig. 3a / Observation 1: more rounds, worse results
    rounds = data[data["panel"] == "rounds"]
    parts, ok = [], bool(len(rounds))
    for (dataset, metric), s in rounds.groupby(["dataset", "metric"], sort=False):
        rises = np.diff(s["mean"].to_numpy()) - _noise_tolerance(s["se"][1:], s["se"][:-1])
        ok &= bool(np.all(rises <= 0)) and s["mean"].iloc[-1] < s["mean"].iloc[0]
        parts.append(
            f"{dataset} {sec5.METRICS[metric]['label']} g = "
            f"{int(s['x'].min())}..{int(s['x'].max())}: {_fmt(s['mean'])}"
        )
    found.append(
        ClaimCheck(
            source="PEM Sec. V-B, Observation 1 (Fig. 3a)",
            paper="with more rounds the overall result becomes worse: as few rounds as possible",
            ours="; ".join(parts) or "no data",
            tolerance=(
                "an ordering: no utility rises from one g to the next by more than 2 SE of "
                "the difference, and the last g is below the first, on every data set and metric"
            ),
            verdict="reproduced" if ok else "differs",
            reason="" if ok else "a utility rises with g by more than 2 SE somewhere",
        )
    )
    # Fig. 3b and 3c: the optimum at the balanced split, and symmetry around it
    for panel, centre, source, name, show in (
        ("eta", 6.0, "PEM Sec. V-B, Observation 2 (Fig. 3b)", "η[1]", lambda x: f"{x:g}"),
        ("users", None, "PEM Sec. V-B, Observation 2 (Fig. 3c)", "n[1]", lambda x: f"{x:,.0f}"),
    ):
        here = data[data["panel"] == panel]
        parts, at_best, symmetric = [], bool(len(here)), bool(len(here))
        for (dataset, metric), s in here.groupby(["dataset", "metric"], sort=False):
            s = s.assign(x=s["x"].round(3)).set_index("x")
            middle = centre if centre is not None else (s.index.min() + s.index.max()) / 2
            best, model_best = s["mean"].idxmax(), s["model"].idxmax()
            within = middle in s.index and s.loc[best, "mean"] - s.loc[middle, "mean"] <= (
                2 * np.hypot(s.loc[best, "se"], s.loc[middle, "se"])
            )
            pairs = [(x, round(2 * middle - x, 3)) for x in s.index if x < middle]
            pairs = [(a, b) for a, b in pairs if b in s.index]
            asym = [abs(s.loc[a, "mean"] - s.loc[b, "mean"]) for a, b in pairs]
            noise = [2 * np.hypot(s.loc[a, "se"], s.loc[b, "se"]) for a, b in pairs]
            at_best &= bool(within)
            symmetric &= bool(pairs) and all(
                d <= e + 0.01 for d, e in zip(asym, noise, strict=True)
            )
            parts.append(
                f"{dataset} {sec5.METRICS[metric]['label']}: best at {name} = {show(best)} "
                f"({s.loc[best, 'mean']:.3f}"
                + (f"; at {show(middle)}: {s.loc[middle, 'mean']:.3f}" if best != middle else "")
                + f"; model best at {show(model_best)}), mean |U − U(mirror)| = "
                + (f"{np.mean(asym):.3f} (±2 SE: {np.mean(noise):.3f})" if asym else "-")
            )
        verdict = "reproduced" if at_best and symmetric else "partly" if at_best else "differs"
        found.append(
            ClaimCheck(
                source=source,
                paper=(
                    "best at η[1] = 6 (both rounds query 2^10 values), symmetric around it"
                    if panel == "eta"
                    else "best at n[1] = 50,000 (half of the users in each group), symmetric "
                    "around it"
                ),
                ours="; ".join(parts) or "no data",
                tolerance=(
                    "two parts: 'best at' the balanced split read as that point within 2 SE "
                    "of the best point; 'symmetric' as every mirrored pair within 2 SE of "
                    "their difference + 0.01"
                ),
                verdict=verdict,
                reason={
                    "reproduced": "",
                    "partly": "the two sides differ by more than 2 SE somewhere",
                    "differs": "the balanced split is more than 2 SE below the best point",
                }[verdict],
            )
        )
    unique = data.drop_duplicates(["config_hash", "metric"])
    text, verdict = sec5.model_fit(unique, _where)
    refined_text, _ = sec5.model_fit(unique.assign(model=unique["refined"]), _where)
    text = f"Eq. (5): {text}. Refined model (prefix competition): {refined_text}"
    found.append(
        ClaimCheck(
            source="PEM Sec. V-B (Fig. 3)",
            paper="all points (empirical) lie on the line (analysis (4)) under every configuration",
            ours=text,
            tolerance=sec5.MODEL_FIT_TOLERANCE,
            verdict=verdict,
            reason=cause(
                verdict,
                "with many rounds of few bits (η ≤ 3) the model is optimistic: (5) takes "
                "the N[i] = |D_i| − k other prefixes to have frequency 0, but among only "
                "16·2^η candidates the extensions of other frequent prefixes are not rare",
            ),
        )
    )
    return found


FIGURE = FigureSpec(
    name="pem_fig3",
    experiment=("pem_fig3_rounds", "pem_fig3_eta", "pem_fig3_users"),
    draw=draw,
    title="PEM Fig. 3: utility under different configurations (Sec. V-B)",
    caption=(
        "F1 (filled circles, solid lines) and NCR (open squares, dashed lines) of the top "
        "k = 16 on zipf (dark) and zipf(-20) (light; two shades of PEM's colour), n = 10⁵, "
        "m = 16, ε = 1, γ = 4, "
        "|C_i| = 16, OLH, sampled engine, 100 runs. (a) g = 1..6 rounds, the 12 bits after γ "
        "split as evenly as possible (g = 5: 3,3,2,2,2), n[i] = n/g; (b) g = 2, η[1] = 1..11, "
        "η[2] = 12 − η[1], n[1] = n/2; (c) g = 2, η = 6, 6, n[1] = 10,000..90,000. Points: "
        "mean over runs, error bars ±2 standard errors; thin lines: the utility model (4) "
        "with (5) for the same configuration and the data's true top-16 frequencies; thick "
        "pale lines: the refined model (ldp.theory.pem_refined), whose competing candidates "
        "are the data's own prefixes."
    ),
    claim=(
        "PEM Sec. V-B: all points lie on the analytical lines; more rounds are worse "
        "(Observation 1); the best split is η[1] = 6 and n[1] = 50,000, symmetric around "
        "it (Observation 2)."
    ),
    quick=("n_trials=10",),
    order=20.3,
    claims=claims,
)
