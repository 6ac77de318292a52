"""CMS and HCMS (Apple, "Learning with Privacy at Scale", 2017): estimator, variance, engines,
privacy.

Statistical assertions follow ``oracle_testing``: each is a test at level ALPHA = 1e-4
(Bonferroni over the values it checks) with a fixed seed.  The workload is the shared one
(d = 16, n = 4000, one value held by 60% of users) with a small sketch (k = 4 rows, m = 16
cells), so that hash collisions matter: the collision term Σ n_u(n_u-1)/(k(m-1)) is about
half of the variance of the values nobody holds.  The estimates then mix over the random
hash family and are far from normal, so the spread of a sample variance is set from the
sample's own fourth moment (Satterthwaite's ν with the empirical excess kurtosis).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    D,
    N,
    assert_same_moments,
    engine_samples,
    moment_z_scores,
    seed_for,
    users,
    variance_acceptance,
    z_critical,
)
from scipy import linalg, stats

from ldp import audit, hashing, privacy
from ldp.algebra import walsh_hadamard
from ldp.audit import Event, FeatureSearch
from ldp.oracles import CMS, HCMS
from ldp.oracles.count_mean_sketch import (
    HCMSReports,
    cells,
    collision_pairs,
    count_ones,
    draw_family,
    hadamard_sign,
)

CLASSES = (CMS, HCMS)
EPSILONS = (0.5, 4.0)
K, M = 4, 16
REPS = 1200


def make(cls, epsilon: float, **kwargs):
    return cls(epsilon=epsilon, domain_size=D, k=K, m=M, **kwargs)


def draws(cls, epsilon: float, engine: str) -> np.ndarray:
    oracle, rng = make(cls, epsilon), seed_for(cls.name, epsilon, engine)
    values = users(COUNTS)
    out = np.empty((REPS, D))
    for r in range(REPS):
        if engine == "reports":
            out[r] = oracle.estimate(oracle.perturb(values, rng))
        else:
            out[r] = oracle.simulate(COUNTS, rng)
    return out


_CACHE: dict = {}


def cached(cls, epsilon: float, engine: str) -> np.ndarray:
    key = (cls.name, epsilon, engine)
    if key not in _CACHE:
        _CACHE[key] = draws(cls, epsilon, engine)
    return _CACHE[key]


# --- closed forms ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_probabilities_are_the_papers(cls, epsilon: float) -> None:
    """Flip 1/(1+e^{ε/2}) (CMS) or 1/(1+e^ε) (HCMS), realised within 2^-50 relative."""
    oracle = make(cls, epsilon)
    half = epsilon / 2 if cls is CMS else epsilon
    assert oracle.p == pytest.approx(math.exp(half) / (1 + math.exp(half)), rel=1e-14)
    assert 1 - oracle.p >= 1 / (1 + math.exp(half))  # rounded in the private direction
    if cls is CMS:  # c_ε = (e^{ε/2}+1)/(e^{ε/2}-1) is 1/γ
        assert 1 / oracle.gap == pytest.approx((math.exp(half) + 1) / (math.exp(half) - 1))
        assert oracle.q_star == pytest.approx(oracle.base + oracle.gap / M)
    else:
        assert oracle.base == 0.5
        assert 1 / (2 * oracle.gap) == pytest.approx((math.exp(half) + 1) / (math.exp(half) - 1))


def test_walsh_hadamard_is_the_sylvester_matrix() -> None:
    x = np.random.default_rng(0).normal(size=(3, 64))
    h = linalg.hadamard(64)
    np.testing.assert_allclose(walsh_hadamard(x), x @ h, atol=1e-10)
    rows, cols = np.meshgrid(np.arange(64), np.arange(64), indexing="ij")
    np.testing.assert_array_equal(hadamard_sign(rows, cols), h)


@pytest.mark.parametrize("cls", CLASSES)
def test_sketch_is_the_papers_per_report_sum(cls) -> None:
    """M from the vectorised aggregator = Σ of each report's debiased vector ([Apple])."""
    oracle = make(cls, 1.0)
    reports = oracle.perturb(users(COUNTS)[::40], np.random.default_rng(3))
    seeds, rows = reports.seeds, reports.rows
    direct = np.zeros((K, M))
    if cls is CMS:
        c = 1 / oracle.gap  # the realised c_ε = (e^{ε/2}+1)/(e^{ε/2}-1)
        signs = 2.0 * np.unpackbits(reports.bits, axis=1, count=M) - 1
        for row, v in zip(rows, signs, strict=True):
            direct[row] += K * (c / 2 * v + 0.5)
    else:
        c = 1 / (2 * oracle.gap)
        for row, coefficient, bit in zip(rows, reports.coefficients, reports.bits, strict=True):
            direct[row, coefficient] += K * c * (2.0 * bit - 1)
        direct = direct @ linalg.hadamard(M).T
    np.testing.assert_allclose(oracle.sketch(reports), direct, rtol=1e-12, atol=1e-9)
    estimate = oracle.estimate(reports)
    table = np.array([[oracle.estimate(reports, [d])[0] for d in range(D)]])
    np.testing.assert_allclose(estimate, table[0])
    # ... and equal to the pure framework's (I_d - n q*)/(p* - q*)
    support = oracle.support_counts(reports, np.arange(D))
    n = rows.shape[0]
    pure = (support - n * oracle.q_star) / (oracle.p_star - oracle.q_star)
    np.testing.assert_allclose(estimate, pure, rtol=1e-9, atol=1e-6)
    assert seeds.dtype == np.uint64


# --- unbiased, exact variance, both engines ----------------------------------------------
def exact_variances(oracle) -> np.ndarray:
    return oracle.variances(COUNTS)


@pytest.mark.parametrize("engine", ["reports", "sampled"])
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", CLASSES)
def test_unbiased(cls, epsilon: float, engine: str) -> None:
    estimates = cached(cls, epsilon, engine)
    variances = exact_variances(make(cls, epsilon))
    z = (estimates.mean(axis=0) - COUNTS) / np.sqrt(variances / REPS)
    assert np.abs(z).max() < z_critical(ALPHA, D), z


@pytest.mark.parametrize("engine", ["reports", "sampled"])
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", CLASSES)
def test_variance_is_exact(cls, epsilon: float, engine: str) -> None:
    """S²/Var within the χ² acceptance interval (ν from the sample's kurtosis), per value."""
    estimates = cached(cls, epsilon, engine)
    variances = exact_variances(make(cls, epsilon))
    kurtosis = stats.kurtosis(estimates, axis=0)
    lo, hi = variance_acceptance(REPS, kurtosis, ALPHA, D)
    ratio = estimates.var(axis=0, ddof=1) / variances
    assert np.all((lo < ratio) & (ratio < hi)), (ratio, lo, hi)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("cls", CLASSES)
def test_engines_agree_in_law(cls, epsilon: float) -> None:
    """Two-sample Kolmogorov-Smirnov per value, Bonferroni over the d values."""
    reports, sampled = cached(cls, epsilon, "reports"), cached(cls, epsilon, "sampled")
    p_values = [stats.ks_2samp(reports[:, v], sampled[:, v]).pvalue for v in range(D)]
    assert min(p_values) > ALPHA / D, p_values


def test_collision_term_matters_here() -> None:
    """The workload exercises the collision term: it is a large share of the variance."""
    oracle = make(CMS, 4.0)
    with_pairs = oracle.variances(COUNTS)
    alone = np.array([oracle.variance(N, int(c)) for c in COUNTS])
    assert np.all(with_pairs > 1.5 * alone)
    pairs = collision_pairs(COUNTS, np.arange(D))
    np.testing.assert_allclose(with_pairs - alone, pairs / (K * (M - 1)))


#: A skewed population: value 5 (no candidate) holds 75% of the 400 users.
SKEWED = np.array([0, 30, 20, 10, 5, 300, 15, 10, 5, 5, 0, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("cls", CLASSES)
def test_simulate_candidates_is_exact_for_a_skewed_population(cls) -> None:
    """Both engines agree on two candidates' means, variances and covariance (two-sample z
    at ALPHA, Bonferroni over 5); the sampled variances match :meth:`variances` (collision
    term included); the same engine on the evenly spread population (fewer collisions,
    and the former default, every other user a value of their own, has none) fails."""
    oracle, candidates = make(cls, 2.0), np.array([1, 2])
    samples = engine_samples(oracle, SKEWED, candidates, REPS, "skewed")
    assert_same_moments(samples["reports"], samples["sampled"])
    variances = oracle.variances(SKEWED, candidates)
    sampled = samples["sampled"]
    z = (sampled.mean(axis=0) - SKEWED[candidates]) / np.sqrt(variances / REPS)
    assert np.abs(z).max() < z_critical(ALPHA, 2), z
    lo, hi = variance_acceptance(REPS, stats.kurtosis(sampled, axis=0), ALPHA, 2)
    ratio = sampled.var(axis=0, ddof=1) / variances
    assert np.all((lo < ratio) & (ratio < hi)), ratio
    spread = moment_z_scores(samples["reports"], samples["spread"])
    assert min(abs(spread["var 0"]), abs(spread["var 1"])) > z_critical(ALPHA, m=5), spread


def test_candidates_may_hold_no_user_and_values_must_be_distinct() -> None:
    oracle, rng = make(CMS, 1.0), np.random.default_rng(0)
    estimates = oracle.simulate_candidates(np.array([3, 7]), np.array([5, 5]), [0, 3], rng)
    assert estimates.shape == (2,)
    with pytest.raises(ValueError, match="distinct"):
        oracle.simulate_candidates(np.array([3, 3]), np.array([5, 5]), [0], rng)
    with pytest.raises(ValueError, match="one entry each"):
        oracle.simulate_candidates(np.array([3]), np.array([5, 5]), [0], rng)


# --- privacy -------------------------------------------------------------------------------
class _Row:
    """One row of a CMS family, as a "bits" protocol for :mod:`ldp.privacy`."""

    def __init__(self, oracle, seeds, row):
        self.domain_size = oracle.domain_size
        self._oracle, self._seeds, self._row = oracle, seeds, row

    def report_probabilities(self, value):
        return self._oracle.report_probabilities(value, self._seeds)[self._row]


class _Flat:
    """An HCMS family as a "categorical" protocol: all (row, coefficient, sign) reports."""

    def __init__(self, oracle, seeds):
        self.domain_size, self._oracle, self._seeds = oracle.domain_size, oracle, seeds

    def report_probabilities(self, value):
        return self._oracle.report_probabilities(value, self._seeds).ravel()


def declared_loss(oracle, seeds) -> float:
    values = np.arange(oracle.domain_size)
    if isinstance(oracle, CMS):
        return max(
            privacy.max_privacy_loss(_Row(oracle, seeds, row), values=values, model="bits")
            for row in range(oracle.k)
        )
    return privacy.max_privacy_loss(_Flat(oracle, seeds), values=values, model="categorical")


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0, 30.0])
def test_declared_privacy_loss_is_epsilon(cls, epsilon: float) -> None:
    """sup over inputs and reports of ln Pr[y|v]/Pr[y|v'] is ε (up to the private rounding).

    A row that hashes v and v' to different cells has ratio exactly (p/(1-p))^2 (CMS) or
    p/(1-p) (HCMS); rows that collide contribute 0.  Checked on a drawn family.
    """
    oracle = cls(epsilon=epsilon, domain_size=8, k=3, m=16)
    seeds = draw_family(3, np.random.default_rng(7))
    loss = declared_loss(oracle, seeds)
    assert loss <= epsilon
    # the flip probability x moves by at most 2^-50 x + 2^-53 (exact.threshold): the loss
    # by at most twice that relative move per coordinate, two coordinates for CMS
    flip = 1 - oracle.p
    assert loss >= epsilon - 4 * (2.0**-50 + 2.0**-53 / flip)
    probabilities = np.concatenate(
        [oracle.report_probabilities(v, seeds).ravel() for v in range(8)]
    )
    assert probabilities.min() > 0 and probabilities.max() < 1


@pytest.mark.parametrize("cls", CLASSES)
def test_perturb_emits_the_declared_likelihood(cls) -> None:
    """The empirical report frequencies of one value match ``report_probabilities``.

    ``perturb`` draws the family first, so the same seed gives it back; each cell's
    frequency of +1 given the row (CMS) or of each (row, coefficient, sign) (HCMS) is
    tested (Pearson χ² for HCMS, binomial z per cell for CMS) at ALPHA.
    """
    oracle = cls(epsilon=2.0, domain_size=8, k=2, m=8)
    n, value = 40_000, 5
    reports = oracle.perturb(np.full(n, value), np.random.default_rng(11))
    seeds = draw_family(2, np.random.default_rng(11))
    np.testing.assert_array_equal(reports.seeds, seeds[reports.rows])
    probabilities = oracle.report_probabilities(value, seeds)
    if cls is CMS:
        bits = np.unpackbits(reports.bits, axis=1, count=8)
        for row in range(2):
            mine = bits[reports.rows == row]
            expected = probabilities[row]
            z = (mine.mean(axis=0) - expected) / np.sqrt(expected * (1 - expected) / len(mine))
            assert np.abs(z).max() < z_critical(ALPHA, 16), z
        assert stats.binomtest(int((reports.rows == 0).sum()), n, 0.5).pvalue > ALPHA
    else:
        index = (reports.rows * 8 + reports.coefficients) * 2 + reports.bits
        observed = np.bincount(index, minlength=32)
        assert stats.chisquare(observed, probabilities.ravel() * n).pvalue > ALPHA


@pytest.mark.parametrize("cls", CLASSES)
def test_reports_are_integers_and_bits(cls) -> None:
    """No floating point leaves the client (no low-bit leak is possible)."""
    reports = make(cls, 1.0).perturb(users(COUNTS)[:100], np.random.default_rng(0))
    assert all(np.asarray(part).dtype.kind in "iub" for part in reports)
    assert reports.seeds.dtype == np.uint64 and reports.rows.dtype.kind == "i"


@pytest.mark.parametrize(
    ("cls", "largest"), [(CMS, 2 * 36.7368005696771), (HCMS, 36.7368005696771)]
)
def test_refuses_epsilon_whose_coins_round(cls, largest: float) -> None:
    cls(epsilon=largest - 0.01, domain_size=4, k=2, m=8)
    with pytest.raises(ValueError, match=r"epsilon = .* is too large for .*largest safe epsilon"):
        cls(epsilon=largest + 0.01, domain_size=4, k=2, m=8)


# --- parameters and reports ----------------------------------------------------------------
@pytest.mark.parametrize("cls", CLASSES)
def test_bad_parameters(cls) -> None:
    with pytest.raises(ValueError, match="^epsilon must be > 0"):
        cls(epsilon=0.0, domain_size=4)
    with pytest.raises(ValueError, match="^epsilon must be finite"):
        cls(epsilon=float("nan"), domain_size=4)
    with pytest.raises(ValueError, match="^domain_size must be >= 2"):
        cls(epsilon=1.0, domain_size=1)
    with pytest.raises(ValueError, match="^k must be >= 1"):
        cls(epsilon=1.0, domain_size=4, k=0)
    with pytest.raises(ValueError, match="^m must be >= 2"):
        cls(epsilon=1.0, domain_size=4, m=1)
    with pytest.raises(TypeError, match="^k must be an integer"):
        cls(epsilon=1.0, domain_size=4, k=2.5)
    with pytest.raises(ValueError, match="^collisions must be >= 0"):
        cls(epsilon=1.0, domain_size=4).variance(10, 0, collisions=-1.0)


def test_hcms_needs_a_power_of_two() -> None:
    with pytest.raises(ValueError, match="^m must be a power of 2 for HCMS"):
        HCMS(epsilon=1.0, domain_size=4, m=24)
    CMS(epsilon=1.0, domain_size=4, m=24)  # CMS takes any width


@pytest.mark.parametrize("cls", CLASSES)
def test_bad_reports(cls) -> None:
    oracle = make(cls, 1.0)
    reports = oracle.perturb(users(COUNTS)[:50], np.random.default_rng(0))
    with pytest.raises(TypeError, match="reports must be"):
        oracle.estimate(np.zeros(3))
    with pytest.raises(ValueError, match="report seeds must be one uint64 per user"):
        oracle.estimate(reports._replace(seeds=reports.seeds[:2]))
    same_row = np.flatnonzero(reports.rows == reports.rows[0])
    assert len(same_row) >= 2
    mixed = reports.seeds.copy()
    mixed[same_row[0]] += np.uint64(1)  # one report of that row names another function
    with pytest.raises(ValueError, match="reports of one row must name one hash function"):
        oracle.estimate(reports._replace(seeds=mixed))
    with pytest.raises(ValueError, match=r"report rows must lie in \[0, 4\)"):
        oracle.estimate(reports._replace(rows=reports.rows + K))
    if isinstance(reports, HCMSReports):
        with pytest.raises(ValueError, match="report bits must be 0 or 1"):
            oracle.estimate(reports._replace(bits=reports.bits + 2))
    else:
        with pytest.raises(ValueError, match="report bits must be packed"):
            oracle.estimate(reports._replace(bits=reports.bits[:, :1]))
    with pytest.raises(ValueError, match=r"candidates must lie in \[0, 16\)"):
        oracle.estimate(reports, candidates=[D])
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.perturb(users(COUNTS)[:5], 0)


def test_count_ones_compiled_and_numpy_paths_agree() -> None:
    """The numba loop and the numpy fallback count the same bits (m not a multiple of 8)."""
    oracle = CMS(epsilon=1.0, domain_size=D, k=5, m=20)
    reports = oracle.perturb(users(COUNTS)[::7], np.random.default_rng(4))
    fast = count_ones(reports.rows, reports.bits, 5, 20)
    slow = count_ones(reports.rows, reports.bits, 5, 20, use_numba=False)
    bits = np.unpackbits(reports.bits, axis=1, count=20)
    direct = np.array([bits[reports.rows == row].sum(axis=0) for row in range(5)])
    np.testing.assert_array_equal(fast, direct)
    np.testing.assert_array_equal(slow, direct)


# --- empirical audit (ldp.audit, LDP-Auditor) -----------------------------------------------
#: Reports per input: more at small ε, where the ratio is close to 1 (design: floor >= 0.7ε).
AUDIT_TRIALS = {0.5: 200_000, 2.0: 50_000, 6.0: 50_000}


def separating_event(oracle, v: int, v_prime: int) -> Event:
    """Reports whose row separates v and v' and whose signs favour v.

    CMS: sign +1 at h(v) and -1 at h(v'): probability (1 - 1/m) p² under v and
    (1 - 1/m) q² under v'.  HCMS: H[l, h(v)] != H[l, h(v')] and the sign is H[l, h(v)]:
    (1 - 1/m) p / 2 under v and (1 - 1/m)(1 - p) / 2 under v'.  Ratio e^ε (realised).
    """
    m = oracle.m

    def test(reports) -> np.ndarray:
        n = reports.rows.shape[0]
        own = hashing.hash_values(np.full(n, v), reports.seeds, m)
        other = hashing.hash_values(np.full(n, v_prime), reports.seeds, m)
        if isinstance(reports, HCMSReports):
            sign = hadamard_sign(reports.coefficients, own)
            split = sign != hadamard_sign(reports.coefficients, other)
            return (own != other) & split & ((reports.bits == 1) == (sign > 0))
        bits = np.unpackbits(reports.bits, axis=1, count=m).astype(bool)
        index = np.arange(n)
        return (own != other) & bits[index, own] & ~bits[index, other]

    return Event("separating row favours v", test, favours=1)


def event_probabilities(oracle, separated: float) -> tuple[float, float]:
    """P(E | v), P(E | v') of :func:`separating_event` given the share of rows separating."""
    p = oracle.p
    if isinstance(oracle, CMS):
        return separated * p**2, separated * (1 - p) ** 2
    return separated * p / 2, separated * (1 - p) / 2


class FixedFamily:
    """The client of one collection: the public hash family is fixed, the coins are not.

    ε-LDP must hold for every family (it is public and independent of the data); within
    one collection the reports are then independent, as the audit's Clopper-Pearson
    bounds need (a fresh family per batch would make batches differ).
    """

    def __init__(self, oracle, family):
        self.oracle, self.family = oracle, family

    def perturb(self, values, rng):
        return self.oracle.perturb(values, rng, family=self.family)


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
@pytest.mark.parametrize("cls", CLASSES)
def test_audit_no_false_alarm_and_tight(cls, epsilon: float) -> None:
    """The LDP-Auditor bound (Clopper-Pearson at ALPHA, our event + the generic search)
    stays below the realised loss and reaches what the event guarantees except with
    probability ALPHA (``expected_lower_bound`` at the ALPHA/2 quantiles)."""
    oracle = cls(epsilon=epsilon, domain_size=4, k=4, m=8)
    family = draw_family(4, np.random.default_rng(5))
    rows = np.arange(4)
    separated = float(
        np.mean(cells(np.zeros(4, int), family, rows, 8) != cells(np.ones(4, int), family, rows, 8))
    )
    assert separated > 0
    result = audit.lower_bound(
        FixedFamily(oracle, family),
        0,
        1,
        rng=seed_for(cls.name, "audit", epsilon),
        trials=AUDIT_TRIALS[epsilon],
        alpha=ALPHA,
        events=[separating_event(oracle, 0, 1), FeatureSearch()],
    )
    truth = declared_loss(oracle, family)
    assert result.epsilon <= truth <= epsilon, f"false alarm: {result}"
    p, p_other = event_probabilities(oracle, separated)
    assert math.log(p / p_other) == pytest.approx(truth, rel=1e-9)
    floor = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= floor >= 0.7 * epsilon, (str(result), floor)
