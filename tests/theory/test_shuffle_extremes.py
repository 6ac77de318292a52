"""ldp.theory.shuffle at the edges of its range: ε0 up to 700, n from 1 to 10^9.

Every method of :func:`shuffle_epsilon` must return a valid guarantee or refuse:

* 0 <= ε <= ε0 (the shuffle is post-processing of ε0-LDP reports);
* at n = 1 nothing is shuffled, so ε is never below the exact (ε, δ) of one ε0-LDP report,
  ε0 + log(1 - δ (1 + e^-ε0)) (binary randomized response, the worst ε0-LDP randomizer,
  attains it): a bound below that certifies privacy that does not hold;
* ε does not increase with n and does not decrease with ε0 (up to the solvers' relative
  tolerance of 1e-10, allowed here as 1e-9);
* a refusal is :class:`BoundNotApplicable` or a budget :class:`ParameterError`, never a
  crash or a long run (each call runs under a budget of 2^28 operations, about a second).

Before the log-space rewrite, [FMT21]'s numerical bound returned 53 log 2 = 36.7368 for
every ε0 >= 40 and the [BBGN19] blanket bounds returned 1e-10 at n = 1, ε0 = 100.
"""

from __future__ import annotations

import math
import time
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from ldp import budget
from ldp.theory import BoundNotApplicable, shuffle, shuffle_epsilon
from ldp.theory.shuffle import METHODS
from ldp.validation import ParameterError

#: Relative tolerance of the monotonicity checks (the solvers' rtol is 1e-10).
RTOL = 1e-9
#: Up to this n no bound of "best" meets the test's budget, so "best" is monotone there.
BEST_MONOTONE_UP_TO = 10**7
#: The budget each call runs under: refusals are allowed, long runs are not.
OPERATIONS = 2**28

epsilons = st.floats(min_value=0.01, max_value=700.0, allow_nan=False)
sizes = st.integers(min_value=1, max_value=10**9)
deltas = st.sampled_from([1e-10, 1e-6, 1e-3])
domain_sizes = st.one_of(st.none(), st.integers(min_value=2, max_value=1000))
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _answer(epsilon0: float, n: int, delta: float, method: str, domain_size: int | None):
    """The method's ε, or None when it refuses (outside its theorem or over the budget)."""
    if method == "blanket_grr" and domain_size is None:
        domain_size = 2
    with budget.limits(operations=OPERATIONS):
        try:
            return shuffle_epsilon(epsilon0, n, delta, method, domain_size=domain_size)
        except BoundNotApplicable:
            return None
        except ParameterError as error:
            assert error.name == "n" and "budget" in str(error)
            return None


#: The methods that use ``domain_size`` (a bound for GRR over d values, not any randomizer).
SPECIFIC = {"blanket_hoeffding", "blanket_bennett", "blanket_grr", "variation_ratio", "best"}


def _single_report(
    epsilon0: float, delta: float, method: str = "", domain_size: int | None = None
) -> float:
    """The exact ε of one report at δ, at least 0: ε0 + log(1 - δ (1 + (d-1) e^-ε0)).

    GRR over d values has δ(ε) = (e^ε0 - e^ε)/(e^ε0 + d - 1) between two inputs; d = 2
    (binary randomized response) is the worst ε0-LDP randomizer, used for generic bounds.
    """
    if method == "blanket_grr" and domain_size is None:
        domain_size = 2
    d = domain_size if method in SPECIFIC and domain_size is not None else 2
    return max(0.0, epsilon0 + math.log1p(-delta * (1 + (d - 1) * math.exp(-epsilon0))))


@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(epsilon0=epsilons, n=sizes, delta=deltas, domain_size=domain_sizes)
def test_between_zero_and_epsilon0(method, epsilon0, n, delta, domain_size) -> None:
    value = _answer(epsilon0, n, delta, method, domain_size)
    if value is not None:
        assert 0.0 <= value <= epsilon0


@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(epsilon0=epsilons, delta=deltas, domain_size=domain_sizes)
def test_one_user_is_not_amplified(method, epsilon0, delta, domain_size) -> None:
    value = _answer(epsilon0, 1, delta, method, domain_size)
    if value is not None:
        assert (
            _single_report(epsilon0, delta, method, domain_size) * (1 - 1e-12) <= value <= epsilon0
        )


@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(epsilon0=epsilons, n=sizes, more=sizes, delta=deltas, domain_size=domain_sizes)
def test_non_increasing_in_n(method, epsilon0, n, more, delta, domain_size) -> None:
    small, large = sorted((n, more))
    if method == "best" and large > BEST_MONOTONE_UP_TO:
        # where a numerical bound exceeds the budget, "best" answers from the others, which
        # may be looser: it can step up there (every value it returns is still a guarantee)
        small, large = min(small, BEST_MONOTONE_UP_TO), min(large, BEST_MONOTONE_UP_TO)
    before = _answer(epsilon0, small, delta, method, domain_size)
    after = _answer(epsilon0, large, delta, method, domain_size)
    if before is not None and after is not None:
        assert after <= before * (1 + RTOL) + 1e-300


@pytest.mark.parametrize("method", METHODS)
@SETTINGS
@given(epsilon0=epsilons, other=epsilons, n=sizes, delta=deltas, domain_size=domain_sizes)
def test_non_decreasing_in_epsilon0(method, epsilon0, other, n, delta, domain_size) -> None:
    low, high = sorted((epsilon0, other))
    below = _answer(low, n, delta, method, domain_size)
    above = _answer(high, n, delta, method, domain_size)
    if below is not None and above is not None:
        assert above >= below * (1 - RTOL)


@pytest.mark.parametrize(
    ("epsilon0", "n", "method", "domain_size"),
    [
        (100.0, 1, "best", None),
        (100.0, 10, "blanket_hoeffding", None),
        (100.0, 10, "blanket_bennett", None),
        (40.0, 1000, "fmt_numerical", None),
        (36.0, 10**6, "fmt_numerical", None),
        (100.0, 1, "variation_ratio", None),
        (700.0, 10**6, "best", 4),
    ],
)
def test_large_epsilon0_is_not_amplified_by_a_few_users(epsilon0, n, method, domain_size):
    # e^-ε0 n is below 1e-9 here: almost surely no clone, so nothing hides the user
    value = shuffle_epsilon(epsilon0, n, 1e-6, method, domain_size=domain_size)
    assert value >= _single_report(epsilon0, 1e-6, method, domain_size) - 1e-6


@pytest.mark.parametrize("method", ["fmt_numerical", "variation_ratio"])
def test_huge_n_is_refused_quickly(method: str) -> None:
    # scipy's quantile search alone used to run for minutes here
    start = time.perf_counter()
    with pytest.raises(ParameterError, match="budget") as caught:
        shuffle_epsilon(1.0, 2**63 - 1, 1e-6, method)
    assert caught.value.name == "n"
    assert time.perf_counter() - start < 5.0


def test_best_answers_huge_n_from_the_bounds_within_the_budget() -> None:
    start = time.perf_counter()
    value = shuffle_epsilon(1.0, 2**63 - 1, 1e-6, "best")
    blanket = shuffle_epsilon(1.0, 2**63 - 1, 1e-6, "blanket_hoeffding")
    assert 0 <= value <= blanket < 1e-9
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize(("n", "epsilon0"), [(10**7, 0.5), (10**6, 1.0)])
def test_the_tail_recurrence_is_within_its_rounding_allowance(n: int, epsilon0: float) -> None:
    """The recurrence's relative error, against ``binom.sf``, is below the outward rounding
    applied to it (the per-count divergence subtracts (e^ε-1) times these tails)."""
    p = math.exp(-epsilon0)
    spread = 8 * math.sqrt(n * p * (1 - p))
    clones = np.arange(int(n * p - spread), int(n * p + spread) + 1, dtype=float)
    assert clones.size > shuffle._DIRECT_TAILS
    epsilon = 0.001
    up = math.expm1(epsilon) - math.expm1(-epsilon0)
    down = -math.expm1(epsilon - epsilon0)
    total = (1 + math.exp(epsilon)) * -math.expm1(-epsilon0)
    thresholds = shuffle._threshold(clones + 1, up / total, down / total)
    recurrence = shuffle._half_binomial_tails(clones, thresholds)
    exact = binom.sf(thresholds - 1, clones, 0.5)
    relative = np.abs(recurrence - exact) / exact
    assert relative.max() < shuffle._RECURRENCE_ROUNDING / 10


def _exact_log_count_term(n: int, gamma: float, rate: float) -> float:
    """log((1 - γ(1 - e^-rate))^n - (1 - γ)^n) in 120-digit decimal arithmetic."""
    with localcontext() as context:
        context.prec = 120
        g, r, one = Decimal(gamma), Decimal(rate), Decimal(1)
        return float(((one - g * (one - (-r).exp())) ** n - (one - g) ** n).ln())


@pytest.mark.parametrize(
    ("n", "gamma", "rate"),
    [
        (2**63 - 1, math.exp(-1), 8e-26),  # n γ rate ~ 1e-7: two logs of order n cancel
        (10**9, math.exp(-1), 1e-12),
        (10**9, math.exp(-1), 1e-3),
        (1, math.exp(-100), 0.5),  # the difference of powers rounds to 0
        (10, math.exp(-100), 1e-30),
        (10**6, 0.5, 2.0),
        (5000, math.exp(-0.4), 0.01),
    ],
)
def test_the_blanket_count_term_is_an_upper_bound(n: int, gamma: float, rate: float) -> None:
    ours = shuffle._blanket_log_count_term(n, gamma, rate)
    exact = _exact_log_count_term(n, gamma, rate)
    assert 0 <= ours - exact <= 1e-9 * max(1.0, abs(exact))


@pytest.mark.parametrize("method", ["blanket_hoeffding", "blanket_bennett"])
def test_the_blanket_bounds_hold_at_the_largest_n(method: str) -> None:
    # ε = 10^-12 (the search's floor) would mean δ(ε) <= 10^-6 there; it is ~1.6e-6
    value = shuffle_epsilon(1.0, 2**63 - 1, 1e-6, method)
    assert 1.5e-12 < value < 1.7e-12


@pytest.mark.parametrize("u", [1e-9, 1e-6, 9.99e-5, 1e-4, 1.01e-4, 1e-3, 0.1, 1.0, 10.0, 1e6])
def test_bennett_h_is_rounded_down(u: float) -> None:
    # a larger h would shrink Bennett's δ(ε) and overstate privacy
    with localcontext() as context:
        context.prec = 80
        x = Decimal(u)
        exact = float((1 + x) * (1 + x).ln() - x)
    assert exact * (1 - 1e-10) <= shuffle._bennett_h(u) <= exact
