"""Bad input fails early and clearly: the right exception, naming the parameter.

Every call that takes a Generator must raise before drawing from it: the tests compare
``rng.bit_generator.state`` before and after the failing call.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from oracle_testing import PROTOCOLS, make_oracle

from ldp.oracles import BLH, GRR, OLH, ORACLES, OUE, SHE, SUE, THE, HashReports, UnaryReports

D = 8


def assert_raises_without_drawing(
    call: Callable[[np.random.Generator], object], error: type[Exception], match: str
) -> None:
    """``call(rng)`` raises ``error`` matching ``match`` and leaves ``rng`` untouched."""
    rng = np.random.default_rng(123)
    before = rng.bit_generator.state
    with pytest.raises(error, match=match):
        call(rng)
    assert rng.bit_generator.state == before, "randomness was drawn before the error"


# --- construction --------------------------------------------------------------------------
BAD_EPSILONS = [
    (0, ValueError, "epsilon must be > 0"),
    (-1.0, ValueError, "epsilon must be > 0"),
    (math.nan, ValueError, "epsilon must be finite"),
    (math.inf, ValueError, "epsilon must be finite"),
    (-math.inf, ValueError, "epsilon must be finite"),
    (np.float64(math.nan), ValueError, "epsilon must be finite"),
    (1e6, ValueError, "epsilon must be <="),
    ("1.0", TypeError, "epsilon must be a real number, got str"),
    (True, TypeError, "epsilon must be a real number, got bool"),
    (None, TypeError, "epsilon must be a real number"),
    (np.array([1.0]), TypeError, "epsilon must be a real number"),
]


@pytest.mark.parametrize(("epsilon", "error", "match"), BAD_EPSILONS, ids=repr)
@pytest.mark.parametrize("name", PROTOCOLS)
def test_bad_epsilon(name: str, epsilon: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ORACLES[name](epsilon=epsilon, domain_size=D)


BAD_DOMAINS = [
    (1, ValueError, "domain_size must be >= 2, got 1"),
    (0, ValueError, "domain_size must be >= 2"),
    (-4, ValueError, "domain_size must be >= 2"),
    (8.0, TypeError, "domain_size must be an integer, got float"),
    ("8", TypeError, "domain_size must be an integer, got str"),
    (True, TypeError, "domain_size must be an integer, got bool"),
]


@pytest.mark.parametrize(("domain_size", "error", "match"), BAD_DOMAINS, ids=repr)
@pytest.mark.parametrize("name", PROTOCOLS)
def test_bad_domain_size(
    name: str, domain_size: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        ORACLES[name](epsilon=1.0, domain_size=domain_size)


@pytest.mark.parametrize(
    ("theta", "error"),
    [
        (0.0, ValueError),
        (-0.2, ValueError),
        (1.0001, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        ("0.5", TypeError),
        (True, TypeError),
    ],
    ids=repr,
)
def test_the_theta_outside_unit_interval(theta: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="theta"):
        THE(epsilon=1.0, domain_size=D, theta=theta)


def test_the_theta_accepts_the_closed_end() -> None:
    assert THE(epsilon=1.0, domain_size=D, theta=1).theta == 1.0
    assert 0.5 <= THE(epsilon=1.0, domain_size=D).theta <= 1.0


@pytest.mark.parametrize(
    ("g", "error", "match"),
    [
        (1, ValueError, "g must be >= 2"),
        (0, ValueError, "g must be >= 2"),
        (-3, ValueError, "g must be >= 2"),
        (2.5, TypeError, "g must be an integer"),
        (np.float64(3.0), TypeError, "g must be an integer"),
        (2**31 + 1, ValueError, "g must be <="),
    ],
    ids=repr,
)
def test_olh_bad_g(g: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        OLH(epsilon=1.0, domain_size=D, g=g)


def test_numpy_scalars_are_accepted() -> None:
    oracle = GRR(epsilon=np.float32(1.0), domain_size=np.int16(D))
    assert type(oracle.epsilon) is float and type(oracle.domain_size) is int
    assert OLH(epsilon=1.0, domain_size=D, g=np.int64(5)).g == 5


# --- perturb ---------------------------------------------------------------------------------
BAD_VALUES = [
    (np.array([0, 3, D]), ValueError, rf"values must lie in \[0, {D}\), found {D}"),
    (np.array([2, -1, 0]), ValueError, rf"values must lie in \[0, {D}\), found -1"),
    ([0, 1, 2**40], ValueError, "values must lie in"),
    (np.array([0.0, 1.0]), TypeError, "values must be an array of integers, got dtype float64"),
    ([0.5], TypeError, "values must be an array of integers"),
    (np.array([True, False]), TypeError, "values must be an array of integers, got dtype bool"),
    (np.array(["a"]), TypeError, "values must be an array of integers"),
    (np.zeros((3, 2), dtype=np.int64), ValueError, "values must be one-dimensional"),
    (3, ValueError, "values must be one-dimensional"),
]


@pytest.mark.parametrize(("values", "error", "match"), BAD_VALUES, ids=repr)
@pytest.mark.parametrize("name", PROTOCOLS)
def test_perturb_rejects_bad_values(
    name: str, values: object, error: type[Exception], match: str
) -> None:
    oracle = make_oracle(name, 1.0, domain_size=D)
    assert_raises_without_drawing(lambda rng: oracle.perturb(values, rng), error, match)


@pytest.mark.parametrize(
    "rng", [None, 0, np.random.RandomState(0), "seed"], ids=["None", "0", "RandomState", "str"]
)
@pytest.mark.parametrize("name", PROTOCOLS)
def test_rng_must_be_a_generator(name: str, rng: object) -> None:
    oracle = make_oracle(name, 1.0, domain_size=D)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.perturb(np.arange(D), rng)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        oracle.simulate(np.ones(D, dtype=np.int64), rng)


def test_wide_domain_values_need_words() -> None:
    """Above 2^64 values, keys are (n, W) uint64 words only, each below domain_size."""
    oracle = OLH(epsilon=1.0, domain_size=2**80)
    assert_raises_without_drawing(
        lambda rng: oracle.perturb(np.array([5], dtype=np.uint64), rng),
        ValueError,
        "values for a domain of more than 2\\^64 values must be a 2-D uint64 array of 2 words",
    )
    assert_raises_without_drawing(
        lambda rng: oracle.perturb(np.array([[0, 0, 5]], dtype=np.uint64), rng),
        ValueError,
        "2 words per value",
    )
    too_large = np.array([[2**16, 0]], dtype=np.uint64)  # = 2^80, one past the end
    assert_raises_without_drawing(
        lambda rng: oracle.perturb(too_large, rng), ValueError, r"values must lie in \[0, "
    )
    rng = np.random.default_rng(0)
    largest = np.array([[2**16 - 1, 2**64 - 1]], dtype=np.uint64)
    assert oracle.n_reports(oracle.perturb(largest, rng)) == 1


# --- simulate ----------------------------------------------------------------------------------
BAD_COUNTS = [
    (np.ones(D - 1, dtype=np.int64), ValueError, rf"true_counts must have shape \({D},\)"),
    (np.ones(D + 1, dtype=np.int64), ValueError, rf"true_counts must have shape \({D},\)"),
    (np.ones((D, 1), dtype=np.int64), ValueError, "true_counts must have shape"),
    (np.r_[np.ones(D - 1, dtype=np.int64), -1], ValueError, "true_counts must be non-negative"),
    (np.ones(D) * 1.0, TypeError, "true_counts must be an array of integers"),
    # Counts whose total overflows int64 (issue 9: n came out negative): refused.
    (np.full(D, 2**62, dtype=np.int64), ValueError, "more than int64 can count"),
    (np.r_[np.zeros(D - 1, dtype=np.uint64), 2**64 - 1], ValueError, "must fit int64"),
]


@pytest.mark.parametrize(("counts", "error", "match"), BAD_COUNTS, ids=repr)
@pytest.mark.parametrize("name", PROTOCOLS)
def test_simulate_rejects_bad_counts(
    name: str, counts: np.ndarray, error: type[Exception], match: str
) -> None:
    oracle = make_oracle(name, 1.0, domain_size=D)
    assert_raises_without_drawing(lambda rng: oracle.simulate(counts, rng), error, match)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_simulate_rejects_bad_candidates(name: str) -> None:
    oracle = make_oracle(name, 1.0, domain_size=D)
    counts = np.ones(D, dtype=np.int64)
    assert_raises_without_drawing(
        lambda rng: oracle.simulate(counts, rng, candidates=[1, 1]),
        ValueError,
        "candidates must be distinct",
    )
    assert_raises_without_drawing(
        lambda rng: oracle.simulate(counts, rng, candidates=[1, D]),
        ValueError,
        r"candidates must lie in \[0, ",
    )
    assert_raises_without_drawing(
        lambda rng: oracle.simulate(counts, rng, candidates=[1.0]),
        TypeError,
        "candidates must be an array of integers",
    )


# --- estimate ----------------------------------------------------------------------------------
def _valid_reports(name: str):
    return make_oracle(name, 1.0, domain_size=D).perturb(np.arange(D), np.random.default_rng(1))


WRONG_REPORTS = {
    "GRR": [
        (np.zeros((4, 2), dtype=np.int64), ValueError, "reports must be one-dimensional"),
        (np.array([0, D]), ValueError, r"reports must lie in \[0, 8\)"),
        (np.zeros(4), TypeError, "reports must be an array of integers"),
    ],
    **{
        name: [
            (np.zeros((4, 1), dtype=np.uint8), TypeError, r"must be UnaryReports\(bits, "),
            (
                UnaryReports(np.zeros((4, 2), dtype=np.uint8), D),
                ValueError,
                r"packed bits of shape \(n, 1\)",
            ),
            (UnaryReports(np.zeros((4, D), dtype=bool), D), ValueError, "packed bits"),
            (UnaryReports(np.zeros(4, dtype=np.uint8), D), ValueError, "packed bits"),
            (
                UnaryReports(np.zeros((4, 1), dtype=np.uint8), D - 1),
                ValueError,
                rf"encode a domain of {D - 1} values, not domain_size = {D}",
            ),
        ]
        for name in ("SUE", "OUE", "THE")
    },
    "SHE": [
        (np.zeros((4, D - 1), dtype=np.int32), ValueError, rf"integer arrays of shape \(n, {D}\)"),
        (np.zeros((4, D)), ValueError, "integer arrays"),
        (np.zeros(D, dtype=np.int32), ValueError, "integer arrays"),
    ],
    **{
        name: [
            (np.zeros((2, 4), dtype=np.int64), TypeError, "reports must be HashReports"),
            (
                HashReports(np.zeros(4, dtype=np.uint64), np.zeros(3, dtype=np.int64)),
                ValueError,
                "one seed and one value per user",
            ),
            (
                HashReports(np.zeros(4, dtype=np.uint64), np.full(4, 10**6)),
                ValueError,
                r"report values must lie in \[0, ",
            ),
            (
                HashReports(np.zeros(4, dtype=np.uint64), np.zeros(4)),
                TypeError,
                "integer seeds and values",
            ),
        ]
        for name in ("BLH", "OLH")
    },
}


@pytest.mark.parametrize(
    ("name", "reports", "error", "match"),
    [(name, *case) for name, cases in WRONG_REPORTS.items() for case in cases],
    ids=lambda x: x if isinstance(x, str) else None,
)
def test_estimate_rejects_wrong_reports(
    name: str, reports: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        make_oracle(name, 1.0, domain_size=D).estimate(reports)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_estimate_rejects_bad_candidates(name: str) -> None:
    oracle, reports = make_oracle(name, 1.0, domain_size=D), _valid_reports(name)
    with pytest.raises(ValueError, match=r"candidates must lie in \[0, 8\), found 8"):
        oracle.estimate(reports, candidates=[0, D])
    with pytest.raises(ValueError, match="candidates must lie in"):
        oracle.estimate(reports, candidates=[-1])
    with pytest.raises(TypeError, match="candidates must be an array of integers"):
        oracle.estimate(reports, candidates=np.array([0.0]))


def test_every_protocol_is_covered() -> None:
    # Table 1's oracles; a new oracle module brings its own tests (docs/new-protocol.md)
    assert set(WRONG_REPORTS) == set(PROTOCOLS) <= set(ORACLES)
    assert {BLH, GRR, OLH, OUE, SHE, SUE, THE} <= set(ORACLES.values())


SAMPLED_ORACLES = ("GRR", "SUE", "SHE", "OLH", "SS", "FLH", "HR", "HM", "CMS", "HCMS", "RAPPOR")
BAD_POPULATIONS = [
    (np.array([1, 1]), np.array([3, 4]), ValueError, "values must be distinct"),
    (np.array([1, 2]), np.array([3]), ValueError, "one entry each"),
    (np.array([1, D]), np.array([3, 4]), ValueError, r"values must lie in \[0, "),
    (np.array([1, 2]), np.array([3, -1]), ValueError, "counts must be non-negative"),
    (np.array([1.0]), np.array([3]), TypeError, "values must be an array of integers"),
]


@pytest.mark.parametrize(("values", "counts", "error", "match"), BAD_POPULATIONS)
@pytest.mark.parametrize("name", SAMPLED_ORACLES)
def test_simulate_candidates_rejects_a_bad_population(name, values, counts, error, match):
    oracle = make_oracle(name, 1.0, domain_size=D)
    assert_raises_without_drawing(
        lambda rng: oracle.simulate_candidates(values, counts, [0, 1], rng), error, match
    )
    assert_raises_without_drawing(
        lambda rng: oracle.simulate_candidates([3, 4], [1, 1], [0, 0], rng),
        ValueError,
        "candidates must be distinct",
    )
