"""ldp.theory.shuffle against the published numbers, exact enumeration and exact shuffled RR.

* Published digits: [FMT21]'s released example (n = 10^5, ε0 = 4, δ = 10^-6) and
  [BBGN19]'s companion notebook (n = 5000, ε0 = 0.4, δ = 10^-6), printed there in full.
* [FMT21]'s δ(ε) against a brute-force enumeration of its binomial pair (P, Q).
* Soundness: every bound's ε, at its δ, against the exact hockey-stick divergence of the
  shuffled binary randomized response (the count of 1-reports), which no valid bound may
  undercut.
* Monotonicity in n, ε0 and δ on a grid; the numerical bound never above the closed form;
  bad parameters raise, naming the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from ldp import theory
from ldp.theory import BoundNotApplicable, shuffle_epsilon

# ------------------------------------------------------------------ published numbers

# [FMT21] README of the authors' code: "for eps between 0.1675385583317841 and
# 0.172790550755978" and "eps is at most 0.5378040242374512" (n=10^5, ε0=4, δ=10^-6).
FMT_INTERVAL = (0.1675385583317841, 0.172790550755978)
FMT_CLOSED_FORM = 0.5378040242374512
# [BBGN19] notebook, n = 5000, ε0 = 0.4, δ = 10^-6 ("EFMRTT'19", "Hoeffding, Generic", ...).
BBGN_PUBLISHED = {
    ("efmrtt", None): 0.2523130449483328,
    ("blanket_hoeffding", None): 0.05746164784348143,
    ("blanket_bennett", None): 0.11301679081207759,
    ("blanket_hoeffding", 2): 0.02397882347116631,
    ("blanket_bennett", 2): 0.02428301504607527,
    ("blanket_hoeffding", 100): 0.026881289729458715,
    ("blanket_bennett", 100): 0.0035207898339832183,
}


def test_fmt_numerical_lies_in_the_published_interval() -> None:
    epsilon = theory.fmt_numerical_epsilon(4.0, 10**5, 1e-6)
    assert FMT_INTERVAL[0] <= epsilon <= FMT_INTERVAL[1]


def test_fmt_closed_form_published_digits_are_the_released_code_reading() -> None:
    released = theory.fmt_closed_form_epsilon(4.0, 10**5, 1e-6, reading="released_code")
    printed = theory.fmt_closed_form_epsilon(4.0, 10**5, 1e-6)
    assert released == pytest.approx(FMT_CLOSED_FORM, rel=1e-12)
    assert round(released, 4) == 0.5378
    # Theorem 3.1 as printed has the smaller mixing factor (e^ε0-1)/(e^ε0+1): 0.5346
    assert round(printed, 4) == 0.5346
    assert printed < released


@pytest.mark.parametrize(("method", "domain_size"), list(BBGN_PUBLISHED))
def test_bbgn_notebook_numbers(method: str, domain_size: int | None) -> None:
    value = shuffle_epsilon(0.4, 5000, 1e-6, method, domain_size=domain_size)
    assert value == pytest.approx(BBGN_PUBLISHED[method, domain_size], rel=1e-8)


def test_issue_digits() -> None:
    """The digits quoted in the issue, as rounded there."""
    assert round(theory.efmrtt_epsilon(0.4, 5000, 1e-6), 4) == 0.2523
    assert round(theory.blanket_hoeffding_epsilon(0.4, 5000, 1e-6), 4) == 0.0575
    assert round(theory.blanket_bennett_epsilon(0.4, 5000, 1e-6), 4) == 0.1130


def test_blanket_grr_inverts_theorem_3_1() -> None:
    """γ = max{14k log(2/δ)/((n-1)ε²), 27k/((n-1)ε)} at the returned ε, γ = k/(e^ε0+k-1)."""
    for epsilon0, k, n, delta in [
        (0.4, 2, 5000, 1e-6),
        (2.0, 10, 10**5, 1e-8),
        (1.0, 100, 10**6, 1e-3),
    ]:
        epsilon = theory.blanket_grr_epsilon(epsilon0, k, n, delta)
        gamma = k / (math.exp(epsilon0) + k - 1)
        needed = max(
            14 * k * math.log(2 / delta) / ((n - 1) * epsilon**2), 27 * k / ((n - 1) * epsilon)
        )
        assert needed == pytest.approx(gamma, rel=1e-12)
        assert epsilon <= 1


# ---------------------------------------------------------- [FMT21] pair, brute force


def brute_force_fmt_delta(epsilon: float, epsilon0: float, n: int) -> float:
    """max of both hockey-stick divergences of (P, Q), enumerating every (c, a)."""
    alpha = math.exp(epsilon0) / (math.exp(epsilon0) + 1)
    p_total = q_total = 0.0
    for c in range(n):
        weight = binom.pmf(c, n - 1, math.exp(-epsilon0))
        b = binom.pmf(np.arange(-1, c + 2), c, 0.5)  # b[a + 1] = Pr[Bin(c, 1/2) = a]
        p = alpha * b[:-1] + (1 - alpha) * b[1:]  # a = 0 .. c+1
        q = alpha * b[1:] + (1 - alpha) * b[:-1]
        p_total += weight * np.maximum(p - math.exp(epsilon) * q, 0).sum()
        q_total += weight * np.maximum(q - math.exp(epsilon) * p, 0).sum()
    return max(p_total, q_total)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 57])
@pytest.mark.parametrize("epsilon0", [0.1, 1.0, 3.0])
def test_fmt_delta_matches_enumeration(n: int, epsilon0: float) -> None:
    for fraction in (0.0, 0.05, 0.3, 0.8, 0.999):
        epsilon = fraction * epsilon0
        exact = brute_force_fmt_delta(epsilon, epsilon0, n)
        computed = theory.fmt_numerical_delta(epsilon, epsilon0, n)
        # computed = exact + the 1e-13 rounding allowance (+ a < 1e-16 truncated tail)
        assert exact <= computed <= exact + 2e-13


def test_fmt_delta_is_zero_from_epsilon0_and_decreasing_below() -> None:
    assert theory.fmt_numerical_delta(2.0, 2.0, 1000) == 0.0
    grid = np.linspace(0, 2.0, 41)[:-1]
    values = np.array([theory.fmt_numerical_delta(e, 2.0, 1000) for e in grid])
    assert np.all(np.diff(values) <= 0)
    above_rounding = values[1:] > 1e-12  # below, δ(ε) is the 1e-13 rounding allowance
    assert np.all(np.diff(values)[above_rounding] < 0)


@pytest.mark.parametrize(("epsilon0", "n", "delta"), [(4.0, 10**5, 1e-6), (0.5, 10**6, 1e-8)])
def test_fmt_numerical_is_the_smallest_accepted_epsilon(
    epsilon0: float, n: int, delta: float
) -> None:
    epsilon = theory.fmt_numerical_epsilon(epsilon0, n, delta)
    assert theory.fmt_numerical_delta(epsilon, epsilon0, n) <= delta
    # smallest up to the δ·1e-4 of clone counts the search counts as fully distinguishable
    assert theory.fmt_numerical_delta(epsilon * (1 - 1e-4), epsilon0, n) > delta


# ------------------------------------------------- soundness on exact shuffled binary RR


def shuffled_rr_delta(epsilon: float, epsilon0: float, n: int, ones: int) -> float:
    """Exact δ(ε) of shuffled binary RR, user 1 holding 1 vs 0, `ones` of the others 1."""
    keep = math.exp(epsilon0) / (1 + math.exp(epsilon0))
    rest = np.convolve(
        binom.pmf(np.arange(ones + 1), ones, keep),
        binom.pmf(np.arange(n - ones), n - 1 - ones, 1 - keep),
    )
    shifted, plain = np.concatenate([[0.0], rest]), np.concatenate([rest, [0.0]])
    p = keep * shifted + (1 - keep) * plain  # count of 1-reports, user 1 holds 1
    q = (1 - keep) * shifted + keep * plain  # user 1 holds 0
    scale = math.exp(epsilon)
    return max(np.maximum(p - scale * q, 0).sum(), np.maximum(q - scale * p, 0).sum())


SOUND_METHODS = [
    ("fmt_numerical", None),
    ("fmt_closed_form", None),
    ("efmrtt", None),
    ("blanket_hoeffding", None),
    ("blanket_bennett", None),
    ("blanket_hoeffding", 2),
    ("blanket_bennett", 2),
    ("blanket_grr", 2),
    ("best", 2),
]


@pytest.mark.parametrize(
    ("epsilon0", "delta"), [(0.25, 1e-3), (0.5, 1e-6), (1.0, 1e-4), (2.0, 1e-6)]
)
def test_every_bound_is_sound_for_shuffled_binary_rr(epsilon0: float, delta: float) -> None:
    n = 2000
    for method, domain_size in SOUND_METHODS:
        try:
            epsilon = shuffle_epsilon(epsilon0, n, delta, method, domain_size=domain_size)
        except BoundNotApplicable:
            continue
        for ones in (0, n // 4, (n - 1) // 2, n - 1):
            assert shuffled_rr_delta(epsilon, epsilon0, n, ones) <= delta, (method, ones)


# ----------------------------------------------------------------------- monotonicity

GRID_N = [1000, 10**4, 10**5]
GRID_EPSILON0 = [0.1, 0.3, 0.5, 1.0, 2.0, 4.0]
GRID_DELTA = [1e-8, 1e-6, 1e-3]
MONOTONE_METHODS = [
    ("fmt_numerical", None),
    ("fmt_closed_form", None),
    ("efmrtt", None),
    ("blanket_hoeffding", None),
    ("blanket_bennett", None),
    ("blanket_hoeffding", 10),
    ("blanket_bennett", 10),
    ("blanket_grr", 10),
]


def grid_values(method: str, domain_size: int | None) -> np.ndarray:
    """ε on the (n, ε0, δ) grid, NaN where the bound does not apply."""
    values = np.full((len(GRID_N), len(GRID_EPSILON0), len(GRID_DELTA)), np.nan)
    for i, n in enumerate(GRID_N):
        for j, epsilon0 in enumerate(GRID_EPSILON0):
            for k, delta in enumerate(GRID_DELTA):
                try:
                    values[i, j, k] = shuffle_epsilon(
                        epsilon0, n, delta, method, domain_size=domain_size
                    )
                except BoundNotApplicable:
                    pass
    return values


@pytest.mark.parametrize(("method", "domain_size"), MONOTONE_METHODS)
def test_monotone_in_n_epsilon0_and_delta(method: str, domain_size: int | None) -> None:
    values = grid_values(method, domain_size)
    assert np.isfinite(values).sum() >= 6  # the grid exercises the bound
    # ε0 itself returned (no amplification proved), or 0 (the pair is (0, δ)-close)
    capped = (values >= np.asarray(GRID_EPSILON0)[None, :, None]) | (values == 0)
    for axis, sign in ((0, -1), (1, +1), (2, -1)):  # n down, ε0 up, δ down
        step = sign * np.diff(values, axis=axis)
        both = np.isfinite(step)
        assert np.all(step[both] >= 0), axis
        uncapped = both & ~np.take(capped, range(1, capped.shape[axis]), axis=axis)
        uncapped &= ~np.take(capped, range(capped.shape[axis] - 1), axis=axis)
        assert np.all(step[uncapped] > 0), axis


@pytest.mark.parametrize("n", [1000, 10**4, 10**5, 10**6])
@pytest.mark.parametrize("delta", [1e-8, 1e-4])
def test_numerical_never_above_closed_form(n: int, delta: float) -> None:
    checked = 0
    for epsilon0 in (0.1, 1.0, 3.0, 5.0):
        try:
            printed = theory.fmt_closed_form_epsilon(epsilon0, n, delta)
        except BoundNotApplicable:
            continue
        released = theory.fmt_closed_form_epsilon(epsilon0, n, delta, reading="released_code")
        numerical = theory.fmt_numerical_epsilon(epsilon0, n, delta)
        assert numerical <= printed <= released
        checked += 1
    assert checked >= 1


@pytest.mark.parametrize("n", [100, 10**4, 10**6])
def test_default_is_below_the_generic_blanket_bounds(n: int) -> None:
    for epsilon0 in (0.05, 0.5, 2.0, 6.0):
        for delta in (1e-9, 1e-4):
            default = shuffle_epsilon(epsilon0, n, delta)
            assert default <= theory.blanket_hoeffding_epsilon(epsilon0, n, delta)
            assert default <= theory.blanket_bennett_epsilon(epsilon0, n, delta)


def test_best_is_the_minimum_of_the_applicable_bounds() -> None:
    for domain_size in (None, 2, 100):
        best = shuffle_epsilon(0.4, 5000, 1e-6, "best", domain_size=domain_size)
        for method in ("fmt_numerical", "efmrtt", "blanket_hoeffding", "blanket_bennett"):
            assert best <= shuffle_epsilon(0.4, 5000, 1e-6, method, domain_size=domain_size)
    # [BBGN19]'s GRR-specific Bennett bound (0.00352) is beaten by the variation-ratio one
    best_grr = shuffle_epsilon(0.4, 5000, 1e-6, "best", domain_size=100)
    assert best_grr == theory.variation_ratio_epsilon(0.4, 5000, 1e-6, domain_size=100)
    assert best_grr < BBGN_PUBLISHED["blanket_bennett", 100]
    assert shuffle_epsilon(4.0, 10**5, 1e-6) == theory.fmt_numerical_epsilon(4.0, 10**5, 1e-6)


def test_shuffle_epsilon_never_exceeds_epsilon0() -> None:
    assert theory.efmrtt_epsilon(0.5, 1000, 1e-6) > 0.5  # printed value, n < 144 log(1/δ)
    assert shuffle_epsilon(0.5, 1000, 1e-6, "efmrtt") == 0.5
    assert shuffle_epsilon(1.0, 1, 1e-6) <= 1.0


@pytest.mark.parametrize("epsilon0", [1e-6, 0.4, 300.0, 700.0])
@pytest.mark.parametrize("n", [1, 2, 10**6])
def test_extreme_parameters_give_a_guarantee_between_0_and_epsilon0(
    epsilon0: float, n: int
) -> None:
    for domain_size in (None, 2, 10**6):
        epsilon = shuffle_epsilon(epsilon0, n, 1e-6, "best", domain_size=domain_size)
        assert 0 <= epsilon <= epsilon0


# ----------------------------------------------------------------------- bad parameters


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: shuffle_epsilon(0.0, 100, 1e-6), ValueError, "epsilon0"),
        (lambda: shuffle_epsilon(float("nan"), 100, 1e-6), ValueError, "epsilon0"),
        (lambda: shuffle_epsilon("1", 100, 1e-6), TypeError, "epsilon0"),
        (lambda: shuffle_epsilon(1.0, 0, 1e-6), ValueError, "n"),
        (lambda: shuffle_epsilon(1.0, 10.5, 1e-6), TypeError, "n"),
        (lambda: shuffle_epsilon(1.0, True, 1e-6), TypeError, "n"),
        (lambda: shuffle_epsilon(1.0, 100, 0.0), ValueError, "delta"),
        (lambda: shuffle_epsilon(1.0, 100, 1.0), ValueError, "delta"),
        (lambda: shuffle_epsilon(1.0, 100, float("nan")), ValueError, "delta"),
        (lambda: shuffle_epsilon(1.0, 100, None), TypeError, "delta"),
        (lambda: shuffle_epsilon(1.0, 100, 1e-6, "blanket_grr"), ValueError, "domain_size"),
        (lambda: shuffle_epsilon(1.0, 100, 1e-6, domain_size=1), ValueError, "domain_size"),
        (lambda: shuffle_epsilon(1.0, 100, 1e-6, "nope"), ValueError, "method"),
        (lambda: theory.efmrtt_epsilon(0.6, 5000, 1e-6), BoundNotApplicable, "epsilon0"),
        (lambda: theory.efmrtt_epsilon(0.4, 999, 1e-6), BoundNotApplicable, "n"),
        (lambda: theory.efmrtt_epsilon(0.4, 5000, 0.05), BoundNotApplicable, "delta"),
        (lambda: theory.fmt_closed_form_epsilon(6.0, 10**4, 1e-6), BoundNotApplicable, "epsilon0"),
        (
            lambda: theory.fmt_closed_form_epsilon(1.0, 10**5, 1e-6, reading="x"),
            ValueError,
            "reading",
        ),
        (lambda: theory.blanket_grr_epsilon(1.0, 2, 500, 1e-6), BoundNotApplicable, "n"),
        (lambda: theory.blanket_grr_epsilon(1.0, 1, 10**5, 1e-6), ValueError, "domain_size"),
        (lambda: theory.fmt_numerical_delta(-0.1, 1.0, 100), ValueError, "epsilon"),
        (lambda: theory.blanket_hoeffding_delta(1.0, 1.0, 100), ValueError, "epsilon"),
        (lambda: theory.blanket_bennett_delta(0.5, 1.0, 0), ValueError, "n"),
    ],
)
def test_bad_parameters_raise_naming_them(call, error: type, name: str) -> None:
    with pytest.raises(error, match=rf"^{name}\b"):
        call()
