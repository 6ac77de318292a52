"""Calibrated surrogate of FIMI's ``kosarak.dat`` as transactions: each user holds a set.

Only summary figures of the real data are used; no transaction, item list or line of the
file is embedded. The item ids are labels: the four named items keep their real ids
(6, 3, 11, 1, as :func:`ldp.datasets.surrogates.kosarak_surrogate` does), the other ranks
get a seeded permutation of the remaining ids 1..41,270 (id 0 is unused).

Sources of the figures
    (a) Item supports of the full file (990,002 transactions, 41,270 items, mean length
        8.1): :func:`ldp.datasets.surrogates.kosarak_supports`, the support of the item at
        each rank, itself fitted to the FIMI figures and to Apriori output on the full
        file (frequent items at minimum support 0.005). That output also lists the eight
        most frequent items, in order: 6, 3, 11, 1, 218, 7, 4, 27 (218 and 7 hold 8.95%
        and 8.78%; only their order is used here, to key the lifts below by rank).
    (b) The transaction-length law, measured on the file's first 36,682 transactions (the
        cut-off last line of that extract ignored), summarised as
        :data:`KOSARAK_LENGTH_PMF` (P(|T| = k), k = 1..10), :data:`KOSARAK_LENGTH_SURVIVAL`
        (P(|T| >= k) at eight lengths) and its longest transaction (699 items); mean 8.015
        (the full file's: 8.1).
    (c) Pairwise lifts P(i, j in T) / (P(i in T) P(j in T)) among those eight items,
        measured on the same prefix: :data:`KOSARAK_HEAD_LIFTS` (the rarest pair occurs
        in 203 prefix transactions, so each lift carries ~7% relative sampling error).
        A lift is a ratio of supports: it is applied to the full file's supports (a), so
        the surrogate's pair supports are lift x s_i x s_j. The prefix's head is heavier
        than the full file's (its own supports of these items differ by up to 3%);
        lifts are less sensitive to that than raw pair supports.

Model (:func:`build_model`; one user at a time, users independent)
    1. **Head pattern.** The eight most frequent items (ranks 1-8, the "head") are drawn
       jointly as thresholded correlated normals (a multivariate probit; Emrich and
       Piedmonte, *The American Statistician* 45 (1991) 302-304): Y ~ N(0, R), item i in
       T iff Y_i < Phi^-1(s_i), so P(i in T) = s_i exactly, and each r_ij solves
       Phi2(Phi^-1(s_i), Phi^-1(s_j); r_ij) = lift_ij s_i s_j, so every head pair has its
       lift exactly (Phi2 by Plackett's identity dPhi2/dr = phi2, *Biometrika* 41 (1954)
       351-360, integrated by Gauss-Legendre). R is positive definite (smallest eigenvalue
       0.29). h = the number of head items a user holds.
    2. **Length given the head.** |T| = L is drawn from P(L | h): the joint law of (h, L)
       is the one closest to independence (I-projection, Csiszar, *Ann. Probab.* 3 (1975)
       146-158; computed by iterative proportional fitting, Deming and Stephan 1940) among
       those with the marginals P(h) (from step 1, by quasi-Monte Carlo with 2^17 Sobol
       points) and the length law below, and with L >= max(h, 1). So the length law is
       reproduced exactly in expectation, and h <= L always.
    3. **Length law.** P(L = k) from :data:`KOSARAK_LENGTH_PMF` for k <= 10; beyond,
       P(L >= k) log-log linear between the anchors of :data:`KOSARAK_LENGTH_SURVIVAL`,
       the last segment (201 to 501, exponent -2.56) continued up to :data:`MAX_LENGTH`
       = 2,500 (a model choice: that power law leaves ~3 of 990,002 transactions above
       it). Mean 8.010 (prefix: 8.015).
    4. **Background.** The other L - h items are drawn from ranks 9..41,270 by successive
       sampling: draws with replacement in proportion to weights v, keeping the first
       L - h distinct ones (weighted sampling without replacement). The weights are
       fitted so that each item's support matches its target, with the exponential-clock
       approximation of successive sampling (item j is among the first b distinct with
       probability ~ 1 - exp(-v_j tau_b), sum_j (1 - exp(-v_j tau_b)) = b; Rosen, *Ann.
       Math. Statist.* 43 (1972) 373-397), averaged over the law of b = L - h. Targets:
       the supports of (a) for ranks 9-156; ranks 157..41,270 scaled by 0.980 so that the
       supports sum to the mean length 8.010 of (b) rather than the full file's 8.1.

What it achieves (measured on 4 x 990,002 users, seeds 0-3)
    * the length pmf: exactly in expectation (the table above, by construction); mean
      length 8.010;
    * supports of ranks 1-8: exactly in expectation (step 1; measured within 0.2%);
      ranks 9-156: within 1.5% of :func:`~ldp.datasets.surrogates.kosarak_supports`
      (mean -0.16%, largest deviation 2.6 standard errors: no bias of the
      exponential-clock fit shows above the noise); ranks 157+: 0.2% below their
      rescaled targets on average;
    * head pair lifts: the table (c) in expectation (measured within 1.2%, the noise of
      the rarest pair being 0.85%).
    Against the real file's 156 frequent items by rank (a check, not a target): 96 within
    10%, 145 within 20%, all within 30%, exactly as
    :func:`~ldp.datasets.surrogates.kosarak_supports` itself (ranks 6-10 are 18-28% low,
    ranks 40-70 up to 23% high: its three-anchor log-log model).

Known deviations
    * Head items depend on length only through h <= L. In the real data they are more
      frequent in long transactions: the top item is in 20% of the prefix's 1-item
      transactions, 92% of its 8-item ones and 98% of those of 20+ items; in the
      surrogate 24%, about 75% and 75%.
    * Background items co-occur only through the length (no topics or sessions): their
      pair lifts are those of successive sampling, and given L they are independent of
      the head pattern.
    * Beyond pairs, the head's joint law is the probit's (triples are not calibrated).
    * Ranks 157+ are 2% below (a): the model's length law has mean 8.010 (the prefix's
      8.015), not the full file's 8.1.
    * No transaction is longer than 2,500 items.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ldp.datasets.surrogates import KOSARAK_FIGURES, kosarak_supports
from ldp.lazy import lazy_module
from ldp.validation import check_generator, check_int

special = lazy_module("scipy.special")
optimize = lazy_module("scipy.optimize")
qmc = lazy_module("scipy.stats.qmc")

__all__ = [
    "HEAD",
    "KOSARAK_HEAD_ITEMS",
    "KOSARAK_HEAD_LIFTS",
    "KOSARAK_LENGTH_MAX_PREFIX",
    "KOSARAK_LENGTH_PMF",
    "KOSARAK_LENGTH_SURVIVAL",
    "MAX_LENGTH",
    "MODEL_VERSION",
    "SetModel",
    "bivariate_normal_cdf",
    "build_model",
    "kosarak_length_pmf",
    "kosarak_sets_model",
    "kosarak_sets_surrogate",
    "lift_matrix",
    "rank_ids",
]

#: Item ids of kosarak run 0..41,270 (id 0 unused): a surrogate's domain size.
DOMAIN_SIZE = KOSARAK_FIGURES["items"] + 1
#: Number of head items (ranks 1..HEAD drawn jointly, with calibrated pair lifts).
HEAD = 8
#: Longest transaction of the surrogate (a model choice, see the module docstring).
MAX_LENGTH = 2500
#: Version of the model (part of the cache key of :func:`ldp.datasets.load_kosarak_sets`).
MODEL_VERSION = 1

#: (b) P(|T| = k) for k = 1..10, on the prefix (first 36,682 transactions).
KOSARAK_LENGTH_PMF = {
    1: 0.15253,
    2: 0.20081,
    3: 0.18096,
    4: 0.11930,
    5: 0.07426,
    6: 0.04550,
    7: 0.02977,
    8: 0.02195,
    9: 0.01783,
    10: 0.01442,
}
#: (b) P(|T| >= k) on the prefix, at k = 11 .. 501.
KOSARAK_LENGTH_SURVIVAL = {
    11: 0.14269,
    16: 0.09708,
    21: 0.07213,
    31: 0.04599,
    51: 0.02407,
    101: 0.00859,
    201: 0.00196,
    501: 0.00019,
}
#: (b) The prefix's longest transaction.
KOSARAK_LENGTH_MAX_PREFIX = 699
#: The eight most frequent items of the full file, by rank (a): the rows of the lifts.
KOSARAK_HEAD_ITEMS = (6, 3, 11, 1, 218, 7, 4, 27)
#: (c) Lift P(i, j in T) / (P(i in T) P(j in T)) of the items at ranks (i, j), on the prefix.
KOSARAK_HEAD_LIFTS = {
    (1, 2): 0.967,
    (1, 3): 1.472,
    (1, 4): 1.095,
    (1, 5): 1.461,
    (1, 6): 1.403,
    (1, 7): 0.943,
    (1, 8): 1.376,
    (2, 3): 0.964,
    (2, 4): 0.928,
    (2, 5): 0.967,
    (2, 6): 1.006,
    (2, 7): 0.978,
    (2, 8): 1.011,
    (3, 4): 1.241,
    (3, 5): 1.925,
    (3, 6): 1.777,
    (3, 7): 0.967,
    (3, 8): 1.742,
    (4, 5): 1.861,
    (4, 6): 1.400,
    (4, 7): 0.927,
    (4, 8): 1.412,
    (5, 6): 2.137,
    (5, 7): 0.906,
    (5, 8): 2.067,
    (6, 7): 1.036,
    (6, 8): 6.320,
    (7, 8): 0.969,
}

#: Quasi-Monte Carlo points for the law of h (2^17 Sobol points, fixed scrambling seed).
_QMC_LOG2_POINTS = 17
_QMC_SEED = 20_240_601
#: Number of frequent items whose supports (a) gives individually (support >= 0.5%).
_FREQUENT = 156


def kosarak_length_pmf() -> np.ndarray:
    """P(L = k) for k = 1..:data:`MAX_LENGTH` (index k - 1), from the figures (b).

    k <= 10: :data:`KOSARAK_LENGTH_PMF`. k >= 11: differences of the survival function
    P(L >= k), log-log linear between the anchors of :data:`KOSARAK_LENGTH_SURVIVAL` and
    continued beyond 501 with the last segment's exponent, cut at MAX_LENGTH. The ten
    measured values (rounded to 5 decimals) are renormalised with the rest to sum to one
    (a change of 2e-5).
    """
    anchors = np.array(list(KOSARAK_LENGTH_SURVIVAL), dtype=float)
    log_anchor, log_value = np.log(anchors), np.log(list(KOSARAK_LENGTH_SURVIVAL.values()))
    slope = (log_value[-1] - log_value[-2]) / (log_anchor[-1] - log_anchor[-2])
    log_k = np.log(np.arange(11, MAX_LENGTH + 2, dtype=float))
    survival = np.exp(
        np.where(
            log_k <= log_anchor[-1],
            np.interp(log_k, log_anchor, log_value),
            log_value[-1] + slope * (log_k - log_anchor[-1]),
        )
    )
    survival[-1] = 0.0  # P(L >= MAX_LENGTH + 1)
    pmf = np.concatenate([list(KOSARAK_LENGTH_PMF.values()), survival[:-1] - survival[1:]])
    return pmf / pmf.sum()


def lift_matrix(lifts: dict[tuple[int, int], float] | None = None) -> np.ndarray:
    """The HEAD x HEAD symmetric matrix of pair lifts by rank (diagonal NaN)."""
    lifts = KOSARAK_HEAD_LIFTS if lifts is None else lifts
    matrix = np.full((HEAD, HEAD), np.nan)
    for (i, j), lift in lifts.items():
        matrix[i - 1, j - 1] = matrix[j - 1, i - 1] = lift
    return matrix


@lru_cache(maxsize=4)
def _gauss_legendre(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(nodes)


def bivariate_normal_cdf(h: float, k: float, r: float, nodes: int = 64) -> float:
    """P(X < h, Y < k) for standard normals of correlation r, |r| < 1.

    Plackett's identity dPhi2/dr = phi2(h, k; r) integrated from 0 to r by Gauss-Legendre
    quadrature: Phi2 = Phi(h) Phi(k) + int_0^r phi2(h, k; t) dt. With 64 nodes it agrees
    with scipy's ``multivariate_normal.cdf`` to 1e-12 for |r| <= 0.9 at the thresholds used.
    """
    x, weights = _gauss_legendre(nodes)
    t = (x + 1.0) * r / 2.0
    one_minus = 1.0 - t * t
    density = np.exp(-(h * h - 2.0 * t * h * k + k * k) / (2.0 * one_minus)) / (
        2.0 * np.pi * np.sqrt(one_minus)
    )
    return float(special.ndtr(h) * special.ndtr(k) + (weights * density).sum() * r / 2.0)


@dataclass(frozen=True, eq=False)
class SetModel:
    """The fitted set-valued model of :func:`build_model` (arrays by rank, 0-based).

    Attributes
    ----------
    supports : numpy.ndarray
        Target support of the item at each rank 1..41,270 (ranks 157+ rescaled, see the
        module docstring): what the surrogate reproduces in expectation.
    length_pmf : numpy.ndarray
        P(L = k), k = 1..MAX_LENGTH.
    lifts : numpy.ndarray
        HEAD x HEAD pair lifts (diagonal NaN); pair supports are lifts x s_i x s_j.
    thresholds, correlation, cholesky : numpy.ndarray
        The probit of the head: item i in T iff Y_i < thresholds[i], Y ~ N(0, correlation).
    head_count_pmf : numpy.ndarray
        P(h = 0..HEAD).
    length_given_head : numpy.ndarray
        (HEAD + 1) x MAX_LENGTH: P(L = k | h).
    background_weights : numpy.ndarray
        Successive-sampling weights of ranks HEAD + 1..41,270 (sum one).
    tail_scale : float
        Factor applied to the supports of ranks 157+ of (a).
    """

    supports: np.ndarray
    length_pmf: np.ndarray
    lifts: np.ndarray
    thresholds: np.ndarray
    correlation: np.ndarray
    cholesky: np.ndarray
    head_count_pmf: np.ndarray
    length_given_head: np.ndarray
    background_weights: np.ndarray
    tail_scale: float

    def pair_supports(self) -> np.ndarray:
        """Expected P(i, j in T) for the head ranks (HEAD x HEAD; diagonal: supports)."""
        head = self.supports[:HEAD]
        pairs = self.lifts * np.outer(head, head)
        np.fill_diagonal(pairs, head)
        return pairs

    @property
    def mean_length(self) -> float:
        """E[L]."""
        return float(self.length_pmf @ np.arange(1, len(self.length_pmf) + 1))


def _head_correlation(thresholds: np.ndarray, lifts: np.ndarray) -> np.ndarray:
    """r_ij with Phi2(a_i, a_j; r_ij) = lift_ij Phi(a_i) Phi(a_j): the probit's correlations."""
    supports = special.ndtr(thresholds)
    correlation = np.eye(HEAD)
    for i in range(HEAD):
        for j in range(i + 1, HEAD):
            target = lifts[i, j] * supports[i] * supports[j]
            if not max(0.0, supports[i] + supports[j] - 1) < target < min(supports[[i, j]]):
                raise ValueError(f"lift of ranks ({i + 1}, {j + 1}) gives no valid pair support")

            def gap(r: float, i: int = i, j: int = j, target: float = target) -> float:
                return bivariate_normal_cdf(thresholds[i], thresholds[j], r) - target

            correlation[i, j] = correlation[j, i] = optimize.brentq(gap, -0.999, 0.999, xtol=1e-12)
    if np.linalg.eigvalsh(correlation)[0] <= 0:
        raise ValueError("the head lifts give a correlation matrix that is not positive definite")
    return correlation


def _couple(head_pmf: np.ndarray, length_pmf: np.ndarray) -> np.ndarray:
    """Joint P(h, L) closest to independence with the given marginals and L >= max(h, 1).

    Iterative proportional fitting from the independent table restricted to the allowed
    cells (the I-projection). Raises if it does not converge (no such coupling: h must be
    stochastically smaller than L).
    """
    lengths = np.arange(1, len(length_pmf) + 1)
    allowed = lengths[None, :] >= np.maximum(np.arange(HEAD + 1), 1)[:, None]
    table = head_pmf[:, None] * length_pmf[None, :] * allowed
    for _ in range(10_000):
        rows = table.sum(1)
        table *= np.divide(head_pmf, rows, out=np.zeros_like(rows), where=rows > 0)[:, None]
        columns = table.sum(0)
        table *= np.divide(length_pmf, columns, out=np.zeros_like(columns), where=columns > 0)
        if np.abs(table.sum(1) - head_pmf).max() < 1e-13:
            return table
    raise ValueError("no joint law of (h, L) with h <= L has these marginals")


def _background_fit(
    targets: np.ndarray, background_pmf: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Successive-sampling weights whose exponential-clock supports match ``targets``.

    ``background_pmf[b]`` is P(b background items). Items beyond the frequent ones are
    fitted in classes of neighbouring ranks (geometric bins, 300 of them), lengths b in
    classes (each b up to 64, then 60 geometric bins), then each item's weight is
    interpolated in log-log from its support. Alternating Newton steps: tau_b given the
    weights (sum_j 1 - exp(-v_j tau_b) = b), then the weights given tau.
    """
    count = len(targets)
    frequent = _FREQUENT - HEAD
    edges = np.unique(
        np.concatenate(
            [np.arange(frequent), np.geomspace(frequent, count, 300).round().astype(np.int64)]
        )
    )
    group = np.searchsorted(edges, np.arange(count), side="right") - 1
    size = np.bincount(group).astype(float)
    support = np.bincount(group, weights=targets) / size
    sizes = np.arange(len(background_pmf))
    length_edges = np.unique(
        np.concatenate(
            [np.arange(65), np.geomspace(65, len(background_pmf), 60).round().astype(np.int64)]
        )
    )
    length_group = np.searchsorted(length_edges, sizes, side="right") - 1
    mass = np.bincount(length_group, weights=background_pmf)
    mean = np.bincount(length_group, weights=background_pmf * sizes) / np.maximum(mass, 1e-300)
    keep = (mass > 0) & (mean > 0)
    mass, mean = mass[keep], mean[keep]
    weights = support / support.sum()
    tau = mean.copy()
    for _ in range(1000):
        for _ in range(3):
            x = np.outer(tau, weights)
            e = np.exp(-x)
            excess = (size * -np.expm1(-x)).sum(1) - mean
            tau = np.maximum(tau - excess / (size * weights * e).sum(1), tau / 10)
        for _ in range(3):
            x = np.outer(tau, weights)
            e = np.exp(-x)
            gap = mass @ -np.expm1(-x) - support
            weights = np.maximum(weights - gap / (mass @ (tau[:, None] * e)), weights / 10)
        if np.abs(gap / support).max() < 1e-10:
            break
    else:  # pragma: no cover - the fit converges in a few steps for any sane targets
        raise RuntimeError("the background weights did not converge")
    order = np.argsort(support)
    item_weights = np.exp(
        np.interp(np.log(targets), np.log(support[order]), np.log(weights[order]))
    )
    return item_weights / item_weights.sum(), mean


def build_model(
    *,
    length_pmf: np.ndarray | None = None,
    lifts: dict[tuple[int, int], float] | None = None,
    supports: np.ndarray | None = None,
) -> SetModel:
    """Fit the set-valued model to the figures (defaults: kosarak's, module docstring).

    Parameters
    ----------
    length_pmf : numpy.ndarray, optional
        P(L = k), k = 1..K (default :func:`kosarak_length_pmf`).
    lifts : dict, optional
        Head pair lifts by 1-based ranks (default :data:`KOSARAK_HEAD_LIFTS`).
    supports : numpy.ndarray, optional
        Support of each rank, decreasing (default
        :func:`~ldp.datasets.surrogates.kosarak_supports`); ranks 157+ are rescaled so
        that all sum to the mean length.

    The other arguments exist so that a test can plant a deviation (a wrong length law, no
    lifts) and check that the checks catch it. Takes about half a second.
    """
    length_pmf = kosarak_length_pmf() if length_pmf is None else np.asarray(length_pmf, float)
    supports = kosarak_supports() if supports is None else np.array(supports, dtype=float)
    lift_table = lift_matrix(lifts)
    thresholds = special.ndtri(supports[:HEAD])
    correlation = _head_correlation(thresholds, lift_table)
    cholesky = np.linalg.cholesky(correlation)
    points = qmc.Sobol(HEAD, scramble=True, seed=_QMC_SEED).random_base2(_QMC_LOG2_POINTS)
    held = (special.ndtri(points) @ cholesky.T) < thresholds
    head_pmf = np.bincount(held.sum(1), minlength=HEAD + 1) / len(points)
    joint = _couple(head_pmf, length_pmf)
    lengths = np.arange(1, len(length_pmf) + 1)
    background_pmf = np.zeros(len(length_pmf) + 1)
    for h in range(HEAD + 1):
        np.add.at(background_pmf, lengths - h, np.where(lengths >= h, joint[h], 0.0))
    targets = supports.copy()
    mean_background = float(background_pmf @ np.arange(len(background_pmf)))
    frequent_mass = targets[HEAD:_FREQUENT].sum()
    tail_scale = (mean_background - frequent_mass) / targets[_FREQUENT:].sum()
    targets[_FREQUENT:] *= tail_scale
    background, _ = _background_fit(targets[HEAD:], background_pmf)
    rows = joint.sum(1, keepdims=True)
    model = SetModel(
        supports=targets,
        length_pmf=length_pmf,
        lifts=lift_table,
        thresholds=thresholds,
        correlation=correlation,
        cholesky=cholesky,
        head_count_pmf=head_pmf,
        length_given_head=np.divide(joint, rows, out=np.zeros_like(joint), where=rows > 0),
        background_weights=background,
        tail_scale=float(tail_scale),
    )
    for value in vars(model).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return model


@lru_cache(maxsize=1)
def kosarak_sets_model() -> SetModel:
    """:func:`build_model` with kosarak's figures, fitted once per process."""
    return build_model()


def _sorted_unique(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct keys (``np.unique`` is several times slower on large int64 arrays)."""
    keys = np.sort(keys)
    if len(keys) < 2:
        return keys
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])]


def _successive_sample(
    need: np.ndarray, weights: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Keys user * len(weights) + category: each user's first need[u] distinct categories
    among draws with replacement in proportion to ``weights`` (successive sampling).

    Rounds: every unfinished user draws as many as it still lacks, duplicates are removed;
    it never overshoots (a round adds at most what is lacking), so the kept categories are
    exactly the first need[u] distinct ones of one sequence of draws. The draws of a round
    are one multinomial over categories in a random order (the same law as i.i.d. draws).
    """
    width = len(weights)
    have = np.zeros(len(need), dtype=np.int64)
    active = np.flatnonzero(need > 0)
    current = np.empty(0, dtype=np.int64)
    finished = []
    while len(active):
        lacking = need[active] - have[active]
        total = int(lacking.sum())
        drawn = np.repeat(np.arange(width, dtype=np.int64), rng.multinomial(total, weights))
        rng.shuffle(drawn)
        users = np.repeat(active, lacking)
        keys = _sorted_unique(np.concatenate([current, users * width + drawn]))
        owner = keys // width
        have[active] = np.bincount(owner, minlength=len(need))[active]
        done = have[owner] == need[owner]
        finished.append(keys[done])
        current = keys[~done]
        active = active[have[active] < need[active]]
    return np.concatenate(finished) if finished else np.empty(0, dtype=np.int64)


def rank_ids(rng: np.random.Generator, ranks: int = KOSARAK_FIGURES["items"]) -> np.ndarray:
    """The item id at each rank 1..ranks: 6, 3, 11, 1, then a permutation of the other ids.

    The first draw :func:`kosarak_sets_surrogate` makes from its ``rng``: a fresh generator
    with the same seed gives the ids of a surrogate's ranks (for tests and figures).
    """
    named = np.array(list(KOSARAK_FIGURES["named_supports"]), dtype=np.int64)
    others = np.setdiff1d(np.arange(1, ranks + 1, dtype=np.int64), named)
    return np.concatenate([named, rng.permutation(others)])


def kosarak_sets_surrogate(
    n: int, rng: np.random.Generator, *, model: SetModel | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """n users' item sets of the kosarak-like model, as CSR arrays ``(offsets, items)``.

    Draws, in order from ``rng``: the ids of the ranks (:func:`rank_ids`), the head
    normals, the lengths, the background. Each user's items are sorted ascending; the
    items' domain is 0..41,270. ``model`` defaults to :func:`kosarak_sets_model` (another
    one is for tests that plant a deviation). 990,002 users take about 2.5 s and 0.5 GB
    at peak.

    Returns
    -------
    offsets : numpy.ndarray
        int64, shape (n + 1,): user u holds ``items[offsets[u]:offsets[u + 1]]``.
    items : numpy.ndarray
        int64 item ids.
    """
    n = check_int(n, "n", minimum=1)
    check_generator(rng)
    model = kosarak_sets_model() if model is None else model
    ids = rank_ids(rng, len(model.supports))
    held = (rng.standard_normal((n, HEAD)) @ model.cholesky.T) < model.thresholds
    head_count = held.sum(1)
    lengths = np.empty(n, dtype=np.int64)
    for h in range(HEAD + 1):
        users = np.flatnonzero(head_count == h)
        if len(users):
            cumulative = np.cumsum(model.length_given_head[h])
            u = rng.random(len(users)) * cumulative[-1]
            lengths[users] = 1 + np.searchsorted(cumulative, u, side="right")
    lengths = np.minimum(lengths, len(model.length_pmf))  # rounding guard at the top end
    width = len(model.background_weights)
    background = _successive_sample(lengths - head_count, model.background_weights, rng)
    head_user, head_rank = np.nonzero(held)
    keys = np.concatenate(
        [
            head_user.astype(np.int64) * DOMAIN_SIZE + ids[head_rank],
            (background // width) * DOMAIN_SIZE + ids[HEAD + background % width],
        ]
    )
    keys.sort()
    user = keys // DOMAIN_SIZE
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(user, minlength=n), out=offsets[1:])
    return offsets, keys - user * DOMAIN_SIZE
