"""SPLIT: the naive baseline of item sets, ε split over ℓ reports per user.

The first idea [FIM] (Wang, Li, Jha, IEEE S&P 2018, Sec. IV) sets against padding and
sampling: a user sends one report per item, ℓ of them, each with ε/ℓ (sequential
composition).  Here each user's set is padded with the dummies d+|v|, ..., d+ℓ-1 when it
holds fewer than ℓ items, or cut to a uniformly random ℓ of its items when it holds more,
and each of the ℓ elements is reported with GRR or OLH at ε/ℓ over the d+ℓ padded values
(GRR when d+ℓ-2 < 3e^{ε/ℓ}, the choice of [FO] Sec. 4.4).  Every user sends exactly ℓ
reports, so their number says nothing of the set's size.

Privacy.  Given the ℓ chosen elements, the reports are independent and each is
ε/ℓ-LDP, so their joint law changes by at most e^ε between any two chosen lists; the
mixture over the random choice keeps that bound.

Estimate.  The server sums the oracle's estimates over all nℓ reports:
ĉ(x) = (I_x - nℓq*)/(p*-q*), unbiased for A_x = Σ_{u: x∈v_u} min(1, ℓ/|v_u|), the same
padded count as :class:`~ldp.sets.psfo.PSFO`'s.  A user's ℓ reports support x
independently given the choice, so (derived here, as PSFO's)
Var[ĉ(x)] = [nℓ q*(1-q*) + (p*-q*)(1-2q*) A_x - (p*-q*)² B_x]/(p*-q*)²,
B_x = Σ_{u: x∈v_u} min(1, ℓ/|v_u|)².
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.oracles.local_hashing import HashReports
from ldp.registry import register
from ldp.reports import bare
from ldp.sets.base import PerItemProtocol, check_sets_size, generator


def split_prefers_grr(padded: int, epsilon: float) -> bool:
    """GRR over ``padded`` values at ε beats OLH when padded - 2 < 3e^ε ([FO] Sec. 4.4)."""
    return padded - 2 < 3 * math.exp(epsilon)


#: Bytes a SPLIT call holds per item held while :func:`chosen_elements` runs: each item's
#: user, rank, order and masks (58 B measured alone at 10^6 users of 1 to 16 items) with
#: the sets read before it still alive (80 B measured in all at 2·10^5 users of 8 items,
#: ``python -m benchmarks.budget --only SPLIT``), beside the (n, ℓ) elements that the
#: inner oracle's report check counts.
CHOSEN_ITEM_BYTES = 96


def chosen_elements(
    offsets: np.ndarray, items: np.ndarray, ell: int, domain_size: int, rng: np.random.Generator
) -> np.ndarray:
    """(n, ℓ) elements per user: the set padded with d+|v|, ..., d+ℓ-1, or a uniformly
    random ℓ of its items, in a uniformly random order, when it holds more.

    The long sets are drawn by ℓ steps of a Fisher-Yates shuffle run on all of them at
    once: step j swaps each set's entry j with a uniform one of its entries j, ..., |v|-1
    and reports the entry now at j.  O(ℓ) per long set, with no sort of the items."""
    sizes = np.diff(offsets)
    n = sizes.shape[0]
    check_sets_size(items.shape[0], CHOSEN_ITEM_BYTES, n, "choosing l items of each set")
    out = domain_size + np.tile(np.arange(ell, dtype=np.int64), (n, 1))
    short, starts = sizes <= ell, offsets[:-1]
    kept = sizes[short]
    user = np.repeat(np.arange(n)[short], kept)
    rank = np.arange(user.shape[0]) - np.repeat(np.cumsum(kept) - kept, kept)
    held = np.repeat(starts[short], kept) + rank
    out[user, rank] = items[held]
    long_users = np.flatnonzero(~short)
    if long_users.shape[0]:
        pool = np.array(items, dtype=np.int64)  # shuffled in place, set by set
        first, length = starts[long_users], sizes[long_users]
        for j in range(ell):
            here = first + j
            there = first + rng.integers(j, length)
            swapped = pool[there]
            pool[there] = pool[here]
            pool[here] = swapped
            out[long_users, j] = swapped
    return out


@register(kind="set", label="SPLIT", color="#636363", order=4005)
@dataclass(frozen=True, kw_only=True)
class SPLIT(PerItemProtocol):
    """ε split over ℓ reports per user (module docstring).

    Parameters
    ----------
    epsilon, domain_size :
        The budget ε (ε/ℓ per report) and the number d of items.
    ell : int
        Reports per user, ℓ >= 1.
    oracle : {"adaptive", "GRR", "OLH"}
        The oracle of each report, over the d+ℓ padded values at ε/ℓ.
    """

    name: ClassVar[str] = "SPLIT"
    capabilities: ClassVar[Capabilities] = Capabilities()

    def adaptive_grr(self) -> bool:
        """GRR when :func:`split_prefers_grr` over the d+ℓ padded values at ε/ℓ."""
        return split_prefers_grr(self.domain_size + self.ell, self.epsilon / self.ell)

    def report_epsilon(self, grr: bool) -> float:
        """ε/ℓ for each of the ℓ reports, whichever the oracle."""
        return self.epsilon / self.ell

    # --- client --------------------------------------------------------------------------
    def perturb(self, sets: Any, rng: np.random.Generator) -> Any:
        """Each user's ℓ reports, one row per user: (n, ℓ) values for GRR, HashReports of
        (n, ℓ) seeds and values for OLH."""
        rng = generator(rng)
        chosen = self.reported_elements(sets, rng)
        flat = bare(self.inner.perturb(chosen.ravel(), rng))
        shape = chosen.shape
        if isinstance(flat, HashReports):
            return HashReports(flat.seeds.reshape(shape), flat.values.reshape(shape))
        return np.asarray(flat).reshape(shape)

    def reported_elements(self, sets: Any, rng: np.random.Generator) -> np.ndarray:
        """(n, ℓ): each user's padded set, or a uniformly random ℓ of its items."""
        offsets, items = self.sets(sets)
        # the (n, ℓ) elements are nℓ inputs of the oracle: refused over the budget first
        self.inner.check_report_size((offsets.shape[0] - 1) * self.ell)
        return chosen_elements(offsets, items, self.ell, self.domain_size, generator(rng))

    def n_reports(self, reports: Any) -> int:
        first = reports.seeds if isinstance(reports, HashReports) else reports
        return int(np.shape(first)[0])

    def audit_events(self, v: Any, v_prime: Any) -> list:
        """The inner oracle's events on each report column whose element differs between
        the two sets (for sets of at most ℓ items, column j holds the j-th smallest item or
        the dummy d+j): the evidence the auditor counts, where the (n, ℓ) reports hide it
        from a search over whole fields.  None for a longer set (its ℓ items are drawn)."""
        from ldp.audit.events import Event

        a, b = self._elements(v), self._elements(v_prime)
        if a is None or b is None:
            return []
        differ = [int(j) for j in np.flatnonzero(a != b)]
        inner = {j: self.inner.audit_events(int(a[j]), int(b[j])) for j in differ}
        events = [
            Event(f"report {j}: {event.name}", functools.partial(_column, event.test, j), sign)
            for j in differ
            for event in inner[j]
            for sign in [event.favours]
        ]
        if len(differ) > 1:  # the loss of ε needs every differing report: their conjunction
            for sign in (1, -1):
                tests = [
                    (next(e.test for e in inner[j] if e.favours in (sign, 0)), j)
                    for j in differ
                    if any(e.favours in (sign, 0) for e in inner[j])
                ]
                if len(tests) == len(differ):
                    name = f"every differing report ({'v' if sign > 0 else 'v′'}'s evidence)"
                    events.append(Event(name, functools.partial(_columns, tuple(tests)), sign))
        return events

    def _elements(self, row: Any) -> np.ndarray | None:
        """The ℓ elements a set of at most ℓ items reports (None for a longer set)."""
        offsets, items = self.sets(np.asarray(row).reshape(1, -1))
        if items.shape[0] > self.ell:
            return None
        out = self.domain_size + np.arange(self.ell, dtype=np.int64)
        out[: items.shape[0]] = items
        return out

    def privacy_ratio(self) -> float:
        """The largest Pr[y | S]/Pr[y | S'] over every user's ℓ reports and every pair of
        sets: the inner oracle's ratio (p*/q* for GRR, a cell's keep over another's for OLH)
        to the power ℓ, reached by two sets whose ℓ chosen elements all differ."""
        p = self.inner.p_star
        if self.uses_grr:
            one = p / self.inner.q_star
        else:
            one = p / ((1.0 - p) / (self.inner.g - 1))  # type: ignore[attr-defined]
        return one**self.ell

    def in_support(self, reports: Any) -> np.ndarray:
        """Per user: whether each of its ℓ reports lies in the inner oracle's declared
        support (GRR: a value in [0, d+ℓ); OLH: a cell in [0, g))."""
        from ldp.audit.support import declared_support

        check, n = declared_support(self.inner), self.n_reports(bare(reports))
        if check is None:
            return np.ones(n, dtype=bool)
        return np.asarray(check(self._flat(reports)), dtype=bool).reshape(n, -1).all(axis=1)

    def _flat(self, reports: Any) -> Any:
        reports = bare(reports)
        if isinstance(reports, HashReports):
            return HashReports(np.ravel(reports.seeds), np.ravel(reports.values))
        return np.ravel(reports)

    # --- server --------------------------------------------------------------------------
    def estimate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """ĉ(x): the inner oracle's estimate over all nℓ reports."""
        return self.inner.estimate(self._flat(reports), self.item_candidates(candidates))

    def simulate(
        self, sets: Any, rng: np.random.Generator, candidates: np.ndarray | None = None
    ) -> np.ndarray:
        """The sampled engine: the chosen elements drawn as the client does, their histogram
        (nℓ elements) handed to the inner oracle's sampled engine.  Exact for GRR (its
        estimate's law depends only on that histogram); for OLH under an ideal hash."""
        wanted = self.item_candidates(candidates)
        self.check_histogram()
        rng = generator(rng)
        chosen = self.reported_elements(sets, rng)
        counts = np.bincount(chosen.ravel(), minlength=self.domain_size + self.ell)
        return self.inner.simulate(counts, rng, wanted)

    def pure_variance(self, n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """[nℓ q*(1-q*) + (p*-q*)(1-2q*) A_x - (p*-q*)² B_x]/(p*-q*)² (module docstring)."""
        p, q = self.inner.p_star, self.inner.q_star
        spread = n * self.ell * q * (1 - q) + (p - q) * (1 - 2 * q) * a - (p - q) ** 2 * b
        return spread / (p - q) ** 2


def _column(test: Any, j: int, reports: Any) -> np.ndarray:
    """An inner oracle's event ``test`` on column j of (n, ℓ) reports."""
    reports = bare(reports)
    if isinstance(reports, HashReports):
        return test(HashReports(reports.seeds[:, j], reports.values[:, j]))
    return test(np.asarray(reports)[:, j])


def _columns(tests: tuple, reports: Any) -> np.ndarray:
    """Every (test, column) of ``tests`` holding at once."""
    held = [_column(test, j, reports) for test, j in tests]
    return np.logical_and.reduce(held)
