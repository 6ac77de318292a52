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

To add a kind: write ``def my_trial(config, streams) -> TrialResult`` and add it to
:data:`TRIAL_KINDS` (and to :data:`experiments.schema.TRIAL_KINDS`).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from experiments.build import build_protocol, cached_heavy_hitter
from experiments.population import load_dataset, population_counts, tracked_values
from experiments.results import SHUFFLE_DELTA
from experiments.seeding import TrialStreams, trial_streams
from ldp import postprocess
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
    return TrialResult(rows, data.source, data.n)


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


#: Trial function per ``protocol.kind``.
TRIAL_KINDS: dict[str, Callable[[dict[str, Any], TrialStreams], TrialResult]] = {
    "oracle": oracle_trial,
    "heavy_hitter": heavy_hitter_trial,
    "multiple_questions": multiple_questions_trial,
    "rappor_decode": rappor_decode_trial,
}


def run_trial(config: dict[str, Any], trial: int) -> TrialResult:
    """Run trial ``trial`` of a setting with its own seeded streams, timing it."""
    start = time.perf_counter()
    streams = trial_streams(config["seed"], trial, config["protocol"])
    result = TRIAL_KINDS[config["protocol"]["kind"]](config, streams)
    result.wall_time = time.perf_counter() - start
    return result
