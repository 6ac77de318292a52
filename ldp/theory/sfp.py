"""A model of what Apple's sequence fragment puzzle (SFP) identifies: its F1 and NCR.

[Apple] is the Differential Privacy Team, Apple, *Learning with Privacy at Scale* (2017),
"Private Sequence Fragment Puzzle"; [PEM] Wang, Li, Jha, *Locally Differentially Private
Heavy Hitter Identification* (Eq. (4), the utility score this model has the form of).
The protocol is :class:`ldp.heavy_hitters.sfp.SFP`.

SFP finds a value without a dictionary in two rounds.  At each fragment position α the
aggregator estimates every puzzle key H(v) ‖ v[α] and keeps the ``fragment_keep`` largest;
a value is *assembled* when its key is kept at every position (the hash joins the pieces,
and a combination whose own hash differs is dropped).  The assembled values are then
estimated with the whole-value reports and the k largest released.  So, for one public
hash H,

    P(v identified) = Π_α P(key_α(v) kept) × P(v among the k largest assembled),

the positions independent (disjoint users).  Each factor is a "top K of noisy counts"
event, taken here in its mean-field form: an estimate is Normal with its count as mean
and the oracle's exact variance at that count, and the K-th largest of the others is
replaced by the threshold τ at which the *expected* number of estimates above τ is K
(every key of the position counted: the data's own keys at their true counts, the unheld
ones at 0).  In the second round the candidates weigh by their chance of being assembled.

What the model leaves out: hash-consistent false combinations (a product of kept fragments
of different values that passes the hash check, about one in 2^b), which only take slots
from true values; and the variability of the K-th largest estimate around τ.  Its use is
to say, quantitatively, what "assembled from (hash, fragment) pairs" achieves if the
assembly loses nothing beyond the fragment oracles' noise: a run far below it would show a
protocol that assembles worse than its own pieces allow.

F1 = 2 TP / (k + R), TP = Σ_{j ≤ k} P(v_j identified), R = min(k, Σ_v P(v assembled)) the
values released; NCR = Σ_{j ≤ k} w_j P(v_j identified), w_j = (k + 1 - j) / (k(k+1)/2)
([PEM] Sec. IV-B1).  Both are averaged over the public hashes given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from ldp.validation import ParameterError

__all__ = ["PuzzleKeys", "puzzle_keys", "sfp_identification", "sfp_utility"]


@dataclass(frozen=True)
class PuzzleKeys:
    """A data set's distinct values, most frequent first, and under each public hash the
    puzzle keys they map to at every position, grouped by count: ``keys[s][α] = (levels,
    multiplicity, level_of)``, the distinct counts of the position's keys (over all users),
    how many keys have each, and the level of each value's key.  Depends on the protocol
    only through its fragments and hash bits (not on ε or k)."""

    counts: np.ndarray
    keys: tuple[tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...], ...]
    key_domains: tuple[int, ...]  #: 2^{b + s_α} per position


def puzzle_keys(protocol, words: np.ndarray, counts: np.ndarray, hash_seeds: Sequence[int]):
    """:class:`PuzzleKeys` of the distinct values ``words`` (word representation, as
    :func:`ldp.bits.to_words` gives) held by ``counts`` users each, under the public
    short hashes of ``hash_seeds`` (``protocol``: an :class:`~ldp.heavy_hitters.sfp.SFP`)."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 1 or counts.shape[0] != np.asarray(words).shape[0] or not len(counts):
        raise ValueError("counts must give one positive count per distinct value")
    if counts.min() < 1:
        raise ValueError(f"counts must be positive, got {int(counts.min())}")
    order = np.argsort(-counts, kind="stable")
    words, counts = np.asarray(words)[order], counts[order]
    per_seed = []
    for seed in hash_seeds:
        hashes = protocol.short_hash(words, np.uint64(seed))
        positions = []
        for bound in protocol.bounds:
            _, key_of = np.unique(protocol.puzzle_keys(words, hashes, bound), return_inverse=True)
            key_counts = np.bincount(key_of.ravel(), weights=counts)
            levels, level_of_key, multiplicity = np.unique(
                key_counts, return_inverse=True, return_counts=True
            )
            positions.append((levels, multiplicity, level_of_key.ravel()[key_of.ravel()]))
        per_seed.append(tuple(positions))
    domains = tuple(2 ** (protocol.hash_bits + length) for _, length in protocol.bounds)
    return PuzzleKeys(counts, tuple(per_seed), domains)


def _count_sd(oracle, n_users: float, counts: np.ndarray) -> np.ndarray:
    """Standard deviation of each estimated count: the oracle's exact variance, affine in
    the value's own count for a pure oracle (interpolated between 0 and n exactly)."""
    n = int(round(n_users))
    low, high = oracle.variance(n, 0), oracle.variance(n, n)
    return np.sqrt(low + (high - low) * np.clip(counts, 0, n) / max(n, 1))


def _above(tau: float, means: np.ndarray, sds: np.ndarray) -> np.ndarray:
    """P(Normal(means, sds) > tau)."""
    return special.ndtr((means - tau) / sds)


def _threshold(expected_above, low: float, high: float) -> float:
    """τ in [low, high] with ``expected_above(τ)`` = 0 (the mean-field top-K threshold)."""
    return optimize.brentq(expected_above, low, high, xtol=1e-9 * max(abs(low), abs(high), 1))


def _kept(
    levels: np.ndarray,
    multiplicity: np.ndarray,
    sds: np.ndarray,
    kept: float,
    zeros: int,
    zero_sd: float,
) -> np.ndarray:
    """P(a key of each count level among the ``kept`` largest estimates), mean-field: above
    the τ at which the expected number of estimates above it (``zeros`` more at mean 0) is
    ``kept``; 1 when there are no more keys than ``kept``."""
    if multiplicity.sum() + zeros <= kept:
        return np.ones_like(levels)

    def excess(tau: float) -> float:
        above = multiplicity @ _above(tau, levels, sds)
        return above + zeros * float(_above(tau, np.zeros(1), np.array([zero_sd]))[0]) - kept

    spread = 40 * max(float(sds.max(initial=0.0)), zero_sd)
    tau = _threshold(excess, float(levels.min(initial=0.0)) - spread, levels.max() + spread)
    return _above(tau, levels, sds)


def _weighted_top(means: np.ndarray, sds: np.ndarray, weights: np.ndarray, kept: int):
    """As :func:`_kept` for candidates present with probability ``weights`` (those below
    1e-12 are left out of τ: they cannot take a slot)."""
    if weights.sum() <= kept:
        return weights.copy()
    live = weights > 1e-12
    mu, sd, w = means[live], sds[live], weights[live]

    def excess(tau: float) -> float:
        return float(w @ _above(tau, mu, sd)) - kept

    spread = 40 * float(sd.max())
    tau = _threshold(excess, float(mu.min()) - spread, float(mu.max()) + spread)
    return weights * _above(tau, means, sds)


def _assembled(protocol, keys: PuzzleKeys, n_users: int) -> np.ndarray:
    """P(v assembled) per public hash: its key kept at every position (the first round)."""
    fractions = np.asarray(protocol.group_fractions(len(protocol.bounds)), dtype=float)
    partition = protocol.budget == "partition"
    rows = []
    for positions in keys.keys:
        assembled = np.ones(len(keys.counts))
        for alpha, (levels, multiplicity, level_of) in enumerate(positions):
            oracle = protocol.fragment_oracle(alpha)
            n_alpha = n_users * fractions[alpha + int(partition)]
            means = levels * (n_alpha / n_users)
            kept = _kept(
                means,
                multiplicity,
                _count_sd(oracle, n_alpha, means),
                protocol.fragment_keep,
                zeros=keys.key_domains[alpha] - int(multiplicity.sum()),
                zero_sd=float(_count_sd(oracle, n_alpha, np.zeros(1))[0]),
            )
            assembled *= kept[level_of]
        rows.append(assembled)
    return np.array(rows)


def _identified(protocol, keys: PuzzleKeys, n_users: int, assembled: np.ndarray) -> np.ndarray:
    """P(v identified) per public hash, from P(v assembled): the second round."""
    fractions = np.asarray(protocol.group_fractions(len(protocol.bounds)), dtype=float)
    n_value = n_users * (fractions[0] if protocol.budget == "partition" else 1.0)
    value_counts = keys.counts * (n_value / n_users)
    value_sd = _count_sd(protocol.value_oracle(), n_value, value_counts)
    return np.array([_weighted_top(value_counts, value_sd, a, protocol.k) for a in assembled])


def sfp_identification(protocol, keys: PuzzleKeys, n_users: int) -> np.ndarray:
    """P(v identified) for every distinct value of ``keys`` (most frequent first), one row
    per public hash: the module docstring's product of mean-field top-K events."""
    if protocol.output != "top_k":
        raise ParameterError("output", protocol.output, "'top_k' (the model's release)")
    return _identified(protocol, keys, n_users, _assembled(protocol, keys, n_users))


def sfp_utility(protocol, keys: PuzzleKeys, n_users: int, goal: str = "f1") -> float:
    """The model's F1 or NCR (module docstring), averaged over the public hashes."""
    if protocol.output != "top_k":
        raise ParameterError("output", protocol.output, "'top_k' (the model's release)")
    if goal not in ("f1", "ncr"):
        raise ValueError(f"goal must be 'f1' or 'ncr', got {goal!r}")
    k = protocol.k
    if len(keys.counts) < k:
        raise ValueError(f"the data hold {len(keys.counts)} distinct values, fewer than k = {k}")
    assembled = _assembled(protocol, keys, n_users)
    top = _identified(protocol, keys, n_users, assembled)[:, :k]
    if goal == "ncr":
        weights = np.arange(k, 0, -1) / (k * (k + 1) / 2)
        return float((top @ weights).mean())
    released = np.minimum(k, assembled.sum(axis=1))
    return float((2 * top.sum(axis=1) / (k + released)).mean())
