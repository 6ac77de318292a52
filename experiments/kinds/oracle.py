"""The ``oracle`` trial kind (USENIX'17), and what the other oracle kinds share with it.

A frequency oracle estimates the counts of tracked values of a population over {0..d-1};
recorded per trial: ``sq_error_n`` = mean over tracked values of (ĉ(v) - c(v))^2 / n (its
expectation is Var[ĉ(v)]/n, Table 1's unit) beside the exact analytical mean of
Var[ĉ(v)]/n, and ``error_n`` = mean (ĉ(v) - c(v))/n (expected 0); with
``options.per_value`` also one ``sq_error_n`` row per tracked value and, where the truth
is not 0 (``track`` = top or all), its estimate ``estimate_n`` = ĉ(v)/n beside the true
frequency c(v)/n as ``analytic`` (absent values: the estimate is the error).

:func:`adversary_rows` (the Bayesian adversary's success from one report) and
:func:`_variances` serve the other oracle kinds too.
"""

from __future__ import annotations

import functools
import time
import zlib
from typing import Any

import numpy as np

from experiments.build import build_protocol
from experiments.kinds import NAN, Measurement, TrialResult
from experiments.population import population_counts, tracked_values
from experiments.results import SHUFFLE_DELTA
from experiments.seeding import TrialStreams
from ldp import postprocess
from ldp.contract import capabilities_of


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
    return TrialResult(rows, source, n, protocol=oracle)


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
    # π_max, the blind guess the success is read against (docs/adversary.md)
    rows.append(Measurement(f"adversary_baseline{suffix}", float(counts.max() / counts.sum())))
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
