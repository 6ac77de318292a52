"""The ``multiple_questions`` trial kind ([FO] "On answering multiple questions").

Every user answers two questions with one oracle; *split*: each answer at ε/2 from all n
users, *partition*: a random half of the users answers each question at full ε.  Recorded
per approach: ``sq_error_f.split`` / ``sq_error_f.partition`` = mean over both questions'
tracked values of (ĉ(v)/n' - c(v)/n)^2, n' the users who answered (expectation
Var[c(v)/n]), beside its exact expectation; and the adversary's success per approach
(:func:`experiments.kinds.oracle.adversary_rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.build import build_protocol
from experiments.kinds import Measurement, TrialResult
from experiments.kinds.oracle import _variances, adversary_rows
from experiments.population import population_counts, tracked_values
from experiments.seeding import TrialStreams


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
    rows += adversary_rows(split, counts, ".split") + adversary_rows(full, counts, ".partition")
    return TrialResult(rows, source, n, protocol=full)
