"""Synthetic rank-frequency data sets of the PEM paper: Zipf, "zipf(-20)" and exponential.

Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*:
Section V uses Zipf's law, f_j proportional to 1 / j^1.5, over random m-bit values, and
"zipfs(-20)", the same with "the most frequent 20 values dropped" (Section V-B);
Section VI-A uses an exponential (geometric) distribution with scale 0.05, n = 10^6,
m = 64. The heavy hitters' values are random.

Both are built the same way: probabilities p_j over a finite number of ranks (the
*support*), one multinomial draw of the n users' rank counts, distinct uniformly random
m-bit values assigned to the ranks, and the users shuffled. 10^6 users take a few tens of
milliseconds.
"""

from __future__ import annotations

import numpy as np

from ldp.validation import check_int

__all__ = [
    "distinct_random_values",
    "exponential_probabilities",
    "rank_counts",
    "zipf_probabilities",
]

#: Default number of Zipf ranks. At s = 1.5 the ranks beyond 2**20 would hold
#: sum_{j > 2^20} j^-1.5 / zeta(1.5) ~ 2 (2^20)^-0.5 / 2.612 = 0.075% of the mass, so
#: truncating there rescales every frequency by less than 1.001, well inside the sampling
#: noise of any top-k frequency at n = 10^6 (about 1.3% relative for the 16th).
ZIPF_SUPPORT = 2**20
#: Default number of exponential ranks: 0.95^1024 ~ 1.6e-23 of the mass lies beyond.
EXPONENTIAL_SUPPORT = 1024


def zipf_probabilities(s: float, support: int, drop_top: int = 0) -> np.ndarray:
    """p_j proportional to (j + drop_top)^-s for j = 1 .. support (PEM, Section V).

    With ``drop_top`` = d the d most frequent ranks of Zipf(s) are removed and the rest
    renormalised: "zipfs(-20)" of Section V-B is ``drop_top=20``.
    """
    if not s > 0:
        raise ValueError(f"s must be > 0, got {s}")
    ranks = np.arange(drop_top + 1, drop_top + support + 1, dtype=float)
    weights = ranks ** (-float(s))
    return weights / weights.sum()


def exponential_probabilities(scale: float, support: int) -> np.ndarray:
    """p_j = scale (1 - scale)^(j - 1), j = 1 .. support, renormalised (PEM, Section VI-A).

    The paper's "exponential (geometric) distribution with scale 0.05" read as rank
    frequencies: f_1 = 0.05 and f_16 = 0.05 * 0.95^15 ~ 0.023, the threshold that Section
    VI-B3 calls "around the frequency of the 16th most frequent value".
    """
    if not 0 < scale < 1:
        raise ValueError(f"scale must be in (0, 1), got {scale}")
    weights = scale * (1.0 - scale) ** np.arange(support, dtype=float)
    return weights / weights.sum()


def rank_counts(n: int, probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """How many of n users fall on each rank: one multinomial draw, int64."""
    n = check_int(n, "n", minimum=1)
    return rng.multinomial(n, probabilities).astype(np.int64)


def distinct_random_values(k: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """k distinct m-bit values, uniformly random without replacement, as np.uint64.

    Exact: for small domains a sample without replacement; for large ones uniform draws
    in which repeated values are redrawn until all are distinct (order is kept, so value j
    does not depend on later draws beyond the rare redraws).
    """
    k = check_int(k, "k", minimum=0)
    m = check_int(m, "m", minimum=1, maximum=64)
    if k > 2**m:
        raise ValueError(f"cannot draw {k} distinct values of m={m} bits")
    if m <= 26:
        return rng.choice(2**m, size=k, replace=False).astype(np.uint64)
    high = np.uint64(2**m - 1)
    values = rng.integers(0, high, size=k, dtype=np.uint64, endpoint=True)
    while True:
        _, first = np.unique(values, return_index=True)
        if len(first) == k:
            return values
        repeated = np.ones(k, dtype=bool)
        repeated[first] = False
        values[repeated] = rng.integers(
            0, high, size=int(repeated.sum()), dtype=np.uint64, endpoint=True
        )


#: The laws of :func:`bounded_values`.
BOUNDED_LAWS = ("centre", "ends", "uniform")


def bounded_values(n: int, law: str) -> np.ndarray:
    """n real values in [-1, 1] for mean estimation (:mod:`ldp.numeric`), deterministic.

    ``centre``: every user holds 0 (Duchi's worst case, PM's best); ``ends``: the first
    half holds -1, the rest +1 (PM's worst case, Duchi's best); ``uniform``: n evenly
    spaced values from -1 to 1.  Each mechanism's Var[t*|t] is affine in t², so its worst
    case over [-1, 1] is met on ``centre`` or on ``ends``.

    >>> bounded_values(4, "ends").tolist()
    [-1.0, -1.0, 1.0, 1.0]
    """
    from ldp.validation import check_choice, check_int

    n = check_int(n, "n", minimum=1)
    check_choice(law, "law", BOUNDED_LAWS)
    if law == "centre":
        return np.zeros(n)
    if law == "ends":
        return np.where(np.arange(n) < n // 2, -1.0, 1.0)
    return np.linspace(-1.0, 1.0, n)
