"""Reports that carry what made them, so an estimator refuses reports it did not make.

An estimator fed reports of another ε, domain or protocol returns numbers, not an error:
randomized response reads its own reports of ε = 2 as if they were made at ε = 1, and
one unary encoding's bit vectors pass through another's estimator (tests/test_reports.py
shows both).  Every frequency oracle's and mean protocol's ``perturb``
therefore *stamps* its reports with the oracle's signature (its class and every parameter,
:func:`signature`), and ``estimate`` / ``aggregate`` refuse a stamp that is not their own
(:func:`check_origin`), naming both sides.

The stamp rides on the arrays themselves (:class:`Stamped`, a view: no copy, the bytes
unchanged), so slices and fancy-indexed subsets of the reports (a batch, a cohort) keep
it, and pickling keeps it.  Arithmetic on reports gives plain arrays: an estimate never
carries a stamp.  What loses it: ``np.save`` / ``np.load``, ``np.asarray(..., dtype=...)``
conversions and reports read from files.  Such *bare* reports are still checked by each
protocol's own range checks (a report value must lie in [0, d)), which cannot tell one ε
from another: keep reports in memory or pickled when you can (docs/limits.md).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ldp.validation import ParameterError

__all__ = [
    "Stamped",
    "bare",
    "check_origin",
    "origins",
    "signature",
    "stamp",
    "stamping",
    "checking",
]


def signature(protocol: Any) -> str:
    """The protocol's class and every parameter (its dataclass fields shown in its repr),
    e.g. ``"package.module.Class(epsilon=2.0, domain_size=16)"``: two instances with equal
    signatures draw reports from the same law."""
    cls = type(protocol)
    if dataclasses.is_dataclass(protocol):
        fields = ", ".join(
            f"{f.name}={getattr(protocol, f.name)!r}"
            for f in dataclasses.fields(protocol)
            if f.repr
        )
    else:
        fields = ""
    return f"{cls.__module__}.{cls.__qualname__}({fields})"


def _short(origin: str) -> str:
    """A signature without its module path, for messages."""
    head, _, rest = origin.partition("(")
    return f"{head.rsplit('.', 1)[-1]}({rest}"


class Stamped(np.ndarray):
    """A view of an array of reports with the signature of the protocol that made them.

    Indexing keeps the stamp; ufuncs (arithmetic, comparisons, sums) return plain arrays.
    """

    origin: str | None

    def __array_finalize__(self, obj: Any) -> None:
        self.origin = getattr(obj, "origin", None)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = tuple(x.view(np.ndarray) if isinstance(x, Stamped) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(
                x.view(np.ndarray) if isinstance(x, Stamped) else x for x in kwargs["out"]
            )
        return getattr(ufunc, method)(*plain, **kwargs)

    def __reduce__(self) -> tuple:
        rebuild, arguments, state = super().__reduce__()[:3]
        return rebuild, arguments, (state, self.origin)

    def __setstate__(self, state: tuple) -> None:
        array_state, self.origin = state
        super().__setstate__(array_state)


def stamp(reports: Any, origin: str) -> Any:
    """``reports`` with every array in it (a bare array, the fields of a named tuple, the
    rounds of a list) viewed as :class:`Stamped` with ``origin``; other values unchanged."""
    if isinstance(reports, np.ndarray):
        view = reports.view(Stamped)
        view.origin = origin
        return view
    if isinstance(reports, tuple) and hasattr(reports, "_fields"):
        return type(reports)._make(stamp(field, origin) for field in reports)
    if isinstance(reports, list):
        return [stamp(item, origin) for item in reports]
    return reports


def bare(reports: Any) -> Any:
    """``reports`` with every stamp removed (plain arrays), as if read back from a file."""
    if isinstance(reports, Stamped):
        return reports.view(np.ndarray)
    if isinstance(reports, tuple) and hasattr(reports, "_fields"):
        return type(reports)._make(bare(field) for field in reports)
    if isinstance(reports, list):
        return [bare(item) for item in reports]
    return reports


def origins(reports: Any) -> set[str]:
    """The distinct stamps found in ``reports`` (empty for bare reports)."""
    if isinstance(reports, Stamped):
        return {reports.origin} if reports.origin is not None else set()
    if isinstance(reports, list | tuple):
        found: set[str] = set()
        for item in reports:
            found |= origins(item)
        return found
    return set()


def check_origin(protocol: Any, reports: Any) -> None:
    """Refuse reports stamped by another protocol or other parameters (a
    :class:`~ldp.validation.ParameterError` naming ``reports``, both signatures shown).
    Bare reports pass here: the protocol's own range checks read them."""
    own = signature(protocol)
    foreign = sorted(origins(reports) - {own})
    if foreign:
        raise ParameterError(
            "reports",
            _short(foreign[0]),
            f"made by {_short(own)}",
            message=(
                f"reports must be made by {_short(own)} to be estimated by it, got reports "
                f"made by {_short(foreign[0])} (perturb and estimate with one protocol and "
                "one set of parameters)"
            ),
        )


def stamping(method: Callable) -> Callable:
    """Wrap a ``perturb``-like method so that what it returns carries the protocol's stamp."""

    @functools.wraps(method)
    def stamped(self: Any, *args: Any, **kwargs: Any) -> Any:
        return stamp(method(self, *args, **kwargs), signature(self))

    stamped.__wrapped_by_reports__ = True  # type: ignore[attr-defined]
    return stamped


def checking(method: Callable) -> Callable:
    """Wrap an ``estimate``-like method (reports first) so that it checks their stamp first."""

    @functools.wraps(method)
    def checked(self: Any, reports: Any, *args: Any, **kwargs: Any) -> Any:
        check_origin(self, reports)
        return method(self, reports, *args, **kwargs)

    checked.__wrapped_by_reports__ = True  # type: ignore[attr-defined]
    return checked


#: The methods a protocol class gets wrapped, by :func:`wrap_methods`.
STAMPING = ("perturb", "perturb_rounds")
CHECKING = ("estimate", "aggregate")


def wrap_methods(cls: type) -> None:
    """Stamp what ``cls``'s own ``perturb`` / ``perturb_rounds`` return and check the stamp
    in its own ``estimate`` / ``aggregate`` (called from the protocols' base classes'
    ``__init_subclass__``, so a plug-in gets it without a line of its own)."""
    for names, wrap in ((STAMPING, stamping), (CHECKING, checking)):
        for name in names:
            method = cls.__dict__.get(name)
            if (
                callable(method)
                and not getattr(method, "__isabstractmethod__", False)
                and not getattr(method, "__wrapped_by_reports__", False)
            ):
                setattr(cls, name, wrap(method))


# ------------------------------------------------------------------ batches of reports
def count(reports: Any) -> int:
    """The number of reports in a batch (arrays: rows; tuples: their first array)."""
    if isinstance(reports, tuple):
        for part in reports:
            if isinstance(part, np.ndarray) and part.ndim >= 1:
                return int(part.shape[0])
        raise TypeError("a tuple of reports must hold at least one array")
    return int(np.shape(reports)[0])


def per_report_fields(reports: Any, n: int) -> tuple[bool, ...] | None:
    """Which fields of a tuple of reports hold one entry per report (None: not a tuple).

    A field is per report when it is an array of length n; the auditor confirms this by
    drawing two batches of different sizes (a per-call field, such as a public hash pool,
    keeps its length).
    """
    if not isinstance(reports, tuple):
        return None
    return tuple(
        isinstance(part, np.ndarray) and part.ndim >= 1 and part.shape[0] == n for part in reports
    )


def take(reports: Any, index: Any, layout: tuple[bool, ...] | None) -> Any:
    """The reports ``index`` of a batch (per-report fields indexed, per-call fields kept)."""
    if layout is None:
        return np.asarray(reports)[index]
    parts = [part[index] if own else part for part, own in zip(reports, layout, strict=True)]
    make = getattr(type(reports), "_make", None)
    return make(parts) if make is not None else type(reports)(parts)
