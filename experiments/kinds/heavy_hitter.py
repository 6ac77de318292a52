"""The ``heavy_hitter`` trial kind ([PEM] Sec. IV-B1, VI-B6).

A protocol of :mod:`ldp.heavy_hitters` identifies the top k; recorded: ``f1``, ``ncr``,
``sq_error`` (mean squared count error of the identified true heavy hitters),
``n_identified``, ``n_true``, numeric diagnostics as ``diag.<name>``, and with
``options.per_value`` the identification (0/1) and frequency of each true heavy hitter
(``item`` = its true rank, 1 = most frequent).  With ``protocol.threshold`` = θ the truth
is every value above θ n instead of the top k.  A protocol that declares
``report_groups()`` also gets ``adversary_success`` and ``adversary_baseline``
(:func:`heavy_hitter_adversary_rows`).  With ``options.model``, trial 0 of a protocol that
declares ``identification_model`` records its refined model's scores once per setting,
``refined.f1`` and ``refined.ncr`` (:func:`model_rows`): deterministic, a second or so
each, computed with the trials rather than when a figure is drawn.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import numpy as np

from experiments.build import cached_heavy_hitter
from experiments.kinds import NAN, Measurement, TrialResult
from experiments.population import load_dataset
from experiments.seeding import TrialStreams
from ldp.contract import HasIdentificationModel, HasReportGroups


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
    if config["options"]["model"] and streams.trial == 0:
        rows += model_rows(protocol, data)
    return TrialResult(rows, data.source, data.n, protocol=protocol)


def model_rows(protocol, data) -> list[Measurement]:
    """``refined.f1`` and ``refined.ncr``: [PEM] Eq. (4)'s scores Σ_j w_j P(v_j found) with
    the protocol's refined identification model on the data's own histogram; no rows for a
    protocol that declares none or declines."""
    from ldp.theory.pem import utility_weights

    if not isinstance(protocol, HasIdentificationModel):
        return []
    found = protocol.identification_model(*data.histogram(), refined=True)
    if found is None:
        return []
    return [
        Measurement(f"refined.{goal}", float(utility_weights(len(found), goal) @ found))
        for goal in ("f1", "ncr")
    ]


def heavy_hitter_adversary_rows(protocol, data) -> list[Measurement]:
    """``adversary_success``: the Bayesian adversary's rate of guessing a user's whole value
    from what the user sends (its group's reports; :func:`ldp.adversary.heavy_hitter_success`,
    the data set's distribution as prior), beside itself where exact (else NaN and a row
    ``adversary_success_se``), and ``adversary_baseline`` = π_max; no rows for a protocol
    without ``report_groups()`` or whose adversary is too costly to estimate.  Once per
    (protocol, data set) and worker; an empirical estimate is seeded by both."""
    from ldp import adversary

    if not isinstance(protocol, HasReportGroups):
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
        except adversary.NoAdversary:  # e.g. too many values to estimate
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
