"""The conformance suite: one battery of checks for every oracle, heavy hitter and mean protocol.

Modelled on scikit-learn's ``check_estimator``: :func:`check_oracle` and
:func:`check_heavy_hitter` run every check on a protocol class and raise
``AssertionError`` naming the first that fails; :func:`oracle_checks` and
:func:`heavy_hitter_checks` yield the checks one by one (:class:`Check`), so a test suite
can parametrize over them.  What is checked follows the protocol's declared
:class:`~ldp.contract.Capabilities` (:func:`~ldp.contract.capabilities_of`), never its
class name.  A check that the declaration rules out is not silently dropped: it raises
:class:`CheckSkipped` with the reason, recorded in :func:`check_oracle`'s results (and
shown as a skip by pytest).  Mean-estimation protocols (:mod:`ldp.numeric`) have their
own battery, :func:`check_mean` / :func:`mean_checks`, and so do the protocols over item
sets (:mod:`ldp.sets`), :func:`check_set` / :func:`set_checks`.

>>> from ldp.oracles import GRR
>>> from ldp.testing import check_oracle
>>> results = check_oracle(GRR, epsilon=1.0, domain_size=8)
>>> sorted({r.status for r in results})
['passed']

The statistical checks (``unbiased``, ``variance``, ``sampled_moments``,
``engines_agree``, ``privacy_audit``, ``engines_agree_f1``) are tests at a stated
false-alarm rate :data:`ALPHA` per assertion, on fixed seeds, so a correct protocol
passes them deterministically; each docstring states its test, and each note the smallest
error its sample detects with probability :data:`POWER`.  At the default :class:`Settings`
the sampled engine's pooled tests catch a 2% error in the declared variance and a 1% bias
of the estimates with probability >= 0.9 (eight values; ``benchmarks/conformance_power.py``
measures it on planted errors).  The ``hooks`` check warns (:class:`ContractWarning`) about a
method the contract never calls as its author meant (:func:`hook_warnings`).  The population of an
oracle check is fixed (:func:`oracle_population`): value 0 held by ~30% of the users,
value 1 by none, the others spread over the rest of the domain; under
``public_per_call`` (users of one call share a hash pool or family, so ``variance(n, c)``
is exact only when no two other users share a value) every user holds value 0 instead.
"""

from __future__ import annotations

import difflib
import inspect
import math
import pickle
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
from scipy import stats

from ldp.contract import (
    HasLogLikelihoods,
    HasReportGroups,
    SetOracleLike,
    capabilities_of,
)
from ldp.validation import ParameterError

#: The false-alarm rate of every statistical assertion: a correct protocol fails one with
#: probability at most ALPHA (asymptotically, for the normal approximations stated).
ALPHA = 1e-4
#: Two-sided normal quantile at ALPHA: |z| above it fails.
Z = float(stats.norm.isf(ALPHA / 2))
#: The power at which a check states the smallest error it detects (its note's "detects").
POWER = 0.9
#: Poisoned collections per attack in the ``poisoning`` check (a gain varies little: its
#: spread is the fake users' and the rescaling's, not the genuine estimate's).
POISONING_RUNS = 30
#: The normal quantile of POWER: an error whose expected z is Z + Z_POWER is caught w.p. POWER.
Z_POWER = float(stats.norm.isf(1 - POWER))


@dataclass(frozen=True)
class Settings:
    """How much work the statistical checks do, and so what they can detect.

    The defaults are sized for power: on an oracle with eight independent values and a
    sampled engine (``Settings()``, d = 8), the sampled engine's pooled variance test
    catches a 2% error in the declared variance, and its pooled scale test a 1% bias of
    the estimates, each with probability at least 0.9 (at the false-alarm rate
    :data:`ALPHA` per assertion).  Each statistical check's note states the smallest error
    it detects with probability :data:`POWER` on the sample it drew.

    Attributes
    ----------
    n_users : int
        Users in the oracle population (:func:`oracle_population`).  A relative bias
        shows up against the estimate's noise as √n: raising it buys bias power, at a
        cost linear in n for the reports engine (and for sampled engines that simulate
        each user).
    repetitions : int
        Independent runs of the reports engine (``unbiased``, ``variance``, the reports
        side of ``engines_agree``).  Each run perturbs ``n_users`` reports: the costliest
        knob.  The smallest variance error the reports engine detects shrinks as
        1/√repetitions (about 13% at 400 runs of 8 values; the sampled engine is the
        one sized for power).
    sampled_repetitions : int
        Independent runs of the sampled engine (``sampled_moments``, the sampled side of
        ``engines_agree``), one ``simulate`` call each.  The variance test's power depends
        on the number of independent squared errors, runs × tested values: it detects a
        relative variance error δ with probability 0.9 once runs × values ≈
        2 ((z + 1.28)/δ)² (z = 3.89 at :data:`ALPHA`), 1.3 × 10^5 for δ = 2%: 24,000 runs
        of 8 values (GRR's values are correlated, worth about 7).  The detectable error
        shrinks as 1/√sampled_repetitions.  An oracle without a closed-form variance draws
        4 × ``repetitions`` runs instead (means only).
    audit_trials : int
        Reports per input of the privacy audit; raising it tightens the audit's lower
        bound on ε (it converges as 1/√trials).
    heavy_hitter_runs : int
        Runs per engine of ``engines_agree_f1``; raising it narrows the F1 comparison.
    seed : int
        The root seed of every check (each check spawns its own stream from it).
    """

    n_users: int = 2000
    repetitions: int = 400
    sampled_repetitions: int = 24_000
    audit_trials: int = 20_000
    heavy_hitter_runs: int = 12
    seed: int = 20170816


class ContractWarning(UserWarning):
    """A protocol class defines a method the contract never calls (the ``hooks`` check)."""


class CheckSkipped(Exception):  # noqa: N818 (it is an outcome, not an error)
    """A check does not apply to this protocol, by its declared capabilities; says why."""


class Check(NamedTuple):
    """One named check: ``run()`` returns a short note, raises ``AssertionError`` if the
    protocol fails it, or :class:`CheckSkipped` if its declaration rules the check out."""

    name: str
    run: Callable[[], str]


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check run by :func:`check_oracle` or :func:`check_heavy_hitter`:
    ``"xfail"`` is a check listed in ``expected_failed`` that failed, as expected."""

    name: str
    status: Literal["passed", "skipped", "xfail"]
    detail: str = ""


def _rng(settings: Settings, *key: str) -> np.random.Generator:
    words = [int.from_bytes(part.encode()[:8].ljust(8, b"\0"), "little") for part in key]
    return np.random.default_rng(np.random.SeedSequence(settings.seed, spawn_key=tuple(words)))


def _run_all(
    checks: Iterator[Check], expected_failed: Mapping[str, str] | None = None
) -> list[CheckResult]:
    """Run the checks; ``expected_failed`` maps a check's name to why it is known to fail
    (as scikit-learn's ``expected_failed_checks``): such a check must fail, and is then
    recorded as ``"xfail"``; if it passes, that is an error (the entry is stale)."""
    expected = dict(expected_failed or {})
    checks = list(checks)
    unknown = sorted(set(expected) - {check.name for check in checks})
    if unknown:
        names = ", ".join(check.name for check in checks)
        raise ValueError(f"expected_failed names no check of this battery: {unknown}; {names}")
    results = []
    for check in checks:
        try:
            detail = check.run()
        except CheckSkipped as skipped:
            results.append(CheckResult(check.name, "skipped", str(skipped)))
            continue
        except AssertionError as error:
            if check.name in expected:
                results.append(CheckResult(check.name, "xfail", f"{expected[check.name]}: {error}"))
                continue
            raise AssertionError(f"check {check.name!r} failed: {error}") from error
        if check.name in expected:
            raise AssertionError(
                f"check {check.name!r} passed but is listed in expected_failed "
                f"({expected[check.name]}): remove it from the list"
            )
        results.append(CheckResult(check.name, "passed", detail or ""))
    return results


# ------------------------------------------------------------------------ shared checks
def _refused(error: type[Exception], call: Callable[[], object]) -> bool:
    """Whether ``call()`` raises ``error`` (any other exception propagates)."""
    try:
        call()
    except error:
        return True
    return False


def _check_epsilon_refused(build: Callable[..., Any]) -> str:
    """ε = 0, -1, NaN: ParameterError naming ``epsilon``; a string: TypeError."""
    for bad in (0.0, -1.0, float("nan")):
        try:
            build(epsilon=bad)
        except ParameterError as error:
            assert error.name == "epsilon", f"epsilon={bad} raised for {error.name!r}"
            assert isinstance(error, ValueError)
        else:
            raise AssertionError(f"epsilon={bad} was accepted")
    if not _refused(TypeError, lambda: build(epsilon="1")):
        raise AssertionError("epsilon='1' (a string) did not raise TypeError")
    return "epsilon 0, -1, nan -> ParameterError; '1' -> TypeError"


def _check_keyword_only(cls: type, params: dict[str, Any]) -> str:
    positional = [
        p.name
        for p in inspect.signature(cls).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    assert not positional, f"positional parameters {positional}: use dataclass(kw_only=True)"
    return "every parameter keyword-only"


def _check_repr(instance: Any, params: dict[str, Any]) -> str:
    text = repr(instance)
    assert text.startswith(f"{type(instance).__name__}("), f"repr {text!r} does not name the class"
    for name in params:
        assert f"{name}=" in text, f"repr {text!r} does not show the parameter {name}"
    return text


def _check_pickle(instance: Any) -> str:
    copy = pickle.loads(pickle.dumps(instance))
    assert type(copy) is type(instance), "pickling changed the type"
    assert copy == instance, f"pickled copy {copy!r} differs from {instance!r}"
    assert repr(copy) == repr(instance)
    return "pickle round trip equal"


# ------------------------------------------------------------------------------ oracles
def oracle_population(oracle: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The true counts over the oracle's domain, and the values whose variance is tested.

    Independent users: value 0 holds ~30% of n, value 1 none (an absent value), the rest
    spread evenly over values 2..d-1; ``variances(counts)`` (by default ``variance(n, c)``)
    is exact for every value.
    ``public_per_call`` (one hash pool or family per call, so users of distinct values
    collide together): every user holds value 0, the only value whose variance has no
    collision term.
    """
    d = oracle.domain_size
    counts = np.zeros(d, dtype=np.int64)
    if capabilities_of(oracle).public_per_call or d == 2:
        counts[0] = n
        exact = np.array([0] if capabilities_of(oracle).public_per_call else [0, 1])
        return counts, exact.astype(np.int64)
    counts[0] = (3 * n) // 10
    rest = n - counts[0]
    counts[2:] = rest // (d - 2)
    counts[2 : 2 + rest % (d - 2)] += 1
    return counts, np.arange(d, dtype=np.int64)


def _reports_estimates(oracle, counts, rng, repetitions) -> np.ndarray:
    values = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    return np.array([oracle.estimate(oracle.perturb(values, rng)) for _ in range(repetitions)])


def _sampled_estimates(oracle, counts, rng, repetitions) -> np.ndarray:
    return np.array([oracle.simulate(counts, rng) for _ in range(repetitions)])


def _mean_t(sample: np.ndarray, expected: float) -> float:
    """(x̄ - μ)/(s/√R): the t statistic of a one-sample test of the mean."""
    spread = sample.std(ddof=1)
    if spread == 0:
        return 0.0 if sample.mean() == expected else math.inf
    return float((sample.mean() - expected) / (spread / math.sqrt(sample.shape[0])))


def _variance_z(sample: np.ndarray, truth: np.ndarray, variances: np.ndarray) -> float:
    """The pooled test of the closed-form variances over several values at once.

    Each run r gives T_r = mean over the values v of (ĉ_r(v) - c(v))² / Var[ĉ(v)], with
    the *true* counts c(v), so E[T_r] = 1 exactly when the estimates are unbiased with the
    stated variances, and the T_r are independent across runs whatever the correlation
    between values (GRR's multinomial, a shared pool).  The returned z = (T̄ - 1)/(s_T/√R)
    is asymptotically normal (central limit theorem over the R runs).
    """
    ratios = np.mean((sample - truth) ** 2 / variances, axis=1)
    return _mean_t(ratios, 1.0)


def _variance_detects(sample: np.ndarray, truth: np.ndarray, variances: np.ndarray) -> float:
    """The relative variance error the test of :func:`_variance_z` detects with probability
    :data:`POWER`, to first order: (Z + Z_POWER) × the standard error of T̄."""
    ratios = np.mean((sample - truth) ** 2 / variances, axis=1)
    return (Z + Z_POWER) * float(ratios.std(ddof=1)) / math.sqrt(ratios.shape[0])


def _scale_t(sample: np.ndarray, truth: np.ndarray) -> tuple[float, float, float]:
    """The pooled test of unbiasedness along the true counts (a scale error of the estimator).

    Each run r gives B_r = Σ_v c(v) (ĉ_r(v) - c(v)) / Σ_v c(v)², the least-squares estimate
    of β - 1 in E[ĉ] = β c: E[B_r] = 0 for an unbiased oracle, and the B_r are independent
    across runs whatever the correlation between values.  Returns (t, B̄, detects): the
    t statistic of B̄ = 0 (R - 1 degrees of freedom) and the relative scale error it detects
    with probability :data:`POWER`.  A 1% shrink of every estimate gives E[B_r] = -0.01.
    """
    weights = truth / float(truth @ truth)
    shifts = (sample - truth) @ weights
    limit = float(stats.t.isf(ALPHA / 2, shifts.shape[0] - 1))
    error = float(shifts.std(ddof=1)) / math.sqrt(shifts.shape[0])
    return _mean_t(shifts, 0.0), float(shifts.mean()), (limit + Z_POWER) * error


def _two_sample_z(first: np.ndarray, second: np.ndarray, statistic: str) -> float:
    """z of the difference of a statistic between two independent samples.

    ``mean``: Welch's z; ``variance``: sample variances, each with variance (m4 - s⁴)/R;
    ``covariance`` (two columns): sample covariances, each with variance
    (E[(X-x̄)²(Y-ȳ)²] - c²)/R.  All asymptotically normal (delta method).
    """
    values, spreads = [], []
    for sample in (first, second):
        size = sample.shape[0]
        centred = sample - sample.mean(axis=0)
        if statistic == "mean":
            values.append(float(sample.mean()))
            spreads.append(float(sample.var(ddof=1)) / size)
        elif statistic == "variance":
            variance = float(sample.var(ddof=1))
            values.append(variance)
            spreads.append((float(np.mean(centred**4)) - variance**2) / size)
        else:
            products = centred[:, 0] * centred[:, 1]
            covariance = float(products.sum() / (size - 1))
            values.append(covariance)
            spreads.append((float(np.mean(products**2)) - covariance**2) / size)
    total = spreads[0] + spreads[1]
    if total <= 0:
        return 0.0 if values[0] == values[1] else math.inf
    return (values[0] - values[1]) / math.sqrt(total)


#: Methods that look like a hook but are not called where one might expect: the name, the
#: hooks that make it unnecessary to warn (any one overridden as well), and why.
MISLEADING_OVERRIDES = {
    "simulate_candidates": (
        ("_simulate_population", "_simulate_counts", "simulate"),
        "simulate() never calls simulate_candidates (only the heavy hitters do): both call "
        "_simulate_population(values, counts, chosen, rng), whose default calls "
        "_simulate_counts(candidate_counts, n_users, rng); override one of those",
    ),
}


def _base_hooks(base: type) -> set[str]:
    """The methods and properties a protocol base class offers to override (no dunders)."""
    names = set()
    for klass in base.__mro__[:-1]:  # not object
        for name, member in vars(klass).items():
            if name.startswith("__") or not (callable(member) or isinstance(member, property)):
                continue
            names.add(name)
    return names


def _names_used(classes: list[type]) -> set[str]:
    """Every attribute name the methods of ``classes`` read (their bytecode's ``co_names``,
    nested functions included): a helper the class calls itself is not a dead hook."""
    used: set[str] = set()
    codes = []
    for klass in classes:
        for member in vars(klass).values():
            if isinstance(member, property):
                member = member.fget
            member = getattr(member, "__func__", member)
            if callable(member) and hasattr(member, "__code__"):
                codes.append(member.__code__)
    while codes:
        code = codes.pop()
        used.update(code.co_names)
        codes.extend(c for c in code.co_consts if inspect.iscode(c))
    return used


def hook_warnings(cls: type, base: type | None = None) -> list[str]:
    """What a protocol class defines that its base's contract will not call as meant.

    ``base`` is the library's base class of the contract (by default the last class in
    ``cls``'s MRO from :mod:`ldp.oracles.base`: ``PureOracle`` or ``FrequencyOracle``).
    The names the class and its other ancestors define are checked: (1) an override in
    :data:`MISLEADING_OVERRIDES` without the hooks that are really called (overriding
    ``simulate_candidates`` alone leaves ``simulate()``'s engine as it was), and (2) a name
    that is not a hook but close to one (``difflib``, ratio >= 0.85: ``_simulate_count``,
    ``simulate_population``, ``estimates``), naming the hook it probably meant, unless the
    class's own methods call it (a helper, e.g. a sketch's ``_simulate``).
    """
    if base is None:
        from ldp.oracles import base as oracle_base

        bases = [k for k in cls.__mro__ if k.__module__ == oracle_base.__name__]
        if not bases:
            return []
        base = bases[0]
        hooks = _base_hooks(oracle_base.PureOracle) | _base_hooks(oracle_base.FrequencyOracle)
    else:
        hooks = _base_hooks(base)
    mine = list(cls.__mro__[: cls.__mro__.index(base)])
    own = {name for klass in mine for name in vars(klass) if not name.startswith("__")}
    used = _names_used(mine)
    found = []
    for name, (real, why) in MISLEADING_OVERRIDES.items():
        if name in own and not own.intersection(real):
            found.append(f"{cls.__name__} overrides {name} but none of {', '.join(real)}: {why}")
    for name in sorted(own - hooks - used):
        close = difflib.get_close_matches(name, sorted(hooks), n=1, cutoff=0.85)
        if close:
            found.append(
                f"{cls.__name__}.{name} is not a hook of {base.__name__} and is never called "
                f"by it; did you mean {close[0]}?"
            )
    return found


def oracle_checks(cls: type, settings: Settings | None = None, **params: Any) -> Iterator[Check]:
    """The checks of a frequency-oracle class built as ``cls(**params)``, one by one.

    ``params`` must include ``epsilon`` and ``domain_size``; small domains (d <= 16) keep
    the suite fast.  Which checks apply follows ``capabilities_of(cls)``.
    """
    settings = settings or Settings()
    capabilities = capabilities_of(cls)
    oracle = cls(**params)
    n = settings.n_users
    counts, exact_values = oracle_population(oracle, n)
    pair = np.array([0, 1], dtype=np.int64)
    both = "reports" in capabilities.engines and "sampled" in capabilities.engines
    cache: dict[str, np.ndarray] = {}

    def reports_sample() -> np.ndarray:
        if "reports" not in capabilities.engines:
            raise CheckSkipped("declares no reports engine")
        if "reports" not in cache:
            rng = _rng(settings, "reports")
            cache["reports"] = _reports_estimates(oracle, counts, rng, settings.repetitions)
        return cache["reports"]

    def sampled_sample() -> np.ndarray:
        """The sampled engine's runs, drawn once and shared by ``sampled_moments`` and
        ``engines_agree`` (two tests of one sample: each keeps its level ALPHA)."""
        if "sampled" not in capabilities.engines:
            raise CheckSkipped("declares no sampled engine")
        if "sampled" not in cache:
            runs = settings.sampled_repetitions  # the variance test's power needs them
            if not capabilities.closed_form_variance:
                runs = 4 * settings.repetitions  # means only
            rng = _rng(settings, "sampled")
            cache["sampled"] = _sampled_estimates(oracle, counts, rng, runs)
        return cache["sampled"]

    def variance_test(sample: np.ndarray, engine: str) -> str:
        truth = counts[exact_values].astype(float)
        variances = np.asarray(oracle.variances(counts, exact_values), dtype=float)
        z = _variance_z(sample[:, exact_values], truth, variances)
        assert abs(z) <= Z, (
            f"{engine}: the squared errors of values {exact_values.tolist()} average "
            f"{np.mean((sample[:, exact_values] - truth) ** 2 / variances):.4f} times "
            f"variances(counts): z = {z:.2f} beyond ±{Z:.2f} (level {ALPHA})"
        )
        detects = _variance_detects(sample[:, exact_values], truth, variances)
        return (
            f"variance z = {z:+.2f} over values {exact_values.tolist()} (detects a "
            f"{detects:.1%} variance error w.p. {POWER})"
        )

    def scale_test(sample: np.ndarray, engine: str) -> str:
        t, shift, detects = _scale_t(sample, counts.astype(float))
        limit = float(stats.t.isf(ALPHA / 2, sample.shape[0] - 1))
        assert abs(t) <= limit, (
            f"{engine}: the estimates average {1 + shift:.5f} times the true counts "
            f"(pooled over values along c): t = {t:.2f} beyond ±{limit:.2f} (level {ALPHA})"
        )
        return f"scale {1 + shift:.5f}, t = {t:+.2f} (detects a {detects:.2%} bias w.p. {POWER})"

    def hooks() -> str:
        """:func:`hook_warnings`: a :class:`ContractWarning` for each method the class defines
        that the contract never calls as its author meant (it warns, it does not fail)."""
        found = hook_warnings(cls)
        for message in found:
            warnings.warn(message, ContractWarning, stacklevel=2)
        return "; ".join(found) if found else "every override is a hook the contract calls"

    def constructor_validation() -> str:
        """Bad ε: ParameterError(name="epsilon"); d = 1: ParameterError(name="domain_size")."""
        note = _check_epsilon_refused(lambda **bad: cls(**(params | bad)))
        try:
            cls(**(params | {"domain_size": 1}))
        except ParameterError as error:
            assert error.name == "domain_size", f"domain_size=1 raised for {error.name!r}"
        else:
            raise AssertionError("domain_size=1 was accepted")
        return note + "; domain_size 1 -> ParameterError"

    def keyword_only() -> str:
        return _check_keyword_only(cls, params)

    def representation() -> str:
        return _check_repr(oracle, params)

    def pickling() -> str:
        note = _check_pickle(oracle)
        if "reports" in capabilities.engines:
            values = np.repeat(np.arange(counts.shape[0]), counts)
            reports = oracle.perturb(values, _rng(settings, "pickle"))
            copy = pickle.loads(pickle.dumps(oracle))
            assert np.array_equal(copy.estimate(reports), oracle.estimate(reports))
            note += "; same estimates"
        return note

    def shapes() -> str:
        """Reports of n users; estimates (d,) or (|candidates|,), float and finite."""
        d, notes = counts.shape[0], []
        rng = _rng(settings, "shapes")
        if "reports" in capabilities.engines:
            values = np.repeat(np.arange(d, dtype=np.int64), counts)
            reports = oracle.perturb(values, rng)
            assert oracle.n_reports(reports) == n, "n_reports differs from the users"
            for got, size in (
                (oracle.estimate(reports), d),
                (oracle.estimate(reports, pair), 2),
            ):
                got = np.asarray(got)
                assert got.shape == (size,), f"estimate shape {got.shape}, expected ({size},)"
                assert got.dtype.kind == "f" and np.isfinite(got).all(), "estimates not finite"
            empty = oracle.perturb(np.zeros(0, dtype=np.int64), rng)
            assert oracle.n_reports(empty) == 0, "no users, yet reports"
            notes.append("reports")
        if "sampled" in capabilities.engines:
            for got, size in (
                (oracle.simulate(counts, rng), d),
                (oracle.simulate(counts, rng, pair), 2),
            ):
                got = np.asarray(got)
                assert got.shape == (size,), f"simulate shape {got.shape}, expected ({size},)"
                assert got.dtype.kind == "f" and np.isfinite(got).all(), "simulate not finite"
            notes.append("sampled")
        return "shapes and dtypes of " + " and ".join(notes)

    def determinism() -> str:
        """The same seed gives the same reports and the same sampled estimates."""
        values = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
        for engine in capabilities.engines:
            runs = []
            for _ in range(2):
                rng = np.random.default_rng(settings.seed)
                if engine == "reports":
                    runs.append(oracle.estimate(oracle.perturb(values, rng)))
                else:
                    runs.append(oracle.simulate(counts, rng))
            assert np.array_equal(runs[0], runs[1]), f"{engine} engine differs for one seed"
        return "identical for one seed"

    def unbiased() -> str:
        """Reports engine, ``repetitions`` runs: a two-sided t-test per value that
        E[ĉ(v)] = c(v), each at level ALPHA (t quantile with R - 1 degrees of freedom),
        and the pooled scale test of :func:`_scale_t` (level ALPHA)."""
        sample = reports_sample()
        limit = float(stats.t.isf(ALPHA / 2, sample.shape[0] - 1))
        worst = 0.0
        for value in range(counts.shape[0]):
            t = _mean_t(sample[:, value], float(counts[value]))
            assert abs(t) <= limit, (
                f"E[estimate of {value}] = {sample[:, value].mean():.4g} vs true count "
                f"{counts[value]}: t = {t:.2f} beyond ±{limit:.2f} (level {ALPHA})"
            )
            worst = max(worst, abs(t))
        note = scale_test(sample, "reports engine")
        return f"largest |t| = {worst:.2f} over {counts.shape[0]} values; {note}"

    def variance() -> str:
        """Reports engine: the closed-form ``variances(counts)`` (``variance(n, c)`` unless
        overridden) by the pooled test of :func:`_variance_z` (two-sided, level ALPHA)."""
        if not capabilities.closed_form_variance:
            raise CheckSkipped("declares no closed-form variance")
        return variance_test(reports_sample(), "reports engine")

    def sampled_moments() -> str:
        """Sampled engine, ``sampled_repetitions`` runs: a t-test of the mean of every value
        (level ALPHA each), the pooled scale test of :func:`_scale_t` and the pooled
        variance test of :func:`_variance_z` (level ALPHA each).  At the defaults, with 8
        values, they detect a 1% bias of the estimates and a 2% error of the declared
        variance with probability >= 0.9 (the note states what this sample detects)."""
        sample = sampled_sample()
        worst = 0.0
        for value in range(counts.shape[0]):
            t = _mean_t(sample[:, value], float(counts[value]))
            assert abs(t) <= Z, f"sampled engine: the mean of {value} is off, t = {t:.2f}"
            worst = max(worst, abs(t))
        note = f"largest |t| = {worst:.2f}; " + scale_test(sample, "sampled engine")
        if not capabilities.closed_form_variance:
            return note + "; variance not tested (no closed form declared)"
        return note + "; " + variance_test(sample, "sampled engine")

    def engines_agree() -> str:
        """Both engines on the same population: two-sample asymptotic z-tests (level ALPHA
        each) of the means and variances of values 0 and 1 and of the covariance of their
        estimates (:func:`_two_sample_z`); the sampled side is ``sampled_moments``'s
        sample."""
        if not both:
            raise CheckSkipped("declares one engine only")
        if capabilities.sampled != "exact":
            raise CheckSkipped("declares its sampled engine approximate (sampled='approximate')")
        first = reports_sample()[:, pair]
        second = sampled_sample()[:, pair]
        notes = []
        for j, value in enumerate(pair):
            for statistic in ("mean", "variance"):
                z = _two_sample_z(first[:, j], second[:, j], statistic)
                assert abs(z) <= Z, f"engines differ in the {statistic} of {value}: z = {z:.2f}"
                notes.append(f"{statistic}({value}) z = {z:+.2f}")
        z = _two_sample_z(first, second, "covariance")
        assert abs(z) <= Z, f"engines differ in the covariance of values 0 and 1: z = {z:.2f}"
        notes.append(f"covariance z = {z:+.2f}")
        return ", ".join(notes)

    def additive() -> str:
        """``Capabilities(additive=True)``: the statistics of two batches of reports add up,
        and ``estimate_aggregate`` of the sum is ``estimate`` of both batches joined."""
        if not capabilities.additive:
            raise CheckSkipped("declares no additive statistic (additive=False)")
        from ldp.streaming import stream_estimate, users_in_chunks

        chunks = list(users_in_chunks(counts, max(1, n // 3)))
        streamed = stream_estimate(oracle, chunks, _rng(settings, "additive"), pair)
        rng = _rng(settings, "additive")
        parts = [oracle.perturb(chunk, rng) for chunk in chunks]
        total = sum(oracle.aggregate(part, pair) for part in parts)
        n_users = sum(oracle.n_reports(part) for part in parts)
        assert np.array_equal(streamed, oracle.estimate_aggregate(total, n_users)), (
            "stream_estimate differs from estimate_aggregate of the summed statistics"
        )
        one = oracle.estimate(parts[0], pair)
        assert np.allclose(
            one,
            oracle.estimate_aggregate(oracle.aggregate(parts[0], pair), oracle.n_reports(parts[0])),
            rtol=1e-12,
            atol=1e-9,
        ), "estimate_aggregate(aggregate(r)) != estimate(r)"
        return f"{len(chunks)} chunks: streamed == summed statistics; one batch == estimate"

    def privacy_audit() -> str:
        """``ldp.audit.lower_bound`` on the real ``perturb`` between values 0 and 1 (level
        ALPHA): the lower bound must not exceed ε.  Public randomness drawn once per call
        (``public_per_call``) is conditioned on by the auditor, which calls ``perturb`` with
        both inputs together (see ``docs/privacy.md``)."""
        from ldp import audit

        if "reports" not in capabilities.engines:
            raise CheckSkipped("declares no reports engine (nothing to audit)")
        result = audit.lower_bound(
            oracle,
            0,
            1,
            rng=_rng(settings, "audit"),
            trials=settings.audit_trials,
            alpha=ALPHA,
        )
        assert result.epsilon <= oracle.epsilon * (1 + 1e-12), f"audit: {result}"
        return f"lower bound {result.epsilon:.3f} <= epsilon {oracle.epsilon:g}"

    def adversary() -> str:
        """:mod:`ldp.adversary` with a uniform and a Zipf prior: the success lies between the
        blind guess π_max and the ε-LDP bound; with both an exact form and a per-report
        likelihood, the empirical estimate (real ``perturb``) agrees with the exact value."""
        from ldp import adversary as bayes

        if bayes.adversary_method(oracle) is None:
            raise CheckSkipped("no adversary_success, log_likelihoods or categorical model")
        d, notes = oracle.domain_size, []
        for label, weights in (("uniform", np.ones(d)), ("zipf", 1 / np.arange(1, d + 1) ** 1.5)):
            prior = bayes.check_prior(weights, d)
            rng = _rng(settings, "adversary", label)
            found = bayes.adversary_success(oracle, prior, rng=rng)
            slack = Z * found.standard_error + 1e-12
            bound, blind = bayes.ldp_bound(oracle.epsilon, prior), bayes.baseline(prior)
            assert blind - slack <= found.value <= bound + slack, (
                f"{label} prior: success {found.value:.6f} outside [π_max = {blind:.6f}, "
                f"ε-LDP bound {bound:.6f}] ({found.method})"
            )
            note = f"{label}: {found.value:.4f} ({found.method})"
            if found.method == "exact" and isinstance(oracle, HasLogLikelihoods):
                n = settings.n_users
                estimate = bayes.empirical_success(oracle, prior, rng, n)
                error = math.sqrt(max(found.value * (1 - found.value), 1e-12) / n)
                z = (estimate.value - found.value) / error
                assert abs(z) <= Z, f"{label}: empirical {estimate.value:.4f}, z = {z:.2f}"
                note += f", empirical z = {z:+.2f}"
            notes.append(note)
        return "; ".join(notes)

    def poisoning() -> str:
        """For each attack the class can express (:mod:`ldp.poisoning`: the random item
        attack always, RPA through the hook ``HasReportSpace``, MGA through
        ``CraftsReports`` or, for a pure oracle, by search), the mean frequency gain of
        :data:`POISONING_RUNS` poisoned collections of the population (β = 0.05, targets 0
        and 1) lies within Z standard
        errors of its closed form ([CJG21], level ALPHA each).  The random item attack's,
        β(1 − f_T), holds for any unbiased oracle; the note names the attacks the class
        cannot express."""
        from ldp import poisoning as attacks

        values = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
        notes, cannot = [], []
        for attack in attacks.ATTACKS:
            try:
                attacks.check_attack(oracle, attack)
            except ParameterError:
                cannot.append(attack)
                continue
            rng = _rng(settings, "poisoning", attack)
            found = [
                attacks.attack(oracle, values, attack, pair, 0.05, rng)
                for _ in range(POISONING_RUNS)
            ]
            gains = np.array([f.gain for f in found])
            supported = float(np.mean([f.supported for f in found]))
            expected = attacks.expected_gain(
                oracle, attack, pair, found[0].beta, found[0].f_targets, supported
            )
            se = gains.std(ddof=1) / math.sqrt(POISONING_RUNS)
            z = (gains.mean() - expected) / max(se, 1e-12)
            assert abs(z) <= Z, (
                f"{attack}: mean gain {gains.mean():.5f} against its closed form "
                f"{expected:.5f}: z = {z:.2f} beyond ±{Z:.2f} (level {ALPHA})"
            )
            notes.append(f"{attack} gain {gains.mean():.4f} (z = {z:+.2f})")
        if cannot:
            notes.append(f"cannot express {', '.join(cannot)} (no hook)")
        return "; ".join(notes)

    for check in (
        hooks,
        constructor_validation,
        keyword_only,
        representation,
        pickling,
        shapes,
        determinism,
        unbiased,
        variance,
        sampled_moments,
        engines_agree,
        additive,
        privacy_audit,
        adversary,
        poisoning,
    ):
        yield Check(check.__name__, check)


def check_oracle(
    cls: type,
    settings: Settings | None = None,
    *,
    expected_failed: Mapping[str, str] | None = None,
    **params: Any,
) -> list[CheckResult]:
    """Run every check of :func:`oracle_checks`; ``AssertionError`` on the first failure.

    Returns the results, skipped checks with their reasons.  ``expected_failed`` maps the
    names of checks a protocol is known to fail to the reason (each must then fail).
    """
    return _run_all(oracle_checks(cls, settings, **params), expected_failed)


# ------------------------------------------------------------------------ mean protocols
#: The values whose per-report moments are tested: both ends, the centre and two others.
MEAN_TEST_VALUES = (-1.0, -0.3, 0.0, 0.5, 1.0)
#: Bins of the report range in the binned audit (plus the two open tails).
MEAN_AUDIT_BINS = 16


def mean_population(n: int) -> np.ndarray:
    """n values in [-1, 1]: evenly spaced, both ends included (mean 0 by symmetry)."""
    return np.linspace(-1.0, 1.0, n)


def _moment_z(sample: np.ndarray, expected: float) -> float:
    """z of the sample mean of ``sample`` against ``expected`` (CLT; s from the sample).

    A constant sample (Duchi's squared reports) is compared to 1e-12 relative instead.
    """
    if sample.std() <= 1e-12 * abs(sample.mean()):
        return 0.0 if math.isclose(sample.mean(), expected, rel_tol=1e-12) else math.inf
    return _mean_t(sample, expected)


def mean_checks(cls: type, settings: Settings | None = None, **params: Any) -> Iterator[Check]:
    """The checks of a mean-estimation class (:mod:`ldp.numeric`) built as ``cls(**params)``.

    ``params`` must include ``epsilon``.  Per-report moments are tested at
    :data:`MEAN_TEST_VALUES`: E[t*/κ | t] = t and E[(t*/κ - t)²] = ``conditional_variance(t)``
    (two-sided z-tests at level ALPHA each, ``audit_trials`` reports per value), and
    ``conditional_variance`` must equal the paper's ``paper_variance`` to 1e-9 relative.
    """
    settings = settings or Settings()
    capabilities = capabilities_of(cls)
    protocol = cls(**params)
    values = mean_population(settings.n_users)
    truth = float(values.mean())
    cache: dict[str, np.ndarray] = {}

    def reports_sample() -> np.ndarray:
        if "reports" not in cache:
            rng = _rng(settings, "mean reports")
            cache["reports"] = np.array(
                [
                    protocol.estimate(protocol.perturb(values, rng))
                    for _ in range(settings.repetitions)
                ]
            )
        return cache["reports"]

    def constructor_validation() -> str:
        """Bad ε: ParameterError(name="epsilon"); bad values: ValueError / TypeError."""
        note = _check_epsilon_refused(lambda **bad: cls(**(params | bad)))
        rng = _rng(settings, "validation")
        for bad in ([1.5], [-1.0001], [float("nan")], [[0.0, 0.5]]):
            if not _refused(ValueError, lambda bad=bad: protocol.perturb(np.array(bad), rng)):
                raise AssertionError(f"perturb({bad}) was accepted")
        if not _refused(TypeError, lambda: protocol.perturb(np.array(["a"]), rng)):
            raise AssertionError("perturb of strings did not raise TypeError")
        return note + "; values outside [-1, 1], NaN, 2-D -> ValueError; strings -> TypeError"

    def keyword_only() -> str:
        return _check_keyword_only(cls, params)

    def representation() -> str:
        return _check_repr(protocol, params)

    def pickling() -> str:
        note = _check_pickle(protocol)
        reports = protocol.perturb(values, _rng(settings, "pickle"))
        copy = pickle.loads(pickle.dumps(protocol))
        assert copy.estimate(reports) == protocol.estimate(reports), "estimates differ"
        return note + "; same estimate"

    def shapes() -> str:
        """Reports float64 (n,), finite within ±report_range; estimates finite floats;
        no users: no reports and a NaN estimate; the same seed: the same reports."""
        rng = _rng(settings, "shapes")
        reports = protocol.perturb(values, rng)
        assert isinstance(reports, np.ndarray) and reports.dtype == np.float64, "not float64"
        assert reports.shape == values.shape, f"reports shape {reports.shape}"
        assert np.isfinite(reports).all(), "reports not finite"
        if getattr(cls, "bounded", True):
            low, high = protocol.report_range()
            assert reports.min() >= low and reports.max() <= high, "reports outside the range"
        assert isinstance(protocol.estimate(reports), float)
        assert protocol.n_reports(reports) == values.shape[0]
        empty = protocol.perturb(np.zeros(0), rng)
        assert empty.shape == (0,) and math.isnan(protocol.estimate(empty))
        again = [protocol.perturb(values, np.random.default_rng(1)) for _ in range(2)]
        assert np.array_equal(again[0], again[1]), "the same seed gave different reports"
        if "sampled" in capabilities.engines:
            got = protocol.simulate(values, rng)
            assert isinstance(got, float) and math.isfinite(got), "simulate not a finite float"
        return "float64 reports, float estimates, deterministic for one seed"

    def closed_form() -> str:
        """conditional_variance (the mechanism as drawn) = paper_variance within 1e-6
        relative (the realised mechanisms round the paper's constants, e.g. PM's dyadic
        C': ~1e-9 at ε = 1), and worst_case_variance = its maximum over a grid of t (step
        2^-11: it holds the midpoints of an input grid 1/s for s a power of two up to 2^10,
        where a mechanism that rounds t has its largest variance)."""
        grid = np.linspace(-1, 1, 2**12 + 1)
        realised, paper = protocol.conditional_variance(grid), protocol.paper_variance(grid)
        gap = float(np.max(np.abs(realised / paper - 1)))
        assert gap <= 1e-6, f"conditional_variance differs from the paper's by {gap:.3g}"
        worst = protocol.worst_case_variance()
        top = float(realised.max())
        assert top * (1 - 1e-12) <= worst <= top * (1 + 1e-9), "worst case is not the maximum"
        return f"relative gap to the paper {gap:.2g}; worst case {worst:.4g}"

    def per_report_moments() -> str:
        """At each t of MEAN_TEST_VALUES, ``audit_trials`` reports: z-tests that the mean of
        t*/κ is t and the mean of (t*/κ - t)² is Var[t*|t] (level ALPHA each)."""
        rng = _rng(settings, "moments")
        notes = []
        for t in MEAN_TEST_VALUES:
            scaled = protocol.perturb(np.full(settings.audit_trials, t), rng) / protocol.kappa
            z_mean = _moment_z(scaled, t)
            z_var = _moment_z((scaled - t) ** 2, float(protocol.conditional_variance(t)))
            assert abs(z_mean) <= Z, f"E[t*|t={t}] off: z = {z_mean:.2f}"
            assert abs(z_var) <= Z, f"Var[t*|t={t}] off the closed form: z = {z_var:.2f}"
            notes.append(f"t={t:+g}: z {z_mean:+.2f}/{z_var:+.2f}")
        return "; ".join(notes)

    def unbiased_variance() -> str:
        """Reports engine, ``repetitions`` runs on :func:`mean_population`: a t-test that
        the estimate's mean is the true mean, and the pooled test of E[(est - μ)²] =
        variance(values) (:func:`_variance_z`), each at level ALPHA."""
        sample = reports_sample()
        limit = float(stats.t.isf(ALPHA / 2, sample.shape[0] - 1))
        t = _mean_t(sample, truth)
        assert abs(t) <= limit, f"E[estimate] = {sample.mean():.4g} vs {truth}: t = {t:.2f}"
        z = _variance_z(sample[:, None], np.array([truth]), np.array([protocol.variance(values)]))
        assert abs(z) <= Z, f"variance of the estimate off variance(values): z = {z:.2f}"
        return f"t = {t:+.2f}, variance z = {z:+.2f}"

    def engines_agree() -> str:
        """Sampled engine: its mean and variance against the reports engine's (two-sample
        z, level ALPHA each) and its variance against variance(values) (level ALPHA)."""
        if "sampled" not in capabilities.engines:
            raise CheckSkipped("declares no sampled engine (no exact law of the mean)")
        rng = _rng(settings, "mean sampled")
        sampled = np.array(
            [protocol.simulate(values, rng) for _ in range(settings.sampled_repetitions)]
        )
        first = reports_sample()
        notes = []
        for statistic in ("mean", "variance"):
            z = _two_sample_z(first, sampled, statistic)
            assert abs(z) <= Z, f"engines differ in the {statistic}: z = {z:.2f}"
            notes.append(f"{statistic} z = {z:+.2f}")
        z = _variance_z(sampled[:, None], np.array([truth]), np.array([protocol.variance(values)]))
        assert abs(z) <= Z, f"sampled engine's variance off variance(values): z = {z:.2f}"
        return ", ".join(notes) + f", sampled variance z = {z:+.2f}"

    def privacy_audit() -> str:
        """``ldp.audit.lower_bound`` between t = 1 and t = -1 on the protocol's own
        likelihood-ratio events and MEAN_AUDIT_BINS equal bins of ``report_range`` (plus
        the open tails), level ALPHA: the bound must not exceed ε.  This audits the law at
        the bins' resolution, whatever the float bytes (see ``bytes_audit``)."""
        from ldp import audit
        from ldp.audit.events import bin_events

        low, high = protocol.report_range()
        edges = np.concatenate([[-np.inf], np.linspace(low, high, MEAN_AUDIT_BINS + 1), [np.inf]])
        events = protocol.audit_events(1.0, -1.0) + bin_events(edges)
        result = audit.lower_bound(
            protocol,
            1.0,
            -1.0,
            rng=_rng(settings, "mean audit"),
            trials=settings.audit_trials,
            alpha=ALPHA,
            events=events,
        )
        assert result.epsilon <= protocol.epsilon * (1 + 1e-12), f"audit: {result}"
        return f"lower bound {result.epsilon:.3f} <= epsilon {protocol.epsilon:g}"

    def bytes_audit() -> str:
        """The auditor's default events (float grid, every bit, the search) on the float64
        reports of t = 0 and t = 1, level ALPHA.  A protocol declaring ``exact_bytes`` must
        pass; one that does not is reported as a skip stating the bound found."""
        from ldp import audit

        result = audit.lower_bound(
            protocol,
            0.0,
            1.0,
            rng=_rng(settings, "bytes audit"),
            trials=settings.audit_trials,
            alpha=ALPHA,
        )
        if not getattr(cls, "exact_bytes", False):
            raise CheckSkipped(
                f"declares exact_bytes = False (private as a real-valued law only); the "
                f"auditor on its float64 reports found {result}"
            )
        assert result.epsilon <= protocol.epsilon * (1 + 1e-12), f"audit: {result}"
        return f"lower bound {result.epsilon:.3f} <= epsilon {protocol.epsilon:g}"

    for check in (
        constructor_validation,
        keyword_only,
        representation,
        pickling,
        shapes,
        closed_form,
        per_report_moments,
        unbiased_variance,
        engines_agree,
        privacy_audit,
        bytes_audit,
    ):
        yield Check(check.__name__, check)


def check_mean(
    cls: type,
    settings: Settings | None = None,
    *,
    expected_failed: Mapping[str, str] | None = None,
    **params: Any,
) -> list[CheckResult]:
    """Run every check of :func:`mean_checks`; ``AssertionError`` on the first failure
    (``expected_failed`` as in :func:`check_oracle`)."""
    return _run_all(mean_checks(cls, settings, **params), expected_failed)


# ------------------------------------------------------------------------ heavy hitters
def zipf_dataset(n: int, m: int, rng: np.random.Generator, support: int = 256, s: float = 1.5):
    """n users over ``support`` random distinct m-bit values with Zipf(s) frequencies."""
    from ldp.datasets.base import Dataset

    high = min(2**m, 2**63) - 1
    values = np.unique(rng.integers(0, high, size=3 * support, dtype=np.uint64, endpoint=True))
    values = rng.permutation(values)[:support]
    weights = np.arange(1, values.shape[0] + 1, dtype=float) ** -s
    counts = rng.multinomial(n, weights / weights.sum())
    return Dataset(name="zipf", values=np.repeat(values, counts), m=m, source="synthetic")


def heavy_hitter_checks(
    cls: type, settings: Settings | None = None, **params: Any
) -> Iterator[Check]:
    """The checks of a heavy-hitter class built as ``cls(**params)``, one by one.

    ``params`` must include ``epsilon``, ``k`` and ``m`` (m <= 64: integer values).
    """
    settings = settings or Settings()
    capabilities = capabilities_of(cls)
    protocol = cls(**params)
    data = zipf_dataset(20_000, params["m"], _rng(settings, "data"))

    def constructor_validation() -> str:
        """Bad ε: ParameterError(name="epsilon"); k = 0: ParameterError(name="k")."""
        note = _check_epsilon_refused(lambda **bad: cls(**(params | bad)))
        try:
            cls(**(params | {"k": 0}))
        except ParameterError as error:
            assert error.name == "k", f"k=0 raised for {error.name!r}"
        else:
            raise AssertionError("k=0 was accepted")
        return note + "; k 0 -> ParameterError"

    def keyword_only() -> str:
        return _check_keyword_only(cls, params)

    def representation() -> str:
        return _check_repr(protocol, params)

    def pickling() -> str:
        return _check_pickle(protocol)

    def results() -> str:
        """Every declared engine: at most k distinct identified values (top-k output),
        float estimates aligned with them, a dict of diagnostics; the same seed twice
        gives the same result."""
        for engine in capabilities.engines:
            result = protocol.run(data, np.random.default_rng(settings.seed), engine=engine)
            again = protocol.run(data, np.random.default_rng(settings.seed), engine=engine)
            identified, estimates = np.asarray(result.identified), np.asarray(result.estimates)
            assert identified.shape[0] == estimates.shape[0], "identified and estimates differ"
            if getattr(protocol, "threshold", None) is None:
                assert identified.shape[0] <= protocol.k, f"{engine}: more than k identified"
            assert np.unique(identified).shape[0] == identified.shape[0], "repeated values"
            assert estimates.dtype.kind == "f", f"{engine}: estimates dtype {estimates.dtype}"
            assert isinstance(result.diagnostics, dict), "diagnostics must be a dict"
            assert np.array_equal(identified, np.asarray(again.identified)), (
                f"{engine} engine differs for one seed"
            )
        return f"engines {capabilities.engines}: shapes and determinism"

    def client_reports() -> str:
        """``perturb(values, rng)`` gives one group per user and per-group oracle reports
        (what ``run(engine="reports")`` aggregates)."""
        if "reports" not in capabilities.engines:
            raise CheckSkipped("declares no reports engine")
        if not callable(getattr(protocol, "perturb", None)):
            raise CheckSkipped(
                "has no perturb(values, rng) client method (its reports engine draws the "
                "users' reports inside run)"
            )
        values = data.values[:2000]
        reports = protocol.perturb(values, _rng(settings, "client"))
        groups = np.asarray(getattr(reports, "groups", None))
        assert groups.shape == (values.shape[0],), "perturb must give one group per user"
        return f"{len(getattr(reports, 'parts', ()))} parts for {values.shape[0]} users"

    def engines_agree_f1() -> str:
        """F1 of ``heavy_hitter_runs`` runs per engine on a Zipf(1.5) data set (n =
        20,000): Welch's two-sided t-test of equal mean F1 at level 1e-3 (few runs: the t
        law, not the normal one; identical constant samples pass)."""
        from ldp import metrics

        if not ("reports" in capabilities.engines and "sampled" in capabilities.engines):
            raise CheckSkipped("declares one engine only")
        if capabilities.sampled != "exact":
            raise CheckSkipped("declares its sampled engine approximate")
        truth = data.top_k(protocol.k)
        scores = {}
        for engine in ("reports", "sampled"):
            rng = _rng(settings, "f1", engine)
            scores[engine] = np.array(
                [
                    metrics.f1(truth, protocol.run(data, rng, engine=engine).identified)
                    for _ in range(settings.heavy_hitter_runs)
                ]
            )
        first, second = scores["reports"], scores["sampled"]
        if first.std() == 0 and second.std() == 0:
            assert first[0] == second[0], f"constant F1 {first[0]} vs {second[0]}"
            return f"F1 = {first[0]:.3f} in every run of both engines"
        p_value = float(stats.ttest_ind(first, second, equal_var=False).pvalue)
        assert p_value >= 1e-3, (
            f"F1 differs: reports {first.mean():.3f} ± {first.std():.3f}, sampled "
            f"{second.mean():.3f} ± {second.std():.3f} (Welch p = {p_value:.2g})"
        )
        return f"mean F1 reports {first.mean():.3f}, sampled {second.mean():.3f}, p = {p_value:.2g}"

    def adversary() -> str:
        """With ``report_groups()``: the group weights sum to 1, every report's key maps the
        values into its oracle's domain, and the adversary's success on the Zipf data
        (:func:`ldp.adversary.heavy_hitter_success`) lies between the blind guess π_max and
        the ε-LDP bound (a user's group is independent of the value, its report ε-LDP)."""
        from ldp import adversary as bayes
        from ldp import bits

        if not isinstance(protocol, HasReportGroups):
            raise CheckSkipped("declares no report_groups()")
        groups = bayes.report_groups_of(protocol, data.n, _rng(settings, "hh-groups"))
        total = sum(group.weight for group in groups)
        assert abs(total - 1) <= 1e-12, f"group weights sum to {total}, not 1"
        values, counts = data.histogram()
        words = bits.to_words(values, protocol.m)
        for group in groups:
            for report in group.reports:
                keys = np.asarray(report.key(words))
                assert keys.shape[0] == words.shape[0], "a key per value"
                if keys.ndim == 1:
                    assert int(keys.max()) < report.oracle.domain_size, "key outside the domain"
        try:
            found = bayes.heavy_hitter_success(protocol, values, counts, _rng(settings, "hh"))
        except bayes.NoAdversary as reason:
            return f"{len(groups)} groups; no adversary: {reason}"
        prior = counts / counts.sum()
        slack = Z * found.standard_error + 1e-12
        bound, blind = bayes.ldp_bound(protocol.epsilon, prior), bayes.baseline(prior)
        assert blind - slack <= found.value <= bound + slack, (
            f"success {found.value:.6f} outside [π_max = {blind:.6f}, ε-LDP bound {bound:.6f}]"
        )
        return f"{len(groups)} groups; success {found.value:.4f} ({found.method})"

    for check in (
        constructor_validation,
        keyword_only,
        representation,
        pickling,
        results,
        client_reports,
        engines_agree_f1,
        adversary,
    ):
        yield Check(check.__name__, check)


def check_heavy_hitter(
    cls: type,
    settings: Settings | None = None,
    *,
    expected_failed: Mapping[str, str] | None = None,
    **params: Any,
) -> list[CheckResult]:
    """Run every check of :func:`heavy_hitter_checks`; ``AssertionError`` on the first
    failure (``expected_failed`` as in :func:`check_oracle`)."""
    return _run_all(heavy_hitter_checks(cls, settings, **params), expected_failed)


__all__ = [
    "ALPHA",
    "Check",
    "CheckResult",
    "CheckSkipped",
    "ContractWarning",
    "Settings",
    "check_heavy_hitter",
    "check_mean",
    "check_oracle",
    "check_set",
    "heavy_hitter_checks",
    "hook_warnings",
    "mean_checks",
    "mean_population",
    "oracle_checks",
    "oracle_population",
    "set_checks",
    "set_population",
    "zipf_dataset",
]


# ------------------------------------------------------------------------- set protocols
#: The largest set in :func:`set_population`, and the padding of the audited inputs.
SET_WIDTH = 4


def set_population(n: int, domain_size: int) -> np.ndarray:
    """The users' sets of a set-protocol check (rows padded with -1, :mod:`ldp.sets`):
    item 0 in ~60% of the sets, item 1 in none, the others spread; sizes 0 to
    :data:`SET_WIDTH` (some above a padding length of 2, some empty).  Fixed (seed 0)."""
    rng = np.random.default_rng(0)
    rows = np.full((n, SET_WIDTH), -1, dtype=np.int64)
    others = np.arange(2, domain_size)
    for user, size in enumerate(rng.integers(0, SET_WIDTH + 1, n)):
        items = rng.choice(others, min(size, others.size), replace=False)
        if rng.random() < 0.6 and size > 0:
            items[0] = 0
        rows[user, : items.size] = np.sort(items)
    return rows


def set_checks(cls: type, settings: Settings | None = None, **params: Any) -> Iterator[Check]:
    """The checks of a set protocol (kind ``"set"``, :mod:`ldp.sets`) built as ``cls(**params)``.

    ``params`` must include ``epsilon`` and ``domain_size``.  Every protocol: parameters,
    ``top_items`` with each declared engine, and the two engines' estimates of the most
    held item compared (two-sample z on mean and variance).  A protocol with reports
    (``perturb``, ``estimate``) and a declared target and closed form (``expected_counts``,
    ``variances``) is tested for unbiasedness and its variance with both engines, and
    audited (:func:`ldp.audit.lower_bound`) between {0} and {1} and between the empty
    set and a full one of SET_WIDTH items: neither bound may exceed ε.
    """
    settings = settings or Settings()
    capabilities = capabilities_of(cls)
    protocol = cls(**params)
    rows = set_population(settings.n_users, protocol.domain_size)
    per_item = isinstance(protocol, SetOracleLike)

    def constructor_validation() -> str:
        note = _check_epsilon_refused(lambda **bad: cls(**(params | bad)))
        rng = _rng(settings, "validation")
        d = protocol.domain_size
        for bad in ([[1, 1, -1]], [[0, d, -1]], [[0, -2, -1]]):
            call = lambda bad=bad: protocol.top_items(np.array(bad), 1, rng)  # noqa: E731
            if not _refused(ValueError, call):
                raise AssertionError(f"the sets {bad} were accepted")
        return note + "; a repeated item, an item outside [0, d), a bad pad -> ValueError"

    def keyword_only() -> str:
        return _check_keyword_only(cls, params)

    def representation() -> str:
        return _check_repr(protocol, params)

    def pickling() -> str:
        return _check_pickle(protocol)

    def top_items() -> str:
        """k distinct items of [0, d), estimates finite and non-increasing, with every
        declared engine; the same seed: the same answer."""
        k = min(3, protocol.domain_size)
        for engine in capabilities.engines:
            runs = [
                protocol.top_items(rows, k, np.random.default_rng(7), engine=engine)
                for _ in range(2)
            ]
            found = runs[0].items
            assert found.shape == (k,) and np.unique(found).size == k, f"{engine}: {found}"
            assert found.min() >= 0 and found.max() < protocol.domain_size, f"{engine}: {found}"
            assert np.all(np.isfinite(runs[0].estimates)), f"{engine}: estimates not finite"
            assert np.all(np.diff(runs[0].estimates) <= 0), f"{engine}: not ranked"
            assert np.array_equal(found, runs[1].items), f"{engine}: not deterministic"
        return f"top {k} with {', '.join(capabilities.engines)}"

    def draws(engine: str) -> np.ndarray:
        rng = _rng(settings, "set " + engine)
        if engine == "sampled":
            return np.array([protocol.simulate(rows, rng) for _ in range(settings.repetitions)])
        return np.array(
            [protocol.estimate(protocol.perturb(rows, rng)) for _ in range(settings.repetitions)]
        )

    def unbiased_variance() -> str:
        """Per declared engine, ``repetitions`` runs: the pooled scale test of E[ĉ] =
        ``expected_counts`` (:func:`_scale_t`), a z per item at ALPHA/d, and the pooled
        variance test against ``variances`` (:func:`_variance_z`), each at level ALPHA."""
        if not per_item:
            raise CheckSkipped("no per-item estimate with a declared target and closed form")
        expected, variance = protocol.expected_counts(rows), protocol.variances(rows)
        limit = float(stats.norm.isf(ALPHA / (2 * expected.shape[0])))
        notes = []
        for engine in capabilities.engines:
            sample = draws(engine)
            z = (sample.mean(axis=0) - expected) / np.sqrt(variance / sample.shape[0])
            assert np.abs(z).max() <= limit, (
                f"{engine}: E[estimate] off: max |z| {np.abs(z).max():.2f}"
            )
            t, _, detects = _scale_t(sample, expected)
            assert abs(t) <= Z + 1, f"{engine}: scale error t = {t:.2f}"
            vz = _variance_z(sample, expected, variance)
            assert abs(vz) <= Z, f"{engine}: variance off the closed form: z = {vz:.2f}"
            notes.append(
                f"{engine}: max |z| {np.abs(z).max():.2f}, variance z {vz:+.2f}, detects a "
                f"{detects:.1%} scale error"
            )
        return "; ".join(notes)

    def engines_agree() -> str:
        """The estimate of item 0 (the most held) in ``top_items`` over heavy_hitter_runs × 4
        runs per engine: two-sample z on its mean and variance, level ALPHA each."""
        if len(capabilities.engines) < 2:
            raise CheckSkipped("declares one engine")
        runs = 4 * settings.heavy_hitter_runs
        samples = []
        for engine in capabilities.engines:
            rng = _rng(settings, "set agree " + engine)
            values = []
            for _ in range(runs):
                result = protocol.top_items(rows, 2, rng, engine=engine)
                hit = np.flatnonzero(result.items == 0)
                values.append(result.estimates[hit[0]] if hit.size else np.nan)
            samples.append(np.array(values))
        assert not any(np.isnan(s).any() for s in samples), "item 0 was not found every run"
        notes = []
        for statistic in ("mean", "variance"):
            z = _two_sample_z(samples[0], samples[1], statistic)
            assert abs(z) <= Z, f"engines differ in the {statistic}: z = {z:.2f}"
            notes.append(f"{statistic} z = {z:+.2f}")
        return ", ".join(notes)

    def privacy_audit() -> str:
        """``ldp.audit.lower_bound`` (``audit_trials`` reports per input, level ALPHA) between
        {0} and {1}, and between the empty set and {0, ..., SET_WIDTH-1}: each <= ε."""
        if not per_item:
            raise CheckSkipped("sends no single report per user (ldp.contract.SetOracleLike)")
        from ldp import audit

        blank = np.full(SET_WIDTH, -1)
        full = np.arange(SET_WIDTH)
        pairs = {
            "{0} vs {1}": (np.r_[0, blank[1:]], np.r_[1, blank[1:]]),
            "empty vs full": (blank, full),
        }
        notes = []
        for name, (v, v_prime) in pairs.items():
            result = audit.lower_bound(
                protocol,
                v,
                v_prime,
                rng=_rng(settings, "set audit " + name),
                trials=settings.audit_trials,
                alpha=ALPHA,
            )
            assert result.epsilon <= protocol.epsilon * (1 + 1e-12), f"{name}: {result}"
            notes.append(f"{name}: {result.epsilon:.3f}")
        return f"lower bounds {'; '.join(notes)} <= epsilon {protocol.epsilon:g}"

    for check in (
        constructor_validation,
        keyword_only,
        representation,
        pickling,
        top_items,
        unbiased_variance,
        engines_agree,
        privacy_audit,
    ):
        yield Check(check.__name__, check)


def check_set(
    cls: type,
    settings: Settings | None = None,
    *,
    expected_failed: Mapping[str, str] | None = None,
    **params: Any,
) -> list[CheckResult]:
    """Run every check of :func:`set_checks`; ``AssertionError`` on the first failure
    (``expected_failed`` as in :func:`check_oracle`)."""
    return _run_all(set_checks(cls, settings, **params), expected_failed)
