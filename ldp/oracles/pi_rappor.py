"""PI-RAPPOR: asymmetric RAPPOR compressed to a seed of a pairwise-independent hash family.

``[FT21]`` is V. Feldman, K. Talwar, *Lossless Compression of Efficient Private Local
Randomizers*, ICML 2021 (arXiv:2102.12099), its frequency-estimation algorithm PI-RAPPOR;
``[FNNT22]`` is V. Feldman, J. Nelson, H. Nguyen, K. Talwar, *Private Frequency Estimation
via Projective Geometry*, ICML 2022 (arXiv:2203.00194), whose C++ code has the PI-RAPPOR
client and decoder measured in ``benchmarks/decode_reference.py``.

Asymmetric RAPPOR (OUE, [FO] "Optimized UE") reports d bits: the user's own bit is 1 with
probability 1/2, every other bit with probability 1/(e^ε + 1), independently.  Only the
*pairwise* independence of the bits matters for the variance of one value's estimate, so
[FT21] replaces the d independent bits by the indicator of a random hyperplane of a finite
field, which the user sends as a seed of O(log d) bits.

Field and embedding.  q is a prime near e^ε + 1 (the variance below is smallest at
q = e^ε + 1, as OLH's at g = e^ε + 1); by default the prime just below or just above
e^ε + 1 whose exact variance is smaller.  t is the least integer with q^t >= d + 1, and
value x is the nonzero vector v(x) of F_q^t whose digits are those of x + 1 in base q
(digit i the coefficient of q^i).

Client.  The report is a hash h_{a,b}(v) = <a, v> + b (mod q) of the pairwise-independent
family {h_{a,b} : a in F_q^t, b in F_q}, sent as the seed y = b + q (a_0 + a_1 q + ... )
in [0, q^(t+1)); the set of "ones" of the report is the hyperplane S_y = {v : h_{a,b}(v) = 0}.
The user draws a uniformly, then z = 0 with probability p and z uniform on the q - 1
nonzero residues otherwise, and sets b = z - <a, v(x)>: so v(x) is in S_y exactly when
z = 0.  Hence Pr[y | x] = q^-t p if v(x) is in S_y, q^-t (1 - p)/(q - 1) if not: the ratio
is p (q - 1)/(1 - p), and p = e^ε/(e^ε + q - 1) spends exactly ε.  (With q = e^ε + 1, p is
1/2: asymmetric RAPPOR's own bit.  The authors' code fixes p = 1/2 and rounds q down.)

Support.  For another value x', <a, v(x') - v(x)> is uniform on F_q and independent of z
(a is uniform and v(x') - v(x) != 0), so v(x') is in S_y with probability exactly 1/q.  In
the pure framework ([FO] "Method") p* = p, q* = 1/q, and each value's count of supporting
reports is a sum of independent Bernoulli variables over the users, so the estimator and
its exact variance are the framework's:

    ĉ(x) = (I_x - n/q)/(p - 1/q),
    Var[ĉ(x)] = (n - n_x)(1/q)(1 - 1/q)/(p - 1/q)² + n_x p (1 - p)/(p - 1/q)²,

which at q = e^ε + 1 is OUE's n 4e^ε/(e^ε - 1)² + n_x exactly ([FT21]'s claim: PI-RAPPOR
has asymmetric RAPPOR's variance; with the prime nearest e^ε + 1 the first term is within
a factor (e^ε + q - 1)²/(4 e^ε (q - 1)) of it, 1.000002 at ε = 5 with q = 149).

Decoding.  A report supports x when (b + Σ_i a_i v_i(x)) mod q = 0: an affine condition on
v(x).  For all of the domain at once, each report's hyperplane is enumerated: with a_j the
last nonzero coefficient, v_j = -(b + Σ_{i<j} a_i v_i)/a_j for each of the q^(t-1) choices
of the other digits; the q^(t-1) points of each report are counted with one ``bincount``
per chunk of reports, O(n q^(t-1)) = O(n d/q) in all (the [FNNT22] code loops over n x d
pairs).  For a few candidates, the condition is evaluated per (report, candidate) instead.

Sampled engine (approximate, named).  Each candidate's estimate is drawn from its exact
law, I_x ~ Bin(n_x, p) + Bin(n - n_x, 1/q), independently over the candidates.  The
marginals are exact; the joint law is not: a user's indicators of two other values x', x''
are dependent when v(x), v(x'), v(x'') are collinear (then both hold only if z = 0), which
adds (p q - 1)/q² to the covariance of ĉ(x') and ĉ(x'') (times (p - 1/q)^-2) for each such
user.  Drawing every user's hyperplane would be exact but cost as much as the reports
engine.  ``tests/oracles/test_pi_rappor.py`` measures that covariance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ldp import budget, theory
from ldp.algebra import inverse_mod, is_prime
from ldp.contract import Capabilities
from ldp.hashing import HAVE_NUMBA, numba
from ldp.oracles import exact
from ldp.oracles.base import PureOracle
from ldp.registry import register
from ldp.validation import ParameterError, check_generator, check_int, check_values

#: The largest seed space q^(t+1) a report may have (an int64 seed, with room to add).
MAX_SEEDS = 2**62
#: The largest prime q considered: above it, q^2 would not fit a seed.
MAX_PRIME = 2**31 - 1
#: Elements of the (reports x points) arrays the decoder holds at once.
DECODE_CHUNK = 1 << 23


def ideal_variance(epsilon: float, q: int) -> float:
    """Var[ĉ(x)]/n at n_x = 0: (1/q)(1 - 1/q)/(p - 1/q)², p = e^ε/(e^ε + q - 1)."""
    e = math.exp(epsilon)
    p = e / (e + q - 1)
    return (1 / q) * (1 - 1 / q) / (p - 1 / q) ** 2


def default_prime(epsilon: float) -> int:
    """The prime just below or just above e^ε + 1 (at most ``MAX_PRIME``) whose exact
    variance is smaller (below on a tie)."""
    target = min(math.exp(epsilon) + 1.0, float(MAX_PRIME))
    below = max(2, math.floor(target))
    while not is_prime(below):
        below -= 1
    above = max(2, math.ceil(target))
    while above <= MAX_PRIME and not is_prime(above):
        above += 1
    choices = [below] + ([above] if above <= MAX_PRIME and above != below else [])
    return min(choices, key=lambda q: (ideal_variance(epsilon, q), q))


def digits(values: np.ndarray, q: int, t: int) -> np.ndarray:
    """The t base-q digits of each value, least significant first: shape (n, t), int64."""
    out = np.empty((values.shape[0], t), dtype=np.int64)
    rest = np.asarray(values, dtype=np.int64).copy()
    for i in range(t):
        out[:, i] = rest % q
        rest //= q
    return out


def hyperplane_counts(
    a: np.ndarray, b: np.ndarray, q: int, size: int, *, use_numba: bool = True
) -> np.ndarray:
    """For every point v of F_q^t with index Σ v_i q^i < ``size``, how many of the
    hyperplanes b_r + Σ_i a_ri v_i = 0 (mod q) contain it (int64, length ``size``).

    Recursion on the top digit j = t - 1: the hyperplanes with a_rj = 0 are cylinders over
    v_j (their counts over the other digits, repeated for each v_j); each of the others
    meets every choice of the lower digits in the single v_j = -(b_r + Σ_{i<j} a_ri v_i)/a_rj,
    so its q^(t-1) points are listed with one broadcast sum and one ``bincount``.
    """
    n, t = a.shape
    if t == 0:
        return np.full(size, np.count_nonzero(b % q == 0), dtype=np.int64)
    low = q ** (t - 1)  # points per value of the top digit
    tops = -(-size // low)  # values of the top digit that reach below `size`
    counts = np.zeros(tops * low, dtype=np.int64)
    flat = a[:, t - 1] == 0
    if flat.any():
        below = hyperplane_counts(a[flat, : t - 1], b[flat], q, low, use_numba=use_numba)
        counts += np.tile(below, tops)
    lead = ~flat
    if lead.any():
        scale = q - inverse_mod(a[lead, t - 1], q)  # -1/a_j mod q (in [1, q - 1])
        coefficients = a[lead, : t - 1] * scale[:, None] % q  # v_j = Σ c_i v_i + c_b
        offsets = b[lead] * scale % q
        counts += _pivot_counts(coefficients, offsets, q, low, tops * low, use_numba)
    return counts[:size]


def _pivot_counts(
    coefficients: np.ndarray,
    offsets: np.ndarray,
    q: int,
    low: int,
    size: int,
    use_numba: bool = True,
) -> np.ndarray:
    """Counts of the points (v_<j, v_j = (c_b + Σ c_i v_i) mod q) over every v_<j.

    The lower digits split in two halves, so Σ c_i v_i is one broadcast sum of two small
    tables (each entry in [0, q)); ``top[s]`` = (s mod q) q^(t-1) turns a sum s in
    [0, 2q - 1) into the index of its top digit.  With numba a compiled loop adds the same
    points one by one instead (no n x q^(t-1) temporaries); ``use_numba=False`` forces numpy.
    """
    n, width = coefficients.shape
    split = width // 2
    grids = [
        digits(np.arange(q**split), q, split).T,
        digits(np.arange(q ** (width - split)), q, width - split).T,
    ]
    if HAVE_NUMBA and use_numba:
        tops = -(-size // low)  # top digits that reach below `size`
        transposed = np.zeros(low * tops, dtype=np.int64)  # index (lower digits) tops + v_j
        rows = max(1, DECODE_CHUNK // (grids[0].shape[1] + grids[1].shape[1]))
        for start in range(0, n, rows):
            c = coefficients[start : start + rows]
            first = c[:, :split] @ grids[0] % q  # (r, q^split): Σ over the low half
            second = (c[:, split:] @ grids[1] + offsets[start : start + rows, None]) % q
            _add_points(first, second, q, tops, transposed)
        return transposed.reshape(low, tops).T.reshape(-1)[:size].copy()
    top = (np.arange(2 * q - 1) % q) * low
    rest = np.arange(low, dtype=np.int64).reshape(q ** (width - split), q**split)
    counts = np.zeros(size, dtype=np.int64)
    rows = max(1, DECODE_CHUNK // low)
    for start in range(0, n, rows):
        c = coefficients[start : start + rows]
        first = c[:, :split] @ grids[0] % q
        second = (c[:, split:] @ grids[1] + offsets[start : start + rows, None]) % q
        index = top[second[:, :, None] + first[:, None, :]]
        index += rest
        flat = index.reshape(-1)
        if size < q * low:
            flat = flat[flat < size]
        counts += np.bincount(flat, minlength=size)
    return counts


if HAVE_NUMBA:

    @numba.njit(cache=True, nogil=True)
    def _add_points(first, second, q, tops, transposed):  # pragma: no cover (compiled)
        """transposed[(h w + l) tops + s] += 1, s = (second[r, h] + first[r, l]) mod q, for
        every report r and lower-digit halves (h, l) with s < tops (w = first.shape[1]).

        The top digit s is the fastest-moving index and h the outer loop, so the reports
        of a chunk all add into one window of w tops counts (178 KB at q = 149), which stays
        in cache; the natural order (s the slowest) scattered every addition over the
        whole table and ran 20x slower."""
        width = first.shape[1]
        for h in range(second.shape[1]):
            row = h * width
            for r in range(first.shape[0]):
                base = second[r, h]
                for low_half in range(width):
                    s = base + first[r, low_half]
                    if s >= q:
                        s -= q
                    if s < tops:
                        transposed[(row + low_half) * tops + s] += 1


@register(label="PI-RAPPOR", color="#b15928", order=86)
@dataclass(frozen=True, kw_only=True)
class PIRAPPOR(PureOracle):
    """PI-RAPPOR ([FT21]): a seed of h_{a,b}(v) = <a, v> + b over F_q, q ≈ e^ε + 1.

    Parameters
    ----------
    epsilon, domain_size :
        As every oracle.
    q : int, optional
        The prime field's order; default the prime beside e^ε + 1 with the smaller exact
        variance (:func:`default_prime`).  Any prime is ε-LDP (p adapts to it).

    Reports are int64 seeds in [0, q^(t+1)).  The variance is the pure framework's, exact;
    the sampled engine has exact marginals but independent candidates (see the module).
    """

    name = "PIRAPPOR"
    capabilities: ClassVar[Capabilities] = Capabilities(
        sampled="approximate", report_model="categorical"
    )
    q: int | None = None
    _keep: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.q is None:
            object.__setattr__(self, "q", default_prime(self.epsilon))
        q = check_int(self.q, "q", minimum=2, maximum=MAX_PRIME)
        if not is_prime(q):
            raise ParameterError("q", q, "a prime")
        object.__setattr__(self, "q", q)
        if q ** (self.dimension + 1) > MAX_SEEDS:
            raise ParameterError(
                "domain_size",
                self.domain_size,
                f"small enough that q^(t+1) <= 2^62 with q = {q}",
                detail=f"a seed would need {q ** (self.dimension + 1):.3g} values",
            )
        e = math.exp(self.epsilon)
        keep, other = e / (e + q - 1), (q - 1) / (e + q - 1)
        exact.check_representable(
            self.name,
            self.epsilon,
            min(keep, other),
            largest_safe=math.log(q - 1) + exact.LOG_GRID,
        )
        object.__setattr__(self, "_keep", exact.threshold(keep, other, round_down=True))

    # --- the field -----------------------------------------------------------------------
    @property
    def dimension(self) -> int:
        """t: the least integer with q^t >= d + 1 (the nonzero vectors code the values)."""
        t, size = 1, self.q
        while size < self.domain_size + 1:
            t, size = t + 1, size * self.q
        return t

    @property
    def seeds(self) -> int:
        """q^(t+1), the number of possible reports (a in F_q^t, b in F_q)."""
        return self.q ** (self.dimension + 1)

    @property
    def p_star(self) -> float:
        """p: the realised probability that the user's own point is on the hyperplane,
        <= e^ε/(e^ε + q - 1)."""
        return exact.realised(self._keep)

    @property
    def q_star(self) -> float:
        """1/q: any other value's point is on the hyperplane with this probability."""
        return 1.0 / self.q

    def point_of(self, values: np.ndarray) -> np.ndarray:
        """v(x): the base-q digits of x + 1, shape (n, t), least significant first."""
        return digits(np.asarray(values, dtype=np.int64) + 1, self.q, self.dimension)

    def split(self, reports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) of each seed y = b + q (Σ a_i q^i): a of shape (n, t), b of shape (n,)."""
        reports = np.asarray(reports, dtype=np.int64)
        return digits(reports // self.q, self.q, self.dimension), reports % self.q

    def supports(self, reports: np.ndarray, value: int) -> np.ndarray:
        """Whether each report's hyperplane holds v(value): (b + <a, v>) mod q == 0."""
        a, b = self.split(reports)
        point = self.point_of(np.array([value]))[0]
        return (a @ point + b) % self.q == 0

    def report_bits(self) -> int:
        """⌈log2 q^(t+1)⌉ bits: the seed."""
        return (self.seeds - 1).bit_length()

    def report_bytes(self, n_users: int) -> int:
        """8 n bytes (int64 seeds)."""
        return 8 * n_users

    def working_bytes(self, n_users: int) -> int:
        """The seeds, the users' digits and points (t + 1 int64 each, twice) and coins."""
        return 8 * n_users * (2 * self.dimension + 6)

    # --- client --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Seeds y = b + q a: a uniform in F_q^t, b = z - <a, v(x)>, z = 0 with p* else
        uniform on the q - 1 nonzero residues (int64)."""
        values = check_values(values, self.domain_size).astype(np.int64, copy=False)
        rng = check_generator(rng)
        n, q, t = values.shape[0], self.q, self.dimension
        self.check_report_size(n)
        a_index = rng.integers(0, q**t, size=n, dtype=np.int64)
        dot = np.einsum("ij,ij->i", digits(a_index, q, t), self.point_of(values)) % q
        keep = exact.bernoulli(rng, self._keep, n)
        z = np.where(keep, 0, rng.integers(1, q, size=n, dtype=np.int64))
        return (z - dot) % q + q * a_index

    def report_probabilities(self, value: int) -> np.ndarray:
        """Pr[y | value] for every seed y: q^-t p* on the hyperplanes through v(value),
        q^-t (1 - p*)/(q - 1) on the others."""
        value = self.check_value(value)
        q, t = self.q, self.dimension
        budget.check_memory(
            "q",
            q,
            "smaller (or a smaller domain_size) to enumerate every seed",
            8 * self.seeds * (t + 4),
            f"report_probabilities over the q^(t+1) = {self.seeds} seeds",
        )
        inside = self.supports(np.arange(self.seeds, dtype=np.int64), value)
        return np.where(inside, self.p_star, (1.0 - self.p_star) / (q - 1)) / q**t

    def audit_events(self, v: int, v_prime: int) -> list:
        """v(v) on the hyperplane and v(v') off it, and the reverse: ratio e^ε each."""
        from ldp.audit import Event  # ldp.audit imports the oracles

        def only(a: int, c: int):
            return lambda y: self.supports(y, a) & ~self.supports(y, c)

        return [
            Event(f"v({v}) in S_y, v({v_prime}) not", only(v, v_prime), +1),
            Event(f"v({v_prime}) in S_y, v({v}) not", only(v_prime, v), -1),
        ]

    def audit_event_probabilities(self) -> tuple[float, float]:
        """P(v(0) in S_y, v(1) not | 0) = p*(1 - 1/q) and given 1: (1 - p*)/q (the other
        value's point is on the hyperplane with 1/q, independently of the user's own)."""
        q = self.q
        return self.p_star * (1 - 1 / q), (1.0 - self.p_star) / q

    # --- server --------------------------------------------------------------------------
    def _check_reports(self, reports: np.ndarray) -> np.ndarray:
        return check_values(reports, self.seeds, name="reports")

    def n_reports(self, reports: np.ndarray) -> int:
        return int(self._check_reports(reports).shape[0])

    def support_counts(self, reports: np.ndarray, candidates: np.ndarray) -> np.ndarray:
        """I_x: the reports whose hyperplane holds v(x), for each candidate.

        All of the domain by enumerating each report's q^(t-1) points
        (:func:`hyperplane_counts`) when that is cheaper than n x |candidates| x t
        evaluations of the affine condition, else the condition per candidate.
        """
        reports = self._check_reports(reports)
        a, b = self.split(reports)
        q, t = self.q, self.dimension
        n, m = reports.shape[0], candidates.shape[0]
        direct = m * t <= 2 * q ** (t - 1)
        budget.check_operations(
            "candidates",
            f"{m} candidates",
            "fewer (or fewer reports per estimate)",
            float(n) * (m * t if direct else q ** (t - 1)),
            f"PI-RAPPOR's support of {m} candidates in {n} reports",
        )
        if direct:
            points = self.point_of(candidates)
            counts = np.zeros(m, dtype=np.int64)
            rows = max(1, DECODE_CHUNK // max(m, 1))
            for start in range(0, reports.shape[0], rows):
                hits = (a[start : start + rows] @ points.T + b[start : start + rows, None]) % q
                counts += np.count_nonzero(hits == 0, axis=0)
            return counts
        top = int(candidates.max()) + 2 if m else 1  # points 1 .. max + 1
        budget.check_memory(
            "domain_size",
            self.domain_size,
            "smaller, or pass fewer candidates",
            8 * (top + 4 * min(DECODE_CHUNK, reports.shape[0] * q ** (t - 1))),
            "PI-RAPPOR's decoding tables",
        )
        counts = hyperplane_counts(a, b, q, top)
        return counts[candidates + 1]

    # --- sampled engine ------------------------------------------------------------------
    def _simulate_counts(
        self, candidate_counts: np.ndarray, n_users: int, rng: np.random.Generator
    ) -> np.ndarray:
        """I_x ~ Bin(n_x, p*) + Bin(n - n_x, 1/q), independently over the candidates.

        Approximate (declared ``sampled="approximate"``): each candidate's law is exact,
        their independence is not (collinear points, see the module).
        """
        counts, n = candidate_counts, n_users
        support = rng.binomial(counts, self.p_star) + rng.binomial(n - counts, self.q_star)
        return theory.pure_estimate(support, n, self.p_star, self.q_star)
