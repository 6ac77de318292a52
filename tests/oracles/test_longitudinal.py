"""L-GRR, L-OUE, L-OSUE: the instantaneous step's ε₁, the exact loss over τ rounds,
memoization per (user, value), unbiased rounds, and the audit of a user's whole sequence.

Statistical assertions are tests at level ALPHA = 1e-4 each on fixed seeds (the
conformance suite covers one round as an ordinary oracle, both engines).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldp import audit
from ldp.oracles import LGRR, LOSUE, LOUE
from ldp.oracles.longitudinal import Rounds
from ldp.privacy import max_privacy_loss
from ldp.theory import longitudinal as chain
from ldp.validation import ParameterError

ALPHA = 1e-4
Z = float(stats.norm.isf(ALPHA / 2))
PROTOCOLS = (LGRR, LOUE, LOSUE)
GRID = [(0.5, 1.0), (1.0, 2.0), (0.3, 4.0), (2.0, 2.5), (3.0, 8.0)]  # (ε₁, ε_∞)


def rng_for(*key: object) -> np.random.Generator:
    words = tuple(sum(ord(c) * 31**i for i, c in enumerate(repr(k))) % 2**32 for k in key)
    return np.random.default_rng(np.random.SeedSequence(2022, spawn_key=words))


# --- the instantaneous step: one report is exactly ε₁-LDP, the memo ε_∞-LDP ---------------
@pytest.mark.parametrize("cls", PROTOCOLS)
@pytest.mark.parametrize(("epsilon", "epsilon_inf"), GRID)
@pytest.mark.parametrize("d", [2, 5, 16])
def test_one_report_is_exactly_epsilon_1(cls, epsilon, epsilon_inf, d) -> None:
    if cls is LOUE and not chain.l_oue_feasible(epsilon_inf, epsilon):
        with pytest.raises(ParameterError) as error:
            cls(epsilon=epsilon, domain_size=d, epsilon_inf=epsilon_inf)
        assert error.value.name == "epsilon_inf"
        return
    oracle = cls(epsilon=epsilon, domain_size=d, epsilon_inf=epsilon_inf)
    loss = max_privacy_loss(oracle)
    assert epsilon * (1 - 1e-9) <= loss <= epsilon * (1 + 1e-12)
    assert oracle.rounds_epsilon(1) == pytest.approx(loss, rel=1e-9)
    p1, q1 = oracle.prr
    memo_loss = math.log(p1 / q1) if cls is LGRR else math.log(p1 * (1 - q1) / ((1 - p1) * q1))
    assert epsilon_inf * (1 - 1e-9) <= memo_loss <= epsilon_inf * (1 + 1e-12)


def test_the_ideal_parameters_solve_their_equations() -> None:
    """Before rounding: ln(p_s/q_s) = ε₁ (GRR) and the unary ratio = ε₁ (OUE, OSUE)."""
    for epsilon, big in GRID:
        for k in (2, 3, 50):
            p1, q1, p2, not_p2 = chain.l_grr_parameters(big, epsilon, k)
            assert p2 + not_p2 == pytest.approx(1.0, abs=1e-15)
            p_s, q_s = chain.chained_pq(p1, q1, p2, not_p2 / (k - 1))
            assert math.log(p_s / q_s) == pytest.approx(epsilon, rel=1e-12)
        q1 = 1 / (math.exp(big) + 1)
        candidates = [chain.l_osue_parameters(big, epsilon)]
        if chain.l_oue_feasible(big, epsilon):
            candidates.append((0.5, chain.l_oue_q2(big, epsilon)))
        for p2, q2 in candidates:
            p_s, q_s = chain.chained_pq(0.5, q1, p2, q2)
            ratio = math.log(p_s * (1 - q_s) / ((1 - p_s) * q_s))
            assert ratio == pytest.approx(epsilon, rel=1e-12)


# --- the loss over τ rounds of one unchanged value ---------------------------------------
def brute_force_loss(oracle, tau: int) -> float:
    """max over sequences and pairs of ln P(sequence | v)/P(sequence | v'), by enumeration.

    prr[v, b] = P(memo b | v), irr[b, y] = P(report y | memo b); a sequence y_1..y_τ has
    likelihood sum_b prr[v, b] prod_t irr[b, y_t].
    """
    d = oracle.domain_size
    (p1, q1), (p2, q2) = oracle.prr, oracle.irr
    if isinstance(oracle, LGRR):
        prr = np.where(np.eye(d, dtype=bool), p1, q1)
        irr = np.where(np.eye(d, dtype=bool), p2, q2)
    else:  # unary: memos and reports are d-bit vectors, bits independent
        vectors = np.array(list(itertools.product([0, 1], repeat=d)), dtype=bool)
        own = np.eye(d, dtype=bool)[:, None, :]  # (v, 1, j)
        chance = np.where(own, p1, q1)
        prr = np.prod(np.where(vectors[None], chance, 1 - chance), axis=2)
        memo, report = vectors[:, None, :], vectors[None, :, :]
        irr = np.prod(
            np.where(memo, np.where(report, p2, 1 - p2), np.where(report, q2, 1 - q2)), axis=2
        )
    outputs = itertools.product(range(irr.shape[1]), repeat=tau)
    likelihood = np.array([prr @ np.prod(irr[:, list(y)], axis=1) for y in outputs]).T
    logs = np.log(likelihood)
    return float(max((logs[a] - logs[b]).max() for a in range(d) for b in range(d) if a != b))


@pytest.mark.parametrize(
    ("cls", "d", "tau"), [(LGRR, 3, 4), (LGRR, 4, 4), (LGRR, 2, 5), (LOUE, 2, 3), (LOSUE, 3, 2)]
)
def test_rounds_epsilon_is_the_exact_loss(cls, d, tau) -> None:
    oracle = cls(epsilon=0.7, domain_size=d, epsilon_inf=1.5)
    for t in range(1, tau + 1):
        assert oracle.rounds_epsilon(t) == pytest.approx(brute_force_loss(oracle, t), rel=1e-9)


# --- the loss between two value sequences (a value that changes) ------------------------
def brute_force_sequence_loss(oracle, x: tuple, x_prime: tuple) -> float:
    """max over report sequences of ln P(y | x)/P(y | x'), one memo per distinct value: P(y |
    x) = prod over distinct v of sum_b prr[v, b] prod_{t: x_t = v} irr[b, y_t], enumerated."""
    prr, irr = brute_force_tables(oracle)

    def logs(values):
        total = 0.0
        for v in set(values):
            rounds = [t for t, u in enumerate(values) if u == v]
            total = total + np.log(prr[v] @ np.prod(irr[:, ys[:, rounds]], axis=2))
        return total

    ys = np.array(list(itertools.product(range(irr.shape[1]), repeat=len(x))))
    return float(np.max(logs(x) - logs(x_prime)))


def brute_force_tables(oracle) -> tuple[np.ndarray, np.ndarray]:
    """prr[v, b] = P(memo b | v) and irr[b, y] = P(report y | memo b), every memo and report."""
    d = oracle.domain_size
    (p1, q1), (p2, q2) = oracle.prr, oracle.irr
    if isinstance(oracle, LGRR):
        return np.where(np.eye(d, dtype=bool), p1, q1), np.where(np.eye(d, dtype=bool), p2, q2)
    vectors = np.array(list(itertools.product([0, 1], repeat=d)), dtype=bool)
    chance = np.where(np.eye(d, dtype=bool)[:, None, :], p1, q1)
    prr = np.prod(np.where(vectors[None], chance, 1 - chance), axis=2)
    memo, report = vectors[:, None, :], vectors[None, :, :]
    irr = np.prod(
        np.where(memo, np.where(report, p2, 1 - p2), np.where(report, q2, 1 - q2)), axis=2
    )
    return prr, irr


PAIRS = [
    ((0, 0), (1, 2)),
    ((0, 1), (1, 0)),
    ((0, 1), (2, 2)),
    ((0, 0, 1), (2, 1, 1)),
    ((0, 1, 2), (1, 2, 0)),
]


@pytest.mark.parametrize(("cls", "d"), [(LGRR, 3), (LGRR, 5), (LOUE, 3), (LOSUE, 3)])
@pytest.mark.parametrize(("x", "x_prime"), PAIRS)
def test_sequence_epsilon_is_the_exact_loss(cls, d, x, x_prime) -> None:
    oracle = cls(epsilon=0.7, domain_size=d, epsilon_inf=1.5)
    expected = brute_force_sequence_loss(oracle, x, x_prime)
    assert oracle.sequence_epsilon(x, x_prime) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("cls", PROTOCOLS)
def test_the_memoized_bound_holds_for_the_same_pattern_and_not_across_patterns(cls) -> None:
    """Equal values at the same rounds: the loss is at most (distinct values) ε_∞, as
    claimed; an unchanged value against a changing one: more than its claimed ε_∞ (the
    reuse of a memo shows), by far for a unary memo over 64 positions."""
    oracle = cls(epsilon=1.0, domain_size=64, epsilon_inf=2.0)
    assert oracle.sequence_epsilon((0, 0, 0), (1, 1, 1)) == pytest.approx(oracle.rounds_epsilon(3))
    for x, x_prime in [((0, 0, 1), (2, 2, 3)), ((0, 1, 2), (3, 4, 5))]:
        claimed = oracle.memoized_epsilon(3, len(set(x)))
        assert oracle.sequence_epsilon(x, x_prime) <= claimed * (1 + 1e-12)
    leak = oracle.sequence_epsilon((0, 0, 0), (1, 2, 3))
    assert leak > oracle.memoized_epsilon(3, 1)
    if cls is not LGRR:
        assert leak > 10 * oracle.memoized_epsilon(3, 1)


def test_a_change_can_exceed_both_sequences_claims() -> None:
    """docs/longitudinal.md: L-GRR over 8 values at ε₁ = 1, ε_∞ = 2, a value changed once
    against one never changed: 4.22, above the claims of both (4 and 2)."""
    oracle = LGRR(epsilon=1.0, domain_size=8, epsilon_inf=2.0)
    loss = oracle.sequence_epsilon((0, 0, 2, 2), (1, 1, 1, 1))
    assert round(loss, 2) == 4.22 and loss > max(oracle.memoized_epsilon(4, 2), 2.0)


def test_sequence_epsilon_refuses_too_many_reports() -> None:
    oracle = LGRR(epsilon=1.0, domain_size=1000, epsilon_inf=2.0)
    with pytest.raises(ValueError, match="exceed"):
        oracle.sequence_epsilon(tuple(range(10)), tuple(range(10, 20)))
    with pytest.raises(ValueError, match="one length"):
        oracle.sequence_epsilon((0, 1), (2,))


@pytest.mark.parametrize("cls", PROTOCOLS)
def test_rounds_epsilon_rises_from_epsilon_1_to_epsilon_inf(cls) -> None:
    oracle = cls(epsilon=0.5, domain_size=6, epsilon_inf=1.5)
    losses = [oracle.rounds_epsilon(t) for t in (1, 2, 4, 8, 16, 64, 512)]
    assert losses[0] == pytest.approx(0.5, rel=1e-9)
    assert all(b >= a - 1e-12 for a, b in itertools.pairwise(losses))
    assert max(losses) <= 1.5 * (1 + 1e-9)
    assert losses[-1] == pytest.approx(1.5, rel=1e-6)
    assert oracle.memoized_epsilon(1) == 0.5
    assert oracle.memoized_epsilon(10) == 1.5
    assert oracle.memoized_epsilon(10, distinct=3) == 4.5
    assert oracle.memoized_epsilon(2, distinct=3) == 3.0  # at most τ distinct values


# --- memoization per (user, value) ---------------------------------------------------------
def agreement_z(agree: np.ndarray, expected: float) -> float:
    n = agree.shape[0]
    return float((agree.mean() - expected) / math.sqrt(expected * (1 - expected) / n))


def test_lgrr_reuses_the_memo_of_a_value_and_only_of_that_value() -> None:
    """Rounds 0, 1, 2 hold A, B, A: rounds 0 and 2 share a memo (agree with
    p2² + (k-1) q2²), rounds 0 and 1 do not (agree with 2 p_s q_s + (k-2) q_s²)."""
    k, n = 4, 40_000
    oracle = LGRR(epsilon=1.0, domain_size=k, epsilon_inf=3.0)
    values = np.tile(np.array([[0, 1, 0]]), (n, 1))
    first, second, third = oracle.perturb_rounds(values, rng_for("memo"))
    p2, q2 = oracle.irr
    p_s, q_s = oracle.p_star, oracle.q_star
    assert abs(agreement_z(first == third, p2**2 + (k - 1) * q2**2)) <= Z
    assert abs(agreement_z(first == second, 2 * p_s * q_s + (k - 2) * q_s**2)) <= Z


@pytest.mark.parametrize("cls", [LOUE, LOSUE])
def test_unary_memo_is_shared_across_rounds(cls) -> None:
    """Bit 0 of a user who always holds 0: both rounds 1 with p1 p2² + (1-p1) q2²."""
    n = 40_000
    oracle = cls(epsilon=1.0, domain_size=3, epsilon_inf=3.0)
    rounds = oracle.perturb_rounds(np.zeros((n, 2), dtype=np.int64), rng_for("unary", cls.name))
    bits = [np.unpackbits(r.bits, axis=1, count=3)[:, 0].astype(bool) for r in rounds]
    (p1, _), (p2, q2) = oracle.prr, oracle.irr
    assert abs(agreement_z(bits[0] & bits[1], p1 * p2**2 + (1 - p1) * q2**2)) <= Z


# --- every round's estimate is unbiased with the one-round variance -------------------------
@pytest.mark.parametrize("cls", PROTOCOLS)
def test_every_round_is_unbiased_with_the_one_round_variance(cls) -> None:
    """Users drift between rounds (values re-drawn for 30% of them each round): for each
    round and value, a t-test of the mean (level ALPHA each) and a pooled z-test that the
    squared errors average variance(n, c) (level ALPHA per round)."""
    d, n, tau, runs = 5, 1000, 3, 300
    oracle = cls(epsilon=1.0, domain_size=d, epsilon_inf=2.0)
    data = rng_for("population")
    values = np.empty((n, tau), dtype=np.int64)
    values[:, 0] = data.choice(d, size=n, p=[0.4, 0.3, 0.2, 0.1, 0.0])
    for t in range(1, tau):
        moved = data.random(n) < 0.3
        values[:, t] = np.where(moved, data.integers(0, d, n), values[:, t - 1])
    truth = np.stack([np.bincount(values[:, t], minlength=d) for t in range(tau)])
    rng = rng_for("rounds", cls.name)
    estimates = np.array(
        [[oracle.estimate(r) for r in oracle.perturb_rounds(values, rng)] for _ in range(runs)]
    )  # (runs, tau, d)
    limit = float(stats.t.isf(ALPHA / 2, runs - 1))
    variances = np.array([[oracle.variance(n, int(c)) for c in row] for row in truth])
    for t in range(tau):
        for v in range(d):
            sample = estimates[:, t, v]
            t_stat = (sample.mean() - truth[t, v]) / (sample.std(ddof=1) / math.sqrt(runs))
            assert abs(t_stat) <= limit, (t, v, sample.mean(), truth[t, v])
        ratios = np.mean((estimates[:, t] - truth[t]) ** 2 / variances[t], axis=1)
        z = (ratios.mean() - 1) / (ratios.std(ddof=1) / math.sqrt(runs))
        assert abs(z) <= Z, (t, ratios.mean())


def test_paper_variance_is_the_one_round_variance_at_f_zero() -> None:
    for cls in PROTOCOLS:
        oracle = cls(epsilon=1.0, domain_size=10, epsilon_inf=3.0)
        paper = chain.longitudinal_variance(1000, *oracle.prr, *oracle.irr, f=0.0)
        assert paper * 1000**2 == pytest.approx(oracle.variance(1000, 0), rel=1e-12)


# --- the audit of τ rounds of one user ------------------------------------------------------
class NoMemoLGRR(LGRR):
    """A deliberately broken client: the permanent step is redrawn at every round."""

    def perturb_rounds(self, values, rng):
        values = np.asarray(values)
        return [self.perturb(values[:, t], rng) for t in range(values.shape[1])]


class NoMemoLOSUE(LOSUE):
    def perturb_rounds(self, values, rng):
        values = np.asarray(values)
        return [self.perturb(values[:, t], rng) for t in range(values.shape[1])]


@pytest.mark.parametrize(("honest", "broken"), [(LGRR, NoMemoLGRR), (LOSUE, NoMemoLOSUE)])
def test_audit_of_a_users_sequence_holds_epsilon_inf_and_catches_a_missing_memo(
    honest, broken
) -> None:
    """τ = 8 rounds at ε₁ = 0.5, ε_∞ = 1: the honest sequence's bound stays <= ε_∞ (level
    ALPHA), the one without a memo (8 independent ε₁ reports, loss up to 4) exceeds it."""
    params = {"epsilon": 0.5, "domain_size": 4, "epsilon_inf": 1.0}
    kwargs = {"rng": None, "trials": 60_000, "alpha": ALPHA, "max_trials": 60_000}
    kwargs["rng"] = rng_for("audit", honest.name)
    fair = audit.lower_bound(Rounds(honest(**params), 8), 0, 1, **kwargs)
    assert fair.epsilon <= 1.0, str(fair)
    kwargs["rng"] = rng_for("audit-broken", honest.name)
    caught = audit.lower_bound(Rounds(broken(**params), 8), 0, 1, **kwargs)
    assert caught.epsilon > 1.0, str(caught)


# --- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", PROTOCOLS)
def test_parameters_are_checked(cls) -> None:
    with pytest.raises(ParameterError) as error:
        cls(epsilon=1.0, domain_size=4, epsilon_inf=1.0)
    assert error.value.name == "epsilon_inf"
    with pytest.raises(TypeError):
        cls(epsilon=1.0, domain_size=4, epsilon_inf="2")
    oracle = cls(epsilon=1.0, domain_size=4)
    assert oracle.epsilon_inf == 2.0
    with pytest.raises(ValueError, match="2-D"):
        oracle.perturb_rounds(np.zeros(3, dtype=np.int64), rng_for("x"))
    with pytest.raises(ValueError, match="values"):
        oracle.perturb_rounds(np.full((2, 2), 4), rng_for("x"))
    with pytest.raises(ParameterError):
        oracle.rounds_epsilon(0)
    with pytest.raises(ParameterError):
        Rounds(oracle, 0)
    assert oracle.perturb_rounds(np.zeros((3, 0), dtype=np.int64), rng_for("x")) == []


def test_the_example_of_docs_longitudinal_runs() -> None:
    """Every ```python block of docs/longitudinal.md runs (and its own asserts hold)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "longitudinal.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/longitudinal.md", "exec"), {})
