"""Property-based fuzzing of every registered protocol with hostile parameters.

For each protocol of :func:`ldp.registry.protocols`, hypothesis draws its context
(``epsilon`` and ``domain_size``, or ``epsilon``, ``k`` and ``m``) and each of its own
parameters (:func:`ldp.registry.parameters`, by declared type) from a mix of ordinary and
hostile values: huge, tiny, zero, negative, NaN, ±inf, the wrong type, bools.  Then it
builds the protocol and, if that succeeds, runs it on a small input: an oracle's
``perturb``, ``estimate`` (a few candidates), ``simulate``, ``simulate_candidates`` and
``variance``; a heavy hitter's ``run`` on 40 users with each engine; a set protocol's
``top_items`` on 40 users' sets with each engine (and, for one that estimates every item,
its ``estimate`` and ``variances`` on a few candidates).

The property: every step either returns a finite result, its peak allocation (traced by
``tracemalloc``, numpy's arrays included) within a memory budget lowered to 256 MiB (so
anything large must be refused by the protocol, not attempted), or raises a clear
error: a ``TypeError``, or a ``ValueError`` (``ParameterError`` included) whose message
names a parameter or argument.  Anything else (an ``IndexError``, an
``OverflowError``, a numba or scipy failure, a silent NaN) is a defect.

Deterministic (``derandomize=True``, no example database), about a minute in all.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from ldp import budget, registry
from ldp.datasets.base import Dataset

#: The budget the fuzzed calls run under: small, so that a large request must be refused.
FUZZ_MEMORY = "256 MiB"
FUZZ_OPERATIONS = 2**28
#: Examples per protocol (oracles are cheap; a heavy-hitter run costs more).
EXAMPLES = {"oracle": 100, "heavy_hitter": 60, "set": 60}


def fuzz_settings(kind: str) -> settings:
    return settings(
        max_examples=EXAMPLES[kind],
        deadline=None,
        derandomize=True,
        database=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


HOSTILE_FLOATS = st.one_of(
    st.sampled_from(
        [0.0, -0.0, -1.0, 1e-300, 1e-9, 1e-6, 0.01, 0.5, 1.0, 2.0, 4.0, 8.0, 14.0, 30.0]
        + [40.0, 100.0, 700.0, 701.0, 1e308, math.nan, math.inf, -math.inf]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
)
HOSTILE_INTS = st.one_of(
    st.sampled_from([0, 1, 2, 3, 8, 64, 1000, 2**20, 2**31, 2**35, 2**62, 2**64, 2**100, -1]),
    st.integers(min_value=-(2**70), max_value=2**70),
)
WRONG_TYPE = st.one_of(st.booleans(), st.none(), st.text(max_size=3), st.just([1, 2]))

#: Ordinary values of the context, drawn three times in four: a fuzz whose every example
#: fails at construction would test nothing after it.
ORDINARY = {
    "epsilon": st.floats(0.05, 12.0),
    "domain_size": st.sampled_from([2, 3, 5, 8, 16, 100, 1000, 2**16, 2**20, 2**35, 2**62]),
    "k": st.integers(1, 8),
    "m": st.sampled_from([2, 8, 12, 16, 32, 64]),
}
HOSTILE = {
    "epsilon": st.one_of(HOSTILE_FLOATS, st.integers(-3, 50), WRONG_TYPE),
    "domain_size": st.one_of(
        st.sampled_from([2**31, 2**64 + 1, 2**100]), HOSTILE_INTS, HOSTILE_FLOATS, WRONG_TYPE
    ),
    "k": st.one_of(HOSTILE_INTS, WRONG_TYPE),
    "m": st.one_of(st.sampled_from([1, 65, 4096, 4097]), HOSTILE_INTS, WRONG_TYPE),
}


def ordinary_strategy(annotation: str) -> st.SearchStrategy:
    """Plausible values for a parameter declared with this (string) annotation."""
    literal = re.findall(r"'([^']*)'", annotation)
    if literal:
        return st.sampled_from(literal)
    if "type[" in annotation:
        return st.sampled_from(["OLH", "GRR", "OUE", "HR", "FLH", "SS"])
    if "tuple" in annotation:
        return st.lists(st.integers(1, 8), min_size=1, max_size=4).map(tuple)
    options = []
    if "int" in annotation:
        options.append(st.integers(1, 2**12))
    if "float" in annotation:
        options.append(st.floats(0.001, 0.999))
    if "str" in annotation:
        options.append(st.sampled_from(["improved", "original", "partitioned", "auto"]))
    if "bool" in annotation:
        options.append(st.booleans())
    return st.one_of(*options) if options else st.none()


def hostile_strategy(annotation: str) -> st.SearchStrategy:
    """Hostile values for a parameter declared with this (string) annotation."""
    options: list[st.SearchStrategy] = [WRONG_TYPE]
    if "tuple" in annotation:
        options.append(st.lists(st.one_of(HOSTILE_INTS, HOSTILE_FLOATS), max_size=4).map(tuple))
    if "int" in annotation:
        options.append(HOSTILE_INTS)
    if "float" in annotation:
        options.append(HOSTILE_FLOATS)
    if "str" in annotation or "type[" in annotation:
        options.append(st.sampled_from(["", "x", "NOPE", "PEM", "olh"]))
    return st.one_of(*options)


def names_a_parameter(error: BaseException, names: set[str]) -> bool:
    if getattr(error, "name", None) in names:
        return True
    message = str(error)
    return any(re.search(rf"\b{re.escape(name)}\b", message) for name in names)


#: Arguments of the calls, which an error may name as well as the parameters.
CALL_ARGUMENTS = {
    "values",
    "reports",
    "candidates",
    "true_counts",
    "candidate_counts",
    "n_users",
    "true_count",
    "rng",
    "dataset",
    "k",
    "m",
    "threshold",
    "sets",
    "item",
}


def check_clear(error: BaseException, names: set[str]) -> None:
    """A refusal must be a TypeError, or a ValueError naming a parameter or argument."""
    if isinstance(error, TypeError):
        return
    assert isinstance(error, ValueError), f"{type(error).__name__}: {error}"
    assert names_a_parameter(error, names), f"names no parameter: {error}"


def check_finite(result: object) -> None:
    array = np.asarray(result, dtype=float)
    assert np.all(np.isfinite(array)), f"non-finite result {array}"


def attempt(call, names: set[str], step: str = "call"):
    """The call's result, or None after checking its error is a clear one; either way its
    peak traced allocation (numpy's arrays included) stays within the budget."""
    tracemalloc.start()
    try:
        result = call()
    except (TypeError, ValueError) as error:
        check_clear(error, names)
        event(f"{step} refused: {type(error).__name__}")
        result = None
    else:
        event(f"{step} ran")
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    limit = budget.current().memory_bytes
    assert peak <= limit, f"{step} allocated {budget.format_bytes(peak)}, over {limit}"
    return result


def draw_parameters(data: st.DataObject, entry: registry.Protocol) -> dict[str, object]:
    """The context three times in four ordinary; up to two parameters set, ordinary or hostile."""
    kwargs: dict[str, object] = {}
    for name in registry.CONTEXT[entry.kind]:
        hostile = data.draw(st.integers(0, 3), label=f"{name} hostile") == 0
        kwargs[name] = data.draw((HOSTILE if hostile else ORDINARY)[name], label=name)
    fields = registry.parameters(entry.cls)
    chosen = (
        data.draw(st.lists(st.sampled_from(fields), max_size=2, unique_by=lambda f: f.name))
        if fields
        else []
    )
    for field in chosen:
        hostile = data.draw(st.booleans(), label=f"{field.name} hostile")
        strategy = hostile_strategy if hostile else ordinary_strategy
        kwargs[field.name] = data.draw(strategy(str(field.type)), label=field.name)
    return kwargs


def exercise_oracle(oracle, names: set[str]) -> None:
    d = oracle.domain_size
    rng = np.random.default_rng(0)
    small = min(d, 2**62)
    count = min(d, 6)
    if d <= 2**64:
        values = rng.integers(0, small, size=30, dtype=np.int64)
        if d > 2**62:
            values = values.astype(np.uint64)
        reports = attempt(lambda: oracle.perturb(values, rng), names, "perturb")
        candidates = np.arange(count, dtype=values.dtype)
        if reports is not None:
            estimate = attempt(lambda: oracle.estimate(reports, candidates=candidates), names)
            if estimate is not None:  # None: refused with a clear error (checked)
                check_finite(estimate)
        if d <= 4096:
            counts = np.bincount(values, minlength=d).astype(np.int64)
            result = attempt(lambda: oracle.simulate(counts, rng, candidates=candidates), names)
            if result is not None:
                check_finite(result)
    held = np.arange(count, dtype=np.int64)  # the population: value i held by i users
    result = attempt(lambda: oracle.simulate_candidates(held, held, held, rng), names)
    if result is not None:
        check_finite(result)
    variance = attempt(lambda: oracle.variance(100, 3), names)
    if variance is not None:
        check_finite(variance)
        assert variance >= 0


def exercise_heavy_hitter(protocol, names: set[str]) -> None:
    m = protocol.m
    if m > 64:
        return  # wider values are 2-D words; their runs are covered by the heavy-hitter tests
    rng = np.random.default_rng(0)
    top = 2**m - 1
    values = rng.integers(0, min(top, 2**63 - 1), size=40, dtype=np.uint64, endpoint=True)
    values[:20] = values[0]  # one heavy value
    data = Dataset(name="fuzz", values=values, m=m, source="synthetic")
    for engine in ("sampled", "reports"):
        run = functools.partial(protocol.run, data, rng, engine=engine)
        result = attempt(run, names, f"run {engine}")
        if result is not None:
            check_finite(result.estimates)


def exercise_set_protocol(protocol, names: set[str]) -> None:
    d = protocol.domain_size
    rng = np.random.default_rng(0)
    width = int(min(d, 5))
    rows = np.full((40, width), -1, dtype=np.int64)
    for user in range(40):  # 0 to `width` distinct items, item 0 in half of the sets
        size = user % (width + 1)
        picked = rng.choice(min(d, 2**62), size=size, replace=False) if size else []
        rows[user, :size] = np.sort(picked)
    k = int(min(d, 3))
    for engine in ("sampled", "reports"):
        run = functools.partial(protocol.top_items, rows, k, rng, engine=engine)
        result = attempt(run, names, f"top_items {engine}")
        if result is not None:
            check_finite(result.estimates)
    if hasattr(protocol, "variances"):
        candidates = np.arange(k, dtype=np.int64)
        reports = attempt(lambda: protocol.perturb(rows, rng), names, "perturb")
        if reports is not None:
            estimate = attempt(lambda: protocol.estimate(reports, candidates), names)
            if estimate is not None:
                check_finite(estimate)
        variances = attempt(lambda: protocol.variances(rows, candidates), names)
        if variances is not None:
            check_finite(variances)
            assert np.all(np.asarray(variances) >= 0)


def fuzz_one(name: str, data: st.DataObject) -> None:
    entry = registry.get(name)
    names = {f.name for f in dataclasses.fields(entry.cls)} | CALL_ARGUMENTS
    kwargs = draw_parameters(data, entry)
    with budget.limits(memory_bytes=FUZZ_MEMORY, operations=FUZZ_OPERATIONS):
        protocol = attempt(lambda: entry.cls(**kwargs), names, "build")
        if protocol is None:
            return
        if entry.kind == "oracle":
            exercise_oracle(protocol, names)
        elif entry.kind == "set":
            exercise_set_protocol(protocol, names)
        else:
            exercise_heavy_hitter(protocol, names)


@pytest.mark.parametrize("name", list(registry.protocols("oracle")))
@fuzz_settings("oracle")
@given(data=st.data())
def test_oracles_give_a_clear_error_or_a_bounded_result(name: str, data: st.DataObject) -> None:
    fuzz_one(name, data)


@pytest.mark.parametrize("name", list(registry.protocols("heavy_hitter")))
@fuzz_settings("heavy_hitter")
@given(data=st.data())
def test_heavy_hitters_give_a_clear_error_or_a_bounded_result(
    name: str, data: st.DataObject
) -> None:
    fuzz_one(name, data)


@pytest.mark.parametrize("name", list(registry.protocols("set")))
@fuzz_settings("set")
@given(data=st.data())
def test_set_protocols_give_a_clear_error_or_a_bounded_result(
    name: str, data: st.DataObject
) -> None:
    fuzz_one(name, data)
