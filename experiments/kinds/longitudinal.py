"""The ``longitudinal`` trial kind: τ collections from the same users by a memoized
protocol ([ACBX22] Sec. 3, [RAPPOR]); what it records is :func:`longitudinal_trial`'s
docstring.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from experiments.build import build_protocol
from experiments.kinds import NAN, Measurement, TrialResult
from experiments.kinds.oracle import _variances
from experiments.population import population_counts
from experiments.seeding import TrialStreams
from ldp.contract import HasRounds


def longitudinal_trial(config: dict[str, Any], streams: TrialStreams) -> TrialResult:
    """τ collections from the same users by a memoized protocol ([ACBX22] Sec. 3, [RAPPOR]).

    Users hold the population's values at round 1; with ``options.change_prob`` = ρ > 0
    each user redraws their value from the population's distribution with probability ρ at
    each later round (the data stream), else keeps it.  The protocol's ``perturb_rounds``
    memoizes its permanent step per (user, value), so only the reports engine is the real
    thing (the sampled engine would draw the rounds independently).  Per round t (``item``
    = t): ``sq_error_f`` = mean over the d values of (f̂_t(v) - f_t(v))², f_t that round's
    true frequencies, beside its exact expectation (mean of ``variance(n, c_t)``/n²);
    ``epsilon_spent`` = the exact privacy loss of t reports of one unchanged value
    (``rounds_epsilon(t)``), beside the claimed bound (ε₁ for one report, else ε_∞);
    ``adversary_success`` = the Bayesian adversary's rate of guessing an unchanged value
    from its first t reports, the population as prior (:func:`ldp.adversary.rounds_success`;
    exact beside itself, or empirical with ``adversary_success_se``; computed once per
    setting), and ``adversary_bound`` = the most an adversary can reach against the exact
    loss of t reports (:func:`ldp.adversary.ldp_bound`), beside that of the claimed bound;
    once per trial ``adversary_baseline`` = π_max (the blind guess).  With ρ > 0 also
    ``epsilon_spent_changing`` = the mean over users of the
    claimed ``memoized_epsilon(t, distinct values held so far)``, beside its largest value.
    Without ``item``: ``sq_error_f`` averaged over the τ rounds.
    """
    from ldp.adversary import ldp_bound

    if config["engine"] != "reports":
        raise ValueError("engine: longitudinal trials need engine=reports (the memo ties rounds)")
    options = config["options"]
    counts, source = population_counts(config["dataset"], options["domain_size"])
    n, d = int(counts.sum()), counts.shape[0]
    oracle = build_protocol(config["protocol"], config["epsilon"], domain_size=d)
    if not isinstance(oracle, HasRounds):
        raise ValueError(f"protocol.kind: longitudinal needs a memoized oracle, not {oracle.name}")
    tau = options.get("rounds") or 1
    values = np.repeat(np.arange(d, dtype=np.int64), counts)
    held = _changing_values(values, counts / n, tau, options.get("change_prob") or 0.0, streams)
    rounds = oracle.perturb_rounds(held, streams.mechanism)
    adversary = _rounds_adversary(oracle, counts, tau)

    rows, errors = [], []
    seen = np.zeros((n, d), dtype=bool)
    distinct = np.zeros(n, dtype=np.int64)
    for t, reports in enumerate(rounds, start=1):
        truth = np.bincount(held[:, t - 1], minlength=d)
        expected = float(np.mean(_variances(oracle, n, truth.astype(float)))) / n**2
        error = float(np.mean((oracle.estimate(reports) / n - truth / n) ** 2))
        errors.append((error, expected))
        rows.append(Measurement("sq_error_f", error, expected, t))
        spent = oracle.rounds_epsilon(t)
        rows.append(Measurement("epsilon_spent", spent, oracle.memoized_epsilon(t), t))
        if adversary:
            value, exact, standard_error = adversary[t - 1]
            rows.append(Measurement("adversary_success", value, exact, t))
            if np.isnan(exact):
                rows.append(Measurement("adversary_success_se", standard_error, item=t))
            bound = ldp_bound(spent, counts / n), ldp_bound(oracle.memoized_epsilon(t), counts / n)
            rows.append(Measurement("adversary_bound", *bound, t))
        if options.get("change_prob"):
            user = np.arange(n)
            distinct += ~seen[user, held[:, t - 1]]
            seen[user, held[:, t - 1]] = True
            levels, index = np.unique(distinct, return_inverse=True)
            claimed = np.array([oracle.memoized_epsilon(t, int(k)) for k in levels])[index]
            rows.append(
                Measurement(
                    "epsilon_spent_changing", float(claimed.mean()), float(claimed.max()), t
                )
            )
    average = np.mean(errors, axis=0)
    rows.append(Measurement("sq_error_f", float(average[0]), float(average[1])))
    if adversary:
        rows.append(Measurement("adversary_baseline", float(counts.max() / n)))
    return TrialResult(rows, source, n, protocol=oracle)


def _changing_values(
    values: np.ndarray, prior: np.ndarray, tau: int, rho: float, streams: TrialStreams
) -> np.ndarray:
    """(n, τ): round 1 the users' values; at each later round each user redraws from
    ``prior`` with probability ``rho`` (from the data stream), else keeps the value."""
    held = np.repeat(values[:, None], tau, axis=1)
    if rho == 0.0:
        return held
    rng = streams.data
    for t in range(1, tau):
        change = rng.random(values.shape[0]) < rho
        fresh = rng.choice(prior.shape[0], size=int(change.sum()), p=prior)
        held[:, t] = held[:, t - 1]
        held[change, t] = fresh
    return held


#: (protocol, CRC of the counts, τ) -> per round (value, exact or NaN, se), per worker.
_ROUNDS_ADVERSARY: dict[tuple, list[tuple[float, float, float]]] = {}


def _rounds_adversary(oracle, counts: np.ndarray, tau: int) -> list[tuple[float, float, float]]:
    """:func:`ldp.adversary.rounds_success` once per (protocol, prior, τ): [] if the
    protocol has no sequence likelihood; an empirical estimate is seeded by the prior and
    the protocol, so every trial of a setting records the same rate."""
    from ldp import adversary

    counts = np.asarray(counts, dtype=np.int64)
    key = (oracle, zlib.crc32(counts.tobytes()), tau)
    if key not in _ROUNDS_ADVERSARY:
        if len(_ROUNDS_ADVERSARY) >= 256:
            _ROUNDS_ADVERSARY.clear()
        seed = zlib.crc32(counts.tobytes() + repr(oracle).encode())
        try:
            found = adversary.rounds_success(
                oracle, counts, tau, rng=np.random.default_rng(seed), n_samples=ROUNDS_SAMPLES
            )
        except adversary.NoAdversary:
            found = []
        _ROUNDS_ADVERSARY[key] = [
            (f.value, f.value if f.method == "exact" else NAN, f.standard_error) for f in found
        ]
    return _ROUNDS_ADVERSARY[key]


#: Users drawn for an empirical adversary over rounds (standard error <= 0.011).
ROUNDS_SAMPLES = 2000
