"""The conformance suite catches what it says it catches, at its default settings.

A fast version of ``python -m benchmarks.conformance_power`` (which measures the power over
20 seeds): GRR, OUE and OLH with a planted error, a 2% over-declared variance and every
estimate 1% low in both engines, on two seeds each (six draws, shared by the honest and
the planted versions, which would draw the same numbers).  Its own false-failure rates:

* the shrunk estimates must fail on every draw: at the defaults the sampled scale test's
  expected z is about -27 (GRR) and -14 (OUE, OLH) against a limit of 3.9, so a miss has
  probability below 1e-20 per draw;
* the over-declared variance must move the sampled variance test's z, averaged over the
  six draws, beyond -Z = -3.89.  Each z is about normal with unit spread; power 0.9 means
  E[z] <= -5.17, so the mean fails to cross with probability at most Φ(-1.28 √6) = 8e-4
  (about 1e-7 at the design's E[z] ≈ -6.0 for 24,000 runs);
* the honest classes must pass, on the suite's default seed only: those are
  ``tests/test_conformance.py``'s own runs (same seed, same draws), so this file adds no
  false-alarm exposure of its own.

The ``hooks`` check's warnings are tested here too.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

from benchmarks.conformance_power import (
    CONTEXT,
    VARIANTS,
    failures,
    seeds,
    shared_draws,
)
from ldp import registry
from ldp.oracles import GRR, OUE
from ldp.testing import ContractWarning, Settings, Z, hook_warnings, oracle_checks

SEEDS = (Settings().seed, seeds(1)[0])


def _variance_z(cls: type, settings: Settings) -> float:
    """The sampled variance test's z of ``cls``, whether it passed or failed."""
    check = next(c for c in oracle_checks(cls, settings, **CONTEXT) if c.name == "sampled_moments")
    try:
        text = check.run()
    except AssertionError as error:
        text = str(error)
    found = re.search(r"variances\(counts\): z = (\S+) beyond|variance z = (\S+) over", text)
    assert found, text
    return float(found.group(1) or found.group(2))


@pytest.fixture(scope="module")
def runs() -> dict:
    """(oracle, seed) -> the failing checks of each version and the variance plant's z."""
    out = {}
    for name, versions in VARIANTS.items():
        for seed in SEEDS:
            settings = Settings(seed=seed)
            with shared_draws():
                out[name, seed] = {
                    "honest": failures(versions["honest"], settings),
                    "bias": failures(versions["bias"], settings),
                    "variance_z": _variance_z(versions["variance"], settings),
                }
    return out


@pytest.mark.slow
def test_a_one_percent_bias_is_caught_on_every_draw(runs) -> None:
    for key, run in runs.items():
        assert "sampled_moments" in run["bias"], f"{key}: a 1% bias passed"


@pytest.mark.slow
def test_a_two_percent_variance_error_is_caught_on_average(runs) -> None:
    zs = np.array([run["variance_z"] for run in runs.values()])
    assert zs.mean() < -Z, f"variance z over {len(zs)} draws: {np.round(zs, 2)}"


@pytest.mark.slow
def test_the_honest_oracles_pass_at_the_default_seed(runs) -> None:
    for name in VARIANTS:
        assert runs[name, Settings().seed]["honest"] == [], name


def test_planted_classes_are_what_they_say() -> None:
    counts = np.array([60, 0, 40, 0, 0, 0, 0, 0])
    honest, planted = VARIANTS["OUE"]["honest"](**CONTEXT), VARIANTS["OUE"]["variance"](**CONTEXT)
    assert planted.variance(100, 60) == pytest.approx(honest.variance(100, 60) * 1.02, rel=1e-12)
    assert np.allclose(planted.variances(counts), honest.variances(counts) * 1.02, rtol=1e-12)
    rng = np.random.default_rng
    shrunk = VARIANTS["OUE"]["bias"](**CONTEXT)
    assert np.allclose(shrunk.simulate(counts, rng(1)), 0.99 * honest.simulate(counts, rng(1)))
    values = np.repeat(np.arange(8), counts)
    reports = honest.perturb(values, rng(2))
    # the same bytes, stamped by each class (its own perturb is OUE's)
    assert np.array_equal(shrunk.perturb(values, rng(2)).bits, reports.bits)
    assert np.allclose(
        shrunk.estimate(shrunk.perturb(values, rng(2))), 0.99 * honest.estimate(reports)
    )
    statistic = honest.aggregate(reports)
    assert np.allclose(
        shrunk.estimate_aggregate(statistic, 100), 0.99 * honest.estimate_aggregate(statistic, 100)
    )


# ------------------------------------------------------------------------------ hooks
@dataclass(frozen=True, kw_only=True)
class OUEWrongHook(OUE):
    """Overrides simulate_candidates, expecting simulate() to use it."""

    def simulate_candidates(self, values, counts, candidates, rng):
        return np.zeros(len(candidates))


@dataclass(frozen=True, kw_only=True)
class GRRMisspelt(GRR):
    """A sampled engine under a name the base never calls."""

    def _simulate_count(self, candidate_counts, n_users, rng):
        return np.zeros(len(candidate_counts))


def test_an_override_simulate_never_calls_warns_naming_the_real_hooks() -> None:
    (message,) = hook_warnings(OUEWrongHook)
    assert "simulate_candidates" in message and "_simulate_population" in message
    assert "_simulate_counts" in message


def test_a_misspelt_hook_warns_naming_the_hook_it_meant() -> None:
    (message,) = hook_warnings(GRRMisspelt)
    assert "_simulate_count " in message and "did you mean _simulate_counts?" in message


def test_the_hooks_check_warns_and_passes() -> None:
    with pytest.warns(ContractWarning, match="did you mean _simulate_counts"):
        check = next(c for c in oracle_checks(GRRMisspelt, **CONTEXT) if c.name == "hooks")
        assert "_simulate_count" in check.run()


def test_no_registered_oracle_and_no_planted_class_warns() -> None:
    classes = [e.cls for e in registry.protocols().values() if e.kind == "oracle"]
    classes += [cls for versions in VARIANTS.values() for cls in versions.values()]
    for cls in classes:
        assert hook_warnings(cls) == [], cls.__name__
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContractWarning)
        check = next(c for c in oracle_checks(GRR, **CONTEXT) if c.name == "hooks")
        assert check.run() == "every override is a hook the contract calls"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Unpicklable(GRR):
    """GRR that comes back from a pickle with another ε: fails the ``pickling`` check only."""

    def __reduce__(self):
        twice = functools.partial(
            Unpicklable, epsilon=2 * self.epsilon, domain_size=self.domain_size
        )
        return twice, (), None, None, None


def test_expected_failed_checks_must_fail_and_names_must_exist() -> None:
    """A plug-in lists the checks it is known to fail (scikit-learn's
    ``expected_failed_checks``): a listed check that fails is an xfail, one that passes is
    an error (the entry is stale), and a name no check has is refused."""
    from ldp.testing import _run_all

    wanted = ("keyword_only", "representation", "pickling")
    checks = [c for c in oracle_checks(Unpicklable, epsilon=1.0, domain_size=8) if c.name in wanted]
    with pytest.raises(AssertionError, match="'pickling' failed"):
        _run_all(iter(checks))
    results = _run_all(iter(checks), {"pickling": "holds a lock"})
    assert [(r.name, r.status) for r in results][-1] == ("pickling", "xfail")
    assert "holds a lock" in results[-1].detail
    with pytest.raises(AssertionError, match="passed but is listed in expected_failed"):
        _run_all(iter(checks), {"representation": "stale"})
    with pytest.raises(ValueError, match="names no check"):
        _run_all(iter(checks), {"picklng": "a typo"})


@dataclass(frozen=True, kw_only=True)
class CraftsAtRandomGRR(GRR):
    """GRR whose 'maximal gain' fake users send uniform values while it still claims that
    each crafted report supports one target."""

    def craft_reports(self, targets, n, rng):
        return self.uniform_reports(n, rng)


def test_the_poisoning_check_catches_a_crafted_report_that_does_not_do_what_it_claims():
    """The honest GRR passes the ``poisoning`` check; a copy whose crafted reports are
    uniform values (S = 2/d, not the 1 it declares) fails it."""
    honest = next(c for c in oracle_checks(GRR, **CONTEXT) if c.name == "poisoning")
    assert "MGA" in honest.run()
    planted = next(c for c in oracle_checks(CraftsAtRandomGRR, **CONTEXT) if c.name == "poisoning")
    with pytest.raises(AssertionError, match="MGA: mean gain"):
        planted.run()
