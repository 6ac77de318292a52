"""dBitFlip: d sampled buckets, one randomized bit each, memoized per value.

Ding, Kulkarni, Yekhanin, *Collecting Telemetry Data Privately*, NeurIPS 2017: dBitFlip
and its memoization (section numbers not verified).  The domain is k buckets
(``domain_size``).  Each
user samples d distinct buckets j_1..j_d uniformly, once and for all (public randomness,
independent of the value), and reports for each sampled bucket j a bit b_j that is 1 with
probability p = e^{ε/2}/(e^{ε/2}+1) if the user's bucket is j, else q = 1/(e^{ε/2}+1).
Two inputs change at most two of the bits, each by a ratio e^{ε/2}: one report is ε-LDP.

Estimator (the paper's ĥ(v), in counts): ĉ(v) = (k/d) Σ_{i: v sampled by i}
(b_{i,v} - q)/(p - q), unbiased.  Its variance, summing each user's (independent)
contribution, with P(v sampled) = d/k:

    Var ĉ(v) = n_v [(k/d)(p(1-q)² + (1-p)q²)/(p-q)² - 1] + (n - n_v)(k/d) q(1-q)/(p-q)²

(with q = 1 - p, the paper's p³ + q³ and pq).  Memoization: the bits of each
(user, value) are drawn once and replayed, so a user whose value never changes sends the
same report at every collection and spends ε in all (``rounds_epsilon``); a user who held
c distinct values spends at most c ε (``memoized_epsilon``).

Coins are drawn on the exact 53-bit grid (p rounded down, q up); p*, q* are realised.
The paper's text was not at hand, so no section or equation number is cited; the
variance is derived here and tested against the reports engine.  Compared with the
``dBitFlipPM`` of the LOLOHA authors' code (``hharcolezi/LOLOHA``, also in multi-freq-ldpy):
p, q and the estimator agree; their client memoizes per *pattern* (the one-hot value
restricted to the d sampled buckets, so every value outside them shares one memo: at most
min(d + 1, k) memos), where this one memoizes per value (c distinct values, at most c ε:
the claimed bound here, larger than theirs when c > d + 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ldp import budget
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import ROUND_PAIR_BYTES, FrequencyOracle, check_variance_input
from ldp.oracles.longitudinal import Rounds
from ldp.oracles.memo import memo_slots
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_int, check_values

#: Random keys drawn per chunk of users when sampling buckets.
CHUNK = 1 << 22
#: The most buckets: they are int64 reports, and the variance n k/d (...) must stay finite
#: in float64 for every n up to 2^63 (at 2^62 buckets it is below 10^60 at the smallest ε).
MAX_BUCKETS = 2**62


@dataclass(frozen=True)
class ReplayedRounds(Rounds):
    """dBitFlip's τ rounds of one unchanged value: one report replayed, so the claim is ε."""

    @property
    def epsilon(self) -> float:
        return float(self.protocol.epsilon)


class DBitFlipReports(NamedTuple):
    """dBitFlip reports: each user's d sampled buckets and the bit reported for each."""

    buckets: np.ndarray  #: int64 (n, d): the sampled buckets (public randomness)
    bits: np.ndarray  #: bool (n, d): the bit of each sampled bucket


def floyd_sample(n_users: int, k: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """d distinct values of [0, k) per user, each d-set equally likely (Floyd's algorithm,
    all users at once: at round j = k - d + i a uniform t in [0, j], or j itself if t was
    already taken; Bentley and Floyd, CACM 1987)."""
    out = np.empty((n_users, d), dtype=np.int64)
    for i, j in enumerate(range(k - d, k)):
        t = rng.integers(0, j + 1, size=n_users)
        taken = (out[:, :i] == t[:, None]).any(axis=1)
        out[:, i] = np.where(taken, j, t)
    return out


@register(name="dBitFlip", color="#01665e", order=140)
@dataclass(frozen=True, kw_only=True)
class DBitFlip(FrequencyOracle):
    """dBitFlip (Ding et al. 2017): d of the k buckets sampled per user, a bit each.

    Parameters
    ----------
    epsilon : float
        ε of one report (and of every replay of a memoized value).
    domain_size : int
        k, the number of buckets.
    d : int, default 1
        Buckets sampled per user, 1 <= d <= k (d = k: every bucket, a symmetric unary
        encoding).

    The sampled engine draws each candidate's estimate from its exact marginal law; the
    (negative) covariance between candidates, through the sampling without replacement,
    is not reproduced (``sampled="approximate"``).
    """

    name = "dBitFlip"
    capabilities: ClassVar[Capabilities] = Capabilities(
        sampled="approximate", report_model="bits", public_randomness=("buckets",)
    )
    d: int = 1
    _keep: int = field(init=False, repr=False, compare=False)
    _flip: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.domain_size > MAX_BUCKETS:
            raise ParameterError(
                "domain_size",
                self.domain_size,
                "in [2, 2^62]",
                message=f"domain_size must lie in [2, 2^62] for dBitFlip (int64 buckets; the "
                f"variance's k/d factor), got about 2^{self.domain_size.bit_length() - 1}",
            )
        object.__setattr__(self, "d", check_int(self.d, "d", minimum=1))
        if self.d > self.domain_size:
            raise ParameterError("d", self.d, f"<= domain_size = {self.domain_size}")
        half = math.exp(self.epsilon / 2)
        p, q = half / (half + 1), 1 / (half + 1)
        exact.check_representable(self.name, self.epsilon, q, largest_safe=2 * exact.LOG_GRID)
        object.__setattr__(self, "_keep", exact.threshold(p, q, round_down=True))
        object.__setattr__(self, "_flip", exact.threshold(q, p, round_down=False))

    @property
    def p(self) -> float:
        """P(b_j = 1) when the user's bucket is j (realised, <= e^{ε/2}/(e^{ε/2}+1))."""
        return exact.realised(self._keep)

    @property
    def q(self) -> float:
        """P(b_j = 1) when it is not (realised, >= 1/(e^{ε/2}+1))."""
        return exact.realised(self._flip)

    # --- client ------------------------------------------------------------------------
    def sample_buckets(self, n_users: int, rng: np.random.Generator) -> np.ndarray:
        """d distinct buckets per user, uniformly: Floyd's algorithm (d rounds, O(n d²))
        when d² <= k, else the d smallest of k uniform keys (O(n k))."""
        k, d = self.domain_size, self.d
        if d * d <= k:
            return floyd_sample(n_users, k, d, rng)
        out = np.empty((n_users, d), dtype=np.int64)
        rows = max(1, CHUNK // k)
        for start in range(0, n_users, rows):
            size = min(rows, n_users - start)
            keys = rng.random((size, k))
            out[start : start + size] = np.argpartition(keys, d - 1, axis=1)[:, :d]
        return out

    def respond(self, values: np.ndarray, buckets: np.ndarray, rng: np.random.Generator):
        """The bits of users holding ``values`` for their sampled ``buckets``."""
        own = buckets == values[:, None]
        return exact.below(rng, np.where(own, self._keep, self._flip), buckets.shape)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> DBitFlipReports:
        """One ε-LDP report per user (fresh buckets: one round of new users)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        buckets = self.sample_buckets(values.shape[0], rng)
        return DBitFlipReports(buckets, self.respond(values, buckets, rng))

    def perturb_rounds(self, values: np.ndarray, rng: np.random.Generator) -> list:
        """τ collections with memoization: ``values[i, t]`` is user i's value at round t.

        Each user samples its buckets once; the bits of each distinct (user, value) pair
        are drawn once and replayed at every round where the user holds that value.
        """
        array = np.asarray(values)
        if array.ndim != 2:
            raise ValueError(f"values must be 2-D (users, rounds), got shape {array.shape}")
        n, tau = array.shape
        budget.check_rounds(tau, f"{self.name}'s reports")
        flat = check_values(array.reshape(-1), self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(n * max(tau, 1), ROUND_PAIR_BYTES)
        buckets = self.sample_buckets(n, rng)
        users = np.repeat(np.arange(n, dtype=np.int64), tau)
        pairs = memo_slots(users, flat, n, self.domain_size)
        memo = self.respond(pairs.new_values, buckets[pairs.new_users], rng)
        which = pairs.slots.reshape(n, tau)
        return [DBitFlipReports(buckets, memo[which[:, t]]) for t in range(tau)]

    def rounds_epsilon(self, tau: int) -> float:
        """The loss of τ reports of one unchanged value: ε (they are one report, replayed)."""
        check_int(tau, "tau", minimum=1)
        return self.epsilon

    def memoized_epsilon(self, tau: int, distinct: int = 1) -> float:
        """At most min(τ, distinct) ε after τ reports of ``distinct`` distinct values."""
        tau = check_int(tau, "tau", minimum=1)
        return min(tau, check_int(distinct, "distinct", minimum=1)) * self.epsilon

    def rounds(self, tau: int) -> ReplayedRounds:
        """τ collections of one unchanged value as one mechanism, for :mod:`ldp.audit`.

        Its claim is ε: the τ reports are one report replayed (``rounds_epsilon``).
        """
        return ReplayedRounds(protocol=self, tau=tau)

    def join(self, rounds: list) -> np.ndarray:
        """Each user's d buckets, then the d bits of each of the τ rounds (int64)."""
        if not rounds:
            return np.zeros((0, 0), dtype=np.int64)
        first = self._check_reports(rounds[0])
        bits = [self._check_reports(r).bits.astype(np.int64) for r in rounds]
        return np.column_stack([first.buckets, *bits])

    def round_supports(self, sequences: np.ndarray, value: int) -> np.ndarray:
        """(n, τ): whether each round of a joined sequence sampled ``value`` with its bit set."""
        sequences = np.asarray(sequences, dtype=np.int64)
        d = self.d
        buckets = sequences[:, :d]
        bits = sequences[:, d:].reshape(sequences.shape[0], -1, d).astype(bool)
        return ((buckets == value)[:, None, :] & bits).any(axis=2)

    # --- the Bayesian adversary (ldp.adversary) ---------------------------------------
    def log_likelihoods(self, reports: DBitFlipReports) -> np.ndarray:
        """ln Pr[y_i | v] up to a constant per report: 0 for an unsampled v, ln(p/q) or
        ln((1-p)/(1-q)) for a sampled one whose bit is 1 or 0."""
        buckets, bits = self._check_reports(reports)
        n, k = buckets.shape[0], self.domain_size
        budget.check_memory(
            "reports",
            f"{n} reports",
            "fewer reports at a time",
            8.0 * n * k,
            "a likelihood per report and value",
        )
        set_ = math.log(self.p / self.q)
        unset = math.log1p(-self.p) - math.log1p(-self.q)
        out = np.zeros((n, k))
        out[np.arange(n)[:, None], buckets] = np.where(bits, set_, unset)
        return out

    def adversary_success(self, prior: np.ndarray) -> float | None:
        """Exact for d = 1: the report (j, b) names bucket j uniformly and b depends on
        whether the value is j, so S(π) = (1/k) Σ_j [max(π_j p, q m_j) + max(π_j (1-p),
        (1-q) m_j)], m_j = max_{v≠j} π_v.  None for d > 1 (empirical, through
        :meth:`log_likelihoods`)."""
        if self.d != 1:
            return None
        prior = np.asarray(prior, dtype=float)
        order = np.argsort(prior)[::-1]
        others = np.full(prior.shape[0], prior[order[0]])
        others[order[0]] = prior[order[1]] if prior.shape[0] > 1 else 0.0
        p, q = self.p, self.q
        hits = np.maximum(prior * p, q * others) + np.maximum(prior * (1 - p), (1 - q) * others)
        return float(hits.sum() / prior.shape[0])

    def sequence_log_likelihoods(self, rounds: list) -> np.ndarray:
        """τ reports of one unchanged value are one report replayed: its
        :meth:`log_likelihoods`, or -inf for every value if the rounds differ."""
        first = self._check_reports(rounds[0])
        out = self.log_likelihoods(first)
        for reports in rounds[1:]:
            same = np.all(self._check_reports(reports).bits == first.bits, axis=1)
            out[~same] = -np.inf
        return out

    def rounds_adversary_success(self, prior: np.ndarray, tau: int) -> float | None:
        """One report's (:meth:`adversary_success`): the replays add nothing."""
        check_int(tau, "tau", minimum=1)
        return self.adversary_success(prior)

    def report_bytes(self, n_users: int) -> int:
        return 9 * self.d * n_users

    def working_bytes(self, n_users: int) -> int:
        """The reports and the bits' coins, plus a chunk of k keys a user when the buckets
        are not drawn by :func:`floyd_sample` (d² > k)."""
        if self.d * self.d <= self.domain_size:
            return 4 * self.report_bytes(n_users)
        rows = max(1, min(n_users, CHUNK // self.domain_size))
        return 4 * self.report_bytes(n_users) + 16 * rows * self.domain_size

    # --- likelihood (the "bits" model, one product per public draw) --------------------
    def public_draws(self) -> np.ndarray:
        """Representative bucket samples: the k rotations of {0, ..., d-1}.

        Every pair of buckets within distance d-1 (mod k) is sampled together by one of
        them, which is where the loss is largest (ε); for d = 1 every bucket alone (ε/2)."""
        k = self.domain_size
        self.check_probability_table(k * self.d)  # k rotations of d buckets, int64 each
        return (np.arange(k)[:, None] + np.arange(self.d)[None, :]) % k

    def audit_events(self, v: int, v_prime: int) -> list:
        """Bucket v sampled with its bit set, bucket v' sampled with its bit unset, and
        both; mirrored.  For d = 1 the first two have ratio p/q = e^{ε/2} (the loss of one
        report with one bucket); for d >= 2 the conjunction has ratio e^ε."""
        from ldp.audit.events import Event

        def sampled(reports: DBitFlipReports, bucket: int, bit: bool) -> np.ndarray:
            buckets, bits = np.asarray(reports.buckets), np.asarray(reports.bits)
            return np.any((buckets == bucket) & (bits == bit), axis=1)

        events = []
        for a, b, favours in ((v, v_prime, +1), (v_prime, v, -1)):
            events += [
                Event(f"bucket {a} set", lambda r, a=a: sampled(r, a, True), favours),
                Event(f"bucket {b} unset", lambda r, b=b: sampled(r, b, False), favours),
                Event(
                    f"bucket {a} set and bucket {b} unset",
                    lambda r, a=a, b=b: sampled(r, a, True) & sampled(r, b, False),
                    favours,
                ),
            ]
        return events

    def report_probabilities(self, value: int, buckets: np.ndarray | None = None) -> np.ndarray:
        """Pr[bit j = 1 | value, buckets] for each sampled bucket j (bits independent);
        ``buckets`` one sample (d,) or several (m, d); default the first rotation."""
        value = self.check_value(value)
        if buckets is None:
            self.check_probability_table(self.d)
            buckets = np.arange(self.d)
        buckets = np.asarray(buckets, dtype=np.int64)
        self.check_probability_table(buckets.size)
        return np.where(buckets == value, self.p, self.q)

    # --- aggregator --------------------------------------------------------------------
    def _check_reports(self, reports: DBitFlipReports) -> DBitFlipReports:
        if not isinstance(reports, DBitFlipReports):
            raise TypeError(f"reports must be DBitFlipReports, got {type(reports).__name__}")
        buckets, bits = np.asarray(reports.buckets), np.asarray(reports.bits)
        if buckets.shape != bits.shape or buckets.ndim != 2 or buckets.shape[1] != self.d:
            raise ValueError(
                f"reports must hold (n, d = {self.d}) buckets and bits, got "
                f"{buckets.shape} and {bits.shape}"
            )
        check_values(buckets.reshape(-1), self.domain_size, name="reports")
        return DBitFlipReports(buckets, bits.astype(bool))

    def n_reports(self, reports: DBitFlipReports) -> int:
        return int(self._check_reports(reports).buckets.shape[0])

    def estimate(self, reports: DBitFlipReports, candidates: np.ndarray | None = None):
        """ĉ(v) = (k/d) Σ_{i: v sampled} (b_{i,v} - q)/(p - q) (Ding et al.'s histogram
        estimator, in counts)."""
        reports = self._check_reports(reports)
        chosen = self.candidates(candidates)
        k = self.domain_size
        flat = reports.buckets.reshape(-1)
        scale = k / self.d / (self.p - self.q)
        if candidates is None:  # the whole domain (budgeted by candidates()): dense counts
            sampled = np.bincount(flat, minlength=k)
            ones = np.bincount(flat, weights=reports.bits.reshape(-1), minlength=k)
            return scale * (ones - self.q * sampled)
        # a few candidates of a large domain: counts of the buckets the reports hold only
        held, which, sampled = np.unique(flat, return_inverse=True, return_counts=True)
        if held.size == 0:
            return np.zeros(chosen.shape[0])
        ones = np.bincount(which.reshape(-1), weights=reports.bits.reshape(-1))
        position = np.minimum(np.searchsorted(held, chosen), held.shape[0] - 1)
        found = np.where(held[position] == chosen, ones[position] - self.q * sampled[position], 0)
        return scale * found

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """The module's closed form: each user's contribution summed (exact)."""
        n, c = check_variance_input(n_users, true_count)
        p, q, ratio = self.p, self.q, self.domain_size / self.d
        gap = (p - q) ** 2
        holder = ratio * (p * (1 - q) ** 2 + (1 - p) * q**2) / gap - 1
        return float(c * holder + (n - c) * ratio * q * (1 - q) / gap)

    def _simulate_counts(self, candidate_counts, n_users, rng):
        """Each candidate from its exact marginal law: A ~ Bin(n_v, d/k) holders and
        B ~ Bin(n - n_v, d/k) others sampled v, with Bin(A, p) + Bin(B, q) ones."""
        counts, share = candidate_counts, self.d / self.domain_size
        holders = rng.binomial(counts, share)
        others = rng.binomial(n_users - counts, share)
        ones = rng.binomial(holders, self.p) + rng.binomial(others, self.q)
        scale = 1 / share / (self.p - self.q)
        return scale * (ones - self.q * (holders + others))
