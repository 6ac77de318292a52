"""Projective-geometry response, PGR and HPGR (Feldman, Nelson, Nguyen, Talwar, ICML 2022).

The field F_q (primitive roots, inverses; the reference code's pitfall at q = 3), the
geometry (indices, incidences), the decoder against a brute-force count, the parameter
rules, the estimator and its exact variance with both engines, privacy (declared
likelihood, audit) and the anchor at n = 1000, d = 22000, ε = 4.  Statistics use
``oracle_testing``'s workload (d = 16, n = 4000, REPS = 2000) and its false-failure policy:
each assertion is a test at ALPHA = 1e-4, Bonferroni-corrected over the values it checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracle_testing import (
    ALPHA,
    COUNTS,
    REPS,
    D,
    draw,
    mean_z_scores,
    seed_for,
    variance_acceptance,
    z_critical,
)
from scipy import stats

from ldp import audit, theory
from ldp.algebra import is_prime
from ldp.oracles import HPGR, PGR
from ldp.oracles.projective import (
    incidence_sums,
    index_of,
    inverse_table,
    points,
    primitive_root,
    random_orthogonal,
    vectors_of,
)
from ldp.privacy import max_privacy_loss
from ldp.validation import ParameterError

PRIMES = [q for q in range(2, 400) if is_prime(q)]


# --- the field ------------------------------------------------------------------------------
@pytest.mark.parametrize("q", PRIMES)
def test_primitive_root_generates_the_whole_multiplicative_group(q: int) -> None:
    """Its powers are all of F_q^*: order q - 1, checked by listing them."""
    g = primitive_root(q)
    assert sorted(pow(g, i, q) for i in range(q - 1)) == list(range(1, q))


def test_primitive_root_of_3_is_2() -> None:
    """F_3^* = {1, 2}: 2 generates it, 1 does not (a root of order 1 breaks the tables)."""
    assert primitive_root(3) == 2
    assert list(inverse_table(3)) == [0, 1, 2]


@pytest.mark.parametrize("q", [2, 3, 5, 7, 59, 151, 65_537])
def test_inverse_table(q: int) -> None:
    inv = inverse_table(q)
    a = np.arange(1, q)
    assert np.all(a * inv[1:] % q == 1)
    assert inv[0] == 0


@pytest.mark.parametrize("q", [1, 4, 9, 15, 91])
def test_composite_orders_are_refused(q: int) -> None:
    with pytest.raises(ValueError, match="prime"):
        primitive_root(q)
    with pytest.raises(ParameterError) as error:
        PGR(epsilon=1.0, domain_size=10, q=q)
    assert error.value.name == "q"


# --- the geometry and the decoder -----------------------------------------------------------
GEOMETRIES = [(2, 2), (2, 4), (3, 2), (3, 3), (3, 5), (5, 3), (7, 4), (11, 3)]


@pytest.mark.parametrize(("q", "t"), GEOMETRIES)
def test_points_are_the_canonical_vectors_in_order(q: int, t: int) -> None:
    """Index -> vector -> index is the identity, every vector is canonical (leading 1) and
    distinct, and any nonzero multiple of a point has the point's index."""
    size, inv = points(q, t), inverse_table(q)
    vectors = vectors_of(np.arange(size), q, t)
    assert len({tuple(v) for v in vectors}) == size
    lead = np.argmax(vectors != 0, axis=1)
    assert np.all(vectors[np.arange(size), lead] == 1)
    assert np.array_equal(index_of(vectors, q, inv), np.arange(size))
    for scale in range(1, q):
        assert np.array_equal(index_of(vectors * scale % q, q, inv), np.arange(size))


@pytest.mark.parametrize(("q", "t"), GEOMETRIES)
def test_incidences_form_the_symmetric_design(q: int, t: int) -> None:
    """Each point lies on c_set = P_(t-1) hyperplanes, two points share c_int = P_(t-2)."""
    vectors = vectors_of(np.arange(points(q, t)), q, t)
    incidence = (vectors @ vectors.T) % q == 0
    assert np.all(incidence.sum(axis=1) == points(q, t - 1))
    shared = incidence.astype(np.int64) @ incidence.T.astype(np.int64)
    off = ~np.eye(points(q, t), dtype=bool)
    assert np.all(shared[off] == points(q, t - 2))


@pytest.mark.parametrize(("q", "t"), GEOMETRIES)
def test_incidence_sums_match_a_direct_count(q: int, t: int) -> None:
    """The dynamic programme equals Σ over the hyperplanes through x, block by block."""
    vectors = vectors_of(np.arange(points(q, t)), q, t)
    incidence = ((vectors @ vectors.T) % q == 0).astype(np.int64)
    hist = seed_for("PGR", "decode", q, t).integers(0, 1000, size=(3, points(q, t)))
    assert np.array_equal(incidence_sums(hist, q, t, inverse_table(q)), hist @ incidence.T)


@pytest.mark.parametrize(("q", "t"), [(3, 3), (5, 3), (2, 4)])
def test_random_orthogonal_is_uniform_over_the_hyperplanes_through_x(q: int, t: int) -> None:
    """χ² goodness of fit of the canonical index of the draw, uniform on the c_set
    hyperplanes through x, for every x (level α/P_t each)."""
    size, inv = points(q, t), inverse_table(q)
    vectors = vectors_of(np.arange(size), q, t)
    rng, n = seed_for("PGR", "orthogonal", q, t), 20_000
    for x in range(size):
        drawn = random_orthogonal(np.repeat(vectors[x : x + 1], n, axis=0), q, rng)
        assert np.all(drawn @ vectors[x] % q == 0) and np.all(drawn.any(axis=1))
        observed = np.bincount(index_of(drawn, q, inv), minlength=size)
        through = (vectors @ vectors[x]) % q == 0
        assert np.all(observed[~through] == 0)
        assert stats.chisquare(observed[through]).pvalue >= ALPHA / size


# --- parameter rules ------------------------------------------------------------------------
def test_the_reference_parameters() -> None:
    """q = the smallest prime >= ⌈e^ε + 1⌉; t >= 2 the smallest with P_t >= d (PGR);
    HPGR: q = 3, h = max(2, ⌈(e^ε + 1)/3⌉), t the smallest with h P_t >= d."""
    anchor = PGR(epsilon=4.0, domain_size=22_000)
    assert (anchor.q, anchor.t, anchor.order, anchor.c_set, anchor.c_int) == (
        59,
        4,
        208_920,
        3541,
        60,
    )
    timing = PGR(epsilon=5.0, domain_size=3_307_948)
    assert (timing.q, timing.t, timing.order) == (151, 4, 3_465_904)
    hybrid = HPGR(epsilon=5.0, domain_size=3_307_948)
    assert (hybrid.q, hybrid.h, hybrid.t, hybrid.block_size) == (3, 50, 11, 88_573)
    assert PGR(epsilon=0.1, domain_size=4).q == 3
    assert PGR(epsilon=1.0, domain_size=1000, q=2).t == 10  # 2^10 - 1 >= 1000


def test_hpgr_with_one_block_is_pgr() -> None:
    pgr, hpgr = PGR(epsilon=2.0, domain_size=50, q=5), HPGR(epsilon=2.0, domain_size=50, q=5, h=1)
    assert np.array_equal(pgr.report_probabilities(7), hpgr.report_probabilities(7))
    assert pgr.variance(3000, 40) == pytest.approx(hpgr.variance(3000, 40), rel=1e-12)


def test_pgr_variance_is_the_pure_protocol_variance() -> None:
    """With one block, ĉ = (I - n q*)/(p* - q*): [FO]'s variance with p* = p1, q* = p2."""
    oracle = PGR(epsilon=3.0, domain_size=500)
    for n_x in (0, 10, 900):
        expected = theory.pure_variance(1000, oracle.p_star, oracle.q_star, n_x)
        assert oracle.variance(1000, n_x) == pytest.approx(expected, rel=1e-12)


# --- unbiased, exact variance, both engines -------------------------------------------------
def user_cumulants(oracle, counts: np.ndarray, value: int) -> tuple[float, float]:
    """Σ over users of the 2nd and 4th cumulants of Z_u (ĉ = Σ Z_u), exactly: Z takes
    α+β+γ, β+γ or γ with the probabilities of the module docstring."""
    alpha, beta, gamma = oracle.coefficients()
    kappa, blocks = oracle.keep, oracle.blocks
    spread = (1 - kappa) * oracle.c_set / oracle.order
    r1, r3 = kappa + (1 - kappa) / blocks, (1 - kappa) / blocks
    support = np.array([alpha + beta + gamma, beta + gamma, gamma])

    def cumulants(p: float, r: float) -> tuple[float, float]:
        weights = np.array([p, r - p, 1 - r])
        mean = weights @ support
        m2, m4 = weights @ (support - mean) ** 2, weights @ (support - mean) ** 4
        return m2, m4 - 3 * m2**2

    block = oracle.block_of(np.arange(counts.shape[0])) == oracle.block_of(value)
    n, n_x, m = counts.sum(), counts[value], counts[block].sum()
    parts = ((n_x, (oracle.p_star, r1)), (m - n_x, (oracle.q_star, r1)), (n - m, (spread, r3)))
    k2 = sum(w * cumulants(*pr)[0] for w, pr in parts)
    k4 = sum(w * cumulants(*pr)[1] for w, pr in parts)
    return float(k2), float(k4)


CASES = [
    ("PGR", 1.0, {}),  # q = 5, t = 3: 31 points
    ("PGR", 4.0, {}),  # q = 59, t = 2: 60 points
    ("HPGR", 2.0, {}),  # q = 3, h = 3 blocks of 13: the heavy value shares its block
    ("HPGR", 4.0, {"q": 5}),  # q = 5, h = 12 blocks of 6
]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["reports", "sampled"])
@pytest.mark.parametrize(("name", "epsilon", "params"), CASES)
def test_unbiased_with_the_exact_variance(name: str, epsilon: float, params, engine) -> None:
    """z-test of the mean and χ² test of S²/Var against ``variances`` (α/d each); the
    variance is checked against the users' exact cumulants first."""
    oracle = {"PGR": PGR, "HPGR": HPGR}[name](epsilon=epsilon, domain_size=D, **params)
    rng = seed_for(name, epsilon, engine, tuple(params.items()))
    estimates = draw(oracle, COUNTS, engine, REPS, rng)
    variances = oracle.variances(COUNTS)
    z = mean_z_scores(estimates, COUNTS, variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=D), z
    moments = np.array([user_cumulants(oracle, COUNTS, v) for v in range(D)])
    assert np.allclose(moments[:, 0], variances, rtol=1e-9)
    ratio = estimates.var(axis=0, ddof=1) / variances
    lo, hi = variance_acceptance(REPS, moments[:, 1] / moments[:, 0] ** 2, ALPHA, m=D)
    assert ((ratio >= lo) & (ratio <= hi)).all(), (ratio, lo, hi)


def test_variance_takes_the_block_count() -> None:
    oracle = HPGR(epsilon=2.0, domain_size=D)
    block = oracle.block_of(np.arange(D))
    m = np.array([COUNTS[block == j].sum() for j in block])
    n = int(COUNTS.sum())
    assert np.allclose(
        oracle.variances(COUNTS),
        [oracle.variance(n, int(COUNTS[v]), int(m[v])) for v in range(D)],
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match="block_count must lie in"):
        oracle.variance(100, 10, 5)


def test_simulate_candidates_with_heavy_values() -> None:
    """Values with more kept users than b go through the multinomial path (values 0 and 5:
    about 0.37 n_x kept against b = 133), the others one by one; the law of the candidates
    given the whole sparse population is exact (means and variances)."""
    oracle, rng = PGR(epsilon=2.0, domain_size=30), seed_for("PGR", "candidates")
    assert (oracle.block_size, oracle.keep * 900 > 133, oracle.keep * 300 < 133) == (
        133,
        True,
        True,
    )
    values, counts = np.array([0, 2, 5, 17, 29]), np.array([3000, 4, 900, 300, 60])
    candidates = np.array([0, 1, 2, 29])
    draws = np.array(
        [oracle.simulate_candidates(values, counts, candidates, rng) for _ in range(REPS)]
    )
    full = np.zeros(30, dtype=np.int64)
    full[values] = counts
    variances = oracle.variances(full, candidates)
    z = mean_z_scores(draws, full[candidates], variances)
    assert np.abs(z).max() <= z_critical(ALPHA, m=4)
    lo, hi = variance_acceptance(REPS, 0.0, ALPHA, m=4)
    ratio = draws.var(axis=0, ddof=1) / variances
    assert ((ratio >= lo) & (ratio <= hi)).all(), ratio


def test_direct_count_and_decoder_agree() -> None:
    """Few candidates are counted pair by pair, the full domain through the decoder."""
    oracle = HPGR(epsilon=3.0, domain_size=200, q=3)
    reports = oracle.perturb(seed_for("HPGR", "paths").integers(0, 200, 5000), seed_for("p"))
    full = oracle.estimate(reports)
    some = oracle.estimate(reports, np.array([0, 13, 199]))
    assert np.allclose(full[[0, 13, 199]], some, rtol=1e-12, atol=1e-9)


# --- the anchor: n = 1000, d = 22000, ε = 4 --------------------------------------------------
#: [PGR]'s measured variance at the anchor: the mean over the 22,000 values of the squared
#: error, n = 1000 users.
PAPER_PGR = 76.03


def test_anchor_variance_matches_the_paper() -> None:
    """Mean over the values of Var[ĉ(x)] (it depends on the data only through n): 76.13.

    The paper's 76.03 is a mean of 22,000 squared errors of one run at least; each has
    variance ~2 Var² (near-normal estimates), so its standard error is at most
    76 √(2/22000) = 0.72 and the gap, 0.10, is 0.14 of it (accepted at z(α))."""
    d, n = 22_000, 1000
    oracle = PGR(epsilon=4.0, domain_size=d)
    exact = oracle.variance(n, n / d)  # linear in n_x: the mean over values
    assert exact == pytest.approx(76.13, abs=0.005)
    assert oracle.variance(n, 0) == pytest.approx(76.08, abs=0.005)
    se = exact * math.sqrt(2 / d)
    assert abs(exact - PAPER_PGR) <= z_critical(ALPHA) * se


@pytest.mark.slow
def test_anchor_measured_with_the_sampled_engine() -> None:
    """The sampled engine's mean squared error over 4 populations of 1000 users drawn
    uniformly agrees with the exact 76.13 (z-test at α, SE from the 88,000 squared errors
    treated as independent: their correlation through n is O(1/d))."""
    d, n = 22_000, 1000
    oracle, rng = PGR(epsilon=4.0, domain_size=d), seed_for("PGR", "anchor")
    errors = []
    for _ in range(4):
        counts = np.bincount(rng.integers(0, d, n), minlength=d)
        errors.append((oracle.simulate(counts, rng) - counts) ** 2)
    errors = np.concatenate(errors)
    exact = oracle.variance(n, n / d)
    z = (errors.mean() - exact) / (errors.std(ddof=1) / math.sqrt(errors.shape[0]))
    assert abs(z) <= z_critical(ALPHA), (errors.mean(), exact)


# --- privacy ---------------------------------------------------------------------------------
PRIVACY = [
    (PGR, 0.1, 5, {}),
    (PGR, 2.0, 17, {}),
    (PGR, 4.0, 40, {}),
    (PGR, 2.0, 40, {"q": 2}),
    (HPGR, 2.0, 17, {}),
    (HPGR, 5.0, 40, {}),
    (HPGR, 1.0, 40, {"q": 5, "h": 3}),
]


@pytest.mark.parametrize(("cls", "epsilon", "domain_size", "params"), PRIVACY)
def test_declared_likelihood_is_epsilon_ldp_and_tight(cls, epsilon, domain_size, params) -> None:
    oracle = cls(epsilon=epsilon, domain_size=domain_size, **params)
    for value in (0, domain_size - 1):
        assert oracle.report_probabilities(value).sum() == pytest.approx(1.0, abs=1e-12)
    loss = max_privacy_loss(oracle)
    assert epsilon * (1 - 1e-8) <= loss <= epsilon * (1 + 1e-12)
    p, p_other = oracle.audit_event_probabilities()
    event = oracle.audit_events(0, 1)[0].test(np.arange(oracle.order))
    assert p == pytest.approx(oracle.report_probabilities(0)[event].sum(), rel=1e-12)
    assert p_other == pytest.approx(oracle.report_probabilities(1)[event].sum(), rel=1e-12)


@pytest.mark.parametrize(("cls", "epsilon"), [(PGR, 1.0), (PGR, 4.0), (HPGR, 2.0)])
def test_reports_follow_the_declared_probabilities(cls, epsilon: float) -> None:
    """χ² goodness of fit of perturb's reports of each value to report_probabilities."""
    oracle = cls(epsilon=epsilon, domain_size=9)
    rng, n = seed_for(cls.name, "gof", epsilon), 40_000
    for value in range(9):
        reports = oracle.perturb(np.full(n, value), rng)
        expected = n * oracle.report_probabilities(value)
        observed = np.bincount(reports, minlength=oracle.order)
        assert stats.chisquare(observed, expected).pvalue >= ALPHA / 9


@pytest.mark.parametrize(("cls", "epsilon"), [(PGR, 1.0), (PGR, 4.0), (HPGR, 3.0)])
def test_passes_its_audit(cls, epsilon: float) -> None:
    """No false alarm (bound <= ε at level 1e-4) and the optimal event's guaranteed bound."""
    oracle = cls(epsilon=epsilon, domain_size=100)
    result = audit.lower_bound(
        oracle, 0, 1, rng=seed_for(cls.name, "audit", epsilon), trials=50_000, alpha=ALPHA
    )
    assert result.epsilon <= epsilon, f"false alarm: {result}"
    p, p_other = oracle.audit_event_probabilities()
    floor = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= floor > 0, (result, floor)


def test_a_client_that_overweights_its_hyperplanes_is_caught() -> None:
    """Declares ε = 1 but keeps with ε = 3's κ: the audit's bound exceeds 1."""

    class Leaky(PGR):
        def perturb(self, values, rng):
            return PGR(epsilon=3.0, domain_size=self.domain_size, q=self.q).perturb(values, rng)

    oracle = Leaky(epsilon=1.0, domain_size=40)
    result = audit.lower_bound(oracle, 0, 1, rng=seed_for("PGR", "leaky"), trials=50_000)
    assert result.epsilon > 1.0, str(result)


# --- bad input -------------------------------------------------------------------------------
def test_bad_parameters_and_reports_are_refused() -> None:
    with pytest.raises(TypeError, match="q must be an integer"):
        PGR(epsilon=1.0, domain_size=10, q=5.0)
    with pytest.raises(ParameterError) as error:
        PGR(epsilon=20.0, domain_size=10)
    assert error.value.name == "epsilon"
    with pytest.raises(ParameterError) as error:
        HPGR(epsilon=1.0, domain_size=10, h=0)
    assert error.value.name == "h"
    with pytest.raises(ParameterError, match="memory budget"):
        PGR(epsilon=1.0, domain_size=2**40)
    oracle = PGR(epsilon=1.0, domain_size=9)
    assert oracle.order == 31
    with pytest.raises(ValueError, match=r"reports must lie in \[0, 31\), found 31"):
        oracle.estimate(np.array([0, 31]))
    with pytest.raises(ValueError, match=r"values must lie in \[0, 9\)"):
        oracle.perturb(np.array([9]), np.random.default_rng(0))
    with pytest.raises(ValueError, match="candidates must be distinct"):
        oracle.simulate(np.ones(9, dtype=np.int64), np.random.default_rng(0), [1, 1])


def test_the_sampled_engine_draws_fields_beyond_16_bit_digits_in_bounded_memory():
    """q >= 2^16 (ε ≈ 11.5): no unbiased digit comes from a 16-bit piece, and a q x q
    table would take 78 GiB; the engine draws each kept user from the generator instead.
    Mean over 200 runs within 4.4 standard errors (level 1e-5) of the counts."""
    import tracemalloc

    from ldp.oracles.projective import PGR

    oracle = PGR(epsilon=11.5, domain_size=3)
    assert oracle.q >= 1 << 16
    held, counts = np.arange(3), np.full(3, 1000)
    tracemalloc.start()
    draws = np.array(
        [
            oracle.simulate_candidates(held, counts, held, np.random.default_rng(seed))
            for seed in range(200)
        ]
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20
    standard_error = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - counts) < 4.4 * standard_error)


@pytest.mark.parametrize("cls", [PGR, HPGR])
def test_the_kept_geometry_tables_give_what_rebuilding_them_gives(cls, monkeypatch) -> None:
    """The per-process tables (``projective._memo``) are the integers each call would
    build: the same draws with them kept, rebuilt on every call (MEMO_ENTRIES = 0) and
    reused from a first call; they are read-only, so no caller can change them."""
    from ldp.oracles import projective

    oracle = cls(epsilon=2.0, domain_size=60)
    counts = np.random.default_rng(4).integers(0, 30, size=60)
    values = np.repeat(np.arange(60), counts)

    def outputs() -> list[np.ndarray]:
        rng = np.random.default_rng(11)
        return [oracle.simulate(counts, rng), oracle.estimate(oracle.perturb(values, rng))]

    monkeypatch.setattr(projective, "_MEMO", {})
    kept, reused = outputs(), outputs()
    assert projective._MEMO and all(
        not array.flags.writeable
        for table in projective._MEMO.values()
        for array in (table if isinstance(table, tuple) else (table,))
    )
    monkeypatch.setattr(projective, "MEMO_ENTRIES", 0)
    rebuilt = outputs()
    for a, b, c in zip(kept, reused, rebuilt, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, c)
