"""SVSM: set-value item mining, the top-k items of users' sets (S&P'18, Sec. V).

Wang, Li, Jha, *Locally Differentially Private Frequent Itemset Mining*, IEEE S&P 2018.
The users are split at random into three groups, each user in one, so every user spends
the whole ε once:

1. *candidates*: the first group runs :class:`~ldp.sets.psfo.PSFO` with ℓ = 1 over the
   whole domain; the 2k items with the largest estimates are the candidates C;
2. *length*: the second group reports |v ∩ C| (in {0, ..., |C|}) with OLH; ℓ is the
   smallest length such that the estimated share of users with 1 <= |v ∩ C| <= ℓ among
   those with |v ∩ C| >= 1 reaches ``percentile`` (0.9), at most ``max_ell``;
3. *estimates*: the third group runs PSFO with that ℓ (GRR or OLH, adaptive) over C, each
   user's set intersected with C; the estimates are scaled to the whole population and
   divided by ``percentile`` (the share of users the chosen ℓ does not truncate); the k
   largest are the answer.

The group sizes (0.4, 0.1, 0.5 of the users), the 0.9 percentile, the cap of 30 on ℓ and
the division by the percentile are those of the authors' released code; the division
corrects the count of an item held mostly by users with |v ∩ C| <= ℓ only on average, so
SVSM's estimates are biased (its ranking is what it is built for).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.oracles.local_hashing import OLH
from ldp.registry import register
from ldp.sets.base import (
    ItemsResult,
    SetProtocol,
    check_engine,
    check_k,
    generator,
    ranked,
    restrict,
)
from ldp.sets.psfo import PSFO
from ldp.validation import ParameterError, check_int

#: The share of users in each phase (candidates, length, estimates): the authors' code.
SVSM_PHASES = (0.4, 0.1, 0.5)


def length_percentile(counts: np.ndarray, percentile: float, cap: int) -> int:
    """The smallest ℓ >= 1 whose estimated share of lengths 1..ℓ among lengths >= 1 reaches
    ``percentile`` (negative estimates read as 0), at most ``cap``; 1 when no length >= 1
    has a positive estimate."""
    positive = np.clip(np.asarray(counts, dtype=float)[1:], 0.0, None)
    total = positive.sum()
    if total <= 0:
        return 1
    reached = np.flatnonzero(np.cumsum(positive) >= percentile * total)
    return int(min(reached[0] + 1, cap))


@register(kind="set", label="SVSM", color="#31a354", order=4020)
@dataclass(frozen=True, kw_only=True)
class SVSM(SetProtocol):
    """Set-value item mining (module docstring).

    Parameters
    ----------
    epsilon, domain_size :
        The budget ε (each user spends it once) and the number d of items.
    percentile : float
        The share of users (by |v ∩ C|) the padding length must cover, in (0, 1].
    max_ell : int
        The largest padding length phase 2 may choose.
    """

    name: ClassVar[str] = "SVSM"
    capabilities: ClassVar[Capabilities] = Capabilities(closed_form_variance=False)

    percentile: float = 0.9
    max_ell: int = 30

    def __post_init__(self) -> None:
        PSFO(epsilon=self.epsilon, domain_size=self.domain_size)  # checks ε and d
        percentile = float(self.percentile)
        if not 0.0 < percentile <= 1.0:
            raise ParameterError("percentile", self.percentile, "in (0, 1]")
        object.__setattr__(self, "percentile", percentile)
        object.__setattr__(self, "max_ell", check_int(self.max_ell, "max_ell", minimum=1))

    def groups(self, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """The users of each phase: a uniformly random split in the ratio of SVSM_PHASES."""
        sizes = np.floor(np.array(SVSM_PHASES) * n).astype(np.int64)
        sizes[-1] = n - sizes[:-1].sum()
        order = rng.permutation(n)
        return np.split(order, np.cumsum(sizes)[:-1])

    def top_items(
        self, sets: Any, k: int, rng: np.random.Generator, engine: str = "reports"
    ) -> ItemsResult:
        """The three phases (module docstring); ``engine="sampled"`` draws each oracle's
        estimates from their law instead of making reports."""
        k, engine = check_k(k, self.domain_size), check_engine(engine)
        rng = generator(rng)
        offsets, items = self.sets(sets)
        n = offsets.shape[0] - 1
        first, second, third = (_take(offsets, items, users) for users in self.groups(n, rng))
        size = min(2 * k, self.domain_size)
        phase1 = PSFO(epsilon=self.epsilon, domain_size=self.domain_size, ell=1)
        candidates = ranked(_run(phase1, first, rng, engine), size).items
        c_offsets, c_items = restrict(*second, candidates)
        lengths = np.diff(c_offsets)
        length_oracle = OLH(epsilon=self.epsilon, domain_size=size + 1)
        if engine == "sampled":
            length_counts = length_oracle.simulate(np.bincount(lengths, minlength=size + 1), rng)
        else:
            length_counts = length_oracle.estimate(length_oracle.perturb(lengths, rng))
        ell = length_percentile(length_counts, self.percentile, self.max_ell)
        phase3 = PSFO(epsilon=self.epsilon, domain_size=max(size, 2), ell=ell)
        estimates = _run(phase3, restrict(*third, candidates), rng, engine)[:size]
        users3 = third[0].shape[0] - 1
        scale = n / max(users3, 1) / self.percentile
        return ranked(estimates * scale, k, candidates)


class _Sets:
    """(offsets, items) as the set protocols read them."""

    def __init__(self, offsets: np.ndarray, items: np.ndarray) -> None:
        self.offsets, self.items = offsets, items


def _take(
    offsets: np.ndarray, items: np.ndarray, users: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The sets of ``users`` (in that order) as (offsets, items)."""
    users = np.sort(users)
    sizes = np.diff(offsets)[users]
    starts = offsets[:-1][users]
    new = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    index = np.repeat(starts - new[:-1], sizes) + np.arange(new[-1])
    return new, items[index]


def _run(
    psfo: PSFO, sets: tuple[np.ndarray, np.ndarray], rng: np.random.Generator, engine: str
) -> np.ndarray:
    """PSFO's estimate of every item of its domain on these sets, with either engine."""
    data = _Sets(*sets)
    if engine == "sampled":
        return psfo.simulate(data, rng)
    return psfo.estimate(psfo.perturb(data, rng))
