"""The ``heavy_hitter`` trial kind ([PEM] Sec. IV-B1, VI-B6).

A protocol of :mod:`ldp.heavy_hitters` identifies the top k; recorded: ``f1``, ``ncr``,
``sq_error`` (mean squared count error of the identified true heavy hitters),
``n_identified``, ``n_true``, numeric diagnostics as ``diag.<name>``, and with
``options.per_value`` the identification (0/1) and frequency of each true heavy hitter
(``item`` = its true rank, 1 = most frequent).  With ``protocol.threshold`` = θ the truth
is every value above θ n instead of the top k.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from experiments.build import cached_heavy_hitter
from experiments.kinds import Measurement, TrialResult
from experiments.population import load_dataset
from experiments.seeding import TrialStreams


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
