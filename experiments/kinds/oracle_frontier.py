"""The ``oracle_frontier`` trial kind: every registered oracle (plug-ins included) at one
(d, ε), for the Pareto frontier figure (:mod:`experiments.figures.fig_frontier`).

Per oracle ``sq_error_n.<NAME>`` (measured Var/n beside the exact), ``bits.<NAME>``,
``decode_s.<NAME>`` (with ``options.time_server``), ``gain_<ATTACK>.<NAME>`` (the
frequency gain of fake users, beside its closed form: :func:`attack_rows`) and
``skipped.<NAME>`` (reason flags, :data:`experiments.results.FRONTIER_SKIPS`): the metric
names the oracle a row measures.
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

#: The fake users' share β and their target values (held by nobody: the point data set puts
#: every user on 0), for the robustness axis ([CJG21]'s attacks, :mod:`ldp.poisoning`).
ATTACK_BETA = 0.05
ATTACK_TARGETS = (1, 2, 3)
#: The largest d whose settings measure the attacks: at d = 2^14 the unary encodings'
#: n x d reports cost seconds a collection, three collections an oracle.
ATTACK_MAX_DOMAIN = 1024

#: The budget of one oracle at one frontier setting (:mod:`ldp.budget`): what fits in a
#: trial of a few seconds; an oracle over it is skipped with its reason, never forced.
FRONTIER_BUDGET = {"memory_bytes": "512 MiB", "operations": 2**31}


def report_bits(oracle: Any) -> float:
    """Bits of one report as sent: the oracle's ``report_bits()``
    (:meth:`ldp.oracles.FrequencyOracle.report_bits`); NaN for a plug-in without one."""
    own = getattr(oracle, "report_bits", None)
    return float(own()) if callable(own) else NAN


def attack_rows(oracle: Any, name: str, n: int, rng: np.random.Generator) -> list[Measurement]:
    """``gain_<ATTACK>.<NAME>``: the frequency gain Σ_t (f̃_t after − f̃_t before) of one
    poisoned collection (n genuine users on value 0, a share :data:`ATTACK_BETA` of fake
    users promoting :data:`ATTACK_TARGETS`), for each attack of [CJG21] the oracle can
    express (:func:`ldp.poisoning.check_attack`), beside its closed form
    (:func:`ldp.poisoning.expected_gain`, at this collection's measured S where the
    protocol does not know it exactly).  An attack the oracle cannot express, or that runs
    over the frontier's budget, has no row, and none runs at d > :data:`ATTACK_MAX_DOMAIN`."""
    from ldp import poisoning

    values, targets = np.zeros(n, dtype=np.int64), np.array(ATTACK_TARGETS)
    if not targets.max() < oracle.domain_size <= ATTACK_MAX_DOMAIN:
        return []
    rows = []
    for attack in poisoning.ATTACKS:
        try:
            poisoning.check_attack(oracle, attack)
        except ValueError:
            continue
        try:
            found = poisoning.attack(oracle, values, attack, targets, ATTACK_BETA, rng)
        except ValueError:  # over the frontier's budget (ldp.budget)
            continue
        supported = found.supported if np.isfinite(found.supported) else None
        expected = poisoning.expected_gain(
            oracle, attack, targets, found.beta, found.f_targets, supported
        )
        rows.append(Measurement(f"gain_{attack}.{name}", found.gain, expected))
    return rows


def oracle_frontier_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """Every registered oracle (plug-ins included) at one (d, ε), for the Pareto frontier.

    The config's protocol node only selects this trial kind; the oracles are read from
    :mod:`ldp.registry` at run time and built with their default parameters.  n users all
    hold value 0 (``dataset=point``); per oracle: ``sq_error_n.<NAME>``, the sampled
    engine's mean of ĉ(v)²/n over values nobody holds (the first :data:`FRONTIER_VALUES`
    of them, estimated together), beside the exact Var/n
    (``variances`` of the population, where a closed form is declared); ``bits.<NAME>``
    (:func:`report_bits`); with ``options.time_server``, ``decode_s.<NAME>``, the seconds of
    ``estimate`` of the n real reports over the whole domain; the gains of the attacks it
    can express (:func:`attack_rows`, drawn from a child stream of the mechanism's, so the
    other measurements draw what they drew without them).  An oracle (or one engine of
    it) over :data:`FRONTIER_BUDGET` or not built here gets ``skipped.<NAME>``: the sum of
    the flags of :data:`FRONTIER_SKIPS` that apply.
    """
    from ldp import budget

    counts, source = population_counts(config["dataset"], config["options"]["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    rng, rows = streams.mechanism, []
    (attacks,) = rng.spawn(1)  # independent, and draws nothing from rng
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
            rows += attack_rows(oracle, name, n, attacks)
        rows.append(Measurement(f"bits.{name}", report_bits(oracle)))
        if skip:
            rows.append(Measurement(f"skipped.{name}", float(skip)))
    return TrialResult(rows, source, n)
