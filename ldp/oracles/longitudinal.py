"""Longitudinal frequency oracles with memoization: L-GRR, L-OUE, L-OSUE.

Arcolezi, Couchot, Al Bouna, Xiao, *Improving the utility of locally differentially
private protocols for longitudinal and multidimensional frequency estimates* (2022, arXiv
2111.04636; section numbers not verified), on RAPPOR's two-step memoization (Erlingsson,
Pihur, Korolova, CCS 2014).  Closed forms, and what was checked against the authors' code:
:mod:`ldp.theory.longitudinal`.

A user's value v goes through a *permanent* randomized response at ε_∞ (``epsilon_inf``)
whose output B is memoized per (user, value) and reused at every collection while the
value stays v; each collection reports B through an *instantaneous* randomized response,
chosen so that one report is ε₁-LDP (``epsilon``, the per-report budget).  So:

* one round from fresh users is an ordinary pure frequency oracle at ε = ε₁ (p* = p_s,
  q* = q_s of :func:`ldp.theory.longitudinal.chained_pq`): ``perturb``, ``estimate``,
  ``variance``, ``simulate`` as for any oracle, and the conformance suite applies;
* ``perturb_rounds(values, rng)`` runs τ collections of n users, ``values[i, t]`` the
  value of user i at round t, memoizing per (user, value); each round's reports estimate
  that round's counts without bias (their law is the one-round law);
* any number of reports of one unchanged value is ε_∞-LDP (post-processing of B):
  ``rounds_epsilon(tau)`` is the exact loss after τ rounds, ``memoized_epsilon`` the
  claimed bound, and :class:`Rounds` exposes τ rounds of one user to :mod:`ldp.audit`.

``epsilon_inf`` defaults to 2 ε (ε₁ = ε_∞/2) and must exceed ``epsilon``.  Every coin is
drawn on the exact 53-bit grid (:mod:`ldp.oracles.exact`), keep coins rounded down and
flip coins up: both moves garble each step, so the realised ε₁ and ε_∞ stay at most the
ideal ones, and p*, q* are the realised probabilities.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ldp import budget
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import ROUND_PAIR_BYTES, PureOracle
from ldp.oracles.direct import GRR, MAX_GRR_DOMAIN
from ldp.oracles.memo import memo_slots
from ldp.oracles.unary import CHUNK, UnaryEncoding, UnaryReports
from ldp.registry import register
from ldp.theory import longitudinal as chain
from ldp.validation import ParameterError, check_epsilon, check_generator, check_int, check_values


def _coin(name: str, value: float, x: float, complement: float, *, round_down: bool) -> int:
    """A coin's grid threshold; a coin within 2^-53 of 0 or 1 is refused naming ``name``."""
    if min(x, complement) < exact.SMALLEST or not math.isfinite(x + complement):
        raise ParameterError(
            name,
            value,
            "small enough that every report probability is representable",
            f"a probability of {min(x, complement):.3g} is below 2^-{exact.GRID_BITS}",
        )
    return exact.threshold(x, complement, round_down=round_down)


def _cell_counts(rounds: list[np.ndarray], cells: int) -> np.ndarray:
    """(n, cells): how many of the τ ``rounds`` (one int array of n cells each) name each
    cell, per user."""
    n = rounds[0].shape[0] if rounds else 0
    budget.check_memory(
        "rounds", f"{n} users", "fewer users at a time", 8.0 * n * cells, "a count per cell"
    )
    counts = np.zeros(n * cells, dtype=np.int64)
    offsets = np.arange(n, dtype=np.int64) * cells
    for cell in rounds:
        counts += np.bincount(offsets + cell, minlength=n * cells)
    return counts.reshape(n, cells)


@dataclass(frozen=True, kw_only=True)
class Memoized(PureOracle):
    """The shared client of the chained protocols: PRR memoized per (user, value), then IRR.

    Subclasses give the four coins (``_set_coins``), the two steps (``permanent``,
    ``instantaneous``), how to pick memos (``take``), how to join τ rounds into one
    sequence per user (``join``) and which rounds of a sequence support a value
    (``round_supports``).

    Parameters
    ----------
    epsilon : float
        ε₁: the budget of one report (what the harness and the conformance suite set).
    domain_size : int
        The number d of values.
    epsilon_inf : float, optional
        ε_∞ > ε₁: the budget of any number of reports of one value (default 2 ε₁).
    """

    epsilon_inf: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.epsilon_inf is None:
            object.__setattr__(self, "epsilon_inf", check_epsilon(2 * self.epsilon, "epsilon"))
        big = check_epsilon(self.epsilon_inf, "epsilon_inf")
        if big <= self.epsilon:
            raise ParameterError("epsilon_inf", big, f"> epsilon = {self.epsilon}")
        object.__setattr__(self, "epsilon_inf", big)
        self._set_coins()

    @abstractmethod
    def _set_coins(self) -> None:
        """Store the grid thresholds of p1, q1, p2, q2 (refusing unrepresentable ones)."""

    # --- the realised probabilities ----------------------------------------------------
    @property
    @abstractmethod
    def prr(self) -> tuple[float, float]:
        """(p1, q1) realised: the permanent step supports v with p1, another value with q1."""

    @property
    @abstractmethod
    def irr(self) -> tuple[float, float]:
        """(p2, q2) realised: a report supports the memo's value with p2, another with q2."""

    @property
    def p_star(self) -> float:
        """p_s = q2 + p1 (p2 - q2): one report supports the user's value."""
        return chain.chained_pq(*self.prr, *self.irr)[0]

    @property
    def q_star(self) -> float:
        """q_s = q2 + q1 (p2 - q2): one report supports a fixed other value."""
        return chain.chained_pq(*self.prr, *self.irr)[1]

    # --- the client ----------------------------------------------------------------------
    @abstractmethod
    def permanent(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """The memos B of ``values`` (the permanent randomized response, ε_∞-LDP)."""

    @abstractmethod
    def instantaneous(self, memos: Any, rng: np.random.Generator) -> Any:
        """One report of each memo (the instantaneous randomized response)."""

    @abstractmethod
    def take(self, memos: Any, index: np.ndarray) -> Any:
        """The memos at ``index``."""

    @abstractmethod
    def join(self, rounds: list) -> np.ndarray:
        """τ rounds of reports as one 2-D array, a row per user (the whole sequence)."""

    @abstractmethod
    def round_supports(self, sequences: np.ndarray, value: int) -> np.ndarray:
        """(n, τ) bool: whether each round of each joined sequence supports ``value``."""

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """One report per user from a fresh memo: ε₁-LDP (one round of new users)."""
        rng = check_generator(rng)
        self.check_report_size(np.shape(values)[0] if np.ndim(values) else 1)
        return self.instantaneous(self.permanent(values, rng), rng)

    def perturb_rounds(self, values: np.ndarray, rng: np.random.Generator) -> list:
        """τ collections: ``values[i, t]`` is user i's value at round t; a list of τ reports.

        One memo is drawn per distinct (user, value) pair and reused at every round where
        the user holds that value (also after changing away and back, as RAPPOR's client
        keeps its memo table); each round draws fresh instantaneous noise.
        """
        array = np.asarray(values)
        if array.ndim != 2:
            raise ValueError(f"values must be 2-D (users, rounds), got shape {array.shape}")
        n, tau = array.shape
        budget.check_rounds(tau, f"{self.name}'s reports")
        flat = check_values(array.reshape(-1), self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(n * max(tau, 1), ROUND_PAIR_BYTES)
        users = np.repeat(np.arange(n, dtype=np.int64), tau)
        memo = memo_slots(users, flat, n, self.domain_size)
        memos = self.permanent(memo.new_values, rng)
        which = memo.slots.reshape(n, tau)
        return [self.instantaneous(self.take(memos, which[:, t]), rng) for t in range(tau)]

    # --- privacy over rounds -------------------------------------------------------------
    @abstractmethod
    def rounds_epsilon(self, tau: int) -> float:
        """The exact privacy loss of τ reports of one unchanged value (<= ε_∞, ε₁ at τ = 1)."""

    def memoized_epsilon(self, tau: int, distinct: int = 1) -> float:
        """The claimed bound after τ reports of ``distinct`` distinct values (RAPPOR): ε₁
        for one report, else distinct · ε_∞ (:func:`ldp.theory.longitudinal.memoized_epsilon`).

        It holds against the sequences that hold equal values at the same rounds; against
        others the reuse of a memo shows and the loss can be larger (L-GRR's, L-OUE's and
        L-OSUE's ``sequence_epsilon``, ``docs/longitudinal.md``).
        """
        tau = check_int(tau, "tau", minimum=1)
        distinct = check_int(distinct, "distinct", minimum=1)
        return chain.memoized_epsilon(self.epsilon, float(self.epsilon_inf), tau, distinct)

    def rounds(self, tau: int) -> Rounds:
        """τ collections of one unchanged value as one mechanism, for :mod:`ldp.audit`."""
        return Rounds(protocol=self, tau=tau)

    # --- the adversary from τ reports (ldp.adversary.rounds_success) -----------------------
    @abstractmethod
    def sequence_log_likelihoods(self, rounds: list) -> np.ndarray:
        """(n, d): ln Pr[y_i,1..y_i,τ | v] up to a constant per user, for a user who held v
        at each of the τ ``rounds`` (the memo summed out)."""

    def rounds_adversary_success(self, prior: np.ndarray, tau: int) -> float | None:
        """The Bayesian adversary's exact success from τ reports of one unchanged value
        (prior ``prior``), or None where no exact form is implemented or affordable."""
        return None


@dataclass(frozen=True)
class Rounds:
    """τ collections of one user's unchanged value, the whole sequence of reports as output.

    ``perturb(values, rng)`` gives, for each value, the τ reports of a user holding it at
    every round (joined into one row, :meth:`Memoized.join`); ``epsilon`` is the claim the
    sequence must meet, ε_∞ (``protocol.epsilon_inf``).  ``audit_events`` are the
    likelihood-ratio events of a sequence: the number of rounds supporting v minus those
    supporting v', at least m (evidence for v) or at most -m (for v'), m = 1..τ.
    """

    protocol: Memoized
    tau: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "tau", check_int(self.tau, "tau", minimum=1, maximum=4096))

    @property
    def epsilon(self) -> float:
        return float(self.protocol.epsilon_inf)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(values)
        repeated = np.repeat(values.reshape(-1, 1), self.tau, axis=1)
        return self.protocol.join(self.protocol.perturb_rounds(repeated, rng))

    def audit_events(self, v: int, v_prime: int) -> list:
        from ldp.audit.events import Event

        def score(sequences: np.ndarray) -> np.ndarray:
            supports = self.protocol.round_supports
            return supports(sequences, v).sum(axis=1) - supports(sequences, v_prime).sum(axis=1)

        events = []
        for m in range(1, self.tau + 1):
            events.append(Event(f"{m}+ more rounds for {v}", lambda r, m=m: score(r) >= m, +1))
            events.append(
                Event(f"{m}+ more rounds for {v_prime}", lambda r, m=m: score(r) <= -m, -1)
            )
        return events


@register(name="LGRR", label="L-GRR", color="#08519c", order=110)
@dataclass(frozen=True, kw_only=True)
class LGRR(Memoized):
    """L-GRR: GRR at ε_∞ memoized, then GRR keeping the memo with p2
    (:func:`ldp.theory.longitudinal.l_grr_parameters`).

    One report is d-ary randomized response with p* = p_s (its sampled engine is GRR's
    multinomial); reports are int64 values.
    """

    name = "LGRR"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="categorical", randomized_response=True
    )
    _keep1: int = field(init=False, repr=False, compare=False)
    _keep2: int = field(init=False, repr=False, compare=False)

    def _set_coins(self) -> None:
        d = self.domain_size
        if d > MAX_GRR_DOMAIN:
            raise ParameterError("domain_size", d, "<= 2^62 for L-GRR (int64 reports)")
        p1, q1, p2, not_p2 = chain.l_grr_parameters(float(self.epsilon_inf), self.epsilon, d)
        keep1 = _coin("epsilon_inf", self.epsilon_inf, p1, (d - 1) * q1, round_down=True)
        object.__setattr__(self, "_keep1", keep1)
        object.__setattr__(
            self, "_keep2", _coin("epsilon", self.epsilon, p2, not_p2, round_down=True)
        )

    @property
    def prr(self) -> tuple[float, float]:
        p1 = exact.realised(self._keep1)
        return p1, (1 - p1) / (self.domain_size - 1)

    @property
    def irr(self) -> tuple[float, float]:
        p2 = exact.realised(self._keep2)
        return p2, (1 - p2) / (self.domain_size - 1)

    def _randomize(self, values: np.ndarray, keep: int, rng: np.random.Generator) -> np.ndarray:
        kept = exact.bernoulli(rng, keep, values.shape[0])
        shift = rng.integers(1, self.domain_size, size=values.shape[0])
        return np.where(kept, values, (values + shift) % self.domain_size)

    def permanent(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        return self._randomize(values, self._keep1, check_generator(rng))

    def instantaneous(self, memos: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self._randomize(np.asarray(memos, dtype=np.int64), self._keep2, rng)

    def take(self, memos: np.ndarray, index: np.ndarray) -> np.ndarray:
        return memos[index]

    def join(self, rounds: list) -> np.ndarray:
        return np.stack(rounds, axis=1) if rounds else np.zeros((0, 0), dtype=np.int64)

    def round_supports(self, sequences: np.ndarray, value: int) -> np.ndarray:
        return np.asarray(sequences) == value

    def rounds_epsilon(self, tau: int) -> float:
        tau = check_int(tau, "tau", minimum=1, maximum=4096)
        return chain.rounds_loss_categorical(*self.prr, *self.irr, self.domain_size, tau)

    def sequence_epsilon(self, x: Sequence[int], x_prime: Sequence[int]) -> float:
        """The exact loss between two value sequences of one user (x_t held at round t),
        max over report sequences y of ln Pr[y | x] / Pr[y | x']
        (:func:`ldp.theory.longitudinal.sequence_loss_categorical`, by enumeration)."""
        k = self.domain_size
        return chain.sequence_loss_categorical(*self.prr, *self.irr, k, tuple(x), tuple(x_prime))

    def sequence_log_likelihoods(self, rounds: list) -> np.ndarray:
        """From each user's count of reports naming each value
        (:func:`ldp.theory.longitudinal.categorical_sequence_log_likelihoods`)."""
        self.check_likelihood_table(len(rounds[0]) if rounds else 0, cell_bytes=40.0)
        counts = _cell_counts([np.asarray(r, dtype=np.int64) for r in rounds], self.domain_size)
        return chain.categorical_sequence_log_likelihoods(counts, counts, *self.prr, *self.irr)

    def rounds_adversary_success(self, prior: np.ndarray, tau: int) -> float | None:
        """Exact over the count vectors of τ reports, at small d and τ
        (:func:`ldp.theory.longitudinal.categorical_rounds_success`), else None."""
        tau = check_int(tau, "tau", minimum=1, maximum=4096)
        return chain.categorical_rounds_success(prior, *self.prr, *self.irr, tau)

    # one report is GRR's: its likelihood, adversary, events, counting and sampled engine
    report_probabilities = GRR.report_probabilities
    adversary_success = GRR.adversary_success
    log_likelihoods = GRR.log_likelihoods
    audit_events = GRR.audit_events
    audit_event_probabilities = GRR.audit_event_probabilities
    n_reports = GRR.n_reports
    support_counts = GRR.support_counts
    _simulate_counts = GRR._simulate_counts


@dataclass(frozen=True, kw_only=True)
class _ChainedUnary(Memoized):
    """OUE at ε_∞ memoized bit by bit, then an instantaneous flip of every bit.

    Reports are :class:`~ldp.oracles.unary.UnaryReports`; one report's bits are
    independent with p_s (own bit) and q_s (others), so the sampled engine is the pure
    framework's independent binomials.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(report_model="bits")
    _flip1: int = field(init=False, repr=False, compare=False)
    _keep2: int = field(init=False, repr=False, compare=False)
    _flip2: int = field(init=False, repr=False, compare=False)

    @abstractmethod
    def irr_coins(self) -> tuple[float, float, float, float]:
        """The ideal p2, 1 - p2, q2, 1 - q2."""

    def _set_coins(self) -> None:
        big = math.exp(float(self.epsilon_inf))
        flip1 = _coin(
            "epsilon_inf", self.epsilon_inf, 1 / (big + 1), big / (big + 1), round_down=False
        )
        object.__setattr__(self, "_flip1", flip1)
        p2, not_p2, q2, not_q2 = self.irr_coins()
        object.__setattr__(
            self, "_keep2", _coin("epsilon", self.epsilon, p2, not_p2, round_down=True)
        )
        object.__setattr__(
            self, "_flip2", _coin("epsilon", self.epsilon, q2, not_q2, round_down=False)
        )

    @property
    def prr(self) -> tuple[float, float]:
        return 0.5, exact.realised(self._flip1)

    @property
    def irr(self) -> tuple[float, float]:
        return exact.realised(self._keep2), exact.realised(self._flip2)

    def _rows(self) -> int:
        return max(1, CHUNK // self.domain_size)

    def permanent(self, values: np.ndarray, rng: np.random.Generator) -> UnaryReports:
        """OUE at ε_∞: the own bit is 1 with 1/2 (exact), every other bit with q1."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        d, n = self.domain_size, values.shape[0]
        self.check_report_size(n)
        out = np.empty((n, -(-d // 8)), dtype=np.uint8)
        for start in range(0, n, self._rows()):
            chunk = values[start : start + self._rows()]
            bits = exact.bernoulli(rng, self._flip1, (chunk.shape[0], d))
            bits[np.arange(chunk.shape[0]), chunk] = rng.integers(0, 2, chunk.shape[0]) == 1
            out[start : start + chunk.shape[0]] = np.packbits(bits, axis=1)
        return UnaryReports(out, d)

    def instantaneous(self, memos: UnaryReports, rng: np.random.Generator) -> UnaryReports:
        """Each memo bit 1 is reported 1 with p2, each memo bit 0 with q2."""
        packed, d = self._check_reports(memos), self.domain_size
        out = np.empty_like(packed)
        for start in range(0, packed.shape[0], self._rows()):
            chunk = packed[start : start + self._rows()]
            memo = np.unpackbits(chunk, axis=1, count=d).astype(bool)
            bits = exact.below(rng, np.where(memo, self._keep2, self._flip2), memo.shape)
            out[start : start + chunk.shape[0]] = np.packbits(bits, axis=1)
        return UnaryReports(out, d)

    def take(self, memos: UnaryReports, index: np.ndarray) -> UnaryReports:
        return UnaryReports(memos.bits[index], memos.domain_size)

    def join(self, rounds: list) -> np.ndarray:
        width = -(-self.domain_size // 8)
        if not rounds:
            return np.zeros((0, 0), dtype=np.uint8)
        return np.concatenate([self._check_reports(r) for r in rounds], axis=1).reshape(
            -1, len(rounds) * width
        )

    def round_supports(self, sequences: np.ndarray, value: int) -> np.ndarray:
        width = -(-self.domain_size // 8)
        blocks = np.asarray(sequences).reshape(np.shape(sequences)[0], -1, width)
        byte, shift = divmod(int(value), 8)
        return ((blocks[:, :, byte] >> np.uint8(7 - shift)) & 1).astype(bool)

    def rounds_epsilon(self, tau: int) -> float:
        tau = check_int(tau, "tau", minimum=1, maximum=4096)
        return chain.rounds_loss_bits(*self.prr, *self.irr, tau)

    def sequence_epsilon(self, x: Sequence[int], x_prime: Sequence[int]) -> float:
        """The exact loss between two value sequences of one user (x_t held at round t),
        max over report sequences y of ln Pr[y | x] / Pr[y | x']
        (:func:`ldp.theory.longitudinal.sequence_loss_bits`, position by position)."""
        d = self.domain_size
        return chain.sequence_loss_bits(*self.prr, *self.irr, d, tuple(x), tuple(x_prime))

    def sequence_log_likelihoods(self, rounds: list) -> np.ndarray:
        """ln P(c_v | own) - ln P(c_v | other), c_v the rounds whose bit v is set: the
        positions are independent and only v's differs in law
        (:func:`ldp.theory.longitudinal.bit_count_logs`)."""
        d, n = self.domain_size, self.n_reports(rounds[0]) if rounds else 0
        self.check_likelihood_table(n, cell_bytes=25.0)  # counts, a round's bits, the logs
        counts = np.zeros((n, d), dtype=np.int64)
        for reports in rounds:
            counts += np.unpackbits(self._check_reports(reports), axis=1, count=d)
        own, other = chain.bit_count_logs(*self.prr, *self.irr, len(rounds))
        return (own - other)[counts]

    def rounds_adversary_success(self, prior: np.ndarray, tau: int) -> float:
        """Exact: E[max_v π_v L_v] over independent positions (:func:`ldp.adversary.
        own_coordinate_success`), L the likelihood ratio of a position's count of ones c,
        whose law under "other" is C(τ, c) P(c | other)."""
        from ldp.adversary import own_coordinate_success

        tau = check_int(tau, "tau", minimum=1, maximum=4096)
        own, other = chain.bit_count_logs(*self.prr, *self.irr, tau)
        c = np.arange(tau + 1)
        log_many = math.lgamma(tau + 1) - np.array(
            [math.lgamma(k + 1) + math.lgamma(tau - k + 1) for k in c]
        )
        return own_coordinate_success(
            np.asarray(prior, dtype=float), np.exp(own - other), np.exp(log_many + other)
        )

    def working_bytes(self, n_users: int) -> int:
        rows = max(1, min(n_users, self._rows()))
        return 2 * self.report_bytes(n_users) + 24 * rows * self.domain_size

    # one report is a unary encoding's: its likelihood, adversary, events and counting
    report_bytes = UnaryEncoding.report_bytes
    report_probabilities = UnaryEncoding.report_probabilities
    adversary_success = UnaryEncoding.adversary_success
    log_likelihoods = UnaryEncoding.log_likelihoods
    audit_events = UnaryEncoding.audit_events
    audit_event_probabilities = UnaryEncoding.audit_event_probabilities
    _check_reports = UnaryEncoding._check_reports
    n_reports = UnaryEncoding.n_reports
    support_counts = UnaryEncoding.support_counts


@register(name="LOUE", label="L-OUE", color="#006d2c", order=120)
@dataclass(frozen=True, kw_only=True)
class LOUE(_ChainedUnary):
    """L-OUE: OUE at ε_∞ memoized, then OUE-like IRR (p2 = 1/2, q2 of
    :func:`~ldp.theory.longitudinal.l_oue_q2`).

    Reaches ε₁ only when e^{ε₁} < (2 e^{ε_∞} + 1)/3 (the default ε_∞ = 2 ε₁ always does).
    """

    name = "LOUE"

    def irr_coins(self) -> tuple[float, float, float, float]:
        big = float(self.epsilon_inf)
        if not chain.l_oue_feasible(big, self.epsilon):
            raise ParameterError(
                "epsilon_inf",
                big,
                f"with e^epsilon < (2 e^epsilon_inf + 1)/3 (epsilon = {self.epsilon})",
                "an OUE instantaneous step cannot reach a larger single-report epsilon",
            )
        q2 = chain.l_oue_q2(big, self.epsilon)
        return 0.5, 0.5, q2, 1 - q2

    def _set_coins(self) -> None:
        super()._set_coins()
        object.__setattr__(self, "_keep2", exact.threshold(0.5, 0.5, round_down=True, exact=True))


@register(name="LOSUE", label="L-OSUE", color="#6a3d9a", order=130)
@dataclass(frozen=True, kw_only=True)
class LOSUE(_ChainedUnary):
    """L-OSUE: OUE at ε_∞ memoized, then a symmetric (SUE-like) IRR, q2 = 1 - p2 of
    :func:`~ldp.theory.longitudinal.l_osue_parameters`."""

    name = "LOSUE"

    def irr_coins(self) -> tuple[float, float, float, float]:
        p2, q2 = chain.l_osue_parameters(float(self.epsilon_inf), self.epsilon)
        return p2, q2, q2, p2


__all__ = ["LGRR", "LOSUE", "LOUE", "Memoized", "Rounds"]
