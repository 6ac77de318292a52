"""What one trial does, per kind of protocol: the tiny registry :data:`TRIAL_KINDS`.

A trial function takes the checked config of a setting (a plain dict) and the trial's
:class:`~experiments.seeding.TrialStreams`, and returns a :class:`TrialResult`: a list of
:class:`Measurement` (metric, value, analytical value if any, item) plus what the rows
must say about the data.  It knows nothing of files or workers.

* ``oracle`` (USENIX'17): a frequency oracle estimates the counts of tracked values of a
  population over {0..d-1}; recorded per trial: ``sq_error_n`` = mean over tracked values
  of (ĉ(v) - c(v))^2 / n (its expectation is Var[ĉ(v)]/n, Table 1's unit) beside the exact
  analytical mean of Var[ĉ(v)]/n, and ``error_n`` = mean (ĉ(v) - c(v))/n (expected 0);
  with ``options.per_value`` also one ``sq_error_n`` row per tracked value and, where the
  truth is not 0 (``track`` = top or all), its estimate ``estimate_n`` = ĉ(v)/n beside the
  true frequency c(v)/n as ``analytic`` (absent values: the estimate is the error).
* ``multiple_questions`` ([FO] "On answering multiple questions"): every user answers two
  questions with one oracle; *split*: each answer at ε/2 from all n users, *partition*:
  a random half of the users answers each question at full ε.  Recorded per approach:
  ``sq_error_f.split`` / ``sq_error_f.partition`` = mean over both questions' tracked
  values of (ĉ(v)/n' - c(v)/n)^2, n' the users who answered (expectation Var[c(v)/n]),
  beside its exact expectation.
* ``heavy_hitter`` ([PEM] Sec. IV-B1, VI-B6): a protocol of :mod:`ldp.heavy_hitters`
  identifies the top k; recorded: ``f1``, ``ncr``, ``sq_error`` (mean squared count error
  of the identified true heavy hitters), ``n_identified``, numeric diagnostics as
  ``diag.<name>``, and with ``options.per_value`` the identification (0/1) and frequency
  of each true heavy hitter (``item`` = its true rank, 1 = most frequent).
* ``rappor_decode`` ([RAPPOR] Sec. 4): RAPPOR's decoder with every value of the domain as
  a candidate (:meth:`ldp.oracles.rappor.RAPPOR.decode`: LASSO, least squares, standard
  errors, Bonferroni cut-off at α = 0.05); recorded: ``n_detected``, ``n_false_detected``
  (detected values nobody holds), ``n_selected`` (kept by the LASSO) and ``within_2se``
  (share of the detected values whose truth lies within 2 standard errors, beside the
  normal 0.9545); with ``options.per_value`` per tracked value ``estimate_n`` (ĉ(v)/n
  beside c(v)/n), ``std_error_n`` (SE/n, NaN if not selected) and ``detected`` (0/1).
* ``oracle_frontier``: every registered oracle (plug-ins included) at one (d, ε), for the
  Pareto frontier figure: per oracle ``sq_error_n.<NAME>`` (measured Var/n beside the
  exact), ``bits.<NAME>``, ``decode_s.<NAME>`` (with ``options.time_server``) and
  ``skipped.<NAME>`` (reason flags, :data:`FRONTIER_SKIPS`).

To add a kind: write ``def my_trial(config, streams) -> TrialResult`` and add it to
:data:`TRIAL_KINDS` (and to :data:`experiments.schema.TRIAL_KINDS`).
"""

from __future__ import annotations

import functools
import json
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from experiments.build import build_protocol, cached_heavy_hitter, protocol_arguments
from experiments.population import load_dataset, population_counts, tracked_values
from experiments.results import FRONTIER_VALUES, SHUFFLE_DELTA
from experiments.seeding import TrialStreams, trial_streams
from ldp import postprocess, registry
from ldp.contract import capabilities_of

NAN = float("nan")


@dataclass(frozen=True)
class Measurement:
    """One number a trial recorded: a row of the results table."""

    metric: str
    value: float
    analytic: float = NAN  #: the closed-form expectation, where one exists
    item: int | None = None  #: which value (a rank, 1 = most frequent) for per-value rows


@dataclass
class TrialResult:
    """What one trial produced."""

    measurements: list[Measurement]
    data_source: str  #: "synthetic", "surrogate", "real:<path>" or "point"
    n: int  #: users in the trial
    wall_time: float = NAN  #: seconds, filled in by :func:`run_trial`
    notes: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------- kinds
def oracle_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """One run of a frequency oracle (USENIX'17) on the tracked values of a population."""
    options = config["options"]
    counts, source = population_counts(config["dataset"], options["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    oracle = build_protocol(config["protocol"], config["epsilon"], domain_size=d)
    tracked = tracked_values(counts, options["track"], config["k"])
    post = options.get("postprocess")  # needs the full domain's estimates
    chosen = None if post else tracked
    if config["engine"] == "sampled":
        estimates = oracle.simulate(counts, streams.mechanism, candidates=chosen)
    else:
        values = np.repeat(np.arange(d, dtype=np.int64), counts)
        reports = oracle.perturb(values, streams.mechanism)
        start = time.perf_counter()
        estimates = oracle.estimate(reports, candidates=chosen)
        server_seconds = time.perf_counter() - start
    if post:
        estimates = postprocess.apply(post, estimates, n, oracle.variance(n))[tracked]
    truth = counts[tracked].astype(float)
    errors = np.asarray(estimates, dtype=float) - truth
    variances = _variances(oracle, n, truth) / n
    rows = [
        Measurement("sq_error_n", float(np.mean(errors**2)) / n, float(np.mean(variances))),
        Measurement("error_n", float(np.mean(errors)) / n, 0.0),
        Measurement("shuffle_epsilon", _shuffle_epsilon(oracle, n), oracle.epsilon),
    ]
    rows += adversary_rows(oracle, counts)
    if options["track"] == "all" and config["k"] < d:  # the k most frequent values alone
        top = slice(0, config["k"])
        rows.append(Measurement("sq_error_top_n", float(np.mean(errors[top] ** 2)) / n, NAN))
    if options.get("time_server") and config["engine"] == "reports":
        rows.append(Measurement("server_seconds", server_seconds, NAN))
    if options["per_value"]:
        for value, error, variance in zip(tracked, errors, variances, strict=True):
            rows.append(
                Measurement("sq_error_n", float(error**2) / n, float(variance), int(value) + 1)
            )
        if options["track"] != "absent":
            for value, error, count in zip(tracked, errors, truth, strict=True):
                rows.append(
                    Measurement("estimate_n", (count + error) / n, count / n, int(value) + 1)
                )
    return TrialResult(rows, source, n)


@functools.lru_cache(maxsize=256)
def _shuffle_epsilon(oracle, n: int) -> float:
    """The central ε (δ = 10^-6) of the trial's n reports after a shuffle, at most ε0
    (:func:`ldp.theory.shuffle.shuffle_epsilon`, "best"): for an oracle that declares
    ``randomized_response`` the best bound valid for it ([BBGN19]'s randomized-response
    blankets included), else the best generic one."""
    from ldp.theory.shuffle import shuffle_epsilon

    d = oracle.domain_size if capabilities_of(oracle).randomized_response else None
    return shuffle_epsilon(oracle.epsilon, n, SHUFFLE_DELTA, "best", domain_size=d)


def _variances(oracle, n: int, truth: np.ndarray) -> np.ndarray:
    """``oracle.variance(n, c)`` for each true count c, computed once per distinct count
    (a 41,270-value domain holds a few hundred distinct counts)."""
    distinct, index = np.unique(truth, return_inverse=True)
    return np.array([oracle.variance(n, c) for c in distinct])[np.reshape(index, -1)]


def _half_counts(counts: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """The counts of ``size`` users drawn without replacement from ``counts``."""
    return rng.multivariate_hypergeometric(counts, size)


def multiple_questions_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """Two questions per user: split ε between them, or partition the users ([FO]).

    Both questions have the data set's distribution (question 2 pairs the users with an
    independent shuffle of question 1's answers).  *split*: every user reports both
    answers at ε/2; *partition*: a random half (⌊n/2⌋ users) reports question 1 at ε, the
    rest question 2.  The estimate of a frequency is ĉ(v)/n' with n' the users who answered
    that question, compared with the population frequency c(v)/n.  Under the sampled
    engine a half's counts are one multivariate hypergeometric draw per question (the two
    are independent, because question 2's answers are shuffled independently).
    """
    options = config["options"]
    counts, source = population_counts(config["dataset"], options["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]

    def make(epsilon: float):
        return build_protocol(config["protocol"], epsilon, domain_size=d)

    split, full = make(config["epsilon"] / 2), make(config["epsilon"])
    tracked = tracked_values(counts, options["track"], config["k"])
    truth = counts[tracked].astype(float)
    frequency = truth / n
    halves = (n // 2, n - n // 2)
    rng = streams.mechanism
    if config["engine"] == "sampled":
        split_estimates = [split.simulate(counts, rng, candidates=tracked) / n for _ in range(2)]
        part_estimates = [
            full.simulate(_half_counts(counts, size, rng), rng, candidates=tracked) / size
            for size in halves
        ]
    else:
        first = np.repeat(np.arange(d, dtype=np.int64), counts)
        streams.data.shuffle(first)
        answers = (first, first[streams.data.permutation(n)])
        split_estimates = [
            split.estimate(split.perturb(values, rng), candidates=tracked) / n for values in answers
        ]
        order = rng.permutation(n)
        groups = (order[: halves[0]], order[halves[0] :])
        part_estimates = [
            full.estimate(full.perturb(values[group], rng), candidates=tracked) / group.size
            for values, group in zip(answers, groups, strict=True)
        ]
    split_expected = _variances(split, n, truth) / n**2
    # A half of size h holds a hypergeometric count H of each value (mean h f, variance
    # h f (1-f) (n-h)/(n-1)); ĉ/h - f then has variance E[Var(ĉ | H)]/h^2 + Var(H/h).
    part_expected = np.mean(
        [
            _variances(full, size, size * frequency) / size**2
            + frequency * (1 - frequency) * (n - size) / (size * max(n - 1, 1))
            for size in halves
        ],
        axis=0,
    )
    split_sq = np.mean([(e - frequency) ** 2 for e in split_estimates])
    part_sq = np.mean([(e - frequency) ** 2 for e in part_estimates])
    rows = [
        Measurement("sq_error_f.split", float(split_sq), float(np.mean(split_expected))),
        Measurement("sq_error_f.partition", float(part_sq), float(np.mean(part_expected))),
    ]
    rows += adversary_rows(split, counts, ".split") + adversary_rows(full, counts, ".partition")
    return TrialResult(rows, source, n)


def heavy_hitter_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """One run of a heavy-hitter protocol ([PEM]) on a data set."""
    from ldp import metrics

    data = load_dataset(config["dataset"])
    built = {key: config[key] for key in ("protocol", "epsilon", "k")}
    protocol = cached_heavy_hitter(json.dumps(built, sort_keys=True), data.m, data.n)
    result = protocol.run(data, streams.mechanism, engine=config["engine"])
    threshold = config["protocol"].get("threshold")
    if threshold is not None:  # threshold version: the truth is every value above θ n
        values, counts = data.histogram()
        keep = counts >= threshold * data.n
        true_top, true_counts = values[keep], counts[keep]
    else:
        true_top, true_counts = data.top_k(config["k"], with_counts=True)
    identified, estimates = np.asarray(result.identified), np.asarray(result.estimates)
    rows = [
        Measurement("f1", metrics.f1(true_top, identified)),
        Measurement("ncr", metrics.ncr(true_top, identified)),
        Measurement(
            "sq_error", metrics.squared_error(true_top, true_counts, identified, estimates)
        ),
        Measurement("n_identified", float(len(identified))),
        Measurement("n_true", float(len(true_top))),
    ]
    for name, value in sorted((result.diagnostics or {}).items()):
        if isinstance(value, int | float | np.integer | np.floating) and not isinstance(
            value, bool
        ):
            rows.append(Measurement(f"diag.{name}", float(value)))
    if config["options"]["per_value"]:
        found = metrics.identified_mask(true_top, identified)
        for rank, (hit, count) in enumerate(zip(found, true_counts, strict=True), start=1):
            rows.append(Measurement("identified", float(hit), item=rank))
            rows.append(Measurement("frequency", float(count) / data.n, item=rank))
    rows += heavy_hitter_adversary_rows(protocol, data)
    return TrialResult(rows, data.source, data.n)


def heavy_hitter_adversary_rows(protocol, data) -> list[Measurement]:
    """``adversary_success``: the Bayesian adversary's rate of guessing a user's whole value
    from what the user sends (its group's one report; :func:`ldp.adversary.heavy_hitter_success`,
    the data set's distribution as prior), beside itself where exact (else NaN and a row
    ``adversary_success_se``), and ``adversary_baseline`` = π_max; no rows for a protocol
    without ``report_groups()`` or whose groups send several reports.  Once per
    (protocol, data set) and worker; an empirical estimate is seeded by both."""
    from ldp import adversary

    if not callable(getattr(protocol, "report_groups", None)):
        return []
    values, counts = data.histogram()
    prior = zlib.crc32(np.ascontiguousarray(values).tobytes() + counts.tobytes())
    key = (repr(protocol), prior)
    if key not in _HH_ADVERSARY:
        if len(_HH_ADVERSARY) >= 256:
            _HH_ADVERSARY.clear()
        seed = zlib.crc32(key[0].encode(), prior)
        rows = []
        try:
            found = adversary.heavy_hitter_success(
                protocol, values, counts, rng=np.random.default_rng(seed)
            )
        except adversary.NoAdversary:  # e.g. groups that send several reports
            found = None
        if found is not None:
            exact = found.value if found.method == "exact" else NAN
            rows.append(Measurement("adversary_success", found.value, exact))
            if found.method != "exact":
                rows.append(Measurement("adversary_success_se", found.standard_error))
            rows.append(Measurement("adversary_baseline", float(counts.max() / data.n)))
        _HH_ADVERSARY[key] = rows
    return list(_HH_ADVERSARY[key])


#: (repr of the protocol, CRC of the values and counts) -> a setting's adversary rows.
_HH_ADVERSARY: dict[tuple, list[Measurement]] = {}


def rappor_decode_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """RAPPOR's decoder ([RAPPOR] Sec. 4) on a population, every domain value a candidate."""
    from scipy import stats

    options = config["options"]
    counts, source = population_counts(config["dataset"], options["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    oracle = build_protocol(config["protocol"], config["epsilon"], domain_size=d)
    if not hasattr(oracle, "decode"):
        raise ValueError(f"protocol.kind: rappor_decode needs RAPPOR's decoder, not {oracle.name}")
    if config["engine"] == "sampled":
        collected = oracle.simulate_counts(counts, streams.mechanism)
    else:
        values = np.repeat(np.arange(d, dtype=np.int64), counts)
        collected = oracle.cohort_counts(oracle.perturb(values, streams.mechanism))
    result = oracle.decode(collected, np.arange(d))
    detected = np.flatnonzero(result.detected)
    z = (result.estimates[detected] - counts[detected]) / result.std_errors[detected]
    rows = [
        Measurement("n_detected", float(detected.size)),
        Measurement("n_false_detected", float(np.sum(counts[detected] == 0))),
        Measurement("n_selected", float(np.sum(result.selected))),
        Measurement(
            "within_2se",
            float(np.mean(np.abs(z) <= 2)) if z.size else NAN,
            float(1 - 2 * stats.norm.sf(2)),
        ),
        *adversary_rows(oracle, counts),
    ]
    if options["per_value"]:
        for value in tracked_values(counts, options["track"], config["k"]):
            item = int(value) + 1
            rows += [
                Measurement("estimate_n", result.estimates[value] / n, counts[value] / n, item),
                Measurement("std_error_n", result.std_errors[value] / n, item=item),
                Measurement("detected", float(result.detected[value]), item=item),
            ]
    return TrialResult(rows, source, n)


def longitudinal_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """τ collections from the same users by a memoized protocol ([ACBX22] Sec. 3, [RAPPOR]).

    Users hold the population's values at round 1; with ``options.change_prob`` = ρ > 0
    each user redraws their value from the population's distribution with probability ρ at
    each later round (the data stream), else keeps it.  The protocol's ``perturb_rounds``
    memoizes its permanent step per (user, value), so only the reports engine is the real
    thing (the sampled engine would draw the rounds independently).  Per round t (``item``
    = t): ``sq_error_f`` = mean over the d values of (f̂_t(v) - f_t(v))², f_t that round's
    true frequencies, beside its exact expectation (mean of ``variance(n, c_t)``/n²);
    ``epsilon_spent`` = the exact privacy loss of t reports of one unchanged value
    (``rounds_epsilon(t)``), beside the claimed bound (ε₁ for one report, else ε_∞);
    ``adversary_success`` = the Bayesian adversary's rate of guessing an unchanged value
    from its first t reports, the population as prior (:func:`ldp.adversary.rounds_success`;
    exact beside itself, or empirical with ``adversary_success_se``; computed once per
    setting), and ``adversary_bound`` = the most an adversary can reach against the exact
    loss of t reports (:func:`ldp.adversary.ldp_bound`), beside that of the claimed bound;
    once per trial ``adversary_baseline`` = π_max (the blind guess).  With ρ > 0 also
    ``epsilon_spent_changing`` = the mean over users of the
    claimed ``memoized_epsilon(t, distinct values held so far)``, beside its largest value.
    Without ``item``: ``sq_error_f`` averaged over the τ rounds.
    """
    from ldp.adversary import ldp_bound

    if config["engine"] != "reports":
        raise ValueError("engine: longitudinal trials need engine=reports (the memo ties rounds)")
    options = config["options"]
    counts, source = population_counts(config["dataset"], options["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    oracle = build_protocol(config["protocol"], config["epsilon"], domain_size=d)
    if not callable(getattr(oracle, "perturb_rounds", None)):
        raise ValueError(f"protocol.kind: longitudinal needs a memoized oracle, not {oracle.name}")
    tau = options.get("rounds") or 1
    values = np.repeat(np.arange(d, dtype=np.int64), counts)
    held = _changing_values(values, counts / n, tau, options.get("change_prob") or 0.0, streams)
    rounds = oracle.perturb_rounds(held, streams.mechanism)
    adversary = _rounds_adversary(oracle, counts, tau)

    rows, errors = [], []
    seen = np.zeros((n, d), dtype=bool)
    distinct = np.zeros(n, dtype=np.int64)
    for t, reports in enumerate(rounds, start=1):
        truth = np.bincount(held[:, t - 1], minlength=d)
        expected = float(np.mean(_variances(oracle, n, truth.astype(float)))) / n**2
        error = float(np.mean((oracle.estimate(reports) / n - truth / n) ** 2))
        errors.append((error, expected))
        rows.append(Measurement("sq_error_f", error, expected, t))
        spent = oracle.rounds_epsilon(t)
        rows.append(Measurement("epsilon_spent", spent, oracle.memoized_epsilon(t), t))
        if adversary:
            value, exact, standard_error = adversary[t - 1]
            rows.append(Measurement("adversary_success", value, exact, t))
            if np.isnan(exact):
                rows.append(Measurement("adversary_success_se", standard_error, item=t))
            bound = ldp_bound(spent, counts / n), ldp_bound(oracle.memoized_epsilon(t), counts / n)
            rows.append(Measurement("adversary_bound", *bound, t))
        if options.get("change_prob"):
            user = np.arange(n)
            distinct += ~seen[user, held[:, t - 1]]
            seen[user, held[:, t - 1]] = True
            levels, index = np.unique(distinct, return_inverse=True)
            claimed = np.array([oracle.memoized_epsilon(t, int(k)) for k in levels])[index]
            rows.append(
                Measurement(
                    "epsilon_spent_changing", float(claimed.mean()), float(claimed.max()), t
                )
            )
    average = np.mean(errors, axis=0)
    rows.append(Measurement("sq_error_f", float(average[0]), float(average[1])))
    if adversary:
        rows.append(Measurement("adversary_baseline", float(counts.max() / n)))
    return TrialResult(rows, source, n)


def _changing_values(
    values: np.ndarray, prior: np.ndarray, tau: int, rho: float, streams: TrialStreams
) -> np.ndarray:
    """(n, τ): round 1 the users' values; at each later round each user redraws from
    ``prior`` with probability ``rho`` (from the data stream), else keeps the value."""
    held = np.repeat(values[:, None], tau, axis=1)
    if rho == 0.0:
        return held
    rng = streams.data
    for t in range(1, tau):
        change = rng.random(values.shape[0]) < rho
        fresh = rng.choice(prior.shape[0], size=int(change.sum()), p=prior)
        held[:, t] = held[:, t - 1]
        held[change, t] = fresh
    return held


#: (protocol, CRC of the counts, τ) -> per round (value, exact or NaN, se), per worker.
_ROUNDS_ADVERSARY: dict[tuple, list[tuple[float, float, float]]] = {}


def _rounds_adversary(oracle, counts: np.ndarray, tau: int) -> list[tuple[float, float, float]]:
    """:func:`ldp.adversary.rounds_success` once per (protocol, prior, τ): [] if the
    protocol has no sequence likelihood; an empirical estimate is seeded by the prior and
    the protocol, so every trial of a setting records the same rate."""
    from ldp import adversary

    counts = np.asarray(counts, dtype=np.int64)
    key = (oracle, zlib.crc32(counts.tobytes()), tau)
    if key not in _ROUNDS_ADVERSARY:
        if len(_ROUNDS_ADVERSARY) >= 256:
            _ROUNDS_ADVERSARY.clear()
        seed = zlib.crc32(counts.tobytes() + repr(oracle).encode())
        try:
            found = adversary.rounds_success(
                oracle, counts, tau, rng=np.random.default_rng(seed), n_samples=ROUNDS_SAMPLES
            )
        except adversary.NoAdversary:
            found = []
        _ROUNDS_ADVERSARY[key] = [
            (f.value, f.value if f.method == "exact" else NAN, f.standard_error) for f in found
        ]
    return _ROUNDS_ADVERSARY[key]


#: Users drawn for an empirical adversary over rounds (standard error <= 0.011).
ROUNDS_SAMPLES = 2000


def mean_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """One run of a mean protocol (:mod:`ldp.numeric`) on the ``bounded`` data set.

    Recorded: ``sq_error_n`` = n (estimate - mean)² beside n ``variance(values)`` = Σ
    Var[t*|t_i]/n ([W19] Sec. III), ``error`` = estimate - mean (expected 0) and, with the
    reports engine, ``report_variance`` = mean over users of (t*_i/κ - t_i)², whose
    expectation is the same mean of Var[t*|t_i] (measured on n reports, not one mean).
    """
    from ldp.datasets.synthetic import bounded_values

    dataset = config["dataset"]
    values = bounded_values(int(dataset["n"]), dataset["law"])
    n = values.shape[0]
    cls = registry.get(config["protocol"]["name"], "mean").cls
    protocol = cls(epsilon=config["epsilon"], **protocol_arguments(config["protocol"]))
    average = float(protocol.conditional_variance(values).mean())
    rows = []
    if config["engine"] == "sampled":
        if "sampled" not in capabilities_of(protocol).engines:
            raise ValueError(f"engine: {cls.__name__} has no sampled engine; use reports")
        estimate = protocol.simulate(values, streams.mechanism)
    else:
        reports = protocol.perturb(values, streams.mechanism)
        estimate = protocol.estimate(reports)
        spread = float(np.mean((reports / protocol.kappa - values) ** 2))
        rows.append(Measurement("report_variance", spread, average))
    error = estimate - float(values.mean())
    rows += [Measurement("sq_error_n", n * error**2, average), Measurement("error", error, 0.0)]
    return TrialResult(rows, "synthetic", n)


def adversary_rows(oracle, counts: np.ndarray, suffix: str = "") -> list[Measurement]:
    """``adversary_success``: the Bayesian adversary's rate of guessing a user's value from
    one report, the population's distribution as prior (:mod:`ldp.adversary`); beside the
    exact value as ``analytic`` where there is one.  An empirical estimate has NaN there
    and a second row ``adversary_success_se`` (its standard error); a protocol with neither
    gets no row."""
    counts = np.asarray(counts, dtype=np.int64)
    key = (oracle, zlib.crc32(counts.tobytes()), counts.shape[0])
    if key not in _ADVERSARY:
        if len(_ADVERSARY) >= 1024:
            _ADVERSARY.clear()
        _ADVERSARY[key] = _adversary_success(oracle, counts)
    value, exact, error = _ADVERSARY[key]
    if np.isnan(value):
        return []
    rows = [Measurement(f"adversary_success{suffix}", value, exact)]
    if np.isnan(exact):
        rows.append(Measurement(f"adversary_success_se{suffix}", error))
    return rows


#: (protocol, CRC of the counts, d) -> (value, exact or NaN, standard error), per worker.
_ADVERSARY: dict[tuple, tuple[float, float, float]] = {}


def _adversary_success(oracle, counts: np.ndarray) -> tuple[float, float, float]:
    """(value, exact or NaN, standard error), once per (protocol, ε, d, prior); an empirical
    estimate is seeded by the prior and the protocol: every trial of a setting records it."""
    from ldp import adversary

    seed = zlib.crc32(counts.tobytes() + repr(oracle).encode())
    try:
        found = adversary.adversary_success(oracle, counts, rng=np.random.default_rng(seed))
    except adversary.NoAdversary:  # no exact form and no per-report likelihood
        return NAN, NAN, NAN
    exact = found.value if found.method == "exact" else NAN
    return found.value, exact, found.standard_error


# ------------------------------------------------------------------------- frontier
#: The budget of one oracle at one frontier setting (:mod:`ldp.budget`): what fits in a
#: trial of a few seconds; an oracle over it is skipped with its reason, never forced.
FRONTIER_BUDGET = {"memory_bytes": "512 MiB", "operations": 2**31}


def report_bits(oracle: Any) -> float:
    """Bits of one report as sent: the oracle's ``report_bits()`` where it declares one; else
    from its declared report model (:mod:`ldp.contract`): ⌈log2 #outputs⌉ for a categorical
    report, one bit per coordinate of a bit vector, 64 per real of a product report; a
    hashed report adds 64 bits per public seed it carries (OLH's seed).  NaN if unknown."""
    import math

    own = getattr(oracle, "report_bits", None)
    if callable(own):
        return float(own())
    model = capabilities_of(oracle).report_model
    if model is None:  # no likelihood declared
        return _stored_bits(oracle)
    try:
        if model == "hashed":
            cells = np.shape(oracle.report_probabilities(0, np.zeros(1, dtype=np.uint64)))[-1]
            public = len(capabilities_of(oracle).public_randomness)
            return 64.0 * public + math.ceil(math.log2(cells))
        shape = np.shape(oracle.report_probabilities(0))
    except (TypeError, ValueError):  # no likelihood (or too large to list)
        return _stored_bits(oracle)
    if model == "categorical":
        return float(math.ceil(math.log2(shape[0])))
    if model == "bits":
        return float(shape[0])
    if model == "product":
        return 64.0 * shape[0]
    return _stored_bits(oracle)


def _stored_bits(oracle: Any) -> float:
    """Bits of one user's report as the reports engine stores it (its per-user arrays;
    public randomness drawn once per call, such as a hash family, is not counted)."""
    try:
        one, two = (
            oracle.perturb(np.zeros(k, dtype=np.int64), np.random.default_rng(0)) for k in (1, 2)
        )
    except (TypeError, ValueError):
        return NAN
    pairs = zip(one, two, strict=True) if isinstance(one, tuple) else [(one, two)]
    return float(
        sum(
            8 * np.asarray(a).nbytes
            for a, b in pairs
            if np.ndim(a) and np.shape(a)[0] == 1 and np.shape(b)[0] == 2
        )
    )


def oracle_frontier_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """Every registered oracle (plug-ins included) at one (d, ε), for the Pareto frontier.

    The config's protocol node only selects this trial kind; the oracles are read from
    :mod:`ldp.registry` at run time and built with their default parameters.  n users all
    hold value 0 (``dataset=point``); per oracle: ``sq_error_n.<NAME>``, the sampled
    engine's mean of ĉ(v)²/n over values nobody holds (the first :data:`FRONTIER_VALUES`
    of them, estimated together), beside the exact Var/n
    (``variances`` of the population, where a closed form is declared); ``bits.<NAME>``
    (:func:`report_bits`); with ``options.time_server``, ``decode_s.<NAME>``, the seconds of
    ``estimate`` of the n real reports over the whole domain.  An oracle (or one engine of
    it) over :data:`FRONTIER_BUDGET` or not built here gets ``skipped.<NAME>``: the sum of
    the flags of :data:`FRONTIER_SKIPS` that apply.
    """
    from ldp import budget

    counts, source = population_counts(config["dataset"], config["options"]["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    rng, rows = streams.mechanism, []
    absent = np.arange(1, min(d, FRONTIER_VALUES + 1), dtype=np.int64)
    for name, entry in registry.protocols("oracle").items():
        try:
            oracle = entry.cls(epsilon=config["epsilon"], domain_size=d)
        except (TypeError, ValueError):
            rows.append(Measurement(f"skipped.{name}", 1.0))
            continue
        skip = 0
        with budget.limits(**FRONTIER_BUDGET):
            exact = NAN  # a per-call pool's shared collisions are not in the closed form
            declared = capabilities_of(oracle)
            if declared.closed_form_variance and not declared.public_per_call:
                exact = float(oracle.variances(counts, np.array([1]))[0]) / n
            try:
                if "sampled" not in declared.engines:
                    raise ValueError("no sampled engine")
                estimates = np.asarray(oracle.simulate(counts, rng, candidates=absent), float)
                measured = float(np.mean(estimates**2)) / n
                rows.append(Measurement(f"sq_error_n.{name}", measured, exact))
            except ValueError:
                skip |= 4
                if np.isfinite(exact):
                    rows.append(Measurement(f"sq_error_n.{name}", NAN, exact))
            if config["options"].get("time_server"):
                try:
                    if "reports" not in declared.engines:
                        raise ValueError("no reports engine")
                    reports = oracle.perturb(np.zeros(n, dtype=np.int64), rng)
                    start = time.perf_counter()
                    oracle.estimate(reports)
                    rows.append(Measurement(f"decode_s.{name}", time.perf_counter() - start))
                except ValueError:
                    skip |= 2
        rows.append(Measurement(f"bits.{name}", report_bits(oracle)))
        if skip:
            rows.append(Measurement(f"skipped.{name}", float(skip)))
    return TrialResult(rows, source, n)


#: Trial function per ``protocol.kind``.
TRIAL_KINDS: dict[str, Callable[[dict[str, Any], TrialStreams], TrialResult]] = {
    "oracle": oracle_trial,
    "heavy_hitter": heavy_hitter_trial,
    "multiple_questions": multiple_questions_trial,
    "rappor_decode": rappor_decode_trial,
    "longitudinal": longitudinal_trial,
    "mean": mean_trial,
    "oracle_frontier": oracle_frontier_trial,
}


def run_trial(config: dict[str, Any], trial: int) -> TrialResult:
    """Run trial ``trial`` of a setting with its own seeded streams, timing it."""
    start = time.perf_counter()
    streams = trial_streams(config["seed"], trial, config["protocol"])
    result = TRIAL_KINDS[config["protocol"]["kind"]](config, streams)
    result.wall_time = time.perf_counter() - start
    return result
