"""A refined model of PEM's identification probability: prefixes compete with real prefixes.

[PEM] is Wang, Li, Jha, *Locally Differentially Private Heavy Hitter Identification*.
Eq. (5) (:func:`ldp.theory.pem.identification_probability`, kept as the paper's model)
takes the N[i] = |D_i| - |C_i| other candidates of step i to have frequency 0 and the
top values to be ranked in order.  With many short rounds (Fig. 3a at g >= 4, Fig. 8b
at η <= 4) the candidates of a step are extensions of the previous step's frequent
prefixes, and the extensions of frequent prefixes are frequent: the model is then
optimistic.  This model replaces both assumptions by the distribution's own prefix
frequencies (the true histogram, or any assumed one given as values and counts):

* every prefix c of length ℓ_i with frequency F_c > 0 is a candidate of step i with
  probability a_c = π_{i-1}(parent(c)) (1 at step 1, where D_1 holds every prefix),
  where π_{i-1} is the same model's probability that the parent survived step i-1;
  the rest of D_i, |D_i| - Σ_c a_c candidates in expectation, have frequency 0;
* C_{i-1} has exactly |C_{i-1}| members, so the presences are dependent: given that c's
  parent was kept, exactly |C_{i-1}| - 1 other parents were (if v_16's prefix survived,
  v_17's more likely did not).  C_{i-1} is modelled as a conditional Poisson sample
  (the maximum-entropy fixed-size design with the marginals π_{i-1}; Chen, Dempster and
  Liu, Biometrika 1994): independent Bernoulli(r_j/(1 + r_j)) draws conditioned on their
  number.  Given c's parent, the other parents of the ``heavy`` prefixes are drawn so,
  jointly with the remaining (binned) parents, conditioned on filling the remaining
  slots exactly; siblings of c are present with it;
* given their presence, the supports I_c are independent normals with the paper's
  mean n[i] p_c and variance n[i] p_c (1 - p_c), p_c = p* F_c + q* (1 - F_c) (Sec. IV-B3);
* prefix c is kept iff fewer than |C_i| of the other present candidates have a larger
  support: P(kept | I_c = x) = P(Σ_{c'} B_{c'}(x) + Bin(N_0, S_0(x)) < |C_i|), with
  B_{c'}(x) ~ Bernoulli(a_{c'} P(I_{c'} > x)) and S_0 the zero-frequency survival.
  The count's law is computed exactly for the ``heavy`` most frequent prefixes (a
  Poisson-binomial, truncated at |C_i|) and as a Poisson law for the others (binned by
  frequency; each of them is rarely above x), and x is integrated over I_c's normal law
  by Gauss-Hermite quadrature;
* π_i(c) = a_c P(kept | present).  The lighter prefixes, which only matter as the
  next step's competitors, use the expected-count threshold T with
  Σ_{c'} a_{c'} P(I_{c'} > T) + N_0 S_0(T) = |C_i| instead: π_i(c) = a_c P(I_c > T).

The identification probability of a value is π_g of its m-bit prefix; the F1 (or NCR)
model is Eq. (4) with it.  Remaining approximations: normal supports, the kept set's
dependence reduced to the conditional Poisson design, presence independent of the
current supports, expected N_0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy import optimize, special

from ldp import bits
from ldp.theory.pem import Goal, PEMConfig, olh_pq, utility_weights
from ldp.validation import check_epsilon, check_int

__all__ = ["refined_identification", "refined_utility"]

#: Gauss-Hermite nodes of the integral over a candidate's own support.
NODES = 24
#: Frequency bins of the light prefixes' Poisson pool.
BINS = 64
#: Newton steps and tolerance (on the inclusion probabilities) of fitting C_{i-1}'s design.
FIT_STEPS, FIT_TOLERANCE = 100, 1e-9


def _survival(x: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """P(N(mean, sd^2) > x)."""
    return special.ndtr((mean - x) / sd)


def _binomial_pmf(counts: np.ndarray, trials: float, p: np.ndarray) -> np.ndarray:
    """Bin(trials, p) pmf at ``counts`` (last axis), in logs (safe at p = 0 or 1)."""
    log = (
        special.gammaln(trials + 1)
        - special.gammaln(counts + 1)
        - special.gammaln(np.maximum(trials - counts, 0) + 1)
        + special.xlogy(counts, p)
        + special.xlog1py(trials - counts, -p)
    )
    return np.where(counts <= trials, np.exp(log), 0.0)


def _poisson_pmf(counts: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Poisson(rate) pmf at ``counts`` (last axis), in logs (safe at rate = 0)."""
    return np.exp(special.xlogy(counts, rate) - rate - special.gammaln(counts + 1))


def _truncated_add(pmf: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The pmf of count + Bernoulli(p), truncated to the same K states (last axis)."""
    p = p[..., None]
    out = pmf * (1 - p)
    moved = pmf[..., :-1] * p
    out[..., 1:] += moved
    return out


def _truncated_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The pmf of the sum of two independent counts, truncated to K states (last axis):
    out_l = Σ_{j<=l} a_j b_{l-j}, l < K, summed directly (no FFT: its absolute rounding
    error would swamp the small coefficients, whose ratios are read)."""
    size = a.shape[-1]
    if a.ndim == b.ndim == 1:
        return np.convolve(a, b)[:size]  # numpy's convolve is the direct sum
    # b with K - 1 leading zeros; its sliding windows are the Toeplitz matrix
    # window[..., l, i] = padded[..., l + i] = b[..., l - j] at j = K - 1 - i (0 if j > l),
    # so out_l = Σ_i window[..., l, i] a[..., K - 1 - i]: one batched matrix-vector product
    # (matmul broadcasts a's and b's leading axes).  The window is a strided view: matmul
    # reads it in place (not BLAS-aligned), so the memory is the padded copy of b, not K b.
    padded = np.zeros((*b.shape[:-1], 2 * size - 1))
    padded[..., size - 1 :] = b
    window = sliding_window_view(padded, size, axis=-1)
    return np.matmul(window, a[..., ::-1, None])[..., 0]


def _exclusive_products(factors: np.ndarray) -> np.ndarray:
    """Along the items' axis (-2): the truncated product of the factors before each item
    (a Hillis-Steele scan, log2(items) rounds), each row scaled to a largest coefficient
    of 1 (only ratios of one polynomial's coefficients are read)."""
    scan = factors.copy()
    shift = 1
    while shift < scan.shape[-2]:
        product = _truncated_convolve(scan[..., :-shift, :], scan[..., shift:, :])
        scan[..., shift:, :] = product / product.max(axis=-1, keepdims=True)
        shift *= 2
    out = np.zeros_like(scan)
    out[..., 0, 0] = 1.0
    out[..., 1:, :] = scan[..., :-1, :]
    return out


def _binomial_series(odds: np.ndarray, power: np.ndarray, size: int) -> np.ndarray:
    """(1 + r x)^M to degree ``size``: C(M, t) r^t (a real M's terms past M + 1 are 0)."""
    t = np.arange(1, size + 1, dtype=float)
    ratios = np.maximum(np.asarray(power)[..., None] - t + 1, 0.0) / t * odds[..., None]
    return np.concatenate([np.ones((*ratios.shape[:-1], 1)), np.cumprod(ratios, axis=-1)], -1)


class _KeptSet:
    """C_i as a conditional Poisson sample: P(S) ∝ Π_{j∈S} r_j over the sets of size K.

    Items are prefixes with marginal inclusion probabilities ``pi`` and a multiplicity
    (a bin of alike prefixes, or the zero-frequency candidates, counts as many items).
    The odds r are fitted to the marginals by Newton's steps in log odds (a few steps to
    1e-9), the inclusion probabilities computed from the design's generating polynomial
    (:meth:`inclusion`).  Items kept with probability ~1 are set aside (they are in every
    sample).
    """

    def __init__(self, pi: np.ndarray, multiplicity: np.ndarray, size: int) -> None:
        pi = np.clip(np.asarray(pi, dtype=float), 0.0, 1.0)
        self.certain = pi > 1 - 1e-9
        self.multiplicity = np.where(self.certain, 0.0, np.asarray(multiplicity, dtype=float))
        self.size = max(size - int(np.rint((multiplicity * self.certain).sum())), 0)
        target = np.where(self.certain, 0.0, pi)
        total = float((self.multiplicity * target).sum())
        if self.size > 0 and total > 0:
            target *= self.size / total  # a fixed-size design's marginals sum to its size
        target = np.minimum(target, 1 - 1e-9)
        odds = target / (1 - target)
        for _ in range(FIT_STEPS):
            fitted = self.inclusion(odds, self.multiplicity[None, :], self.size)[0]
            if np.max(np.abs(fitted - target)) < FIT_TOLERANCE:
                break
            # Newton's step in log odds with Hajek's Jacobian, diag(pi (1 - pi)) less a
            # rank one that only shifts every log odds alike: logit(target) - logit(fitted)
            fitted = np.clip(fitted, 1e-300, 1 - 1e-16)
            step = target * (1 - fitted) / (fitted * (1 - target))
            odds = odds * np.where(target > 0, step, 1.0)
        self.odds = self._scaled(odds)

    def _scaled(self, odds: np.ndarray) -> np.ndarray:
        """The odds times the constant (the design does not depend on it) that makes the
        unconditioned Bernoulli(r/(1 + r)) draw fill ``size`` slots on average, so that
        conditioning on exactly ``size`` does not underflow."""
        live = (odds > 0) & (self.multiplicity > 0)
        if self.size == 0 or not live.any():
            return odds
        log_odds = np.log(odds[live])
        many = self.multiplicity[live]

        def excess(shift: float) -> float:
            return float((many * special.expit(log_odds + shift)).sum()) - self.size

        if excess(60.0) <= 0:  # fewer live items than slots (numerically): keep as fitted
            return odds
        shift = optimize.brentq(excess, -700.0, 60.0, xtol=1e-10)
        return odds * math.exp(shift)

    @staticmethod
    def inclusion(odds: np.ndarray, multiplicity: np.ndarray, size: int) -> np.ndarray:
        """Per-item inclusion probabilities of samples of ``size`` (one row per design).

        With G(x) = Π_l (1 + r_l x)^{M_l} and H_j = G / (1 + r_j x) (one unit of item j
        left out), π_j = r_j [x^{K-1}] H_j / [x^K] G and [x^K] G = [x^K] H_j + r_j
        [x^{K-1}] H_j.  H_j is the product of the other factors, taken as prefix and
        suffix products of polynomials truncated at degree K: every coefficient is a sum of
        positive terms, so nothing cancels (the recursion of Chen, Dempster and Liu over
        k = 1..K subtracts and loses every digit once the odds span a few decades).
        """
        multiplicity = np.asarray(multiplicity, dtype=float)
        if size <= 0:
            return np.zeros(multiplicity.shape)
        odds = np.broadcast_to(np.asarray(odds, dtype=float), multiplicity.shape)
        # the design does not depend on the odds' scale: Σ M r = K keeps every coefficient
        # of a factor below K^t / t!
        total = (multiplicity * odds).sum(axis=-1, keepdims=True)
        odds = odds * (size / np.maximum(total, 1e-300))
        factors = _binomial_series(odds, multiplicity, size)
        before = _exclusive_products(factors)
        after = _exclusive_products(factors[..., ::-1, :])[..., ::-1, :]
        others = _truncated_convolve(before, after)  # every other item's factor
        rest = _truncated_convolve(others, _binomial_series(odds, multiplicity - 1, size))
        below, top = rest[..., size - 1], rest[..., size]
        kept = odds * below
        return np.divide(kept, top + kept, out=(odds > 0).astype(float), where=top + kept > 0)

    def rest_law(self, first: int, size: int) -> np.ndarray:
        """Law of how many of items ``first``, ... are in an unconditioned Bernoulli draw
        (probabilities r/(1 + r)), truncated to 0..``size``."""
        counts = np.arange(size + 1, dtype=float)
        law = np.zeros(size + 1)
        law[0] = 1.0
        chance = self.odds[first:] / (1 + self.odds[first:])
        for p, many in zip(chance, self.multiplicity[first:], strict=True):
            if many > 0 and p > 0:
                law = _truncated_convolve(law, _binomial_pmf(counts, float(many), p))
        return law

    def given(self, items: np.ndarray) -> np.ndarray:
        """P(item j kept | item i kept) for each i in ``items`` (rows) and every j."""
        items = np.asarray(items)
        multiplicity = np.repeat(self.multiplicity[None, :], len(items), axis=0)
        sure = self.certain[items]
        rows = np.flatnonzero(~sure)
        multiplicity[rows, items[rows]] -= 1  # given i, the others: a design of size K - 1
        sizes = np.where(sure, self.size, self.size - 1)
        out = np.empty(multiplicity.shape)
        for size in np.unique(sizes):
            chosen = sizes == size
            out[chosen] = self.inclusion(self.odds, np.maximum(multiplicity[chosen], 0), size)
        out[:, self.certain] = 1.0
        return out


class _Step:
    """One PEM step's candidates: prefixes with their frequency, presence, support law."""

    def __init__(
        self,
        frequencies: np.ndarray,
        presence: np.ndarray,
        n_users: float,
        domain_size: int,
        kept: int,
        p: float,
        q: float,
        heavy: int,
    ) -> None:
        self.presence, self.kept = presence, kept
        rate = p * frequencies + q * (1 - frequencies)
        self.mean = n_users * rate
        self.sd = np.sqrt(np.maximum(n_users * rate * (1 - rate), 1e-12))
        self.mean0, self.sd0 = n_users * q, math.sqrt(n_users * q * (1 - q))
        self.domain_size = float(domain_size)
        self.zeros = max(self.domain_size - float(presence.sum()), 0.0)
        self.design = None  # C_{i-1}'s design, when the heavy prefixes' presence is tied
        self.parent = None
        candidates = np.flatnonzero(presence > 0)
        order = candidates[np.argsort(-frequencies[candidates], kind="stable")]
        self.heavy, light = order[:heavy], order[heavy:]
        # the light prefixes as a pool: BINS frequency bins, each one (mean, sd, weight)
        if len(light):
            edges = np.linspace(0, len(light), min(BINS, len(light)) + 1).astype(int)
            weight = np.add.reduceat(presence[light], edges[:-1])
            mean = np.add.reduceat(presence[light] * self.mean[light], edges[:-1]) / weight
            sd = np.add.reduceat(presence[light] * self.sd[light], edges[:-1]) / weight
            self.pool = (mean, sd, weight)
        else:
            self.pool = (np.zeros(0), np.ones(0), np.zeros(0))

    def condition(self, previous: _KeptSet | None, items: np.ndarray, parent: np.ndarray) -> None:
        """Tie the heavy prefixes' presence to C_{i-1}'s fixed-size design.

        ``previous`` models C_{i-1}; its first ``len(items)`` items are the heavy prefixes'
        parents, and ``parent`` maps each heavy prefix to its parent's item.
        """
        if previous is None or len(parent) == 0:
            return
        self.design, self.parent = previous, np.asarray(parent)
        given = previous.given(np.arange(len(items)))[:, : len(items)]
        given = given[np.ix_(parent, parent)]
        given[parent[:, None] == parent[None, :]] = 1.0  # siblings share the parent
        light = np.setdiff1d(np.flatnonzero(self.presence > 0), self.heavy)
        others = given.sum(axis=1) - 1 + self.presence[light].sum()
        self.zeros_given = np.maximum(self.domain_size - 1 - others, 0.0)

    def _heavy_counts(self, x: np.ndarray) -> np.ndarray:
        """Law of the number of other heavy prefixes above x, truncated to |C_i| states.

        Without a design (step 1, or all of D_{i-1} kept) presences are independent.
        With one, C_{i-1} given c's parent is the design of one member fewer: the other
        parents are independent Bernoulli(r/(1 + r)) conditioned on filling exactly the
        remaining slots (Chen, Dempster, Liu 1994), so exactly |C_{i-1}| - 1 of them are
        present; siblings and parents kept for sure are present.
        """
        heavy, size = self.heavy, self.kept
        if self.design is None:
            pmf = np.zeros((*x.shape, size))
            pmf[..., 0] = 1.0
            for row, other in enumerate(heavy):
                above = self.presence[other] * _survival(x, self.mean[other], self.sd[other])
                above[row] = 0.0  # a prefix does not compete with itself
                pmf = _truncated_add(pmf, above)
            return pmf
        design, parent = self.design, self.parent
        items = int(parent.max()) + 1
        odds = design.odds[:items]
        certain = design.certain[:items]
        slots = design.size
        chance = odds / (1 + odds)
        joint = np.zeros((*x.shape, slots + 1, size))  # (row, node, parents present, above)
        joint[..., 0, 0] = 1.0
        present = np.zeros((len(heavy), slots + 1))  # the same without the supports
        present[:, 0] = 1.0
        for item in range(items):
            with_children = joint
            for child in np.flatnonzero(parent == item):
                above = _survival(x, self.mean[heavy[child]], self.sd[heavy[child]])
                above[child] = 0.0
                with_children = _truncated_add(with_children, above[..., None])
            sure = certain[item] | (parent == item)  # (row,): present without a slot
            if certain[item]:  # every row: present without a slot
                joint = with_children
                continue
            mixed = joint * (1 - chance[item])  # absent, or present in one more slot
            mixed[..., 1:, :] += with_children[..., :-1, :] * chance[item]
            mixed[sure] = with_children[sure]  # its own children's parent: present
            joint = mixed
            moved = present * (1 - chance[item])
            moved[:, 1:] += present[:, :-1] * chance[item]
            present = np.where(sure[:, None], present, moved)
        rest = design.rest_law(items, slots)  # the other items' presence count
        free = slots - np.where(certain[parent], 0, 1)  # slots left beside c's parent
        weights = np.zeros((len(heavy), slots + 1))
        for h in range(slots + 1):
            ok = free - h >= 0
            weights[ok, h] = rest[free[ok] - h]
        norm = np.maximum((present * weights).sum(axis=1), 1e-300)
        return np.einsum("rthk,rh->rtk", joint, weights / norm[:, None])

    def _pool_rate(self, x: np.ndarray) -> np.ndarray:
        """Expected number of light prefixes above x (the Poisson pool's mean)."""
        mean, sd, weight = self.pool
        if len(weight) == 0:
            return np.zeros_like(x)
        return (_survival(x[..., None], mean, sd) * weight).sum(axis=-1)

    def heavy_kept(self, nodes: int) -> np.ndarray:
        """P(kept | present) of each heavy prefix (exact count law over the heavy ones)."""
        size = self.kept
        t, w = np.polynomial.hermite.hermgauss(nodes)
        x = self.mean[self.heavy, None] + math.sqrt(2) * self.sd[self.heavy, None] * t  # (R, T)
        pmf = self._heavy_counts(x)
        counts = np.arange(size, dtype=float)
        pool = _poisson_pmf(counts, self._pool_rate(x)[..., None])
        zeros = self.zeros if self.design is None else self.zeros_given[:, None, None]
        zero = _binomial_pmf(counts, np.rint(zeros), _survival(x, self.mean0, self.sd0)[..., None])
        total = _truncated_convolve(_truncated_convolve(pmf, pool), zero).sum(axis=-1)
        return total @ (w / math.sqrt(math.pi))

    def threshold(self) -> float:
        """T with E[#candidates above T] = |C_i| (the light prefixes' bar)."""
        heavy = self.heavy

        def excess(x: float) -> float:
            point = np.array([x])
            above = (self.presence[heavy] * _survival(x, self.mean[heavy], self.sd[heavy])).sum()
            above += self._pool_rate(point)[0] + self.zeros * _survival(x, self.mean0, self.sd0)
            return float(above) - self.kept

        low = min(self.mean0 - 40 * self.sd0, float(self.mean.min(initial=self.mean0)))
        high = float(self.mean.max(initial=self.mean0)) + 40 * float(self.sd.max(initial=1))
        if excess(low) <= 0:  # fewer candidates than slots: all kept
            return -math.inf
        return optimize.brentq(excess, low, high, xtol=1e-6 * max(self.sd0, 1.0))

    def survive(self, nodes: int) -> np.ndarray:
        """π_i(c) = a_c P(kept | present) for every prefix."""
        pi = np.zeros_like(self.presence)
        light = np.setdiff1d(np.flatnonzero(self.presence > 0), self.heavy)
        bar = self.threshold()
        pi[light] = self.presence[light] * _survival(bar, self.mean[light], self.sd[light])
        if len(self.heavy):
            pi[self.heavy] = self.presence[self.heavy] * self.heavy_kept(nodes)
        return pi


def _kept_set(previous: tuple, parents: np.ndarray) -> tuple:
    """C_{i-1}'s design, with the given parents as its first items (then frequency-alike
    bins of the other prefixes, then the zero-frequency candidates); and each parent's item.

    None when C_{i-1} is not a fixed-size sample (its step kept all of D_{i-1}).
    """
    _, pi, zeros, domain, kept = previous
    individual, local = np.unique(parents, return_inverse=True)
    if domain <= kept:
        return None, individual, local
    others = np.setdiff1d(np.flatnonzero(pi > 0), individual)
    others = others[np.argsort(pi[others], kind="stable")]
    edges = np.linspace(0, len(others), min(BINS, len(others)) + 1).astype(int)[:-1]
    bins = np.add.reduceat(pi[others], edges) / np.diff(np.append(edges, len(others)))
    multiplicity = np.diff(np.append(edges, len(others)))
    if len(others) == 0:
        bins, multiplicity = np.zeros(0), np.zeros(0)
    zero_mass = max(kept - float(pi.sum()), 0.0)
    zero_count = max(zeros, zero_mass, 1.0)
    items = np.concatenate([pi[individual], bins, [zero_mass / zero_count]])
    counts = np.concatenate([np.ones(len(individual)), multiplicity, [zero_count]])
    return _KeptSet(items, counts, kept), individual, local.ravel()


def refined_identification(
    values: np.ndarray,
    counts: Sequence[int] | np.ndarray,
    m: int,
    epsilon: float,
    config: PEMConfig,
    *,
    top: int | None = None,
    pq: tuple[float, float] | None = None,
    heavy: int | None = None,
    nodes: int = NODES,
) -> np.ndarray:
    """P(the j-th most frequent value survives every PEM step), j = 1..``top`` (module doc).

    Parameters
    ----------
    values, counts :
        The distribution: distinct m-bit values (the data set's representation) and
        their counts (n = their sum); the true histogram or an assumed one.
    m, epsilon, config :
        Bits per value, privacy budget and PEM configuration (groups of n[i] users).
    top : int, optional
        How many values to report, most frequent first (default: the last step's |C_g|).
    pq : (p*, q*), optional
        The oracle's support probabilities (default OLH's at ε, as PEM uses it).
    heavy : int, optional
        Prefixes per step whose competition is computed exactly (the rest as a pool).
        Default twice the largest |C_i|: at Fig. 8b's k = 16 points (η = 2, 4, 10) it
        gives the F1 of 48 to five decimals in about half the time.
    nodes : int
        Gauss-Hermite nodes.
    """
    epsilon = check_epsilon(epsilon)
    m = check_int(m, "m", minimum=1)
    if heavy is None:
        heavy = 2 * max(config.candidate_sizes)
    heavy = check_int(heavy, "heavy", minimum=1)
    counts = np.asarray(counts, dtype=float)
    values = np.asarray(values)
    if counts.ndim != 1 or len(counts) != len(values) or np.any(counts < 0):
        raise ValueError("counts must be one non-negative count per value")
    order = np.argsort(-counts, kind="stable")
    values, counts = values[order], counts[order]
    n = counts.sum()
    if n <= 0:
        raise ValueError("counts must not all be zero")
    top = config.candidate_sizes[-1] if top is None else check_int(top, "top", minimum=1)
    p, q = pq if pq is not None else olh_pq(epsilon)
    survived = np.ones(len(values))  # per value: π of its prefix at the last step so far
    previous = None  # the last step: (prefix of each value, π per prefix, |D|, |C|)
    for ell, fraction, domain, kept in zip(
        config.lengths, config.fractions, config.domain_sizes, config.candidate_sizes, strict=True
    ):
        _, first, inverse = np.unique(
            bits.row_keys(bits.prefix(values, m, ell)), return_index=True, return_inverse=True
        )
        inverse = inverse.ravel()
        frequencies = np.bincount(inverse, weights=counts) / n
        presence = survived[first]  # the parent's survival, shared by the prefix's values
        step = _Step(frequencies, presence, n * fraction, domain, kept, p, q, heavy)
        if previous is not None:
            parent = previous[0][first[step.heavy]]
            step.condition(*_kept_set(previous, parent))
        pi = step.survive(nodes)
        survived = pi[inverse]
        previous = (inverse, pi, step.zeros, domain, kept)
    return survived[:top]


def refined_utility(
    values: np.ndarray,
    counts: Sequence[int] | np.ndarray,
    m: int,
    epsilon: float,
    config: PEMConfig,
    k: int,
    goal: Goal = "f1",
    **options,
) -> float:
    """Eq. (4) with the refined identification probabilities: Σ_j w_j π_g(v_j), j <= k."""
    k = check_int(k, "k", minimum=1)
    probabilities = refined_identification(values, counts, m, epsilon, config, top=k, **options)
    if len(probabilities) < k:
        raise ValueError(f"the distribution has fewer than k = {k} values")
    return float(utility_weights(k, goal) @ probabilities)
