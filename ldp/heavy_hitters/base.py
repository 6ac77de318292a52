"""What every heavy-hitter protocol shares: its result, and the two engines' plumbing.

The *reports* engine gives each user a group at random and runs the real per-user
protocol on the group's values.  The *sampled* engine never materialises users: it
splits each distinct value's count across the groups with a multinomial (the law of the
same random group choice), aggregates the group's counts by prefix or segment, and asks
the frequency oracle for the candidates' estimates drawn from their exact distribution
(:meth:`ldp.oracles.FrequencyOracle.simulate_candidates`).  See DESIGN.md §2-3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ldp._validation import check_generator

Engine = Literal["sampled", "reports"]
ENGINES = ("sampled", "reports")


@dataclass(frozen=True)
class HeavyHitterResult:
    """The output of one heavy-hitter run.

    Attributes
    ----------
    identified : numpy.ndarray
        The identified values, highest estimate first, in the data set's representation.
    estimates : numpy.ndarray
        Their estimated counts among all n users (float), aligned with ``identified``.
    diagnostics : dict
        Per-step details: groups and their sizes, candidates per step, oracle queries.
    """

    identified: np.ndarray
    estimates: np.ndarray
    diagnostics: dict[str, Any] = field(default_factory=dict)


def check_engine(engine: object) -> str:
    """``engine`` must be "sampled" or "reports"."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    return str(engine)


def assign_groups(n: int, fractions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each of n users picks group i with probability ``fractions[i]`` (reports engine)."""
    rng = check_generator(rng)
    return rng.choice(len(fractions), size=n, p=np.asarray(fractions) / np.sum(fractions))


def split_counts(counts: np.ndarray, fractions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Split each distinct value's count across groups: a multinomial per value (sampled engine).

    Returns an int64 array of shape (groups, distinct values) whose columns sum to
    ``counts``; same law as :func:`assign_groups` applied to the users.  Drawn as
    successive binomials, so it costs O(groups x distinct values).
    """
    rng = check_generator(rng)
    probabilities = np.asarray(fractions, dtype=float) / np.sum(fractions)
    remaining = np.asarray(counts, dtype=np.int64).copy()
    mass_left = 1.0
    out = np.zeros((probabilities.shape[0], remaining.shape[0]), dtype=np.int64)
    for group, share in enumerate(probabilities[:-1]):
        chance = min(1.0, share / mass_left) if mass_left > 0 else 0.0
        out[group] = rng.binomial(remaining, chance)
        remaining -= out[group]
        mass_left -= share
    out[-1] = remaining
    return out


def row_keys(values: np.ndarray) -> np.ndarray:
    """A 1-D sortable view of values: integers as they are, word rows as opaque bytes."""
    array = np.asarray(values)
    if array.ndim == 1:
        return array
    rows = np.ascontiguousarray(array)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1])))[:, 0]


def aggregate(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge equal keys (e.g. values sharing a prefix), summing their counts.

    Returns the distinct keys (same representation as ``keys``) and their total counts.
    """
    unique, first, inverse = np.unique(row_keys(keys), return_index=True, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=counts, minlength=unique.shape[0])
    return np.asarray(keys)[first], totals.astype(np.int64)


def lookup(keys: np.ndarray, counts: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The count of each query among aggregated ``keys`` (0 where absent)."""
    sorted_keys = row_keys(keys)
    order = np.argsort(sorted_keys, kind="stable")
    sorted_keys = sorted_keys[order]
    wanted = row_keys(queries)
    position = np.searchsorted(sorted_keys, wanted)
    position = np.minimum(position, max(sorted_keys.shape[0] - 1, 0))
    found = sorted_keys.shape[0] > 0
    hit = (sorted_keys[position] == wanted) if found else np.zeros(wanted.shape, bool)
    return np.where(hit, np.asarray(counts)[order][position] if found else 0, 0).astype(np.int64)


def top(estimates: np.ndarray, size: int) -> np.ndarray:
    """Indices of the ``size`` largest estimates, largest first (ties: lower index first).

    A partition finds the cut-off in O(n); only the kept indices are sorted.  The result
    equals ``np.argsort(-estimates, kind="stable")[:size]``, ties included.
    """
    negated = -np.asarray(estimates, dtype=float)
    size = min(size, negated.shape[0])
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    cut = np.partition(negated, size - 1)[size - 1]
    above = np.flatnonzero(negated < cut)
    ties = np.flatnonzero(negated == cut)[: size - above.shape[0]]
    chosen = np.sort(np.concatenate([above, ties]))
    return chosen[np.argsort(negated[chosen], kind="stable")]
