"""The ``oracle_frontier`` trial kind: every registered oracle (plug-ins included) at one
(d, ε), for the Pareto frontier figure (:mod:`experiments.figures.fig_frontier`).

Per oracle ``sq_error_n.<NAME>`` (measured Var/n beside the exact), ``bits.<NAME>``,
``decode_s.<NAME>`` (with ``options.time_server``) and ``skipped.<NAME>`` (reason flags,
:data:`experiments.results.FRONTIER_SKIPS`): the metric names the oracle a row measures.
The setting's protocol node names none (:data:`experiments.schema.FRONTIER_PROTOCOL`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from experiments.kinds import NAN, Measurement, TrialResult
from experiments.population import population_counts
from experiments.results import FRONTIER_VALUES
from experiments.seeding import TrialStreams
from ldp import registry
from ldp.contract import capabilities_of

#: The budget of one oracle at one frontier setting (:mod:`ldp.budget`): what fits in a
#: trial of a few seconds; an oracle over it is skipped with its reason, never forced.
FRONTIER_BUDGET = {"memory_bytes": "512 MiB", "operations": 2**31}


def report_bits(oracle: Any) -> float:
    """Bits of one report as sent: the oracle's ``report_bits()``
    (:meth:`ldp.oracles.FrequencyOracle.report_bits`); NaN for a plug-in without one."""
    own = getattr(oracle, "report_bits", None)
    return float(own()) if callable(own) else NAN


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
