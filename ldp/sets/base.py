"""What every protocol over item sets shares: its input, the padded sample, the result.

A user holds a *set* of items of the domain {0, ..., d-1} (a Kosarak transaction), not one
value.  The protocols of this package take the users' sets as a
:class:`ldp.datasets.Transactions` (CSR: ``offsets`` and ``items``), or, for a handful of
users such as the auditor's (:mod:`ldp.audit`) copies of one input, as a 2-D integer
array whose rows are the sets padded with -1 (:func:`as_sets` reads both).

Padding and sampling (Wang, Li, Jha, *Locally Differentially Private Frequent Itemset
Mining*, IEEE S&P 2018, Sec. IV; the "sampling randomizer" of Qin et al., CCS 2016, before
it): a user whose set v holds fewer than ℓ items pads it with the dummy items
⊥_|v|, ..., ⊥_{ℓ-1} (the values d, ..., d+ℓ-1 of the padded domain), so that the padded set
has max(|v|, ℓ) distinct elements, and draws one of them uniformly
(:func:`padded_sample`).  Item x of v is drawn with probability 1/max(|v|, ℓ).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldp import budget
from ldp.oracles.base import PureOracle
from ldp.oracles.direct import GRR
from ldp.oracles.local_hashing import OLH
from ldp.reports import wrap_methods
from ldp.validation import ParameterError, check_generator, check_int

#: The oracles of a per-item protocol's reports, and "adaptive" (the protocol's rule).
ORACLE_CHOICES = ("adaptive", "GRR", "OLH")
#: The largest padding length: ℓ dummies widen the domain, and ℓ scales the variance.
MAX_PADDING = 1 << 16

__all__ = [
    "ItemsResult",
    "SetProtocol",
    "as_sets",
    "padded_sample",
    "PerItemProtocol",
    "kept_weights",
    "padded_weights",
    "restrict",
]


#: Bytes :func:`as_sets` holds per entry of a padded row (its int64 copy, the presence mask,
#: the sorted copy, the items and the checks' temporaries: 27-28 B measured at 10^6 rows of
#: 1 to 16 entries), and per item of a Transactions (the user index and the checks' masks).
ROW_ENTRY_BYTES, ITEM_BYTES = 32, 16


def check_sets_size(entries: int, per_entry: int, users: int, what: str) -> None:
    """Refuse, naming ``sets``, ``entries`` entries of ``users`` users' sets that would take
    more than the memory budget at ``per_entry`` bytes each, before any is touched."""
    most = budget.current().memory_bytes // per_entry
    budget.check_memory(
        "sets",
        f"{users} users' sets of {entries} entries",
        f"at most {most:,} entries per call (split the users into chunks)",
        float(per_entry) * entries,
        what,
    )


def as_sets(sets: Any, domain_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, items) of users' sets, checked: items in [0, d), distinct within a set.

    ``sets`` is a :class:`ldp.datasets.Transactions` (anything with ``offsets`` and
    ``items``), or a 2-D integer array with one row per user, the set's items followed by
    -1 (rows of the auditor's copies of one input).  Refused, naming ``sets``, when
    checking them would take more than the memory budget (:data:`ROW_ENTRY_BYTES`,
    :data:`ITEM_BYTES`).
    """
    if hasattr(sets, "offsets") and hasattr(sets, "items"):
        users = max(int(np.shape(sets.offsets)[0]) - 1, 0)
        check_sets_size(int(np.size(sets.items)), ITEM_BYTES, users, "checking the sets")
        offsets = np.asarray(sets.offsets, dtype=np.int64)
        items = np.asarray(sets.items, dtype=np.int64)
        held = getattr(sets, "domain_size", domain_size)
        if held > domain_size:
            raise ParameterError(
                "domain_size",
                domain_size,
                f">= the data's domain size {held}",
                "every item of the data must lie in the protocol's domain",
            )
    else:
        rows = np.asarray(sets)
        if rows.ndim != 2 or rows.dtype.kind not in "iu":
            raise TypeError(
                "sets must be a Transactions or a 2-D integer array of rows padded with -1, "
                f"got {type(sets).__name__} of shape {np.shape(sets)}"
            )
        entries, users = int(rows.size), int(rows.shape[0])
        check_sets_size(entries, ROW_ENTRY_BYTES, users, "reading the padded rows")
        rows = rows.astype(np.int64, copy=False)
        if np.any(rows < -1):
            raise ValueError("a padded row holds items >= 0 and -1 for 'no item'")
        present = rows >= 0
        sizes = present.sum(axis=1)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        ordered = np.sort(np.where(present, rows, np.iinfo(np.int64).max), axis=1)
        items = ordered[np.arange(rows.shape[1]) < sizes[:, None]]
    if offsets.ndim != 1 or offsets.shape[0] < 1 or offsets[0] != 0:
        raise ValueError("offsets must be a 1-D array starting at 0")
    if np.any(np.diff(offsets) < 0) or offsets[-1] != items.shape[0]:
        raise ValueError("offsets must be non-decreasing and end at the number of items")
    if items.size and (items.min() < 0 or items.max() >= domain_size):
        bad = items[(items < 0) | (items >= domain_size)][0]
        raise ParameterError("item", int(bad), f"in [0, {domain_size})", "an item of a user's set")
    user = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
    if np.any((user[1:] == user[:-1]) & (items[1:] <= items[:-1])):
        raise ValueError("each user's items must be distinct (and sorted, in a Transactions)")
    return offsets, items


def padded_weights(sizes: np.ndarray, ell: int) -> np.ndarray:
    """1/max(|v|, ℓ) per user: the probability that each item of v is the one drawn."""
    return 1.0 / np.maximum(sizes, ell)


def kept_weights(sizes: np.ndarray, ell: int) -> np.ndarray:
    """min(1, ℓ/|v|) per user: the share of a holder that padding to ℓ counts (its item is
    among ℓ elements drawn from the padded set), ℓ times :func:`padded_weights`."""
    return np.minimum(1.0, ell / np.maximum(sizes, 1))


def padded_sample(
    offsets: np.ndarray, items: np.ndarray, ell: int, domain_size: int, rng: np.random.Generator
) -> np.ndarray:
    """One element of each user's padded set, uniformly: an item of v, or a dummy in
    [d, d+ℓ) (module docstring).  Exact: one ``rng.integers(0, max(|v|, ℓ))`` per user."""
    sizes = np.diff(offsets)
    position = rng.integers(0, np.maximum(sizes, ell)) if sizes.size else np.zeros(0, np.int64)
    real = position < sizes
    out = domain_size + position
    out[real] = items[offsets[:-1][real] + position[real]]
    return out.astype(np.int64, copy=False)


def restrict(
    offsets: np.ndarray, items: np.ndarray, candidates: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each user's set intersected with ``candidates``, the items renamed to their index
    in ``candidates`` (so the result lives in {0, ..., len(candidates)-1})."""
    order = np.argsort(candidates, kind="stable")
    ordered = np.asarray(candidates)[order]
    where = np.minimum(np.searchsorted(ordered, items), max(ordered.shape[0] - 1, 0))
    keep = ordered[where] == items if ordered.size else np.zeros(items.shape[0], dtype=bool)
    user = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))[keep]
    renamed = order[where[keep]].astype(np.int64)
    sort = np.lexsort((renamed, user))
    counts = np.bincount(user, minlength=offsets.shape[0] - 1)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), renamed[sort]


@dataclass(frozen=True)
class ItemsResult:
    """A set-valued miner's answer: the items it returns and their estimated counts."""

    items: np.ndarray  #: int64 item ids, most frequent first
    estimates: np.ndarray  #: estimated number of users holding each


@dataclass(frozen=True, kw_only=True)
class SetProtocol(ABC):
    """A protocol over users' item sets of the domain {0, ..., d-1}, kind ``"set"``.

    Every protocol of the kind mines the top-k items (:meth:`top_items`) with either
    engine; the frequency oracles among them also offer ``perturb`` (stamped, as every
    oracle's reports, :mod:`ldp.reports`), ``estimate`` and ``simulate``.
    """

    epsilon: float
    domain_size: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        wrap_methods(cls)

    def sets(self, sets: Any) -> tuple[np.ndarray, np.ndarray]:
        """:func:`as_sets` in this protocol's domain."""
        return as_sets(sets, self.domain_size)

    @abstractmethod
    def top_items(
        self, sets: Any, k: int, rng: np.random.Generator, engine: str = "reports"
    ) -> ItemsResult:
        """The k items this protocol finds most frequent, with their estimated counts."""


@dataclass(frozen=True, kw_only=True)
class PerItemProtocol(SetProtocol):
    """A set protocol that estimates every item from one collection (``estimate`` of
    ``perturb``, or ``simulate``) with a closed form (:class:`ldp.contract.SetOracleLike`):
    the top k are the k largest estimates.  Subclasses give ``perturb``, ``estimate``,
    ``simulate``, ``ell`` and :meth:`pure_variance` from the per-holder weights
    :meth:`weight_sums` reads.

    Their estimator is unbiased for the *padded count* Σ_{u: x∈v_u} min(1, ℓ/|v_u|)
    (:meth:`expected_counts`): the number of holders of x when no set exceeds ℓ.
    """

    ell: int = 1
    oracle: str = "adaptive"
    inner: PureOracle = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check ε, d (as GRR does), ℓ and ``oracle``; build the oracle of the reports."""
        probe = GRR(epsilon=self.epsilon, domain_size=self.domain_size)
        object.__setattr__(self, "epsilon", probe.epsilon)
        object.__setattr__(self, "domain_size", probe.domain_size)
        object.__setattr__(self, "ell", check_int(self.ell, "ell", minimum=1, maximum=MAX_PADDING))
        if self.oracle not in ORACLE_CHOICES:
            raise ParameterError("oracle", self.oracle, f"one of {ORACLE_CHOICES}")
        padded = self.domain_size + self.ell
        if self.oracle == "adaptive":
            use_grr = self.adaptive_grr()
        else:
            use_grr = self.oracle == "GRR"
        epsilon = self.report_epsilon(use_grr)
        inner = GRR if use_grr else OLH
        object.__setattr__(self, "inner", inner(epsilon=epsilon, domain_size=padded))

    @property
    def uses_grr(self) -> bool:
        """Whether the reports are GRR's (else OLH's)."""
        return isinstance(self.inner, GRR)

    @abstractmethod
    def adaptive_grr(self) -> bool:
        """Whether ``oracle="adaptive"`` reports with GRR (else OLH)."""

    @abstractmethod
    def report_epsilon(self, grr: bool) -> float:
        """The ε of each report's oracle (GRR's when ``grr``)."""

    def item_candidates(self, candidates: np.ndarray | None) -> np.ndarray:
        """Every item (refused first, naming ``domain_size``, when a full-domain estimate
        is over the memory budget), or ``candidates`` checked to be items of [0, d)."""
        if candidates is None:
            self.inner.check_full_domain()
            return np.arange(self.domain_size, dtype=np.int64)
        chosen = np.asarray(candidates, dtype=np.int64)
        if chosen.size and (chosen.min() < 0 or chosen.max() >= self.domain_size):
            raise ParameterError("candidates", chosen, f"items in [0, {self.domain_size})")
        return chosen

    def top_items(
        self, sets: Any, k: int, rng: np.random.Generator, engine: str = "reports"
    ) -> ItemsResult:
        """Estimate every item, return the k largest."""
        k, engine = check_k(k, self.domain_size), check_engine(engine)
        if engine == "sampled":
            return ranked(self.simulate(sets, rng), k)  # type: ignore[attr-defined]
        return ranked(self.estimate(self.perturb(sets, rng)), k)  # type: ignore[attr-defined]

    def check_histogram(self) -> None:
        """Refuse, naming ``domain_size``, the sampled engine's histogram of the d+ℓ padded
        values (8 bytes each) over the memory budget, before allocating it."""
        padded = self.domain_size + self.ell
        budget.check_memory(
            "domain_size",
            self.domain_size,
            f"<= {budget.current().memory_bytes // 8 - self.ell} for the sampled engine",
            8.0 * padded,
            f"the histogram of {padded} padded values",
        )

    def weight_sums(self, sets: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """(A_x, B_x) per candidate: Σ min(1, ℓ/|v|) and Σ min(1, ℓ/|v|)² over x's holders
        (in memory linear in the items held and the candidates, whatever d)."""
        chosen = self.item_candidates(candidates)
        offsets, items = self.sets(sets)
        sizes = np.diff(offsets)
        weight = np.repeat(kept_weights(sizes, self.ell), sizes)
        distinct, back = np.unique(chosen, return_inverse=True)
        if distinct.size and distinct[-1] == distinct.size - 1:  # the items 0..D-1: no search
            slot = items
            if distinct.size < self.domain_size:
                held = items < distinct.size
                slot, weight = slot[held], weight[held]
        else:
            slot = np.minimum(np.searchsorted(distinct, items), max(distinct.size - 1, 0))
            held = distinct[slot] == items if distinct.size else np.zeros(items.shape, bool)
            slot, weight = slot[held], weight[held]
        sums = np.stack(
            [np.bincount(slot, weights=weight**power, minlength=distinct.size) for power in (1, 2)]
        )
        return sums[:, back.ravel()]

    def expected_counts(self, sets: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """E[ĉ(x)] = A_x, the padded count: a holder with |v| > ℓ counts ℓ/|v|."""
        return self.weight_sums(sets, candidates)[0]

    def variances(self, sets: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """Var[ĉ(x)], exact: :meth:`pure_variance` of the users and the weight sums."""
        a, b = self.weight_sums(sets, candidates)
        return self.pure_variance(np.diff(self.sets(sets)[0]).shape[0], a, b)

    @abstractmethod
    def pure_variance(self, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Var[ĉ(x)] of n users whose holders of x have weight sums A_x, B_x."""


def check_k(k: object, domain_size: int) -> int:
    """1 <= k <= d."""
    return check_int(k, "k", minimum=1, maximum=domain_size)


def check_engine(engine: object) -> str:
    """``"reports"`` or ``"sampled"``."""
    if engine not in ("reports", "sampled"):
        raise ParameterError("engine", engine, "'reports' or 'sampled'")
    return str(engine)


def ranked(estimates: np.ndarray, k: int, names: np.ndarray | None = None) -> ItemsResult:
    """The k largest estimates (ties to the smaller index), named by ``names``."""
    order = np.lexsort((np.arange(estimates.shape[0]), -estimates))[:k]
    ids = order if names is None else np.asarray(names)[order]
    return ItemsResult(items=np.asarray(ids, dtype=np.int64), estimates=estimates[order])


def generator(rng: object) -> np.random.Generator:
    """:func:`ldp.validation.check_generator` (re-exported for the set protocols)."""
    return check_generator(rng)
