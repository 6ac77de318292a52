"""ε-LDP of every oracle, from its likelihood, and the likelihood tied to ``perturb``.

1. ``ldp.privacy.max_privacy_loss`` (the largest log Pr[y|v]/Pr[y|v'] over input pairs) is
   <= ε (up to 1e-12 relative rounding) for every protocol, several ε and small d, and
   equals ε up to the 53-bit grid's rounding (the bound is tight), THE aside: its
   client-side thresholding is post-processing, with the loss ln(p*(1-q*)/((1-p*)q*)).
   Deliberately leaky variants (an inflated p*, a doubled SHE signal) must fail the check.
2. Goodness of fit: the reports ``perturb`` draws for fixed inputs follow the likelihood
   that the audit analysed (``report_probabilities``), so a client that silently used other
   probabilities would fail, and we check that one does.  (A check of the declaration
   cannot catch a ``perturb`` that ignores it: that is :mod:`ldp.audit`'s job.)

Statistical assertions are at level ALPHA = 1e-4 each (Bonferroni over the inputs or
coordinates they check), with fixed seeds.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from scipy import stats

from ldp import hashing, theory
from ldp.contract import Capabilities
from ldp.oracles import BLH, GRR, OLH, ORACLES, OUE, SHE, SUE, THE
from ldp.privacy import (
    DEFAULT_SEEDS,
    max_privacy_loss,
    privacy_loss_matrix,
    report_model,
)

ALPHA = 1e-4
PROTOCOLS = ("GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH")
RTOL = 1e-12


def rng_for(*key: object) -> np.random.Generator:
    words = tuple(zlib.crc32(repr(part).encode()) for part in key)
    return np.random.default_rng(np.random.SeedSequence(17, spawn_key=words))


# --- 1. the audit ------------------------------------------------------------------------------
@pytest.mark.parametrize("domain_size", [2, 3, 8])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0, 7.0])
@pytest.mark.parametrize("name", PROTOCOLS)
def test_every_protocol_is_epsilon_ldp(name: str, epsilon: float, domain_size: int) -> None:
    oracle = ORACLES[name](epsilon=epsilon, domain_size=domain_size)
    seeds = DEFAULT_SEEDS[:64] if name == "OLH" and epsilon > 5 else None  # g = 1098 at ε = 7
    loss = max_privacy_loss(oracle, seeds=seeds)
    assert loss <= epsilon * (1 + RTOL), f"{oracle}: privacy loss {loss!r} > ε"
    if name == "THE":
        assert loss == pytest.approx(the_loss(oracle), rel=RTOL)
    else:  # tight: some report attains e^ε (hashing: a seed that separates the pair)
        assert loss >= epsilon * (1 - 1e-9)


def the_loss(oracle: THE) -> float:
    p, q = oracle.p_star, oracle.q_star
    return math.log(p * (1 - q) / ((1 - p) * q))


@pytest.mark.parametrize("theta", [0.05, 0.5, 0.8, 1.0])
def test_the_is_epsilon_ldp_for_every_threshold(theta: float) -> None:
    """THE's client sends thresholded bits: post-processing, so strictly below ε.

    At θ = 1 the loss is ln(2e^{ε/2} - 1) (p* = 1/2, q* = ½e^{-ε/2}).
    """
    oracle = THE(epsilon=1.5, domain_size=5, theta=theta)
    loss = max_privacy_loss(oracle)
    assert loss == pytest.approx(the_loss(oracle), rel=RTOL) and loss < 1.5
    if theta == 1.0:
        assert loss == pytest.approx(math.log(2 * math.exp(0.75) - 1), rel=1e-12)


@pytest.mark.parametrize("g", [2, 3, 7, 100])
def test_olh_is_epsilon_ldp_for_every_range(g: int) -> None:
    oracle = OLH(epsilon=2.0, domain_size=6, g=g)
    assert max_privacy_loss(oracle) == pytest.approx(2.0, rel=RTOL)


def test_loss_matrix_is_epsilon_off_the_diagonal() -> None:
    """Every ordered pair attains ε (GRR, UE), and a subset of inputs can be audited alone."""
    for oracle in (GRR(epsilon=1.2, domain_size=5), OUE(epsilon=1.2, domain_size=5)):
        matrix = privacy_loss_matrix(oracle)
        np.testing.assert_allclose(matrix, 1.2 * (1 - np.eye(5)), rtol=RTOL, atol=1e-15)
    sub = privacy_loss_matrix(SUE(epsilon=1.0, domain_size=300), values=[0, 299])
    np.testing.assert_allclose(sub, [[0, 1], [1, 0]], rtol=RTOL, atol=1e-15)


def test_hashed_loss_over_seeds_is_a_lower_bound() -> None:
    """With one seed under which H(v) = H(v'), the pair is indistinguishable: loss 0."""
    oracle = BLH(epsilon=1.0, domain_size=4)
    seeds = np.arange(64, dtype=np.uint64)
    hashed = np.stack([hashing.hash_values(np.full(64, v), seeds, 2) for v in range(2)])
    colliding = seeds[hashed[0] == hashed[1]][:1]
    assert privacy_loss_matrix(oracle, values=[0, 1], seeds=colliding)[0, 1] == 0.0
    assert max_privacy_loss(oracle, values=[0, 1], seeds=seeds) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.3, 2.0, 6.0])
def test_she_loss_is_its_tables_realised_epsilon(epsilon: float) -> None:
    """The product model's loss equals the loss computed exactly from the integer tables."""
    oracle = SHE(epsilon=epsilon, domain_size=4)
    assert max_privacy_loss(oracle) == pytest.approx(oracle.noise.realised_epsilon, rel=1e-12)
    assert oracle.noise.realised_epsilon <= epsilon


# --- leaky variants must fail -------------------------------------------------------------------
class LeakyGRR(GRR):
    """GRR whose p* is that of 1.5 ε (q* = (1 - p*)/(d - 1) keeps a distribution)."""

    @property
    def p_star(self) -> float:
        return theory.grr_pq(1.5 * self.epsilon, self.domain_size)[0]

    @property
    def q_star(self) -> float:
        return theory.grr_pq(1.5 * self.epsilon, self.domain_size)[1]


class LeakyOUE(OUE):
    """OUE keeping the 1-bit with probability 3/4 instead of 1/2."""

    @property
    def p_star(self) -> float:
        return 0.75


class LeakyOLH(OLH):
    """OLH whose randomised response keeps H(v) with the probability of 2 ε."""

    @property
    def p_star(self) -> float:
        return theory.olh_pq(2 * self.epsilon, self.g)[0]


class LeakyBLH(BLH):
    @property
    def p_star(self) -> float:
        return theory.blh_pq(2 * self.epsilon)[0]


class LeakySHE(SHE):
    """SHE declaring a signal of 2s on the user's coordinate: a pair then costs >= 2ε."""

    def report_probabilities(self, value: int) -> np.ndarray:
        out = super().report_probabilities(value)
        out[value] = np.roll(out[(value + 1) % self.domain_size], 2 * self.grid)
        return out


LEAKY = [
    (LeakyGRR, lambda eps: 1.5 * eps),
    (LeakyOUE, lambda eps: eps + math.log(3)),
    (LeakyOLH, lambda eps: 2 * eps),
    (LeakyBLH, lambda eps: 2 * eps),
    (LeakySHE, None),
]


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
@pytest.mark.parametrize(("leaky", "expected"), LEAKY, ids=[c.__name__ for c, _ in LEAKY])
def test_wrong_p_star_fails_the_audit(leaky, expected, epsilon: float) -> None:
    oracle = leaky(epsilon=epsilon, domain_size=6)
    loss = max_privacy_loss(oracle)
    assert loss > epsilon * (1 + RTOL), f"{leaky.__name__} passed the audit"
    if expected is None:  # the rolled table wraps around: at least 2ε, more at the ends
        assert loss >= 2 * epsilon * (1 - 1e-9)
    else:
        assert loss == pytest.approx(expected(epsilon), rel=1e-9)


# --- the audit's interface ----------------------------------------------------------------------
class Warner:
    """Warner's randomised response (yes/no, truthful with probability 3/4): ln 3-LDP.

    A protocol outside ldp.oracles, declaring its model, as a user would.
    """

    capabilities = Capabilities(report_model="categorical")
    domain_size = 2

    def report_probabilities(self, value: int) -> np.ndarray:
        return np.array([0.75, 0.25]) if value == 0 else np.array([0.25, 0.75])


class Revealing(Warner):
    """Reports 'yes' only for value 1: an impossible report under 0, so infinite loss."""

    def report_probabilities(self, value: int) -> np.ndarray:
        return np.array([1.0, 0.0]) if value == 0 else np.array([0.5, 0.5])


def test_a_new_protocol_can_be_audited() -> None:
    assert max_privacy_loss(Warner()) == pytest.approx(math.log(3), rel=RTOL)
    assert max_privacy_loss(Revealing()) == math.inf
    assert max_privacy_loss(Warner(), model="categorical") == pytest.approx(math.log(3))


def test_report_models_of_the_oracles() -> None:
    expected = {"GRR": "categorical", "SUE": "bits", "OUE": "bits", "SHE": "product"}
    expected |= {"THE": "bits", "BLH": "hashed", "OLH": "hashed"}
    for name, model in expected.items():
        assert report_model(ORACLES[name](epsilon=1.0, domain_size=4)) == model


def test_audit_rejects_what_it_cannot_check() -> None:
    with pytest.raises(TypeError, match="report model"):
        max_privacy_loss(object())
    with pytest.raises(ValueError, match="model must be one of"):
        max_privacy_loss(GRR(epsilon=1.0, domain_size=4), model="gaussian")
    with pytest.raises(ValueError, match="too large"):
        max_privacy_loss(GRR(epsilon=1.0, domain_size=10_000))
    with pytest.raises(ValueError, match="seeds apply to the 'hashed' model only"):
        max_privacy_loss(GRR(epsilon=1.0, domain_size=4), seeds=[1])
    with pytest.raises(ValueError, match="pass fewer values"):
        max_privacy_loss(SHE(epsilon=1.0, domain_size=256))
    with pytest.raises(ValueError, match="at least two distinct"):
        max_privacy_loss(GRR(epsilon=1.0, domain_size=4), values=[1, 1])
    with pytest.raises(ValueError, match=r"values must lie in \[0, 4\)"):
        max_privacy_loss(GRR(epsilon=1.0, domain_size=4), values=[0, 4])


# --- 2. goodness of fit: perturb follows the audited likelihood ---------------------------------
N_FIT = 40_000


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
def test_grr_reports_follow_report_probabilities(epsilon: float) -> None:
    """χ² goodness of fit over the d reports, for two inputs (α/2 each)."""
    oracle = GRR(epsilon=epsilon, domain_size=8)
    rng = rng_for("grr-fit", epsilon)
    for value in (0, 5):
        reports = oracle.perturb(np.full(N_FIT, value), rng)
        observed = np.bincount(reports, minlength=8)
        expected = N_FIT * oracle.report_probabilities(value)
        pvalue = stats.chisquare(observed, expected).pvalue
        assert pvalue >= ALPHA / 2, f"GRR eps={epsilon} input {value}: p = {pvalue:.2g}"


def test_goodness_of_fit_catches_a_client_using_other_probabilities() -> None:
    """A GRR whose perturb draws with 1.3 ε while its likelihood says ε is rejected.

    The χ² statistic is then noncentral with λ = n Σ (π'_y - π_y)²/π_y; the design has
    power >= 1 - ALPHA at level ALPHA, so this test fails with probability <= ALPHA.
    """

    class Mismatched(GRR):
        def perturb(self, values, rng):
            return GRR(epsilon=1.3 * self.epsilon, domain_size=self.domain_size).perturb(
                values, rng
            )

    oracle = Mismatched(epsilon=1.0, domain_size=8)
    claimed = oracle.report_probabilities(2)
    actual = GRR(epsilon=1.3, domain_size=8).report_probabilities(2)
    lam = N_FIT * np.sum((actual - claimed) ** 2 / claimed)
    critical = stats.chi2.isf(ALPHA, 7)
    assert stats.ncx2.sf(critical, 7, lam) >= 1 - ALPHA, "design: the test must have power"
    reports = oracle.perturb(np.full(N_FIT, 2), rng_for("mismatched"))
    observed = np.bincount(reports, minlength=8)
    assert stats.chisquare(observed, N_FIT * claimed).pvalue < ALPHA


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
@pytest.mark.parametrize("cls", [SUE, OUE, THE], ids=["SUE", "OUE", "THE"])
def test_unary_bits_follow_report_probabilities(cls, epsilon: float) -> None:
    """Each bit count is Binomial(n, Pr[bit = 1]); Σ z² over the d bits is χ²_d."""
    oracle = cls(epsilon=epsilon, domain_size=8)
    rng = rng_for("ue-fit", cls.name, epsilon)
    for value in (0, 5):
        packed = oracle.perturb(np.full(N_FIT, value), rng)
        ones = np.unpackbits(packed.bits, axis=1, count=8).sum(axis=0)
        prob = oracle.report_probabilities(value)
        z = (ones - N_FIT * prob) / np.sqrt(N_FIT * prob * (1 - prob))
        pvalue = stats.chi2.sf(np.sum(z**2), 8)
        assert pvalue >= ALPHA / 2, f"{cls.name} eps={epsilon} input {value}: z = {z}"


@pytest.mark.parametrize("epsilon", [0.5, 4.0])
@pytest.mark.parametrize("cls", [BLH, OLH], ids=["BLH", "OLH"])
def test_hashed_reports_follow_report_probabilities(cls, epsilon: float) -> None:
    """Users holding various values, each with a fresh seed.

    Per user, report_probabilities(v, seed) puts p* on one cell (that cell must be
    H_seed(v)) and (1-p*)/(g-1) on each other.  The shift (y - H_seed(v)) mod g is then
    distributed as (p*, rest uniform) for every user: χ² over the g shifts, with expected
    counts summed from the rows; and #{y = H_seed(v)} ~ Binomial(n, p*) exactly (α/2 each).
    """
    oracle = cls(epsilon=epsilon, domain_size=8)
    rng = rng_for("lh-fit", cls.name, epsilon)
    values = np.repeat(np.arange(8), N_FIT // 8)
    reports = oracle.perturb(values, rng)
    g = oracle.g
    expected = np.zeros(g)
    hits = 0
    for value in range(8):
        mine = values == value
        rows = oracle.report_probabilities(value, reports.seeds[mine])
        hashed = hashing.hash_values(np.full(mine.sum(), value), reports.seeds[mine], g)
        np.testing.assert_array_equal(rows.argmax(axis=1), hashed)
        np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-12)
        shift = (np.arange(g)[None, :] + hashed[:, None]) % g
        expected += np.take_along_axis(rows, shift, axis=1).sum(axis=0)
        hits += int(np.sum(reports.values[mine] == hashed))
    observed = np.bincount((reports.values - hash_of(values, reports.seeds, g)) % g, minlength=g)
    assert stats.chisquare(observed, expected).pvalue >= ALPHA / 2
    assert stats.binomtest(hits, values.size, oracle.p_star).pvalue >= ALPHA / 2


def hash_of(values: np.ndarray, seeds: np.ndarray, g: int) -> np.ndarray:
    return hashing.hash_values(values, seeds, g)


def pooled(expected: np.ndarray, observed: np.ndarray, minimum: float = 20.0):
    """Merge neighbouring cells until each expected count is >= ``minimum`` (for χ²)."""
    groups_e, groups_o, acc_e, acc_o = [], [], 0.0, 0
    for e, o in zip(expected, observed, strict=True):
        acc_e, acc_o = acc_e + e, acc_o + int(o)
        if acc_e >= minimum:
            groups_e.append(acc_e)
            groups_o.append(acc_o)
            acc_e, acc_o = 0.0, 0
    groups_e[-1] += acc_e
    groups_o[-1] += acc_o
    return np.array(groups_e), np.array(groups_o)


@pytest.mark.parametrize("epsilon", [0.5, 6.0])
def test_she_coordinates_follow_report_probabilities(epsilon: float) -> None:
    """χ² fit of the user's own coordinate and of another one against their declared pmfs.

    Cells are pooled from the low end until each expected count is >= 20; α/2 per column.
    """
    oracle = SHE(epsilon=epsilon, domain_size=3)
    reports = oracle.perturb(np.zeros(N_FIT, dtype=np.int64), rng_for("she-fit", epsilon))
    declared = oracle.report_probabilities(0)
    for column in (0, 1):
        observed = np.bincount(
            reports[:, column] + oracle.noise.support, minlength=declared.shape[1]
        )
        expected, counts = pooled(N_FIT * declared[column], observed)
        pvalue = stats.chisquare(counts, expected).pvalue
        assert pvalue >= ALPHA / 2, f"SHE eps={epsilon} column {column}: p = {pvalue:.2g}"


def test_wide_inputs_can_be_audited_as_words() -> None:
    """PEM's 160-bit prefixes: inputs given as rows of words, hashed like the client does."""
    oracle = OLH(epsilon=1.0, domain_size=2**160)
    pair = np.array([[0, 0, 5], [2**31, 0, 5]], dtype=np.uint64)
    assert max_privacy_loss(oracle, values=pair, seeds=DEFAULT_SEEDS[:32]) == pytest.approx(
        1.0, rel=RTOL
    )


def test_docstring_example() -> None:
    import doctest

    import ldp.privacy

    assert doctest.testmod(ldp.privacy).failed == 0


# --- 3. every registered oracle, public randomness included -------------------------------------
def test_every_registered_oracle_has_a_known_loss() -> None:
    """max_privacy_loss covers every oracle of the registry (plug-ins declaring a model too)."""
    for name, cls in ORACLES.items():
        oracle = cls(epsilon=1.0, domain_size=4)
        loss = max_privacy_loss(oracle)
        assert 0 < loss <= 1.0 * (1 + RTOL), name


@pytest.mark.parametrize("name", ["CMS", "HCMS"])
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0])
def test_sketches_are_epsilon_ldp_given_their_rows(name: str, epsilon: float) -> None:
    """A sketch row's hash function is public: the loss is the largest over rows, ε."""
    oracle = ORACLES[name](epsilon=epsilon, domain_size=8)
    loss = max_privacy_loss(oracle)
    assert epsilon * (1 - 1e-9) <= loss <= epsilon * (1 + RTOL)
    assert report_model(oracle) == ("bits" if name == "CMS" else "hashed")


def test_rappor_loss_is_read_in_every_cohort() -> None:
    """ε₁ of one report is attained in a cohort where the two filters are apart; a cohort
    where they coincide (loss 0) must not hide it."""
    rappor = ORACLES["RAPPOR"]
    oracle = rappor(epsilon=4.0, domain_size=16, k=8, h=1, m=8)
    positions = oracle.positions()[:, :, 0]  # (cohorts, values)
    same = [
        (c, a, b)
        for c in range(8)
        for a in range(16)
        for b in range(a + 1, 16)
        if positions[c, a] == positions[c, b]
    ]
    cohort, a, b = same[0]
    assert any(positions[c, a] != positions[c, b] for c in range(8))
    one_cohort = _bits_loss(
        oracle.report_probabilities(a, cohort), oracle.report_probabilities(b, cohort)
    )
    assert one_cohort == 0.0
    assert max_privacy_loss(oracle, values=[a, b]) == pytest.approx(oracle.epsilon_one, rel=1e-9)


def _bits_loss(ones: np.ndarray, ones_other: np.ndarray) -> float:
    with np.errstate(divide="ignore"):
        return float(
            np.maximum(np.log(ones / ones_other), np.log((1 - ones) / (1 - ones_other))).sum()
        )
