"""Run a mechanism and bound its privacy loss from below (LDP-Auditor, PETS 2024).

The audit draws ``trials`` reports of v and ``trials`` reports of v' from the mechanism's
own ``perturb`` and counts, for each distinguishing event E, how many fall in E.  Each
(event, direction) is one hypothesis; with m of them, each bound uses one-sided
Clopper–Pearson intervals at α/(2m), so the probability that the reported lower bound
exceeds the mechanism's true privacy loss is at most α (see :mod:`ldp.audit.bounds`).

Events chosen from data (:class:`~ldp.audit.events.Finder`) are fitted on the first half
of the reports of each input and counted on the second half only; fixed events are
counted on all of them.  Each finder counts as one hypothesis whatever it returns, so m
is fixed before any report is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldp.audit.bounds import check_level, clopper_pearson_lower, clopper_pearson_upper
from ldp.audit.events import Event, Finder, count, default_events
from ldp.validation import check_generator, check_int

#: Reports drawn per input and per call to ``perturb``.
BATCH = 1 << 16


@dataclass(frozen=True)
class EventResult:
    """One hypothesis: event E as evidence for ``favours`` (``"v"`` or ``"v'"``).

    ``count`` of the favoured input's ``trials`` reports fell in E, ``count_other`` of the
    other input's; ``lower`` bounds P(E | favoured) from below, ``upper`` bounds
    P(E | other) from above, and ``epsilon`` = ln(lower/upper) (-inf when lower = 0).
    """

    name: str
    favours: str
    count: int
    count_other: int
    trials: int
    lower: float
    upper: float
    epsilon: float


@dataclass(frozen=True)
class AuditResult:
    """An empirical lower bound on ε: with probability >= 1 - alpha, ε >= ``epsilon``.

    ``best`` is the hypothesis that gave it (None if none gave a positive bound),
    ``events`` every hypothesis tried, ``hypotheses`` their number m (each bound used
    level alpha/(2m)), ``trials`` the reports drawn per input.
    """

    epsilon: float
    best: EventResult | None
    events: tuple[EventResult, ...]
    alpha: float
    hypotheses: int
    trials: int

    def __str__(self) -> str:
        if self.best is None:
            return f"ε >= 0 (no event separated the inputs; {self.trials} trials per input)"
        b = self.best
        return (
            f"ε >= {self.epsilon:.4g} at confidence {1 - self.alpha:g} "
            f"({self.hypotheses} hypotheses, {self.trials} trials per input): "
            f"'{b.name}' for {b.favours}, {b.count}/{b.trials} against {b.count_other}/{b.trials}"
        )


def _inputs(value: Any, n: int) -> np.ndarray:
    """n copies of one input: an integer, or a row of uint64 words for wide domains."""
    array = np.asarray(value)
    if array.ndim == 0:
        integer = int(array)
        dtype = np.int64 if integer < 2**63 else np.uint64
        return np.full(n, integer, dtype=dtype)
    return np.repeat(array[None, :], n, axis=0)


def _as_events(events: Sequence[Event | Finder | Callable] | None) -> list[Event | Finder]:
    out: list[Event | Finder] = []
    for item in events:
        if isinstance(item, Event) or hasattr(item, "fit"):
            out.append(item)
        elif callable(item):
            out.append(Event(getattr(item, "__name__", "event"), item))
        else:
            raise TypeError(f"events must be Event, Finder or callable, got {type(item).__name__}")
    return out


def lower_bound(
    mechanism: Any,
    v: Any,
    v_prime: Any,
    *,
    rng: np.random.Generator,
    trials: int = 100_000,
    alpha: float = 0.01,
    events: Sequence[Event | Finder | Callable] | None = None,
) -> AuditResult:
    """An empirical lower bound on the privacy loss of ``mechanism`` between v and v'.

    Parameters
    ----------
    mechanism :
        Any object with ``perturb(values, rng)`` returning one report per value (an array,
        or a tuple of per-report arrays such as ``HashReports``): an oracle of
        :mod:`ldp.oracles`, a heavy hitter's per-user client, or your own mechanism.
    v, v_prime :
        The two inputs (integers, or rows of uint64 words for domains beyond 2^64).
    rng : numpy.random.Generator
        Drives ``perturb``.
    trials : int, default 100_000
        Reports drawn per input.  :func:`ldp.audit.trials_needed` sizes it.
    alpha : float, default 0.01
        The probability that the bound exceeds the true loss is at most alpha.
    events : sequence, optional
        :class:`~ldp.audit.events.Event` objects (fixed sets of reports), finders (fitted
        on half of the reports) or plain callables ``reports -> bool array``; by default
        :func:`~ldp.audit.events.default_events` for the report type.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> from ldp.oracles import GRR
    >>> result = lower_bound(GRR(epsilon=1.0, domain_size=4), 0, 1,
    ...                      rng=np.random.default_rng(0), trials=20_000)
    >>> 0.8 < result.epsilon <= 1.0
    True
    """
    if not callable(getattr(mechanism, "perturb", None)):
        raise TypeError(f"mechanism must have perturb(values, rng), got {type(mechanism).__name__}")
    trials = check_int(trials, "trials", minimum=2)
    alpha = check_level(alpha)
    rng = check_generator(rng)
    if np.array_equal(np.asarray(v), np.asarray(v_prime)):
        raise ValueError("v and v_prime must differ")

    half = trials // 2
    first = mechanism.perturb(_inputs(v, half), rng)
    first_other = mechanism.perturb(_inputs(v_prime, half), rng)
    for batch in (first, first_other):
        if count(batch) != half:
            raise ValueError(f"perturb returned {count(batch)} reports for {half} values")
    chosen = default_events(mechanism, v, v_prime, first) if events is None else _as_events(events)
    fixed = [e for e in chosen if isinstance(e, Event)]
    finders = [e for e in chosen if not isinstance(e, Event)]
    hypotheses = sum(len(e.directions()) for e in fixed) + len(finders)
    if hypotheses == 0:
        raise ValueError("events must not be empty")

    fitted: list[Event] = []
    for finder in finders:
        found = finder.fit(first, first_other)[:1]  # one hypothesis per finder
        fitted += [Event(e.name, e.test, e.favours or 1) for e in found]

    inside = np.zeros((len(fixed), 2), dtype=np.int64)
    inside_fitted = np.zeros((len(fitted), 2), dtype=np.int64)
    for i, event in enumerate(fixed):
        inside[i] = event.test(first).sum(), event.test(first_other).sum()
    for start in range(half, trials, BATCH):
        size = min(BATCH, trials - start)
        batch = mechanism.perturb(_inputs(v, size), rng)
        batch_other = mechanism.perturb(_inputs(v_prime, size), rng)
        for i, event in enumerate(fixed):
            inside[i] += event.test(batch).sum(), event.test(batch_other).sum()
        for i, event in enumerate(fitted):
            inside_fitted[i] += event.test(batch).sum(), event.test(batch_other).sum()

    level = alpha / (2 * hypotheses)
    results = []
    for group, counts, n in ((fixed, inside, trials), (fitted, inside_fitted, trials - half)):
        for event, (k, k_other) in zip(group, counts, strict=True):
            for direction in event.directions():
                results.append(_hypothesis(event.name, direction, int(k), int(k_other), n, level))
    best = max(results, key=lambda r: r.epsilon)
    positive = best.epsilon > 0
    return AuditResult(
        epsilon=best.epsilon if positive else 0.0,
        best=best if positive else None,
        events=tuple(results),
        alpha=alpha,
        hypotheses=hypotheses,
        trials=trials,
    )


def _hypothesis(name: str, direction: int, k: int, k_other: int, n: int, level: float):
    if direction < 0:
        k, k_other = k_other, k
    lower = float(clopper_pearson_lower(k, n, level))
    upper = float(clopper_pearson_upper(k_other, n, level))
    epsilon = math.log(lower) - math.log(upper) if lower > 0 else -math.inf
    return EventResult(name, "v" if direction > 0 else "v'", k, k_other, n, lower, upper, epsilon)
