"""Blocked Hadamard response (BHR): [HR]'s general scheme, B blocks of Hadamard codes.

``[HR]`` is J. Acharya, Z. Sun, H. Zhang, *Hadamard Response: Estimating Distributions
Privately, Efficiently, and with Little Communication*, AISTATS 2019 (arXiv:1802.04705),
its general privatization scheme for every ε (the one-code scheme of its high-privacy
section is :class:`ldp.oracles.HR`).  The block rule is the one of the authors' code
(``k2k_hadamard.py``, ``Hadamard_Rand_general_original``).

Blocks.  B = 2^⌊log2 min(e^ε, 2d)⌋ blocks, each of b positions, b the smallest power of
two with B (b - 1) >= d: b - 1 >= ⌈d/B⌉, so every one of the d values has a code.  (A
rule written with the integer quotient ⌊d/B⌋ in place of d/B covers only B (b - 1) < d
values for some d, e.g. 32 * 127 = 4064 < 4095 at ε = 4.)  Value x lives in block
j = x // (b-1) as row i = x mod (b-1) + 1 of the b x b Sylvester-Hadamard matrix H_b; its
set C_x holds the b/2 positions y of block j with H_b[i, y] = +1.  A report is an index
in [K], K = B b: block y // b, position y mod b; log2 K bits.

Client.  With probability κ = (e^ε - 1)/(2B - 1 + e^ε) the user reports uniformly from C_x,
else uniformly from all of [K].  So Pr[y | x] = κ 2/b + (1-κ)/K on C_x and (1-κ)/K off it,
whose ratio is 1 + 2Bκ/(1-κ) = e^ε: [HR]'s probabilities e^ε/Z and 1/Z with
Z = (b/2)(e^ε - 1 + 2B).  κ is drawn on the 53-bit grid, rounded down (:mod:`ldp.oracles.exact`),
and everything below uses the realised κ*.  With B = 1 (ε < ln 2) this is HR exactly.

Server.  T_u = H_b[i, y mod b] if y lies in block j, else 0, has mean κ for a user of x
and 0 for any other user (another block: ±1 with probability 1/(2B) each; the same block,
another row: C_u meets C_x in b/4 positions).  So ĉ(x) = Σ_u T_u / κ = (H_b h_j)[i] / κ,
h_j the histogram of block j: one transform of size b per block, O(n + K log b).  This is
[HR]'s estimator (its count of C_x minus half its count of block j, scaled).

Exact variance (derived here; [HR] states the order of the error).  E[T²] = Pr[y in block
j] is κ + (1-κ)/B for the users of block j and (1-κ)/B for the others, so, with m_j the
number of users whose value lies in block j (n_x of them hold x),

    Var[ĉ(x)] = n (1-κ)/(B κ²) + m_j / κ - n_x.

It depends on the other users through m_j only (:meth:`BHR.variance` takes it,
:meth:`BHR.variances` reads it from the histogram).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import FrequencyOracle, check_variance_input
from ldp.oracles.hadamard import check_order, dense_counts, draw_in_half, parity
from ldp.oracles.hadamard_sampling import coset_histograms, halving_counts
from ldp.registry import register
from ldp.validation import check_counts, check_generator, check_values


def block_rule(epsilon: float, domain_size: int) -> tuple[int, int]:
    """(B, b): B = 2^⌊log2 min(e^ε, 2d)⌋ blocks of b positions, b - 1 >= ⌈d/B⌉ ([HR]).

    b is the smallest power of two with b - 1 >= ⌈d/B⌉, so the B (b - 1) codes cover all
    d values.  ⌊ε / ln 2⌋ is corrected by one step either way against float error.
    """
    power = math.floor(epsilon / math.log(2))
    while (power + 1) * math.log(2) <= epsilon:
        power += 1
    while power > 0 and power * math.log(2) > epsilon:
        power -= 1
    cap = (2 * domain_size).bit_length() - 1  # 2^cap: the largest power of two <= 2d
    blocks = 1 << min(power, cap)
    per_block = -(-domain_size // blocks)  # ⌈d/B⌉ values per block
    return blocks, 1 << per_block.bit_length()  # the smallest power of two > ⌈d/B⌉


def block_transform(hist: np.ndarray) -> np.ndarray:
    """(H_b h_j) for every block j at once: ``hist`` has shape (B, b), b a power of two.

    Sylvester order, unnormalised, exact on integers; B b log2 b additions.
    """
    out = np.array(hist, dtype=np.int64, copy=True)
    blocks, b = out.shape
    h = 1
    while h < b:
        pairs = out.reshape(blocks, -1, 2, h)
        top = pairs[:, :, 0, :].copy()
        pairs[:, :, 0, :] += pairs[:, :, 1, :]
        pairs[:, :, 1, :] = top - pairs[:, :, 1, :]
        h *= 2
    return out


@register(label="BHR", color="#e6ab02", order=81)
@dataclass(frozen=True, kw_only=True)
class BHR(FrequencyOracle):
    """Blocked Hadamard response ([HR]'s general scheme): B = 2^⌊log2 min(e^ε, 2d)⌋ blocks.

    Reports are int64 indices in [K], K = B b.  ``variance(n, n_x, block_count)`` is exact;
    the sampled engine draws the exact histogram of reports.
    """

    name = "BHR"
    capabilities: ClassVar[Capabilities] = Capabilities(report_model="categorical")
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        blocks, b = block_rule(self.epsilon, self.domain_size)
        check_order(self.name, self.domain_size, blocks * b)  # K = B b report values
        e = math.exp(self.epsilon)
        keep, spread = (
            math.expm1(self.epsilon) / (2 * blocks - 1 + e),
            2 * blocks / (2 * blocks - 1 + e),
        )
        cap = 1 << ((2 * self.domain_size).bit_length() - 1)
        exact.check_representable(
            self.name,
            self.epsilon,
            min(keep, spread),
            largest_safe=math.log(2 * cap) + exact.LOG_GRID,
        )
        object.__setattr__(self, "_keep", exact.threshold(keep, spread, round_down=True))

    # --- the code ----------------------------------------------------------------------
    @property
    def blocks(self) -> int:
        """B, the number of blocks: 2^⌊log2 min(e^ε, 2d)⌋."""
        return block_rule(self.epsilon, self.domain_size)[0]

    @property
    def block_size(self) -> int:
        """b, the positions per block (a power of two); a block codes b - 1 values."""
        return block_rule(self.epsilon, self.domain_size)[1]

    @property
    def order(self) -> int:
        """K = B b, the number of possible reports."""
        return self.blocks * self.block_size

    @property
    def keep(self) -> float:
        """κ*: the realised probability of reporting from C_x, <= (e^ε-1)/(2B-1+e^ε)."""
        return exact.realised(self._keep)

    def block_of(self, values: np.ndarray) -> np.ndarray:
        """The block j = x // (b-1) of each value."""
        return np.asarray(values, dtype=np.int64) // (self.block_size - 1)

    def row_of(self, values: np.ndarray) -> np.ndarray:
        """The row i = x mod (b-1) + 1 of H_b coding each value inside its block."""
        return np.asarray(values, dtype=np.int64) % (self.block_size - 1) + 1

    def report_bits(self) -> int:
        """log2 K bits per report."""
        return self.order.bit_length() - 1

    def report_bytes(self, n_users: int) -> int:
        """8 n bytes (int64 indices)."""
        return 8 * n_users

    def working_bytes(self, n_users: int) -> int:
        """48 n bytes: the reports and the draws behind them (the client's peak, measured
        with tracemalloc at 2·10^5 users, is 43 B a user)."""
        return 6 * self.report_bytes(n_users)

    # --- client ------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """y uniform in C_x with probability κ*, else uniform in [K] (int64)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        n = values.shape[0]
        self.check_report_size(n)
        b = self.block_size
        keep = exact.bernoulli(rng, self._keep, n)
        inside = self.block_of(values) * b + draw_in_half(
            self.row_of(values), np.ones(n, dtype=bool), b, rng
        )
        anywhere = rng.integers(0, self.order, size=n, dtype=np.int64)
        return np.where(keep, inside, anywhere)

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[y | value] for every y in [K]: (1-κ*)/K, plus 2κ*/b on C_value."""
        value = np.int64(self.check_value(value))
        y = np.arange(self.order, dtype=np.int64)
        b = self.block_size
        inside = (y // b == self.block_of(value)) & (parity(self.row_of(value) & (y % b)) == 0)
        return np.where(inside, self.keep * 2.0 / b, 0.0) + (1.0 - self.keep) / self.order

    def audit_events(self, v: int, v_prime: int) -> list:
        """y in C_v minus C_v' (evidence for v) and the reverse: ratio e^ε each."""
        from ldp.audit import Event  # ldp.audit imports the oracles

        b = self.block_size

        def in_code(x: int, y: np.ndarray) -> np.ndarray:
            return (y // b == self.block_of(x)) & (parity(self.row_of(x) & (y % b)) == 0)

        def only(a: int, c: int):
            return lambda y: in_code(a, y) & ~in_code(c, y)

        return [
            Event(f"y in C_{v} minus C_{v_prime}", only(v, v_prime), +1),
            Event(f"y in C_{v_prime} minus C_{v}", only(v_prime, v), -1),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(y in C_0 minus C_1 | 0) and given 1: the auditor's default pair of inputs.

        0 and 1 share block 0 when b >= 4: the event has b/4 positions, probability
        κ*/2 + (1-κ*)/(4B) given 0 and (1-κ*)/(4B) given 1.  When b = 2 they lie in
        different blocks and the event is C_0 (one position): κ* + (1-κ*)/(2B) and
        (1-κ*)/(2B).  The ratio is 1 + 2Bκ*/(1-κ*) <= e^ε either way.
        """
        share = 4 if self.block_size >= 4 else 2
        spread = (1.0 - self.keep) / (share * self.blocks)
        return self.keep * 2 / share + spread, spread

    # --- server ------------------------------------------------------------------------
    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        return check_values(reports, self.order, name="reports")

    def n_reports(self, reports: np.ndarray) -> int:
        return int(self._check_reports(reports).shape[0])

    def _from_histogram(self, hist: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """ĉ(x) = (H_b h_j)[i] / κ* for each chosen x (j its block, i its row)."""
        transformed = block_transform(hist.reshape(self.blocks, self.block_size))
        return transformed[self.block_of(chosen), self.row_of(chosen)] / self.keep

    def estimate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """ĉ(x) = (#reports in C_x - #reports in C_x's block outside C_x) / κ*."""
        chosen = self.candidates(candidates)
        reports = self._check_reports(reports)
        return self._from_histogram(np.bincount(reports, minlength=self.order), chosen)

    # --- sampled engine ----------------------------------------------------------------
    def simulate_histogram(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The histogram over [K] of the reports of a whole population, drawn exactly.

        Value x keeps Bin(n_x, κ*) users, uniform on C_x, the positions p of its block
        with (row i)·p = 0; the other users are uniform on [K]: Mult(·, U[B]) over the
        blocks (fair halving), then uniform in their block (code 0).  Each block is one
        group of :func:`~ldp.oracles.hadamard_sampling.coset_histograms`.
        """
        b = self.block_size
        kept = rng.binomial(counts, self.keep)
        values = np.arange(counts.shape[0], dtype=np.int64)
        codes = np.zeros((self.blocks, b), dtype=np.int64)
        codes[self.block_of(values), self.row_of(values)] = kept
        spread = int(counts.sum() - kept.sum())
        codes[:, 0] = halving_counts(np.array([spread]), self.blocks.bit_length() - 1, rng)[0]
        return coset_histograms(codes, None, rng).reshape(-1)

    def _simulate_population(
        self, values: np.ndarray, counts: np.ndarray, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """The exact law of ``estimate(perturb(users))``, through the report histogram.

        One report feeds every estimate of its block, so a candidate's law depends on
        which values the other users hold: the whole population is drawn
        (:meth:`simulate_histogram`), its real values included.  Cost: one binomial
        per report value, Σ_x min(kept_x, 8 · 2^j) draws, 2^j the cells of x's code
        below its highest bit (:mod:`ldp.oracles.hadamard_sampling`), and the transforms.
        """
        hist = self.simulate_histogram(dense_counts(values, counts, self.domain_size), rng)
        return self._from_histogram(hist, chosen)

    # --- analysis ----------------------------------------------------------------------
    def variance(
        self, n_users: int, true_count: float = 0, block_count: float | None = None
    ) -> float:
        """Exact Var[ĉ(x)] = n (1-κ*)/(B κ*²) + m_j/κ* - n_x (see the module docstring).

        Parameters
        ----------
        n_users, true_count :
            n and n_x.
        block_count : float, optional
            m_j, the users whose value lies in x's block, x's own included; default n_x
            (no other user shares the block: the smallest variance for these n, n_x).
        """
        n, n_x = check_variance_input(n_users, true_count)
        m = n_x if block_count is None else float(block_count)
        if not n_x <= m <= n:
            raise ValueError(f"block_count must lie in [true_count, n_users], got {block_count}")
        kappa = self.keep
        return float(n * (1.0 - kappa) / (self.blocks * kappa**2) + m / kappa - n_x)

    def variances(self, true_counts: np.ndarray, candidates: np.ndarray | None = None):
        """Exact Var[ĉ(x)] of every candidate, m_j read from the whole histogram."""
        counts = check_counts(true_counts, self.domain_size)
        chosen = self.candidates(candidates)
        n = int(counts.sum())
        per_block = np.bincount(
            self.block_of(np.arange(self.domain_size)), weights=counts, minlength=self.blocks
        )
        m = per_block[self.block_of(chosen)]
        kappa = self.keep
        return n * (1.0 - kappa) / (self.blocks * kappa**2) + m / kappa - counts[chosen]
