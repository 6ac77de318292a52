"""Apple's count-mean sketches (2017): Var/n of CMS and HCMS against ε and against m.

Every user holds value 0 and the absent values are tracked (``cms_variance.yaml``,
``cms_width.yaml``).  Lines: the exact variances, USENIX'17 Table 1 for the references and,
for the sketches, the pure part plus the collision term n(n-1)/(k(m-1)) of
:meth:`ldp.oracles.CMS.variance`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Part, WithinSE
from experiments.results import (
    build_protocol,
    figure_config,
    per_trial,
    protocol_from_row,
    summary,
)
from ldp.theory import table1_variance

METRIC = "sq_error_n"
#: The sketches (``subjects``: points and exact lines) and the Table 1 references
#: (``reference``: closed-form lines), from ``cms_variance``'s ``figure:`` block.
COMPARISON = figure_config("cms_variance")
#: Family-wise false-alarm rate of the variance claims (a max over every setting).
FAMILY_ALPHA = 0.01
#: Offsets of the two engines' points: added on the ε axis, multiplied on the m axis.
DODGE = {"sampled": -0.04, "reports": 0.04}
#: The look of a measured point (its colour is the protocol's, its marker the engine's).
POINT = {"ms": 4.5, "capsize": 2, "lw": 0.8, "mew": 1.0}


def exact_line(row: pd.Series, epsilons, widths=None) -> np.ndarray:
    """Var/n of a value nobody holds when all n users share one value (collisions n(n-1)).

    Along ``epsilons`` at the row's m, or along ``widths`` at one ε.
    """
    n, d = int(row[col.DATASET_N]), int(row[col.DOMAIN_SIZE])
    node = protocol_from_row(row)
    if widths is None:  # the row's m (NaN in the table: the class default)
        widths = build_protocol(node, 1.0, domain_size=d).m
    epsilons, widths = np.broadcast_arrays(np.asarray(epsilons, dtype=float), widths)
    out = []
    for epsilon, width in zip(epsilons.ravel(), widths.ravel(), strict=True):
        oracle = build_protocol({**node, "m": int(width)}, float(epsilon), domain_size=d)
        out.append(oracle.variance(n, 0, collisions=float(n) * (n - 1)) / n)
    return np.array(out)


def _points(ax, rows: pd.DataFrame, x: str, colour, log_x: bool) -> None:
    stats = summary(rows, None, [col.ENGINE, x]).set_index([col.ENGINE, x])
    for (engine, value), row in stats.iterrows():
        half = 2 * row[col.STD] / np.sqrt(row[col.TRIALS]) if row[col.TRIALS] > 1 else 0.0
        shift = value * (1 + DODGE[engine]) if log_x else value + DODGE[engine]
        fill = colour if engine == "sampled" else "white"
        marker = style.ENGINE_MARKERS.get(engine, "o")
        ax.errorbar(shift, row[col.MEAN], yerr=half, fmt=marker, color=colour, mfc=fill, **POINT)


def draw(table: pd.DataFrame) -> plt.Figure:
    """Two panels: Var/n against ε (d = 1024), and against m at ε = 2 (log-log)."""
    style.apply_theme()
    rows = per_trial(table, METRIC)
    by_eps = rows[rows[col.EXPERIMENT] == "cms_variance"]
    by_m = rows[rows[col.EXPERIMENT] == "cms_width"]
    figure, axes = plt.subplots(1, 2, figsize=(10.4, 4.2))
    names = style.order(list(dict.fromkeys([*rows[col.PROTOCOL].unique(), *COMPARISON.reference])))
    ax = axes[0]
    if len(by_eps):
        grid = np.linspace(by_eps[col.EPSILON].min(), by_eps[col.EPSILON].max(), 60)
        d = int(by_eps[col.DOMAIN_SIZE].iloc[0])
        for name in names:
            mine = by_eps[by_eps[col.PROTOCOL] == name]
            if mine.empty:
                continue
            colour = style.color(name)
            if name in COMPARISON.subjects:
                line = exact_line(mine.iloc[0], grid)
            else:
                line = table1_variance(name, grid, d)
            ax.plot(grid, line, color=colour, lw=1.0)
            _points(ax, mine, col.EPSILON, colour, log_x=False)
        ax.set(yscale="log", xlabel=style.EPSILON_LABEL, ylabel="Var[f(v)] / n")
        ax.set_title(f"(a) against ε, d = {d}, k = 256, m = 1024")
    ax = axes[1]
    if len(by_m):
        epsilon = float(by_m[col.EPSILON].iloc[0])
        d = int(by_m[col.DOMAIN_SIZE].iloc[0])
        widths = np.unique(by_m[col.PROTOCOL_M].astype(int))
        for name in COMPARISON.reference:
            ax.axhline(float(table1_variance(name, epsilon, d)), color=style.color(name), lw=1.0)
        for name in COMPARISON.subjects:
            mine = by_m[by_m[col.PROTOCOL] == name]
            if mine.empty:
                continue
            colour = style.color(name)
            fine = np.unique(np.geomspace(widths.min(), widths.max(), 40).astype(int))
            try:
                line = exact_line(mine.iloc[0], epsilon, fine)
            except ValueError:  # a width the sketch refuses (a Hadamard one: not 2^j)
                fine, line = widths, exact_line(mine.iloc[0], epsilon, widths)
            ax.plot(fine, line, color=colour, lw=1.0)
            _points(ax, mine, col.PROTOCOL_M, colour, log_x=True)
        ax.set_xscale("log", base=2)
        ax.set(yscale="log", xlabel="sketch width m")
        ax.set_title(f"(b) against m, ε = {epsilon:g}, k = 256")
    handles = [style.key(n, style.color(n), lw=1.5) for n in names]
    handles += [
        *style.engine_handles(rows[col.ENGINE].unique()),
        style.key("exact variance", lw=1.0),
    ]
    return style.legend_right(figure, handles)


def claims(table: pd.DataFrame) -> list[ClaimCheck]:
    """The sketches' exact variance (with the collision term) against the trials."""
    rows = per_trial(table, METRIC)
    out = []
    for experiment, x in (("cms_variance", col.EPSILON), ("cms_width", col.PROTOCOL_M)):
        sketches = rows[col.PROTOCOL].isin(COMPARISON.subjects)
        mine = rows[(rows[col.EXPERIMENT] == experiment) & sketches]
        if mine.empty:
            continue
        means, exacts, ses, trials = [], [], [], []
        # one t statistic per engine: pooling both engines' rows into one mean would count
        # HCMS twice (its sampled engine draws the users' triples as its client does, from
        # the same stream, so its two engines' rows coincide) and halve the SE's variance
        for _, group in mine.groupby([col.PROTOCOL, x, col.ENGINE]):
            first = group.iloc[0]
            width = None if pd.isna(first.get(col.PROTOCOL_M)) else [int(first[col.PROTOCOL_M])]
            exacts.append(exact_line(first, first[col.EPSILON], width)[0])
            means.append(group[col.VALUE].mean())
            ses.append(group[col.VALUE].std() / np.sqrt(len(group)))
            trials.append(len(group))
        means, exacts, ses = np.array(means), np.array(exacts), np.array(ses)
        z = np.abs(means - exacts) / np.where(ses > 0, ses, np.nan)
        out.append(
            ClaimCheck(
                source=f"Apple 2017, {'/'.join(COMPARISON.subjects)} variance ({experiment})",
                paper="f(v) unbiased; Var = pure-protocol variance + collisions/(k(m-1))",
                ours=f"largest |mean - exact| over {len(means)} settings: {np.nanmax(z):.1f} SE "
                f"({min(trials)} trials each)",
                parts=Part(
                    "mean Var[f(v)]/n per (sketch, setting, engine)",
                    means,
                    WithinSE(
                        exacts,
                        ses,
                        alpha=FAMILY_ALPHA,
                        df=min(trials) - 1,
                        what="the exact variance with the collision term",
                    ),
                ),
                reason="mean squared error off the exact variance by more than sampling error",
            )
        )
    return out


FIGURE = FigureSpec(
    name="cms_variance",
    experiment=("cms_variance", "cms_width"),
    draw=draw,
    title="Apple's CMS and HCMS: Var/n against ε (beside OLH, OUE) and against m",
    caption=(
        "Var[f(v)]/n of the values nobody holds (all n = 2000 users on value 0, d = 1024). "
        "(a) against ε, CMS and HCMS with k = 256 hash functions and m = 1024 cells, beside "
        "OLH and OUE; (b) against the sketch width m at ε = 2. Lines: exact variances "
        "(USENIX'17 Table 1 for OLH and OUE; for the sketches the pure part with "
        "q* = q + (p - q)/m plus the collision term n(n-1)/(k(m-1)) of a shared hash "
        "family). Points: mean squared error / n over 20 trials, ± 2 standard errors; "
        "filled: sampled engine, open: reports engine (HCMS's sampled engine draws the "
        "same per-user triples as its reports, so with the same stream the two coincide)."
    ),
    claim=(
        "Apple 2017: CMS flips each of m signs w.p. 1/(1+e^{ε/2}) and HCMS one Hadamard "
        "coefficient w.p. 1/(1+e^ε); for large m their variances approach n(c_ε²-1)/4 "
        "(CMS, ≈ SUE's) and n c_ε² (HCMS, c_ε = (e^ε+1)/(e^ε-1))."
    ),
    quick=("n_trials=2", "hydra.sweeper.params.engine=sampled"),
    order=12.0,
    claims=claims,
)
