"""Recursive Hadamard response (RHR; Chen, Kairouz, Özgür, NeurIPS 2020) with b-bit messages.

``[RHR]`` is W.-N. Chen, P. Kairouz, A. Özgür, *Breaking the Communication-Privacy-Accuracy
Trilemma*, NeurIPS 2020, its frequency-estimation scheme with b bits of private message.

Code.  K is the smallest power of two >= d, and H_K = H_{2^(b-1)} ⊗ H_B with B = K/2^(b-1)
(Sylvester matrices).  A value x is the pair (h, l): h = x mod 2^(b-1) (its b-1 "local"
bits, sent through randomised response) and l = x // 2^(b-1) (read through one row of
H_B).  The user draws r uniform in [B], forms the b-bit symbol s = 2h + β with
β = 1 if H_B[r, l] = +1, else 0, and sends s through 2^b-ary randomised response (s kept
with p = e^ε/(e^ε + 2^b - 1), else one of the other 2^b - 1 symbols uniformly), together
with r.  A report is the int64 y = s' B + r in [2K]: b bits of message plus the log2 B bits
of r (public in the paper, where a user's group r is fixed by its index; here each user
draws it, which changes no estimate's law).  The keep coin is on the 53-bit grid, rounded
down (:mod:`ldp.oracles.exact`); p* is the realised value and q* = (1 - p*)/(2^b - 1).

Why h is the *low* part.  Any bijection x -> (h, l) gives the same scheme on [K]; taking h
from the low bits spreads d < K values over all 2^(b-1) symbols, while the high bits
leave the symbols of h >= d/B unused (at d = 22,000, K = 32,768, b = 6: 22 of 32 used),
and the variance's m_h term (below) grows by ~K/d.

Estimator.  W_u = H_B[r_u, l] (1[s'_u = 2h+1] - 1[s'_u = 2h]) has mean (p* - q*) 1[x_u = x]
(E_r H_B[r, l_u] H_B[r, l] = 1[l_u = l]), so ĉ(x) = Σ_u W_u / (p* - q*).  With
A[h, r] = #(s' = 2h+1, r) - #(s' = 2h, r), ĉ(h, l) = (H_B A[h])[l] / (p* - q*): one
transform of size B per h, O(n + K log B).  Sums are exact integers until the final
division (no rounding of per-report weights).

Exact variance (derived here).  W_u² = 1[s'_u in {2h, 2h+1}] has mean p* + q* for the m_h
users whose value shares x's h and 2q* for the others, so

    Var[ĉ(x)] = 2 q* n / (p* - q*)² + m_h / (p* - q*) - n_x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.oracles import exact
from ldp.oracles.base import FrequencyOracle, check_variance_input
from ldp.oracles.blocked_hadamard import BHR, block_transform
from ldp.oracles.direct import keep_threshold
from ldp.oracles.hadamard import check_order, parity
from ldp.oracles.hadamard_sampling import coset_histograms, halving_counts
from ldp.registry import register
from ldp.validation import check_counts, check_generator, check_int, check_values


def default_bits(epsilon: float, domain_size: int) -> int:
    """b = min(log2 K, ⌈ε log2 e⌉), at least 1: more bits than ⌈ε log2 e⌉ do not help ([RHR])."""
    log_order = (int(domain_size) - 1).bit_length()
    return max(1, min(log_order, math.ceil(epsilon / math.log(2))))


@register(label="RHR", color="#1b9e77", order=83)
@dataclass(frozen=True, kw_only=True)
class RHR(FrequencyOracle):
    """Recursive Hadamard response with b-bit messages ([RHR]).

    Parameters
    ----------
    bits : int, optional
        b, the bits of the randomised message, in [1, log2 K]; default
        min(log2 K, ⌈ε log2 e⌉) (:func:`default_bits`).
    """

    bits: int | None = None

    name = "RHR"
    capabilities: ClassVar[Capabilities] = Capabilities(report_model="categorical")
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        order = 1 << (self.domain_size - 1).bit_length()
        check_order(self.name, self.domain_size, 2 * order)  # the server holds 2K counts
        log_order = order.bit_length() - 1
        bits = (
            default_bits(self.epsilon, self.domain_size)
            if self.bits is None
            else check_int(self.bits, "bits", minimum=1, maximum=log_order)
        )
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "_keep", keep_threshold(self.name, self.epsilon, cells=1 << bits))

    # --- the code ----------------------------------------------------------------------
    @property
    def order(self) -> int:
        """K, the smallest power of two >= d."""
        return 1 << (self.domain_size - 1).bit_length()

    @property
    def symbols(self) -> int:
        """2^b, the alphabet of the randomised response."""
        return 1 << self.bits

    @property
    def groups(self) -> int:
        """B = K / 2^(b-1): the order of H_B, and the range of a user's row r."""
        return self.order >> (self.bits - 1)

    @property
    def p_star(self) -> float:
        """The realised probability of sending the true symbol, <= e^ε/(e^ε + 2^b - 1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """(1 - p*)/(2^b - 1): the probability of each other symbol."""
        return (1.0 - self.p_star) / (self.symbols - 1)

    @property
    def gap(self) -> float:
        """p* - q*: the mean of W_u for a user of x."""
        return self.p_star - self.q_star

    def local_part(self, values: np.ndarray) -> np.ndarray:
        """h = x mod 2^(b-1), the part sent through randomised response."""
        return np.asarray(values, dtype=np.int64) & ((self.symbols >> 1) - 1)

    def row_part(self, values: np.ndarray) -> np.ndarray:
        """l = x // 2^(b-1), the part read through a row of H_B."""
        return np.asarray(values, dtype=np.int64) >> (self.bits - 1)

    def report_bits(self) -> int:
        """b + log2 B bits per report (the message and the row r)."""
        return self.bits + self.groups.bit_length() - 1

    def report_bytes(self, n_users: int) -> int:
        """8 n bytes (int64 reports)."""
        return 8 * n_users

    def working_bytes(self, n_users: int) -> int:
        """48 n bytes: the reports and the draws behind them (the client's peak, measured
        with tracemalloc at 2·10^5 users, is 33 B a user)."""
        return 6 * self.report_bytes(n_users)

    # --- client ------------------------------------------------------------------------
    def symbol(self, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """s = 2h + β, β = 1 when H_B[r, l] = +1."""
        beta = 1 - parity(self.row_part(values) & rows)
        return 2 * self.local_part(values) + beta

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """y = s' B + r: r uniform in [B], s' the 2^b-ary randomised response of s (int64)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        n = values.shape[0]
        self.check_report_size(n)
        rows = rng.integers(0, self.groups, size=n, dtype=np.int64)
        true = self.symbol(values, rows)
        keep = exact.bernoulli(rng, self._keep, n)
        other = rng.integers(0, self.symbols - 1, size=n, dtype=np.int64)
        other += other >= true  # uniform over the 2^b - 1 symbols != s
        return np.where(keep, true, other) * self.groups + rows

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[y | value] for every y = s' B + r in [2K]: p*/B where s' = s(value, r), else q*/B."""
        value = self.check_value(value)
        rows = np.arange(self.groups, dtype=np.int64)
        true = self.symbol(np.full(self.groups, value, dtype=np.int64), rows)
        out = np.full((self.symbols, self.groups), self.q_star / self.groups)
        out[true, rows] = self.p_star / self.groups
        return out.ravel()

    def audit_events(self, v: int, v_prime: int) -> list:
        """s' = s(v, r) != s(v', r) (evidence for v) and the reverse: ratio p*/q* each."""
        from ldp.audit import Event  # ldp.audit imports the oracles

        def only(a: int, c: int):
            def test(y: np.ndarray) -> np.ndarray:
                rows, sent = y % self.groups, y // self.groups
                mine = self.symbol(np.full(y.shape, a, dtype=np.int64), rows)
                theirs = self.symbol(np.full(y.shape, c, dtype=np.int64), rows)
                return (sent == mine) & (mine != theirs)

            return test

        return [
            Event(f"s' = s({v}, r) != s({v_prime}, r)", only(v, v_prime), +1),
            Event(f"s' = s({v_prime}, r) != s({v}, r)", only(v_prime, v), -1),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """For inputs 0 and 1: P(event | 0) = f p*, P(event | 1) = f q*, f = P(s(0,r) != s(1,r)).

        f = 1 when 0 and 1 differ in h (b >= 2), else 1/2 (their rows of H_B differ on
        half of the r).
        """
        share = 1.0 if self.bits >= 2 else 0.5
        return share * self.p_star, share * self.q_star

    # --- server ------------------------------------------------------------------------
    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        return check_values(reports, 2 * self.order, name="reports")

    def n_reports(self, reports: np.ndarray) -> int:
        return int(self._check_reports(reports).shape[0])

    def _from_histogram(self, hist: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """ĉ(x) = (H_B A[h])[l] / (p* - q*), A[h, r] = #(2h+1, r) - #(2h, r) (exact ints)."""
        table = hist.reshape(self.symbols // 2, 2, self.groups)
        signed = table[:, 1, :] - table[:, 0, :]
        transformed = block_transform(signed)
        return transformed[self.local_part(chosen), self.row_part(chosen)] / self.gap

    def estimate(self, reports: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """ĉ(x) = Σ_u H_B[r_u, l] (1[s'_u = 2h+1] - 1[s'_u = 2h]) / (p* - q*)."""
        chosen = self.candidates(candidates)
        reports = self._check_reports(reports)
        return self._from_histogram(np.bincount(reports, minlength=2 * self.order), chosen)

    # --- sampled engine ----------------------------------------------------------------
    def simulate_histogram(self, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The histogram over [2K] of the reports of a whole population, drawn exactly.

        2^b-ary randomised response is "keep s with probability p* - q*, else a uniform
        symbol" (then s' = s with p* - q* + 2^b q*/2^b = p*).  So value x = (h, l) keeps
        Bin(n_x, p* - q*) users at y = 2h B + (β B + r), r uniform, β = 1 - l·r: with
        z = 2r + β, uniform on {z : (2l + 1)·z = 1}, a coset in the 2B reports of local
        part h.  The others are uniform over all 2K reports (fair halving over the
        2^(b-1) local parts, then code 0).  One group of
        :func:`~ldp.oracles.hadamard_sampling.coset_histograms` per h; z is put back in
        report order at the end.  (p* - q* is rounded once to float64.)
        """
        rows = self.groups
        locals_ = self.symbols >> 1
        kept = rng.binomial(counts, self.gap)
        values = np.arange(counts.shape[0], dtype=np.int64)
        odd = np.zeros((locals_, 2 * rows), dtype=np.int64)
        odd[self.local_part(values), 2 * self.row_part(values) + 1] = kept
        even = np.zeros_like(odd)
        spread = int(counts.sum() - kept.sum())
        even[:, 0] = halving_counts(np.array([spread]), locals_.bit_length() - 1, rng)[0]
        hist = coset_histograms(even, odd, rng)  # (h, z = 2r + β)
        return hist.reshape(locals_, rows, 2).transpose(0, 2, 1).reshape(-1)

    # One report feeds every estimate of its symbol, so the whole population is drawn
    # through the report histogram, exactly as BHR does with its blocks.
    _simulate_population = BHR._simulate_population

    # --- analysis ----------------------------------------------------------------------
    def variance(
        self, n_users: int, true_count: float = 0, symbol_count: float | None = None
    ) -> float:
        """Exact Var[ĉ(x)] = 2q* n/(p*-q*)² + m_h/(p*-q*) - n_x (module docstring).

        Parameters
        ----------
        n_users, true_count :
            n and n_x.
        symbol_count : float, optional
            m_h, the users whose value shares x's local part h (x's own included);
            default n_x (no other user shares it).
        """
        n, n_x = check_variance_input(n_users, true_count)
        m = n_x if symbol_count is None else float(symbol_count)
        if not n_x <= m <= n:
            raise ValueError(f"symbol_count must lie in [true_count, n_users], got {symbol_count}")
        return float(2 * self.q_star * n / self.gap**2 + m / self.gap - n_x)

    def variances(self, true_counts: np.ndarray, candidates: np.ndarray | None = None):
        """Exact Var[ĉ(x)] of every candidate, m_h read from the whole histogram."""
        counts = check_counts(true_counts, self.domain_size)
        chosen = self.candidates(candidates)
        n = int(counts.sum())
        local = self.local_part(np.arange(self.domain_size))
        per_symbol = np.bincount(local, weights=counts, minlength=self.symbols // 2)
        m = per_symbol[self.local_part(chosen)]
        return 2 * self.q_star * n / self.gap**2 + m / self.gap - counts[chosen]
