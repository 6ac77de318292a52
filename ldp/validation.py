"""Parameter checks shared by every protocol: the one public place inputs are validated.

Every check raises before any randomness is drawn.  A value of the wrong kind raises
``TypeError``; a value out of range raises :class:`ParameterError` (a ``ValueError``)
whose attributes carry the parameter's name, the value and the allowed range, so a caller
(the harness, a plug-in's tests) reads them instead of parsing the message.

>>> from ldp.validation import ParameterError, check_int
>>> try:
...     check_int(1, "g", minimum=2)
... except ParameterError as error:
...     (error.name, error.value, error.allowed)
('g', 1, '>= 2')
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np


class ParameterError(ValueError):
    """A parameter outside its allowed range.

    Attributes
    ----------
    name : str
        The parameter's name as the caller spelled it (``"epsilon"``, ``"g"``).
    value : object
        The value that was refused.
    allowed : str
        The allowed range in words (``"> 0"``, ``"in [2, 2**20]"``).
    detail : str
        Why, when the range is not obvious (appended in parentheses).
    message : str, optional
        The whole message, when a sentence reads better than the default
        ``"<name> must be <allowed> (<detail>), got <value>"``.
    """

    def __init__(
        self, name: str, value: object, allowed: str, detail: str = "", *, message: str = ""
    ) -> None:
        self.name, self.value, self.allowed, self.detail = name, value, allowed, detail
        reason = f" ({detail})" if detail else ""
        self.message = message or f"{name} must be {allowed}{reason}, got {value}"
        super().__init__(self.message)

    def __reduce__(self):  # keep the attributes across pickling (joblib workers)
        return (
            _rebuild,
            (type(self), self.name, self.value, self.allowed, self.detail, self.message),
        )


def _rebuild(cls, name, value, allowed, detail, message):  # pickling with a keyword argument
    return cls(name, value, allowed, detail, message=message)


#: Above this, e^epsilon overflows float64 arithmetic in the variance formulas.
MAX_EPSILON = 700.0
#: Below this, p* - q* is lost to rounding (e^epsilon - 1 ~ epsilon) and estimates divide by ~0.
MIN_EPSILON = 1e-6
#: The most users a count vector may describe: its sum must fit an int64.
MAX_USERS = 2**63 - 1


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking 0 < epsilon <= MAX_EPSILON."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    value = float(epsilon)
    if not math.isfinite(value):
        raise ParameterError(name, value, "finite")
    if value <= 0:
        raise ParameterError(name, value, "> 0")
    if value < MIN_EPSILON:
        raise ParameterError(name, value, f">= {MIN_EPSILON}", "p* - q* vanishes")
    if value > MAX_EPSILON:
        raise ParameterError(name, value, f"<= {MAX_EPSILON}", f"e^{name} overflows")
    return value


def check_int(value: object, name: str, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as a Python int after checking minimum <= value (<= maximum)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if value < minimum:
        raise ParameterError(name, value, f">= {minimum}")
    if maximum is not None and value > maximum:
        raise ParameterError(name, value, f"<= {maximum}")
    return value


def check_real(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    open_minimum: bool = False,
    open_maximum: bool = False,
) -> float:
    """Return ``value`` as a finite float after checking it lies in the given interval.

    ``open_minimum``/``open_maximum`` exclude the bound itself: ``check_real(x, "beta",
    minimum=0, maximum=1, open_minimum=True, open_maximum=True)`` accepts (0, 1).

    >>> check_real(0.5, "beta", minimum=0, maximum=1, open_minimum=True, open_maximum=True)
    0.5
    >>> check_real(1.0, "beta", minimum=0, maximum=1, open_maximum=True)
    Traceback (most recent call last):
    ...
    ldp.validation.ParameterError: beta must lie in [0, 1), got 1.0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    number = float(value)
    below = minimum is not None and (number <= minimum if open_minimum else number < minimum)
    above = maximum is not None and (number >= maximum if open_maximum else number > maximum)
    if math.isnan(number) or below or above or math.isinf(number):
        allowed = _interval(minimum, maximum, open_minimum, open_maximum)
        wording = allowed.replace("in ", "lie in ", 1) if allowed.startswith("in ") else allowed
        raise ParameterError(name, value, allowed, message=f"{name} must {wording}, got {value}")
    return number


def _interval(
    minimum: float | None, maximum: float | None, open_minimum: bool, open_maximum: bool
) -> str:
    """The allowed range in words: "in (0, 1]", "> 0", "<= 5", "finite"."""
    if minimum is not None and maximum is not None:
        left, right = "(" if open_minimum else "[", ")" if open_maximum else "]"
        return f"in {left}{minimum:g}, {maximum:g}{right}"
    if minimum is not None:
        return f"{'>' if open_minimum else '>='} {minimum:g}"
    if maximum is not None:
        return f"{'<' if open_maximum else '<='} {maximum:g}"
    return "finite"


def check_choice(value: object, name: str, choices: Sequence[object]) -> object:
    """Return ``value`` after checking it is one of ``choices``.

    >>> check_choice("split", "budget", ("split", "partition"))
    'split'
    """
    try:
        known = value in choices
    except TypeError:  # an unhashable value against a set
        known = False
    if not known:
        raise ParameterError(name, value, f"one of {tuple(choices)}")
    return value


def check_generator(rng: object) -> np.random.Generator:
    """Protocols take a ``numpy.random.Generator``; they never touch global state."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def _not_one_dimensional(name: str, shape: tuple[int, ...]) -> ParameterError:
    return ParameterError(
        name, shape, "one-dimensional", message=f"{name} must be one-dimensional, got shape {shape}"
    )


def check_values(values: object, domain_size: int, name: str = "values") -> np.ndarray:
    """Check a 1-D integer array of values in [0, domain_size) and return it.

    Values wider than 64 bits (``domain_size > 2**64``) are given as a 2-D ``uint64`` array
    of words, most significant first (see :mod:`ldp.bits`); their range is checked on the
    number of words and on their value.
    """
    array = _integer_array(values, name)
    if domain_size > 2**64:
        # one representation only: a 1-D key would hash as one word, its 2-D twin as several
        bits = (domain_size - 1).bit_length()
        words = -(-bits // 64)
        if array.ndim != 2 or array.dtype != np.uint64 or array.shape[1] != words:
            shape = f"shape {array.shape} {array.dtype}"
            allowed = f"a 2-D uint64 array of {words} words per value"
            raise ParameterError(
                name,
                shape,
                allowed,
                message=f"{name} for a domain of more than 2^64 values must be {allowed}, "
                f"got {shape}",
            )
        # value <= domain_size - 1, compared word by word, most significant first
        above, tied = np.zeros(array.shape[0], dtype=bool), np.ones(array.shape[0], dtype=bool)
        for column in range(words):
            limit = np.uint64(((domain_size - 1) >> (64 * (words - 1 - column))) % 2**64)
            above |= tied & (array[:, column] > limit)
            tied &= array[:, column] == limit
        if above.any():
            row = array[np.argmax(above)].tolist()
            raise ParameterError(
                name,
                row,
                f"in [0, {domain_size})",
                message=f"{name} must lie in [0, {domain_size}), found word row {row}",
            )
        return array
    if array.ndim != 1:
        raise _not_one_dimensional(name, array.shape)
    if array.size:
        low, high = array.min(), array.max()
        if (array.dtype.kind == "i" and low < 0) or int(high) >= domain_size:
            bad = low if array.dtype.kind == "i" and low < 0 else high
            raise ParameterError(
                name,
                int(bad),
                f"in [0, {domain_size})",
                message=f"{name} must lie in [0, {domain_size}), found {int(bad)}",
            )
    return array


def _integer_array(values: object, name: str) -> np.ndarray:
    """``values`` as a numpy array of integers, or a named refusal.

    Another protocol's reports (a named tuple such as ``UnaryReports``) would otherwise reach
    numpy, which either fails with "setting an array element with a sequence" or stacks the
    fields into a 2-D array; both are refused here naming ``name`` and the expected type.
    """
    if isinstance(values, tuple) and hasattr(values, "_fields"):
        raise _wrong_container(name, values)
    try:
        array = np.asarray(values)
    except (ValueError, TypeError):  # ragged nesting: numpy cannot make one array of it
        raise _wrong_container(name, values) from None
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integers, got dtype {array.dtype}")
    return array


def _wrong_container(name: str, values: object) -> ParameterError:
    kind = type(values).__name__
    return ParameterError(
        name,
        kind,
        "an array of integers",
        message=f"{name} must be a numpy array of integers, got a {kind} (another "
        "protocol's reports, such as OUE's UnaryReports, are not this protocol's)",
    )


def check_int_sequence(
    values: object, name: str, *, minimum: int, maximum: int | None = None
) -> tuple[int, ...]:
    """A non-empty sequence of integers, each checked as :func:`check_int` does, as a tuple.

    A single number or a string where a sequence is expected is a ``TypeError`` naming
    ``name`` (not numpy's or Python's "object is not iterable").

    >>> check_int_sequence([3, 2], "etas", minimum=1)
    (3, 2)
    """
    if isinstance(values, str | bytes) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(
            f"{name} must be a sequence of integers (one per step), got {type(values).__name__}"
        )
    if len(values) == 0:
        raise ParameterError(name, values, "at least one entry")
    return tuple(check_int(v, name, minimum=minimum, maximum=maximum) for v in values)


def check_counts(counts: object, length: int | None, name: str = "true_counts") -> np.ndarray:
    """Check a 1-D array of non-negative integer counts (of the given length, if any)."""
    array = np.asarray(counts)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an array of integers, got dtype {array.dtype}")
    if array.ndim != 1 or (length is not None and array.shape[0] != length):
        expected = f"({length},)" if length is not None else "one dimension"
        raise ParameterError(
            name,
            array.shape,
            f"of shape {expected}",
            message=f"{name} must have shape {expected}, got {array.shape}",
        )
    if array.size and array.min() < 0:
        low = int(array.min())
        raise ParameterError(
            name, low, ">= 0 everywhere", message=f"{name} must be non-negative, found {low}"
        )
    if array.size and int(array.max()) > MAX_USERS:
        high = int(array.max())
        raise ParameterError(
            name, high, f"<= {MAX_USERS} everywhere", message=f"{name} must fit int64, found {high}"
        )
    # The total is a number of users (n in every formula): it must be exact in int64. A
    # float sum has relative error far below 2^-10 here, so 2^62 leaves room for it.
    total = float(array.sum(dtype=np.float64)) if array.size else 0.0
    if total >= 2.0**62:
        raise ParameterError(
            name,
            total,
            "a total below 2^62 users",
            message=f"{name} sum to about {total:.3g} users: more than int64 can count "
            "(limit 2^62)",
        )
    return array.astype(np.int64, copy=False)


def check_total(counts: np.ndarray, name: str = "true_counts") -> int:
    """The number of users Σ counts, as a Python int, refused if it exceeds int64.

    ``counts.sum()`` wraps around silently in int64; the sum is taken exactly (in Python
    integers) whenever the worst case could overflow.
    """
    if counts.size == 0:
        return 0
    largest = int(counts.max())
    if largest <= MAX_USERS // counts.size:
        return int(counts.sum())
    total = sum(int(c) for c in counts.tolist())
    if total > MAX_USERS:
        raise ParameterError(
            name,
            total,
            "a total of at most 2^63 - 1 users",
            message=f"{name} sum to {total} users, more than 2^63 - 1 (int64)",
        )
    return total


def check_bounded(
    values: object, low: float = -1.0, high: float = 1.0, name: str = "values"
) -> np.ndarray:
    """Check a 1-D array of real values in [low, high] and return it as float64.

    Integers are accepted (and converted); NaN and infinities are refused like any value
    outside the interval.

    >>> check_bounded([0, 0.5, -1.0]).dtype
    dtype('float64')
    """
    array = np.asarray(values)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {array.dtype}")
    if array.ndim != 1:
        raise _not_one_dimensional(name, array.shape)
    array = array.astype(np.float64, copy=False)
    if array.size:
        outside = ~((array >= low) & (array <= high))  # NaN is outside too
        if outside.any():
            bad = array[np.argmax(outside)]
            raise ParameterError(
                name,
                bad,
                f"in [{low:g}, {high:g}]",
                message=f"{name} must lie in [{low:g}, {high:g}], found {bad}",
            )
    return array
