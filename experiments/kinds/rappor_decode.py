"""The ``rappor_decode`` trial kind ([RAPPOR] Sec. 4).

RAPPOR's decoder with every value of the domain as a candidate
(:meth:`ldp.oracles.rappor.RAPPOR.decode`: LASSO, least squares, standard errors,
Bonferroni cut-off at α = 0.05); recorded: ``n_detected``, ``n_false_detected`` (detected
values nobody holds), ``n_selected`` (kept by the LASSO) and ``within_2se`` (share of the
detected values whose truth lies within 2 standard errors, beside the normal 0.9545);
with ``options.per_value`` per tracked value ``estimate_n`` (ĉ(v)/n beside c(v)/n),
``std_error_n`` (SE/n, NaN if not selected) and ``detected`` (0/1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.build import build_protocol
from experiments.kinds import NAN, Measurement, TrialResult
from experiments.kinds.oracle import adversary_rows
from experiments.population import population_counts, tracked_values
from experiments.seeding import TrialStreams
from ldp.contract import Decodes


def rappor_decode_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """RAPPOR's decoder ([RAPPOR] Sec. 4) on a population, every domain value a candidate."""
    from scipy import stats

    options = config["options"]
    counts, source = population_counts(config["dataset"], options["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    oracle = build_protocol(config["protocol"], config["epsilon"], domain_size=d)
    if not isinstance(oracle, Decodes):
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
    return TrialResult(rows, source, n, protocol=oracle)
