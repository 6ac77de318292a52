"""Subset selection (SS): Wang et al. 2016; Ye & Barg, IEEE Trans. Inf. Theory 2018.

Citations ``[SS]`` are to M. Ye, A. Barg, *Optimal Schemes for Discrete Distribution
Estimation under Locally Differential Privacy*, IEEE Trans. Inf. Theory 64(8), 2018,
Sec. III (the "ω-subset mechanism", also S. Wang et al., *Mutual Information Optimally
Local Private Discrete Distribution Estimation*, arXiv:1607.08025, 2016); ``[CMM]`` to
Cormode, Maddock, Maple, VLDB 2021, Sec. 3.

The user with value v reports a subset S of the domain of size ω.  S contains v with
probability p = ωe^ε/(ωe^ε + d - ω); the rest of S is uniform: ω - 1 (if v is in S) or ω
(if not) distinct values drawn uniformly from the d - 1 others.  Every subset holding v
then has probability p / C(d-1, ω-1), every other (1-p) / C(d-1, ω), and their ratio is
[ωe^ε/(d-ω)] [C(d-1, ω)/C(d-1, ω-1)] = e^ε ([SS] Eq. (13)).

In the pure framework ([FO] "Method") S supports every value it holds: p* = p and
q* = p(ω-1)/(d-1) + (1-p)ω/(d-1).  A user's support indicators are negatively
correlated (exactly ω of them are 1), like GRR's; the sampled engine respects that.

ω.  The variance-optimal ω is near d/(e^ε+1) ([SS] Sec. III; [CMM] Sec. 3.4).  Libraries
round it differently (multi-freq-ldpy to the nearest integer; others take the floor or
the ceiling, whichever has the smaller variance): here the default is the one of
⌊d/(e^ε+1)⌋ and ⌈d/(e^ε+1)⌉, clipped to [1, d-1], whose exact variance at n_v = 0 is
smaller (the floor on a tie).  ``omega`` sets it explicitly.

Exact coins: the keep coin is on the 53-bit grid (rounded down, so the realised ratio
p*(d-ω)/((1-p*)ω) stays <= e^ε); the other members are drawn with Floyd's algorithm from
exact ``rng.integers`` draws.  Reports are :class:`~ldp.oracles.unary.UnaryReports`
(the subset as d packed bits).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp import budget, theory
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import PureOracle
from ldp.oracles.unary import CHUNK, UnaryReports, column_sums
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_int, check_values

#: The sampled engine draws the users' own subsets when n d is at most this.
REPORTS_SHORTCUT = 1 << 22
#: ``report_probabilities`` enumerates every ω-subset: at most this many.
MAX_ENUMERATED = 1 << 20
#: ``perturb`` draws the other members of a chunk of users together (Floyd's algorithm, ω
#: rounds vectorised over the chunk) when ω is at most this many times the chunk's users,
#: else user by user (``Generator.choice``, compiled): ω rounds of numpy calls over a few
#: users took seconds per user at d = 10^6 (``python -m benchmarks --only subset``).
FLOYD_ROUNDS_PER_USER = 1.0
#: :func:`subset_support` holds about eight int64/float64 arrays of 2 x (ω + 1) entries ...
GROUP_BYTES = 128
#: numpy's exact multivariate hypergeometric draws ("marginals") take fewer colours' total.
HYPERGEOMETRIC_USERS = 10**9
#: ... and touches each about twice per value visited.
GROUP_OPERATIONS = 32


def default_omega(epsilon: float, domain_size: int) -> int:
    """⌊d/(e^ε+1)⌋ or ⌈d/(e^ε+1)⌉ in [1, d-1], whichever has the smaller variance."""
    d, e = domain_size, math.exp(epsilon)
    centre = d / (e + 1)
    choices = sorted({min(max(int(x), 1), d - 1) for x in (math.floor(centre), math.ceil(centre))})
    return min(choices, key=lambda w: _ideal_variance(epsilon, d, w))


def _ideal_pq(epsilon: float, d: int, omega: int) -> tuple[float, float]:
    p = omega * math.exp(epsilon) / (omega * math.exp(epsilon) + d - omega)
    return p, (p * (omega - 1) + (1 - p) * omega) / (d - 1)


def _ideal_variance(epsilon: float, d: int, omega: int) -> float:
    p, q = _ideal_pq(epsilon, d, omega)
    return q * (1 - q) / (p - q) ** 2


def draw_others(
    bits: np.ndarray, values: np.ndarray, keep: np.ndarray, omega: int, rng: np.random.Generator
) -> None:
    """Set, in each row of ``bits`` (n x d booleans), ω - keep[i] distinct values other
    than ``values[i]``, uniform among the d - 1 others (exact).

    The others of v are indexed 0..d-2, index i naming the value i + (i >= v).  With many
    users per round, Floyd's algorithm vectorised over the users: for j = m-r .. m-1 (m =
    d - 1, r = the number to draw) draw t uniform in [0, j] and take t unless already
    taken, else j; its rounds are ω numpy calls.  With few users per round, each user's
    indices come from ``rng.choice(d - 1, r, replace=False)`` (a uniform r-subset, drawn
    in compiled code; it holds an index array of the d - 1 others when r is large).
    Both draw every r-subset of the others with probability 1/C(d-1, r).
    """
    n, d = bits.shape
    m = d - 1
    if omega <= FLOYD_ROUNDS_PER_USER * n:
        index = np.arange(n)
        for j in range(m - omega, m):
            active = (j >= m - omega + 1) | ~keep  # users keeping v need one fewer
            t = rng.integers(0, j + 1, size=n)
            t_value = t + (t >= values)
            j_value = j + (j >= values)
            pick = np.where(bits[index, t_value], j_value, t_value)
            bits[index[active], pick[active]] = True
        return
    for i in range(n):
        chosen = rng.choice(m, size=omega - int(keep[i]), replace=False, shuffle=False)
        bits[i, chosen + (chosen >= values[i])] = True


def subset_support(
    own: np.ndarray, without: np.ndarray, d: int, omega: int, stop: int, rng: np.random.Generator
) -> np.ndarray:
    """How many users' subsets hold each value j < ``stop``, drawn exactly without reports.

    ``own[v]`` users of value v hold v and ω-1 uniform others; ``without[v]`` users hold ω
    uniform others; entries beyond ``stop`` - 1 may be lumped into one (index ``stop``):
    those users are never reached.  The values are visited in order, tracking only how
    many users still need r more members (r = 0..ω), apart for users whose own value is
    still ahead (their pool excludes it) and those past it.  At value j, with m = d - j
    values left: the users of value j leave "ahead" (which of them need what r is a
    multivariate hypergeometric draw: the users ahead are exchangeable) and skip j, the
    own-type ones counting at j; every other user needing r takes j with probability
    r/(m-1) if its own value is still ahead, r/m if it is past (a uniform r-subset of a
    pool holds each member with probability r/|pool|, and given that, the rest is a
    uniform subset of the remaining pool); then the users of value j join "past".
    Cost O(stop x ω), independent of n; refused (naming ``omega``) beyond the budget.
    """
    allowed = "smaller (it grows with domain_size by default) for the sampled engine"
    what = f"the sampled engine's groups of users for omega = {omega}"
    budget.check_memory("omega", omega, allowed, GROUP_BYTES * (omega + 1), what)
    budget.check_operations("omega", omega, allowed, GROUP_OPERATIONS * stop * (omega + 1), what)
    total = int(own.sum()) + int(without.sum())
    if total >= HYPERGEOMETRIC_USERS:
        raise ParameterError(
            "true_counts",
            f"{total} users",
            f"fewer than {HYPERGEOMETRIC_USERS:,} for SS's sampled engine",
            detail="its exact multivariate hypergeometric draws are numpy's, which stop there",
        )
    counts = np.zeros(stop, dtype=np.int64)
    for users, need, holds_own in ((own, omega - 1, True), (without, omega, False)):
        # groups[0] are the users whose own value is ahead, groups[1] those past it
        groups = np.zeros((2, need + 1), dtype=np.int64)
        groups[0, need] = int(users.sum())
        r = np.arange(need + 1)
        for j in range(stop):
            pool = np.array([[d - j - 1], [d - j]])  # values left that a user may take
            leaving = None
            if users[j]:  # the users of value j: they cannot take j, and are past it after
                leaving = rng.multivariate_hypergeometric(groups[0], int(users[j]))
                groups[0] -= leaving
                if holds_own:
                    counts[j] += int(users[j])
            # a uniform r-subset of the pool holds j with probability r/|pool| (0 if empty)
            taken = rng.binomial(groups, np.minimum(r / np.maximum(pool, 1), 1.0))
            counts[j] += int(taken.sum())
            groups -= taken
            groups[:, :-1] += taken[:, 1:]
            if leaving is not None:
                groups[1] += leaving
    return counts


@register(label="SS", color="#bcbd22", order=85)
@dataclass(frozen=True, kw_only=True)
class SS(PureOracle):
    """Subset selection: a size-ω subset, holding v with p = ωe^ε/(ωe^ε+d-ω) ([SS] Sec. III).

    ``omega`` defaults to the better of ⌊d/(e^ε+1)⌋ and ⌈d/(e^ε+1)⌉ (see the module).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(report_model="categorical", additive=True)

    name = "SS"
    omega: int | None = None
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        d = self.domain_size
        if self.omega is None:
            object.__setattr__(self, "omega", default_omega(self.epsilon, d))
        omega = check_int(self.omega, "omega", minimum=1, maximum=d - 1)
        object.__setattr__(self, "omega", omega)
        scaled = omega * math.exp(self.epsilon)
        keep, flip = scaled / (scaled + d - omega), (d - omega) / (scaled + d - omega)
        exact.check_representable(
            self.name,
            self.epsilon,
            min(keep, flip),
            largest_safe=math.log((d - omega) / omega) + exact.LOG_GRID,
        )
        object.__setattr__(self, "_keep", exact.threshold(keep, flip, round_down=True))

    @property
    def p_star(self) -> float:
        """The realised probability that S holds v, <= ωe^ε/(ωe^ε+d-ω)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """p*(ω-1)/(d-1) + (1-p*)ω/(d-1): S holds a fixed other value."""
        p, d, w = self.p_star, self.domain_size, self.omega
        return (p * (w - 1) + (1 - p) * w) / (d - 1)

    def report_bits(self) -> int:
        """d bits as sent here (⌈log2 C(d, ω)⌉ would suffice with an index of the subset)."""
        return self.domain_size

    def report_bytes(self, n_users: int) -> int:
        """n ⌈d/8⌉ packed bytes."""
        return n_users * -(-self.domain_size // 8)

    def subsets(self) -> list[tuple[int, ...]]:
        """Every ω-subset of the domain, in lexicographic order (the report alphabet)."""
        return list(itertools.combinations(range(self.domain_size), self.omega))

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[S | value] for every ω-subset S (for privacy checks; small domains only)."""
        value = self.check_value(value)
        d, w = self.domain_size, self.omega
        # in logs first: the exact C(d, ω) of a large domain has millions of digits
        log_subsets = math.lgamma(d + 1) - math.lgamma(w + 1) - math.lgamma(d - w + 1)
        if log_subsets > math.log(MAX_ENUMERATED) + 1 or math.comb(d, w) > MAX_ENUMERATED:
            raise ParameterError(
                "domain_size",
                d,
                f"small enough to enumerate (at most {MAX_ENUMERATED} subsets of size omega = {w})",
                detail=f"C({d}, {w}) is too many",
            )
        holds = np.array([value in s for s in self.subsets()])
        inside = self.p_star / math.comb(d - 1, w - 1)
        outside = (1.0 - self.p_star) / math.comb(d - 1, w)
        return np.where(holds, inside, outside)

    def adversary_success(self, prior: np.ndarray) -> float:
        """The Bayesian adversary's success Σ_S max_v π_v Pr[S | v] (:mod:`ldp.adversary`).

        Pr[S | v] is a = p*/C(d-1, ω-1) when S holds v, else b = (1-p*)/C(d-1, ω).  Sort π
        decreasingly: the C(d-1, ω-1) subsets holding the top value give p* π_1; a subset
        whose best-ranked member is i >= 2 (C(d-i, ω-1) of them) gives max(a π_i, b π_1):

            S(π) = p* π_1 + Σ_{i=2}^{d-ω+1} C(d-i, ω-1) max(a π_i, b π_1),

        the binomial ratios taken in logarithms (no subset is enumerated).
        """
        from scipy.special import gammaln

        def log_comb(n: np.ndarray | int, k: int) -> np.ndarray:
            n = np.asarray(n, dtype=float)
            return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)

        ranked = np.sort(np.asarray(prior, dtype=float))[::-1]
        d, w, p = self.domain_size, self.omega, self.p_star
        rank = np.arange(2, d - w + 2)
        share = log_comb(d - rank, w - 1)  # ln C(d-i, ω-1)
        inside = p * np.exp(share - log_comb(d - 1, w - 1)) * ranked[rank - 1]
        outside = (1.0 - p) * np.exp(share - log_comb(d - 1, w)) * ranked[0]
        return float(p * ranked[0] + np.maximum(inside, outside).sum())

    def audit_events(self, v: int, v_prime: int) -> list:
        """v in S and v' not in S, and the parts; mirrored (as for the unary encodings)."""
        from ldp.audit.events import unary_events

        return unary_events(v, v_prime)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(v in S, v' not in S) given v and given v' (the default unary event)."""
        d, w, p = self.domain_size, self.omega, self.p_star
        return p * (d - w) / (d - 1), (1.0 - p) * w / (d - 1)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> UnaryReports:
        """Each user's subset as packed bits, shape (n, ⌈d/8⌉) (bit v at (i, v // 8)).

        A keep coin per user, then the other members: ω - 1 (kept) or ω distinct values
        drawn uniformly from the d - 1 others (:func:`draw_others`).
        """
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        return self._subsets(values, lambda size: exact.bernoulli(rng, self._keep, size), rng)

    def uniform_reports(self, n: int, rng: np.random.Generator) -> UnaryReports:
        """n ω-subsets drawn uniformly: a uniform value u, kept with probability ω/d, and
        ω - keep others drawn as the client draws them (each ω-subset has probability
        (ω/d)/C(d-1, ω-1) = ((d-ω)/d)/C(d-1, ω) = 1/C(d, ω))."""
        rng = check_generator(rng)
        d = self.domain_size
        self.check_report_size(n)
        first = rng.integers(0, d, size=n, dtype=np.int64)
        return self._subsets(first, lambda size: rng.random(size) < self.omega / d, rng)

    def uniform_support(self) -> float:
        """ω/d: a uniform ω-subset holds a given value."""
        return self.omega / self.domain_size

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> UnaryReports:
        """The maximal gain attack: every fake subset holds min(r, ω) targets (a uniform
        choice of them when r > ω), its other members uniform among the other values."""
        rng = check_generator(rng)
        targets = np.asarray(targets, dtype=np.int64)
        d, w, r = self.domain_size, self.omega, targets.shape[0]
        self.check_report_size(n)
        others = np.setdiff1d(np.arange(d, dtype=np.int64), targets)
        out = np.empty((n, -(-d // 8)), dtype=np.uint8)
        rows = max(1, min(n, CHUNK // d))
        for start in range(0, n, rows):
            size = min(rows, n - start)
            bits = np.zeros((size, d), dtype=bool)
            held = min(r, w)
            chosen = np.argpartition(rng.random((size, r)), held - 1, axis=1)[:, :held]
            bits[np.arange(size)[:, None], targets[chosen]] = True
            if w > held:
                picks = np.argpartition(rng.random((size, others.shape[0])), w - held - 1, axis=1)
                bits[np.arange(size)[:, None], others[picks[:, : w - held]]] = True
            out[start : start + size] = np.packbits(bits, axis=1)
        return UnaryReports(out, d)

    def crafted_support(self, targets: np.ndarray) -> float:
        """min(r, ω): the targets a crafted subset holds."""
        return float(min(np.asarray(targets).shape[0], self.omega))

    def _subsets(self, first: np.ndarray, keep_of, rng: np.random.Generator) -> UnaryReports:
        """Subsets holding ``first[i]`` when its coin (``keep_of(size)``) says so and ω -
        keep others drawn uniformly among the d - 1 values besides it (the client's draw)."""
        d, n, w = self.domain_size, first.shape[0], self.omega
        out = np.empty((n, -(-d // 8)), dtype=np.uint8)
        rows = max(1, min(n, CHUNK // d))
        bits_buffer = np.empty((rows, d), dtype=bool)
        for start in range(0, n, rows):
            chunk = first[start : start + rows]
            keep = keep_of(chunk.shape[0])
            bits = bits_buffer[: chunk.shape[0]]
            bits[:] = False
            draw_others(bits, chunk, keep, w, rng)
            bits[np.arange(chunk.shape[0]), chunk] = keep
            out[start : start + rows] = np.packbits(bits, axis=1)
        return UnaryReports(out, d)

    def working_bytes(self, n_users: int) -> int:
        """The bytes ``perturb`` holds for ``n_users``: the reports, a chunk of unpacked
        bits and its packed copy, and (drawing user by user) numpy's index array of the
        d - 1 others and the user's members with two temporaries, else Floyd's round
        arrays over the chunk."""
        d = self.domain_size
        rows = max(1, min(n_users, CHUNK // d))
        if self.omega > FLOYD_ROUNDS_PER_USER * rows:
            drawing = 8 * (d - 1) + 24 * self.omega
        else:
            drawing = 128 * rows
        return self.report_bytes(n_users) + rows * (d + -(-d // 8)) + drawing + 8 * n_users

    def in_support(self, reports: UnaryReports) -> np.ndarray:
        """Per report: a subset of exactly ω of the d values, as ⌈d/8⌉ packed bytes with no
        bit beyond d (:class:`ldp.contract.HasReportSupport`, read by the auditor)."""
        bits = np.asarray(reports.bits if isinstance(reports, UnaryReports) else reports)
        width = -(-self.domain_size // 8)
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != width:
            return np.zeros(np.shape(bits)[0] if np.ndim(bits) else 1, dtype=bool)
        padding = np.uint8((1 << (8 * width - self.domain_size)) - 1)
        members = np.unpackbits(bits, axis=1).sum(axis=1)
        return ((bits[:, -1] & padding) == 0) & (members == self.omega)

    def _check_reports(self, reports: UnaryReports) -> np.ndarray:
        if not isinstance(reports, UnaryReports):
            raise TypeError(
                f"reports must be UnaryReports(bits, domain_size), got {type(reports).__name__}"
            )
        if reports.domain_size != self.domain_size:
            raise ValueError(
                f"reports encode a domain of {reports.domain_size} values, not domain_size = "
                f"{self.domain_size}"
            )
        bits, width = np.asarray(reports.bits), -(-self.domain_size // 8)
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != width:
            raise ValueError(
                f"reports must be packed bits of shape (n, {width}) uint8, got {bits.shape} "
                f"{bits.dtype}"
            )
        return bits

    def n_reports(self, reports: UnaryReports) -> int:
        return int(self._check_reports(reports).shape[0])

    def support_counts(self, reports: UnaryReports, candidates: np.ndarray) -> np.ndarray:
        return column_sums(self._check_reports(reports), self.domain_size)[candidates]

    def _simulate_counts(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """The exact joint law of the candidates' estimates (:func:`subset_support`).

        Which values the other users hold does not matter: for a user whose value is not a
        candidate, S restricted to the candidates has the same law whatever that value.
        So the candidates are taken as values 0..m-1, the others lumped at value m, and
        the values are visited up to m - 1 only: cost O(m ω), independent of n.  When
        n d <= ``REPORTS_SHORTCUT``, drawing that population's subsets one by one
        (:meth:`perturb`, O(n ω)) is cheaper and just as exact, and is used instead.
        """
        counts, n = candidate_counts, n_users
        m = counts.shape[0]
        if m > self.domain_size:
            raise ValueError(f"candidate_counts has {m} entries, more than domain_size")
        rest = n - int(counts.sum())
        if rest and m == self.domain_size:
            raise ValueError("candidate_counts cover the domain but sum to less than n_users")
        population = np.append(counts, rest)
        if n * self.domain_size <= REPORTS_SHORTCUT:  # few users: their own subsets are cheaper
            values = np.repeat(np.arange(population.shape[0]), population)
            bits = self.perturb(values[values < self.domain_size], rng).bits
            support = column_sums(bits, self.domain_size)[:m]
            return theory.pure_estimate(support, n, self.p_star, self.q_star)
        own = rng.binomial(population, self.p_star)
        support = subset_support(own, population - own, self.domain_size, self.omega, m, rng)
        return theory.pure_estimate(support, n, self.p_star, self.q_star)
