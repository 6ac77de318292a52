"""The shared shape of every frequency oracle, and the pure framework's aggregator.

Citations ``[FO]`` are to Wang, Blocki, Li, Jha, USENIX Security 2017 (see
:mod:`ldp.theory.frequency`).  An oracle is a small frozen dataclass: its parameters
are checked at construction, ``perturb`` is the client side (vectorised over users),
``estimate`` the aggregator, ``simulate`` the sampled engine and
``variance`` the closed form.  A ``numpy.random.Generator`` is always an argument and
never stored.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp import budget, theory
from ldp.bits import row_hashes, row_keys
from ldp.contract import capabilities_of
from ldp.reports import wrap_methods
from ldp.validation import (
    ParameterError,
    check_counts,
    check_epsilon,
    check_generator,
    check_int,
    check_total,
    check_values,
)

#: Bytes a full-domain estimate holds per domain value (the candidates, their support
#: counts, the estimates and a temporary, 8 bytes each).
FULL_DOMAIN_BYTES = 32
#: Bytes per number of one input's ``report_probabilities`` (the float64 itself, and the
#: logs and pairwise copies the privacy checks of :mod:`ldp.privacy` hold beside it).
PROBABILITY_BYTES = 32
#: Bytes a (user, round) pair of ``perturb_rounds`` holds beside its report: the repeated
#: user index, the pair's key, its index into the memos and the sort behind them (the
#: longitudinal clients peaked at 9-21 B over their reports' count without it, measured
#: with ``python -m benchmarks --only budget``).
ROUND_PAIR_BYTES = 40


def check_variance_input(n_users: object, true_count: object) -> tuple[int, float]:
    """0 <= true_count <= n_users, both numbers."""
    n_users = check_int(n_users, "n_users", minimum=0)
    if isinstance(true_count, bool) or not isinstance(true_count, int | float | np.number):
        raise TypeError(f"true_count must be a number, got {type(true_count).__name__}")
    if not 0 <= true_count <= n_users:
        raise ValueError(f"true_count must lie in [0, n_users = {n_users}], got {true_count}")
    return n_users, float(true_count)


def has_duplicates(values: np.ndarray) -> bool:
    """Whether some value (integer or word row) occurs twice: one sort, skipped when the
    values are already strictly increasing.  Word rows are first told apart by their
    digests (:func:`ldp.bits.row_hashes`, sorted as integers); the rows themselves are
    compared only if two digests are equal."""
    array = np.asarray(values)
    if array.ndim == 2 and array.dtype == np.uint64 and array.shape[0] > 1:
        if not _repeats(row_hashes(array)):
            return False
    return _repeats(row_keys(array))


def _repeats(keys: np.ndarray) -> bool:
    if keys.shape[0] < 2:
        return False
    if keys.dtype.kind in "iu" and np.all(keys[1:] > keys[:-1]):
        return False
    ordered = np.sort(keys)
    return bool(np.any(ordered[1:] == ordered[:-1]))


def lookup(keys: np.ndarray, counts: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The count of each query among distinct ``keys`` (0 where absent), int64.

    Word rows are looked up by their digests (:func:`ldp.bits.row_hashes`), a hit
    confirmed on the rows themselves; when two keys share a digest, by the rows' bytes.
    """
    keys, queries = np.asarray(keys), np.asarray(queries)
    if keys.shape[0] == 0:
        return np.zeros(queries.shape[0], dtype=np.int64)
    words = keys.ndim == queries.ndim == 2 and keys.shape[1] == queries.shape[1]
    if words and keys.dtype == queries.dtype == np.uint64:
        digests = row_hashes(keys)
        order = np.argsort(digests)
        ordered = digests[order]
        if not np.any(ordered[1:] == ordered[:-1]):
            position = np.minimum(np.searchsorted(ordered, row_hashes(queries)), len(order) - 1)
            found = order[position]
            hit = np.all(keys[found] == queries, axis=1)
            return np.where(hit, np.asarray(counts)[found], 0).astype(np.int64)
    sorted_keys = row_keys(keys)
    order = np.argsort(sorted_keys, kind="stable")
    sorted_keys = sorted_keys[order]
    wanted = row_keys(queries)
    position = np.minimum(np.searchsorted(sorted_keys, wanted), sorted_keys.shape[0] - 1)
    hit = sorted_keys[position] == wanted
    return np.where(hit, np.asarray(counts)[order][position], 0).astype(np.int64)


@dataclass(frozen=True, kw_only=True)
class FrequencyOracle(ABC):
    """A locally differentially private frequency oracle over the domain {0, ..., d-1}.

    Parameters
    ----------
    epsilon : float
        The privacy budget ε > 0: every report satisfies ε-LDP.
    domain_size : int
        The number d >= 2 of possible values.
    """

    epsilon: float
    domain_size: int

    #: The paper's acronym, used in tables and figures.
    name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(
            self, "domain_size", check_int(self.domain_size, "domain_size", minimum=2)
        )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every oracle's ``perturb`` stamps its reports and its ``estimate`` / ``aggregate``
        refuse another's (:mod:`ldp.reports`), a plug-in's included."""
        super().__init_subclass__(**kwargs)
        wrap_methods(cls)

    @classmethod
    def has_independent_support(cls) -> bool:
        """:func:`independent_support` of this class (for callers that must not import
        this package, e.g. :mod:`ldp.adversary`)."""
        return independent_support(cls)

    # --- client side -------------------------------------------------------------------
    @abstractmethod
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """Each user's ε-LDP report of their value (the client side), for all users at once."""

    def report_bits(self) -> float:
        """Bits of one report as sent, from the declared report model (:mod:`ldp.contract`).

        ⌈log2 #outputs⌉ for a categorical report, one bit per coordinate of a bit vector,
        64 per real of a product report; a hashed report adds 64 bits per public seed it
        carries (OLH's seed).  Without a report model (or one too large to list): the bits
        of one user's report as the reports engine stores it (public randomness drawn
        once per call, such as a hash family, not counted), NaN if that cannot be read.
        An oracle whose reports are shorter overrides it (the Hadamard family: log2 K).
        """
        model = capabilities_of(self).report_model
        try:
            if model == "hashed":
                cells = np.shape(self.report_probabilities(0, np.zeros(1, dtype=np.uint64)))[-1]
                seeds = len(capabilities_of(self).public_randomness)
                return 64.0 * seeds + math.ceil(math.log2(cells))
            outputs = np.shape(self.report_probabilities(0))[0] if model else None
        except (TypeError, ValueError, MemoryError):  # no likelihood, or too large to list
            outputs = None
        if model == "categorical" and outputs:
            return float(math.ceil(math.log2(outputs)))
        if model in ("bits", "product") and outputs:
            return float(outputs if model == "bits" else 64 * outputs)
        return self._stored_bits()

    def _stored_bits(self) -> float:
        """Bits of one user's report in the reports engine's per-user arrays (NaN if unread)."""
        try:
            one, two = (
                self.perturb(np.zeros(k, dtype=np.int64), np.random.default_rng(0)) for k in (1, 2)
            )
        except (TypeError, ValueError):
            return math.nan
        pairs = zip(one, two, strict=True) if isinstance(one, tuple) else [(one, two)]
        return float(
            sum(
                8 * np.asarray(a).nbytes
                for a, b in pairs
                if np.ndim(a) and np.shape(a)[0] == 1 and np.shape(b)[0] == 2
            )
        )

    def report_bytes(self, n_users: int) -> int:
        """The memory the reports of ``n_users`` users take (seed and value: 16 bytes each)."""
        return 16 * n_users

    def working_bytes(self, n_users: int) -> int:
        """The memory ``perturb`` holds for ``n_users`` users: the reports and about two
        temporaries of their size (keep coins, shifts); a protocol with more overrides it."""
        return 3 * self.report_bytes(n_users)

    def check_report_size(self, n_users: int, extra_bytes: float = 0.0) -> None:
        """Refuse, before drawing anything, a ``perturb`` over the memory budget.

        ``extra_bytes`` a user beside :meth:`working_bytes` (``perturb_rounds``: the
        (user, value) keys of its memos, :data:`ROUND_PAIR_BYTES`).  One report over the
        budget blames ``domain_size``; otherwise the number of users, with the most that
        fit (:mod:`ldp.budget`).
        """

        def need(users: int) -> float:
            return self.working_bytes(users) + extra_bytes * users

        size = need(n_users)
        limit = budget.current().memory_bytes
        what = f"{self.name} reports of {n_users} users over domain_size = {self.domain_size}"
        if size > limit and need(1) > limit:
            budget.check_memory(
                "domain_size", self.domain_size, "small enough for one report", size, what
            )
        low, high = 1, n_users  # need(low) fits, need(high) does not
        while size > limit and high - low > 1:  # the most users that fit, for the refusal
            middle = (low + high) // 2
            low, high = (middle, high) if need(middle) <= limit else (low, middle)
        budget.check_memory(
            "values",
            f"{n_users} users",
            f"at most {low if size > limit else n_users} users per perturb call "
            "(or use simulate(), the sampled engine)",
            size,
            what,
        )

    def check_likelihood_table(
        self, n_reports: int, cell_bytes: float = 8.0, fixed_bytes: float = 0.0
    ) -> None:
        """Refuse, naming ``reports``, a ``log_likelihoods`` of ``n_reports`` reports whose
        (reports x domain) table, ``cell_bytes`` a cell with its temporaries, and
        ``fixed_bytes`` whatever the reports, are over the memory budget
        (:mod:`ldp.adversary` asks for it a chunk of reports at a time)."""
        row = cell_bytes * float(self.domain_size)
        size = row * float(n_reports) + fixed_bytes
        most = int(max(budget.current().memory_bytes - fixed_bytes, 0) // row)
        budget.check_memory(
            "reports",
            f"{n_reports} reports",
            f"at most {most} reports at a time",
            size,
            f"a likelihood per report and value ({cell_bytes:g} B a cell)",
        )

    # --- aggregator --------------------------------------------------------------------
    @abstractmethod
    def estimate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """Unbiased estimated counts of every domain value, or of ``candidates`` only."""

    @abstractmethod
    def n_reports(self, reports: Any) -> int:
        """The number of users whose reports these are."""

    # --- sampled engine ----------------------------------------------------------------
    def simulate(
        self,
        true_counts: np.ndarray,
        rng: np.random.Generator,
        candidates: np.ndarray | None = None,
    ) -> np.ndarray:
        """The estimate ``estimate(perturb(values))`` would give, drawn without any reports.

        ``true_counts`` has one entry per domain value.  Same distribution as the reports
        engine, at O(|candidates|) cost instead of O(n x |candidates|) for most oracles
        (:meth:`simulate_candidates` with the dense histogram).
        """
        counts = check_counts(true_counts, self.domain_size)
        n = check_total(counts)
        rng = check_generator(rng)
        chosen = self._distinct_candidates(candidates)
        if type(self)._simulate_population is FrequencyOracle._simulate_population:
            # a law of the candidates' counts and n only: read them off the dense histogram
            # (what the sparse lookup below would give, without building it)
            return self._simulate_counts(counts[chosen], n, rng)
        held = np.flatnonzero(counts)
        return self._simulate_population(held, counts[held].astype(np.int64), chosen, rng)

    def simulate_candidates(
        self,
        values: np.ndarray,
        counts: np.ndarray,
        candidates: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Estimates of ``candidates`` drawn from the exact law of ``estimate(perturb(users))``.

        The users are the whole population the estimate counts, given as a sparse
        histogram: ``counts[i]`` users hold ``values[i]`` (distinct values of the domain,
        in the representation of :meth:`perturb`; values of no candidate included).  A
        candidate need not be held.  The whole population is asked for because, for some
        oracles, the law of a candidate's estimate depends on more than its own count and
        n: on how the other users' values repeat (FLH's pool, the sketches' shared hash
        family: Σ n_u² and beyond), or on which values they are (the Hadamard codes'
        and RAPPOR's Bloom bits).  Oracles whose law needs only the candidates' counts and
        n (:meth:`_simulate_counts`) read just that.  This is what the heavy hitters call
        on each group's histogram of prefixes or segments.
        """
        values, counts = self.check_population(values, counts)
        rng = check_generator(rng)
        chosen = self._distinct_candidates(candidates)
        return self._simulate_population(values, counts, chosen, rng)

    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The sampled engine on checked input; by default the law given the candidates'
        counts and n only (:meth:`_simulate_counts`).  Oracles whose law depends on the
        rest of the population override this."""
        return self._simulate_counts(lookup(values, counts, chosen), int(counts.sum()), rng)

    def _simulate_counts(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Estimates of distinct candidates, ``candidate_counts[j]`` users holding candidate j
        out of ``n_users``, when the other users matter only through their number."""
        raise NotImplementedError(
            f"{type(self).__name__} must override _simulate_counts or _simulate_population"
        )

    def check_population(
        self, values: np.ndarray, counts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """A sparse histogram: distinct ``values`` of the domain and their ``counts`` (int64)."""
        values = check_values(values, self.domain_size, name="values")
        counts = check_counts(counts, None, name="counts")
        if values.shape[0] != counts.shape[0]:
            raise ValueError(
                f"values and counts must have one entry each, got {values.shape[0]} values "
                f"and {counts.shape[0]} counts"
            )
        check_total(counts)
        if has_duplicates(values):
            raise ValueError("values must be distinct (one count per value)")
        return values, counts.astype(np.int64, copy=False)

    def _distinct_candidates(self, candidates: np.ndarray | None) -> np.ndarray:
        chosen = self.candidates(candidates)
        if candidates is not None and has_duplicates(chosen):
            raise ValueError("candidates must be distinct for the sampled engine")
        return chosen

    # --- analysis ----------------------------------------------------------------------
    @abstractmethod
    def variance(self, n_users: int, true_count: float = 0) -> float:
        """Exact Var of one value's estimated count; ``true_count=0`` gives Table 1's entry."""

    def variances(
        self, true_counts: np.ndarray, candidates: np.ndarray | None = None
    ) -> np.ndarray:
        """Exact Var of each candidate's estimate given the whole histogram ``true_counts``.

        ``variance(n, n_v)`` for an oracle whose variance depends only on n and the value's
        own count; an oracle whose variance also depends on how the other users' values
        fall (a sketch's collisions, a Hadamard block or symbol shared with other values)
        overrides this with the exact form.  The conformance suite tests this one.
        """
        counts = check_counts(true_counts, self.domain_size)
        n = check_total(counts)
        chosen = self.candidates(candidates)
        return np.array([self.variance(n, int(counts[v])) for v in chosen], dtype=float)

    # --- helpers -----------------------------------------------------------------------
    def check_value(self, value: object, name: str = "value") -> Any:
        """One domain value, checked: an int in [0, d) (or, above 2^64 values, its words).

        Negative values are refused rather than wrapped around as array indices.
        """
        if isinstance(value, bool):
            raise TypeError(f"{name} must be an integer, got bool")
        if isinstance(value, numbers.Integral):
            if not 0 <= int(value) < self.domain_size:
                raise ParameterError(name, int(value), f"in [0, {self.domain_size})")
            return int(value)
        if self.domain_size > 2**64:
            check_values(np.asarray([value]), self.domain_size, name=name)
            return value
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")

    def check_probability_table(self, numbers: float) -> None:
        """Refuse, naming ``domain_size``, a ``report_probabilities`` of ``numbers`` values
        per input over the memory budget (:data:`PROBABILITY_BYTES` each), before
        allocating it: the privacy checks call it for every input they compare."""
        budget.check_memory(
            "domain_size",
            self.domain_size,
            f"smaller: at most {budget.current().memory_bytes // PROBABILITY_BYTES:,} "
            "report probabilities per input",
            PROBABILITY_BYTES * float(numbers),
            f"{self.name}'s report probabilities of one input ({float(numbers):.3g} numbers)",
        )

    def candidates(self, candidates: np.ndarray | None) -> np.ndarray:
        """The values to estimate: all of the domain, or the given ones after checking them."""
        if candidates is None:
            self.check_full_domain()
            return np.arange(self.domain_size, dtype=np.int64)
        return check_values(candidates, self.domain_size, name="candidates")

    def check_full_domain(self) -> None:
        """Refuse a full-domain estimate over the memory budget (FULL_DOMAIN_BYTES a value)."""
        most = budget.current().memory_bytes // FULL_DOMAIN_BYTES
        budget.check_memory(
            "domain_size",
            self.domain_size,
            f"<= {most} for a full-domain estimate (or pass candidates)",
            FULL_DOMAIN_BYTES * self.domain_size,
            "a full-domain estimate",
        )


@dataclass(frozen=True, kw_only=True)
class PureOracle(FrequencyOracle):
    """A pure protocol ([FO] "Method"): supports v with p*, any other fixed v' with q*.

    Subclasses give ``p_star``, ``q_star``, ``perturb`` and ``support_counts``.  The
    estimator, the variance and (for protocols whose support indicators are independent
    across values) the sampled engine come from the framework.
    """

    @property
    @abstractmethod
    def p_star(self) -> float:
        """p*: the probability that a user's report supports the user's own value."""

    @property
    @abstractmethod
    def q_star(self) -> float:
        """q*: the probability that a user's report supports a fixed other value."""

    @abstractmethod
    def support_counts(self, reports: Any, candidates: np.ndarray) -> np.ndarray:
        """I_v: how many reports support each candidate (int64)."""

    def estimate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """c(v) = (I_v - n q*)/(p* - q*) for each candidate ([FO] "Method")."""
        chosen = self.candidates(candidates)
        support = self.support_counts(reports, chosen)
        return theory.pure_estimate(support, self.n_reports(reports), self.p_star, self.q_star)

    def aggregate(self, reports: Any, candidates: np.ndarray | None = None) -> np.ndarray:
        """The additive statistic of these reports: I_v for each candidate (int64).

        I_v counts reports, so the statistic of two disjoint sets of reports is the sum of
        theirs; with :meth:`estimate_aggregate` it gives :meth:`estimate` exactly.  Only an
        oracle that declares ``Capabilities(additive=True)`` promises this (its reports
        carry no public randomness shared by a whole ``perturb`` call).
        """
        return np.asarray(self.support_counts(reports, self.candidates(candidates)), np.int64)

    def estimate_aggregate(self, statistic: np.ndarray, n_users: int) -> np.ndarray:
        """c(v) = (I_v - n q*)/(p* - q*) from the summed statistic of :meth:`aggregate`."""
        return theory.pure_estimate(statistic, int(n_users), self.p_star, self.q_star)

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """n q*(1-q*)/(p*-q*)^2 + n_v (1-p*-q*)/(p*-q*) (see :func:`ldp.theory.pure_variance`)."""
        n_users, true_count = check_variance_input(n_users, true_count)
        return float(theory.pure_variance(n_users, self.p_star, self.q_star, true_count))

    def _simulate_counts(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """I_v ~ Bin(n_v, p*) + Bin(n - n_v, q*), independently over v.

        Exact when a user's support indicators for distinct values are independent: true
        for the unary encodings and THE (independent noise per coordinate) and for local
        hashing under an ideal (fully random) hash.  GRR overrides this; FLH, HR and HM,
        whose indicators are tied through a shared pool or code, override
        :meth:`_simulate_population`.
        """
        counts, n = candidate_counts, n_users
        support = rng.binomial(counts, self.p_star) + rng.binomial(n - counts, self.q_star)
        return theory.pure_estimate(support, n, self.p_star, self.q_star)


def independent_support(oracle: type[FrequencyOracle]) -> bool:
    """Whether a user's support indicators are independent across values for this oracle
    class: a pure oracle whose sampled engine is :class:`PureOracle`'s independent binomials
    (the unary encodings, THE, BLH, OLH).  Not GRR, subset selection (one report supports a
    fixed number of values), FLH, HR, HM or the sketches (indicators tied through a pool, a
    code or a hash family).  Protocols that simulate each user's indicators (SPM's joint
    estimation) need it."""
    return (
        issubclass(oracle, PureOracle)
        and oracle._simulate_counts is PureOracle._simulate_counts
        and oracle._simulate_population is FrequencyOracle._simulate_population
    )
