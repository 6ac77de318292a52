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

import dataclasses
import functools
import json
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from experiments.schema import ORACLE_KINDS, protocol_schema
from experiments.seeding import TrialStreams, trial_streams
from ldp import postprocess, registry
from ldp.contract import capabilities_of
from ldp.validation import ParameterError

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


# ------------------------------------------------------------------------------ data
def _drop_nulls(node: dict[str, Any], *skip: str) -> dict[str, Any]:
    return {k: v for k, v in node.items() if v is not None and k not in skip}


@functools.lru_cache(maxsize=8)
def _cached_load(name: str, params_json: str):
    from ldp import datasets

    return datasets.load(name, **json.loads(params_json))


def load_dataset(dataset: dict[str, Any]):
    """``ldp.datasets.load(name, **non-null params)`` for a dataset config node.

    A data set is fixed by its parameters (its ``seed`` among them), so every trial,
    protocol and ε of a setting sees the same users; it is cached per worker.
    """
    params = _drop_nulls(dataset, "name", "label")
    return _cached_load(dataset["name"], json.dumps(params, sort_keys=True))


def population_counts(dataset: dict[str, Any], domain_size: int | None) -> tuple[np.ndarray, str]:
    """True counts over {0..d-1} for an oracle trial, and the data source.

    ``point``: all n users hold 0 (every other value has count 0: the noise floor that
    Table 1 tabulates).  Otherwise the data set's distinct values are relabelled by
    frequency rank (0 = most frequent); ranks >= d are left out, with their users.
    """
    if dataset["name"] == "point":
        counts = np.zeros(domain_size or 2, dtype=np.int64)
        counts[0] = dataset["n"]
        return counts, "point"
    data = load_dataset(dataset)
    _, ranked = data.histogram()
    d = domain_size or len(ranked)
    counts = np.zeros(d, dtype=np.int64)
    counts[: min(d, len(ranked))] = ranked[:d]
    return counts, data.source


def tracked_values(counts: np.ndarray, track: str, k: int) -> np.ndarray:
    """The values whose errors an oracle trial records: top k ranks, all, or absent ones."""
    if track == "top":
        return np.arange(min(k, counts.shape[0]), dtype=np.int64)
    if track == "all":
        return np.arange(counts.shape[0], dtype=np.int64)
    absent = np.flatnonzero(counts == 0).astype(np.int64)
    if absent.size == 0:
        raise ValueError(
            "options.track=absent: every value of the domain has users; raise options.domain_size"
        )
    return absent


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


#: δ of the central (ε, δ) that ``shuffle_epsilon`` rows record.
SHUFFLE_DELTA = 1e-6


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


def protocol_arguments(protocol: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments a protocol node gives its class: the non-null parameters.

    Lists become tuples (the classes are frozen) and a name where the class expects a
    protocol class (PEM's ``oracle``) becomes that class, through :mod:`ldp.registry`.
    """
    entry = registry.get(protocol["name"])
    references = {
        spec.name: spec.metadata["registry"]
        for spec in dataclasses.fields(protocol_schema(entry.name))
        if "registry" in spec.metadata
    }
    kwargs = {}
    for name, value in _drop_nulls(protocol, "name", "kind", "label").items():
        if name in references:
            value = registry.resolve(value, references[name])
        kwargs[name] = tuple(value) if isinstance(value, list) else value
    return kwargs


def build_protocol(
    protocol: dict[str, Any],
    epsilon: float,
    *,
    domain_size: int | None = None,
    k: int | None = None,
    m: int | None = None,
    n: int | None = None,
):
    """The protocol of a config node: an oracle over ``domain_size`` values, or a heavy
    hitter for ``k``, values of ``m`` bits and ``n`` users (passed as ``n_hint`` to a
    class that plans for a number of users, e.g. PEM's optimizer, unless the node sets it).
    """
    entry = registry.get(protocol["name"])
    kwargs = protocol_arguments(protocol)
    if entry.kind == "oracle":
        return entry.cls(epsilon=epsilon, domain_size=domain_size, **kwargs)
    if "n_hint" in {f.name for f in registry.parameters(entry.cls)}:
        kwargs.setdefault("n_hint", n)
    return entry.cls(epsilon=epsilon, k=k, m=m, **kwargs)


def protocol_from_row(row: Any) -> dict[str, Any]:
    """The protocol node of a results-table row (its ``protocol.*`` columns), for figures
    that rebuild a protocol to draw its closed forms.  Empty cells (NaN) are nulls; values
    are cast back to the types the protocol's schema declares (tables store floats)."""
    schema = protocol_schema(str(row["protocol.name"]))
    node: dict[str, Any] = {}
    for spec in dataclasses.fields(schema):
        value = row.get(f"protocol.{spec.name}")
        if value is None or (isinstance(value, float) and np.isnan(value)):
            continue
        if isinstance(value, str) and value.startswith("["):
            value = json.loads(value)
        elif isinstance(value, np.generic):
            value = value.item()
        kinds = typing.get_args(spec.type) or (spec.type,)
        if int in kinds and isinstance(value, float) and value.is_integer():
            value = int(value)
        node[spec.name] = value
    return node


def build_heavy_hitter(config: dict[str, Any], m: int, n: int):
    """The heavy-hitter protocol of a config, for values of m bits and n users."""
    return build_protocol(config["protocol"], config["epsilon"], k=config["k"], m=m, n=n)


@functools.lru_cache(maxsize=16)
def _cached_heavy_hitter(built_json: str, m: int, n: int):
    """:func:`build_heavy_hitter` memoised per worker: the protocols are frozen, so every
    trial of a setting can share one, and PEM's optimizer (Sec. IV-C, ~0.2 s) runs once."""
    return build_heavy_hitter(json.loads(built_json), m, n)


def heavy_hitter_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """One run of a heavy-hitter protocol ([PEM]) on a data set."""
    from ldp import metrics

    data = load_dataset(config["dataset"])
    built = {key: config[key] for key in ("protocol", "epsilon", "k")}
    protocol = _cached_heavy_hitter(json.dumps(built, sort_keys=True), data.m, data.n)
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


def data_shape(config: dict[str, Any]) -> tuple[int, int | None, int]:
    """(n, m, d) of a setting's data: users, bits per value (heavy hitters) and the oracle
    domain (``options.domain_size``, else the number of distinct values).  Loads the data
    set unless it is the ``point`` population, and keeps only its shape (cached per
    process): the run's own process checks every setting, and holding every data set
    there (up to 10^7 users each) cost it gigabytes, while its workers load their own."""
    dataset, domain_size = config["dataset"], config["options"]["domain_size"]
    if dataset["name"] == "point":
        return int(dataset["n"]), None, domain_size or 2
    params = _drop_nulls(dataset, "name", "label")
    n, m, distinct = _cached_shape(dataset["name"], json.dumps(params, sort_keys=True))
    return n, m, domain_size or distinct


@functools.lru_cache(maxsize=256)
def _cached_shape(name: str, params_json: str) -> tuple[int, int, int]:
    """(users, bits per value, distinct values) of a data set, which is not kept."""
    from ldp import datasets

    data = datasets.load(name, **json.loads(params_json))
    return data.n, data.m, data.n_distinct


def _field_message(protocol: dict[str, Any], error: Exception, context: str) -> str:
    """A library error as one config line naming the field: ``protocol.g: must be ...``.

    The field is read from the error, never parsed from its text: a
    :class:`~ldp.validation.ParameterError` names its parameter (``error.name``); a protocol
    parameter becomes ``protocol.<name>``, ``epsilon`` and ``k`` stay as they are (root
    fields), anything else (``domain_size`` and ``m`` come from the data; a ``TypeError``)
    is attributed to the protocol as a whole.  ``context`` (the data's shape) is appended,
    as the message may depend on it.
    """
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(error, ParameterError):
        own = {spec.name for spec in registry.parameters(registry.get(protocol["name"]).cls)}
        field = f"protocol.{error.name}" if error.name in own else error.name
        if error.name in own or error.name in ("epsilon", "k"):
            rest = text.removeprefix(f"{error.name} ").removeprefix(f"{error.name}: ")
            return f"{field}: {rest} ({context})"
    return f"protocol: {protocol['name']} rejects this setting: {text} ({context})"


def preflight(configs: list[dict[str, Any]]) -> None:
    """Build every setting's protocol once, on its real data, before any trial runs.

    The library's own checks (ranges, an η that does not fit m, an ε whose hash range
    overflows) and the data loaders' (a malformed ``dataset.path`` file) thus stop the run
    with one line naming the field (:class:`~experiments.schema.ConfigError`).
    """
    from experiments.schema import ConfigError

    seen: set[str] = set()
    for config in configs:
        protocol = config["protocol"]
        fingerprint = json.dumps(
            [protocol, config["dataset"], config["options"], config["epsilon"], config["k"]],
            sort_keys=True,
        )
        if fingerprint in seen:
            continue
        seen.add(fingerprint)
        try:
            n, m, d = data_shape(config)
        except (OSError, TypeError, ValueError) as error:
            line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            word, _, rest = line.partition(" ")
            if word in config["dataset"] and word != "name" and rest:  # "item_rule must ..."
                raise ConfigError(f"dataset.{word}: {rest}") from None
            field = "dataset.path" if config["dataset"].get("path") is not None else "dataset"
            raise ConfigError(f"{field}: {line}") from None
        shape = f"{config['dataset']['name']} data: n = {n}, " + (
            f"d = {d}" if protocol["kind"] != "heavy_hitter" else f"m = {m}"
        )
        try:
            if protocol["kind"] == "multiple_questions":
                build_protocol(protocol, config["epsilon"] / 2, domain_size=d)
            if protocol["kind"] in ORACLE_KINDS:
                build_protocol(protocol, config["epsilon"], domain_size=d)
            else:
                build_heavy_hitter(config, m, n)
        except (TypeError, ValueError) as error:
            raise ConfigError(_field_message(protocol, error, shape)) from None
