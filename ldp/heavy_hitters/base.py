"""What every heavy-hitter protocol shares: its result, its users' reports, the engines' plumbing.

The *reports* engine runs the real per-user protocol: each protocol's ``perturb(values,
rng)`` is the client (every user picks a group at random and sends what the group
reports, :class:`ClientReports`), and ``run(engine="reports")`` aggregates its output.
The *sampled* engine never materialises users: it splits each distinct value's count
across the groups with a multinomial (the law of the same random group choice),
aggregates the group's counts by prefix or segment, and asks the frequency oracle for the
candidates' estimates drawn from their exact distribution
(:meth:`ldp.oracles.FrequencyOracle.simulate_candidates`).

The parameter rules every protocol applies at construction live here too: which m are
valid (:func:`check_m`), oracles given by class or by name (:func:`resolve_oracle`) and an
oracle that cannot be built at the protocol's ε refused before any run
(:func:`build_oracle`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ldp import registry
from ldp.oracles import FrequencyOracle
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
    """

    groups: np.ndarray
    parts: tuple[Any, ...]
    value: Any = None
    public: dict[str, Any] = field(default_factory=dict)


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
