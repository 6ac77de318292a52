"""Small synthetic data sets built in the tests (independent of the surrogate generators)."""

from __future__ import annotations

import numpy as np

from ldp.datasets.base import Dataset


def ranked_dataset(probabilities: np.ndarray, n: int, m: int, seed: int) -> Dataset:
    """n users over distinct random m-bit values whose j-th has probability p_j (exact counts
    drawn by one multinomial, so the data set itself is random but fixed by ``seed``)."""
    rng = np.random.default_rng(seed)
    high = 2**m - 1
    values = np.unique(
        rng.integers(0, high, size=3 * len(probabilities), dtype=np.uint64, endpoint=True)
    )
    rng.shuffle(values)
    values = values[: len(probabilities)]
    counts = rng.multinomial(n, probabilities / probabilities.sum())
    return Dataset(name="test", values=np.repeat(values, counts), m=m, source="synthetic")


def zipf(n: int, m: int, s: float = 1.5, support: int = 4096, seed: int = 0) -> Dataset:
    """Zipf(s) over ``support`` random m-bit values (PEM paper, Sec. V)."""
    return ranked_dataset(np.arange(1, support + 1, dtype=float) ** -s, n, m, seed)


def exponential(n: int, m: int, scale: float = 0.05, support: int = 2000, seed: int = 0):
    """f_j ∝ (1 - scale)^(j-1) over random m-bit values (PEM paper, Sec. VI-A)."""
    return ranked_dataset((1 - scale) ** np.arange(support, dtype=float), n, m, seed)
