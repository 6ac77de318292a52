"""RAPPOR: Bloom filters, cohorts, a permanent and an instantaneous randomized response.

Citations ``[RAPPOR]`` are to Erlingsson, Pihur, Korolova, *RAPPOR: Randomized Aggregatable
Privacy-Preserving Ordinal Response* (CCS 2014).

Client ([RAPPOR] Sec. 2).  A client belongs to one of m cohorts for life.  Its value v is
hashed into a k-bit Bloom filter B with h hash functions that depend on the cohort; each
bit of B then goes through

* the **permanent** randomized response (PRR): B'_i = 1 w.p. f/2, 0 w.p. f/2, B_i w.p.
  1 - f, drawn once per (client, value) and memoized (:class:`RapporClients`);
* the **instantaneous** randomized response (IRR), fresh for every report: S_i = 1 w.p. q
  if B'_i = 1, w.p. p if B'_i = 0.

So one report's bit is 1 w.p. q* = ½f(p + q) + (1 - f)q when B_i = 1 and
p* = ½f(p + q) + (1 - f)p when B_i = 0 ([RAPPOR] Sec. 3.2), independently over bits.
*One-time* RAPPOR skips the IRR (p = 0, q = 1: the report is B'); *basic* RAPPOR
(``basic=True``) gives every value its own bit (k = d, h = 1, one cohort), so basic one-time
RAPPOR is SUE ([FO] Sec. 4.3).

Privacy ([RAPPOR] Sec. 3).  Two values' filters differ in at most 2h bits, so the PRR
(and hence any number of reports built on one memoized PRR) is ε∞-LDP with
ε∞ = 2h ln((1 - f/2)/(f/2)), and a single report is ε₁-LDP with
ε₁ = h ln(q*(1 - p*)/(p*(1 - q*))).  The cohort is drawn independently of the value, so it
cancels from every likelihood ratio.

Parameters and ``epsilon``.  An oracle here promises that every report is ε-LDP.  With
``f=None`` (the default) f is solved from ``epsilon`` so that ε∞ = ε (the whole
longitudinal collection of a value is then ε-LDP, one report ε₁ < ε); with f given (the
presets of the reference implementation, ``conf/protocol/rappor_*.yaml``), f, p, q are used
as they are and ε₁ <= ε is required.

Exact coins.  Every coin is drawn on the 53-bit grid of :mod:`ldp.oracles.exact`: the PRR
flips B_i with probability f/2 (rounded up, the private direction; the realised f is
declared), the IRR keeps a 1 with q (rounded down) and turns a 0 into a 1 with p (rounded
up); p = 0 and q = 1 are exact.  p* and q* are computed from the realised coins.

Encoding.  The Bloom positions are those of Google's deployed client (google/rappor): the
first h bytes of MD5(4-byte big-endian cohort || value bytes), each mod k; an integer
value v of the domain is hashed as its decimal ASCII digits.  Reports are
:class:`RapporReports`: the cohort of each report and its bits packed little-endian
(bit i of the report is bit i mod 8 of byte i // 8, so for k <= 32 the bytes read as a
little-endian integer are Google's integer report).  Google's HMAC-derived PRR is in
:mod:`ldp.oracles.rappor_google`.

Aggregation and decoding ([RAPPOR] Sec. 4).  Per cohort c and bit b the server counts the
ones Y_cb among the n_c reports of cohort c and unbiases them,
t_cb = (Y_cb - p* n_c)/(q* - p*), an unbiased estimate of how many clients of cohort c have
bit b set in their filter.  With cohorts drawn uniformly, E[t] = X n, X[(c,b), v] =
1[b in positions(c, v)]/m and n the vector of true counts, so least squares of t on X is
unbiased.  ``estimate`` fits the whole domain this way (the domain must be identifiable:
d <= m k and X of full rank); :meth:`RAPPOR.decode` is the paper's decoder for a list of
candidates (LASSO to select, least squares to estimate, standard errors and a Bonferroni
significance cut-off), see :mod:`ldp.oracles.rappor_decode`.

Sampled engine.  Given the true counts, each value's users are split over the cohorts
(multinomial), the number M_cb of clients with bit b set is a sum of those splits, and
Y_cb ~ Bin(M_cb, q*) + Bin(n_c - M_cb, p*) independently over (c, b): the exact law of the
reports engine's counts, at O(d m h) cost.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, NamedTuple

import numpy as np
from scipy import stats

from ldp.contract import Capabilities
from ldp.oracles import exact, md5
from ldp.oracles.base import FrequencyOracle, check_variance_input
from ldp.registry import register
from ldp.validation import check_counts, check_generator, check_int, check_values

#: Random draws per chunk of users (bounds the temporary memory).
CHUNK = 1 << 22
#: MD5 gives 16 bytes, one per hash function, each reduced mod k (so k <= 256).
MAX_HASHES = 16
MAX_BLOOM_BITS = 256
#: MD5 lanes per vectorised batch (bounds the temporary memory of bloom_table).
MD5_LANES = 1 << 20


# ------------------------------------------------------------------ closed forms
def rappor_pq_star(f: float, p: float, q: float) -> tuple[float, float]:
    """(p*, q*): one report's bit is 1 w.p. q* if the Bloom bit is 1, p* if 0 ([RAPPOR] 3.2).

    q* = ½f(p + q) + (1 - f)q and p* = ½f(p + q) + (1 - f)p.
    """
    p_star = 0.5 * f * (p + q) + (1 - f) * p
    q_star = 0.5 * f * (p + q) + (1 - f) * q
    return p_star, q_star


def rappor_epsilon_inf(f: float, h: int) -> float:
    """ε∞ = 2h ln((1 - f/2)/(f/2)), the PRR's bound over any number of reports ([RAPPOR] 3.1).

    ``inf`` for f = 0 (no permanent randomization).
    """
    if f <= 0:
        return math.inf
    return 2 * h * math.log((1 - f / 2) / (f / 2))


def rappor_epsilon_one(f: float, p: float, q: float, h: int) -> float:
    """ε₁ = h ln(q*(1 - p*)/(p*(1 - q*))), one report's privacy ([RAPPOR] Sec. 3.2)."""
    p_star, q_star = rappor_pq_star(f, p, q)
    if p_star <= 0 or q_star >= 1:
        return math.inf
    return h * math.log(q_star * (1 - p_star) / (p_star * (1 - q_star)))


def rappor_f(epsilon_inf: float, h: int) -> float:
    """The f whose ε∞ is ``epsilon_inf``: f = 2/(1 + e^{ε∞/(2h)}) (inverse of ε∞ above)."""
    return 2.0 / (1.0 + math.exp(epsilon_inf / (2 * h)))


def rappor_longitudinal_epsilon(
    f: float, p: float, q: float, h: int, reports: int, *, memoized: bool = True
) -> float:
    """The exact privacy loss of ``reports`` reports of one value by one client.

    With a memoized PRR (``memoized=True``, [RAPPOR] Sec. 3) the reports share B', so each
    differing Bloom bit contributes the worst log-ratio over the number j of ones among its
    T reports of P(j | B = 1)/P(j | B = 0), where P(j | B) mixes the two PRR outcomes:
    (1 - f/2) q^j (1-q)^{T-j} + (f/2) p^j (1-p)^{T-j} for B = 1 (and symmetrically).  With h
    bits of v's filter outside v''s and h the other way round, the loss is h times the worst
    ratio in each direction; it is ε₁ at T = 1 and tends to ε∞ as T grows.  Without
    memoization every report draws a fresh PRR, and T reports cost T ε₁ (composition of
    independent reports, exact because the worst report sequence repeats the worst report).
    """
    reports = check_int(reports, "reports", minimum=1)
    if not memoized:
        return reports * rappor_epsilon_one(f, p, q, h)
    j = np.arange(reports + 1)
    log_q, log_p = stats.binom.logpmf(j, reports, q), stats.binom.logpmf(j, reports, p)
    with np.errstate(divide="ignore"):
        keep, flip = np.log1p(-f / 2), np.log(f / 2)
    one = np.logaddexp(keep + log_q, flip + log_p)  # log P(j ones | B = 1)
    zero = np.logaddexp(flip + log_q, keep + log_p)  # log P(j ones | B = 0)
    possible = np.isfinite(one) | np.isfinite(zero)
    with np.errstate(invalid="ignore"):
        ratio = (one - zero)[possible]
    return float(h * (np.max(ratio) + np.max(-ratio)))


def _given_threshold(x: float, *, round_down: bool) -> int:
    """The grid threshold of a probability given as a float (not a closed form): x·2^53 and
    1 - x (Sterbenz, for x >= 1/2) are exact, so no widening is needed; a dyadic x such as
    Google's f = j/128 is realised exactly."""
    return exact.threshold(x, 1 - x, round_down=round_down, exact=True)


# ------------------------------------------------------------------ Bloom encoding
def bloom_positions(value: bytes, cohort: int, h: int, k: int) -> tuple[int, ...]:
    """Google's Bloom positions: the first h bytes of MD5(cohort as 4 big-endian bytes || value),
    each mod k (google/rappor's client; [RAPPOR] Sec. 2)."""
    digest = hashlib.md5(cohort.to_bytes(4, "big") + value).digest()
    return tuple(digest[i] % k for i in range(h))


def value_bytes(value: int) -> bytes:
    """How an integer value of the domain is hashed: its decimal digits in ASCII."""
    return str(int(value)).encode("ascii")


def bloom_table(values: list[bytes], cohorts: int, h: int, k: int) -> np.ndarray:
    """positions[c, j, i]: the i-th Bloom position of ``values[j]`` in cohort c, (m, |V|, h).

    The same bytes as :func:`bloom_positions`, computed with the vectorised MD5 of
    :mod:`ldp.oracles.md5` for every value of at most 51 bytes (one MD5 block with the
    4-byte cohort), ``hashlib`` for longer ones.
    """
    table = np.empty((cohorts, len(values), h), dtype=np.int64)
    short = [j for j, value in enumerate(values) if len(value) <= md5.MAX_ONE_BLOCK - 4]
    long = [j for j, value in enumerate(values) if len(value) > md5.MAX_ONE_BLOCK - 4]
    # word 0 is the cohort's 4 big-endian bytes read little-endian; words 1-15 the value's
    cohort_words = np.arange(cohorts, dtype=np.uint32).byteswap()
    for start in range(0, len(short), MD5_LANES):
        chosen = short[start : start + MD5_LANES]
        rows = max(1, MD5_LANES // len(chosen))
        words = md5.one_block_words([bytes(4) + values[j] for j in chosen]).T
        for first in range(0, cohorts, rows):
            block = cohort_words[first : first + rows, None]
            state = md5.digest_words([block, *(w[None, :] for w in words[1:])])
            table[first : first + rows, chosen] = md5.digest_bytes(state, h).astype(np.int64) % k
    for j in long:
        for c in range(cohorts):
            table[c, j] = bloom_positions(values[j], c, h, k)
    return table


def design_columns(positions: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero rows of each candidate's design column, without duplicate positions.

    Returns (rows, columns) of the entries X[(c, b), j] = 1/m: row c k + b for every
    distinct position b of candidate j in cohort c (a filter sets a bit once, however
    many of its h hashes land on it).
    """
    m, count, h = positions.shape
    ordered = np.sort(positions, axis=2)
    fresh = np.ones(ordered.shape, dtype=bool)
    fresh[:, :, 1:] = ordered[:, :, 1:] != ordered[:, :, :-1]
    cohort = np.broadcast_to(np.arange(m)[:, None, None], ordered.shape)
    column = np.broadcast_to(np.arange(count)[None, :, None], ordered.shape)
    return (cohort * k + ordered)[fresh], column[fresh]


# ------------------------------------------------------------------ reports and counts
class RapporReports(NamedTuple):
    """RAPPOR reports: each report's cohort and its k bits, packed little-endian."""

    cohorts: np.ndarray  #: int64 (n,): the cohort of each report
    bits: np.ndarray  #: uint8 (n, ⌈k/8⌉): bit i of report r is (bits[r, i // 8] >> i % 8) & 1
    k: int  #: the number of Bloom bits the reports encode

    def as_integers(self) -> np.ndarray:
        """The reports as integers whose bit i is bit i (Google's format; k <= 32)."""
        if self.k > 32:
            raise ValueError(f"k = {self.k} bits do not fit Google's 32-bit integer reports")
        padded = np.zeros((self.bits.shape[0], 4), dtype=np.uint8)
        padded[:, : self.bits.shape[1]] = self.bits
        return padded.view("<u4").ravel().astype(np.int64)

    @classmethod
    def from_integers(cls, cohorts: Any, reports: Any, k: int) -> RapporReports:
        """Reports collected as integers (bit i = Bloom bit i, as google/rappor's client sends)."""
        k = check_int(k, "k", minimum=1, maximum=32)
        values = np.asarray(reports)
        if values.dtype.kind not in "iu" or values.ndim != 1:
            raise TypeError("reports must be a 1-D array of integers")
        if values.size and (values.min() < 0 or int(values.max()) >= 1 << k):
            raise ValueError(f"reports must lie in [0, 2^{k}) for k = {k} bits")
        words = values.astype("<u4").view(np.uint8).reshape(-1, 4)
        return cls(np.asarray(cohorts, dtype=np.int64), words[:, : -(-k // 8)].copy(), k)


class CohortCounts(NamedTuple):
    """What the server keeps of the reports: ones per (cohort, bit), reports per cohort."""

    ones: np.ndarray  #: int64 (m, k): Y_cb, the reports of cohort c with bit b set
    reports: np.ndarray  #: int64 (m,): n_c, the reports of cohort c


def unpack(bits: np.ndarray, k: int) -> np.ndarray:
    """Packed little-endian report bits -> bool array (n, k)."""
    return np.unpackbits(bits, axis=1, count=k, bitorder="little").astype(bool)


def pack(bits: np.ndarray) -> np.ndarray:
    """bool array (n, k) -> packed little-endian bytes (n, ⌈k/8⌉)."""
    return np.packbits(bits, axis=1, bitorder="little")


def sample_cohort_counts(
    oracle: Any, positions: np.ndarray, counts: np.ndarray, rng: np.random.Generator
) -> CohortCounts:
    """The sampled engine for values with Bloom ``positions`` (m, V, h) held by ``counts``.

    Each value's users are split uniformly over the m cohorts (a multinomial), M_cb clients
    of cohort c have bit b set, and Y_cb ~ Bin(M_cb, q*) + Bin(n_c - M_cb, p*) independently
    (the bits of one client are independent given its filter).  Cost O(V m h).
    """
    m, k = oracle.m, oracle.k
    split = rng.multinomial(counts, np.full(m, 1.0 / m))  # (V, m)
    rows, columns = design_columns(positions, k)
    weights = split[columns, rows // k].astype(float)  # exact: counts < 2^53
    set_bits = np.rint(np.bincount(rows, weights=weights, minlength=m * k)).astype(np.int64)
    set_bits = set_bits.reshape(m, k)
    per_cohort = split.sum(axis=0).astype(np.int64)
    ones = rng.binomial(set_bits, oracle.q_star) + rng.binomial(
        per_cohort[:, None] - set_bits, oracle.p_star
    )
    return CohortCounts(ones.astype(np.int64), per_cohort)


# ------------------------------------------------------------------ the protocol
@register(label="RAPPOR", color="#66a61e", order=90)
@dataclass(frozen=True, kw_only=True)
class RAPPOR(FrequencyOracle):
    """RAPPOR ([RAPPOR] Secs. 2-4): Bloom bits, cohorts, memoized PRR and per-report IRR.

    Parameters
    ----------
    epsilon : float
        Every report is ε-LDP.  With ``f=None``, f is solved so that ε∞ = ε.
    domain_size : int
        Values are 0..d-1 (hashed as their decimal digits).  ``estimate`` needs d <= m k.
    k : int, default 32
        Bloom filter bits (<= 256; <= 32 for Google's integer reports).
    h : int, default 2
        Hash functions (<= 16).
    m : int, default 64
        Cohorts.
    f : float or None, default None
        PRR probability of randomizing a bit, 0 <= f < 1; None: solved from ``epsilon``.
    p, q : float, default 0.5, 0.75
        IRR: a 0 becomes 1 w.p. p, a 1 stays 1 w.p. q; 0 <= p < q <= 1 (p = 0, q = 1: the
        one-time variant, whose report is the PRR itself).
    basic : bool, default False
        Basic RAPPOR: value v sets bit v only (k = d, h = 1, one cohort; k, h, m unused).
    """

    name: ClassVar[str] = "RAPPOR"
    report_model: ClassVar[str] = "bits"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits", public_randomness=("cohorts",)
    )

    k: int = 32
    h: int = 2
    m: int = 64
    f: float | None = None
    p: float = 0.5
    q: float = 0.75
    basic: bool = False

    _flip: int = field(init=False, repr=False, compare=False)
    _irr0: int = field(init=False, repr=False, compare=False)
    _irr1: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.basic, bool):
            raise TypeError(f"basic must be a bool, got {type(self.basic).__name__}")
        if self.basic:
            object.__setattr__(self, "k", self.domain_size)
            object.__setattr__(self, "h", 1)
            object.__setattr__(self, "m", 1)
        else:
            check_int(self.k, "k", minimum=1, maximum=MAX_BLOOM_BITS)
            check_int(self.h, "h", minimum=1, maximum=MAX_HASHES)
            check_int(self.m, "m", minimum=1)
            if self.domain_size > self.m * self.k:
                raise ValueError(
                    f"domain_size = {self.domain_size} exceeds m k = {self.m * self.k} Bloom "
                    "bits over all cohorts: the counts cannot identify every value (raise m or "
                    "k, or decode a candidate list with decode())"
                )
        for name in ("p", "q") + (() if self.f is None else ("f",)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")
        if not self.p < self.q:
            raise ValueError(f"p must be < q (got p = {self.p}, q = {self.q})")
        self._set_coins()

    def _set_coins(self) -> None:
        h = self.h
        if self.f is None:
            largest = 2 * h * exact.LOG_GRID
            if self.epsilon > largest:
                raise ValueError(
                    f"epsilon = {self.epsilon} is too large for RAPPOR with h = {h}: f/2 would "
                    f"be below 2^-{exact.GRID_BITS} and round to 0; the largest safe epsilon "
                    f"is {largest:.6g}"
                )
            f = rappor_f(self.epsilon, h)
            flip = exact.threshold(f / 2, 1 - f / 2, round_down=False)
        else:
            f = float(self.f)
            if not f < 1:
                raise ValueError(f"f must be < 1 (f = 1 reports pure noise), got {f}")
            flip = 0 if f == 0 else _given_threshold(f / 2, round_down=False)
        irr0 = 0 if self.p == 0 else _given_threshold(float(self.p), round_down=False)
        irr1 = exact.GRID if self.q == 1 else _given_threshold(float(self.q), round_down=True)
        object.__setattr__(self, "_flip", flip)
        object.__setattr__(self, "_irr0", irr0)
        object.__setattr__(self, "_irr1", irr1)
        if self.epsilon_one > self.epsilon:
            raise ValueError(
                f"f = {self.f}, p = {self.p}, q = {self.q}, h = {h} give one report "
                f"epsilon_1 = {self.epsilon_one:.6g} > epsilon = {self.epsilon}: raise "
                "epsilon or f, or leave f = None to solve it from epsilon"
            )

    # --- realised parameters ---------------------------------------------------------
    @property
    def f_realised(self) -> float:
        """The PRR's realised f: twice the flip probability on the 53-bit grid (>= ideal f)."""
        return 2 * exact.realised(self._flip)

    @property
    def p_realised(self) -> float:
        return self._irr0 / exact.GRID

    @property
    def q_realised(self) -> float:
        return self._irr1 / exact.GRID

    @property
    def p_star(self) -> float:
        """p*: a report's bit is 1 when the Bloom bit is 0 ([RAPPOR] Sec. 3.2, realised)."""
        return rappor_pq_star(self.f_realised, self.p_realised, self.q_realised)[0]

    @property
    def q_star(self) -> float:
        """q*: a report's bit is 1 when the Bloom bit is 1 ([RAPPOR] Sec. 3.2, realised)."""
        return rappor_pq_star(self.f_realised, self.p_realised, self.q_realised)[1]

    @property
    def epsilon_inf(self) -> float:
        """ε∞ of the realised PRR: the bound over any number of reports of one value."""
        return rappor_epsilon_inf(self.f_realised, self.h)

    @property
    def epsilon_one(self) -> float:
        """ε₁ of the realised coins: one report's privacy."""
        return rappor_epsilon_one(self.f_realised, self.p_realised, self.q_realised, self.h)

    # --- encoding ---------------------------------------------------------------------
    def positions(self, values: np.ndarray | None = None) -> np.ndarray:
        """Bloom positions (m, |values|, h) of values of the domain (all of it by default)."""
        if values is None:
            return self._domain_positions
        values = check_values(values, self.domain_size, name="candidates")
        return self._domain_positions[:, values.astype(np.int64)]

    @cached_property
    def _domain_positions(self) -> np.ndarray:
        if self.basic:
            return np.arange(self.domain_size, dtype=np.int64)[None, :, None]
        return bloom_table(
            [value_bytes(v) for v in range(self.domain_size)], self.m, self.h, self.k
        )

    def bloom_bits(self, cohorts: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The Bloom filters B of clients of these cohorts holding these values, (n, k) bool."""
        table = self._domain_positions
        bits = np.zeros((values.shape[0], self.k), dtype=bool)
        rows = np.arange(values.shape[0])
        for i in range(self.h):
            bits[rows, table[cohorts, values, i]] = True
        return bits

    # --- client -------------------------------------------------------------------------
    def permanent(self, bloom: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The PRR B' of Bloom filters (n, k): each bit flipped w.p. f/2 (realised grid coin).

        Flipping w.p. f/2 is the paper's "1 w.p. f/2, 0 w.p. f/2, B_i w.p. 1 - f".
        """
        return bloom ^ (exact.uniform(rng, bloom.shape) < self._flip)

    def instantaneous(self, prr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The IRR S of PRR bits (n, k): 1 w.p. q where B' = 1, w.p. p where B' = 0."""
        return exact.uniform(rng, prr.shape) < np.where(prr, self._irr1, self._irr0)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> RapporReports:
        """One report from each of n fresh clients: cohort, Bloom filter, PRR, then IRR."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        self.check_report_size(values.shape[0])
        n = values.shape[0]
        cohorts = rng.integers(0, self.m, size=n, dtype=np.int64)
        out = np.empty((n, -(-self.k // 8)), dtype=np.uint8)
        rows = max(1, CHUNK // self.k)
        for start in range(0, n, rows):
            part = slice(start, start + rows)
            bloom = self.bloom_bits(cohorts[part], values[part])
            out[part] = pack(self.instantaneous(self.permanent(bloom, rng), rng))
        return RapporReports(cohorts, out, self.k)

    def report_bytes(self, n_users: int) -> int:
        """n (⌈k/8⌉ + 8) bytes: the packed bits and the cohort."""
        return n_users * (-(-self.k // 8) + 8)

    def report_probabilities(self, value: int, cohort: Any = 0) -> np.ndarray:
        """Pr[bit i of a report = 1 | value, cohort] for each i (the bits are independent).

        ``cohort``: one cohort (returns (k,)) or an array of them (returns (len, k)).  The
        cohort is drawn independently of the value, so the privacy loss is the largest
        over cohorts of the loss of these independent bits (the ``bits`` model of
        :mod:`ldp.privacy`, one row per cohort: :meth:`public_draws`).
        """
        if np.ndim(cohort) == 0:
            check_int(cohort, "cohort", minimum=0, maximum=self.m - 1)
            return self.report_probabilities(value, np.array([cohort]))[0]
        cohorts = np.asarray(cohort, dtype=np.int64)
        if cohorts.size and (cohorts.min() < 0 or cohorts.max() >= self.m):
            raise ValueError(f"cohorts must lie in [0, {self.m})")
        probabilities = np.full((cohorts.shape[0], self.k), self.p_star)
        rows = np.arange(cohorts.shape[0])[:, None]
        probabilities[rows, self._domain_positions[cohorts, value]] = self.q_star
        return probabilities

    def public_draws(self) -> np.ndarray:
        """Every cohort: the public randomness :mod:`ldp.privacy` enumerates."""
        return np.arange(self.m)

    def audit_events(self, v: int, v_prime: int) -> list:
        """In the report's cohort: v's Bloom bits (not v''s) all 1 and v''s (not v's) all 0.

        With the h positions of each value distinct, P given v is q*^h (1-p*)^h, given v'
        p*^h (1-q*)^h: ratio e^{ε₁}.  Cohorts where the filters coincide are left out.
        """
        from ldp.audit.events import Event

        def only(a: int, b: int):
            def test(reports) -> np.ndarray:
                bits, mine, theirs = self._bloom_view(reports, a, b)
                apart = (mine ^ theirs).any(axis=1)
                ones = ~(mine & ~theirs & ~bits).any(axis=1)
                zeros = ~(theirs & ~mine & bits).any(axis=1)
                return apart & ones & zeros

            return test

        return [
            Event("v's Bloom bits 1, v''s 0 (own cohort)", only(v, v_prime), +1),
            Event("v''s Bloom bits 1, v's 0 (own cohort)", only(v_prime, v), -1),
        ]

    def audit_features(self, v: int, v_prime: int) -> list:
        """How many of v's and of v''s Bloom bits (in the report's cohort) are 1."""
        from ldp.audit.events import Feature

        def ones(which: int):
            def column(reports) -> np.ndarray:
                bits, mine, theirs = self._bloom_view(reports, v, v_prime)
                return (bits & (mine if which == 0 else theirs)).sum(axis=1)

            return column

        return [Feature("v's Bloom bits set", ones(0)), Feature("v''s Bloom bits set", ones(1))]

    def _bloom_view(self, reports, v: int, v_prime: int):
        """The report bits and the Bloom filters of v and v' in each report's cohort."""
        cohorts = np.asarray(reports.cohorts, dtype=np.int64)
        bits = unpack(np.asarray(reports.bits), self.k)
        filters = [
            self.bloom_bits(cohorts, np.full(cohorts.shape[0], x, dtype=np.int64))
            for x in (v, v_prime)
        ]
        return bits, filters[0], filters[1]

    # --- aggregator -------------------------------------------------------------------
    def _check_reports(self, reports: RapporReports) -> RapporReports:
        if not isinstance(reports, RapporReports):
            raise TypeError(
                "reports must be RapporReports(cohorts, bits, k) as returned by perturb, "
                f"got {type(reports).__name__}"
            )
        if reports.k != self.k:
            raise ValueError(f"reports encode k = {reports.k} bits, not k = {self.k}")
        bits, cohorts = np.asarray(reports.bits), np.asarray(reports.cohorts)
        width = -(-self.k // 8)
        if bits.dtype != np.uint8 or bits.ndim != 2 or bits.shape[1] != width:
            raise ValueError(
                f"reports bits must be uint8 of shape (n, {width}), got {bits.shape} {bits.dtype}"
            )
        if cohorts.shape != (bits.shape[0],) or cohorts.dtype.kind not in "iu":
            raise ValueError("reports cohorts must be integers, one per report")
        if cohorts.size and (cohorts.min() < 0 or cohorts.max() >= self.m):
            raise ValueError(f"reports cohorts must lie in [0, {self.m})")
        return reports

    def n_reports(self, reports: RapporReports) -> int:
        return int(self._check_reports(reports).bits.shape[0])

    def cohort_counts(self, reports: RapporReports) -> CohortCounts:
        """Y_cb (ones per cohort and bit) and n_c (reports per cohort) of a batch of reports."""
        reports = self._check_reports(reports)
        m, k = self.m, self.k
        ones = np.zeros(m * k, dtype=np.int64)
        rows = max(1, CHUNK // k)
        offsets = np.arange(k, dtype=np.int64)
        for start in range(0, reports.bits.shape[0], rows):
            bits = unpack(reports.bits[start : start + rows], k)
            cells = reports.cohorts[start : start + rows, None] * k + offsets
            ones += np.bincount(cells[bits], minlength=m * k)
        per_cohort = np.bincount(reports.cohorts, minlength=m).astype(np.int64)
        return CohortCounts(ones.reshape(m, k), per_cohort)

    def unbiased_bits(self, counts: CohortCounts) -> np.ndarray:
        """t_cb = (Y_cb - p* n_c)/(q* - p*) ([RAPPOR] Sec. 4): clients of cohort c with bit b
        set in their Bloom filter, unbiased; shape (m, k)."""
        ones, per_cohort = counts
        return (ones - self.p_star * per_cohort[:, None]) / (self.q_star - self.p_star)

    @cached_property
    def _design(self) -> np.ndarray:
        """X (m k, d): X[(c, b), v] = 1[b in positions(c, v)]/m, so E[t] = X n."""
        rows, columns = design_columns(self._domain_positions, self.k)
        design = np.zeros((self.m * self.k, self.domain_size))
        design[rows, columns] = 1.0 / self.m
        return design

    @cached_property
    def _solver(self) -> np.ndarray:
        """A = (X'X)^{-1} X' (d, m k): the least-squares map from t to the counts."""
        if self.basic:
            return np.eye(self.domain_size)
        design = self._design
        q, r = np.linalg.qr(design)
        diagonal = np.abs(np.diag(r))
        if diagonal.min() <= 1e-9 * diagonal.max():
            raise ValueError(
                f"domain_size = {self.domain_size}: some values share their Bloom bits in "
                f"every one of the m = {self.m} cohorts (raise m or k)"
            )
        return np.linalg.solve(r, q.T)

    def _fit(self, unbiased: np.ndarray) -> np.ndarray:
        if self.basic:
            return unbiased.ravel().astype(float)
        return self._solver @ unbiased.ravel()

    def estimate(self, reports: RapporReports, candidates: np.ndarray | None = None) -> np.ndarray:
        """Least-squares counts of the whole domain ([RAPPOR] Sec. 4), at ``candidates``.

        Unbiased: E[t] = X n holds exactly, and every value of the domain is in the fit.
        """
        chosen = self.candidates(candidates)
        return self._fit(self.unbiased_bits(self.cohort_counts(reports)))[chosen]

    # --- sampled engine -----------------------------------------------------------------
    def simulate_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> CohortCounts:
        """Y and n_c drawn from their exact law given the true counts (no reports).

        Each value's users are split uniformly over the cohorts (a multinomial), M_cb
        clients of cohort c have bit b set, and Y_cb ~ Bin(M_cb, q*) + Bin(n_c - M_cb, p*).
        """
        counts = check_counts(true_counts, self.domain_size)
        rng = check_generator(rng)
        return sample_cohort_counts(self, self._domain_positions, counts, rng)

    def simulate(
        self,
        true_counts: np.ndarray,
        rng: np.random.Generator,
        candidates: np.ndarray | None = None,
    ) -> np.ndarray:
        """The estimates ``estimate(perturb(values))`` gives, drawn from their exact law."""
        chosen = self.candidates(candidates)
        return self._fit(self.unbiased_bits(self.simulate_counts(true_counts, rng)))[chosen]

    def simulate_candidates(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Not defined for RAPPOR: the other users' values shape the counts through their
        Bloom bits, so their number is not enough.  Use ``simulate(true_counts, rng)``."""
        raise TypeError(
            "RAPPOR's estimates depend on the Bloom bits of every user's value, not only on "
            "how many users hold other values: use simulate(true_counts, rng, candidates)"
        )

    # --- analysis -------------------------------------------------------------------------
    @cached_property
    def _variance_map(self) -> np.ndarray:
        """L (d, d) with Var[ĉ] = L @ n exactly: the variances are linear in the counts.

        Var(ĉ) = diag(A Cov(t) A'), A the least-squares map.  Cov(t) = E[Cov(t | N)] +
        Cov(E[t | N]), N[v, c] the users of v in cohort c (multinomial, p = 1/m):
        * Cov(t | N) is diagonal, [M_r q*(1-q*) + (n_c - M_r) p*(1-p*)]/(q*-p*)^2, with
          E[M] = X n and E[n_c] = n/m;
        * E[t | N] = U N (U = m X), and Cov(N[v, c], N[v, c']) = n_v (δ_cc'/m - 1/m^2), so
          the v-th variance gains Σ_u n_u [(1/m) Σ_c G_vuc^2 - δ_vu] with G_vuc the
          cohort-c block of A U (whose sum over c is m δ_vu because A X = I).
        """
        d, m, k = self.domain_size, self.m, self.k
        a, b = self.q_star * (1 - self.q_star), self.p_star * (1 - self.p_star)
        gap2 = (self.q_star - self.p_star) ** 2
        if self.basic:  # A = I: the pure framework's variance (USENIX'17, "Method")
            return ((a - b) * np.eye(d) + b) / gap2
        solver, design = self._solver, self._design
        squared = solver**2
        noise = ((a - b) * (squared @ design) + (b / m) * squared.sum(axis=1)[:, None]) / gap2
        cohort = np.zeros((d, d))
        for c in range(m):
            block = slice(c * k, (c + 1) * k)
            g = solver[:, block] @ (design[block] * m)
            cohort += g**2
        return noise + cohort / m - np.eye(d)

    def variances(self, true_counts: np.ndarray) -> np.ndarray:
        """Exact Var of every value's estimate for the population ``true_counts`` (d,)."""
        counts = check_counts(true_counts, self.domain_size)
        return self._variance_map @ counts.astype(float)

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """Exact Var of a value's estimate, averaged over the domain's values, when it has
        ``true_count`` users and the other n - true_count are spread evenly over the other
        values (exact for any population: :meth:`variances`)."""
        n_users, true_count = check_variance_input(n_users, true_count)
        matrix, d = self._variance_map, self.domain_size
        own = np.diag(matrix)
        others = (matrix.sum(axis=1) - own) / (d - 1)
        return float(np.mean(true_count * own + (n_users - true_count) * others))

    # --- decoding candidates ------------------------------------------------------------
    def decode(self, reports: RapporReports | CohortCounts, candidates: Any, **options: Any) -> Any:
        """The paper's decoder on a list of candidate values ([RAPPOR] Sec. 4): LASSO to
        select, least squares to estimate, standard errors and a Bonferroni cut-off.

        ``options`` (``alpha``, ``penalty``) and the result (``RapporDecoding``): see
        :func:`ldp.oracles.rappor_decode.decode`.
        """
        from ldp.oracles.rappor_decode import decode  # it builds on this module

        counts = reports if isinstance(reports, CohortCounts) else self.cohort_counts(reports)
        return decode(self, counts, self.positions(candidates), **options)


@dataclass
class RapporClients:
    """A population of clients reporting many times: fixed cohorts and a memoized PRR.

    Each client keeps its cohort for life; the PRR of a (client, value) pair is drawn the
    first time the client reports that value and reused afterwards ([RAPPOR] Sec. 2), so an
    observer of all its reports learns at most ε∞ about the value.  The state is the
    cohorts and the memo; the random generator is an argument of every call.
    """

    oracle: RAPPOR
    cohorts: np.ndarray
    _keys: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _memo: np.ndarray | None = None

    @classmethod
    def new(cls, oracle: RAPPOR, n_clients: int, rng: np.random.Generator) -> RapporClients:
        """``n_clients`` clients, each in a uniformly drawn cohort."""
        n_clients = check_int(n_clients, "n_clients", minimum=1)
        cohorts = check_generator(rng).integers(0, oracle.m, size=n_clients, dtype=np.int64)
        return cls(oracle, cohorts)

    @property
    def memoized(self) -> int:
        """How many (client, value) PRRs are stored."""
        return int(self._keys.shape[0])

    def report(self, values: np.ndarray, rng: np.random.Generator) -> RapporReports:
        """One report per client (``values[i]``: its value now): memoized PRR, fresh IRR."""
        oracle = self.oracle
        values = check_values(values, oracle.domain_size).astype(np.int64, copy=False)
        if values.shape != self.cohorts.shape:
            raise ValueError(f"values must hold one value per client ({self.cohorts.shape[0]})")
        rng = check_generator(rng)
        keys = np.arange(values.shape[0], dtype=np.int64) * oracle.domain_size + values
        where = np.searchsorted(self._keys, keys)
        found = where < self._keys.shape[0]
        found[found] = self._keys[where[found]] == keys[found]
        missing = np.flatnonzero(~found)
        if missing.size:
            bloom = oracle.bloom_bits(self.cohorts[missing], values[missing])
            fresh = pack(oracle.permanent(bloom, rng))
            stored = np.empty((0, fresh.shape[1]), np.uint8) if self._memo is None else self._memo
            all_keys = np.concatenate([self._keys, keys[missing]])
            order = np.argsort(all_keys, kind="stable")
            self._keys = all_keys[order]
            self._memo = np.concatenate([stored, fresh])[order]
        prr = unpack(self._memo[np.searchsorted(self._keys, keys)], oracle.k)
        bits = pack(oracle.instantaneous(prr, rng))
        return RapporReports(self.cohorts.copy(), bits, oracle.k)
