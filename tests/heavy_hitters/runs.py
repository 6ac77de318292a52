"""Repeated runs of a heavy-hitter protocol and the one-sided comparison the tests make."""

from __future__ import annotations

import numpy as np
from scipy import stats

from ldp import metrics
from ldp.datasets.base import Dataset


def f1_runs(protocol, data: Dataset, runs: int, k: int = 16, first_seed: int = 0) -> np.ndarray:
    """F1 against the true top ``k`` of ``runs`` runs, run s seeded ``first_seed + s``."""
    top = data.top_k(k)
    return np.array(
        [
            metrics.f1(top, protocol.run(data, np.random.default_rng(first_seed + s)).identified)
            for s in range(runs)
        ]
    )


def assert_greater(better: np.ndarray, worse: np.ndarray, alpha: float) -> None:
    """One-sided Welch test that ``better`` has the larger mean, at false-alarm rate ``alpha``."""
    test = stats.ttest_ind(better, worse, equal_var=False, alternative="greater")
    assert test.pvalue < alpha, (better.mean(), worse.mean(), test.pvalue)
