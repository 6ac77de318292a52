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
as they are and ε₁ <= ε is required.  ``client`` says whose rounding of f the reports
follow (:func:`realised_f`: Google's Python client ⌈128 f⌉/128, its C++ client ⌊128 f⌋/128,
None f itself; the C++ client also rounds p and q down to 1/256, :func:`realised_irr`);
every probability and ε is computed from the realised values.  Parameters with
no noise at all (f = 0 and p = 0 or q = 1, ε₁ = ∞), which google/rappor's tests use to
check the encoding, are refused unless asked for with ``allow_no_noise=True`` and
``epsilon=math.inf``.

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
:mod:`ldp.oracles.rappor.google`.

Aggregation and decoding ([RAPPOR] Sec. 4).  Per cohort c and bit b the server counts the
ones Y_cb among the n_c reports of cohort c and unbiases them,
t_cb = (Y_cb - p* n_c)/(q* - p*), an unbiased estimate of how many clients of cohort c have
bit b set in their filter.  With cohorts drawn uniformly, E[t] = X n, X[(c,b), v] =
1[b in positions(c, v)]/m and n the vector of true counts, so least squares of t on X is
unbiased.  ``estimate`` fits the whole domain this way (the domain must be identifiable:
d <= m k and X of full rank); :meth:`RAPPOR.decode` is the paper's decoder for a list of
candidates (LASSO to select, least squares to estimate, standard errors and a Bonferroni
significance cut-off), see :mod:`ldp.oracles.rappor.decoder`.

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

from ldp import budget
from ldp.contract import Capabilities
from ldp.lazy import lazy_module
from ldp.oracles import exact, md5
from ldp.oracles.base import FrequencyOracle, check_variance_input
from ldp.oracles.memo import MemoIndex
from ldp.oracles.rappor.decoder import CohortCounts, RapporDecoding, decode, design_columns
from ldp.registry import register
from ldp.validation import (
    ParameterError,
    check_counts,
    check_generator,
    check_int,
    check_values,
)

stats = lazy_module("scipy.stats")

__all__ = [
    "CLIENTS",
    "MAX_CELLS",
    "RAPPOR",
    "CohortCounts",
    "RapporClients",
    "RapporReports",
    "bloom_positions",
    "bloom_table",
    "rappor_epsilon_inf",
    "rappor_epsilon_one",
    "rappor_f",
    "rappor_longitudinal_epsilon",
    "rappor_pq_star",
    "realised_f",
    "realised_irr",
]

#: Random draws per chunk of users (bounds the temporary memory).
CHUNK = 1 << 22
#: MD5 gives 16 bytes, one per hash function, each reduced mod k (so k <= 256).
MAX_HASHES = 16
MAX_BLOOM_BITS = 256
#: MD5 lanes per vectorised batch (bounds the temporary memory of bloom_table).
MD5_LANES = 1 << 20
# budget: the largest table RAPPOR allocates, in 8-byte cells (1 GiB): the m k counters,
# the hashed positions m x values x h, the dense design (m k) x d of ``estimate``.
MAX_CELLS = 1 << 27
#: Whose coins realise f, p, q: None (as given: this library, google/rappor's R simulator),
#: "python" (f -> ⌈128 f⌉/128, Google's Python client), "cpp" (f -> ⌊128 f⌋/128 and p, q ->
#: ⌊256 x⌋/256, its C++ client with its /dev/urandom source).
CLIENTS = (None, "python", "cpp")
NO_NOISE_HINT = (
    "{what}; to check an encoding without noise (epsilon = inf) opt in with "
    "RAPPOR(..., epsilon=math.inf, allow_no_noise=True) or google_rappor(..., "
    "allow_no_noise=True)"
)


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


def _given_threshold(name: str, x: float, *, round_down: bool) -> int:
    """The grid threshold of a probability given as a float (not a closed form): x·2^53 and
    1 - x (Sterbenz, for x >= 1/2) are exact, so no widening is needed; a dyadic x such as
    Google's f = j/128 is realised exactly.  A coin finer than the grid is refused under the
    parameter's ``name`` (f/2 for f)."""
    step = 2.0**-exact.GRID_BITS
    if min(x, 1 - x) < step:
        scale = 2 if name == "f" else 1
        raise ParameterError(
            name,
            scale * x,
            f"0 or >= {scale * step:.3g}" if x < 0.5 else f"1 or <= 1 - {step:.3g}",
            f"{'f/2' if name == 'f' else name} is finer than the coins' 2^-{exact.GRID_BITS} "
            "grid and cannot be realised",
        )
    return exact.threshold(x, 1 - x, round_down=round_down, exact=True)


def realised_f(f: float, client: str | None) -> float:
    """The f a client's PRR realises (:data:`CLIENTS`): f, ⌈128 f⌉/128 or ⌊128 f'⌋/128.

    Google's clients compare 7 random bits r in [0, 128) of an HMAC byte with 128 f. The
    Python client randomizes when r < 128 f (a double; 128 f is exact in binary floating
    point), so w.p. ⌈128 f⌉/128; the C++ client when r < (uint8_t) (128 f') with f' the
    parameter as a 32-bit float, so w.p. ⌊128 f'⌋/128.
    """
    if client is None:
        return f
    if client == "python":
        return math.ceil(128 * f) / 128
    return math.floor(128 * float(np.float32(f))) / 128


def realised_irr(x: float, client: str | None) -> float:
    """The IRR probability (p or q) a client realises.

    The Python client and the R simulator draw a uniform double, so x itself; the C++
    client's default random source (``UnixKernelRand``, bytes of /dev/urandom) sets a bit
    when a random byte is below (uint8_t) (256 x'), x' the 32-bit float: ⌊256 x'⌋/256.
    """
    if client != "cpp":
        return x
    return math.floor(256 * float(np.float32(x))) / 256


# ------------------------------------------------------------------ Bloom encoding
def check_cells(name: str, value: int, cells: int, per: str) -> None:
    """Refuse, before allocating it, a table of more than :data:`MAX_CELLS` cells.

    Raises :class:`~ldp.validation.ParameterError` naming the parameter that sizes it.
    """
    if cells > MAX_CELLS:
        raise ParameterError(
            name,
            value,
            f"<= {max(1, value * MAX_CELLS // cells):,}",
            f"{value:,} times {per} is a table of {cells:,} cells (about "
            f"{8 * cells / 2**30:.3g} GiB), more than the limit of {MAX_CELLS:,}",
        )


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
    check_cells("candidates", len(values), cohorts * len(values) * h, f"m x h = {cohorts} x {h}")
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
        """Reports collected as integers, as google/rappor's client returns them.

        Parameters
        ----------
        cohorts : array_like of int
            Each report's cohort.
        reports : array_like of int
            Each report as an integer in [0, 2^k) whose bit i is Bloom bit i (its bit
            string, written bit k-1 first, is ``format(report, f"0{k}b")``).
        k : int
            Bloom filter bits, 1 <= k <= 32.

        Returns
        -------
        RapporReports

        Examples
        --------
        >>> RapporReports.from_integers([0, 1], [0b101, 0b010], k=3).bits.ravel().tolist()
        [5, 2]
        """
        k = check_int(k, "k", minimum=1, maximum=32)
        values = np.asarray(reports)
        if values.dtype.kind not in "iu" or values.ndim != 1:
            raise TypeError("reports must be a 1-D array of integers")
        if values.size and (values.min() < 0 or int(values.max()) >= 1 << k):
            raise ValueError(f"reports must lie in [0, 2^{k}) for k = {k} bits")
        words = values.astype("<u4").view(np.uint8).reshape(-1, 4)
        return cls(np.asarray(cohorts, dtype=np.int64), words[:, : -(-k // 8)].copy(), k)


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
    client : {None, "python", "cpp"}, default None
        Whose PRR realises f (:data:`CLIENTS`).  None: f as given (on the 2^-53 coin grid),
        as this library's coins and google/rappor's R simulator draw it; ``"python"``:
        Google's Python client, ⌈128 f⌉/128; ``"cpp"``: Google's C++ client, ⌊128 f⌋/128.
        Needs ``f``.  The C++ client's default random source also realises p and q as
        ⌊256 x⌋/256 (:func:`realised_irr`).  p*, q*, ε∞ and ε₁ are computed from the
        realised values (:attr:`realised`), and so are the coins of :meth:`perturb`.
    allow_no_noise : bool, default False
        Allow parameters without randomization (f = 0 and p = 0 or q = 1: one report shows
        Bloom bits in the clear, ε₁ = ∞), as google/rappor's tests use to check an
        encoding.  Requires ``epsilon=math.inf``; never for data about people.

    Raises
    ------
    ldp.validation.ParameterError
        A parameter out of range, no-noise parameters without ``allow_no_noise``, or
        tables beyond :data:`MAX_CELLS` (m k counters).
    """

    name: ClassVar[str] = "RAPPOR"
    capabilities: ClassVar[Capabilities] = Capabilities(
        report_model="bits",
        public_randomness=("cohorts",),
        closed_form_variance=False,  # variance() averages over values; variances() is exact
    )

    k: int = 32
    h: int = 2
    m: int = 64
    f: float | None = None
    p: float = 0.5
    q: float = 0.75
    basic: bool = False
    client: str | None = None
    allow_no_noise: bool = False

    _flip: int = field(init=False, repr=False, compare=False)
    _irr0: int = field(init=False, repr=False, compare=False)
    _irr1: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.allow_no_noise, bool):
            raise TypeError(
                f"allow_no_noise must be a bool, got {type(self.allow_no_noise).__name__}"
            )
        if self.epsilon == math.inf and self.allow_no_noise:
            # ε = ∞ declared on purpose: the only non-finite epsilon any oracle accepts
            object.__setattr__(self, "epsilon", math.inf)
            object.__setattr__(
                self, "domain_size", check_int(self.domain_size, "domain_size", minimum=2)
            )
        elif self.epsilon == math.inf:
            raise ParameterError(
                "epsilon", self.epsilon, "finite", NO_NOISE_HINT.format(what="epsilon = inf")
            )
        else:
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
        cells = self.m * self.k
        if cells > MAX_CELLS:
            name, value = ("domain_size", self.domain_size) if self.basic else ("m", self.m)
            limit = MAX_CELLS if self.basic else MAX_CELLS // self.k
            raise ParameterError(
                name,
                value,
                f"<= {limit}",
                f"the server keeps m k = {cells:,} counters ({8 * cells / 2**30:.3g} GiB as "
                f"int64), more than the limit of {MAX_CELLS:,} cells",
            )
        if not self.basic and self.domain_size > cells:
            raise ParameterError(
                "domain_size",
                self.domain_size,
                f"<= m k = {cells} Bloom bits over all cohorts",
                message=(
                    f"domain_size = {self.domain_size} exceeds m k = {cells} Bloom "
                    "bits over all cohorts: the counts cannot identify every value (raise m "
                    "or k, or decode a candidate list with decode())"
                ),
            )
        for name in ("p", "q") + (() if self.f is None else ("f",)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
            if not 0.0 <= value <= 1.0:
                raise ParameterError(name, value, "in [0, 1]")
        if not self.p < self.q:
            raise ParameterError(
                "p",
                self.p,
                f"< q = {self.q}",
                message=f"p must be < q (got p = {self.p}, q = {self.q})",
            )
        if self.client not in CLIENTS:
            raise ParameterError("client", self.client, f"one of {sorted(CLIENTS, key=str)}")
        if self.client is not None and self.f is None:
            raise ParameterError("f", None, "given", f"client = {self.client!r} realises a given f")
        if self.allow_no_noise and self.epsilon != math.inf:
            raise ParameterError(
                "epsilon",
                self.epsilon,
                "math.inf with allow_no_noise=True",
                "reports without noise are not epsilon-LDP for any finite epsilon",
            )
        self._set_coins()

    def _set_coins(self) -> None:
        h = self.h
        if self.f is None:
            largest = 2 * h * exact.LOG_GRID
            if self.epsilon > largest:
                raise ParameterError(
                    "epsilon",
                    self.epsilon,
                    f"<= {largest:.6g} for RAPPOR with h = {h}",
                    message=(
                        f"epsilon = {self.epsilon} is too large for RAPPOR with h = {h}: f/2 "
                        f"would be below 2^-{exact.GRID_BITS} and round to 0; the largest safe "
                        f"epsilon is {largest:.6g}"
                    ),
                )
            f = rappor_f(self.epsilon, h)
            flip = exact.threshold(f / 2, 1 - f / 2, round_down=False)
        else:
            f = realised_f(float(self.f), self.client)
            if not f < 1:
                raise ParameterError("f", self.f, "< 1", "f = 1 reports pure noise")
            flip = 0 if f == 0 else _given_threshold("f", f / 2, round_down=False)
        if self.client == "cpp" and self.q == 1:
            raise ParameterError(
                "q", self.q, "< 1 for client='cpp'", "its uint8_t threshold 256 q overflows"
            )
        p, q = (realised_irr(float(x), self.client) for x in (self.p, self.q))
        irr0 = 0 if p == 0 else _given_threshold("p", p, round_down=False)
        irr1 = exact.GRID if q == 1 else _given_threshold("q", q, round_down=True)
        object.__setattr__(self, "_flip", flip)
        object.__setattr__(self, "_irr0", irr0)
        object.__setattr__(self, "_irr1", irr1)
        if self.epsilon_one == math.inf and not self.allow_no_noise:
            raise ParameterError(
                "f, p, q",
                (self.f, self.p, self.q),
                "some randomization (f > 0, or 0 < p and q < 1)",
                NO_NOISE_HINT.format(what="these parameters report Bloom bits in the clear"),
            )
        if self.epsilon_one > self.epsilon:
            raise ValueError(
                f"f = {self.f}, p = {self.p}, q = {self.q}, h = {h} give one report "
                f"epsilon_1 = {self.epsilon_one:.6g} > epsilon = {self.epsilon}: raise "
                "epsilon or f, or leave f = None to solve it from epsilon"
            )

    # --- realised parameters ---------------------------------------------------------
    @property
    def f_realised(self) -> float:
        """The PRR's realised f: twice the flip probability on the 53-bit grid, after the
        ``client``'s rounding (:func:`realised_f`); p*, q*, ε∞, ε₁ all use it."""
        return 2 * exact.realised(self._flip)

    @property
    def p_realised(self) -> float:
        """The IRR's realised p (a 0 becomes 1), after the ``client``'s rounding, on the
        53-bit grid, rounded up."""
        return self._irr0 / exact.GRID

    @property
    def q_realised(self) -> float:
        """The IRR's realised q (a 1 stays 1), after the ``client``'s rounding, on the
        53-bit grid, rounded down."""
        return self._irr1 / exact.GRID

    @property
    def realised(self) -> dict[str, float]:
        """The realised f, p, q, p*, q*, ε∞ and ε₁ (what the reports really follow)."""
        return {
            "f": self.f_realised,
            "p": self.p_realised,
            "q": self.q_realised,
            "p_star": self.p_star,
            "q_star": self.q_star,
            "epsilon_inf": self.epsilon_inf,
            "epsilon_one": self.epsilon_one,
        }

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
        # the table is m x d x h: blame m, the oracle's parameter (bloom_table's own check
        # names its argument, the candidates, which the caller did not give here)
        d, h = self.domain_size, self.h
        check_cells("m", self.m, self.m * d * h, f"domain_size x h = {d} x {h}")
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
        return bloom ^ exact.below(rng, self._flip, bloom.shape)

    def instantaneous(self, prr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The IRR S of PRR bits (n, k): 1 w.p. q where B' = 1, w.p. p where B' = 0."""
        return exact.below(rng, np.where(prr, self._irr1, self._irr0), prr.shape)

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

    def working_bytes(self, n_users: int) -> int:
        """The reports, plus a chunk's Bloom, PRR and IRR bits with their uniform draws
        (24 bytes a cell counted; 18 measured at 2·10^5 users)."""
        rows = max(1, min(n_users, CHUNK // self.k))
        return self.report_bytes(n_users) + 24 * rows * self.k

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

    def log_likelihoods(self, reports: RapporReports) -> np.ndarray:
        """ln Pr[report_i | v] for each report (rows) and value (columns), up to a constant
        per report: over the distinct Bloom positions of v in the report's cohort, ln(q*/p*)
        for a bit set and ln((1-q*)/(1-p*)) for a bit unset (every other bit has p*
        whatever v is), from :meth:`report_probabilities`' law (for :mod:`ldp.adversary`).
        """
        cohorts, bits, _ = self._check_reports(reports)
        # the table and a cohort's hits (8 B each), each report's k unpacked bits, and the
        # cohorts' Bloom filters (m x d x k floats, whatever the reports)
        cell_bytes = 16.0 + 8.0 * self.k / self.domain_size
        filters = 8.0 * self.m * self.domain_size * self.k
        self.check_likelihood_table(cohorts.shape[0], cell_bytes, fixed_bytes=filters)
        table = self._domain_positions  # (cohorts, d, h)
        filters = np.zeros((table.shape[0], table.shape[1], self.k))  # distinct positions
        np.put_along_axis(filters, table, 1.0, axis=2)
        ones = unpack(bits, self.k).astype(float)
        p, q = self.p_star, self.q_star
        set_, unset = math.log(q / p), math.log1p(-q) - math.log1p(-p)
        out = np.empty((cohorts.shape[0], self.domain_size))
        for cohort in np.unique(cohorts):  # per cohort: bits set among v's Bloom positions
            mine = cohorts == cohort
            hits = ones[mine] @ filters[cohort].T
            out[mine] = (set_ - unset) * hits + unset * filters[cohort].sum(axis=1)
        return out

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
        mk = self.m * self.k
        check_cells("domain_size", self.domain_size, mk * self.domain_size, f"m k = {mk}")
        rows, columns = design_columns(self._domain_positions, self.k)
        design = np.zeros((mk, self.domain_size))
        design[rows, columns] = 1.0 / self.m
        return design

    @cached_property
    def _solver(self) -> np.ndarray:
        """A = (X'X)^{-1} X' (d, m k): the least-squares map from t to the counts."""
        if self.basic:
            return np.eye(self.domain_size)
        design = self._design
        mk, d = design.shape
        budget.check_operations(
            "domain_size",
            d,
            f"smaller, with m k = {mk}",
            2.0 * mk * d * d,
            f"the least-squares map (a QR of the {mk} x {d} design)",
        )
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

    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The estimates ``estimate(perturb(users))`` gives, drawn from their exact law.

        The least-squares fit runs over the whole domain and every value's Bloom bits
        enter the cohort counts Y, so the law of a candidate's estimate depends on which
        values all the other users hold: the population is expanded to the whole domain
        and Y drawn from it (:meth:`simulate_counts`).
        """
        full = np.zeros(self.domain_size, dtype=np.int64)
        full[values] = counts
        return self._fit(self.unbiased_bits(self.simulate_counts(full, rng)))[chosen]

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
        check_cells("domain_size", d, max(d, m * k) * d, f"max(d, m k) = {max(d, m * k)}")
        solver, design = self._solver, self._design
        squared = solver**2
        noise = ((a - b) * (squared @ design) + (b / m) * squared.sum(axis=1)[:, None]) / gap2
        cohort = np.zeros((d, d))
        for c in range(m):
            block = slice(c * k, (c + 1) * k)
            g = solver[:, block] @ (design[block] * m)
            cohort += g**2
        return noise + cohort / m - np.eye(d)

    def _basic_variances(self, own: np.ndarray, total: float) -> np.ndarray:
        """Basic RAPPOR (A = I): [n_v q*(1-q*) + (n - n_v) p*(1-p*)]/(q*-p*)^2, the pure
        framework's variance (USENIX'17, "Method"), without a d x d matrix."""
        a, b = self.q_star * (1 - self.q_star), self.p_star * (1 - self.p_star)
        return (own * a + (total - own) * b) / (self.q_star - self.p_star) ** 2

    def variances(
        self, true_counts: np.ndarray, candidates: np.ndarray | None = None
    ) -> np.ndarray:
        """Exact Var of each candidate's estimate (every value by default) for the
        population ``true_counts`` (d,)."""
        counts = check_counts(true_counts, self.domain_size)
        chosen = self.candidates(candidates)
        if self.basic:
            every = self._basic_variances(counts.astype(float), float(counts.sum()))
        else:
            every = self._variance_map @ counts.astype(float)
        return every[chosen]

    def variance(self, n_users: int, true_count: float = 0) -> float:
        """Exact Var of a value's estimate, averaged over the domain's values, when it has
        ``true_count`` users and the other n - true_count are spread evenly over the other
        values (exact for any population: :meth:`variances`)."""
        n_users, true_count = check_variance_input(n_users, true_count)
        if self.basic:
            return float(self._basic_variances(np.float64(true_count), float(n_users)))
        matrix, d = self._variance_map, self.domain_size
        own = np.diag(matrix)
        others = (matrix.sum(axis=1) - own) / (d - 1)
        return float(np.mean(true_count * own + (n_users - true_count) * others))

    # --- decoding candidates ------------------------------------------------------------
    def decode(
        self, reports: RapporReports | CohortCounts, candidates: Any, **options: Any
    ) -> RapporDecoding:
        """The paper's decoder on a list of candidate values ([RAPPOR] Sec. 4): LASSO to
        select, least squares to estimate, standard errors and a Bonferroni cut-off.

        ``candidates`` are integer values of the domain (hashed as their decimal digits);
        strings go through :func:`ldp.oracles.rappor.google.decode_strings`.  ``options``
        (``alpha``, ``penalty``) and the result: :func:`ldp.oracles.rappor.decoder.decode`.
        """
        if any(isinstance(c, str | bytes) for c in np.ravel(np.asarray(candidates, object))):
            raise TypeError(
                "RAPPOR.decode takes integer values of the domain; decode string candidates "
                "with ldp.oracles.rappor.google.decode_strings(oracle, reports, candidates), "
                "which hashes each string's bytes (UTF-8 for str) into its Bloom positions"
            )
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
    _index: MemoIndex | None = None
    _memo: np.ndarray | None = None  #: the packed PRRs in slot order

    def __post_init__(self) -> None:
        if self._index is None:
            self._index = MemoIndex(self.cohorts.shape[0], self.oracle.domain_size)

    @classmethod
    def new(cls, oracle: RAPPOR, n_clients: int, rng: np.random.Generator) -> RapporClients:
        """``n_clients`` clients, each in a uniformly drawn cohort."""
        n_clients = check_int(n_clients, "n_clients", minimum=1)
        cohorts = check_generator(rng).integers(0, oracle.m, size=n_clients, dtype=np.int64)
        return cls(oracle, cohorts)

    @property
    def memoized(self) -> int:
        """How many (client, value) PRRs are stored."""
        return len(self._index)

    def report(self, values: np.ndarray, rng: np.random.Generator) -> RapporReports:
        """One report per client (``values[i]``: its value now): memoized PRR, fresh IRR."""
        oracle = self.oracle
        values = check_values(values, oracle.domain_size).astype(np.int64, copy=False)
        if values.shape != self.cohorts.shape:
            raise ValueError(f"values must hold one value per client ({self.cohorts.shape[0]})")
        rng = check_generator(rng)
        memo = self._index.assign(np.arange(values.shape[0], dtype=np.int64), values)
        if memo.new_users.size:
            bloom = oracle.bloom_bits(self.cohorts[memo.new_users], memo.new_values)
            fresh = pack(oracle.permanent(bloom, rng))
            stored = np.empty((0, fresh.shape[1]), np.uint8) if self._memo is None else self._memo
            self._memo = np.concatenate([stored, fresh])
        prr = unpack(self._memo[memo.slots], oracle.k)
        bits = pack(oracle.instantaneous(prr, rng))
        return RapporReports(self.cohorts.copy(), bits, oracle.k)
