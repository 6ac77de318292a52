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

from ldp import audit, bits, hashing
from ldp.audit import Event, FeatureSearch
from ldp.heavy_hitters.baseline import segment
from ldp.heavy_hitters.mcm import ChannelReport
from ldp.oracles import GRR, OLH, ORACLES, OUE, SUE, UnaryReports
from ldp.privacy import max_privacy_loss

ALPHA = 1e-4
TRIALS = 50_000
EPSILONS = (0.5, 2.0, 6.0)
#: USENIX'17 Table 1's oracles, whose optimal events ldp.audit knows.
TABLE1 = ("GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH")


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
@pytest.mark.parametrize("name", TABLE1)  # RAPPOR: tests/oracles/test_rappor.py
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
# A heavy hitter's user runs a frequency oracle on a function of the value: its prefix
# (PEM), a segment (SPM), a block pattern on the value's hashed channel (MCM).  The
# clients below compose the library's own maps (bits.prefix, segment, hashing) with the
# library's oracles, exactly as the protocols' reports engines do.
M = 64
V, V_PRIME = 0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210


class PrefixClient:
    """A PEM user of the group reporting ``ell``-bit prefixes ([PEM] Sec. IV)."""

    def __init__(self, oracle_class, epsilon: float, ell: int) -> None:
        self.oracle = oracle_class(epsilon=epsilon, domain_size=2**ell)
        self.ell, self.g = ell, getattr(self.oracle, "g", None)

    def oracle_input(self, value: int) -> int:
        """What the client feeds its oracle (the default events are built on it)."""
        return int(bits.prefix(np.array([value], dtype=np.uint64), M, self.ell)[0])

    def perturb(self, values, rng):
        return self.oracle.perturb(
            bits.prefix(np.asarray(values, dtype=np.uint64), M, self.ell), rng
        )


class SegmentClient(PrefixClient):
    """An SPM user of the group reporting bits [start, start + length) of the value."""

    def __init__(self, oracle_class, epsilon: float, start: int, length: int) -> None:
        super().__init__(oracle_class, epsilon, length)
        self.start = start

    def oracle_input(self, value: int) -> int:
        return int(segment(np.array([value], dtype=np.uint64), M, self.start, self.ell)[0])

    def perturb(self, values, rng):
        keys = segment(np.asarray(values, dtype=np.uint64), M, self.start, self.ell)
        return self.oracle.perturb(keys, rng)


class ChannelClient:
    """An MCM user's channel report ([PEM] Sec. III-D): GRR of the value's ``length``-bit
    block on channel H(v), a uniform pattern on every other of the h channels."""

    def __init__(self, epsilon: float, h: int, length: int, seed: int) -> None:
        self.grr = GRR(epsilon=epsilon, domain_size=2**length)
        self.h, self.length, self.seed = h, length, np.uint64(seed)

    def channel(self, value: int) -> int:
        key = np.array([value], dtype=np.uint64)
        return int(hashing.hash_values(key, np.full(1, self.seed), self.h)[0])

    def pattern(self, value: int) -> int:
        return int(segment(np.array([value], dtype=np.uint64), M, 0, self.length)[0])

    def perturb(self, values, rng):
        """MCM's own client of the channel report (:class:`ldp.heavy_hitters.mcm.ChannelReport`)."""
        values = np.asarray(values, dtype=np.uint64)
        channel = hashing.hash_values(values, np.full(len(values), self.seed), self.h)
        patterns = segment(values, M, 0, self.length).astype(np.int64)
        keys = channel.astype(np.int64) * self.grr.domain_size + patterns
        return ChannelReport(self.grr.epsilon, self.h, self.length).perturb(keys, rng)

    def events(self, v: int, v_prime: int) -> list[Event]:
        """y[H(v)] = pattern(v) and y[H(v')] != pattern(v'), and mirrored.

        With H(v) != H(v'): under v, p*(d - 1)/d (GRR keeps, the other channel is uniform);
        under v', (1/d)(1 - p*) = q*(d - 1)/d.  Ratio p*/q* = e^ε.
        """

        def event(a: int, b: int):
            ca, pa, cb, pb = self.channel(a), self.pattern(a), self.channel(b), self.pattern(b)
            return lambda r: (r[:, ca] == pa) & (r[:, cb] != pb)

        return [
            Event("y[H(v)] == pattern(v) != y[H(v')]", event(v, v_prime), +1),
            Event("y[H(v')] == pattern(v') != y[H(v)]", event(v_prime, v), -1),
        ]


def hh_optimal(client) -> tuple[float, float]:
    """(p, p') of the likelihood-ratio event of a heavy hitter's client (ratio e^ε)."""
    if isinstance(client, ChannelClient):
        d, p, q = client.grr.domain_size, client.grr.p_star, client.grr.q_star
        return p * (d - 1) / d, q * (d - 1) / d
    return audit.optimal_event_probabilities(client.oracle)


HH_CLIENTS = {
    "PEM-OLH": lambda eps: PrefixClient(OLH, eps, 20),
    "SPM-SUE": lambda eps: SegmentClient(SUE, eps, 8, 8),
    "SPM-GRR": lambda eps: SegmentClient(GRR, eps, 16, 4),
    "SPM-OLH": lambda eps: SegmentClient(OLH, eps, 32, 16),
    "MCM-channels": lambda eps: ChannelClient(eps, 16, 4, seed=11),
}


@pytest.mark.parametrize("name", list(HH_CLIENTS))
def test_heavy_hitter_clients_pass_their_audit(name: str) -> None:
    """Two 64-bit values whose prefix, segments and channels differ: <= ε, and tight."""
    epsilon = 2.0
    client = HH_CLIENTS[name](epsilon)
    events = client.events(V, V_PRIME) if isinstance(client, ChannelClient) else None
    if isinstance(client, ChannelClient):
        assert client.channel(V) != client.channel(V_PRIME)
    else:
        assert client.oracle_input(V) != client.oracle_input(V_PRIME)
    result = audit.lower_bound(
        client, V, V_PRIME, rng=rng_for("hh", name), trials=TRIALS, alpha=ALPHA, events=events
    )
    assert result.epsilon <= epsilon * (1 + 1e-12), str(result)
    p, p_other = hh_optimal(client)
    assert math.log(p / p_other) == pytest.approx(epsilon, rel=1e-9)
    assert result.epsilon >= guaranteed(p, p_other, result), str(result)
    assert guaranteed(p, p_other, result) >= 0.7 * epsilon  # design


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


# --- 5. the seams: no oracle in ldp.audit, declared public randomness --------------------------
def test_the_auditor_imports_no_protocol() -> None:
    """ldp.audit and ldp.privacy read declarations only (no import cycle with the oracles)."""
    import subprocess
    import sys

    code = (
        "import sys, ldp.audit, ldp.privacy, ldp.audit.__main__; "
        "print(sorted(m for m in sys.modules if m.startswith(('ldp.oracles', 'ldp.heavy'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_per_call_public_randomness_is_declared_and_kept_whole() -> None:
    """FLH's pool is drawn once per call: declared, and never split into per-report columns."""
    from ldp.audit.events import per_report_fields, report_columns
    from ldp.contract import capabilities_of
    from ldp.reports import take

    for name in ("FLH", "CMS", "HCMS"):
        assert capabilities_of(ORACLES[name]).public_per_call, name
    flh = ORACLES["FLH"](epsilon=1.0, domain_size=4, k_prime=6)
    reports = flh.perturb(np.zeros(6, dtype=np.int64), np.random.default_rng(0))
    layout = (True, True, False)  # index, values per report; the pool per call
    assert per_report_fields(reports, 6) == (True, True, True)  # why the auditor probes
    part = take(reports, slice(0, 2), layout)
    assert part.pool.shape == (6,) and part.index.shape == (2,)
    assert not any(c.name.startswith("pool") for c in report_columns(reports, layout))


def test_rappor_has_no_closed_form_event_and_still_audits() -> None:
    rappor = ORACLES["RAPPOR"](epsilon=2.0, domain_size=4)
    with pytest.raises(TypeError, match="no optimal event"):
        audit.optimal_event_probabilities(rappor)
    result = audit.lower_bound(rappor, 0, 1, rng=rng_for("rappor"), trials=20_000)
    assert result.epsilon <= rappor.epsilon_one
