"""``ldp.audit``: an empirical lower bound on ε from the real ``perturb`` (issue 9, §3).

False alarms.  ``lower_bound`` at level ALPHA exceeds a mechanism's true privacy loss with
probability at most ALPHA (Clopper–Pearson, Bonferroni over its hypotheses), so each
"no false alarm" assertion below fails a correct oracle with probability <= ALPHA = 1e-4.

Power.  For the mechanism's optimal event with probabilities (p, p'), the audit's bound
is at least ``expected_lower_bound(p, p', trials, quantile=ALPHA/2)`` unless the count of
v's reports falls below its ALPHA/2 quantile or that of v''s above its 1 - ALPHA/2
quantile: probability <= ALPHA.  So "caught" assertions are tests at level ALPHA too, and
the design (trials) is checked to make the expected bound clearly exceed the claimed ε.

Every audit draws TRIALS = 50,000 reports per input (about 0.05-0.2 s each).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from ldp import audit, bits
from ldp.audit import Event, FeatureSearch
from ldp.oracles import GRR, OLH, ORACLES, OUE, SUE, UnaryReports
from ldp.privacy import max_privacy_loss

ALPHA = 1e-4
TRIALS = 50_000
EPSILONS = (0.5, 2.0, 6.0)


def rng_for(*key: object) -> np.random.Generator:
    words = [sum(map(ord, repr(part))) for part in key]
    return np.random.default_rng(np.random.SeedSequence(9, spawn_key=words))


def guaranteed(p: float, p_other: float, result: audit.AuditResult) -> float:
    """The bound the audit reaches for an event with (p, p') except with probability ALPHA."""
    return audit.expected_lower_bound(
        p,
        p_other,
        result.trials,
        alpha=result.alpha,
        hypotheses=result.hypotheses,
        quantile=ALPHA / 2,
    )


# --- 1. every oracle: no false alarm, and the bound is tight --------------------------------
@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("name", list(ORACLES))
def test_oracles_pass_their_audit(name: str, epsilon: float) -> None:
    """The bound stays below the realised loss (<= ε; THE's is lower) and reaches the
    optimal event's guaranteed value (>= 70% of the loss; its median is within ~0.05)."""
    oracle = ORACLES[name](epsilon=epsilon, domain_size=4)
    result = audit.lower_bound(oracle, 0, 1, rng=rng_for(name, epsilon), trials=TRIALS, alpha=ALPHA)
    truth = max_privacy_loss(oracle, values=[0, 1])
    assert truth <= epsilon * (1 + 1e-12)
    assert result.epsilon <= truth, f"false alarm: {result}"
    p, p_other = audit.optimal_event_probabilities(oracle)
    assert math.log(p / p_other) == pytest.approx(truth, rel=1e-9)
    assert result.epsilon >= guaranteed(p, p_other, result), str(result)
    assert guaranteed(p, p_other, result) >= 0.7 * truth  # design: the audit is informative


# --- 2. leaky mechanisms are caught -----------------------------------------------------------
class RawValue:
    """Claims ε = 1 and reports the value itself."""

    epsilon = 1.0

    def perturb(self, values, rng):
        return np.asarray(values).copy()


class TextbookSHE:
    """The old SHE: one-hot + float Laplace(2/ε) noise.  fl(1 + L) lies on the 2^-53 grid."""

    def __init__(self, epsilon: float, domain_size: int) -> None:
        self.epsilon, self.domain_size = epsilon, domain_size

    def perturb(self, values, rng):
        values = np.asarray(values)
        x = rng.laplace(0.0, 2.0 / self.epsilon, size=(values.size, self.domain_size))
        x[np.arange(values.size), values] += 1.0
        return x


class InflatedGRR(GRR):
    """Declares ε but perturbs with 2ε: its p* is what ε would give, its coins are not."""

    def perturb(self, values, rng):
        return GRR(epsilon=2 * self.epsilon, domain_size=self.domain_size).perturb(values, rng)


class NeverFlipsOne(OUE):
    """The UE client bug found in a peer library: the user's own 1-bit is always kept."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        unpacked = np.unpackbits(reports.bits, axis=1, count=self.domain_size)
        unpacked[np.arange(len(values)), values] = 1
        return UnaryReports(np.packbits(unpacked, axis=1), self.domain_size)


def test_a_perturb_returning_the_value_is_caught() -> None:
    result = audit.lower_bound(RawValue(), 0, 1, rng=rng_for("raw"), trials=TRIALS, alpha=ALPHA)
    bound = guaranteed(1.0, 0.0, result)  # report == 0: always under 0, never under 1
    assert bound > RawValue.epsilon + 5  # design
    assert result.epsilon >= bound
    assert result.best.count == TRIALS and result.best.count_other == 0


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_the_float_she_leak_of_the_issue_is_caught(epsilon: float) -> None:
    """Coordinate 0 off the 2^-53 grid is impossible when the input is 0 (deterministic).

    Under input 1 it has probability P(|L| < 1/2, L off the grid): P(|L| < 1/2) is 0.118
    at ε = 0.5 (scale 4) and 0.39 at ε = 2 (scale 1), and a Laplace draw there is on the
    grid with probability about a half at most (its last mantissa bit, or more, must be
    0).  So at least ``floor`` = 1% (ε = 0.5) or 8% (ε = 2) of the reports fall in it
    except with probability far below ALPHA, and ``floor`` against 0 already gives a
    bound ln(CP_lower(floor)/CP_upper(0)) > ε + 2.
    """
    mechanism = TextbookSHE(epsilon, 4)
    result = audit.lower_bound(
        mechanism, 0, 1, rng=rng_for("she", epsilon), trials=TRIALS, alpha=ALPHA
    )
    grid = next(
        r for r in result.events if r.name == "r[0] off the 2^-53 grid" and r.favours == "v'"
    )
    floor = TRIALS // 100 if epsilon == 0.5 else 8 * TRIALS // 100
    assert grid.count_other == 0  # exact: the user's own coordinate is always on the grid
    assert grid.count >= floor
    level = ALPHA / (2 * result.hypotheses)
    bound = float(audit.epsilon_lower_bound(floor, TRIALS, 0, TRIALS, level))
    assert bound > epsilon + 2
    assert result.epsilon >= bound


def test_an_inflated_p_star_is_caught() -> None:
    """Declared ε = 1 (max_privacy_loss agrees), perturb realises 2: report == v at e^2."""
    oracle = InflatedGRR(epsilon=1.0, domain_size=4)
    assert max_privacy_loss(oracle) == pytest.approx(1.0, rel=1e-9)  # the declaration passes
    result = audit.lower_bound(oracle, 0, 1, rng=rng_for("inflated"), trials=TRIALS, alpha=ALPHA)
    actual = GRR(epsilon=2.0, domain_size=4)
    bound = guaranteed(actual.p_star, actual.q_star, result)
    assert bound > 1.0 + 0.8  # design
    assert result.epsilon >= bound


def test_a_unary_client_that_never_flips_a_one_is_caught() -> None:
    """Bit v' unset never happens under v' (deterministic); under v it has 1 - q."""
    oracle = NeverFlipsOne(epsilon=1.0, domain_size=4)
    result = audit.lower_bound(oracle, 0, 1, rng=rng_for("never"), trials=TRIALS, alpha=ALPHA)
    bound = guaranteed(1 - oracle.q_star, 0.0, result)
    assert bound > 1.0 + 5  # design
    assert result.epsilon >= bound


def test_mironovs_attack_on_a_scalar_float_mechanism() -> None:
    """A user's own mechanism: v + Laplace(1/ε) in float64 on {0, 1}, claimed ε = 1."""

    class FloatLaplace:
        def perturb(self, values, rng):
            return np.asarray(values, dtype=float) + rng.laplace(0.0, 1.0, size=len(values))

    result = audit.lower_bound(
        FloatLaplace(), 0, 1, rng=rng_for("scalar"), trials=TRIALS, alpha=ALPHA
    )
    grid = next(
        r for r in result.events if r.name == "report off the 2^-53 grid" and r.favours == "v"
    )
    assert grid.count_other == 0 and grid.count >= 5000  # P(|L| < 1/2) = 0.39 under 0
    assert result.epsilon > 1.0 + 4


def test_the_generic_search_alone_catches_the_leaks() -> None:
    """Without any mechanism-specific event, the data-driven search still finds each leak."""
    leaks = [RawValue(), TextbookSHE(2.0, 4), NeverFlipsOne(epsilon=1.0, domain_size=4)]
    for mechanism in leaks:
        result = audit.lower_bound(
            mechanism,
            0,
            1,
            rng=rng_for("search", type(mechanism).__name__),
            trials=TRIALS,
            alpha=ALPHA,
            events=[FeatureSearch()],
        )
        assert result.hypotheses == 1
        assert result.epsilon > 4.0, f"{type(mechanism).__name__}: {result}"


def test_the_generic_search_has_no_false_alarm() -> None:
    for name in ("GRR", "SUE", "SHE", "OLH"):
        oracle = ORACLES[name](epsilon=2.0, domain_size=4)
        result = audit.lower_bound(
            oracle,
            0,
            1,
            rng=rng_for("search-ok", name),
            trials=TRIALS,
            alpha=ALPHA,
            events=[FeatureSearch()],
        )
        assert result.epsilon <= 2.0, str(result)


# --- 3. heavy hitters' clients and user-defined events ---------------------------------------
class PEMClient:
    """A PEM user in the group reporting prefixes of ``ell`` of ``m`` bits, through OLH."""

    def __init__(self, epsilon: float, m: int, ell: int) -> None:
        self.oracle = OLH(epsilon=epsilon, domain_size=2**ell)
        self.m, self.ell, self.g = m, ell, self.oracle.g

    def hash_key(self, value: int) -> int:
        """What the client hashes: the prefix (the default hashed event reads this)."""
        return int(value) >> (self.m - self.ell)

    def perturb(self, values, rng):
        prefixes = bits.prefix(np.asarray(values, dtype=np.uint64), self.m, self.ell)
        return self.oracle.perturb(prefixes, rng)


def test_a_heavy_hitter_client_is_audited() -> None:
    """Two 64-bit values with different 20-bit prefixes: bounded by ε, and tight."""
    client = PEMClient(2.0, 64, 20)
    v, v_prime = 0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210
    result = audit.lower_bound(client, v, v_prime, rng=rng_for("pem"), trials=TRIALS, alpha=ALPHA)
    assert result.epsilon <= 2.0 * (1 + 1e-12)
    p, p_other = audit.optimal_event_probabilities(client.oracle)
    assert result.epsilon >= guaranteed(p, p_other, result)


def test_user_events_and_plain_callables() -> None:
    """Warner's randomised response (ln 3), with a user's own event as a callable."""

    class Warner:
        def perturb(self, values, rng):
            truthful = rng.random(len(values)) < 0.75
            return np.where(truthful, values, 1 - np.asarray(values))

    def says_zero(reports):
        return np.asarray(reports) == 0

    result = audit.lower_bound(
        Warner(), 0, 1, rng=rng_for("warner"), trials=TRIALS, alpha=ALPHA, events=[says_zero]
    )
    assert result.hypotheses == 2 and result.best.name == "says_zero"
    assert result.epsilon <= math.log(3)
    assert result.epsilon >= guaranteed(0.75, 0.25, result)


# --- 4. sizing an audit -----------------------------------------------------------------------
def test_trials_needed_reaches_its_target() -> None:
    p, p_other = audit.optimal_event_probabilities(OUE(epsilon=2.0, domain_size=4))
    n = audit.trials_needed(p, p_other, 1.8, alpha=0.01, hypotheses=7)
    assert audit.expected_lower_bound(p, p_other, n, alpha=0.01, hypotheses=7) >= 1.8
    assert audit.expected_lower_bound(p, p_other, n // 2, alpha=0.01, hypotheses=7) < 1.8
    many = audit.expected_lower_bound(p, p_other, 10**9, alpha=0.01, hypotheses=7)
    assert many == pytest.approx(2.0, abs=0.01)
    with pytest.raises(ValueError, match="must stay below"):
        audit.trials_needed(p, p_other, 2.5, max_trials=10**7)


def test_clopper_pearson_bounds() -> None:
    """The exact binomial tails at the bounds equal the level."""
    from scipy import stats

    low = float(audit.clopper_pearson_lower(30, 100, 0.01))
    high = float(audit.clopper_pearson_upper(30, 100, 0.01))
    assert stats.binom.sf(29, 100, low) == pytest.approx(0.01, rel=1e-6)
    assert stats.binom.cdf(30, 100, high) == pytest.approx(0.01, rel=1e-6)
    assert float(audit.clopper_pearson_lower(0, 100, 0.01)) == 0.0
    assert float(audit.clopper_pearson_upper(100, 100, 0.01)) == 1.0


# --- 5. the interface -----------------------------------------------------------------------
def test_bad_arguments_are_refused() -> None:
    oracle, rng = SUE(epsilon=1.0, domain_size=4), np.random.default_rng(0)
    cases = [
        (lambda: audit.lower_bound(object(), 0, 1, rng=rng), TypeError, "perturb"),
        (lambda: audit.lower_bound(oracle, 0, 0, rng=rng), ValueError, "must differ"),
        (lambda: audit.lower_bound(oracle, 0, 1, rng=rng, trials=1), ValueError, "trials"),
        (lambda: audit.lower_bound(oracle, 0, 1, rng=rng, alpha=1.5), ValueError, "alpha"),
        (lambda: audit.lower_bound(oracle, 0, 1, rng=0), TypeError, "rng must be"),
        (lambda: audit.lower_bound(oracle, 0, 1, rng=rng, events=[]), ValueError, "empty"),
        (lambda: audit.lower_bound(oracle, 0, 1, rng=rng, events=[3]), TypeError, "Event"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match) as info:
            call()
        copy = pickle.loads(pickle.dumps(info.value))
        assert type(copy) is type(info.value) and str(copy) == str(info.value)


def test_a_mechanism_returning_the_wrong_number_of_reports_is_refused() -> None:
    class Short:
        def perturb(self, values, rng):
            return np.asarray(values)[:-1]

    with pytest.raises(ValueError, match="perturb returned"):
        audit.lower_bound(Short(), 0, 1, rng=np.random.default_rng(0), trials=100)


def test_result_reads_well() -> None:
    result = audit.lower_bound(
        GRR(epsilon=2.0, domain_size=4),
        0,
        1,
        rng=rng_for("str"),
        trials=10_000,
        events=[Event("report == 0", lambda r: np.asarray(r) == 0, +1)],
    )
    assert result.hypotheses == 1 and len(result.events) == 1
    assert str(result).startswith("ε >= ") and "'report == 0' for v" in str(result)


def test_the_examples_of_docs_privacy_run() -> None:
    """Every ```python block of docs/privacy.md runs (and its own asserts hold)."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "privacy.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, "docs/privacy.md", "exec"), {})


def test_docstring_examples() -> None:
    import doctest

    import ldp.audit
    import ldp.audit.auditor

    for module in (ldp.audit, ldp.audit.auditor):
        assert doctest.testmod(module).failed == 0
