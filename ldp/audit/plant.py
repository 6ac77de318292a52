"""Leaks planted into a real client, to measure what the audit can catch (its power).

:class:`Planted` wraps a mechanism: its ``perturb`` runs the honest client, then each
report of a user holding ``value`` is, with probability ``rate``, altered by one of four
classes of leak (:data:`LEAKS`).  Everything else (the declared events, capabilities,
support, ε) is the mechanism's own, so the audit sees what it would see of a real protocol
with that defect.  :func:`caught` counts in how many independent audits the default audit
bound exceeds the claimed ε; :mod:`ldp.audit.power` turns that into the smallest rate
caught in most audits, per protocol and class (the table of ``docs/privacy.md``).

The classes act on a report's *payload*: the bytes of its per-report fields that are not
declared public randomness (:class:`ldp.contract.Capabilities`; a hash seed is public,
the cell it selects is not), read as bits (``numpy.unpackbits``).

* ``"fixed report"``: the whole report (public fields too) is replaced by one fixed
  report: a client that sometimes sends a canned report.  The canned report is the most
  revealing of :data:`CANDIDATES` honest reports of ``value`` drawn from fixed seeds: the
  one whose exact copies are commonest among honest reports of ``value`` relative to
  those of ``other`` (first among ties, as where honest reports never repeat), so that a
  canned report is a report of ``value``, not one that makes it look like ``other``.
* ``"out of support"``: every payload byte set to 0xFF (-1 as an integer, NaN as a float,
  every bit and padding bit set), when the mechanism declares a support
  (:mod:`ldp.audit.support`) that this report is outside of; else the class does not
  apply (:func:`applies`).
* ``"biased bit"``: a payload bit whose frequency does not differ between the reports of
  ``value`` and ``other`` (so that the leak is the only signal in it: the first such bit
  in the payload's order, else the one that differs least) is set to its rarer value
  among the reports of ``other``, which makes the leak's reports of ``value`` the least
  like those of ``other``.
* ``"bit pattern"``: the three such bits (fewer if the payload has fewer that vary) are
  set together to their rarer values: a fixed pattern spread over several bits.

The bits are chosen from :data:`SCOUT` honest reports of each input drawn with a fixed
seed, so a planted leak is the same from audit to audit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ldp.audit.events import Column
from ldp.audit.support import declared_support
from ldp.contract import capabilities_of
from ldp.reports import count, per_report_fields
from ldp.validation import ParameterError

#: The classes of leak, in the order of the power table.
LEAKS = ("fixed report", "out of support", "biased bit", "bit pattern")
#: Honest reports of each input drawn to choose the bits of a bit leak.
SCOUT = 4_000
#: A bit whose two frequencies differ by at most this many standard errors of the scouts'
#: difference counts as carrying no signal.
QUIET_SE = 3.0
#: Bits a pattern sets.
PATTERN_BITS = 3
#: Honest reports of ``value`` the canned report of a "fixed report" leak is chosen from.
CANDIDATES = 16
#: The seed of the fixed report and of the scouting draws.
PLANT_SEED = 20_260_101


def _as_tuple(reports: Any) -> tuple[tuple, bool]:
    """The reports' fields and whether they came as one bare array."""
    if isinstance(reports, tuple):
        return tuple(reports), False
    return (np.asarray(reports),), True


def _rebuild(like: Any, fields: list, bare: bool) -> Any:
    if bare:
        return fields[0]
    make = getattr(type(like), "_make", None)
    return make(fields) if make is not None else type(like)(fields)


def _payload_fields(mechanism: Any, reports: Any) -> list[int]:
    """Indices of the per-report fields that are not declared public randomness."""
    fields, bare = _as_tuple(reports)
    if bare:
        return [0]
    layout = per_report_fields(reports, count(reports)) or ()
    public = set(capabilities_of(mechanism).public_randomness)
    names = getattr(type(reports), "_fields", ())
    return [
        i for i, own in enumerate(layout) if own and (i >= len(names) or names[i] not in public)
    ]


def _byte_rows(field: np.ndarray) -> np.ndarray:
    """A per-report field as an (n, bytes) uint8 matrix (a copy)."""
    array = np.ascontiguousarray(field)
    return array.view(np.uint8).reshape(array.shape[0], -1).copy()


def _from_byte_rows(rows: np.ndarray, like: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(rows).view(like.dtype).reshape(like.shape)


def payload_bits(mechanism: Any, reports: Any) -> np.ndarray:
    """(n, bits): every payload bit of every report."""
    fields, _ = _as_tuple(reports)
    rows = [_byte_rows(fields[i]) for i in _payload_fields(mechanism, reports)]
    return np.unpackbits(np.concatenate(rows, axis=1), axis=1)


def _with_payload_bits(mechanism: Any, reports: Any, bits: np.ndarray, where: np.ndarray) -> Any:
    """``reports`` with the payload bits of the rows ``where`` replaced by ``bits``."""
    fields, bare = _as_tuple(reports)
    out = list(fields)
    start = 0
    for i in _payload_fields(mechanism, reports):
        rows = _byte_rows(fields[i])
        width = rows.shape[1]
        packed = np.packbits(bits[:, 8 * start : 8 * (start + width)], axis=1)
        rows[where] = packed[where]
        out[i] = _from_byte_rows(rows, np.ascontiguousarray(fields[i]))
        start += width
    return _rebuild(reports, out, bare)


def _draw_values(value: Any, n: int) -> np.ndarray:
    """n copies of an input: int64, float64 for a float input (a mean protocol's), or n
    rows of an int64 row (a set protocol's padded set, :mod:`ldp.sets`)."""
    if np.ndim(value) == 1:
        return np.repeat(np.asarray(value, dtype=np.int64)[None, :], n, axis=0)
    return np.full(n, value, dtype=np.float64 if isinstance(value, float) else np.int64)


def _holds(values: np.ndarray, value: Any) -> np.ndarray:
    """Which users hold ``value`` (a row: the whole row equal, for padded sets)."""
    if np.ndim(value) == 1:
        return np.all(values == np.asarray(value), axis=1)
    return values == value


def _draw(mechanism: Any, value: Any, n: int, seed: int) -> Any:
    return mechanism.perturb(_draw_values(value, n), np.random.default_rng([PLANT_SEED, seed]))


def _leak_bits(
    mechanism: Any, value: Any, other: Any, how_many: int
) -> tuple[np.ndarray, np.ndarray]:
    """The payload bits that vary and whose frequencies do not differ between the inputs
    beyond the scouts' noise (:data:`QUIET_SE` standard errors), in the payload's order,
    then the others by how little they differ; and the rarer value of each among the
    reports of ``other`` (1 where it is even within noise).  Taking equal bits in order,
    not by their noisy differences, keeps the choice the same from seed to seed."""
    mine = payload_bits(mechanism, _draw(mechanism, value, SCOUT, 1)).mean(axis=0)
    theirs = payload_bits(mechanism, _draw(mechanism, other, SCOUT, 2)).mean(axis=0)
    both = (mine + theirs) / 2
    varying = np.flatnonzero((both > 0) & (both < 1))
    gap = np.abs(mine - theirs)[varying]
    quiet = gap <= QUIET_SE * np.sqrt(2 * both[varying] * (1 - both[varying]) / SCOUT)
    rest = varying[~quiet][np.argsort(gap[~quiet], kind="stable")]
    chosen = np.concatenate([varying[quiet], rest])[:how_many]
    even = np.abs(theirs[chosen] - 0.5) <= QUIET_SE * np.sqrt(0.25 / SCOUT)  # set: 1
    return chosen, ((theirs[chosen] < 0.5) | even).astype(np.uint8)


def _digests(reports: Any, layout: tuple[bool, ...] | None) -> np.ndarray:
    """One digest per report of its per-report fields' bytes (``layout`` names them)."""
    fields = None if layout is None else tuple(i for i, own in enumerate(layout) if own)
    return Column("report", "report", fields=fields)(reports)


def _fixed_report(mechanism: Any, value: Any, other: Any) -> Any:
    """The canned report: the most revealing of :data:`CANDIDATES` honest reports of
    ``value`` (module docstring), as a batch of one report."""
    scouts = [_draw(mechanism, v, SCOUT, seed) for v, seed in ((value, 1), (other, 2))]
    layout = per_report_fields(scouts[0], SCOUT)
    mine, theirs = (_digests(batch, layout) for batch in scouts)
    best, best_score = None, -np.inf
    for seed in range(CANDIDATES):
        candidate = _draw(mechanism, value, 1, 100 + seed)
        digest = _digests(candidate, layout)[0]
        score = (np.count_nonzero(mine == digest) + 1) / (np.count_nonzero(theirs == digest) + 1)
        if score > best_score:
            best, best_score = candidate, score
    return best


class Planted:
    """``mechanism`` whose client leaks (module docstring).

    Parameters
    ----------
    mechanism :
        An oracle (any object with ``perturb(values, rng)`` on integer values).
    leak : str
        One of :data:`LEAKS`.
    rate : float
        The probability that a report of a user holding ``value`` leaks.
    value, other : int, float or row of int
        The input whose reports leak, and the one the bit leaks are chosen against (the
        audit's v and v'; floats for a mean protocol, padded rows for a set protocol).
    """

    def __init__(
        self, mechanism: Any, leak: str, rate: float, value: Any = 0, other: Any = 1
    ) -> None:
        if leak not in LEAKS:
            raise ParameterError("leak", leak, f"one of {LEAKS}")
        if not 0.0 <= rate <= 1.0:
            raise ParameterError("rate", rate, "[0, 1]")
        self.mechanism, self.leak, self.rate = mechanism, leak, float(rate)
        self.value, self.other = value, other
        self._fixed = _fixed_report(mechanism, value, other) if leak == "fixed report" else None
        self._bits: tuple[np.ndarray, np.ndarray] | None = None
        if leak in ("biased bit", "bit pattern"):
            size = 1 if leak == "biased bit" else PATTERN_BITS
            self._bits = _leak_bits(mechanism, value, other, size)

    def __getattr__(self, name: str) -> Any:  # everything but perturb is the mechanism's
        if "mechanism" not in self.__dict__:  # being unpickled: not set yet
            raise AttributeError(name)
        return getattr(self.__dict__["mechanism"], name)

    def __repr__(self) -> str:
        return f"Planted({self.mechanism!r}, {self.leak!r}, rate={self.rate:g})"

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        values = np.asarray(values)
        reports = self.mechanism.perturb(values, rng)
        where = _holds(values, self.value) & (rng.random(values.shape[0]) < self.rate)
        if not where.any():
            return reports
        return self.alter(reports, where)

    def alter(self, reports: Any, where: np.ndarray) -> Any:
        """The reports with this leak applied to the rows ``where``."""
        if self.leak == "fixed report":
            fields, bare = _as_tuple(reports)
            fixed, _ = _as_tuple(self._fixed)
            layout = (True,) if bare else per_report_fields(reports, count(reports))
            out = [np.array(f) if own else f for f, own in zip(fields, layout, strict=True)]
            for i, own in enumerate(layout):
                if own:
                    out[i][where] = fixed[i][0]
            return _rebuild(reports, out, bare)
        bits = payload_bits(self.mechanism, reports)
        if self.leak == "out of support":
            bits[where] = 1
        else:
            chosen, target = self._bits
            rows = bits[where]
            rows[:, chosen] = target
            bits[where] = rows
        return _with_payload_bits(self.mechanism, reports, bits, where)


def applies(mechanism: Any, leak: str, value: Any = 0, other: Any = 1) -> str | None:
    """None when ``leak`` can be planted into ``mechanism``, else why not."""
    if leak == "out of support":
        check = declared_support(mechanism)
        if check is None:
            return "declares no support"
        probe = Planted(mechanism, leak, 1.0, value, other)
        reports = probe.perturb(_draw_values(value, 4), np.random.default_rng(PLANT_SEED))
        if np.asarray(check(reports), dtype=bool).all():
            return "every payload is in its support"
    if leak in ("biased bit", "bit pattern"):
        chosen, _ = _leak_bits(mechanism, value, other, 1)
        if chosen.size == 0:
            return "no payload bit varies"
    return None


def caught(
    mechanism: Any,
    leak: str,
    rate: float,
    audits: int,
    seed: int = 0,
    value: Any = 0,
    other: Any = 1,
    **options: Any,
) -> int:
    """In how many of ``audits`` independent default audits (inputs ``value`` and
    ``other``) the bound exceeds the claimed ε with ``leak`` planted at ``rate``."""
    from ldp.audit.auditor import lower_bound

    planted = Planted(mechanism, leak, rate, value, other)
    found = 0
    for stream in np.random.SeedSequence([seed, int(rate * 1e9)]).spawn(audits):
        rng = np.random.default_rng(stream)
        result = lower_bound(planted, value, other, rng=rng, **options)
        found += result.epsilon > mechanism.epsilon
    return found
