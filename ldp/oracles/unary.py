"""Unary encodings: SUE (basic one-time RAPPOR) and OUE, USENIX'17 Sec. 4.3.

A value v becomes the d-bit vector with a single 1 at position v; each bit is then
perturbed independently: a 1 stays 1 with probability p, a 0 becomes 1 with probability
q.  A report supports every value whose bit is 1, so p* = p and q* = q.  ε-LDP holds
because two encodings differ in two bits: p(1-q)/((1-p)q) = e^ε.

Reports are kept packed (``numpy.packbits`` along the domain, shape (n, ⌈d/8⌉) uint8),
and users are processed in chunks, so no n x d array beyond the packed reports exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ldp import theory
from ldp._validation import check_generator, check_values
from ldp.oracles.base import PureOracle
from ldp.registry import register

#: Random draws per chunk of users (bounds the temporary memory to ~ 8 x this bytes).
CHUNK = 1 << 22


def column_sums(packed: np.ndarray, d: int) -> np.ndarray:
    """How many reports have each of the d bits set (int64), unpacking a chunk at a time."""
    rows = max(1, CHUNK // d)
    totals = np.zeros(d, dtype=np.int64)
    for start in range(0, packed.shape[0], rows):
        bits = np.unpackbits(packed[start : start + rows], axis=1, count=d)
        totals += bits.sum(axis=0, dtype=np.int64)
    return totals


@dataclass(frozen=True, kw_only=True)
class _UnaryEncoding(PureOracle):
    """Shared client and aggregator of SUE and OUE; subclasses give (p, q)."""

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[bit i of the report = 1 | value] for each i (bits are independent)."""
        probabilities = np.full(self.domain_size, self.q_star)
        probabilities[value] = self.p_star
        return probabilities

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Packed perturbed bit vectors, shape (n, ⌈d/8⌉), bit v of row i at (i, v // 8)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        d, p, q = self.domain_size, self.p_star, self.q_star
        n = values.shape[0]
        out = np.empty((n, -(-d // 8)), dtype=np.uint8)
        rows = max(1, min(n, CHUNK // d))
        # one pair of buffers reused by every chunk: fresh 32 MB arrays per chunk cost ~30%
        # of the time in page faults; random(out=...) draws the same stream as random(size)
        uniform_buffer = np.empty((rows, d))
        bits_buffer = np.empty((rows, d), dtype=bool)
        for start in range(0, n, rows):
            chunk = values[start : start + rows]
            uniform, bits = uniform_buffer[: chunk.shape[0]], bits_buffer[: chunk.shape[0]]
            rng.random(out=uniform)
            np.less(uniform, q, out=bits)
            index = np.arange(chunk.shape[0])
            bits[index, chunk] = uniform[index, chunk] < p
            out[start : start + rows] = np.packbits(bits, axis=1)
        return out

    def n_reports(self, reports: np.ndarray) -> int:
        return int(np.shape(reports)[0])

    def support_counts(self, reports: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        reports = np.asarray(reports)
        width = -(-self.domain_size // 8)
        if reports.dtype != np.uint8 or reports.ndim != 2 or reports.shape[1] != width:
            raise ValueError(
                f"reports must be packed bits of shape (n, {width}) uint8, "
                f"got {reports.shape} {reports.dtype}"
            )
        return column_sums(reports, self.domain_size)[candidates]


@register(color="#de8f05", order=20)
@dataclass(frozen=True, kw_only=True)
class SUE(_UnaryEncoding):
    """Symmetric unary encoding (basic one-time RAPPOR): p = e^{ε/2}/(e^{ε/2}+1), q = 1 - p."""

    name = "SUE"

    @property
    def p_star(self) -> float:
        return theory.sue_pq(self.epsilon)[0]

    @property
    def q_star(self) -> float:
        return theory.sue_pq(self.epsilon)[1]


@register(color="#029e73", order=30)
@dataclass(frozen=True, kw_only=True)
class OUE(_UnaryEncoding):
    """Optimised unary encoding: p = 1/2, q = 1/(e^ε+1) (USENIX'17 Sec. 4.3)."""

    name = "OUE"

    @property
    def p_star(self) -> float:
        return theory.oue_pq(self.epsilon)[0]

    @property
    def q_star(self) -> float:
        return theory.oue_pq(self.epsilon)[1]
