"""Tolerances as objects: what counts as agreement with a paper, and what it would catch.

A claim of the reproduction report is checked in *parts*
(:class:`Part`): a measured quantity (one number or an array of them) and a
:class:`Tolerance` that reads the paper's sentence.  A tolerance does three things, all
from the same data:

- :meth:`Tolerance.holds` checks the measured values;
- :meth:`Tolerance.describe` writes its own sentence for the report (so the prose cannot
  drift from the check);
- :func:`detect` measures its power: the smallest deviation of the measured quantity (all
  values scaled by 1 ± δ, one value scaled, or every value shifted by k standard errors)
  that changes the verdict, found by re-running the same check on mutated measurements.

The kinds: :class:`WithinSE` (sampling error, z from a family-wise α), :class:`Beyond`
(an ordering beyond sampling error, one-sided; or the means' order as plotted),
:class:`Digits`
(the paper's printed digits; :class:`Truncated` where the source cuts them),
:class:`Band` (a relative band that reads a quoted word, or an ordering read as "above
1"), :class:`Monotone` (an ordering along a grid, step by step), :class:`Identity` and
:class:`ExactOrder` (exact arithmetic: true by construction) and :class:`Calibrated` (a
statistic of a surrogate data set calibrated to the very number it is checked against).
The exact kinds give the verdict "identity", the last "calibrated", both counted apart
from "reproduced" in the report's summary.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

Verdict = Literal["reproduced", "partly", "differs", "not measurable", "identity", "calibrated"]

#: The largest relative deviation :func:`detect` tries: a check no deviation up to this can
#: flip is reported as "none up to 50%" (a defect, unless the part is an identity or
#: calibrated).
LARGEST = 0.5
#: The largest shift (in standard errors) :func:`detect` tries.
LARGEST_SE = 50.0
#: For an ordering, how many of its closest steps :func:`detect` breaks one value at a time.
POINTS_TRIED = 8


def _array(values: object) -> np.ndarray:
    return np.atleast_1d(np.asarray(values, dtype=float))


def _check_sampling(alpha: float, se: object) -> None:
    """A family-wise false-alarm rate in (0, 1) and standard errors >= 0."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if np.any(_array(se) < 0):
        raise ValueError("standard errors are >= 0")


@functools.lru_cache(maxsize=4096)
def bonferroni_z(
    points: int, alpha: float, *, one_sided: bool = False, df: float = math.inf
) -> float:
    """The z (or t with ``df`` degrees of freedom) beyond which any of ``points`` unbiased
    statistics strays with probability at most ``alpha`` (union bound)."""
    from scipy.stats import norm, t

    tail = alpha / max(points, 1) / (1 if one_sided else 2)
    return float(norm.isf(tail) if math.isinf(df) else t.isf(tail, df))


class Tolerance(ABC):
    """What counts as agreement for one measured quantity (an array of values)."""

    #: "sampling", "digits", "band", "ordering", "identity" or "calibrated"
    kind: ClassVar[str] = "band"
    #: True when the check applies to each value on its own (then scaling all values finds
    #: the same smallest flip as scaling one at a time, and :func:`detect` skips the latter)
    pointwise: ClassVar[bool] = True

    @abstractmethod
    def holds(self, values: np.ndarray) -> bool:
        """Whether the measured ``values`` agree."""

    @abstractmethod
    def describe(self) -> str:
        """The tolerance in words, with its numbers: what the report prints."""

    def standard_errors(self) -> np.ndarray | None:
        """The values' standard errors, where the tolerance knows them (for SE shifts)."""
        return None

    def sensitive_points(self, values: np.ndarray) -> np.ndarray:
        """The values worth scaling one at a time (for a check that is not pointwise)."""
        return np.arange(values.size)


@dataclass(frozen=True)
class WithinSE(Tolerance):
    """Every value within z standard errors of its expected value; z from a family-wise
    false-alarm rate ``alpha`` over the points (Bonferroni), normal or Student's t.

    ``side``: "both" (|v - e| <= z SE), "below" (v <= e + z SE: 'at most'), "above"
    (v >= e - z SE: 'at least').
    """

    expected: Sequence[float] | np.ndarray | float
    se: Sequence[float] | np.ndarray | float
    alpha: float = 0.01
    what: str = "the exact value"
    side: Literal["both", "below", "above"] = "both"
    df: float = math.inf

    kind: ClassVar[str] = "sampling"

    def __post_init__(self) -> None:
        _check_sampling(self.alpha, self.se)

    def points(self, values: np.ndarray | None = None) -> int:
        sizes = [_array(self.expected).size, _array(self.se).size]
        if values is not None:
            sizes.append(values.size)
        return max(sizes)

    def z(self, points: int | None = None) -> float:
        return bonferroni_z(
            points or self.points(), self.alpha, one_sided=self.side != "both", df=self.df
        )

    def scores(self, values: np.ndarray) -> np.ndarray:
        """(value - expected) / SE per point (NaN where SE is 0 and they are equal)."""
        gap = values - _array(self.expected)
        se = _array(self.se)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(se > 0, gap / se, np.where(gap == 0, 0.0, np.sign(gap) * np.inf))

    def holds(self, values: np.ndarray) -> bool:
        z = self.scores(values)
        limit = self.z(self.points(values))
        if self.side == "below":
            return bool(np.all(z <= limit))
        if self.side == "above":
            return bool(np.all(z >= -limit))
        return bool(np.all(np.abs(z) <= limit))

    def describe(self) -> str:
        n = self.points()
        where = f" at each of {n} points" if n > 1 else ""
        bound = {"both": "within", "below": "at most", "above": "at least"}[self.side]
        dist = "" if math.isinf(self.df) else f", Student's t with {self.df:g} degrees of freedom"
        return (
            f"{bound} {self.z():.1f} SE of {self.what}{where} "
            f"(family-wise false alarm {self.alpha:g}{dist})"
        )

    def standard_errors(self) -> np.ndarray:
        return _array(self.se)


@dataclass(frozen=True)
class Beyond(Tolerance):
    """Every value beyond ``threshold`` by more than z standard errors on one side: a
    one-sided significance reading of an ordering word ("ahead", "more than half"), z from a
    family-wise false-alarm rate ``alpha`` over the points (Bonferroni, normal or Student's
    t).  With ``z=0`` it reads the point estimates' order as a paper reads its plot: at or
    beyond the threshold as the means stand (an exact tie, e.g. two protocols both at F1 =
    1, is not a reversal), with no allowance for sampling error, so a true tie fails half
    the time: use it beside a :class:`WithinSE` part that says "differs", as the part that
    says "partly"."""

    threshold: Sequence[float] | np.ndarray | float
    se: Sequence[float] | np.ndarray | float
    alpha: float = 0.01
    side: Literal["above", "below"] = "above"
    df: float = math.inf
    reading: str = ""
    z: float | None = None  #: a fixed z (0: the point estimates' order) instead of alpha's

    kind: ClassVar[str] = "sampling"

    def __post_init__(self) -> None:
        _check_sampling(self.alpha, self.se)

    def limit(self, points: int | None = None) -> float:
        if self.z is not None:
            return self.z
        size = points or max(_array(self.threshold).size, _array(self.se).size)
        return bonferroni_z(size, self.alpha, one_sided=True, df=self.df)

    def holds(self, values: np.ndarray) -> bool:
        gap = (values - _array(self.threshold)) * (1.0 if self.side == "above" else -1.0)
        se = np.broadcast_to(_array(self.se), values.shape)
        limit = self.limit(values.size)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(se > 0, gap / se, np.where(gap == 0, 0.0, np.sign(gap) * np.inf))
        return bool(np.all(score >= limit))

    def describe(self) -> str:
        n = max(_array(self.threshold).size, _array(self.se).size)
        edge = ", ".join(f"{t:g}" for t in np.unique(_array(self.threshold)))
        word = "above" if self.side == "above" else "below"
        head = f"{self.reading}: " if self.reading else ""
        if self.z == 0:
            return (
                f"{head}at or {word} {edge} as the means stand (the order a paper reads on "
                "its plot: no allowance for sampling error)"
            )
        where = f" at each of {n} points" if n > 1 else ""
        dist = "" if math.isinf(self.df) else f", Student's t with {self.df:g} degrees of freedom"
        fixed = "" if self.z is not None else f" (family-wise false alarm {self.alpha:g}{dist})"
        return f"{head}{word} {edge} beyond {self.limit():.1f} SE{where}{fixed}"

    def standard_errors(self) -> np.ndarray:
        return _array(self.se)


@dataclass(frozen=True)
class Digits(Tolerance):
    """Every value rounds to the paper's printed number at the paper's precision:
    ``decimals`` places, or ``significant`` significant digits."""

    printed: Sequence[float] | np.ndarray | float
    decimals: int | None = None
    significant: int | None = None

    kind: ClassVar[str] = "digits"

    def __post_init__(self) -> None:
        if (self.decimals is None) == (self.significant is None):
            raise ValueError("give exactly one of decimals and significant")

    def _round(self, values: np.ndarray) -> np.ndarray:
        if self.decimals is not None:
            return np.round(values, self.decimals)
        out = np.empty_like(values)
        for i, v in enumerate(values):
            if v == 0 or not math.isfinite(v):
                out[i] = v
            else:
                places = self.significant - 1 - math.floor(math.log10(abs(v)))
                out[i] = round(v, places)
        return out

    def holds(self, values: np.ndarray) -> bool:
        return bool(np.allclose(self._round(values), _array(self.printed), rtol=1e-12, atol=0))

    def describe(self) -> str:
        printed = ", ".join(f"{p:g}" for p in _array(self.printed))
        precision = (
            f"{self.decimals} decimal{'s' if self.decimals != 1 else ''}"
            if self.decimals is not None
            else f"{self.significant} significant digit{'s' if self.significant != 1 else ''}"
        )
        return f"rounds to the printed {printed} ({precision}, as the paper prints it)"


@dataclass(frozen=True)
class Band(Tolerance):
    """Every value in [low, high]: a relative band that reads a quoted word of the paper
    ("'about' read as within 5%"), or an ordering read as a ratio above 1."""

    low: Sequence[float] | np.ndarray | float = -math.inf
    high: Sequence[float] | np.ndarray | float = math.inf
    reading: str = ""  #: the quoted word and how it is read, e.g. "'several times' as >= 3"
    strict: bool = False  #: open interval (a strict ordering: ratio > 1)

    kind: ClassVar[str] = "band"

    def holds(self, values: np.ndarray) -> bool:
        low, high = _array(self.low), _array(self.high)
        if self.strict:
            return bool(np.all((values > low) & (values < high)))
        return bool(np.all((values >= low) & (values <= high)))

    def describe(self) -> str:
        low, high = _array(self.low), _array(self.high)

        def show(x: np.ndarray) -> str:
            return f"{x[0]:g}" if np.all(x == x[0]) else f"{x.min():g}-{x.max():g}"

        if np.all(np.isinf(high)):
            bound = f"{'>' if self.strict else '>='} {show(low)}"
        elif np.all(np.isinf(low)):
            bound = f"{'<' if self.strict else '<='} {show(high)}"
        elif np.any(np.isinf(low)) or np.any(np.isinf(high)):  # a side per point
            edges = np.unique(np.concatenate([low[np.isfinite(low)], high[np.isfinite(high)]]))
            shown = ", ".join(f"{e:g}" for e in edges)
            bound = f"each value on its stated side of {shown}"
        else:
            bound = f"in [{show(low)}, {show(high)}]"
        return f"{self.reading + ': ' if self.reading else ''}{bound}"


@dataclass(frozen=True)
class Monotone(Tolerance):
    """An ordering along a grid: each step in the stated direction, a step the wrong way
    allowed up to ``z`` standard errors of the step (``se`` per value, independent)."""

    direction: Literal["increasing", "decreasing"]
    se: Sequence[float] | np.ndarray | float = 0.0
    z: float = 0.0
    reading: str = ""

    kind: ClassVar[str] = "ordering"
    pointwise: ClassVar[bool] = False

    def holds(self, values: np.ndarray) -> bool:
        step = np.diff(values)
        se = np.broadcast_to(_array(self.se), values.shape)
        slack = self.z * np.hypot(se[1:], se[:-1])
        sign = 1.0 if self.direction == "increasing" else -1.0
        return bool(np.all(sign * step > -slack)) if self.z else bool(np.all(sign * step > 0))

    def sensitive_points(self, values: np.ndarray) -> np.ndarray:
        """Both ends of the steps closest to breaking the order: only they can flip it first."""
        if values.size < 2:
            return np.arange(values.size)
        step = np.diff(values) * (1.0 if self.direction == "increasing" else -1.0)
        closest = np.argsort(step)[:POINTS_TRIED]
        return np.unique(np.concatenate([closest, closest + 1]))

    def describe(self) -> str:
        slack = f" (a step back up to {self.z:g} SE of the step allowed)" if self.z else ""
        return f"{self.reading + ': ' if self.reading else ''}strictly {self.direction}{slack}"

    def standard_errors(self) -> np.ndarray | None:
        se = _array(self.se)
        return se if np.any(se > 0) else None


@dataclass(frozen=True)
class Truncated(Tolerance):
    """Every value *truncated* (not rounded) to ``decimals`` places equals the printed
    number: printed <= value < printed + 10^-decimals.  The tutorial's tables cut digits
    (e^0.1/(e^0.1 + 7) = 0.136 is printed 0.13), which :class:`Digits` (rounding) cannot
    read."""

    printed: Sequence[float] | np.ndarray | float
    decimals: Sequence[int] | np.ndarray | int

    kind: ClassVar[str] = "digits"

    def holds(self, values: np.ndarray) -> bool:
        printed = np.broadcast_to(np.asarray(self.printed, dtype=float), values.shape)
        places = np.broadcast_to(np.asarray(self.decimals, dtype=float), values.shape)
        unit = 10.0**-places
        slack = 1e-12 * np.maximum(1.0, np.abs(values))  # the printed number itself is binary
        return bool(np.all((values >= printed - slack) & (values < printed + unit - slack)))

    def describe(self) -> str:
        printed = ", ".join(f"{p:g}" for p in np.atleast_1d(self.printed))
        places = sorted({int(d) for d in np.atleast_1d(self.decimals)})
        return (
            f"truncates to the printed {printed} ({' or '.join(map(str, places))} decimals, "
            "digits cut as the source prints them)"
        )


@dataclass(frozen=True)
class ExactOrder(Band):
    """An ordering of exact numbers (closed forms, or what an oracle object declares): a
    :class:`Band` whose values carry no sampling error, so the part is true by
    construction and reads "identity" like :class:`Identity`."""

    kind: ClassVar[str] = "identity"

    def describe(self) -> str:
        return f"exact arithmetic, {super().describe()}"


@dataclass(frozen=True)
class Identity(Tolerance):
    """Exact arithmetic: equal to ``expected`` to relative ``rtol`` (true by construction:
    the row reads "identity", counted apart from "reproduced")."""

    expected: Sequence[float] | np.ndarray | float
    rtol: float = 1e-9

    kind: ClassVar[str] = "identity"

    def holds(self, values: np.ndarray) -> bool:
        return bool(np.allclose(values, _array(self.expected), rtol=self.rtol, atol=0))

    def describe(self) -> str:
        return f"exact arithmetic (relative {self.rtol:g})"


@dataclass(frozen=True)
class Calibrated(Tolerance):
    """A statistic of a surrogate data set calibrated to the number it is compared with:
    true by construction (the row reads "calibrated"); the band is still checked, so a
    broken surrogate shows."""

    target: Sequence[float] | np.ndarray | float
    rtol: float = 0.05

    kind: ClassVar[str] = "calibrated"

    def holds(self, values: np.ndarray) -> bool:
        return bool(np.allclose(values, _array(self.target), rtol=self.rtol, atol=0))

    def describe(self) -> str:
        return f"calibrated to it (the surrogate's own target, checked to {100 * self.rtol:g}%)"


@dataclass(frozen=True)
class Part:
    """One part of a claim's sentence: a measured quantity and its tolerance.

    ``otherwise`` is the part's verdict when it does not hold: "differs" for a part the
    sentence stands on, "partly" for a softer reading.  A part with no finite value is
    "not measurable".
    """

    quantity: str  #: what is measured, e.g. "Var/n at 400 points"
    values: tuple[float, ...]
    tolerance: Tolerance
    otherwise: Literal["differs", "partly"] = "differs"

    def __init__(
        self,
        quantity: str,
        values: object,
        tolerance: Tolerance,
        otherwise: Literal["differs", "partly"] = "differs",
    ) -> None:
        array = _array(values).ravel().astype(float)
        array.flags.writeable = False
        object.__setattr__(self, "quantity", quantity)
        object.__setattr__(self, "values", tuple(array.tolist()))
        object.__setattr__(self, "_array", array)
        object.__setattr__(self, "tolerance", tolerance)
        object.__setattr__(self, "otherwise", otherwise)
        if otherwise not in ("differs", "partly"):
            raise ValueError(f"otherwise must be 'differs' or 'partly', got {otherwise!r}")

    @property
    def array(self) -> np.ndarray:
        """The values as a read-only array."""
        return self._array

    @property
    def measurable(self) -> bool:
        return len(self.values) > 0 and bool(np.any(np.isfinite(self.array)))

    def holds_for(self, values: np.ndarray) -> bool:
        return self.tolerance.holds(values)

    @property
    def verdict(self) -> Verdict:
        if not self.measurable:
            return "not measurable"
        if not self.tolerance.holds(self.array):
            return self.otherwise
        if self.tolerance.kind in ("identity", "calibrated"):
            return self.tolerance.kind  # type: ignore[return-value]
        return "reproduced"

    def describe(self) -> str:
        return f"{self.quantity}: {self.tolerance.describe()}"

    def with_values(self, values: np.ndarray) -> Part:
        return Part(self.quantity, values, self.tolerance, self.otherwise)


def not_slower(quantity: str, log_speedup: object, se: object, trials: int) -> Part:
    """A timing reading: log(slower/faster median time) not below 0 beyond the trials'
    timing noise (one-sided, Student's t with trials - 1 degrees of freedom)."""
    return Part(
        quantity,
        log_speedup,
        WithinSE(
            0.0,
            se,
            alpha=0.01,
            side="above",
            df=max(trials - 1, 1),
            what="0 (equal times): not slower beyond the trials' timing noise",
        ),
    )


def combine(verdicts: Sequence[str]) -> Verdict:
    """The verdict of a sentence with several parts: every part must hold.

    Identity and calibrated parts count as holding; a claim made only of them keeps that
    kind. A part not measurable makes the claim not measurable; any part that fails while
    another holds gives "partly" (and soft parts that fail alone, "partly" too); none
    holding, with a part the sentence stands on among them, "differs".
    """
    if not verdicts:
        return "not measurable"
    if "not measurable" in verdicts:
        return "not measurable"
    holding = {"reproduced", "identity", "calibrated"}
    if all(v in holding for v in verdicts):
        real = [v for v in verdicts if v == "reproduced"]
        if real:
            return "reproduced"
        return "calibrated" if "calibrated" in verdicts else "identity"
    if not any(v in holding for v in verdicts) and "differs" in verdicts:
        return "differs"  # nothing holds and a part the sentence stands on fails
    return "partly"


@dataclass(frozen=True)
class Detection:
    """The smallest deviation of a claim's measured quantity that changes its verdict."""

    part: int  #: index of the part it mutates
    quantity: str
    how: Literal["scale", "point", "shift", "none"]
    delta: float  #: relative deviation (scale, point), or standard errors (shift)
    sign: int = 1
    point: int = -1  #: the value scaled, for "point"
    in_se: float = math.nan  #: the same deviation in standard errors of the flipping value

    @property
    def found(self) -> bool:
        return self.how != "none"

    def text(self) -> str:
        if not self.found:
            return f"none up to {100 * LARGEST:g}% or {LARGEST_SE:g} SE ({self.quantity})"
        if self.how == "shift" and self.delta < 1e-6:  # a value on its boundary (a tie)
            return f"any shift of {self.quantity} (a value on its boundary)"
        if self.how == "shift":
            return f"{self.delta:.2g} SE shift of {self.quantity}"
        if self.delta < 1e-14:  # a value on its boundary: any deviation one way flips it
            return f"any deviation of {self.quantity} (a value on its boundary)"
        where = " of one point" if self.how == "point" else ""
        se = f" ({self.in_se:.2g} SE)" if math.isfinite(self.in_se) else ""
        return f"{_percent(self.delta)}{where} of {self.quantity}{se}"

    def within(self, relative: float = 0.10, se: float = 6.0) -> bool:
        """Whether it meets the report's bar: at most ``relative`` of the quantity or ``se``
        standard errors."""
        if not self.found:
            return False
        if self.how == "shift":
            return self.delta <= se
        return self.delta <= relative or (math.isfinite(self.in_se) and self.in_se <= se)


def _percent(delta: float) -> str:
    if delta >= 0.01:
        return f"{100 * delta:.3g}%"
    return f"{100 * delta:.2g}%"


def mutate(values: np.ndarray, how: str, delta: float, sign: int, point: int, se) -> np.ndarray:
    """The measured ``values`` under one mutation (see :class:`Detection`)."""
    out = values.copy()
    if how == "scale":
        return out * (1 + sign * delta)
    if how == "point":
        out[point] *= 1 + sign * delta
        return out
    if how == "shift":
        return out + sign * delta * np.broadcast_to(se, values.shape)
    return out


def _smallest(flips, largest: float) -> float:
    """The smallest delta in (0, largest] with flips(delta) True (NaN if none): a scan on a
    geometric grid, then bisection between the last unflipped and the first flipped."""
    grid = np.geomspace(1e-9 * largest, largest, 46)
    below = 0.0
    for delta in grid:
        if flips(delta):
            low, high = below, float(delta)
            for _ in range(24):
                mid = (low + high) / 2
                if flips(mid):
                    high = mid
                else:
                    low = mid
            return high
        below = float(delta)
    return math.nan


def _flipper(parts: Sequence[Part], index: int, how: str, sign: int, point: int, verdict_of):
    """delta -> whether mutating part ``index`` by delta changes ``verdict_of(parts)``."""
    base = verdict_of(parts)
    part = parts[index]
    values, se = part.array, part.tolerance.standard_errors()

    def flips(delta: float) -> bool:
        trial = list(parts)
        trial[index] = part.with_values(mutate(values, how, delta, sign, point, se))
        return verdict_of(trial) != base

    return flips


def detect(parts: Sequence[Part], verdict_of) -> Detection:
    """The smallest deviation of one part's values that changes ``verdict_of(parts)``.

    Tried per part: every value scaled by 1 ± δ (δ <= 50%); for orderings, one value
    scaled; where the tolerance knows standard errors, every value shifted by ± k SE
    (k <= 50).  Identity and calibrated parts are left out when the claim has a measured
    part: exact arithmetic flips at any deviation, which says nothing of the measurement.
    A relative deviation is preferred in the text; its size in standard errors of the
    flipping value is given beside it.
    """
    by_construction = ("identity", "calibrated")
    measured = [p.measurable and p.tolerance.kind not in by_construction for p in parts]
    candidates: list[Detection] = []
    for index, part in enumerate(parts):
        if not part.measurable or (any(measured) and not measured[index]):
            continue  # an exact part flips at 1e-9: the row's power is its measured parts'
        values, se = part.array, part.tolerance.standard_errors()
        points = () if part.tolerance.pointwise else part.tolerance.sensitive_points(values)
        for sign in (1, -1):
            delta = _smallest(_flipper(parts, index, "scale", sign, -1, verdict_of), LARGEST)
            if math.isfinite(delta):
                in_se = _in_se(values, se, delta)
                candidates.append(Detection(index, part.quantity, "scale", delta, sign, -1, in_se))
            for point in points:
                delta = _smallest(_flipper(parts, index, "point", sign, point, verdict_of), LARGEST)
                if math.isfinite(delta):
                    own = None if se is None else np.broadcast_to(se, values.shape)[point]
                    in_se = _in_se(values[point : point + 1], own, delta)
                    candidates.append(
                        Detection(index, part.quantity, "point", delta, sign, point, in_se)
                    )
            if se is not None and np.any(np.asarray(se) > 0):
                flips = _flipper(parts, index, "shift", sign, -1, verdict_of)
                delta = _smallest(flips, LARGEST_SE)
                if math.isfinite(delta):
                    candidates.append(Detection(index, part.quantity, "shift", delta, sign))
    if not candidates:
        quantity = parts[0].quantity if parts else "the claim"
        return Detection(0, quantity, "none", math.nan)
    # sizes equal to 6 digits are a tie (two exact parts, a shift and the same shift as a
    # percentage): the first part and mutation tried wins, whatever the bisection's last bits
    return min(candidates, key=lambda found: float(f"{_size(found):.6g}"))


def _in_se(values: np.ndarray, se, delta: float) -> float:
    """A relative deviation δ in standard errors at the most precise value: the largest
    δ|v|/SE over the values with a standard error (what the row's sharpest point sees)."""
    if se is None:
        return math.nan
    se = np.broadcast_to(np.asarray(se, dtype=float), values.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(se > 0, delta * np.abs(values) / se, np.nan)
    finite = ratio[np.isfinite(ratio) & (ratio > 0)]  # a value of 0 has no SE scale
    return float(finite.max()) if finite.size else math.nan


def _size(found: Detection) -> float:
    """How to rank detections: relative deviations as they are, SE shifts as 10% per 6 SE
    (the report's bar treats the two alike)."""
    if found.how == "shift":
        return found.delta * (0.10 / 6.0)
    if math.isfinite(found.in_se):
        return min(found.delta, found.in_se * (0.10 / 6.0))
    return found.delta


def mutated(parts: Sequence[Part], found: Detection, factor: float = 1.0) -> list[Part]:
    """``parts`` with ``found``'s mutation applied (its δ times ``factor``)."""
    out = list(parts)
    if not found.found:
        return out
    part = parts[found.part]
    values = mutate(
        part.array,
        found.how,
        found.delta * factor,
        found.sign,
        found.point,
        part.tolerance.standard_errors(),
    )
    out[found.part] = part.with_values(values)
    return out


__all__ = [
    "LARGEST",
    "Band",
    "Beyond",
    "Calibrated",
    "Detection",
    "Digits",
    "ExactOrder",
    "Identity",
    "Monotone",
    "Part",
    "Tolerance",
    "Truncated",
    "Verdict",
    "WithinSE",
    "bonferroni_z",
    "combine",
    "detect",
    "mutated",
    "not_slower",
]
