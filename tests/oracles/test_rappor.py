"""RAPPOR ([RAPPOR] Erlingsson, Pihur, Korolova, CCS 2014): privacy, client, both engines.

False-failure policy as in ``oracle_testing``: each statistical assertion is a test at
level ALPHA = 1e-4 (Bonferroni over what it checks), with fixed seeds.

Workload: d = 12 values over k = 8 bits, h = 2 hashes, m = 4 cohorts (32 rows for 12
unknowns), n = 3000 users with one value held by half of them and two values held by none.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
from oracle_testing import ALPHA, assert_same_moments, engine_samples, seed_for, z_critical
from scipy import stats

from ldp import audit, registry
from ldp.audit import Event
from ldp.contract import Capabilities
from ldp.oracles import SUE, rappor
from ldp.oracles.rappor import decoder as rappor_decode
from ldp.oracles.rappor.protocol import (
    RAPPOR,
    CohortCounts,
    RapporClients,
    RapporReports,
    bloom_positions,
    bloom_table,
    rappor_epsilon_inf,
    rappor_epsilon_one,
    rappor_f,
    rappor_longitudinal_epsilon,
    sample_cohort_counts,
    unpack,
)
from ldp.privacy import max_privacy_loss
from ldp.validation import ParameterError

D, K, H, M = 12, 8, 2, 4
COUNTS = np.array([1500, 600, 300, 200, 120, 80, 60, 50, 50, 40, 0, 0], dtype=np.int64)
N = int(COUNTS.sum())
REPS = 300


def small(epsilon: float = 2.0, **kwargs) -> RAPPOR:
    return RAPPOR(epsilon=epsilon, domain_size=D, k=K, h=H, m=M, **kwargs)


# --- 1. the closed forms against the reference implementation's presets ---------------------
@pytest.mark.parametrize(
    ("p", "q", "f", "h", "eps_one", "eps_inf"),
    [
        (0.39, 0.61, 0.45, 2, 0.9728, 4.9471),  # google/rappor regression preset
        (0.225, 0.775, 0.0, 2, 4.9471, math.inf),  # no PRR: one report is all there is
        (0.5, 0.75, 0.5, 2, 1.0743, 4.3944),  # the client's defaults
    ],
)
def test_presets_epsilon_to_four_decimals(p, q, f, h, eps_one, eps_inf) -> None:
    assert round(rappor_epsilon_one(f, p, q, h), 4) == eps_one
    assert rappor_epsilon_inf(f, h) == pytest.approx(eps_inf, abs=5e-5)
    # the oracle with these parameters, at an epsilon that admits them: same numbers
    oracle = RAPPOR(epsilon=5.0, domain_size=4, p=p, q=q, f=f, h=h)
    assert round(oracle.epsilon_one, 4) == eps_one
    assert oracle.epsilon_inf == pytest.approx(eps_inf, abs=5e-5)


def test_f_solved_from_epsilon_gives_epsilon_inf() -> None:
    for epsilon in (0.5, 2.0, 6.0, 20.0):
        oracle = RAPPOR(epsilon=epsilon, domain_size=4)
        assert oracle.f_realised >= rappor_f(epsilon, oracle.h)  # rounded the private way
        assert oracle.epsilon_inf <= epsilon
        assert oracle.epsilon_inf == pytest.approx(epsilon, rel=1e-12)
        assert oracle.epsilon_one < epsilon


def test_longitudinal_loss_runs_from_epsilon_one_to_epsilon_inf() -> None:
    f, p, q, h = 0.5, 0.5, 0.75, 2
    one, inf = rappor_epsilon_one(f, p, q, h), rappor_epsilon_inf(f, h)
    assert rappor_longitudinal_epsilon(f, p, q, h, 1) == pytest.approx(one, rel=1e-12)
    losses = [rappor_longitudinal_epsilon(f, p, q, h, t) for t in (1, 2, 5, 20, 200)]
    assert all(a < b for a, b in zip(losses, losses[1:], strict=False))
    assert losses[-1] == pytest.approx(inf, rel=1e-9)
    assert rappor_longitudinal_epsilon(f, p, q, h, 20, memoized=False) == pytest.approx(20 * one)
    # one-time RAPPOR (the report is the PRR): every T shows the same B'
    assert rappor_longitudinal_epsilon(f, 0.0, 1.0, h, 7) == pytest.approx(inf, rel=1e-12)


# --- 2. parameters --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be >= 1"),
        ({"k": 257}, "k must be <= 256"),
        ({"h": 17}, "h must be <= 16"),
        ({"m": 0}, "m must be >= 1"),
        ({"p": 0.8}, "p must be < q"),
        ({"q": 1.5}, r"q must be in \[0, 1\]"),
        ({"f": -0.1}, r"f must be in \[0, 1\]"),
        ({"f": 1.0}, "f must be < 1"),
        ({"f": 0.01}, "epsilon_1 = .* > epsilon"),
        ({"p": "a"}, "p must be a real number"),
        ({"domain_size": 10_000}, "domain_size = 10000 exceeds m k"),
        ({"basic": 1}, "basic must be a bool"),
    ],
)
def test_bad_parameters_are_refused(kwargs, message) -> None:
    arguments = {"epsilon": 1.0, "domain_size": 8} | kwargs
    with pytest.raises((ValueError, TypeError), match=message):
        RAPPOR(**arguments)


def test_epsilon_too_large_for_the_grid_is_refused() -> None:
    with pytest.raises(ValueError, match="largest safe epsilon is 146.9"):
        RAPPOR(epsilon=150.0, domain_size=4)


def test_registered_for_the_harness() -> None:
    entry = registry.get("RAPPOR")
    assert entry.kind == "oracle" and entry.cls is RAPPOR
    names = [spec.name for spec in registry.parameters(RAPPOR)]
    assert names == ["k", "h", "m", "f", "p", "q", "basic", "client", "allow_no_noise"]


# --- 3. encoding ----------------------------------------------------------------------------
def test_bloom_positions_are_googles() -> None:
    """MD5 of the 4-byte big-endian cohort then the value's bytes; byte i mod k."""
    digest = hashlib.md5(b"\x00\x00\x00\x05" + b"abc").digest()
    assert bloom_positions(b"abc", 5, 3, 16) == (digest[0] % 16, digest[1] % 16, digest[2] % 16)
    oracle = small()
    assert tuple(oracle.positions([7])[3, 0]) == bloom_positions(b"7", 3, H, K)


def test_vectorised_md5_table_is_hashlibs() -> None:
    """bloom_table's numpy MD5 (one block per message) gives hashlib's bytes, for values of
    every length around the one-block limit (51 bytes after the cohort) and k up to 256."""
    rng = np.random.default_rng(12)
    values = [rng.bytes(int(size)) for size in rng.integers(0, 70, 200)]
    values += [b"", b"x" * 50, b"x" * 51, b"x" * 52, b"\xff" * 51]
    for h, k in ((16, 256), (2, 32), (3, 7)):
        table = bloom_table(values, 300, h, k)
        for c in (0, 1, 255, 256, 299):
            expected = [bloom_positions(v, c, h, k) for v in values]
            assert np.array_equal(table[c], expected), (c, h, k)


def test_reports_round_trip_through_googles_integers() -> None:
    oracle = small()
    reports = oracle.perturb(np.arange(D), seed_for("rappor", "ints"))
    integers = reports.as_integers()
    bits = unpack(reports.bits, K)
    assert np.array_equal(integers, (bits * (1 << np.arange(K))).sum(axis=1))
    back = RapporReports.from_integers(reports.cohorts, integers, K)
    assert np.array_equal(back.bits, reports.bits)


def test_reports_of_another_shape_are_refused() -> None:
    oracle = small()
    reports = oracle.perturb(np.arange(D), seed_for("rappor", "refuse"))
    with pytest.raises(TypeError, match="RapporReports"):
        oracle.estimate(reports.bits)
    with pytest.raises(ValueError, match="k = 16 bits"):
        oracle.estimate(reports._replace(k=16))
    with pytest.raises(ValueError, match="cohorts must lie in"):
        oracle.estimate(reports._replace(cohorts=reports.cohorts + M))


# --- 4. privacy: declared likelihood, and the real client audited ---------------------------
def cohort_view(oracle: RAPPOR, cohort: int):
    """The bits of one cohort's reports as a ``bits``-model protocol of ldp.privacy."""

    class View:
        capabilities = Capabilities(report_model="bits")
        domain_size = oracle.domain_size

        @staticmethod
        def report_probabilities(value: int) -> np.ndarray:
            return oracle.report_probabilities(value, cohort)

    return View()


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
@pytest.mark.parametrize("variant", ["longitudinal", "one_time"])
def test_declared_privacy_loss_is_epsilon_one(epsilon: float, variant: str) -> None:
    """max over cohorts of the bits model's loss: h ln(q*(1-p*)/(p*(1-q*))) for values
    whose filters are disjoint, less where they share a bit; never above ε."""
    extra = {"p": 0.0, "q": 1.0} if variant == "one_time" else {}
    oracle = small(epsilon, **extra)
    losses = [max_privacy_loss(cohort_view(oracle, c)) for c in range(M)]
    assert max(losses) == pytest.approx(oracle.epsilon_one, rel=1e-12)
    assert max(losses) <= epsilon * (1 + 1e-12)
    if variant == "one_time":
        assert oracle.epsilon_one == pytest.approx(oracle.epsilon_inf, rel=1e-12)


def test_basic_one_time_rappor_is_sue() -> None:
    """Basic RAPPOR with no IRR: bit v kept w.p. 1 - f/2, f/2 = 1/(e^{ε/2} + 1) ([FO] 4.3)."""
    for epsilon in (0.5, 2.0, 6.0):
        basic = RAPPOR(epsilon=epsilon, domain_size=6, basic=True, p=0.0, q=1.0)
        sue = SUE(epsilon=epsilon, domain_size=6)
        assert basic.q_star == pytest.approx(sue.p_star, rel=1e-14)
        assert basic.p_star == pytest.approx(sue.q_star, rel=1e-13)
        assert max_privacy_loss(cohort_view(basic, 0)) == pytest.approx(epsilon, rel=1e-12)


def disjoint_pair(oracle: RAPPOR) -> tuple[int, int]:
    """Two values whose filters in cohort 0 have h distinct bits each and share none."""
    table = oracle.positions()[0]
    for v in range(oracle.domain_size):
        for w in range(v):
            a, b = set(table[v]), set(table[w])
            if len(a) == len(b) == oracle.h and not a & b:
                return v, w
    raise AssertionError("no disjoint pair")


def bloom_events(oracle: RAPPOR, v: int, w: int) -> list[Event]:
    """All of v's bits set and none of w's (evidence for v), and the mirror event."""
    table = oracle.positions()

    def pattern(ones: int, zeros: int):
        def test(reports: RapporReports) -> np.ndarray:
            bits = unpack(reports.bits, oracle.k)
            rows = np.arange(bits.shape[0])[:, None]
            own = table[reports.cohorts, ones]
            other = table[reports.cohorts, zeros]
            return bits[rows, own].all(axis=1) & ~bits[rows, other].any(axis=1)

        return test

    return [
        Event("v's bits set, w's unset", pattern(v, w), +1),
        Event("w's bits set, v's unset", pattern(w, v), -1),
    ]


def event_probabilities(oracle: RAPPOR) -> tuple[float, float]:
    q, p = oracle.q_star, oracle.p_star
    return (q * (1 - p)) ** oracle.h, (p * (1 - q)) ** oracle.h


@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
@pytest.mark.parametrize("variant", ["longitudinal", "one_time"])
def test_rappor_passes_its_audit(epsilon: float, variant: str) -> None:
    """One cohort, two values with disjoint filters: the optimal event's bound stays below
    ε₁ (no false alarm at ALPHA) and reaches its guaranteed value (the audit is tight)."""
    extra = {"p": 0.0, "q": 1.0} if variant == "one_time" else {}
    oracle = RAPPOR(epsilon=epsilon, domain_size=K, k=K, h=H, m=1, **extra)
    v, w = disjoint_pair(oracle)
    result = audit.lower_bound(
        oracle,
        v,
        w,
        rng=seed_for("audit", epsilon, variant),
        trials=100_000,
        alpha=ALPHA,
        events=bloom_events(oracle, v, w),
    )
    assert result.epsilon <= oracle.epsilon_one <= epsilon * (1 + 1e-12), str(result)
    p, p_other = event_probabilities(oracle)
    assert math.log(p / p_other) == pytest.approx(oracle.epsilon_one, rel=1e-9)
    guaranteed = audit.expected_lower_bound(
        p, p_other, result.trials, alpha=ALPHA, hypotheses=result.hypotheses, quantile=ALPHA / 2
    )
    assert result.epsilon >= guaranteed, str(result)
    if oracle.epsilon_one >= 1:  # below, 10^5 trials cannot resolve a ratio that close to 1
        assert guaranteed >= 0.6 * oracle.epsilon_one  # design: the audit is informative


class NeverClearsAOne(RAPPOR):
    """The bug of a peer library's RAPPOR client: randomization only ever adds ones."""

    def permanent(self, bloom, rng):
        return bloom | super().permanent(bloom, rng)

    def instantaneous(self, prr, rng):
        return prr | super().instantaneous(prr, rng)


def test_a_client_that_never_clears_a_one_is_caught() -> None:
    """Under w, w's bits are always set: 'some bit of w unset' never happens under w."""
    oracle = NeverClearsAOne(epsilon=2.0, domain_size=K, k=K, h=H, m=1)
    v, w = disjoint_pair(oracle)
    own = oracle.positions()[0, w]

    def w_bit_unset(reports: RapporReports) -> np.ndarray:
        return ~unpack(reports.bits, K)[:, own].all(axis=1)

    result = audit.lower_bound(
        oracle,
        v,
        w,
        rng=seed_for("never"),
        trials=50_000,
        alpha=ALPHA,
        events=[Event("a bit of w unset", w_bit_unset, +1)],
    )
    assert result.epsilon > oracle.epsilon_one + 5, str(result)


# --- 5. the client's bits follow the declared probabilities ---------------------------------
def test_report_bits_follow_the_declared_probabilities() -> None:
    """Per (cohort, bit), the ones among reports of one value: binomial(n_c, declared)."""
    oracle = small(1.0)
    value = 3
    reports = oracle.perturb(np.full(40_000, value), seed_for("rappor", "bits"))
    counts = oracle.cohort_counts(reports)
    expected = np.stack([oracle.report_probabilities(value, c) for c in range(M)])
    n_c = counts.reports[:, None]
    z = (counts.ones - n_c * expected) / np.sqrt(n_c * expected * (1 - expected))
    assert np.abs(z).max() < z_critical(ALPHA, M * K)


# --- 6. unbiased, exact variance, engines agree -----------------------------------------------
def draws(oracle: RAPPOR, engine: str, key: str) -> np.ndarray:
    rng = seed_for("rappor", engine, key)
    values = np.repeat(np.arange(D), COUNTS)
    if engine == "reports":
        return np.stack([oracle.estimate(oracle.perturb(values, rng)) for _ in range(REPS)])
    return np.stack([oracle.simulate(COUNTS, rng) for _ in range(REPS)])


@pytest.fixture(scope="module")
def workload() -> dict[str, np.ndarray]:
    oracle = small(2.0)
    return {engine: draws(oracle, engine, "workload") for engine in ("reports", "sampled")}


@pytest.mark.parametrize("engine", ["reports", "sampled"])
def test_unbiased_with_the_exact_variance(workload, engine: str) -> None:
    """z-test of the mean and chi-square test of the sample variance, per value (α/2d each)."""
    oracle = small(2.0)
    estimates = workload[engine]
    variances = oracle.variances(COUNTS)
    z = (estimates.mean(axis=0) - COUNTS) / np.sqrt(variances / REPS)
    assert np.abs(z).max() < z_critical(ALPHA / 2, D), z
    ratio = estimates.var(axis=0, ddof=1) / variances * (REPS - 1)
    low = stats.chi2.ppf(ALPHA / (4 * D), REPS - 1)
    high = stats.chi2.isf(ALPHA / (4 * D), REPS - 1)
    assert np.all((low < ratio) & (ratio < high)), ratio / (REPS - 1)


def test_engines_agree_in_distribution(workload) -> None:
    """Two-sample KS on the large, a small and an absent value (α/3 each)."""
    for value in (0, 8, 11):
        result = stats.ks_2samp(workload["reports"][:, value], workload["sampled"][:, value])
        assert result.pvalue >= ALPHA / 3, (value, result)


def test_variance_average_matches_variances() -> None:
    """variance(n, c) is the domain average of variances() for an even spread."""
    oracle = small(2.0)
    n, c = 3300, 300
    totals = []
    for v in range(D):
        counts = np.full(D, (n - c) // (D - 1), dtype=np.int64)
        counts[v] = c
        totals.append(oracle.variances(counts)[v])
    even = (n - c) // (D - 1) * (D - 1) + c
    assert oracle.variance(even, c) == pytest.approx(np.mean(totals), rel=1e-12)


def test_basic_rappor_variance_is_the_pure_framework() -> None:
    oracle = RAPPOR(epsilon=1.0, domain_size=5, basic=True)
    p, q = oracle.q_star, oracle.p_star  # the pure framework's p* (own bit) and q* (other)
    n, c = 1000, 100
    pure = n * q * (1 - q) / (p - q) ** 2 + c * (1 - p - q) / (p - q)
    assert oracle.variance(n, c) == pytest.approx(pure, rel=1e-12)


def test_candidates_select_entries_of_the_full_fit() -> None:
    oracle = small()
    reports = oracle.perturb(np.repeat(np.arange(D), COUNTS), seed_for("rappor", "cand"))
    full = oracle.estimate(reports)
    assert np.array_equal(oracle.estimate(reports, candidates=[3, 0]), full[[3, 0]])


def test_simulate_candidates_is_exact_for_the_whole_population() -> None:
    """Two candidates of the skewed workload (value 0, no candidate, holds half the users):
    both engines agree on their means, variances and covariance (two-sample z at ALPHA,
    Bonferroni over 5) and the sampled variances are :meth:`RAPPOR.variances` (z of the
    squared errors, normal at R = 1000).  The sampled engine gets the sparse histogram of
    every user, since the fit reads every value's Bloom bits."""
    oracle, candidates, reps = small(2.0), np.array([3, 5]), 1000
    samples = engine_samples(oracle, COUNTS, candidates, reps, "skewed")
    assert_same_moments(samples["reports"], samples["sampled"])
    squared = (samples["sampled"] - COUNTS[candidates]) ** 2
    variances = oracle.variances(COUNTS)[candidates]
    z = (squared.mean(axis=0) - variances) / (squared.std(axis=0, ddof=1) / math.sqrt(reps))
    assert np.abs(z).max() < z_critical(ALPHA, 2), z


# --- 7. many reports per client: the memoized PRR -------------------------------------------
def test_memoized_prr_is_reused_and_irr_is_fresh() -> None:
    """Two reports of the same value share B': P(S1 = S2 = 1 | B = 1) is
    (1 - f/2) q^2 + (f/2) p^2, not q*^2 (z-test on the pooled bits of the filters)."""
    oracle = small(2.0, p=0.1, q=0.9)  # far apart: the shared B' shows clearly
    rng = seed_for("rappor", "memo")
    n = 20_000
    clients = RapporClients.new(oracle, n, rng)
    values = np.full(n, 5)
    first, second = clients.report(values, rng), clients.report(values, rng)
    assert clients.memoized == n
    own = oracle.positions()[clients.cohorts, 5]  # (n, h)
    rows = np.arange(n)[:, None]
    both = (unpack(first.bits, K)[rows, own] & unpack(second.bits, K)[rows, own]).ravel()
    f, p, q = oracle.f_realised, oracle.p_realised, oracle.q_realised
    expected = (1 - f / 2) * q**2 + (f / 2) * p**2
    distinct = own[:, 0] != own[:, 1]
    sample = both.reshape(n, H)[distinct].ravel()
    z = (sample.mean() - expected) / math.sqrt(expected * (1 - expected) / sample.size)
    assert abs(z) < z_critical(ALPHA, 2)
    independent = oracle.q_star**2  # what two fresh PRRs would give
    z_fresh = (sample.mean() - independent) / math.sqrt(independent / sample.size)
    assert abs(z_fresh) > z_critical(ALPHA, 2)
    # a new value gets its own PRR; the old one is kept
    clients.report(np.full(n, 6), rng)
    assert clients.memoized == 2 * n


def test_counts_of_a_collection_decode_from_cohort_counts() -> None:
    oracle = small()
    reports = oracle.perturb(np.repeat(np.arange(D), COUNTS), seed_for("rappor", "cc"))
    counts = oracle.cohort_counts(reports)
    assert isinstance(counts, CohortCounts) and counts.reports.sum() == N
    bits = unpack(reports.bits, K)
    for c in range(M):
        assert np.array_equal(counts.ones[c], bits[reports.cohorts == c].sum(axis=0))


# --- 8. the paper's decoder on a candidate list ---------------------------------------------
#: 10 Zipf(1) values among 200 candidates, 16 cohorts x 32 bits (512 rows), n = 4 10^5:
#: every true value is far above the cut-off and always selected.
DECODE_TRUE = 10
DECODE_CANDIDATES = 200
DECODE_REPS = 40


@pytest.fixture(scope="module")
def decodings():
    """Each repetition decodes the same counts twice: against the 200 candidates, and
    against the true values only (the model the least-squares step assumes)."""
    oracle = RAPPOR(epsilon=4.0, domain_size=400, k=32, h=2, m=16)
    counts = np.zeros(400, dtype=np.int64)
    ranks = np.arange(1, DECODE_TRUE + 1)
    counts[:DECODE_TRUE] = np.round(4e5 / ranks / (1 / ranks).sum()).astype(np.int64)
    rng = seed_for("rappor", "decode")
    full, exact = [], []
    for _ in range(DECODE_REPS):
        collected = oracle.simulate_counts(counts, rng)
        full.append(oracle.decode(collected, np.arange(DECODE_CANDIDATES)))
        exact.append(oracle.decode(collected, np.arange(DECODE_TRUE)))
    return counts[:DECODE_CANDIDATES], full, exact


def z_scores(results, truth) -> np.ndarray:
    heavy = np.arange(DECODE_TRUE)
    assert all(r.selected[heavy].all() and r.detected[heavy].all() for r in results)
    return np.stack([(r.estimates[heavy] - truth[heavy]) / r.std_errors[heavy] for r in results])


def test_decoder_estimates_are_within_their_standard_errors(decodings) -> None:
    """Fitted on the values present, (estimate - truth)/SE is N(0, 1): the mean of z by a
    z-test and the sum of z^2 by a chi-square test (α/2 each)."""
    truth, _, exact = decodings
    z = z_scores(exact, truth)
    cells = z.size
    assert abs(z.mean()) * math.sqrt(cells) < z_critical(ALPHA / 2)
    chi2 = float((z**2).sum())
    assert stats.chi2.ppf(ALPHA / 4, cells) < chi2 < stats.chi2.isf(ALPHA / 4, cells), chi2 / cells


def test_decoder_selection_bias_is_a_fraction_of_the_standard_error(decodings) -> None:
    """Against 200 candidates the LASSO also keeps a few absent ones whose noise happened
    to fit their bits, taking some of the true values' mass: the refitted estimates are
    biased by selection (about -0.35 SE here).  The test: the bias is below half an SE
    (z-test at ALPHA), and the SEs still measure the spread (z^2 within [0.5, 2])."""
    truth, full, _ = decodings
    z = z_scores(full, truth)
    assert abs(z.mean()) < 0.5 + z_critical(ALPHA) / math.sqrt(z.size), z.mean()
    assert 0.5 < float((z - z.mean()).var()) < 2.0


def test_decoder_false_detections_respect_the_cut_off(decodings) -> None:
    """Candidates nobody holds: a decode detecting any of them happens w.p. <= alpha = 0.05
    (Bonferroni); binomial test over the repetitions at ALPHA."""
    truth, results, _ = decodings
    absent = truth == 0
    false = sum(bool(r.detected[absent].any()) for r in results)
    assert false <= stats.binom.isf(ALPHA, DECODE_REPS, 0.05), false
    assert all(np.isnan(r.std_errors[~r.selected]).all() for r in results)


def test_decoder_refuses_bad_input() -> None:
    oracle = small()
    counts = oracle.cohort_counts(oracle.perturb(np.arange(D), seed_for("rappor", "bad")))
    with pytest.raises(ValueError, match="alpha must lie in"):
        oracle.decode(counts, np.arange(4), alpha=0.0)
    with pytest.raises(ValueError, match="penalty must be >= 0"):
        oracle.decode(counts, np.arange(4), penalty=-1.0)
    with pytest.raises(ValueError, match="candidates must lie in"):
        oracle.decode(counts, np.array([D]))


def test_working_set_lasso_meets_the_full_problems_optimality_conditions() -> None:
    """The LASSO grown on a working set (small first set, so it takes several rounds) is
    the full problem's solution: at x >= 0, g = X'(t - X x) <= λ for every column and
    g = λ where x > 0 (KKT), within the solver's tolerance (FISTA stops when no coefficient
    moves by 10^-4 of the largest, which leaves g within ~0.1% of λ; 1% and 2% allowed)."""
    oracle = RAPPOR(epsilon=4.0, domain_size=2, k=32, h=2, m=16)
    positions = bloom_table([b"candidate %d" % j for j in range(600)], 16, 2, 32)
    counts = np.zeros(600, dtype=np.int64)
    counts[:30] = np.round(2e5 / np.arange(1, 31)).astype(np.int64)
    collected = sample_cohort_counts(oracle, positions, counts, seed_for("rappor", "kkt"))
    x = rappor_decode.design_matrix(positions, oracle.k)
    t = oracle.unbiased_bits(collected).ravel()
    penalty = rappor_decode.decode(oracle, collected, positions).penalty
    original = rappor_decode.WORKING_SET
    try:
        rappor_decode.WORKING_SET = 8
        coef = rappor_decode.screened_lasso(x, t, penalty)
    finally:
        rappor_decode.WORKING_SET = original
    gradient = x.T @ (t - x @ coef)
    assert (coef >= 0).all() and (coef > 0).sum() >= 30
    assert gradient.max() <= penalty * (1 + 1e-2)
    active = coef > 0
    assert np.abs(gradient[active] - penalty).max() <= 0.02 * penalty


# --- 9. errors that name the parameter, and resource bounds ---------------------------------
@pytest.mark.parametrize(("name", "kwargs"), [("f", {"f": 1e-20}), ("p", {"p": 1e-20})])
def test_a_coin_finer_than_the_grid_names_its_parameter(name, kwargs) -> None:
    with pytest.raises(ParameterError, match=f"^{name} must be") as caught:
        RAPPOR(epsilon=5.0, domain_size=4, **kwargs)
    assert caught.value.name == name and caught.value.value == 1e-20


def test_a_client_needs_a_given_f() -> None:
    with pytest.raises(ParameterError, match="client = 'python' realises a given f"):
        RAPPOR(epsilon=2.0, domain_size=4, client="python")


@pytest.mark.parametrize(
    ("kwargs", "name", "limit"),
    [
        ({"m": 10**7}, "m", rappor.MAX_CELLS // 32),  # the m k counters
        ({"basic": True, "domain_size": 10**9}, "domain_size", rappor.MAX_CELLS),
    ],
)
def test_tables_beyond_the_budget_are_refused_before_allocating(kwargs, name, limit) -> None:
    arguments = {"epsilon": 2.0, "domain_size": 8} | kwargs
    with pytest.raises(ParameterError) as caught:
        RAPPOR(**arguments)
    error = caught.value
    assert error.name == name and error.allowed == f"<= {limit}"
    assert f"{rappor.MAX_CELLS:,}" in str(error)  # the limit, next to the estimate


def test_hashing_too_many_candidates_is_refused_before_allocating() -> None:
    """The oracle hashes its whole domain (m x d x h), whichever candidates are asked for, so
    the refusal names m; hashing a list of strings names the candidates."""
    oracle = RAPPOR(epsilon=2.0, domain_size=8, k=8, m=rappor.MAX_CELLS // 8)
    with pytest.raises(ParameterError, match="m must be <= ") as caught:
        oracle.positions(np.arange(2))  # m x 8 values x h = 2 is twice MAX_CELLS
    assert "cells" in str(caught.value) and caught.value.name == "m"
    strings = [str(v).encode() for v in range(8)]
    with pytest.raises(ParameterError, match="candidates must be <= ") as caught:
        rappor.bloom_table(strings, rappor.MAX_CELLS // 8, 2, 8)
    assert caught.value.name == "candidates"


def test_basic_rappor_variances_need_no_d_by_d_matrix() -> None:
    oracle = RAPPOR(epsilon=2.0, domain_size=10**6, basic=True)
    counts = np.zeros(10**6, dtype=np.int64)
    counts[:3] = [500, 300, 200]
    a = oracle.q_star * (1 - oracle.q_star)
    b = oracle.p_star * (1 - oracle.p_star)
    gap2 = (oracle.q_star - oracle.p_star) ** 2
    variances = oracle.variances(counts)
    assert variances[0] == pytest.approx((500 * a + 500 * b) / gap2, rel=1e-12)
    assert oracle.variance(1000, 500) == pytest.approx(variances[0], rel=1e-12)


def test_the_decoder_does_not_import_the_oracle_module() -> None:
    """No import cycle: the oracle module imports the decoder, never the other way round."""
    import ast

    tree = ast.parse(Path(rappor_decode.__file__).read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
    assert not {m for m in modules if m.startswith("ldp.oracles.rappor")} - {
        "ldp.oracles.rappor.decoder"
    }, modules
