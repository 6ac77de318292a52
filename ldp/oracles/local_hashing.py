"""Local hashing: BLH (Bassily & Smith) and OLH, USENIX'17 Sec. 4.4.

Each user draws a hash function H from the seeded family of :mod:`ldp.hashing` (by
drawing its 64-bit seed), hashes the value into {0, ..., g-1}, and applies randomised
response over those g cells: keep H(v) with probability p = e^ε/(e^ε+g-1), else report
one of the g-1 other cells uniformly.  The report (seed, y) supports every v with
H(v) = y, so p* = p and q* = 1/g.  The privacy ratio is p/q = e^ε for every hash
function; the hash's quality only matters for q*, hence for unbiasedness.  The keep coin is
drawn on the exact 53-bit grid of :mod:`ldp.oracles.exact` (p rounded down) and the other
cell with ``rng.integers`` (exact), so p* is the realised keep probability.

BLH is g = 2; OLH takes g = ⌈e^ε + 1⌉ by default (the PEM paper's choice).
Values may be wider than 64 bits (``domain_size > 2**64``): then they, and candidates,
are 2-D uint64 word arrays (:mod:`ldp.bits`), which the hash family takes as is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ldp import budget, hashing, theory
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import FrequencyOracle, PureOracle
from ldp.oracles.direct import keep_threshold
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_int, check_values


class HashReports(NamedTuple):
    """Local-hashing reports: each user's hash seed and perturbed hash value."""

    seeds: np.ndarray  #: uint64, one per user: names the user's hash function
    values: np.ndarray  #: int64 in [0, g), one per user

    def supports(self, keys: np.ndarray, g: int | None = None) -> np.ndarray:
        """Whether each report (rows) supports each key (columns): H_seed(key) is the
        reported cell, with the real seeded hash into [0, g)."""
        hashed = hashing.hash_matrix(keys, np.asarray(self.seeds), g)
        return hashed.T == np.asarray(self.values)[:, None]


#: Seeds each fake user of the maximal gain attack tries, and the (target, user, seed)
#: cells hashed at once.
MGA_SEED_TRIES = 1000
MGA_CELLS = 2**21


@dataclass(frozen=True, kw_only=True)
class _LocalHashing(PureOracle):
    """Shared client and aggregator of BLH and OLH.

    Subclasses provide ``g``, the hash range: a constant 2 for BLH, a field for OLH.  The
    keep coin e^ε/(e^ε+g-1) must be representable: ε <= ln(g-1) + 36.7.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="hashed",
        public_randomness=("seeds",),
        additive=True,
        adversary_support_only=True,
    )
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, self.g))

    @property
    def p_star(self) -> float:
        """The realised keep probability, <= e^ε/(e^ε+g-1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """1/g: another value hashes to the report's cell with probability 1/g."""
        return 1.0 / self.g

    def report_probabilities(self, value, seeds: np.ndarray) -> np.ndarray:
        """Pr[y | value, seed] for each given seed (rows) and y in [0, g) (columns).

        The seed itself is drawn independently of the value, so these rows are the whole
        likelihood of a report (for privacy checks).
        """
        value = self.check_value(value)
        seeds = np.asarray(seeds, dtype=np.uint64)
        budget.check_memory(
            "seeds",
            f"{seeds.shape[0]} seeds",
            "fewer seeds",
            (8.0 * self.g + 32.0) * seeds.shape[0],  # with the keys, hashes and row indices
            f"the {seeds.shape[0]} x g = {self.g} table of probabilities",
        )
        keys = np.repeat(np.asarray([value], dtype=np.uint64), seeds.shape[0], axis=0)
        hashed = hashing.hash_values(keys, seeds, self.g)
        probabilities = np.full((seeds.shape[0], self.g), (1 - self.p_star) / (self.g - 1))
        probabilities[np.arange(seeds.shape[0]), hashed] = self.p_star
        return probabilities

    def adversary_success(self, prior: np.ndarray) -> float:
        """The Bayesian adversary's success over the draw of the hash (an ideal hash family).

        Given H, Pr[y | v, H] is p* if H(v) = y, else (1-p*)/(g-1); over a random H each
        value lands in the reported cell independently with probability 1/g, so this is
        :func:`ldp.adversary.support_success` with (p*, 1/g) (derived in
        ``docs/adversary.md``).  A real seeded family is within its deviation from ideal.
        """
        from ldp.adversary import support_success

        return support_success(prior, self.p_star, 1.0 / self.g)

    def log_likelihoods(self, reports) -> np.ndarray:
        """ln Pr[y_i | v, seed_i] for each report (rows) and value (columns)."""
        seeds, cells = np.asarray(reports.seeds), np.asarray(reports.values)
        d = self.domain_size
        budget.check_memory(
            "reports",
            f"{seeds.shape[0]} reports",
            "fewer reports at a time",
            24.0 * seeds.shape[0] * d,
            "a likelihood per report and value",
        )
        keys = np.tile(np.arange(d, dtype=np.uint64), seeds.shape[0])
        hashed = hashing.hash_values(keys, np.repeat(seeds, d), self.g).reshape(-1, d)
        hit = hashed == cells[:, None]
        return np.where(hit, math.log(self.p_star), math.log((1 - self.p_star) / (self.g - 1)))

    def audit_events(self, v, v_prime) -> list:
        """H_seed(v) = y != H_seed(v'), and mirrored: ratio p*(g-1)/(1-p*) = e^ε."""
        from ldp.audit.events import hashed_events

        return hashed_events(self.g, v, v_prime)

    def audit_features(self, v, v_prime) -> list:
        """H_seed(v) and H_seed(v') of each report's seed, for the auditor's search."""
        from ldp.audit.events import hashed_features

        return hashed_features(self.g, v, v_prime)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """H_seed(v) = y != H_seed(v') given v and given v' (ideal hash)."""
        g, p = self.g, self.p_star
        return p * (1 - 1 / g), (1 - p) * (1 - 1 / g) / (g - 1)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> HashReports:
        """Draw a seed per user, hash the value, randomised response over [0, g)."""
        values = check_values(values, self.domain_size)
        rng = check_generator(rng)
        n = values.shape[0]
        self.check_report_size(n)
        seeds = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
        hashed = hashing.hash_values(values, seeds, self.g)
        keep = exact.bernoulli(rng, self._keep, n)
        shift = rng.integers(1, self.g, size=n)
        return HashReports(seeds, np.where(keep, hashed, (hashed + shift) % self.g))

    def _check_reports(self, reports: HashReports) -> HashReports:
        if not isinstance(reports, tuple) or len(reports) != 2:
            raise TypeError(
                f"reports must be HashReports(seeds, values), got {type(reports).__name__}"
            )
        seeds, values = np.asarray(reports[0]), np.asarray(reports[1])
        if seeds.dtype.kind not in "iu" or values.dtype.kind not in "iu":
            raise TypeError(
                f"reports must hold integer seeds and values, got {seeds.dtype} and {values.dtype}"
            )
        if seeds.shape != values.shape or seeds.ndim != 1:
            raise ValueError("reports must hold one seed and one value per user")
        if values.size and (values.min() < 0 or values.max() >= self.g):
            raise ValueError(f"report values must lie in [0, {self.g})")
        return HashReports(seeds, values)

    def n_reports(self, reports: HashReports) -> int:
        return int(self._check_reports(reports).seeds.shape[0])

    # --- fake users (ldp.poisoning, [CJG21] Sec. 4) -----------------------------------------
    def uniform_reports(self, n: int, rng: np.random.Generator) -> HashReports:
        """n uniform seeds, each with a uniform cell of [0, g)."""
        self.check_report_size(n)
        rng = check_generator(rng)
        seeds = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
        return HashReports(seeds, rng.integers(0, self.g, size=n, dtype=np.int64))

    def uniform_support(self) -> float:
        """1/g: a uniform cell is the given value's."""
        return 1.0 / self.g

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> HashReports:
        """The maximal gain attack: each fake user tries :data:`MGA_SEED_TRIES` random
        seeds and reports, under the one that hashes the most targets to one cell, that
        cell ([CJG21] Sec. 4)."""
        self.check_report_size(n)
        rng = check_generator(rng)
        targets = np.asarray(targets, dtype=np.int64)
        r, tries = targets.shape[0], MGA_SEED_TRIES
        seeds = np.empty(n, dtype=np.uint64)
        cells = np.empty(n, dtype=np.int64)
        rows = max(1, MGA_CELLS // (tries * r))
        for start in range(0, n, rows):
            size = min(rows, n - start)
            tried = rng.integers(0, 2**64 - 1, size=(size, tries), dtype=np.uint64, endpoint=True)
            hashed = hashing.hash_values(
                np.broadcast_to(targets, (size * tries, r)).T.reshape(-1),
                np.tile(tried.reshape(-1), r),
                self.g,
            ).reshape(r, size, tries)
            together = (hashed[:, None] == hashed[None, :]).sum(axis=1)  # (r, size, tries)
            best_target = together.argmax(axis=0)  # per (user, seed): a most shared cell
            count = together.max(axis=0)
            best_seed = count.argmax(axis=1)
            users = np.arange(size)
            seeds[start : start + size] = tried[users, best_seed]
            cells[start : start + size] = hashed[best_target[users, best_seed], users, best_seed]
        return HashReports(seeds, cells)

    def crafted_support(self, targets: np.ndarray) -> float | None:
        """r when a seed hashing every target to one cell is all but certain among the
        tries (missed with probability below 1e-9), else None (measured instead)."""
        r = np.asarray(targets).shape[0]
        miss = (1 - float(self.g) ** -(r - 1)) ** MGA_SEED_TRIES
        return float(r) if miss < 1e-9 else None

    def support_counts(self, reports: HashReports, candidates: np.ndarray) -> np.ndarray:
        seeds, values = self._check_reports(reports)
        n, size = seeds.shape[0], candidates.shape[0]
        budget.check_operations(
            "candidates",
            f"{size} candidates",
            f"<= {budget.current().operations // max(n, 1)} candidates for {n} reports "
            "(or fewer reports per estimate)",
            float(n) * size,
            f"counting the support of {size} candidates in {n} hashed reports",
        )
        return hashing.support_counts(seeds, values, candidates, self.g)


@register(color="#949494", order=60)
@dataclass(frozen=True, kw_only=True)
class BLH(_LocalHashing):
    """Binary local hashing: g = 2, p* = e^ε/(e^ε+1), q* = 1/2."""

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="hashed",
        public_randomness=("seeds",),
        additive=True,
        adversary_support_only=True,
    )

    name = "BLH"

    @property
    def g(self) -> int:
        return 2


@register(color="#cc78bc", order=70)
@dataclass(frozen=True, kw_only=True)
class OLH(_LocalHashing):
    """Optimised local hashing: p* = e^ε/(e^ε+g-1), q* = 1/g.

    ``g`` is the hash range, ⌈e^ε + 1⌉ unless given.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="hashed",
        public_randomness=("seeds",),
        additive=True,
        adversary_support_only=True,
    )

    g: int | None = None  # type: ignore[assignment]
    name = "OLH"

    def __post_init__(self) -> None:
        FrequencyOracle.__post_init__(self)  # epsilon first: g may derive from it
        if self.g is None:
            g = theory.olh_default_g(self.epsilon)
            if g > hashing.MAX_RANGE:
                raise ParameterError(
                    "epsilon",
                    self.epsilon,
                    f"<= {math.log(hashing.MAX_RANGE - 1):.4g} with the default g",
                    f"the default g = ceil(e^epsilon + 1) = {g} exceeds the hash family's "
                    "range 2^31; pass a smaller g",
                )
        else:
            g = self.g
        object.__setattr__(self, "g", check_int(g, "g", minimum=2, maximum=hashing.MAX_RANGE))
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, self.g))
