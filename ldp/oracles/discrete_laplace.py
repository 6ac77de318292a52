"""Discrete Laplace noise with an exactly known pmf: SHE's noise, safe in floating point.

Why not Laplace in float64.  Adding 1.0 to a float Laplace draw leaves traces in the low
bits (Mironov, CCS 2012): fl(1 + L) in (-1/2, 1/2) is always a multiple of 2^-53, a plain
draw mostly is not, so a coordinate off that grid cannot hold the user's value.  The
reports here are integers, and the probability of every integer report is a known rational.

The mechanism ([FO] Sec. 4.2, SHE, on an integer grid).  A coordinate of a report is

    r = clamp(s·1[coordinate = v] + Z, -T, T),     P(Z = z) = (1-α)/(1+α) · α^|z|,

Z two-sided geometric (discrete Laplace).  Two one-hot inputs differ by 2s in L1 norm, so
α^s >= e^{-ε/2} per coordinate gives ε-LDP; clamping after adding the signal is
post-processing.  Parameters, for a budget ε:

* grid s = ⌈8 ε⌉ (at least 1), so λ = ε/(2s) <= 1/16;
* α = e^{-ε/(2s)} rounded *up* to a float64 (widened by 2^-50 against libm error), so
  α^{2s} >= e^{-ε} exactly;
* support [-T, T] with T = s + W and W = ⌈100 ln 2 / ln(1/α)⌉: the clamped tail mass
  beyond the user's own coordinate is α^{W+1}/(1+α) <= 2^-100.

Per user, Σ_i r_i/s estimates the count with Var(Z)/s² = 2α/((1-α)² s²) = 8/ε² (1 - λ²/12
+ O(λ⁴)): within 0.03% below Table 1's 8/ε².

Exact tables.  Each coordinate is drawn by inversion from a 128-bit integer table: the
probability of the report k is mass(k)/2^128 with integer masses, and a uniform 128-bit
integer U (two ``rng.integers`` words) falls in cell k when C(k-1) <= U < C(k), C the
cumulative masses.  The masses are built so the ε accounting holds for the integers
themselves, not for an approximation of them:

* the untruncated masses m(j) of |z| = j come from m(0) = ⌈2^128 (1-α)/(1+α)⌉ and
  m(j) = ⌈α m(j-1)⌉ (exact integer arithmetic, α = A/2^E); by induction
  m(j) >= 2^128 π(j) and m(j+t) >= α^t m(j) for every t >= 0;
* the end points carry the folded tails, F(j) >= 2^128 α^j/(1+α) with the same recursion;
* the other coordinates' table is m(|k|) inside and F(T) at ±T; the user's coordinate's
  table is m(|k-s|) inside, F(T-s) at T and F(T+s) at -T.  So every ratio
  own(k)/other(k) is m(a)/m(b) or F(a)/F(b) with |a-b| <= s, within [α^s, α^-s];
* both tables sum to at least 2^128 (each mass is at least its ideal share); the excess,
  a few hundred units, is taken from each table's mode, which keeps every ratio in
  [α^s, α^-s] (checked).

The realised privacy loss max_k ln(own/other) + max_k ln(other/own) is then computed from
the integers with exact rationals and asserted <= ε at construction; so are the exact mean
and variance of each table, which the estimator and ``variance`` use.

A signal anywhere in [-s, s].  :func:`shifted_noise` builds the same kind of table for
r = clamp(k + Z, -T, T) with k any integer in [-s, s] (the grid mean mechanism of
:mod:`ldp.numeric.laplace`): sensitivity 2s, one table of Z over [-T-s, T+s] clamped
after adding k, its folded end cell chosen so that the tail sums obey the ratio bound too;
the realised loss over every pair of signals is again computed from the integers.

Sampled engine.  The sum of n users' noise at one coordinate is drawn as NB(n, 1-α) -
NB(n, 1-α) (a discrete Laplace variable is the difference of two geometric ones; a sum
of n geometric ones is negative binomial).  This is the law of the *untruncated*,
unrounded noise; the per-draw total variation distance from the table law is at most
``tv_per_draw`` = tail mass + rounding <= 2^-100 + K/((1-α) 2^128), so the estimates of
|C| candidates from n users differ from the reports engine's law by at most
n |C| tv_per_draw in total variation (< 10^-12 for n |C| < 10^18).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from ldp.hashing import HAVE_NUMBA, numba

#: Bits of the uniform integers the tables are searched with.
TABLE_BITS = 128
#: The total mass of a table: a report has probability mass / 2^128.
TOTAL = 1 << TABLE_BITS
#: The grid s = ⌈GRID_PER_EPSILON ε⌉: λ = ε/(2s) <= 1/16.
GRID_PER_EPSILON = 8
#: The clamped tail beyond the user's coordinate is below 2^-TAIL_BITS.
TAIL_BITS = 100
#: Relative widening of α (upwards) that absorbs the error of exp() in float64.
ALPHA_MARGIN = 2.0**-50
_WORD = 64
_MASK = (1 << _WORD) - 1
_HALF = 32
_MASK32 = (1 << _HALF) - 1


@dataclass(frozen=True, eq=False)
class Table:
    """An integer pmf over the reports -T..T, searchable with uniform 128-bit integers.

    ``masses[i]`` is the mass of the report i - T; the cumulative masses C(i) (without the
    last, which is 2^128) are stored as high and low 64-bit words, with a guide table over
    the top ``guide_bits`` bits of U giving the cell of each bucket no C(i) starts in (-1
    for the others).
    """

    masses: tuple[int, ...]
    high: np.ndarray  #: uint64: C(i) >> 64
    low: np.ndarray  #: uint64: C(i) & (2^64 - 1)
    guide_bits: int
    guide: np.ndarray  #: int32: #{i : C(i) < bucket start}, or -1 if a C(i) is in the bucket

    @classmethod
    def build(cls, masses: list[int]) -> Table:
        if sum(masses) != TOTAL or min(masses) < 1:
            raise AssertionError("a table's masses must be positive and sum to 2^128")
        cumulative = list(np.cumsum(np.array(masses[:-1], dtype=object)))
        high = np.array([c >> _WORD for c in cumulative], dtype=np.uint64)
        low = np.array([c & _MASK for c in cumulative], dtype=np.uint64)
        guide_bits = int(min(20, max(12, math.ceil(math.log2(len(masses))) + 4)))
        buckets = (high >> np.uint64(_WORD - guide_bits)).astype(np.int64)
        edges = np.arange(1 << guide_bits)
        first = np.searchsorted(buckets, edges, side="left")
        last = np.searchsorted(buckets, edges, side="right")
        guide = np.where(first == last, first, -1).astype(np.int32)
        return cls(tuple(masses), high, low, guide_bits, guide)

    @property
    def size(self) -> int:
        return len(self.masses)

    def draw(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        """Cell indices (int32) with P(i) = masses[i] / 2^128 exactly (:meth:`fill`)."""
        return self.fill(rng, np.empty(size, dtype=np.int32))

    def fill(self, rng: np.random.Generator, out: np.ndarray, offset: int = 0) -> np.ndarray:
        """``out`` (a C-contiguous integer array), filled with cell + ``offset`` for
        independent cells with P(i) = masses[i] / 2^128 exactly; returns it.

        U = 2^96 A + 2^64 B + L, with A and B uniform 32-bit words and L a 64-bit one (the
        halves and words of the generator's raw 64-bit output).  The cell is
        #{i : C(i) <= U}.  When no C(i) starts with the top bits of A (the usual case) the
        guide gives it; otherwise B is drawn and the high word H = 2^32 A + B decides, and
        L is drawn only where a C(i) shares H.  Cells are drawn :data:`FILL_CHUNK` at a
        time, with the compiled kernel when numba is there and the same numbers without.
        """
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
        flat = out.reshape(-1)
        shift = np.uint32(_HALF - self.guide_bits)
        found = np.empty(min(FILL_CHUNK, flat.size), dtype=np.int64)
        where: list[np.ndarray] = []  # the draws the guide leaves open, resolved together
        tops: list[np.ndarray] = []
        pending = 0
        for start in range(0, flat.size, FILL_CHUNK):
            part = flat[start : start + FILL_CHUNK]
            top = _words32(rng, part.size)
            if HAVE_NUMBA:
                ambiguous = found[: _guided_numba(top, self.guide, shift, offset, part, found)]
            else:
                ambiguous = _guided_numpy(top, self.guide, shift, offset, part)
            if ambiguous.size:
                where.append(ambiguous + start)
                tops.append(top[ambiguous])
                pending += ambiguous.size
            if where and (pending >= FILL_CHUNK or start + FILL_CHUNK >= flat.size):
                flat[np.concatenate(where)] = self._resolve(rng, np.concatenate(tops)) + offset
                where, tops, pending = [], [], 0
        return out

    def _resolve(self, rng: np.random.Generator, top: np.ndarray) -> np.ndarray:
        """The cells of the draws whose top word A the guide cannot place."""
        h = (top.astype(np.uint64) << np.uint64(_HALF)) | _words32(rng, top.size)
        start = np.searchsorted(self.high, h, side="left")
        stop = np.searchsorted(self.high, h, side="right")
        resolved = start.copy()
        tied = np.flatnonzero(stop > start)
        if tied.size:
            low = rng.bit_generator.random_raw(tied.size)
            for j, word in zip(tied.tolist(), low, strict=True):
                a, b = int(start[j]), int(stop[j])
                resolved[j] = a + int(np.searchsorted(self.low[a:b], word, side="right"))
        return resolved


#: Cells :meth:`Table.fill` draws at a time: their random words (4 bytes a cell) stay in
#: the cache and in memory the allocator reuses (a fresh page costs more than the draw).
#: The draws the guide leaves open wait for at most as many more before they are resolved.
FILL_CHUNK = 1 << 14
#: Bytes a fill holds besides ``out``, at most (measured ~0.9 MB with 2 FILL_CHUNK open).
FILL_BYTES = 96 * FILL_CHUNK


def _words32(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` uniform 32-bit words: the halves of the generator's raw 64-bit output."""
    return rng.bit_generator.random_raw((size + 1) // 2).view(np.uint32)[:size]


def _guided_numpy(
    top: np.ndarray, guide: np.ndarray, shift: np.uint32, offset: int, out: np.ndarray
) -> np.ndarray:
    """out = guide[top >> shift] + offset; the positions the guide leaves open (-1)."""
    cells = guide[top >> shift]
    np.add(cells, offset, out=out, casting="unsafe")
    return np.flatnonzero(cells < 0)


if HAVE_NUMBA:

    @numba.njit(cache=True, nogil=True)
    def _guided_numba(top, guide, shift, offset, out, ambiguous):  # pragma: no cover - jit
        """:func:`_guided_numpy` in one pass; the open positions go to ``ambiguous``, and
        their count is returned."""
        found = 0
        for i in range(top.shape[0]):
            cell = guide[top[i] >> shift]
            if cell < 0:
                ambiguous[found] = i
                found += 1
            out[i] = cell + offset
        return found


@dataclass(frozen=True, eq=False)
class HistogramNoise:
    """The exact noise of SHE at one ε: the grid, both tables and their exact moments.

    Attributes
    ----------
    epsilon : float
        The budget the tables were built for.
    grid : int
        s, the signal added to the user's own coordinate.
    alpha : float
        α, the discrete Laplace ratio (α^{2s} >= e^{-ε}).
    support : int
        T: reports lie in [-T, T].
    own, other : Table
        The pmf of the user's own coordinate and of every other coordinate.
    realised_epsilon : float
        max_k ln(own/other) + max_k ln(other/own), from the integer masses (<= ε).
    mean_own, mean_other, var_own, var_other : float
        Exact moments of the two tables (mean_other = 0 by symmetry).
    tv_per_draw : float
        Bound on the total variation distance between a table and the untruncated
        discrete Laplace law the sampled engine sums.
    """

    epsilon: float
    grid: int
    alpha: float
    support: int
    own: Table
    other: Table
    realised_epsilon: float
    mean_own: float
    mean_other: float
    var_own: float
    var_other: float
    tv_per_draw: float

    @property
    def values(self) -> np.ndarray:
        """The report value of each table cell: -T..T."""
        return np.arange(-self.support, self.support + 1, dtype=np.int64)


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _geometric_masses(start: int, numerator: int, shift: int, count: int) -> list[int]:
    """start, ⌈α start⌉, ⌈α ⌈α start⌉⌉, ...: ``count`` terms, α = numerator / 2^shift."""
    out = [start]
    for _ in range(count - 1):
        out.append(_ceil_div(out[-1] * numerator, 1 << shift))
    return out


def _moments(masses: list[int], support: int) -> tuple[Fraction, Fraction]:
    first = sum((i - support) * m for i, m in enumerate(masses))
    second = sum((i - support) ** 2 * m for i, m in enumerate(masses))
    mean = Fraction(first, TOTAL)
    return mean, Fraction(second, TOTAL) - mean * mean


def _largest_ratio(a: list[int], b: list[int]) -> Fraction:
    best = Fraction(a[0], b[0])
    for x, y in zip(a, b, strict=True):
        if x * best.denominator > best.numerator * y:
            best = Fraction(x, y)
    return best


def grid_ratio(epsilon: float, grid: int) -> tuple[float, int, int]:
    """α = e^{-ε/(2s)} rounded up to a float64 (widened by ALPHA_MARGIN), so α^{2s} >= e^{-ε}.

    Returns α and its exact form numerator / 2^shift (α is a float in (1/2, 1)).
    """
    alpha = math.exp(-epsilon / (2 * grid)) * (1 + ALPHA_MARGIN)
    if not 0.5 < alpha < 1.0:
        raise AssertionError(f"alpha = {alpha} outside (1/2, 1)")
    numerator, denominator = alpha.as_integer_ratio()
    return alpha, numerator, denominator.bit_length() - 1


def tail_window(alpha: float) -> int:
    """W = ⌈TAIL_BITS ln 2 / ln(1/α)⌉: P(Z > W) = α^{W+1}/(1+α) < 2^-TAIL_BITS."""
    return math.ceil(TAIL_BITS * math.log(2) / -math.log(alpha))


@cache
def histogram_noise(epsilon: float) -> HistogramNoise:
    """Build (once per ε) the exact tables of SHE; see the module docstring."""
    s = max(1, math.ceil(GRID_PER_EPSILON * epsilon))
    alpha, numerator, shift = grid_ratio(epsilon, s)
    denominator = 1 << shift
    window = tail_window(alpha)
    support = s + window

    # untruncated masses of |z| = 0 .. T + s - 1, and the folded tails F(T - s) .. F(T + s)
    # from F(0) = ⌈2^128/(1+α)⌉ by the same recursion (F(j) >= 2^128 α^j/(1+α) by induction)
    inner = _geometric_masses(
        _ceil_div(TOTAL * (denominator - numerator), denominator + numerator),
        numerator,
        shift,
        support + s,
    )
    tail = _geometric_masses(
        _ceil_div(TOTAL * denominator, denominator + numerator), numerator, shift, support + s + 1
    )[support - s :]
    k = range(-support, support + 1)
    other = [tail[s] if abs(i) == support else inner[abs(i)] for i in k]
    own = [inner[abs(i - s)] if abs(i) < support else 0 for i in k]
    own[-1], own[0] = tail[0], tail[2 * s]  # F(T - s) at T, F(T + s) at -T
    for masses, mode in ((other, support), (own, support + s)):
        excess = sum(masses) - TOTAL
        if not 0 <= excess < masses[mode] // 2:
            raise AssertionError(f"table excess {excess} out of range")
        masses[mode] -= excess

    # float(Fraction) is correctly rounded, so each log is within an ulp of ε/2
    realised_epsilon = math.log(float(_largest_ratio(own, other))) + math.log(
        float(_largest_ratio(other, own))
    )
    if not realised_epsilon <= epsilon:
        raise AssertionError(f"SHE tables realise ε = {realised_epsilon} > {epsilon}")
    mean_own, var_own = _moments(own, support)
    mean_other, var_other = _moments(other, support)
    # tails cut by the clamp, plus the ceil errors (< 1/(1-α) units per cell)
    tv = 2 * alpha ** (window + 1) / (1 + alpha) + (2 * support + 1) / ((1 - alpha) * TOTAL)
    return HistogramNoise(
        epsilon=epsilon,
        grid=s,
        alpha=alpha,
        support=support,
        own=Table.build(own),
        other=Table.build(other),
        realised_epsilon=realised_epsilon,
        mean_own=float(mean_own),
        mean_other=float(mean_other),
        var_own=float(var_own),
        var_other=float(var_other),
        tv_per_draw=tv,
    )


@dataclass(frozen=True, eq=False)
class ShiftedNoise:
    """Exact discrete Laplace noise for a signal k in [-s, s]: the report clamp(k + Z, -T, T).

    Z is drawn from one table over [-M, M], M = T + s; see :func:`shifted_noise`.

    Attributes
    ----------
    epsilon : float
        The budget: any two signals in [-s, s] (L1 distance <= 2s) are ε-indistinguishable.
    grid : int
        s, the largest |signal|.
    alpha : float
        α, the discrete Laplace ratio (α^{2s} >= e^{-ε}).
    support : int
        T: reports lie in [-T, T].
    table : Table
        The pmf of Z over [-M, M] (cell i is z = i - M).
    realised_epsilon : float
        max over reports r of ln(max_k P(r|k) / min_k P(r|k)), from the integer masses (<= ε).
    variance : float
        Var(Z) of the table, exact (E[Z] = 0 by symmetry).
    clamp_bias, clamp_variance : float
        Bounds on |E[clamp(k+Z)] - k| and |Var(clamp(k+Z)) - Var(Z)| over every k in
        [-s, s], computed exactly from the masses (below 2^-80 relative).
    tv_per_draw : float
        Bound on the total variation distance between the law of a report and the law of
        k + Z for the untruncated discrete Laplace Z the sampled engines sum.
    """

    epsilon: float
    grid: int
    alpha: float
    support: int
    table: Table
    realised_epsilon: float
    variance: float
    clamp_bias: float
    clamp_variance: float
    tv_per_draw: float

    @property
    def reach(self) -> int:
        """M = T + s: the table of Z covers [-M, M]."""
        return self.support + self.grid

    def draw(self, signal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """clamp(k + Z, -T, T) for each integer k in ``signal`` (int64, |k| <= s)."""
        noise = self.table.draw(rng, signal.shape[0]) - self.reach
        return np.clip(signal + noise, -self.support, self.support)

    def upper_tail(self, a: int) -> float:
        """P(Z >= a), exactly rounded from the integer masses."""
        return sum(self.table.masses[self.reach + a :]) / TOTAL


@cache
def shifted_noise(epsilon: float, grid: int) -> ShiftedNoise:
    """Build (once per ε and s) the exact table of Z for signals k in [-s, s].

    The signal is any integer in [-s, s], so the sensitivity is 2s grid steps and α^{2s} >=
    e^{-ε} (:func:`grid_ratio`).  Z's masses over [-M, M], M = T + s, T = s + W
    (:func:`tail_window`), are the ceil recursion m(0) = ⌈2^128 (1-α)/(1+α)⌉, m(j) =
    ⌈α m(j-1)⌉ for |z| = j < M (so m(j+t) >= α^t m(j)), and at ±M the folded tail
    F(M) = ⌈α m(M-1)/(1-α)⌉; the excess over 2^128 is taken from m(0).

    The report clamp(k + Z, -T, T) has P(r|k) = m(|r-k|) inside (|r-k| <= M-1) and the tail
    sum G(T-k) = Σ_{z >= T-k} P(z) at T (G(T+k) at -T).  The choice of F(M) makes
    (1-α) G(a+1) >= α m(a) for every a (by induction down from a = M-1, using m(a) >=
    α m(a-1)), i.e. G(a+1) >= α G(a): so every ratio P(r|k)/P(r|k'), inside or at the
    ends, is within [α^{|k-k'|}, α^{-|k-k'|}].  The realised loss is then computed from the
    integers: the masses are checked non-increasing in |z| < M, so for |r| < T the extremes
    over k are m(max(0, |r|-s)) and m(|r|+s), and at ±T they are G(T-s) and G(T+s).
    """
    s = grid
    alpha, numerator, shift = grid_ratio(epsilon, s)
    denominator = 1 << shift
    window = tail_window(alpha)
    support = s + window
    reach = support + s
    inner = _geometric_masses(
        _ceil_div(TOTAL * (denominator - numerator), denominator + numerator),
        numerator,
        shift,
        reach,
    )  # m(0) .. m(M-1)
    folded = _ceil_div(inner[-1] * numerator, denominator - numerator)  # F(M)
    half = inner[1:] + [folded]  # |z| = 1 .. M
    excess = 2 * sum(half) + inner[0] - TOTAL
    if not 0 <= excess < (inner[0] - inner[1]) // 2:
        raise AssertionError(f"table excess {excess} out of range")
    inner[0] -= excess
    masses = half[::-1] + [inner[0]] + half
    if any(a < b for a, b in zip(inner, inner[1:], strict=False)) or inner[-1] < 1:
        raise AssertionError("the masses are not positive and non-increasing in |z|")

    # tail sums G(a) = P(Z >= a) for a = T - s .. T + s = M
    tails = list(np.cumsum(np.array(half[::-1][: 2 * s + 1], dtype=object)))[::-1]
    near = [inner[max(0, r - s)] for r in range(support)] + [tails[0]]
    far = [inner[r + s] for r in range(support)] + [tails[-1]]
    realised_epsilon = math.log(float(_largest_ratio(near, far)))
    if not realised_epsilon <= epsilon:
        raise AssertionError(f"tables realise ε = {realised_epsilon} > {epsilon}")

    # exact moments: Var(Z), and what the clamp can change (only where |Z| > W)
    second = 2 * sum(j * j * m for j, m in enumerate(half, start=1))
    outer = half[window:]  # |z| = W + 1 .. M
    first_out = 2 * sum(j * m for j, m in enumerate(outer, start=window + 1))
    second_out = 2 * sum(j * j * m for j, m in enumerate(outer, start=window + 1))
    variance = Fraction(second, TOTAL)
    bias = Fraction(first_out, TOTAL)
    clamp_variance = Fraction(second_out, TOTAL) + bias * bias
    if not clamp_variance <= variance * Fraction(1, 1 << 80):
        raise AssertionError("the clamp moves the variance by more than 2^-80")
    # clamp active only when |Z| > W, plus the table's excess over the ideal pmf: < 1/(1-α)
    # units per cell inside, the folded cells α^{M+1}/(1+α) + α/(1-α)² + 1 units above it
    tv = (
        2 * alpha ** (window + 1) / (1 + alpha)
        + 2 * alpha ** (reach + 1) / (1 + alpha)
        + ((2 * reach - 1) / (1 - alpha) + 2 * (alpha / (1 - alpha) ** 2 + 1)) / TOTAL
    )
    return ShiftedNoise(
        epsilon=epsilon,
        grid=s,
        alpha=alpha,
        support=support,
        table=Table.build(masses),
        realised_epsilon=realised_epsilon,
        variance=float(variance),
        clamp_bias=float(bias),
        clamp_variance=float(clamp_variance),
        tv_per_draw=tv,
    )
