"""The ``set`` trial kind: a protocol over users' item sets ([FIM]: Wang, Li, Jha, IEEE
S&P 2018) finds the top-k items of a set-valued data set.

Recorded: ``f1`` and ``ncr`` of its top k against the true top-k items (by the number of
users holding each), ``n_true`` (k); and for a protocol with per-item estimates and a
closed form (:class:`ldp.contract.SetOracleLike`, e.g. PSFO), one more independent run
estimating every item (the :data:`VARIANCE_ITEMS` most held ones in a larger domain):
``var_ratio`` = mean over them of (ĉ - E[ĉ])²/Var[ĉ] (analytic 1: the closed form checked
at the data set's scale; Kosarak's 41,271 items make one trial's ratio precise to about
±0.7%) and ``bias_items`` = mean over the true
top k of the held-count shortfall (ĉ - c)/c, the share of a top item's holders that
padding to ℓ does not count (analytic: its exact value, mean of (E[ĉ] - c)/c; users with
|v| > ℓ count ℓ/|v|).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.build import build_protocol
from experiments.kinds import Measurement, TrialResult
from experiments.population import load_dataset
from experiments.seeding import TrialStreams
from ldp.contract import SetOracleLike

#: The most items whose estimates the ``var_ratio`` row compares with the closed form.
VARIANCE_ITEMS = 65_536


def set_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """One run of a set protocol (:mod:`ldp.sets`) on a data set of item sets."""
    from ldp import metrics

    data = load_dataset(config["dataset"])
    protocol = build_protocol(config["protocol"], config["epsilon"], domain_size=data.domain_size)
    k = min(int(config["k"]), data.domain_size)
    truth = data.top_items(k)
    found = protocol.top_items(data, k, streams.mechanism, engine=config["engine"])
    rows = [
        Measurement("f1", metrics.f1(truth, found.items)),
        Measurement("ncr", metrics.ncr(truth, found.items)),
        Measurement("n_true", float(k)),
    ]
    if isinstance(protocol, SetOracleLike):
        rows += closed_form_rows(protocol, data, truth, config["engine"], streams)
    return TrialResult(rows, data.source, data.n, protocol=protocol)


def closed_form_rows(
    protocol: Any, data: Any, truth: np.ndarray, engine: str, streams: TrialStreams
) -> list[Measurement]:
    """``var_ratio`` and ``bias_items`` (module docstring), from one more run drawn from a
    child stream (the top-k run's numbers stay as they were)."""
    (rng,) = streams.mechanism.spawn(1)
    if data.domain_size <= VARIANCE_ITEMS:
        items = np.arange(data.domain_size, dtype=np.int64)
    else:
        items = data.top_items(VARIANCE_ITEMS)
    if engine == "sampled":
        estimates = protocol.simulate(data, rng, items)
    else:
        estimates = protocol.estimate(protocol.perturb(data, rng), items)
    expected, variance = protocol.expected_counts(data, items), protocol.variances(data, items)
    top = np.isin(items, truth)
    held = data.item_counts()[items[top]].astype(float)  # truth's order does not matter
    return [
        Measurement("var_ratio", float(np.mean((estimates - expected) ** 2 / variance)), 1.0),
        Measurement(
            "bias_items",
            float(np.mean((estimates[top] - held) / held)),
            float(np.mean((expected[top] - held) / held)),
        ),
    ]
