"""The emitted reports are ε-LDP as bytes: floating point, rounding and memory (issue 9).

* SHE and THE used to add 1.0 to float Laplace noise: fl(1 + L) in (-1/2, 1/2) is on the
  2^-53 grid and plain draws are not (Mironov's attack), so an off-grid coordinate could
  not hold the user's value.  Their reports are now integers and bits.
* ``rng.random() < p`` realised ceil(p 2^53)/2^53 and, with p rounded to 1.0, reported the
  true value always (GRR at ε = 40).  Coins are now drawn on an exact 53-bit grid, the
  oracles declare the realised p*, q*, and an ε at which a report probability would
  round to 0 or 1 is refused.
* Reports of absurd size, counts that overflow int64, reports of another domain.

Statistical assertions are at level ALPHA = 1e-4 each (see ``oracle_testing``).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from oracle_testing import ALPHA, PROTOCOLS, make_oracle, seed_for
from scipy import stats

from ldp.oracles import GRR, OLH, ORACLES, OUE, SHE, SUE, THE, UnaryReports, discrete_laplace
from ldp.oracles import exact as exact_coins
from ldp.oracles.discrete_laplace import TOTAL, Table, histogram_noise
from ldp.privacy import max_privacy_loss
from ldp.reports import bare


# --- 1. the floating-point attack of the issue -------------------------------------------------
def off_grid(x: np.ndarray) -> np.ndarray:
    """|x| < 1/2 and x not a multiple of 2^-53: impossible for fl(1 + L) (issue 9)."""
    x = np.asarray(x, dtype=float)
    scaled = x * 2.0**53
    return (np.abs(x) < 0.5) & (scaled != np.floor(scaled))


@pytest.mark.parametrize("name", ["SHE", "THE"])
def test_histogram_reports_do_not_reveal_the_value_through_floating_point(name: str) -> None:
    """The issue's attack: the off-grid rate of coordinate 1 under inputs 0 and 1.

    Before the fix: 0.27 against exactly 0 at n = 200,000 (about 30% of users identified).
    Now the reports are integers or bits: both rates must agree (two-proportion z-test).
    """
    oracle = ORACLES[name](epsilon=2.0, domain_size=2)
    n = 200_000
    reports = [
        oracle.perturb(np.full(n, v, dtype=np.int64), seed_for("grid", name, v)) for v in (0, 1)
    ]
    if isinstance(reports[0], UnaryReports):
        reports = [np.unpackbits(r.bits, axis=1, count=2) for r in reports]
    assert all(np.asarray(r).dtype.kind in "iub" for r in reports), "reports must not be floats"
    rates = [off_grid(r[:, 1]).mean() for r in reports]
    pooled = (rates[0] + rates[1]) / 2
    se = math.sqrt(max(pooled * (1 - pooled), 1.0 / n) * 2 / n)
    assert abs(rates[0] - rates[1]) <= stats.norm.isf(ALPHA / 2) * se, rates


# --- 2. exact coins -----------------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.5, 2.0, 6.0, 20.0])
@pytest.mark.parametrize("name", ["GRR", "SUE", "OUE", "THE", "BLH", "OLH"])
def test_declared_probabilities_are_on_the_grid_and_private(name: str, epsilon: float) -> None:
    """p* (and q* for the unary encodings) are multiples of 2^-53, rounded privately.

    The realised loss is <= ε and, THE aside (client-side thresholding is post-processing),
    below it only by the rounding: each coin's smaller side x moves by at most
    2^-50 x + 2^-53, which moves the loss by at most 2^-50 + 2^-53/x (two coins at most).
    """
    kwargs = {"g": 16} if name == "OLH" else {}  # the default g = 4.9e8 at ε = 20
    oracle = ORACLES[name](epsilon=epsilon, domain_size=8, **kwargs)
    assert (oracle.p_star * exact_coins.GRID).is_integer()
    coins = [oracle.p_star]
    if name in ("SUE", "OUE", "THE"):
        assert (oracle.q_star * exact_coins.GRID).is_integer()
        coins.append(oracle.q_star)
    loss = max_privacy_loss(oracle)
    assert loss <= epsilon * (1 + 1e-12)
    if name != "THE":
        smallest = min(min(x, 1 - x) for x in coins)
        assert loss >= epsilon - 2.2 * (2**-50 + 2**-53 / smallest) - 1e-14


def test_coins_have_the_threshold_probability() -> None:
    """U < T with U uniform on [0, 2^53) is 1 with probability T/2^53 (binomial test)."""
    rng = seed_for("coins")
    for t in (1 << 50, 3 * (1 << 51), exact_coins.GRID - (1 << 49)):
        draws = exact_coins.bernoulli(rng, t, 200_000)
        result = stats.binomtest(int(draws.sum()), draws.size, t / exact_coins.GRID)
        assert result.pvalue >= ALPHA / 3


def test_coins_whose_top_bits_tie_with_the_threshold_draw_the_low_bits() -> None:
    """``below`` draws U's top 8 bits, and its 45 low bits only where they tie with T's.

    T = 3·2^45 + 2^44 (and T = 2^44 alone) puts half of the tie's 1/256 in the coin's
    probability: 3.5/256 (and 0.5/256).  Ties read as 0 or as 1 would give 3/256 or 4/256
    (0 or 1/256), at least 17 SE away at n = 10^6: the binomial test rejects both.  Each
    threshold is also tested as one coin's own among others, and T = 0 and 2^53 exactly.
    """
    rng, n, half = seed_for("coins", "tie"), 1_000_000, 1 << 44
    thresholds = np.array([3 * (1 << 45) + half, half, 0, exact_coins.GRID], dtype=np.int64)
    for t in thresholds[:2]:
        drawn = int(exact_coins.below(rng, int(t), n).sum())
        assert stats.binomtest(drawn, n, t / exact_coins.GRID).pvalue >= ALPHA / 4
        for wrong in (t - half, t + half):  # the tie read as 0, as 1
            assert stats.binomtest(drawn, n, wrong / exact_coins.GRID).pvalue < ALPHA
    own = exact_coins.below(rng, thresholds, (n // 4, 4))
    for column, t in enumerate(thresholds[:2]):
        drawn = int(own[:, column].sum())
        assert stats.binomtest(drawn, n // 4, t / exact_coins.GRID).pvalue >= ALPHA / 4
    assert not own[:, 2].any() and own[:, 3].all()


@pytest.mark.parametrize(
    ("probability", "complement", "round_down"),
    [(0.3, 0.7, True), (0.3, 0.7, False), (1 - 1e-12, 1e-12, True), (1e-12, 1 - 1e-12, False)],
)
def test_threshold_rounds_in_the_private_direction(probability, complement, round_down) -> None:
    t = exact_coins.threshold(probability, complement, round_down=round_down)
    realised = exact_coins.realised(t)
    smaller = min(probability, complement)
    if round_down:
        assert realised <= probability and 1 - realised >= complement
    else:
        assert realised >= probability and 1 - realised <= complement
    slack = abs((realised if probability <= complement else 1 - realised) - smaller)
    assert slack <= smaller * 2**-49 + 2.0**-53


LARGEST_SAFE = {
    "GRR": lambda o: math.log(o.domain_size - 1) + exact_coins.LOG_GRID,
    "BLH": lambda o: exact_coins.LOG_GRID,
    "SUE": lambda o: 2 * exact_coins.LOG_GRID,
    "OUE": lambda o: exact_coins.LOG_GRID,
    "THE": lambda o: o.largest_safe_epsilon(),
}


@pytest.mark.parametrize("name", list(LARGEST_SAFE))
def test_deterministic_reports_are_refused_at_the_boundary(name: str) -> None:
    """Just below the largest safe ε the oracle builds; just above it refuses, saying so.

    GRR at ε = 40, d = 16 used to report the true value every time (p* = 1.0).
    """
    kwargs = {"theta": 0.9} if name == "THE" else {}
    largest = LARGEST_SAFE[name](ORACLES[name](epsilon=1.0, domain_size=16, **kwargs))
    below = ORACLES[name](epsilon=largest - 1e-6, domain_size=16, **kwargs)
    assert 0 < below.q_star < below.p_star < 1
    assert max_privacy_loss(below) <= below.epsilon * (1 + 1e-12)
    with pytest.raises(ValueError, match=r"epsilon = .* is too large .* largest safe epsilon is"):
        ORACLES[name](epsilon=largest + 1e-6, domain_size=16, **kwargs)
    if name == "GRR":
        with pytest.raises(ValueError, match="largest safe epsilon is 39.4"):
            GRR(epsilon=40.0, domain_size=16)


def test_olh_boundary_with_a_given_g() -> None:
    largest = math.log(4) + exact_coins.LOG_GRID
    assert OLH(epsilon=largest - 1e-6, domain_size=8, g=5).p_star < 1
    with pytest.raises(ValueError, match="largest safe epsilon"):
        OLH(epsilon=largest + 1e-6, domain_size=8, g=5)


def test_grr_over_a_huge_domain_needs_a_large_enough_epsilon() -> None:
    """Above 2^53 values the keep probability itself can fall below the grid."""
    d = 2**60
    smallest = math.log(d - 1) - exact_coins.LOG_GRID
    assert GRR(epsilon=smallest + 1e-6, domain_size=d).p_star > 0
    with pytest.raises(ValueError, match="too small for GRR.*smallest safe epsilon"):
        GRR(epsilon=smallest - 1e-6, domain_size=d)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_tiny_epsilon_is_refused_clearly(name: str) -> None:
    with pytest.raises(ValueError, match=r"epsilon must be >= 1e-06 .* got 1e-09"):
        ORACLES[name](epsilon=1e-9, domain_size=8)


def test_she_refuses_an_epsilon_its_tables_cannot_hold() -> None:
    with pytest.raises(
        ValueError, match=r"epsilon must be >= 0.01 for SHE \(its exact noise tables"
    ):
        SHE(epsilon=0.005, domain_size=8)


# --- 3. SHE's exact tables ----------------------------------------------------------------------
@pytest.mark.parametrize("epsilon", [0.01, 0.5, 2.0, 6.0, 40.0])
def test_she_tables_are_exact(epsilon: float) -> None:
    """Masses sum to 2^128, ratios stay in [α^s, α^-s], the mean shift is s, Var ≈ 8/ε²."""
    noise = histogram_noise(epsilon)
    s, alpha = noise.grid, noise.alpha
    assert alpha ** (2 * s) >= math.exp(-epsilon) * (1 - 1e-15)
    for table in (noise.own, noise.other):
        assert sum(table.masses) == TOTAL and min(table.masses) >= 1
    own, other = np.array(noise.own.masses, dtype=float), np.array(noise.other.masses, dtype=float)
    assert np.all(np.abs(np.log(own / other)) <= epsilon / 2 * (1 + 1e-12))
    assert noise.realised_epsilon <= epsilon
    assert noise.realised_epsilon >= epsilon * (1 - 1e-11)
    assert noise.mean_other == 0.0 and noise.mean_own == pytest.approx(s, rel=1e-15)
    lam = -math.log(alpha)
    ideal = 2 * alpha / (1 - alpha) ** 2
    assert noise.var_other == pytest.approx(ideal, rel=1e-12)
    assert noise.var_other / s**2 * epsilon**2 / 8 == pytest.approx(1 - lam**2 / 12, abs=1e-4)
    assert noise.tv_per_draw < 1e-29


class ScriptedGenerator:
    """Stands in for a Generator whose raw 64-bit output is scripted: each call of
    ``bit_generator.random_raw`` returns the next list of words, as uint64."""

    def __init__(self, *words: list[int]) -> None:
        self.words = list(words)
        self.bit_generator = self

    def random_raw(self, size: int) -> np.ndarray:
        out = np.array(self.words.pop(0), dtype=np.uint64)
        assert out.size == size
        return out


def _as_raw(halves: list[int]) -> list[int]:
    """32-bit words as the raw 64-bit words whose halves (low first) they are."""
    halves = halves + [0] * (len(halves) % 2)
    return [halves[i] | (halves[i + 1] << 32) for i in range(0, len(halves), 2)]


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
def test_table_search_is_exact_on_128_bits(compiled: bool, monkeypatch) -> None:
    """cell(U) = #{i : C(i) <= U}, checked in Python integers, for U drawn as its top 32
    bits, the next 32 where the guide cannot tell, and the low 64 where a C(i) shares U's
    high word (tied high words included); with the compiled kernel and without."""
    if compiled and not discrete_laplace.HAVE_NUMBA:
        pytest.skip("numba is not installed")
    monkeypatch.setattr(discrete_laplace, "HAVE_NUMBA", compiled)
    masses = [1, 1, 2, 1 << 64, 5, (1 << 70) + 3]
    masses.append(TOTAL - sum(masses))
    table = Table.build(masses)
    boundaries = list(np.cumsum(np.array(masses[:-1], dtype=object)))
    us = [0, 1, 2, 3, 4, (1 << 64) + 3, (1 << 64) + 4, (1 << 64) + 9, (1 << 70), TOTAL - 1]
    us.append((1 << 127) + (1 << 64))  # a bucket with no C(i): the guide alone decides
    tops, highs = [u >> 96 for u in us], [u >> 64 for u in us]
    lows = [u & ((1 << 64) - 1) for u in us]
    unguided = [i for i in range(len(us)) if tops[i] == 0]  # every C(i) has A = 0
    nexts = [highs[i] & ((1 << 32) - 1) for i in unguided]
    tied_lows = [lows[i] for i in unguided if highs[i] in (0, 1)]
    script = ScriptedGenerator(_as_raw(tops), _as_raw(nexts), tied_lows)
    cells = table.fill(script, np.empty(len(us), dtype=np.int64), offset=-3)
    expected = [sum(c <= u for c in boundaries) - 3 for u in us]
    assert cells.tolist() == expected and not script.words


def test_a_fill_of_several_chunks_reads_fresh_words_for_each() -> None:
    """The first chunk's cells are the guide's cells of the stream's first words, and no
    chunk repeats another's words (a split that re-read them would)."""
    table, chunk = histogram_noise(1.0).other, discrete_laplace.FILL_CHUNK
    filled = table.fill(np.random.default_rng(3), np.empty(5 * chunk // 2 + 1, dtype=np.int32))
    top = np.random.default_rng(3).bit_generator.random_raw(chunk // 2).view(np.uint32)
    guided = table.guide[top >> np.uint32(32 - table.guide_bits)]
    sure = guided >= 0
    assert np.array_equal(filled[:chunk][sure], guided[sure]) and sure.mean() > 0.99
    parts = [filled[:chunk], filled[chunk : 2 * chunk], filled[2 * chunk :]]
    assert not np.array_equal(parts[0], parts[1])
    assert not np.array_equal(parts[0][: parts[2].size], parts[2])


# --- 4. memory, overflow and foreign reports ---------------------------------------------------
@pytest.mark.parametrize("name", ["SUE", "OUE", "THE", "SHE"])
def test_reports_beyond_the_memory_budget_are_refused(name: str) -> None:
    oracle = ORACLES[name](epsilon=1.0, domain_size=2**40)
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError, match=r"of 10 users over domain_size = 1099511627776") as error:
        oracle.perturb(np.zeros(10, dtype=np.int64), rng)
    assert error.value.name == "domain_size" and "memory budget" in str(error.value)
    assert rng.bit_generator.state == before


@pytest.mark.parametrize("name", PROTOCOLS)
def test_simulate_refuses_counts_that_overflow_int64(name: str) -> None:
    oracle = make_oracle(name, 1.0, domain_size=4)
    counts = np.array([2**62, 2**62, 1, 0], dtype=np.int64)
    with pytest.raises(ValueError, match=r"true_counts sum to .* users"):
        oracle.simulate(counts, np.random.default_rng(0))
    with pytest.raises(ValueError, match="must fit int64"):
        oracle.simulate(np.array([2**63, 0, 0, 0], dtype=np.uint64), np.random.default_rng(0))


@pytest.mark.parametrize("cls", [SUE, OUE, THE])
def test_unary_reports_of_another_domain_are_refused(cls) -> None:
    """d = 9 and d = 10 both pack into 2 bytes: the reports carry their d (in their
    stamp, and in the field ``d`` that a bare copy keeps too)."""
    rng = np.random.default_rng(1)
    nine, ten = cls(epsilon=1.0, domain_size=9), cls(epsilon=1.0, domain_size=10)
    with pytest.raises(ValueError, match="encode a domain of 9 values, not domain_size = 10"):
        ten.estimate(bare(nine.perturb(np.arange(9), rng)))
    with pytest.raises(ValueError, match="encode a domain of 10 values"):
        nine.estimate(bare(ten.perturb(np.arange(10), rng)))
    with pytest.raises(ValueError, match="domain_size=9"):
        ten.estimate(nine.perturb(np.arange(9), rng))
    forged = UnaryReports(bare(ten.perturb(np.full(50, 9), rng).bits), 9)
    with pytest.raises(ValueError, match="bits set beyond domain_size = 9"):
        nine.estimate(forged)


def test_library_exceptions_survive_pickling() -> None:
    """Errors cross process boundaries (joblib workers): each must pickle and keep its text."""
    calls = [
        lambda: GRR(epsilon=40.0, domain_size=16),
        lambda: SUE(epsilon=-1.0, domain_size=4),
        lambda: SHE(epsilon=0.001, domain_size=4),
        lambda: OUE(epsilon=1.0, domain_size=2**40).perturb(
            np.zeros(3, dtype=np.int64), np.random.default_rng(0)
        ),
        lambda: GRR(epsilon=1.0, domain_size=4).perturb([0.5], np.random.default_rng(0)),
        lambda: max_privacy_loss(object()),
    ]
    for call in calls:
        with pytest.raises(Exception) as info:
            call()
        copy = pickle.loads(pickle.dumps(info.value))
        assert type(copy) is type(info.value) and str(copy) == str(info.value)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_oracles_pickle_to_their_parameters(name: str) -> None:
    """Oracles cross to worker processes; SHE's tables are rebuilt there, not shipped."""
    oracle = make_oracle(name, 1.0)
    payload = pickle.dumps(oracle)
    copy = pickle.loads(payload)
    assert copy == oracle and hash(copy) == hash(oracle) and len(payload) < 1000
    rng_a, rng_b = seed_for("pickle", name), seed_for("pickle", name)
    values = np.arange(16)
    np.testing.assert_array_equal(
        oracle.estimate(oracle.perturb(values, rng_a)), copy.estimate(copy.perturb(values, rng_b))
    )
