"""The memory and time budget every protocol checks a call against before it allocates.

A protocol estimates, from its parameters and the sizes it is given, the bytes its largest
arrays would take and the elementary operations (hash evaluations, random draws, array
cells touched) its work would cost, and refuses with :class:`ldp.validation.ParameterError`
naming the parameter, the estimate and the limit when either exceeds the budget, before
anything is allocated or drawn.  Nothing here measures the machine: the budget is a
setting, with defaults that suit a laptop.

One setting, three places to raise it (the first that is set wins):

1. :func:`limits`, a context manager (it also works as a decorator):
   ``with ldp.budget.limits(memory_bytes=16 * 2**30): ...``;
2. the environment variables ``LDP_MEMORY_BYTES`` and ``LDP_MAX_OPERATIONS`` (read at each
   check, so they reach joblib and Dask workers, which do not see a context manager);
3. the defaults, :data:`DEFAULT_MEMORY_BYTES` (4 GiB) and :data:`DEFAULT_OPERATIONS`
   (2^34, about a minute of vectorised numpy work).

See ``docs/limits.md`` for what each protocol counts.

>>> from ldp import budget
>>> with budget.limits(memory_bytes="1 GiB"):
...     budget.current().memory_bytes
1073741824
>>> budget.format_bytes(9_621_000_000)
'8.96 GiB'
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import numbers
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from ldp.validation import ParameterError

#: The default memory budget: the largest arrays one call may build.
DEFAULT_MEMORY_BYTES = 4 * 2**30
#: The default time budget, in elementary operations (a hash, a draw, a cell touched).
DEFAULT_OPERATIONS = 2**34
#: The environment variables that set the budget (bytes; operations).
MEMORY_VARIABLE = "LDP_MEMORY_BYTES"
OPERATIONS_VARIABLE = "LDP_MAX_OPERATIONS"
#: Bytes one oracle query (a candidate) holds in an estimate: the candidate, its support
#: count, its estimate and a temporary, 8 bytes each (hashed oracles add their tables,
#: which they check themselves).
QUERY_BYTES = 32
#: How to raise the budget, quoted in every refusal.
HOW_TO_RAISE = (
    "raise it with ldp.budget.limits(memory_bytes=..., operations=...) or the environment "
    f"variables {MEMORY_VARIABLE} / {OPERATIONS_VARIABLE}"
)

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "m": 10**6,
    "mb": 10**6,
    "g": 10**9,
    "gb": 10**9,
    "t": 10**12,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


@dataclass(frozen=True)
class Budget:
    """The limits in force.

    Attributes
    ----------
    memory_bytes : int
        The most bytes the arrays of one call may take.
    operations : int
        The most elementary operations one call may cost.
    """

    memory_bytes: int
    operations: int


_OVERRIDE: contextvars.ContextVar[Budget | None] = contextvars.ContextVar(
    "ldp_budget", default=None
)


@dataclass(frozen=True)
class Charge:
    """One check of the budget, refused or not, as :func:`recorded` keeps it.

    Attributes
    ----------
    kind : str
        ``"memory"`` (``amount`` in bytes) or ``"operations"``.
    amount : float
        What the check counted.
    parameter : str
        The parameter a refusal would blame.
    what : str
        What the check counted, in words.
    site : str
        The function that asked, ``module:qualified name`` (``ldp.oracles.flh:FLH.lookup``).
    """

    kind: str
    amount: float
    parameter: str
    what: str
    site: str


_CHARGES: contextvars.ContextVar[list[Charge] | None] = contextvars.ContextVar(
    "ldp_budget_charges", default=None
)


@contextlib.contextmanager
def recorded() -> Iterator[list[Charge]]:
    """Keep every check made inside the block, in order, whether it refused or not.

    The checks count; nothing here measures.  ``python -m benchmarks --only budget`` puts
    each budgeted operation's measured seconds and peak memory beside what it counted
    (the table in ``docs/limits.md``).

    >>> import numpy as np
    >>> from ldp.oracles import GRR
    >>> with recorded() as charges:
    ...     _ = GRR(epsilon=1.0, domain_size=8).estimate(np.zeros(4, dtype=np.int64))
    >>> charges[0].site, charges[0].kind, charges[0].amount
    ('ldp.oracles.base:FrequencyOracle.check_full_domain', 'memory', 256.0)
    """
    charges: list[Charge] = []
    token = _CHARGES.set(charges)
    try:
        yield charges
    finally:
        _CHARGES.reset(token)


def _record(kind: str, amount: float, parameter: str, what: str) -> None:
    charges = _CHARGES.get()
    if charges is None:
        return
    frame = sys._getframe(2)  # the caller of check_memory / check_operations
    while frame.f_back is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back  # check_rounds, check_query_limit: the function that asked
    site = f"{frame.f_globals.get('__name__', '?')}:{frame.f_code.co_qualname}"
    charges.append(Charge(kind, float(amount), parameter, what, site))


def parse_amount(value: object, name: str) -> int:
    """A positive amount as an int: a number, or a string such as ``"8 GiB"`` or ``"1e10"``."""
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9.eE+_]+)\s*([A-Za-z]*)\s*", value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise ParameterError(
                name, value, "a positive number, optionally with a unit (B, KiB, MiB, GiB, GB)"
            )
        try:
            number = float(match.group(1)) * _UNITS[unit]
        except ValueError:
            raise ParameterError(name, value, "a positive number") from None
    elif isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number of bytes or a string, got {type(value).__name__}")
    else:
        number = float(value)
    if not math.isfinite(number) or number < 1:
        raise ParameterError(name, value, ">= 1 and finite")
    return int(number)


def _from_environment(variable: str, default: int) -> int:
    raw = os.environ.get(variable, "").strip()
    return _parsed(raw, variable) if raw else default


@functools.lru_cache(maxsize=64)
def _parsed(raw: str, variable: str) -> int:
    """:func:`parse_amount` of an environment value, once per distinct value (the budget is
    read on every protocol call)."""
    return parse_amount(raw, variable)


def current() -> Budget:
    """The budget in force: :func:`limits` if inside one, else the environment, else defaults."""
    override = _OVERRIDE.get()
    if override is not None:
        return override
    return Budget(
        memory_bytes=_from_environment(MEMORY_VARIABLE, DEFAULT_MEMORY_BYTES),
        operations=_from_environment(OPERATIONS_VARIABLE, DEFAULT_OPERATIONS),
    )


@contextlib.contextmanager
def limits(
    *, memory_bytes: int | str | None = None, operations: int | str | None = None
) -> Iterator[Budget]:
    """Raise (or lower) the budget inside a ``with`` block; ``None`` keeps the current value.

    Parameters
    ----------
    memory_bytes : int or str, optional
        Bytes, or a string with a unit (``"16 GiB"``).
    operations : int or str, optional
        Elementary operations (``10**11``, ``"1e11"``).

    Yields
    ------
    Budget
        The budget in force inside the block.
    """
    base = current()
    chosen = Budget(
        memory_bytes=base.memory_bytes
        if memory_bytes is None
        else parse_amount(memory_bytes, "memory_bytes"),
        operations=base.operations
        if operations is None
        else parse_amount(operations, "operations"),
    )
    token = _OVERRIDE.set(chosen)
    try:
        yield chosen
    finally:
        _OVERRIDE.reset(token)


def format_bytes(size: float) -> str:
    """``9621000000`` -> ``'8.96 GiB'`` (binary units, three significant digits)."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{int(size)} B"


def check_memory(name: str, value: object, allowed: str, size: float, what: str) -> None:
    """Refuse ``value`` of parameter ``name`` when ``what`` would take more than the budget.

    Parameters
    ----------
    name, value :
        The parameter to blame and its value (as :class:`ParameterError` reports them).
    allowed : str
        The range that would fit, in words (``"<= 11.2 for FLH with k_prime = 1000"``).
    size : float
        The estimated bytes.
    what : str
        What would take them (``"the k' x g table"``).
    """
    _record("memory", size, name, what)
    limit = current().memory_bytes
    if size > limit:
        raise ParameterError(
            name,
            value,
            allowed,
            detail=f"{what} would take {format_bytes(size)}, over the "
            f"{format_bytes(limit)} memory budget; {HOW_TO_RAISE}",
        )


def check_operations(name: str, value: object, allowed: str, count: float, what: str) -> None:
    """Refuse ``value`` of ``name`` when ``what`` would cost more operations than the budget."""
    _record("operations", count, name, what)
    limit = current().operations
    if count > limit:
        raise ParameterError(
            name,
            value,
            allowed,
            detail=f"{what} would cost {count:.3g} operations, over the budget of "
            f"{limit:.3g}; {HOW_TO_RAISE}",
        )


#: Operations one collection round costs beyond its users' work in ``perturb_rounds``: the
#: Python and numpy call overhead of a round, measured at 22-46 µs for the longitudinal
#: protocols with 10 users (``2**34`` operations is about a minute of one core).
ROUND_OPERATIONS = 2**14


def check_rounds(tau: int, what: str) -> None:
    """Refuse ``tau`` collection rounds whose per-round overhead alone exceeds the
    operation budget (the users' reports are the memory budget's: ``check_report_size``)."""
    check_operations(
        "values",
        f"{tau} rounds",
        f"at most {current().operations // ROUND_OPERATIONS} rounds per perturb_rounds call",
        float(tau) * ROUND_OPERATIONS,
        f"{what} over {tau} rounds ({ROUND_OPERATIONS} operations a round)",
    )


def check_query_limit(query_limit: int, name: str = "query_limit") -> int:
    """Refuse a heavy hitter's query limit whose candidates alone would exceed the budget.

    A query limit Q lets one round estimate Q candidates: ``QUERY_BYTES`` Q bytes at least,
    before any oracle-specific table.  Returns ``query_limit`` unchanged when it fits.
    """
    most = current().memory_bytes // QUERY_BYTES
    check_memory(
        name,
        query_limit,
        f"<= {most} under the memory budget",
        QUERY_BYTES * float(query_limit),
        f"estimating {query_limit} candidates in one round",
    )
    return query_limit
