"""Unary encodings: SUE (basic one-time RAPPOR) and OUE, USENIX'17 Sec. 4.3.

A value v becomes the d-bit vector with a single 1 at position v; each bit is then
perturbed independently: a 1 stays 1 with probability p, a 0 becomes 1 with probability
q.  A report supports every value whose bit is 1, so p* = p and q* = q.  ε-LDP holds
because two encodings differ in two bits: p(1-q)/((1-p)q) = e^ε.

Both coins are drawn on the exact 53-bit grid of :mod:`ldp.oracles.exact`: p rounded
down, q up, so the realised ratio p*(1-q*)/((1-p*)q*) stays <= e^ε, and p*, q* are the
realised probabilities.  THE (:mod:`ldp.oracles.histogram`) thresholds on the client and
reuses this client and aggregator with its own (p, q).

Reports are :class:`UnaryReports`: the bits packed along the domain (``numpy.packbits``,
shape (n, ⌈d/8⌉) uint8) together with the domain size d they encode, so reports of
another domain are refused even when their byte width matches.  Users are processed in
chunks, so no n x d array beyond the packed reports exists.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np

from ldp import hashing, theory
from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import PureOracle
from ldp.registry import register
from ldp.validation import check_generator, check_values

#: Random draws per chunk of users (bounds the temporary memory to ~ 9 x this bytes).
CHUNK = 1 << 22


class UnaryReports(NamedTuple):
    """Unary-encoding reports: packed bits, bit v of user i at ``bits[i, v // 8]``."""

    bits: np.ndarray  #: uint8 of shape (n, ⌈d/8⌉), big-endian within each byte
    domain_size: int  #: the d the bits encode (the padding bits beyond d are 0)

    def supports(self, keys: np.ndarray, g: int | None = None) -> np.ndarray:
        """Whether each report (rows) supports each key (columns): the key's bit is set
        (``g`` is unused: a unary report names its values directly)."""
        columns = np.asarray(keys).astype(np.int64)
        shifts = (7 - (columns & 7)).astype(np.uint8)
        return ((self.bits[:, columns >> 3] >> shifts) & 1).astype(bool)


#: One bit in each byte of a 64-bit word: eight byte lanes, each counting to at most 255.
LANES = np.uint64(0x0101010101010101)
#: Rows summed per pass: a byte lane holds at most 255 before it would carry.
LANE_ROWS = 255
#: Bytes of packed rows counted per pass (more rows per sum: 2x faster at d = 3.3 x 10^6).
LANE_BYTES = 1 << 25


def _lane_sums_kernel(words: np.ndarray, totals: np.ndarray) -> None:
    """Add a block of packed rows, read as 64-bit words, to ``totals[byte column, bit from
    the right]``: one pass over the rows, bit b of every byte of a word added into that
    byte's lane of accumulator b, the lanes flushed every LANE_ROWS rows (before a lane
    could carry).  The loop over a row's words is what the compiler vectorises."""
    n, width = words.shape
    acc = np.zeros((8, width), dtype=np.uint64)
    held = 0
    for i in range(n):
        for b in range(8):
            shift = np.uint64(b)
            for w in range(width):
                acc[b, w] += (words[i, w] >> shift) & LANES
        held += 1
        if held == LANE_ROWS or i == n - 1:
            for b in range(8):
                for w in range(width):
                    lanes = acc[b, w]
                    for c in range(8):
                        totals[8 * w + c, b] += (lanes >> np.uint64(8 * c)) & np.uint64(255)
                    acc[b, w] = 0
            held = 0


_lane_sums_numba = (
    hashing.numba.njit(cache=True, nogil=True)(_lane_sums_kernel) if hashing.HAVE_NUMBA else None
)


def column_sums(packed: np.ndarray, d: int, *, use_numba: bool = True) -> np.ndarray:
    """How many reports have each of the d bits set (int64), read from the packed bytes.

    No n x d unpacking: the packed rows are read as 64-bit words of eight bytes, and for
    each of the 8 bit positions, ``(word >> b) & 0x0101...01`` puts bit b of every byte in
    that byte's lane; summing up to 255 rows of such words adds the eight lanes at once
    without a carry between them.  With numba, one compiled pass over the rows
    (:func:`_lane_sums_kernel`); without it (or ``use_numba=False``), 8 numpy passes over
    n d / 64 words.  Either way the counts are exactly those of unpacking.
    """
    n, width = packed.shape
    words = -(-width // 8)
    totals = np.zeros((8 * words, 8), dtype=np.int64)  # [byte column, bit from the right]
    kernel = _lane_sums_numba if use_numba else None
    rows = max(1, LANE_BYTES // (8 * words))
    if kernel is None:
        rows = min(LANE_ROWS, rows)
    buffer = np.zeros((min(rows, max(n, 1)), 8 * words), dtype=np.uint8)  # zero padding
    shifted = np.empty((buffer.shape[0] if kernel is None else 0, words), dtype=np.uint64)
    lane_sums = np.empty(words, dtype=np.uint64)
    for start in range(0, n, rows):
        block = packed[start : start + rows]
        m = block.shape[0]
        buffer[:m, :width] = block
        lanes = buffer[:m].view(np.uint64)
        if kernel is not None:
            kernel(lanes, totals)
            continue
        for b in range(8):
            np.right_shift(lanes, np.uint64(b), out=shifted[:m])
            np.bitwise_and(shifted[:m], LANES, out=shifted[:m])
            np.sum(shifted[:m], axis=0, dtype=np.uint64, out=lane_sums)
            totals[:, b] += lane_sums.view(np.uint8)
    # packbits is big-endian: bit b from the right of byte c is value 8c + 7 - b
    return totals[:, ::-1].reshape(-1)[:d].copy()


@dataclass(frozen=True, kw_only=True)
class UnaryEncoding(PureOracle):
    """Shared client and aggregator of SUE, OUE and THE; subclasses give the ideal (p, q).

    ``coins()`` returns p, 1-p, q, 1-q from their closed forms and
    ``largest_safe_epsilon()`` the ε beyond which one of them is below one grid step.
    """

    #: p is an exact constant (OUE's 1/2), realised without widening.
    exact_p: ClassVar[bool] = False
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits", additive=True, adversary_support_only=True
    )

    _keep: int = field(init=False, repr=False, compare=False)
    _flip: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._set_coins()

    def _set_coins(self) -> None:
        p, not_p, q, not_q = self.coins()
        exact.check_representable(
            self.name,
            self.epsilon,
            min(p, not_p, q, not_q),
            largest_safe=self.largest_safe_epsilon(),
        )
        keep = exact.threshold(p, not_p, round_down=True, exact=self.exact_p)
        object.__setattr__(self, "_keep", keep)
        object.__setattr__(self, "_flip", exact.threshold(q, not_q, round_down=False))

    @abstractmethod
    def coins(self) -> tuple[float, float, float, float]:
        """The ideal p, 1 - p, q, 1 - q, each from its closed form."""

    @abstractmethod
    def largest_safe_epsilon(self) -> float:
        """The largest ε at which every coin is representable on the 53-bit grid."""

    @property
    def p_star(self) -> float:
        """The realised probability that the user's own bit is 1 (<= the ideal p)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """The realised probability that another bit is 1 (>= the ideal q)."""
        return exact.realised(self._flip)

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[bit i of the report = 1 | value] for each i (bits are independent)."""
        value = self.check_value(value)
        self.check_probability_table(self.domain_size)
        probabilities = np.full(self.domain_size, self.q_star)
        probabilities[value] = self.p_star
        return probabilities

    def adversary_success(self, prior: np.ndarray) -> float:
        """The Bayesian adversary's success: bits set independently, p* own, q* others.

        Exactly :func:`ldp.adversary.support_success` with (p*, q*) (the support set of a
        report is its set bits).
        """
        from ldp.adversary import support_success

        return support_success(prior, self.p_star, self.q_star)

    def log_likelihoods(self, reports: UnaryReports) -> np.ndarray:
        """ln Pr[y_i | v] up to a constant per report: ln(p*/q*) if bit v is set, else
        ln((1-p*)/(1-q*)) (the other bits' factors do not depend on v)."""
        packed = self._check_reports(reports)
        self.check_likelihood_table(packed.shape[0], cell_bytes=10.0)  # bits, mask, float
        bits = np.unpackbits(packed, axis=1, count=self.domain_size)
        p, q = self.p_star, self.q_star
        set_, unset = math.log(p / q), math.log1p(-p) - math.log1p(-q)
        return np.where(bits.astype(bool), set_, unset)

    def audit_events(self, v: int, v_prime: int) -> list:
        """Bit v set, bit v' unset, and both; mirrored (the last: ratio e^ε)."""
        from ldp.audit.events import unary_events

        return unary_events(v, v_prime)

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(bit v set and bit v' unset) given v and given v': p*(1-q*), q*(1-p*)."""
        p, q = self.p_star, self.q_star
        return p * (1 - q), q * (1 - p)

    def report_bytes(self, n_users: int) -> int:
        """n ⌈d/8⌉ packed bytes."""
        return n_users * -(-self.domain_size // 8)

    def working_bytes(self, n_users: int) -> int:
        """The packed reports, plus a chunk's uniform draws, comparisons and bits (~17
        bytes a cell measured; 24 counted)."""
        rows = max(1, min(n_users, CHUNK // self.domain_size))
        return self.report_bytes(n_users) + 24 * rows * self.domain_size

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> UnaryReports:
        """Packed perturbed bit vectors, shape (n, ⌈d/8⌉), bit v of row i at (i, v // 8)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        d, n = self.domain_size, values.shape[0]
        self.check_report_size(n)
        out = np.empty((n, -(-d // 8)), dtype=np.uint8)
        rows = max(1, min(n, CHUNK // d))
        for start in range(0, n, rows):
            chunk = values[start : start + rows]
            bits = exact.below(rng, self._flip, (chunk.shape[0], d))
            bits[np.arange(chunk.shape[0]), chunk] = exact.below(rng, self._keep, chunk.shape[0])
            out[start : start + rows] = np.packbits(bits, axis=1)
        return UnaryReports(out, d)

    def _check_reports(self, reports: UnaryReports) -> np.ndarray:
        if not isinstance(reports, UnaryReports):
            raise TypeError(
                f"reports must be UnaryReports(bits, domain_size) as returned by perturb, "
                f"got {type(reports).__name__}"
            )
        if reports.domain_size != self.domain_size:
            raise ValueError(
                f"reports encode a domain of {reports.domain_size} values, not "
                f"domain_size = {self.domain_size}"
            )
        bits, width = np.asarray(reports.bits), -(-self.domain_size // 8)
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != width:
            raise ValueError(
                f"reports must be packed bits of shape (n, {width}) uint8, "
                f"got {bits.shape} {bits.dtype}"
            )
        padding = np.uint8((1 << (8 * width - self.domain_size)) - 1)
        if bits.shape[0] and np.any(bits[:, -1] & padding):
            raise ValueError(
                f"reports have bits set beyond domain_size = {self.domain_size}: they encode "
                "another domain"
            )
        return bits

    def n_reports(self, reports: UnaryReports) -> int:
        return int(self._check_reports(reports).shape[0])

    def support_counts(self, reports: UnaryReports, candidates: np.ndarray) -> np.ndarray:
        return column_sums(self._check_reports(reports), self.domain_size)[candidates]

    # --- fake users (ldp.poisoning, [CJG21] Sec. 4) -----------------------------------------
    def _packed(self, bits: np.ndarray) -> UnaryReports:
        return UnaryReports(np.packbits(bits, axis=1), self.domain_size)

    def uniform_reports(self, n: int, rng: np.random.Generator) -> UnaryReports:
        """n vectors of d uniform bits."""
        self.check_report_size(n)
        return self._packed(check_generator(rng).random((n, self.domain_size)) < 0.5)

    def uniform_support(self) -> float:
        """1/2: a uniform bit is set."""
        return 0.5

    def craft_reports(self, targets: np.ndarray, n: int, rng: np.random.Generator) -> UnaryReports:
        """The maximal gain attack: every target's bit set, and l - r other bits drawn
        at random, l = round(p* + (d - 1) q*) the expected number of ones of an honest
        report, so a crafted report has the honest weight ([CJG21] Sec. 4)."""
        self.check_report_size(n)
        rng = check_generator(rng)
        targets = np.asarray(targets, dtype=np.int64)
        d = self.domain_size
        ones = round(self.p_star + (d - 1) * self.q_star)
        extra = min(max(ones - targets.shape[0], 0), d - targets.shape[0])
        others = np.setdiff1d(np.arange(d), targets)
        bits = np.zeros((n, d), dtype=bool)
        bits[:, targets] = True
        if extra:
            picks = np.argsort(rng.random((n, others.shape[0])), axis=1)[:, :extra]
            np.put_along_axis(bits, others[picks], True, axis=1)
        return self._packed(bits)

    def crafted_support(self, targets: np.ndarray) -> float:
        """r: every target's bit is set."""
        return float(np.asarray(targets).shape[0])


@register(color="#de8f05", order=20)
@dataclass(frozen=True, kw_only=True)
class SUE(UnaryEncoding):
    """Symmetric unary encoding (basic one-time RAPPOR): p = e^{ε/2}/(e^{ε/2}+1), q = 1 - p.

    Representable for ε <= 2 ln(2^53) ≈ 73.5.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits", additive=True, adversary_support_only=True
    )

    name = "SUE"

    def coins(self) -> tuple[float, float, float, float]:
        p, q = theory.sue_pq(self.epsilon)
        return p, q, q, p

    def largest_safe_epsilon(self) -> float:
        return 2 * exact.LOG_GRID


@register(color="#029e73", order=30)
@dataclass(frozen=True, kw_only=True)
class OUE(UnaryEncoding):
    """Optimised unary encoding: p = 1/2, q = 1/(e^ε+1) (USENIX'17 Sec. 4.3).

    Representable for ε <= ln(2^53) ≈ 36.7.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits", additive=True, adversary_support_only=True
    )

    name = "OUE"
    exact_p = True

    def coins(self) -> tuple[float, float, float, float]:
        p, q = theory.oue_pq(self.epsilon)
        e = math.exp(self.epsilon)
        return p, 1 - p, q, e / (e + 1)

    def largest_safe_epsilon(self) -> float:
        return exact.LOG_GRID
