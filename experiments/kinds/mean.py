"""The ``mean`` trial kind: a mean protocol of :mod:`ldp.numeric` on real values in
[-1, 1] ([W19]); what it records is :func:`mean_trial`'s docstring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.build import protocol_arguments
from experiments.kinds import Measurement, TrialResult
from experiments.seeding import TrialStreams
from ldp import registry
from ldp.contract import capabilities_of


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
    return TrialResult(rows, "synthetic", n, protocol=protocol)
