"""LOLOHA: longitudinal local hashing with two-step GRR memoization.

Arcolezi, Pinzón, Palamidessi, Gambs, *Frequency Estimation of Evolving Data Under Local
Differential Privacy*, EDBT 2023 (section numbers not verified).  Each user draws a hash
function H: [k] → [g] once (its seed is public, as OLH's), hashes the value, and runs
L-GRR over the g cells (:mod:`ldp.oracles.longitudinal`): GRR at ε_∞ on H(v), memoized
per (user, *hashed* value), then GRR with the p2 that makes one report ε₁-LDP.  A report
(seed, y) supports every v with H(v) = y: p* = p_s, q* = 1/g (ideal hash), so one round
from fresh users is a pure oracle; in fact it is OLH with g cells at ε₁ (the chain of two
GRRs over g cells is GRR at ε₁).

Longitudinal privacy: the memo is keyed by the hashed value, so a user whose value
changes any number of times spends at most g ε_∞ (at most g distinct memos, as the
authors' client counts them), against one ε_∞ per distinct value for L-GRR; a changed
value that hashes to the same cell even goes unnoticed.  A small g (g = 2: "BiLOLOHA")
caps the budget, a larger one lowers the variance.

The variance-optimal g.  Under the exact-ε₁ instantaneous step used here the variance of
a value nobody holds is (e^ε₁ + g - 1)²/((e^ε₁ - 1)² (g - 1)) per user, minimal at
g = e^ε₁ + 1 (OLH's optimum); the default ``g`` is the better of the two integers around
it.  The paper's optimal g (written in α = ε₁/ε_∞, "OLOLOHA") is derived with the authors'
L-GRR instantaneous step, which realises a smaller single-report ε than ε₁ (see
:func:`ldp.theory.longitudinal.l_grr_parameters`); it is not used here.

The paper's text was not at hand, so no section or equation number is cited.  Compared
with the authors' public code (``hharcolezi/LOLOHA``, ``LDP/protocols.py``): the client
(GRR at ε_∞ on H(v) memoized per hashed cell, then GRR), the server's q* = 1/g, the
estimator and the budget count (memoized cells) agree; their instantaneous p2 is their
L-GRR's (see :func:`ldp.theory.longitudinal.l_grr_parameters`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp import budget, hashing
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import ROUND_PAIR_BYTES
from ldp.oracles.local_hashing import HashReports, _LocalHashing
from ldp.oracles.longitudinal import Memoized, _cell_counts, _coin
from ldp.oracles.memo import memo_slots
from ldp.registry import register
from ldp.theory import longitudinal as chain
from ldp.validation import ParameterError, check_generator, check_int, check_values


def optimal_g(epsilon_1: float) -> int:
    """The integer g >= 2 minimizing (e^ε₁ + g - 1)²/(g - 1), i.e. floor or ceil of e^ε₁ + 1."""
    e = math.exp(epsilon_1)
    low = max(2, math.floor(e + 1))
    return min((low, low + 1), key=lambda g: (e + g - 1) ** 2 / (g - 1))


#: The largest ε whose default g (:func:`optimal_g`) fits the hash range: e^ε + 1 <= 2^31 - 1
#: keeps both integers optimal_g chooses from within [2, 2^31].
MAX_DEFAULT_EPSILON = math.log(hashing.MAX_RANGE - 2)


@register(name="LOLOHA", color="#ff7f00", order=150)
@dataclass(frozen=True, kw_only=True)
class LOLOHA(Memoized):
    """LOLOHA (Arcolezi et al., EDBT 2023): local hashing to g cells, then L-GRR.

    Parameters
    ----------
    epsilon, domain_size, epsilon_inf :
        As for :class:`~ldp.oracles.longitudinal.Memoized` (ε₁, k, ε_∞ = 2 ε₁ by default).
    g : int, optional
        Hash range, 2 <= g <= 2^31 (default :func:`optimal_g` of ε₁; 2 is BiLOLOHA).
    """

    name = "LOLOHA"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="hashed", public_randomness=("seeds",)
    )
    g: int | None = None  # type: ignore[assignment]
    _keep1: int = field(init=False, repr=False, compare=False)
    _keep2: int = field(init=False, repr=False, compare=False)

    def _set_coins(self) -> None:
        if self.g is None and self.epsilon > MAX_DEFAULT_EPSILON:
            raise ParameterError(
                "epsilon",
                self.epsilon,
                f"<= {MAX_DEFAULT_EPSILON:.4f} with the default g",
                message=f"epsilon must be <= {MAX_DEFAULT_EPSILON:.4f} = ln(2^31 - 2) for "
                f"LOLOHA's default g ≈ e^epsilon + 1 to fit the hash range of 2^31 cells, got "
                f"{self.epsilon} (or give g, 2 <= g <= 2^31)",
            )
        g = optimal_g(self.epsilon) if self.g is None else self.g
        g = check_int(g, "g", minimum=2, maximum=hashing.MAX_RANGE)
        object.__setattr__(self, "g", g)
        p1, q1, p2, not_p2 = chain.l_grr_parameters(float(self.epsilon_inf), self.epsilon, g)
        keep1 = _coin("epsilon_inf", self.epsilon_inf, p1, (g - 1) * q1, round_down=True)
        keep2 = _coin("epsilon", self.epsilon, p2, not_p2, round_down=True)
        object.__setattr__(self, "_keep1", keep1)
        object.__setattr__(self, "_keep2", keep2)

    @property
    def prr(self) -> tuple[float, float]:
        p1 = exact.realised(self._keep1)
        return p1, (1 - p1) / (self.g - 1)

    @property
    def irr(self) -> tuple[float, float]:
        p2 = exact.realised(self._keep2)
        return p2, (1 - p2) / (self.g - 1)

    @property
    def q_star(self) -> float:
        """1/g: another value hashes to the report's cell with probability 1/g."""
        return 1.0 / self.g

    # --- client: cells in [0, g) --------------------------------------------------------
    def _randomize(self, cells: np.ndarray, keep: int, rng: np.random.Generator) -> np.ndarray:
        kept = exact.bernoulli(rng, keep, cells.shape[0])
        shift = rng.integers(1, self.g, size=cells.shape[0])
        return np.where(kept, cells, (cells + shift) % self.g)

    def permanent(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """GRR at ε_∞ over the g cells: ``values`` are the users' hashed cells H(v)."""
        return self._randomize(np.asarray(values, dtype=np.int64), self._keep1, rng)

    def instantaneous(self, memos: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self._randomize(np.asarray(memos, dtype=np.int64), self._keep2, rng)

    def take(self, memos: np.ndarray, index: np.ndarray) -> np.ndarray:
        return memos[index]

    def _seeds(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)

    def working_bytes(self, n_users: int) -> int:
        """The reports, the hashed cells, the memos and the instantaneous draws: 64 bytes a
        user (49 measured with tracemalloc)."""
        return 4 * self.report_bytes(n_users)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> HashReports:
        """A seed per user, H(v), a fresh memo, one instantaneous report: ε₁-LDP."""
        values = check_values(values, self.domain_size)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        seeds = self._seeds(values.shape[0], rng)
        cells = hashing.hash_values(values, seeds, self.g).astype(np.int64)
        return HashReports(seeds, self.instantaneous(self.permanent(cells, rng), rng))

    def perturb_rounds(self, values: np.ndarray, rng: np.random.Generator) -> list:
        """τ collections; one seed per user and one memo per (user, hashed value)."""
        array = np.asarray(values)
        if array.ndim != 2:
            raise ValueError(f"values must be 2-D (users, rounds), got shape {array.shape}")
        n, tau = array.shape
        budget.check_rounds(tau, f"{self.name}'s reports")
        flat = check_values(array.reshape(-1), self.domain_size)
        rng = check_generator(rng)
        self.check_report_size(n * max(tau, 1), ROUND_PAIR_BYTES)
        seeds = self._seeds(n, rng)
        cells = hashing.hash_values(flat, np.repeat(seeds, tau), self.g).astype(np.int64)
        users = np.repeat(np.arange(n, dtype=np.int64), tau)
        memo = memo_slots(users, cells, n, self.g)  # one memo per (user, hashed value)
        memos = self.permanent(memo.new_values, rng)
        which = memo.slots.reshape(n, tau)
        return [HashReports(seeds, self.instantaneous(memos[which[:, t]], rng)) for t in range(tau)]

    def join(self, rounds: list) -> np.ndarray:
        """Each user's seed, then the τ reported cells (uint64)."""
        if not rounds:
            return np.zeros((0, 0), dtype=np.uint64)
        cells = [np.asarray(r.values).astype(np.uint64) for r in rounds]
        return np.column_stack([np.asarray(rounds[0].seeds, dtype=np.uint64), *cells])

    def round_supports(self, sequences: np.ndarray, value: int) -> np.ndarray:
        sequences = np.asarray(sequences, dtype=np.uint64)
        keys = np.full(sequences.shape[0], value, dtype=np.uint64)
        hashed = hashing.hash_values(keys, sequences[:, 0], self.g).astype(np.uint64)
        return sequences[:, 1:] == hashed[:, None]

    # --- privacy over rounds ------------------------------------------------------------
    def rounds_epsilon(self, tau: int) -> float:
        """L-GRR's exact loss over the g cells, for a seed that separates the two values."""
        tau = check_int(tau, "tau", minimum=1, maximum=4096)
        return chain.rounds_loss_categorical(*self.prr, *self.irr, self.g, tau)

    def sequence_log_likelihoods(self, rounds: list) -> np.ndarray:
        """L-GRR's over the g cells, each value read at its cell H_i(v) under the user's seed
        (:func:`ldp.theory.longitudinal.categorical_sequence_log_likelihoods`)."""
        if not rounds:
            return np.zeros((0, self.domain_size))
        seeds, d = np.asarray(rounds[0].seeds, dtype=np.uint64), self.domain_size
        counts = _cell_counts([np.asarray(r.values, dtype=np.int64) for r in rounds], self.g)
        budget.check_memory(
            "rounds",
            f"{seeds.shape[0]} users",
            "fewer users at a time",
            48.0 * seeds.shape[0] * d,  # keys, seeds, cells, counts read, likelihoods
            "a likelihood per user and value (48 B with its temporaries)",
        )
        keys = np.tile(np.arange(d, dtype=np.uint64), seeds.shape[0])
        hashed = hashing.hash_values(keys, np.repeat(seeds, d), self.g).reshape(-1, d)
        own = np.take_along_axis(counts, hashed, axis=1)
        return chain.categorical_sequence_log_likelihoods(counts, own, *self.prr, *self.irr)

    def memoized_epsilon(self, tau: int, distinct: int = 1) -> float:
        """ε₁ for one report, else min(distinct, g) ε_∞: at most g memos (one per cell)."""
        tau = check_int(tau, "tau", minimum=1)
        distinct = check_int(distinct, "distinct", minimum=1)
        return chain.memoized_epsilon(
            self.epsilon, float(self.epsilon_inf), tau, min(distinct, self.g)
        )

    # one report is an OLH report with p* = p_s: its likelihood, adversary, events, counting
    report_probabilities = _LocalHashing.report_probabilities
    adversary_success = _LocalHashing.adversary_success
    log_likelihoods = _LocalHashing.log_likelihoods
    audit_events = _LocalHashing.audit_events
    audit_features = _LocalHashing.audit_features
    audit_event_probabilities = _LocalHashing.audit_event_probabilities
    _check_reports = _LocalHashing._check_reports
    n_reports = _LocalHashing.n_reports
    support_counts = _LocalHashing.support_counts
