"""Run a mechanism and bound its privacy loss from below (LDP-Auditor, PETS 2024).

The audit draws reports of v and of v' from the mechanism's own ``perturb`` and counts,
for each distinguishing event E, how many fall in E.  Each (event, direction) is one
hypothesis; with m of them, each bound uses one-sided Clopper–Pearson intervals at
α/(2m), so the probability that the reported lower bound exceeds the mechanism's true
privacy loss is at most α: α is the audit's false-alarm rate on an honest mechanism.

Samples.  Every call to ``perturb`` gets v and v' together (the first half of its values
v, the second v'), so the reports of v and of v' of one call share whatever the call
draws once: a protocol declaring ``public_per_call`` (a hash pool, a hash family,
:mod:`ldp.contract`) draws it once per call, and given it the call's reports are
independent.  The audit conditions on it: an ε-LDP protocol is ε-LDP given every value of
its public randomness, so the counts of one call bound the conditional loss, and a sum
over calls (independent, with different public draws) is a Poisson-binomial count, no
more spread than a binomial of the same mean (Hoeffding, 1956), so the bounds stay
conservative.  Such protocols are called with small batches (``PER_CALL``), many calls,
so the counts average over many public draws.  Public randomness drawn per report (OLH's
seeds, a sketch's row, RAPPOR's cohort) is part of the report and is read like the rest.

Two stages.  Events chosen from data (:class:`~ldp.audit.events.Finder`, by default the
:class:`~ldp.audit.events.FeatureSearch` over every column and bit of the report) are
fitted on a training sample and counted on a fresh one; fixed events are counted on
both (``trials`` reports per input in all).  The search also chooses the size of the
fresh sample from the training reports alone: when its best event is projected to exceed
the claimed ε (``mechanism.epsilon``) only with more reports, up to ``max_trials`` are
drawn (a leak firing once in a thousand reports needs ~10^5 of them).  A third stage
calls ``perturb`` with one value at a time and compares the *structure* of the outputs
(type, dtype, shape, length): a dtype that depends on the value is a leak no report
column shows.  Each finder and the structure stage count as one hypothesis whatever they
find, so m is fixed before any report is drawn.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldp.audit.bounds import check_level, clopper_pearson_lower, clopper_pearson_upper
from ldp.audit.events import (
    Event,
    FeatureSearch,
    Finder,
    default_events,
    signature,
)
from ldp.audit.events import choose as _choose
from ldp.audit.law import HasReportLaw, LawCheck
from ldp.audit.law import check as check_law
from ldp.audit.support import declared_support
from ldp.contract import capabilities_of
from ldp.reports import count, per_report_fields, take
from ldp.validation import check_generator, check_int

#: Reports drawn per input and per call to ``perturb``.
BATCH = 1 << 16
#: ... for a protocol that draws public randomness once per call (many calls, many draws).
PER_CALL = 256
#: Reports per input of an audit by default: enough for the optimal event of every
#: protocol with a closed-form one to reach 0.9 ε at ε in {0.5, 1, 2, 4} (docs/privacy.md).
TRIALS = 200_000
#: The adaptive evaluation sample grows by this factor at a time (up to ``max_trials``).
GROWTH = 4
#: Calls per input of the structure stage: to look (training), and to count.
STRUCTURE_TRAINING = 32
STRUCTURE_CALLS = 1024


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
    level alpha/(2m)), ``trials`` the reports drawn per input for the fixed events
    (found events were counted on ``evaluation`` fresh reports per input).
    """

    epsilon: float
    best: EventResult | None
    events: tuple[EventResult, ...]
    alpha: float
    hypotheses: int
    trials: int
    evaluation: int = 0
    law: LawCheck | None = None  #: the declared law near its edges (:mod:`ldp.audit.law`)

    def holds(self, claim: float) -> bool:
        """No violation found: the bound at most ``claim`` and the law, if declared, as
        declared near its edges."""
        return self.epsilon <= claim and (self.law is None or self.law.holds)

    def __str__(self) -> str:
        law = "" if self.law is None else f"; {self.law}"
        if self.best is None:
            return f"ε >= 0 (no event separated the inputs; {self.trials} trials per input){law}"
        b = self.best
        return (
            f"ε >= {self.epsilon:.4g} at confidence {1 - self.alpha:g} "
            f"({self.hypotheses} hypotheses, {self.trials} trials per input): "
            f"'{b.name}' for {b.favours}, {b.count}/{b.trials} against {b.count_other}/{b.trials}"
            f"{law}"
        )


def _inputs(value: Any, n: int, dtype: type = np.int64) -> np.ndarray:
    """n copies of one input: an integer, a real (float64), or a row of uint64 words."""
    array = np.asarray(value)
    if array.ndim == 0:
        return np.full(n, float(array) if dtype is np.float64 else int(array), dtype=dtype)
    return np.repeat(array[None, :], n, axis=0)


def _mixed(v: Any, v_prime: Any, n: int, n_other: int) -> np.ndarray:
    """n copies of v then n_other of v' (uint64 for both when either needs it; float64
    when either is a float: the real inputs of a mean protocol, :mod:`ldp.numeric`)."""
    real = any(np.ndim(x) == 0 and np.asarray(x).dtype.kind == "f" for x in (v, v_prime))
    big = not real and any(np.ndim(x) == 0 and int(x) >= 2**63 for x in (v, v_prime))
    dtype = np.float64 if real else np.uint64 if big else np.int64
    return np.concatenate([_inputs(v, n, dtype), _inputs(v_prime, n_other, dtype)])


def _as_events(events: Sequence[Event | Finder | Callable] | None) -> list[Event | Finder]:
    out: list[Event | Finder] = []
    for item in events:
        if isinstance(item, Event) or callable(getattr(item, "fit", None)):
            out.append(item)
        elif callable(item):
            out.append(Event(getattr(item, "__name__", "event"), item))
        else:
            raise TypeError(f"events must be Event, Finder or callable, got {type(item).__name__}")
    return out


def as_reports(reports: Any) -> Any:
    """``perturb``'s output as the audit reads it, or a ``TypeError`` saying why not.

    An array, a list (read as an array) or a tuple of fields, each an array or a list
    (lists are read as arrays, so a field of Python strings is read like any other);
    anything else (None, a dict, a scalar) cannot hold one report per value.
    """
    if isinstance(reports, tuple):
        parts = [np.asarray(part) if isinstance(part, list) else part for part in reports]
        if not any(isinstance(part, np.ndarray) and part.ndim >= 1 for part in parts):
            raise TypeError("perturb returned a tuple without an array of reports")
        make = getattr(type(reports), "_make", None)
        return make(parts) if make is not None else type(reports)(parts)
    if isinstance(reports, list):
        return np.asarray(reports) if reports else np.zeros(0)
    if not isinstance(reports, np.ndarray) or reports.ndim == 0:
        raise TypeError(
            "perturb must return an array, a list or a tuple of arrays with one report per "
            f"value, got {type(reports).__name__}"
        )
    return reports


class _Sampler:
    """Draws reports of v and v' together from ``perturb`` (see the module docstring)."""

    def __init__(self, mechanism: Any, v: Any, v_prime: Any, rng: np.random.Generator):
        self.mechanism, self.v, self.v_prime, self.rng = mechanism, v, v_prime, rng
        self.batch = PER_CALL if capabilities_of(mechanism).public_per_call else BATCH
        self.support = declared_support(mechanism)
        #: reports of v and of v' outside the declared support, and how many were checked
        self.outside, self.checked = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)
        two, three = self.call(1, 1), self.call(2, 1)
        self.layout = per_report_fields(two, 2)
        if self.layout is not None and self.layout != per_report_fields(three, 3):
            raise ValueError("perturb's fields must keep their length or hold one per report")

    def call(self, n: int, n_other: int) -> Any:
        reports = as_reports(
            self.mechanism.perturb(_mixed(self.v, self.v_prime, n, n_other), self.rng)
        )
        if count(reports) != n + n_other:
            raise ValueError(f"perturb returned {count(reports)} reports for {n + n_other} values")
        if self.support is not None:  # every report drawn
            inside = np.asarray(self.support(reports), dtype=bool)
            self.outside += int(np.sum(~inside[:n])), int(np.sum(~inside[n:]))
            self.checked += n, n_other
        return reports

    def split(self, reports: Any, n: int) -> tuple[Any, Any]:
        total = count(reports)
        return take(reports, slice(0, n), self.layout), take(reports, slice(n, total), self.layout)

    def draw(self, n: int, batch: int | None = None, start: int = 0):
        """Pairs (reports of v, reports of v'), n of each in all, from calls of ``batch``
        (from the ``start``-th report on: the batches a draw from 0 gives after it)."""
        batch = self.batch if batch is None else batch
        for begin in range(start, n, batch):
            size = min(batch, n - begin)
            yield self.split(self.call(size, size), size)


def _nbytes(reports: Any) -> int:
    parts = reports if isinstance(reports, tuple) else (reports,)
    return sum(_nbytes(p) if isinstance(p, tuple) else getattr(p, "nbytes", 0) for p in parts)


class _Prefetch:
    """The fresh sample's first batches, drawn in a thread while the search runs.

    It draws the full batches every evaluation size begins with (those within the first
    ``rest`` reports), in the order and sizes the evaluation's own loop draws them, until
    they hold ``max_bytes``.  The search reads no random numbers and calls no ``perturb``,
    so the audit's results are those of drawing the batches after it; the two cores of a
    machine draw and search at once (numpy's generators and the compiled kernels release
    the interpreter's lock).
    """

    def __init__(self, sampler: _Sampler, rest: int, max_bytes: int) -> None:
        self.batches: list[tuple[Any, Any]] = []
        self.error: BaseException | None = None
        self.stop = threading.Event()
        full = (rest // sampler.batch) * sampler.batch
        self.thread = threading.Thread(
            target=self._run, args=(sampler, full, max_bytes), daemon=True
        )
        self.thread.start()

    def _run(self, sampler: _Sampler, full: int, max_bytes: int) -> None:
        held = 0
        try:
            for pair in sampler.draw(full):
                self.batches.append(pair)
                held += _nbytes(pair)
                if held >= max_bytes or self.stop.is_set():
                    break
        except BaseException as error:  # raised again in the caller's thread
            self.error = error

    def result(self) -> list[tuple[Any, Any]]:
        """The batches drawn (after the thread ends); its error, if it raised one."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.batches

    def cancel(self) -> None:
        self.stop.set()
        self.thread.join()


def _structure(mechanism: Any, v: Any, v_prime: Any, rng: np.random.Generator, level: float):
    """The structure stage: one value per call; its best event's (name, k, k', n)."""

    def signatures(first: bool, calls: int) -> list[str]:
        out = []
        for _ in range(calls):  # the input typed as in the other stages
            values = _mixed(v, v_prime, 1, 0) if first else _mixed(v, v_prime, 0, 1)
            reports = as_reports(mechanism.perturb(values, rng))
            out.append(f"{count(reports)} reports: {signature(reports)}")
        return out

    seen, seen_other = signatures(True, STRUCTURE_TRAINING), signatures(False, STRUCTURE_TRAINING)
    if set(seen) == set(seen_other) and len(set(seen)) == 1:
        return None  # one structure for both inputs: nothing to count
    table = sorted(set(seen) | set(seen_other))

    def codes(found: list[str]) -> np.ndarray:
        return np.array([table.index(x) if x in table else len(table) for x in found])

    search = FeatureSearch(name="structure", level=level)
    found = search.fit(codes(seen), codes(seen_other))
    if not found:
        return None
    chosen = [sig for i, sig in enumerate(table) if found[0].test(np.array([i]))[0]]
    event = Event(f"structure of one call's output in {chosen}", found[0].test, found[0].favours)
    a = codes(signatures(True, STRUCTURE_CALLS))
    b = codes(signatures(False, STRUCTURE_CALLS))
    return event, int(event.test(a).sum()), int(event.test(b).sum()), STRUCTURE_CALLS


def lower_bound(
    mechanism: Any,
    v: Any,
    v_prime: Any,
    *,
    rng: np.random.Generator,
    trials: int = TRIALS,
    alpha: float = 0.01,
    events: Sequence[Event | Finder | Callable] | None = None,
    max_trials: int | None = None,
    structure: bool | None = None,
) -> AuditResult:
    """An empirical lower bound on the privacy loss of ``mechanism`` between v and v'.

    Parameters
    ----------
    mechanism :
        Any object with ``perturb(values, rng)`` returning one report per value (an array,
        or a tuple of per-report arrays such as ``HashReports``): an oracle of
        :mod:`ldp.oracles`, a heavy hitter's per-user client, or your own mechanism.
        Optional hooks: ``audit_events(v, v')``, ``audit_features(v, v')``,
        ``oracle_input(value)`` (:func:`ldp.audit.events.default_events`), ``epsilon`` (the
        claim the adaptive stage aims past) and ``capabilities`` (:mod:`ldp.contract`).
    v, v_prime :
        The two inputs (integers, rows of uint64 words for domains beyond 2^64, or floats
        for a mechanism on real values).
    rng : numpy.random.Generator
        Drives ``perturb``.
    trials : int, default TRIALS (200_000)
        Reports drawn per input: half to train the search, half to count on; fixed events
        are counted on all.  :func:`ldp.audit.trials_needed` sizes it.
    alpha : float, default 0.01
        The false-alarm rate: the probability that the bound exceeds the true loss.
    events : sequence of Event, Finder or callable, optional
        Replaces the default events (:func:`ldp.audit.events.default_events`).
    max_trials : int, optional
        The most fresh reports per input the search's event may be counted on (default
        16 x trials); ``trials`` turns the adaptive stage off.
    structure : bool, optional
        Run the structure stage (one more hypothesis, ~64 calls when nothing differs);
        by default with the default events only (given ``events`` are the hypotheses).

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
    max_trials = (
        16 * trials if max_trials is None else check_int(max_trials, "max_trials", minimum=2)
    )
    if np.array_equal(np.asarray(v), np.asarray(v_prime)):
        raise ValueError("v and v_prime must differ")
    claim = getattr(mechanism, "epsilon", None)
    target = float(claim) if isinstance(claim, int | float) and math.isfinite(claim) else None

    sampler = _Sampler(mechanism, v, v_prime, rng)
    half = trials // 2
    rest = trials - half
    # training: one call (public draws of one call are fine: it only chooses events)
    first, first_other = next(sampler.draw(half, batch=max(half, 1)))
    structure = events is None if structure is None else bool(structure)
    if events is None:
        chosen = default_events(mechanism, v, v_prime, first)
    else:
        chosen = _as_events(events)
    fixed = [e for e in chosen if isinstance(e, Event)]
    finders = [e for e in chosen if not isinstance(e, Event)]
    declared_law = isinstance(mechanism, HasReportLaw) and events is None
    hypotheses = sum(len(e.directions()) for e in fixed) + len(finders) + int(structure)
    hypotheses += int(declared_law)
    if hypotheses == 0:
        raise ValueError("events must not be empty")
    level = alpha / (2 * hypotheses)

    sizes = [rest]
    while sizes[-1] * GROWTH <= max_trials:
        sizes.append(sizes[-1] * GROWTH)
    fitted: list[Event] = []
    evaluation = rest
    prefetch = _Prefetch(sampler, rest, _nbytes((first, first_other))) if finders else None
    try:
        for finder in finders:
            if isinstance(finder, FeatureSearch):
                search = FeatureSearch(finder.name, finder.features, level, layout=sampler.layout)
                candidates = search.candidates(first, first_other, sizes)
                event, size = _choose(search, candidates, sizes, target, first, first_other)
                evaluation = max(evaluation, size)
                found = [] if event is None else [event]
            else:
                found = finder.fit(first, first_other)[:1]  # one hypothesis per finder
            fitted += [Event(e.name, e.test, e.favours or 1) for e in found]
    except BaseException:
        if prefetch is not None:
            prefetch.cancel()
        raise
    prefetched = prefetch.result() if prefetch is not None else []

    inside = np.zeros((len(fixed), 2), dtype=np.int64)
    inside_fitted = np.zeros((len(fitted), 2), dtype=np.int64)
    for i, event in enumerate(fixed):
        inside[i] = event.test(first).sum(), event.test(first_other).sum()
    drawn = 0
    later = sampler.draw(evaluation, start=len(prefetched) * sampler.batch)
    for batch, batch_other in itertools.chain(prefetched, later):
        size = count(batch)
        fresh = min(size, max(0, rest - drawn))  # fixed events: the first `rest` only
        if fresh:
            head, head_other = (
                (batch, batch_other)
                if fresh == size
                else sampler_heads(sampler, batch, batch_other, fresh)
            )
            for i, event in enumerate(fixed):
                inside[i] += event.test(head).sum(), event.test(head_other).sum()
        for i, event in enumerate(fitted):
            inside_fitted[i] += event.test(batch).sum(), event.test(batch_other).sum()
        drawn += size

    results = []
    for group, counts, n in ((fixed, inside, trials), (fitted, inside_fitted, evaluation)):
        for event, (k, k_other) in zip(group, counts, strict=True):
            for direction in event.directions():
                results.append(_hypothesis(event.name, direction, int(k), int(k_other), n, level))
    if structure:
        found = _structure(mechanism, v, v_prime, rng, level)
        if found is not None:
            event, k, k_other, n = found
            for direction in event.directions():
                results.append(_hypothesis(event.name, direction, k, k_other, n, level))
    if sampler.outside.any():  # declared impossible: no sampling error, an unbounded loss
        k, k_other = (int(x) for x in sampler.outside)
        favours = "v" if k >= k_other else "v'"
        n = int(sampler.checked[0 if favours == "v" else 1])
        name = f"report outside the declared support ({k} of v's, {k_other} of v''s)"
        results.append(
            EventResult(
                name,
                favours,
                max(k, k_other),
                min(k, k_other),
                n,
                max(k, k_other) / max(n, 1),
                0.0,
                math.inf,
            )
        )
    law = None
    if declared_law:  # one hypothesis at alpha/m, on reports of its own
        drawn_law = [(np.asarray(a), np.asarray(b)) for a, b in sampler.draw(rest)]
        samples = {
            float(v): np.concatenate([a for a, _ in drawn_law]),
            float(v_prime): np.concatenate([b for _, b in drawn_law]),
        }
        law = check_law(mechanism, samples, alpha / hypotheses)
    if not results:
        results.append(EventResult("no event", "v", 0, 0, trials, 0.0, 1.0, -math.inf))
    best = max(results, key=lambda r: r.epsilon)
    positive = best.epsilon > 0
    return AuditResult(
        epsilon=best.epsilon if positive else 0.0,
        best=best if positive else None,
        events=tuple(results),
        alpha=alpha,
        hypotheses=hypotheses,
        trials=trials,
        evaluation=evaluation,
        law=law,
    )


def sampler_heads(sampler: _Sampler, batch: Any, batch_other: Any, n: int) -> tuple[Any, Any]:
    """The first n reports of each input's batch."""
    return take(batch, slice(0, n), sampler.layout), take(batch_other, slice(0, n), sampler.layout)


def _hypothesis(name: str, direction: int, k: int, k_other: int, n: int, level: float):
    if direction < 0:
        k, k_other = k_other, k
    lower = float(clopper_pearson_lower(k, n, level))
    upper = float(clopper_pearson_upper(k_other, n, level))
    epsilon = math.log(lower) - math.log(upper) if lower > 0 else -math.inf
    return EventResult(name, "v" if direction > 0 else "v'", k, k_other, n, lower, upper, epsilon)
