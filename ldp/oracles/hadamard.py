"""Hadamard response (HR; Acharya, Sun, Zhang, AISTATS 2019) and the Hadamard mechanism (HM).

Citations ``[HR]`` are to J. Acharya, Z. Sun, H. Zhang, *Hadamard Response: Estimating
Distributions Privately, Efficiently, and with Little Communication*, AISTATS 2019;
``[CMM]`` to G. Cormode, S. Maddock, C. Maple, *Frequency Estimation under Local
Differential Privacy*, VLDB 2021, Sec. 3.

Let K be the smallest power of two > d and H the K x K Sylvester-Hadamard matrix,
H[i, y] = (-1)^popcount(i & y).  Row 0 is all ones; value v uses row v + 1, whose +1 set
C_v = {y : popcount((v+1) & y) even} holds K/2 indices.  The user with value v reports
y in [K] uniformly from C_v with probability p = e^ε/(e^ε+1), else uniformly from its
complement ([HR] Sec. 4), so Pr[y | v] is 2p/K on C_v and 2(1-p)/K off it: the ratio
between two inputs is at most p/(1-p) = e^ε.

In the pure framework ([FO] "Method", [CMM] Sec. 3.3) y supports v when y is in C_v:
p* = p, and q* = 1/2 exactly, because distinct rows other than row 0 agree on exactly
half of the columns (|C_u ∩ C_v| = K/4).  Hence Var = n/(4(p-1/2)^2) - n_v.  The support
counts of all values are one fast Walsh-Hadamard transform of the histogram of reports:
I_v = (n + (H h)[v+1]) / 2, O(n + K log K) for the whole domain; a report is log2 K bits.

Exact coins.  The keep coin is drawn on the 53-bit grid of :mod:`ldp.oracles.exact`
(rounded down; p* is the realised value), and a uniform index of C_v (or of its
complement) as a uniform r in [K] (``rng.integers``, exact) moved into the wanted half by
flipping the lowest set bit of v + 1 when its parity is wrong: a bijection between the two
halves, so the result is exactly uniform on the wanted half.

HM ([CMM] Sec. 4.3, t = 1) is documented on :class:`HM`.

The sampled engine draws the histogram of reports exactly (:func:`simulate_histogram`,
through :mod:`ldp.oracles.hadamard_sampling`), at cost K binomials + Σ_v min(kept_v,
8 · 2^j(v)) draws + K log K, j(v) the highest bit of v + 1: no report is made, and the
small codes of a skewed population cost next to nothing.  It needs the whole population,
values included, even for a few candidates: their joint law depends on which values the
other users hold (:meth:`HR._simulate_population`, :meth:`HM._simulate_population`).
[HR]'s general scheme for large ε (blocks of Hadamard codes) is :class:`ldp.oracles.BHR`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ldp import budget, theory
from ldp.algebra import walsh_hadamard
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import PureOracle
from ldp.oracles.direct import keep_threshold
from ldp.oracles.hadamard_sampling import coset_histograms
from ldp.registry import register
from ldp.validation import check_generator, check_values

#: Bytes per entry of the order-K transform at its peak (the histogram, its transform and
#: a half-size temporary of the butterflies, int64): K is bounded by the memory budget.
TRANSFORM_BYTES = 24
#: Bytes per entry of order K at the peak of HM's sampled engine (the 2K report codes, their
#: coset histogram, the coefficient sums and their transform): 64 measured with
#: ``tracemalloc`` at K = 2^19 and 2^22, with a margin.
SAMPLED_BYTES = 72
#: Pairs (candidate, report) counted at once by HR's direct count for few reports.
DIRECT_CHUNK = 1 << 22
#: A pair counted directly costs about this many butterfly steps of the transform
#: (~12 ns against ~3 ns, measured at K = 2^16 and 2^20): the direct count is used below
#: K (log2 K + 1) / DIRECT_PAIR_COST pairs.
DIRECT_PAIR_COST = 4


def check_order(name: str, domain_size: int, order: int, per_entry: int = TRANSFORM_BYTES) -> None:
    """Refuse a Hadamard order K whose transform (``per_entry`` bytes per entry of K) would
    exceed the memory budget."""
    most = budget.current().memory_bytes // per_entry
    largest = 1 << (most.bit_length() - 1)  # the largest power of two that fits
    budget.check_memory(
        "domain_size",
        domain_size,
        f"< {largest} for {name} (K, the next power of two, holds its transform)",
        per_entry * order,
        f"{name}'s transform of order K = {order}",
    )


def hadamard_order(domain_size: int) -> int:
    """K: the smallest power of two > d (rows 1..d of H are the values' codewords)."""
    return 1 << int(domain_size).bit_length()


def parity(x: np.ndarray) -> np.ndarray:
    """popcount(x) mod 2, elementwise, as int64 (0 or 1): H[i, y] = 1 - 2 parity(i & y)."""
    return (np.bitwise_count(x) & 1).astype(np.int64)


def draw_in_half(rows: np.ndarray, inside: np.ndarray, order: int, rng) -> np.ndarray:
    """Uniform indices y in [K] with H[row, y] = +1 where ``inside``, -1 elsewhere (exact).

    r uniform in [K]; if its parity with ``row`` is not the wanted one, flip the lowest set
    bit of ``row`` (a bijection between the two halves of row >= 1).
    """
    r = rng.integers(0, order, size=rows.shape[0], dtype=np.int64)
    wrong = parity(rows & r) != np.where(inside, 0, 1)
    return r ^ np.where(wrong, rows & -rows, 0)


def dense_counts(values: np.ndarray, counts: np.ndarray, domain_size: int) -> np.ndarray:
    """The histogram of the whole domain from a sparse one (distinct values, their counts)."""
    full = np.zeros(domain_size, dtype=np.int64)
    full[values] = counts
    return full


def direct_support(rows: np.ndarray, reports: np.ndarray) -> np.ndarray:
    """I = #reports y with H[row, y] = +1 for each row, counted pair by pair (int64).

    O(|rows| n), in blocks of rows of ``DIRECT_CHUNK`` pairs; for few reports.
    """
    out = np.empty(rows.shape[0], dtype=np.int64)
    step = max(1, DIRECT_CHUNK // max(reports.shape[0], 1))
    for start in range(0, rows.shape[0], step):
        block = rows[start : start + step, None] & reports[None, :]
        out[start : start + step] = reports.shape[0] - parity(block).sum(axis=1)
    return out


def support_from_histogram(hist: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """I = #reports y with H[row, y] = +1, for each row: (n + (H h)[row]) / 2 (int64)."""
    hist = np.asarray(hist, dtype=np.int64)
    return (int(hist.sum()) + walsh_hadamard(hist)[rows]) // 2


def simulate_histogram(
    counts: np.ndarray, p_star: float, order: int, rng: np.random.Generator
) -> np.ndarray:
    """The histogram over [K] of the HR reports of a population, drawn exactly.

    Reporting "uniformly from C_v with p, else from its complement" is "uniformly from
    C_v with probability 2p - 1, else uniformly from all of [K]" (a uniform index is in
    C_v half the time; 2p* - 1 is exact in float64).  So value v keeps Bin(n_v, 2p* - 1)
    users, uniform on C_v = {y : (v+1)·y = 0}, and the others are uniform on [K] (code
    0): one :func:`~ldp.oracles.hadamard_sampling.coset_histograms` of the codes.
    """
    kept = rng.binomial(counts, 2.0 * p_star - 1.0)
    codes = np.zeros((1, order), dtype=np.int64)
    codes[0, 1 : counts.shape[0] + 1] = kept
    codes[0, 0] = int(counts.sum() - kept.sum())
    return coset_histograms(codes, None, rng)[0]


@register(label="HR", color="#d62728", order=80)
@dataclass(frozen=True, kw_only=True)
class HR(PureOracle):
    """Hadamard response: p* = e^ε/(e^ε+1) (realised on the 53-bit grid), q* = 1/2.

    Reports are int64 indices y in [K], K = the smallest power of two > d ([HR] Sec. 4).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(report_model="categorical", additive=True)

    name = "HR"
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_order(self.name, self.domain_size, hadamard_order(self.domain_size))
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, cells=2))

    @property
    def order(self) -> int:
        """K, the order of the Hadamard matrix; a report is log2 K bits."""
        return hadamard_order(self.domain_size)

    @property
    def p_star(self) -> float:
        """The realised probability of reporting from C_v, <= e^ε/(e^ε+1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """1/2: a report from C_v or from its complement lies in C_u half the time."""
        return 0.5

    def report_bits(self) -> int:
        """log2 K bits per report."""
        return self.order.bit_length() - 1

    def report_bytes(self, n_users: int) -> int:
        """8 n bytes (int64 indices)."""
        return 8 * n_users

    def working_bytes(self, n_users: int) -> int:
        """The reports and the coins, indices and parities drawn on the way (40 n bytes)."""
        return 40 * n_users

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[y | value] for every y in [K] (for privacy checks): 2p*/K on C_v, else 2(1-p*)/K."""
        value = self.check_value(value)
        everything = np.arange(self.order, dtype=np.int64)
        inside = parity((value + 1) & everything) == 0
        half = self.order // 2
        return np.where(inside, self.p_star / half, (1.0 - self.p_star) / half)

    def audit_events(self, v: int, v_prime: int) -> list:
        """y in C_v minus C_v' (evidence for v) and the reverse: ratio p*/(1-p*) each."""
        from ldp.audit.events import Event

        def only(a: int, b: int):
            return lambda y: (parity((a + 1) & y) == 0) & (parity((b + 1) & y) == 1)

        return [
            Event(f"y in C_{v} minus C_{v_prime}", only(v, v_prime), +1),
            Event(f"y in C_{v_prime} minus C_{v}", only(v_prime, v), -1),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(y in C_v minus C_v' | v) = p*/2 and given v': (1-p*)/2."""
        return self.p_star / 2, (1.0 - self.p_star) / 2

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """y uniform in C_v with probability p*, else uniform in its complement (int64)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        keep = exact.bernoulli(rng, self._keep, values.shape[0])
        return draw_in_half(values + 1, keep, self.order, rng)

    def n_reports(self, reports: np.ndarray) -> int:
        return int(np.shape(self._check_reports(reports))[0])

    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        return check_values(reports, self.order, name="reports")

    def uniform_reports(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n indices uniform in [K] (the random perturbed-value attack, [CJG21])."""
        self.check_report_size(n)
        return check_generator(rng).integers(0, self.order, size=n, dtype=np.int64)

    def uniform_support(self) -> float:
        """1/2: C_v is half of [K]."""
        return 0.5

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """The maximal gain attack: y = 0, which lies in every C_v (parity((v+1) & 0) = 0),
        so it supports every target; an honest client sends it with probability 2p*/K."""
        self.check_report_size(n)
        return np.zeros(n, dtype=np.int64)

    def crafted_support(self, targets: np.ndarray) -> float:
        """r: y = 0 supports every value."""
        return float(len(targets))

    def support_counts(self, reports: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """I_v = (n + (H h)[v+1]) / 2 from one transform of the histogram h of reports.

        For a few candidates and few reports, counting directly (O(n |C|), vectorised over
        blocks of candidates) is cheaper than the transform (O(K log K)) and gives the
        same integers.
        """
        reports = self._check_reports(reports)
        n, rows = reports.shape[0], np.asarray(candidates, dtype=np.int64) + 1
        if DIRECT_PAIR_COST * n * rows.shape[0] < self.order * (self.report_bits() + 1):
            return direct_support(rows, reports)
        return support_from_histogram(np.bincount(reports, minlength=self.order), rows)

    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The exact law of ``estimate(perturb(users))``, drawn from the report histogram.

        Each candidate's marginal law is the pure framework's whatever the others hold, but
        the candidates' joint law is not: one index y decides all of a user's indicators.
        With Z_a = H[a, y] = 2·1[y in C_{a-1}] - 1 and c = w + 1 for a user of w, y is
        uniform on C_w with probability 2p* - 1, else uniform on [K], so E[Z_a] =
        (2p*-1)·1[a = c] and E[Z_a Z_b] = E[Z_{a xor b}] = (2p*-1)·1[a xor b = c]: for
        u ≠ v,

            Cov[1_u, 1_v] = (2p*-1)/4 · 1[(u+1) xor (v+1) = w+1],
            Cov[ĉ(u), ĉ(v)] = n_w / (2p*-1),   w + 1 = (u+1) xor (v+1),

        (0 when no such value is held).  So the population is drawn whole, with its real
        values (:func:`simulate_histogram`); cost K binomials + Σ_v min(kept_v, 8 · 2^j(v))
        draws + K log K, j(v) the highest bit of v + 1.
        """
        hist = simulate_histogram(
            dense_counts(values, counts, self.domain_size), self.p_star, self.order, rng
        )
        support = support_from_histogram(hist, chosen + 1)
        return theory.pure_estimate(support, int(counts.sum()), self.p_star, self.q_star)


class Coefficients(NamedTuple):
    """HM reports: each user's sampled coefficient index and its randomised sign bit."""

    index: np.ndarray  #: int64 in [0, D): which coefficient of the transform
    bits: np.ndarray  #: uint8, 1 for +1 and 0 for -1


def simulate_coefficient_sums(
    counts: np.ndarray, p_star: float, order: int, rng: np.random.Generator
) -> np.ndarray:
    """S[j] = Σ of the ±1 signs of the users who sampled coefficient j, drawn exactly.

    A sign is "H[v, j] with probability 2p - 1, else a fair ±1".  Write a report as
    z = 2j + s in [2D], s = 1 for the sign -1.  Value v keeps Bin(n_v, 2p* - 1) users,
    j uniform and s = v·j: z uniform on {z : (2v + 1)·z = 0}; the others are uniform on
    [2D] (code 0).  One :func:`~ldp.oracles.hadamard_sampling.coset_histograms` h, and
    S[j] = h[2j] - h[2j + 1].
    """
    kept = rng.binomial(counts, 2.0 * p_star - 1.0)
    codes = np.zeros((1, 2 * order), dtype=np.int64)
    codes[0, 1 : 2 * counts.shape[0] : 2] = kept
    codes[0, 0] = int(counts.sum() - kept.sum())
    hist = coset_histograms(codes, None, rng)[0]
    return hist[0::2] - hist[1::2]


@register(label="HM", color="#9467bd", order=82)
@dataclass(frozen=True, kw_only=True)
class HM(PureOracle):
    """The Hadamard mechanism ([CMM] Sec. 4.3 with t = 1): one randomised coefficient.

    D is the smallest power of two >= d.  The user with value v samples j uniformly in
    [D] and sends j and the sign H[v, j] (the j-th coefficient of the transform of its
    one-hot vector, up to the factor D^{-1/2}), kept with probability p = e^ε/(e^ε+1),
    else flipped: given j, the ratio is p/(1-p) = e^ε.  Σ_i H[v, j_i] y_i/(2p-1) is
    unbiased for n_v because rows of H are orthogonal; in the pure framework the report
    supports v when H[v, j] y = +1: p* = p, q* = 1/2, Var = n/(4(p-1/2)^2) - n_v, as HR.
    All the support counts are one transform of the per-coefficient sums S:
    I_v = (n + (H S)[v])/2.  A report is log2 D + 1 bits.  ([CMM]'s t > 1, which sends
    t coefficients randomised together, is not implemented.)
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="categorical",
        public_randomness=("index",),
        additive=True,
    )

    name = "HM"
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_order(self.name, self.domain_size, self.order)
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, cells=2))

    @property
    def order(self) -> int:
        """D, the smallest power of two >= d."""
        return 1 << (int(self.domain_size) - 1).bit_length()

    @property
    def p_star(self) -> float:
        """The realised probability of sending the true sign, <= e^ε/(e^ε+1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """1/2: H[u, j] H[v, j] is balanced over j for u != v."""
        return 0.5

    def report_bits(self) -> int:
        """log2 D + 1 bits per report."""
        return self.order.bit_length()

    def report_bytes(self, n_users: int) -> int:
        """9 n bytes (an int64 index and a byte)."""
        return 9 * n_users

    def working_bytes(self, n_users: int) -> int:
        """The reports and the coins, indices and parities drawn on the way (40 n bytes)."""
        return 40 * n_users

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[(j, b) | value] at position 2j + b, for privacy checks: (1/D) p* or (1/D)(1-p*)."""
        value = self.check_value(value)
        index = np.arange(self.order, dtype=np.int64)
        sign_bit = parity(value & index) == 0  # the bit of +1 is 1
        out = np.empty(2 * self.order)
        out[1::2] = np.where(sign_bit, self.p_star, 1.0 - self.p_star) / self.order
        out[0::2] = np.where(sign_bit, 1.0 - self.p_star, self.p_star) / self.order
        return out

    def audit_events(self, v: int, v_prime: int) -> list:
        """H[v, j] y = +1 and H[v', j] y = -1 (evidence for v) and the reverse."""
        from ldp.audit.events import Event

        def sign(reports: Coefficients, value: int) -> np.ndarray:
            return (1 - 2 * parity(value & reports.index)) * (2 * reports.bits.astype(int) - 1)

        def only(a: int, b: int):
            return lambda r: (sign(r, a) == 1) & (sign(r, b) == -1)

        return [
            Event(f"H[{v},j]y = 1, H[{v_prime},j]y = -1", only(v, v_prime), +1),
            Event(f"H[{v_prime},j]y = 1, H[{v},j]y = -1", only(v_prime, v), -1),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """p*/2 given v, (1-p*)/2 given v'."""
        return self.p_star / 2, (1.0 - self.p_star) / 2

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Coefficients:
        """A uniform coefficient index per user and its sign, kept with probability p*."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        n = values.shape[0]
        self.check_report_size(n)
        index = rng.integers(0, self.order, size=n, dtype=np.int64)
        keep = exact.bernoulli(rng, self._keep, n)
        true_bit = parity(values & index) == 0
        return Coefficients(index, (true_bit == keep).astype(np.uint8))

    def uniform_reports(self, n: int, rng: np.random.Generator) -> Coefficients:
        """n pairs (j, b) uniform over [D] x {0, 1} (the random perturbed-value attack)."""
        self.check_report_size(n)
        rng = check_generator(rng)
        index = rng.integers(0, self.order, size=n, dtype=np.int64)
        return Coefficients(index, rng.integers(0, 2, size=n, dtype=np.uint8))

    def uniform_support(self) -> float:
        """1/2: a uniform sign agrees with H[v, j] half the time."""
        return 0.5

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> Coefficients:
        """The maximal gain attack: (j, b) = (0, 1), the sign +1 of column 0, where H[v, 0] =
        +1 for every v, so it supports every target; an honest client sends it with
        probability p*/D."""
        self.check_report_size(n)
        return Coefficients(np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.uint8))

    def crafted_support(self, targets: np.ndarray) -> float:
        """r: the report (0, +1) supports every value."""
        return float(len(targets))

    def _check_reports(self, reports: Coefficients) -> Coefficients:
        if not isinstance(reports, Coefficients):
            raise TypeError(
                f"reports must be Coefficients(index, bits), got {type(reports).__name__}"
            )
        index = check_values(reports.index, self.order, name="report index")
        bits = check_values(reports.bits, 2, name="report bits")
        if index.ndim != 1 or index.shape != bits.shape:
            raise ValueError("reports must hold one index and one bit per user")
        return Coefficients(index.astype(np.int64), bits)

    def n_reports(self, reports: Coefficients) -> int:
        return int(self._check_reports(reports).index.shape[0])

    def coefficient_sums(self, reports: Coefficients) -> np.ndarray:
        """S[j] = Σ of the signs sent for coefficient j (int64, length D)."""
        index, bits = self._check_reports(reports)
        signs = 2 * bits.astype(np.int64) - 1
        return np.bincount(index, weights=signs, minlength=self.order).astype(np.int64)

    def support_counts(self, reports: Coefficients, candidates: np.ndarray) -> np.ndarray:
        """I_v = (n + (H S)[v]) / 2: one transform of the coefficient sums."""
        n = self.n_reports(reports)
        return (n + walsh_hadamard(self.coefficient_sums(reports))[candidates]) // 2

    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The exact law of the estimates, through the coefficient sums of the whole population.

        A user of w sends y = H[w, j] s (s = +1 with probability p*).  With Z_a = H[a, j] y,
        E[Z_a] = (2p*-1)·1[a = w], and Z_a Z_b = H[a xor b, j] has mean 0 for a ≠ b: two
        candidates' indicators are uncorrelated whatever the population.  Three are not:
        E[Z_u Z_v Z_t] = (2p*-1)·1[u xor v xor t = w], so for distinct u, v, t other than w

            E[(ĉ(u)-n_u)(ĉ(v)-n_v)(ĉ(t)-n_t)] = n_w / (2p*-1)²,   w = u xor v xor t,

        a law that depends on which values the other users hold.  So the population is
        drawn whole (:func:`simulate_coefficient_sums`); cost 2D binomials + Σ_v min(kept_v,
        8 · 2^j(v)) draws + D log D, j(v) the highest bit of 2v + 1.
        """
        check_order(self.name, self.domain_size, self.order, SAMPLED_BYTES)
        n_users = int(counts.sum())
        full = dense_counts(values, counts, self.domain_size)
        sums = simulate_coefficient_sums(full, self.p_star, self.order, rng)
        support = (n_users + walsh_hadamard(sums)[chosen]) // 2
        return theory.pure_estimate(support, n_users, self.p_star, self.q_star)
