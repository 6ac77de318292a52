"""ldp.theory.frequency against USENIX'17 (and its slides).

Deterministic identities: Table 1's closed forms equal the pure framework's variance with
each protocol's (p*, q*); THE's optimal threshold; the multiple-questions slide; and
``oracle.variance`` of every oracle against Table 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldp import theory
from ldp.oracles import BLH, GRR, OLH, ORACLES, OUE, SHE, SUE, THE

EPSILONS = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0]
DOMAINS = [2, 3, 16, 1024]
RTOL = 1e-12


def table1_from_pq(name: str, epsilon: float, d: int) -> float:
    """Var/n of the pure framework with n_v = 0: q*(1-q*)/(p*-q*)^2."""
    pq = {
        "GRR": lambda: theory.grr_pq(epsilon, d),
        "SUE": lambda: theory.sue_pq(epsilon),
        "OUE": lambda: theory.oue_pq(epsilon),
        "THE": lambda: theory.the_pq(epsilon, 1.0),
        "BLH": lambda: theory.blh_pq(epsilon),
        "OLH": lambda: theory.olh_pq(epsilon, math.exp(epsilon) + 1),  # continuous optimum
    }[name]()
    return float(theory.pure_variance(1, *pq))


@pytest.mark.parametrize("d", DOMAINS)
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", ["GRR", "SUE", "OUE", "THE", "BLH", "OLH"])
def test_table1_is_the_pure_variance(name: str, epsilon: float, d: int) -> None:
    closed_form = float(theory.table1_variance(name, epsilon, d))
    assert closed_form == pytest.approx(table1_from_pq(name, epsilon, d), rel=1e-10)


def test_table1_formulas_as_printed() -> None:
    """Spot values typed from the slide's Table 1, and the aliases and errors."""
    e, h = math.e, math.exp(0.5)
    assert theory.table1_variance("DE", 1.0, 10) == pytest.approx((8 + e) / (e - 1) ** 2)
    assert theory.table1_variance("grr", 1.0, 10) == theory.table1_variance("DE", 1.0, 10)
    assert theory.table1_variance("SHE", 1.0) == pytest.approx(8.0)
    assert theory.table1_variance("THE", 1.0) == pytest.approx((2 * h - 1) / (h - 1) ** 2)
    assert theory.table1_variance("SUE", 1.0) == pytest.approx(h / (h - 1) ** 2)
    assert theory.table1_variance("BLH", 1.0) == pytest.approx((e + 1) ** 2 / (e - 1) ** 2)
    np.testing.assert_array_equal(
        theory.table1_variance("OUE", EPSILONS), theory.table1_variance("OLH", EPSILONS)
    )
    assert theory.table1_variance("OLH", np.array(EPSILONS)).shape == (len(EPSILONS),)
    with pytest.raises(ValueError, match="protocol must be one of"):
        theory.table1_variance("RAPPOR", 1.0)
    with pytest.raises(ValueError, match="d must be >= 2"):
        theory.table1_variance("GRR", 1.0, 1)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_pure_variance_is_the_binomial_sum(epsilon: float) -> None:
    """n q(1-q)/(p-q)^2 + n_v (1-p-q)/(p-q) = (n_v p(1-p) + (n-n_v) q(1-q))/(p-q)^2."""
    n, p, q = 10_000, *theory.oue_pq(epsilon)
    for n_v in (0, 1, 2500, 10_000):
        direct = (n_v * p * (1 - p) + (n - n_v) * q * (1 - q)) / (p - q) ** 2
        assert float(theory.pure_variance(n, p, q, n_v)) == pytest.approx(direct, rel=RTOL)
    support = n * q + 1234 * (p - q)
    assert float(theory.pure_estimate(support, n, p, q)) == pytest.approx(1234, rel=RTOL)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_sue_has_no_nv_term(epsilon: float) -> None:
    """SUE is symmetric (p* + q* = 1), so the n_v term (1-p*-q*)/(p*-q*) vanishes."""
    p, q = theory.sue_pq(epsilon)
    assert p + q == pytest.approx(1.0, rel=RTOL)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_the_optimal_theta(epsilon: float) -> None:
    """θ* lies in [1/2, 1], beats θ = 1 and every θ of a fine grid on (0, 1]."""
    theta = theory.the_optimal_theta(epsilon)
    assert 0.5 <= theta <= 1.0

    def var(t: float) -> float:
        return float(theory.pure_variance(1, *theory.the_pq(epsilon, t)))

    assert var(theta) < var(1.0)
    grid = np.linspace(0.01, 1.0, 2000)
    assert var(theta) <= min(var(t) for t in grid) * (1 + 1e-9)
    assert THE(epsilon=epsilon, domain_size=4).theta == theta


def test_the_pq_are_laplace_tails() -> None:
    """p* = Pr[1 + L > θ], q* = Pr[L > θ] for L ~ Laplace(2/ε), against scipy."""
    from scipy import stats

    for epsilon in EPSILONS:
        for theta in (0.2, 0.5, 0.9, 1.0):
            p, q = theory.the_pq(epsilon, theta)
            noise = stats.laplace(scale=2 / epsilon)
            assert p == pytest.approx(noise.sf(theta - 1), rel=RTOL)
            assert q == pytest.approx(noise.sf(theta), rel=RTOL)


def test_the_optimal_theta_validates_epsilon() -> None:
    with pytest.raises(ValueError, match="epsilon"):
        theory.the_optimal_theta(0.0)


@pytest.mark.parametrize("epsilon", EPSILONS)
def test_multiple_questions_partition_beats_split(epsilon: float) -> None:
    """The slide "On answering multiple questions": two questions, n users, OLH.

    Split: 4e^{ε/2}/(n(e^{ε/2}-1)^2); partition: 8e^ε/(n(e^ε-1)^2); partitioning wins.
    """
    n = 10_000
    result = theory.multiple_questions_variance(epsilon, n, questions=2)
    h, e = math.exp(epsilon / 2), math.exp(epsilon)
    assert float(result["split"]) == pytest.approx(4 * h / (n * (h - 1) ** 2), rel=RTOL)
    assert float(result["partition"]) == pytest.approx(8 * e / (n * (e - 1) ** 2), rel=RTOL)
    assert result["partition"] < result["split"]
    three = theory.multiple_questions_variance(epsilon, n, questions=3)
    assert three["partition"] < three["split"]


def test_olh_default_g() -> None:
    for epsilon in EPSILONS:
        g = theory.olh_default_g(epsilon)
        assert g == math.ceil(math.exp(epsilon) + 1) and g - 1 < math.exp(epsilon) + 1 <= g


# --- oracle.variance against Table 1 ----------------------------------------------------------
@pytest.mark.parametrize("d", [2, 16, 1024])
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_oracle_variance_is_table1_times_n(epsilon: float, d: int) -> None:
    """variance(n) = n x Table 1 for GRR, SUE, OUE, THE(θ=1), BLH, exactly.

    OLH uses the integer g = ⌈e^ε + 1⌉, so it is at or above the continuous optimum of
    Table 1, and within a few percent of it (exactly equal when e^ε + 1 is an integer).
    SHE's noise is discrete Laplace on a grid s (floating-point safe): its variance is
    n·2α/((1-α)² s²), within 0.04% below Table 1's 8n/ε².
    """
    n = 12_345
    exact = {
        "GRR": GRR(epsilon=epsilon, domain_size=d),
        "SUE": SUE(epsilon=epsilon, domain_size=d),
        "OUE": OUE(epsilon=epsilon, domain_size=d),
        "THE": THE(epsilon=epsilon, domain_size=d, theta=1.0),
        "BLH": BLH(epsilon=epsilon, domain_size=d),
    }
    she = SHE(epsilon=epsilon, domain_size=d)
    discrete = n * float(theory.discrete_laplace_variance(she.noise.alpha, she.grid))
    assert she.variance(n) == pytest.approx(discrete, rel=1e-10)
    table = n * float(theory.table1_variance("SHE", epsilon))
    assert table * (1 - 4e-4) <= she.variance(n) <= table
    for name, oracle in exact.items():
        table = float(theory.table1_variance(name, epsilon, d))
        assert oracle.variance(n) == pytest.approx(n * table, rel=1e-10), name
        assert oracle.variance(n, true_count=0) == oracle.variance(n)
    olh = OLH(epsilon=epsilon, domain_size=d).variance(n)
    table = n * float(theory.table1_variance("OLH", epsilon))
    assert table * (1 - 1e-12) <= olh <= table * 1.1
    assert THE(epsilon=epsilon, domain_size=d).variance(n) < exact["THE"].variance(n)


def test_olh_with_g_equal_to_e_eps_plus_one_is_table1() -> None:
    epsilon = math.log(4.0)  # e^ε + 1 = 5
    oracle = OLH(epsilon=epsilon, domain_size=8)
    assert oracle.g == 5
    assert oracle.variance(1000) == pytest.approx(
        1000 * float(theory.table1_variance("OLH", epsilon)), rel=1e-12
    )


@pytest.mark.parametrize("name", ["GRR", "SUE", "OUE", "THE", "BLH", "OLH"])
def test_oracle_variance_has_the_nv_term(name: str) -> None:
    oracle = ORACLES[name](epsilon=2.0, domain_size=16)
    p, q = oracle.p_star, oracle.q_star
    expected = theory.pure_variance(5000, p, q) + 800 * (1 - p - q) / (p - q)
    assert oracle.variance(5000, 800) == pytest.approx(float(expected), rel=RTOL)


def test_she_variance_ignores_the_true_count() -> None:
    oracle = SHE(epsilon=2.0, domain_size=16)
    assert oracle.variance(5000, 800) == oracle.variance(5000)
    assert oracle.variance(5000) == pytest.approx(5000 * 8 / 4, rel=4e-4)
