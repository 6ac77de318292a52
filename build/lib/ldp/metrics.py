"""Utility metrics of heavy-hitter identification (PEM paper, Sec. IV-B1 and VI-B6).

Values may be integers (1-D arrays) or fixed-width bytes; multi-word integer arrays
(2-D) are compared row by row.  ``true_top`` is always ordered by true frequency, most
frequent first.
"""

from __future__ import annotations

import numpy as np


def _keys(values: np.ndarray) -> list:
    """Hashable keys for membership tests, whatever the value representation."""
    array = np.asarray(values)
    if array.ndim == 2:
        return [row.tobytes() for row in np.ascontiguousarray(array)]
    return array.tolist()


def identified_mask(true_top: np.ndarray, identified: np.ndarray) -> np.ndarray:
    """Per-value identification: whether each value of ``true_top`` was identified."""
    found = set(_keys(identified))
    return np.array([key in found for key in _keys(true_top)], dtype=bool)


def f1(true_top: np.ndarray, identified: np.ndarray) -> float:
    """F1 = 2PR/(P+R) with P = |C_T ∩ C_g|/|C_g|, R = |C_T ∩ C_g|/|C_T| ([PEM] Sec. IV-B1).

    0 when nothing is identified.
    """
    hits = int(identified_mask(true_top, identified).sum())
    n_true, n_found = len(_keys(true_top)), len(set(_keys(identified)))
    if hits == 0 or n_found == 0:
        return 0.0
    precision, recall = hits / n_found, hits / n_true
    return 2 * precision * recall / (precision + recall)


def ncr(true_top: np.ndarray, identified: np.ndarray) -> float:
    """Normalised cumulative rank ([PEM] Sec. IV-B1).

    The j-th most frequent of the k true values scores k + 1 - j; NCR is the score of the
    identified ones divided by k(k+1)/2.
    """
    mask = identified_mask(true_top, identified)
    k = mask.shape[0]
    scores = np.arange(k, 0, -1)
    return float(scores[mask].sum() / (k * (k + 1) / 2)) if k else 0.0


def squared_error(
    true_top: np.ndarray,
    true_counts: np.ndarray,
    identified: np.ndarray,
    estimates: np.ndarray,
) -> float:
    """Var = mean over v in C_T ∩ C_g of (n_v - ñ_v)^2 ([PEM] Sec. VI-B6); NaN if none found."""
    estimate_of = dict(zip(_keys(identified), np.asarray(estimates, dtype=float), strict=True))
    errors = [
        (count - estimate_of[key]) ** 2
        for key, count in zip(_keys(true_top), np.asarray(true_counts, float), strict=True)
        if key in estimate_of
    ]
    return float(np.mean(errors)) if errors else float("nan")
