"""What every heavy-hitter protocol shares: its result, its users' reports, the engines' plumbing.

The *reports* engine runs the real per-user protocol: each protocol's ``perturb(values,
rng)`` is the client (every user picks a group at random and sends what the group
reports, :class:`ClientReports`), and ``run(engine="reports")`` aggregates its output.
The *sampled* engine never materialises users: it splits each distinct value's count
across the groups with a multinomial (the law of the same random group choice),
aggregates the group's counts by prefix or segment, and asks the frequency oracle for the
candidates' estimates drawn from their exact distribution
(:meth:`ldp.oracles.FrequencyOracle.simulate_candidates`), given the histogram of what the
group's users report.  :class:`Population` holds the users of a run for either engine.

The parameter rules every protocol applies at construction live here too: which m are
valid (:func:`check_m`), oracles given by class or by name (:func:`resolve_oracle`) and an
oracle that cannot be built at the protocol's ε refused before any run
(:func:`build_oracle`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

from ldp import bits, registry
from ldp.bits import row_hashes, row_keys
from ldp.oracles import FrequencyOracle
from ldp.oracles.base import lookup as lookup  # re-exported for callers such as the notebooks
from ldp.validation import ParameterError, check_generator, check_int

Engine = Literal["sampled", "reports"]
ENGINES = ("sampled", "reports")
#: The widest values: 512 bytes (the data sets' longest byte strings).
MAX_M = 4096


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


@dataclass(frozen=True)
class ClientReports:
    """What the users of a heavy-hitter protocol send, for all users at once (the client side).

    Every user picks a group at random; the group fixes which part of the value the user
    reports (a prefix, a segment, a segment pair, a block) and through which frequency
    oracle.  This is the protocol's whole output on the wire: ``run(engine="reports")``
    aggregates nothing else.

    Attributes
    ----------
    groups : numpy.ndarray
        int64, one per user: the group the user picked.
    parts : tuple
        ``parts[i]``: the frequency-oracle reports of part i (PEM's i-th prefix, a baseline's
        i-th segment or block) sent by the users who report that part, in increasing user
        order.
    value : object, optional
        The whole-value reports π(v) of SPM, MCM and the strawman, sent by the users of the
        value groups (every user when the budget is split), in increasing user order.
    public : dict
        Public parameters of the run that every user's report depends on (MCM: the number
        of channels and the seed of the channel hash H).
    senders : tuple of tuples of int, optional
        ``senders[i]``: the groups whose users send part i (None: group i alone).
    value_senders : tuple of int, optional
        The groups whose users send π(v) (None: every group).
    """

    groups: np.ndarray
    parts: tuple[Any, ...]
    value: Any = None
    public: dict[str, Any] = field(default_factory=dict)
    senders: tuple[tuple[int, ...], ...] | None = None
    value_senders: tuple[int, ...] | None = None

    def users_of(self, part: int | None) -> np.ndarray:
        """The users (indices, increasing) who send part ``part`` (None: π(v))."""
        sending = self.senders_of(part)
        if sending is None:
            return np.arange(self.groups.shape[0])
        return np.flatnonzero(np.isin(self.groups, sending))

    def senders_of(self, part: int | None) -> tuple[int, ...] | None:
        """The groups whose users send part ``part`` (None: π(v)); None for every group."""
        if part is None:
            return self.value_senders
        return (part,) if self.senders is None else tuple(self.senders[part])

    def per_user(self) -> UserRows:
        """Everything each user sends, one row per user (:class:`UserRows`)."""
        n = self.groups.shape[0]
        blocks = list(range(len(self.parts))) + ([None] if self.value is not None else [])
        columns = [np.ascontiguousarray(self.groups.astype(np.int64)).view(np.uint8).reshape(n, 8)]
        for part in blocks:
            users = self.users_of(part)
            raw = report_bytes(self.value if part is None else self.parts[part], users.shape[0])
            block = np.zeros((n, raw.shape[1]), dtype=np.uint8)
            block[users] = raw
            columns.append(block)
        senders = tuple(self.senders_of(part) for part in blocks)
        named = {g for groups in senders if groups is not None for g in groups}
        return UserRows(
            np.concatenate(columns, axis=1),
            tuple(c.shape[1] for c in columns[1:]),
            senders,
            tuple(sorted(named)),
        )


class UserRows(NamedTuple):
    """A heavy hitter's reports as one row of bytes per user: its group (8 bytes), then,
    part after part (and π(v) last), the bytes of that part's report when the user sends
    it, zeros when not.  What :class:`ldp.audit.clients.WholeClient` hands the auditor.
    The other fields are the run's layout, the same for every user: public, and what
    :meth:`ldp.audit.clients.WholeClient.in_support` checks the rows against."""

    rows: np.ndarray
    #: the bytes of each block after the group
    widths: tuple[int, ...] = ()
    #: the groups whose users send each block (None: every group)
    senders: tuple[tuple[int, ...] | None, ...] = ()
    #: the groups a user can be in: every group that sends a block
    groups: tuple[int, ...] = ()


def report_bytes(reports: Any, n: int) -> np.ndarray:
    """The bytes of ``n`` reports of a frequency oracle, one row each: every field with one
    entry per report (a value, a seed, a bit row), in field order.  A field drawn once for
    the whole call (a hash pool) is public randomness and left out."""
    fields = reports if isinstance(reports, tuple) else (reports,)
    rows = [
        np.ascontiguousarray(f).reshape(n, math.prod(f.shape[1:])).view(np.uint8)
        for f in fields
        if isinstance(f, np.ndarray) and f.ndim >= 1 and f.shape[0] == n
    ]
    return np.concatenate(rows, axis=1) if rows else np.zeros((n, 0), dtype=np.uint8)


@dataclass(frozen=True)
class UserReport:
    """One report a user sends: ``oracle``'s report of ``key(words)``.

    ``key`` maps the users' values, as :func:`ldp.bits.to_words` gives them, to what the
    oracle perturbs (a prefix, a segment, a puzzle key): one per value, integers or word rows.
    """

    oracle: FrequencyOracle
    key: Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ReportGroup:
    """A group of a heavy hitter's users, as the protocol's ``report_groups()`` declares it.

    A user joins the group with probability ``weight`` (independently of the value) and sends
    ``reports``, independent given the value.  :func:`ldp.adversary.heavy_hitter_success`
    reads it.
    """

    weight: float
    reports: tuple[UserReport, ...]


def check_m(m: object) -> int:
    """m, the bits per value: 1..64 (integer values) or a multiple of 8 up to 4096 (bytes).

    The data sets hold values of at most 64 bits as integers and wider ones as byte strings
    of m/8 bytes (:mod:`ldp.bits`), so no other m has a representation.
    """
    m = check_int(m, "m", minimum=1, maximum=MAX_M)
    if m > 64 and m % 8:
        raise ParameterError("m", m, "<= 64 (integer values) or a multiple of 8 (byte strings)")
    return m


def resolve_oracle(oracle: object, name: str = "oracle") -> type[FrequencyOracle]:
    """A frequency-oracle class, given as the class or by its name in :mod:`ldp.registry`.

    Names are looked up in the registry (case-insensitive), so a plug-in oracle works
    exactly as a built-in one: ``PEM(oracle="MyOracle", ...)``.  A class is accepted if it
    is a :class:`~ldp.oracles.FrequencyOracle` or is registered as an oracle.
    """
    if isinstance(oracle, str):
        try:
            return registry.get(oracle, "oracle").cls
        except registry.RegistryError:
            known = tuple(registry.protocols("oracle"))
            raise ParameterError(name, oracle, f"one of {known} or a class") from None
    registered = any(p.cls is oracle for p in registry.protocols("oracle").values())
    if not (isinstance(oracle, type) and (issubclass(oracle, FrequencyOracle) or registered)):
        raise TypeError(
            f"{name} must be a frequency-oracle class (e.g. ldp.oracles.OLH) or its "
            f"registered name, got {oracle!r}"
        )
    return oracle


def build_oracle(
    oracle: type[FrequencyOracle], epsilon: float, domain_size: int, role: str
) -> FrequencyOracle:
    """``oracle(epsilon=..., domain_size=...)``, refused with a message naming epsilon.

    Protocols build every oracle they will run at construction, so that an ε no oracle
    supports (e.g. OLH's default g = ⌈e^ε + 1⌉ above the hash family's 2^31 cells, at
    ε > ~21.5) fails there and not inside a run.
    """
    try:
        return oracle(epsilon=epsilon, domain_size=domain_size)
    except ValueError as error:
        raise ParameterError(
            "epsilon",
            epsilon,
            f"a budget at which {oracle.__name__} can be built",
            message=(
                f"epsilon: the {role} reports through {oracle.__name__} at ε = {epsilon:g} "
                f"cannot be built: {error}"
            ),
        ) from error


def check_dataset(dataset: Any, m: int) -> None:
    """The data set has the protocol's m and at least one user."""
    if dataset.m != m:
        raise ValueError(f"dataset has m = {dataset.m} bits, the protocol m = {m}")
    if dataset.n == 0:
        raise ValueError("dataset has no users: heavy hitters need at least one")


def plurality(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The column of the largest score in every row, ties broken uniformly at random."""
    scores = np.asarray(scores)
    tied = scores == scores.max(axis=1, keepdims=True)
    return np.argmax(rng.random(scores.shape) * tied, axis=1)


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


def aggregate(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge equal keys (e.g. values sharing a prefix), summing their counts.

    Returns the distinct keys (same representation as ``keys``) and their total counts,
    in increasing order, except unsorted word rows, which come in the order of their
    digests (:func:`ldp.bits.row_hashes`; the rows' bytes decide if two digests collide).
    Keys that are already non-decreasing (prefixes of a sorted histogram: integers, or
    word rows most significant word first) merge in one pass, with no sort.
    """
    array = np.asarray(keys)
    if array.ndim == 1 and array.dtype.kind in "iu" and np.all(array[1:] >= array[:-1]):
        first = np.concatenate(([0], np.flatnonzero(array[1:] != array[:-1]) + 1))
        return array[first], np.add.reduceat(np.asarray(counts, dtype=np.int64), first)
    if array.ndim == 2 and array.dtype == np.uint64 and array.shape[0] and _rows_ascend(array):
        changed = np.any(array[1:] != array[:-1], axis=1)
        first = np.concatenate(([0], np.flatnonzero(changed) + 1))
        return array[first], np.add.reduceat(np.asarray(counts, dtype=np.int64), first)
    if array.ndim == 2 and array.dtype == np.uint64:  # by digest, unless two rows share one
        digests = row_hashes(array)
        unique, first, inverse = np.unique(digests, return_index=True, return_inverse=True)
        if np.array_equal(array[first][inverse], array):
            totals = np.bincount(inverse, weights=counts, minlength=unique.shape[0])
            return array[first], totals.astype(np.int64)
    unique, first, inverse = np.unique(row_keys(keys), return_index=True, return_inverse=True)
    totals = np.bincount(inverse.ravel(), weights=counts, minlength=unique.shape[0])
    return np.asarray(keys)[first], totals.astype(np.int64)


def _rows_ascend(rows: np.ndarray) -> bool:
    """Whether word rows are non-decreasing as numbers (first word most significant)."""
    later, earlier = rows[1:], rows[:-1]
    if not np.all(later[:, 0] >= earlier[:, 0]):
        return False
    differ = later != earlier
    column = np.argmax(differ, axis=1)  # the first word where two neighbours differ
    index = np.arange(later.shape[0])
    rising = later[index, column] > earlier[index, column]
    return bool(np.all(rising | ~differ.any(axis=1)))


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


# ------------------------------------------------------------------------- population
class Population:
    """The users of one heavy-hitter run, as each engine sees them.

    Build it with :meth:`sampled` or :meth:`reported`; every protocol then asks it for a
    round's estimates the same way (:meth:`estimates`), whatever the engine.

    * reports engine: the users' :class:`ClientReports` (the protocol's ``perturb``);
      estimates come from the reports themselves.
    * sampled engine: the histogram of distinct values (``words``), each value's count
      split over the groups with a multinomial (:func:`split_counts`, the law of the
      users' random group choice: ``split[group, i]`` users of ``group`` hold
      ``words[i]``); estimates are drawn from their exact law given the histogram of what
      the group's users report (:meth:`ldp.oracles.FrequencyOracle.simulate_candidates`).

    Attributes
    ----------
    engine : {"sampled", "reports"}
    sizes : numpy.ndarray
        The number of users of each group (int64).
    n : int
        All users.
    words, split :
        Sampled engine only: the distinct values (:func:`ldp.bits.to_words`) and their
        counts per group.
    reports :
        Reports engine only: the :class:`ClientReports` (``groups``: each user's group).
    """

    def __init__(
        self,
        engine: str,
        sizes: np.ndarray,
        *,
        words: np.ndarray | None = None,
        split: np.ndarray | None = None,
        reports: ClientReports | None = None,
    ) -> None:
        self.engine = check_engine(engine)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.n = int(self.sizes.sum())
        self.words, self.split, self.reports = words, split, reports

    @classmethod
    def sampled(
        cls, dataset: Any, m: int, fractions: Sequence[float], rng: np.random.Generator
    ) -> Population:
        """The sampled engine's population of ``dataset`` over groups of the given sizes."""
        rng = check_generator(rng)
        distinct, counts = dataset.histogram()
        split = split_counts(counts, np.asarray(fractions, dtype=float), rng)
        return cls("sampled", split.sum(axis=1), words=bits.to_words(distinct, m), split=split)

    @classmethod
    def reported(cls, reports: ClientReports, n_groups: int) -> Population:
        """The reports engine's population: what the users sent."""
        return cls("reports", np.bincount(reports.groups, minlength=n_groups), reports=reports)

    @property
    def groups(self) -> np.ndarray:
        """Reports engine: the group each user picked."""
        return self.reports.groups

    # --- who is where --------------------------------------------------------------
    def n_users(self, groups: Sequence[int]) -> int:
        """The number of users in the given groups."""
        return int(self.sizes[list(groups)].sum())

    def weights(self, groups: Sequence[int]) -> np.ndarray:
        """Sampled engine: how many users of the given groups hold each distinct value."""
        return self.split[list(groups)].sum(axis=0)

    # --- frequency-oracle rounds ---------------------------------------------------
    def estimates(
        self,
        oracle: FrequencyOracle,
        candidates: np.ndarray,
        rng: np.random.Generator,
        *,
        groups: Sequence[int],
        part: int | None = None,
        keys: np.ndarray | None = None,
    ) -> np.ndarray:
        """Estimated counts of ``candidates`` among the users of ``groups``.

        Reports engine: ``oracle.estimate`` of ``reports.parts[part]`` (of the whole-value
        reports ``reports.value`` when ``part`` is None).  Sampled engine: ``keys[i]`` is
        what a user holding ``words[i]`` reports through the oracle (a prefix, a segment, a
        puzzle key; the value itself when None); the users of ``groups`` report the
        histogram of those keys, and the oracle draws the candidates' estimates from their
        exact law given that whole histogram (the keys of no candidate included: FLH's
        pool, the sketches' hash family, the Hadamard codes and RAPPOR depend on them).
        """
        if len(candidates) == 0:
            return np.zeros(0)
        if self.engine == "reports":
            sent = self.reports.value if part is None else self.reports.parts[part]
            return oracle.estimate(sent, candidates=candidates)
        held, counts = aggregate(self.words if keys is None else keys, self.weights(groups))
        return oracle.simulate_candidates(held[counts > 0], counts[counts > 0], candidates, rng)
