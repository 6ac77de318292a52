"""[WPLWLYWY24]'s variation-ratio shuffle bound (Wang et al., VLDB 2024) in ldp.theory.shuffle.

* The numbers the authors' released code prints: ``unifiedamplification.py`` of
  github.com/wangsw/PrivacyAmplification (its ``__main__``: n = 10^4, δ = 0.01/n,
  ε0 ∈ {0.1, 1, 3, 5}, T = 20 bisection steps on [0, ε0]; rows "general" and "krr" with
  d = 100), plus n = 10^5, ε0 = 4 (FMT21's example).  A bisection of 20 steps lands
  within ε0·2^-20 of the root, so that is the tolerance.
* δ(ε) against a brute-force enumeration of the pair of clone counts.
* Soundness against the exact δ of shuffled binary randomized response; never above
  [FMT21]'s numerical bound; ``best`` uses it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, multinomial

from ldp import theory
from ldp.theory.shuffle import (
    shuffle_epsilon,
    variation_ratio_beta,
    variation_ratio_delta,
    variation_ratio_epsilon,
)

#: (ε0, n, d) -> what amplificationUB(e^ε0, β, e^ε0, e^ε0, n, 1e-6, T=20) returns in the
#: authors' released code (d None: β of a general mechanism; d = 100: "krr").
RELEASED = {
    (0.1, 10**4, None): 0.002794075012207034,
    (1.0, 10**4, None): 0.043206214904785156,
    (3.0, 10**4, None): 0.22608089447021484,
    (5.0, 10**4, None): 0.7421350479125977,
    (1.0, 10**4, 100): 0.007184028625488281,
    (3.0, 10**4, 100): 0.08895206451416016,
    (4.0, 10**5, None): 0.11815643310546875,
}


@pytest.mark.parametrize(("epsilon0", "n", "domain_size"), list(RELEASED))
def test_matches_the_released_code(epsilon0: float, n: int, domain_size: int | None) -> None:
    ours = variation_ratio_epsilon(epsilon0, n, 1e-6, domain_size=domain_size)
    assert abs(ours - RELEASED[epsilon0, n, domain_size]) <= epsilon0 * 2.0**-20


def test_beta() -> None:
    e = math.exp(2.0)
    assert variation_ratio_beta(2.0) == pytest.approx((e - 1) / (e + 1), rel=1e-15)
    assert variation_ratio_beta(2.0, 10) == pytest.approx((e - 1) / (e + 9), rel=1e-15)
    assert variation_ratio_beta(2.0, 2) == variation_ratio_beta(2.0)


def brute_force_delta(epsilon: float, epsilon0: float, n: int, domain_size: int | None) -> float:
    """max of both hockey-stick divergences of the pair, by enumerating every (a, b)."""
    p, beta = math.exp(epsilon0), variation_ratio_beta(epsilon0, domain_size)
    alpha = beta / (p - 1)
    gamma, r, others = 1 - alpha * (1 + p), alpha, n - 1

    def m(a: int, b: int) -> float:
        if a < 0 or b < 0 or a + b > others:
            return 0.0
        return float(multinomial.pmf([a, b, others - a - b], others, [r, r, 1 - 2 * r]))

    forward = backward = 0.0
    for a in range(others + 2):
        for b in range(others + 2 - a):
            p_ab = p * alpha * m(a - 1, b) + alpha * m(a, b - 1) + gamma * m(a, b)
            q_ab = alpha * m(a - 1, b) + p * alpha * m(a, b - 1) + gamma * m(a, b)
            forward += max(p_ab - math.exp(epsilon) * q_ab, 0.0)
            backward += max(q_ab - math.exp(epsilon) * p_ab, 0.0)
    return max(forward, backward)


@pytest.mark.parametrize("n", [1, 2, 5, 23])
@pytest.mark.parametrize(
    ("epsilon0", "domain_size"), [(0.3, None), (1.0, None), (3.0, None), (0.3, 3), (2.0, 5)]
)
def test_delta_matches_enumeration(n: int, epsilon0: float, domain_size: int | None) -> None:
    for fraction in (0.0, 0.2, 0.6, 0.95):
        epsilon = fraction * epsilon0
        exact = brute_force_delta(epsilon, epsilon0, n, domain_size)
        computed = variation_ratio_delta(epsilon, epsilon0, n, domain_size=domain_size)
        assert exact <= computed <= exact + 2e-13  # + the 1e-13 rounding allowance


def test_delta_is_zero_from_epsilon0_and_decreasing_below() -> None:
    assert variation_ratio_delta(2.0, 2.0, 1000) == 0.0
    grid = np.linspace(0, 2.0, 41)[:-1]
    values = np.array([variation_ratio_delta(e, 2.0, 1000) for e in grid])
    assert np.all(np.diff(values) <= 0)


@pytest.mark.parametrize(("epsilon0", "n", "delta"), [(4.0, 10**5, 1e-6), (0.5, 10**6, 1e-8)])
def test_is_the_smallest_accepted_epsilon(epsilon0: float, n: int, delta: float) -> None:
    epsilon = variation_ratio_epsilon(epsilon0, n, delta)
    assert variation_ratio_delta(epsilon, epsilon0, n) <= delta
    assert variation_ratio_delta(epsilon * (1 - 1e-4), epsilon0, n) > delta


# ------------------------------------------------------------- tighter, and still sound
def test_never_above_fmt_numerical_and_used_by_best() -> None:
    """More clones (2/(e^ε0+1) >= e^-ε0) than [FMT21]'s pair: never a larger ε."""
    for n in (100, 10**4, 10**6):
        for epsilon0 in (0.05, 0.5, 2.0, 6.0):
            for delta in (1e-9, 1e-4):
                ours = variation_ratio_epsilon(epsilon0, n, delta)
                assert ours <= theory.fmt_numerical_epsilon(epsilon0, n, delta) * (1 + 1e-9)
                assert shuffle_epsilon(epsilon0, n, delta, "best") <= ours
    # FMT21's example: 0.1698 -> 0.1182 (30% less budget)
    assert variation_ratio_epsilon(4.0, 10**5, 1e-6) < 0.7 * theory.fmt_numerical_epsilon(
        4.0, 10**5, 1e-6
    )
    assert shuffle_epsilon(0.4, 5000, 1e-6, "best") == variation_ratio_epsilon(0.4, 5000, 1e-6)
    for domain_size in (2, 100):  # below BBGN19's GRR-specific blanket bounds too
        grr = variation_ratio_epsilon(0.4, 5000, 1e-6, domain_size=domain_size)
        assert grr <= shuffle_epsilon(0.4, 5000, 1e-6, "best", domain_size=domain_size)
        assert grr == shuffle_epsilon(0.4, 5000, 1e-6, "variation_ratio", domain_size=domain_size)


def shuffled_rr_delta(epsilon: float, epsilon0: float, n: int, ones: int) -> float:
    """Exact δ(ε) of shuffled binary RR: user 1 holds 1 vs 0, ``ones`` of the others hold 1."""
    keep = math.exp(epsilon0) / (1 + math.exp(epsilon0))
    rest = np.convolve(
        binom.pmf(np.arange(ones + 1), ones, keep),
        binom.pmf(np.arange(n - ones), n - 1 - ones, 1 - keep),
    )
    shifted, plain = np.concatenate([[0.0], rest]), np.concatenate([rest, [0.0]])
    p = keep * shifted + (1 - keep) * plain
    q = (1 - keep) * shifted + keep * plain
    scale = math.exp(epsilon)
    return max(np.maximum(p - scale * q, 0).sum(), np.maximum(q - scale * p, 0).sum())


@pytest.mark.parametrize(
    ("epsilon0", "delta"), [(0.25, 1e-3), (0.5, 1e-6), (1.0, 1e-4), (2.0, 1e-6)]
)
def test_sound_for_shuffled_binary_rr(epsilon0: float, delta: float) -> None:
    """Both readings (generic, and GRR with d = 2) hold on every population of the others.
    The GRR reading is not far from tight here: some population of 2000 users (others
    holding ones = 0, n/4, n/2 or n-1) needs 79% to 90% of its ε, so 3/4 of it fails."""
    n = 2000
    needed = 0.0
    for domain_size in (None, 2):
        epsilon = variation_ratio_epsilon(epsilon0, n, delta, domain_size=domain_size)
        for ones in (0, n // 4, (n - 1) // 2, n - 1):
            assert shuffled_rr_delta(epsilon, epsilon0, n, ones) <= delta, (domain_size, ones)
            if domain_size == 2:
                needed = max(needed, shuffled_rr_delta(0.75 * epsilon, epsilon0, n, ones))
    assert needed > delta


@pytest.mark.parametrize("epsilon0", [1e-6, 0.4, 300.0, 700.0])
@pytest.mark.parametrize("n", [1, 2, 10**6])
def test_extreme_parameters_give_a_guarantee_between_0_and_epsilon0(
    epsilon0: float, n: int
) -> None:
    for domain_size in (None, 2, 10**6):
        epsilon = variation_ratio_epsilon(epsilon0, n, 1e-6, domain_size=domain_size)
        assert 0 <= epsilon <= epsilon0


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: variation_ratio_epsilon(0.0, 100, 1e-6), ValueError, "epsilon0"),
        (lambda: variation_ratio_epsilon(1.0, 0, 1e-6), ValueError, "n"),
        (lambda: variation_ratio_epsilon(1.0, 100, 1.5), ValueError, "delta"),
        (lambda: variation_ratio_epsilon(1.0, 100, 1e-6, domain_size=1), ValueError, "domain_size"),
        (lambda: variation_ratio_delta(-0.1, 1.0, 100), ValueError, "epsilon"),
        (lambda: variation_ratio_delta("x", 1.0, 100), TypeError, "epsilon"),
    ],
)
def test_bad_parameters_raise_naming_them(call, error: type, name: str) -> None:
    with pytest.raises(error, match=rf"^{name}\b"):
        call()
