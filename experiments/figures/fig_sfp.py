"""Apple's sequence fragment puzzle (SFP) beside [PEM] Figs. 5 and 6: F1 and NCR.

The PEM, SPM and MCM points are those figures' own results (``fig_pem_fig5``,
``fig_pem_fig6``: their configs are read, not run again); SFP
(:class:`ldp.heavy_hitters.sfp.SFP`) comes from ``sfp_eps.yaml`` and ``sfp_k.yaml``.
Drawn with the Section VI grid of :mod:`experiments.figures.pem_section6`.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from experiments import columns as col
from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from experiments.figures.spec import ClaimCheck, FigureSpec
from experiments.figures.tolerance import Band, Part, WithinSE, bonferroni_z
from experiments.population import load_dataset
from experiments.results import figure_config, summary
from ldp import bits
from ldp.theory import sfp as sfp_theory

#: The public short hashes the model averages over (a run draws its own).
MODEL_HASHES = (0, 1, 2, 3)


def _legend(figure: plt.Figure) -> plt.Figure:
    """One legend over the grid with every protocol drawn (SFP included)."""
    for legend in list(figure.legends):
        legend.remove()
    seen = style.drawn_handles(figure.axes)
    series = figure_config("sfp_eps").series  # both figures' legend order
    labels = [sec6.protocol_label(n) for n in series if sec6.protocol_label(n) in seen]
    figure.legend(
        [seen[label] for label in labels],
        labels,
        loc="lower center",
        ncol=len(labels),
        bbox_to_anchor=(0.5, -0.02),
    )
    return figure


def draw_eps(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 (top) and NCR (bottom) against ε at k = 16."""
    table = table[np.isclose(table[col.K], 16)]
    return _legend(sec6.utility_grid(table, col.EPSILON, style.EPSILON_LABEL))


def draw_k(table: pd.DataFrame) -> plt.Figure:
    """2 x 3 panels: F1 and NCR against k at ε = 2 (log2 axis)."""
    table = table[np.isclose(table[col.EPSILON], 2.0)]
    return _legend(sec6.utility_grid(table, col.K, col.K, log2_x=True))


def _dataset_node(row: pd.Series) -> dict:
    """A setting's data-set config node, from its ``dataset.*`` columns."""
    node = {}
    for column, value in row.items():
        if not str(column).startswith("dataset.") or value is None or pd.isna(value):
            continue
        value = value.item() if isinstance(value, np.generic) else value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        node[str(column).removeprefix("dataset.")] = value
    return node


#: (data set, fragments, hash bits) -> (PuzzleKeys, n): built once per process.
_KEYS: dict[tuple, tuple] = {}


def _distinct(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values (integers, or word rows) in increasing order and their counts:
    ``np.unique(words, axis=0, return_counts=True)`` for rows, which sorts them as bytes
    (8x slower on URL's 1.2 x 10^6 three-word rows) where a lexsort of the words suffices."""
    if words.ndim == 1 or words.shape[0] == 0:
        return np.unique(words, axis=0 if words.ndim == 2 else None, return_counts=True)
    rows = words[np.lexsort(words.T[::-1])]  # first word most significant
    first = np.concatenate(([0], np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1))
    return rows[first], np.diff(np.append(first, rows.shape[0]))


def model_f1(row: pd.Series) -> float:
    """The model's F1 (:func:`ldp.theory.sfp.sfp_utility`) for a setting's protocol and data
    (a data set whose loader fixes m records it as ``effective.m`` only).  The puzzle keys
    depend on the protocol only through its fragments and hash bits: built once for them."""
    node = _dataset_node(row)
    if pd.isna(row.get(col.DATASET_M)):
        row = row.copy()
        row[col.DATASET_M] = row["effective.m"]
    protocol = sec6.built(row)
    key = (json.dumps(node, sort_keys=True), protocol.bounds, protocol.hash_bits)
    if key not in _KEYS:
        data = load_dataset(node)
        distinct, counts = _distinct(bits.to_words(np.asarray(data.values), data.m))
        keys = sfp_theory.puzzle_keys(protocol, distinct, counts, MODEL_HASHES)
        _KEYS[key] = (keys, data.n)
    keys, n = _KEYS[key]
    return sfp_theory.sfp_utility(protocol, keys, n, "f1")


def claims_for(by: str, fixed: str):
    """SFP's rows: it assembles heavy hitters without a dictionary, read twice: its mean F1
    above 0 beyond sampling error on every data set at some ``by`` of the grid, and its
    mean F1 on the model of its rounds (:mod:`ldp.theory.sfp`) at every point."""

    def claims(table: pd.DataFrame) -> list[ClaimCheck]:
        name = figure_config("sfp_eps").series[-1]
        rows = table[table[col.PROTOCOL] == name]
        if rows.empty:
            return []
        f1 = summary(rows, "f1", list(dict.fromkeys([col.DATASET, by, col.K])))
        means, se = sec6.wide(f1.assign(series=name), [col.DATASET, by], column="series")
        known = means[name].dropna()
        settings = rows.drop_duplicates(col.CONFIG_HASH).set_index([col.DATASET, by], drop=False)
        every = known.index
        model = pd.Series([model_f1(settings.loc[point]) for point in every], index=every)
        runs = int(rows.groupby(col.CONFIG_HASH)[col.TRIAL].nunique().min())
        # an SE of 0 (every run alike) is raised to one value in one run, 1/(k runs)
        floor = 1.0 / (settings.loc[every, col.K].to_numpy(dtype=float) * runs)
        model_se = np.maximum(se[name].loc[every].to_numpy(), floor)
        # per data set, the point furthest above 0 in SE; z covers the choice among them all
        t = known / model_se
        points = pd.MultiIndex.from_tuples([s.idxmax() for _, s in t.groupby(level=0)])
        mean, err = means.loc[points, name], pd.Series(model_se, index=every).loc[points]
        z = bonferroni_z(len(every), 0.01, one_sided=True, df=sec6.dof(f1))
        symbol = "ε" if by == col.EPSILON else col.K
        gaps = (known - model) / model_se
        worst = gaps.abs().idxmax()
        return [
            ClaimCheck(
                source=f"Apple 2017 (SFP), beside [PEM] Sec. VI ({fixed})",
                paper="frequent values are assembled from (hash, fragment) pairs without a "
                "dictionary",
                ours=f"{sec6.runs_note(rows)}; {name}'s mean F1 ± 1 SE at the {symbol} where "
                "it is furthest above 0 in SE, per data set: "
                + ", ".join(
                    f"{d} {symbol} = {x:g}: {m:.3f} ± {e:.3f} (model {model.loc[(d, x)]:.3f})"
                    for (d, x), m, e in zip(points, mean, err, strict=True)
                )
                + f"; against the model at all {len(every)} points: mean |run − model| "
                f"{(known - model).abs().mean():.3f}, largest {abs(gaps[worst]):.1f} SE at "
                f"{worst[0]} {symbol} = {worst[1]:g} ({known[worst]:.3f} vs {model[worst]:.3f})",
                parts=(
                    Part(
                        f"{name}'s mean F1 in SE, per data set",
                        (mean / err).to_numpy(),
                        Band(
                            z,
                            reading=f"'assembled' read as F1 above 0 beyond {z:.1f} SE "
                            f"at some {symbol} (one-sided, family-wise 0.01 over the "
                            f"{len(every)} points it is chosen from)",
                        ),
                    ),
                    Part(
                        f"{name}'s mean F1 per (data set, {symbol})",
                        known.to_numpy(),
                        WithinSE(
                            model.to_numpy(),
                            model_se,
                            alpha=0.01,
                            df=sec6.dof(f1),
                            what="the model of its two rounds (ldp.theory.sfp)",
                        ),
                        otherwise="partly",
                    ),
                ),
                note="The model: a value is found when its puzzle key is among the kept ones "
                "at every position and its whole-value estimate among the k largest of those "
                "assembled (mean-field top-K events, the oracles' exact variances, the data's "
                f"own keys under {len(MODEL_HASHES)} public hashes). 'Assembled' read "
                "quantitatively: the puzzle loses nothing beyond its pieces' noise. An SE of "
                "0 (every run alike) is raised to one value in one run, 1/(k runs).",
                reason=f"{name} finds no heavy hitter beyond sampling error on some data set, "
                "or its F1 is off the model of its rounds",
            )
        ]

    return claims


CAPTION = (
    "SFP (Apple 2017's sequence fragment puzzle over the m-bit values: an 8-bit hash of "
    "the whole value with one fragment per user, fragments as long as 2^20 queries allow, "
    "OLH, 10% of the users for the whole-value test, top-k output) beside PEM and the "
    "improved SPM and MCM of [PEM] Sec. VI, same data and settings (URL and AOL are the "
    "calibrated surrogates). Points: mean of 10 runs, error bars ± 1 standard deviation, "
    "sampled engine."
)

FIGURES = [
    FigureSpec(
        name="sfp_eps",
        experiment=("pem_fig5", "pem_fig5_spm", "pem_fig5_spm_url", "sfp_eps"),
        draw=draw_eps,
        title="SFP beside PEM Fig. 5: F1 and NCR against ε (k = 16)",
        caption=CAPTION,
        claim=(
            "Apple 2017 (SFP): frequent values are assembled from (hash, fragment) pairs "
            "without a dictionary; here compared with [PEM] Sec. VI's protocols."
        ),
        quick=sec6.QUICK_FIG5,
        order=20.6,
        claims=claims_for(col.EPSILON, "k = 16"),
    ),
    FigureSpec(
        name="sfp_k",
        experiment=("pem_fig6", "pem_fig6_spm", "pem_fig6_spm_url", "sfp_k"),
        draw=draw_k,
        title="SFP beside PEM Fig. 6: F1 and NCR against k (ε = 2)",
        caption=CAPTION,
        claim="Apple 2017 (SFP) against [PEM] Sec. VI-B2's protocols as k grows.",
        quick=sec6.QUICK_FIG6,
        order=21.6,
        claims=claims_for(col.K, "ε = 2"),
    ),
]
