"""Distinguishing events: which reports make v more likely than v'.

An :class:`Event` maps a batch of reports to one boolean per report and says which input
it is evidence for (``favours`` = +1: v, -1: v', 0: try both).  Fixed events are built
from the two inputs alone; a :class:`Finder` chooses an event on a training sample, and
the bound is computed on a fresh sample, so it stays valid whatever was chosen.

Where events come from (nothing here knows a protocol by name):

* a protocol's own events: ``audit_events(v, v')`` on the protocol (its likelihood-ratio
  event, e.g. GRR's ``report == v``, the unary encodings' "bit v set and bit v' unset",
  local hashing's "H_seed(v) = y != H_seed(v')", RAPPOR's cohort-aware Bloom event); the
  builders below (:func:`categorical_events`, :func:`unary_events`, :func:`hashed_events`,
  :func:`histogram_events`) are what those methods return;
* a protocol's own features: ``audit_features(v, v')``, columns derived from a report and
  the two inputs (the hash of v under the report's seed, the Bloom bits of v in the
  report's cohort), read by the search like any other column;
* for any float report: a coordinate with |x| < 1/2 off the 2^-53 grid (Mironov's attack
  on fl(v + noise));
* the generic :class:`FeatureSearch`: every column of every field of the report (public
  randomness such as seeds included), as categorical codes *and* bit by bit, plus the
  protocol's features, searched in chunks of columns (never capped), the most
  distinguishing set of one column's codes or the conjunction of two columns chosen;
* the structure of a call's output (type, dtype, shape, length: :func:`signature`), one
  call per sample (the auditor's structure stage, :mod:`ldp.audit.auditor`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ldp.audit.bounds import clopper_pearson_lower, clopper_pearson_upper, epsilon_lower_bound
from ldp.hashing import HAVE_NUMBA, hash_of, numba
from ldp.reports import count, per_report_fields

#: Flag columns the search counts together (a word's bits are unpacked once per chunk).
CHUNK = 256
#: Candidate sets scored per batch (:meth:`FeatureSearch._scored`), and how many of the
#: best ones :func:`choose` reads (the event and the partners it tries).
SCORE_BATCH, CHOICE_DEPTH = 4096, 64
#: An integer column with more distinct values than this (on the training half) is binned.
MAX_CATEGORIES = 1024
#: A digest becomes its own category when seen this often in the training reports.
MIN_REPEATS = 3
#: Quantile bins of a binned column.
BINS = 32
#: A 2-D integer field is counted as one table (entries x value range) when the table has
#: at most this many cells (:func:`_value_tables`), in blocks of this many entries of
#: this many columns.
TABLE_CELLS, TABLE_ENTRIES, TABLE_GROUP = 1 << 24, 1 << 18, 32
#: Above this many codes, ordering codes by their training ratio overfits (a handful of
#: codes seen a few times under one input only): such columns get thresholds only.
MAX_RATIO_CODES = 256
#: The search ranks a candidate event by the bound it would give on a fresh sample of a
#: given size, from conservative training rates: one-sided Clopper-Pearson at this level.
PROJECTION_LEVEL = 0.05


@dataclass(frozen=True)
class Event:
    """A set E of reports: ``test(reports)`` is True for the reports in E.

    ``favours`` = +1 tests ln P(E|v)/P(E|v'), -1 the reverse, 0 both (two hypotheses).
    """

    name: str
    test: Callable[[Any], np.ndarray]
    favours: int = 0

    def directions(self) -> tuple[int, ...]:
        return (1, -1) if self.favours == 0 else (self.favours,)


@dataclass(frozen=True)
class Feature:
    """A column derived from a batch of reports (one value per report) for the search."""

    name: str
    column: Callable[[Any], np.ndarray]


class Finder(Protocol):
    """Chooses events from training reports of v and of v'."""

    name: str

    def fit(self, reports: Any, reports_other: Any) -> list[Event]: ...


# ------------------------------------------------------------------ report structure
def signature(reports: Any) -> str:
    """The structure of one call's output: types, dtypes, shapes and small scalars."""
    if isinstance(reports, tuple):
        inner = ", ".join(signature(part) for part in reports)
        return f"{type(reports).__name__}({inner})"
    if isinstance(reports, np.ndarray):
        return f"{reports.dtype.str}{reports.shape}"
    if isinstance(reports, int | float | str | bool | np.generic | type(None)):
        return f"{type(reports).__name__}:{reports!r}"
    return type(reports).__name__


# ------------------------------------------------------------------ the columns of a report
@dataclass(frozen=True)
class Column:
    """One column of a batch of reports: a field's entry, one of its bits, or a feature.

    ``kind`` is ``"values"`` (the field's entries, or entry ``index // width`` of a 2-D
    field), ``"bit"`` (bit ``index % width`` of each entry's binary representation, floats
    as their IEEE bits), ``"packed"`` (bit ``index`` of a packed-bit field: uint8 rows read
    big-endian), ``"nan"`` (the entry is NaN), ``"symbol"`` (a 64-bit digest of the
    bytes of entry ``index``, or of the whole row at index -1: :func:`symbols`),
    ``"report"`` (a digest of the whole report: every per-report field in ``fields``, seeds
    and public randomness included, so that a leak spread over many fields or bits is one
    symbol) or ``"feature"``.  ``member`` reads a part of each entry first: a field of a structured
    array, ``"real"`` or ``"imag"`` of a complex one, ``"int64"`` (a datetime's count).
    """

    name: str
    kind: str
    part: int | None = None
    index: int = 0
    width: int = 1
    feature: Callable[[Any], np.ndarray] | None = field(default=None, compare=False)
    member: str | None = None
    fields: tuple[int, ...] | None = None

    def __call__(self, reports: Any) -> np.ndarray:
        if self.kind == "feature":
            return np.asarray(self.feature(reports))
        if self.kind == "report":
            parts = [reports] if self.fields is None else [reports[i] for i in self.fields]
            digests = [symbols(_rows(np.asarray(part))) for part in parts]
            return digests[0] if len(digests) == 1 else symbols(np.stack(digests, axis=1))
        part = np.asarray(reports if self.part is None else reports[self.part])
        if self.member is not None:
            part = _member(part, self.member)
        if self.kind == "symbol":
            rows = part.reshape(part.shape[0], -1) if part.ndim >= 1 else part.reshape(1, 1)
            return symbols(rows if self.index < 0 else rows[:, self.index])
        if self.kind == "packed":
            byte, shift = divmod(self.index, 8)
            return ((part[:, byte] >> np.uint8(7 - shift)) & 1).astype(bool)
        if part.ndim >= 2:
            part = part.reshape(part.shape[0], -1)[:, self.index // self.width]
        if self.kind == "values":
            return part
        if self.kind == "nan":
            return np.isnan(part)
        words = _as_words(part)
        return ((words >> np.uint64(self.index % self.width)) & np.uint64(1)).astype(bool)


def _rows(part: np.ndarray) -> np.ndarray:
    """One row per report (a 1-D field: one entry each)."""
    return part.reshape(part.shape[0], -1) if part.ndim >= 1 else part.reshape(1, 1)


def _member(part: np.ndarray, member: str) -> np.ndarray:
    """A part of each entry: a structured field, a complex half, a datetime's integer."""
    if member in ("real", "imag") and part.dtype.kind == "c":
        return getattr(part, member)
    if member == "int64" and part.dtype.kind in "mM":
        return part.view(np.int64)
    return part[member]


#: Bytes of reports :func:`symbols` digests at a time (as a word-major copy).
_SYMBOL_BLOCK = 1 << 22
#: Odd 64-bit constants of the word-by-word digest of :func:`symbols` (splitmix64's).
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _entry_bytes(entry: Any) -> bytes:
    """An object entry's bytes: its own (bytes), UTF-8 (str), else its ``repr``."""
    if isinstance(entry, bytes | bytearray | memoryview):
        return b"b" + bytes(entry)
    if isinstance(entry, str):
        return b"s" + entry.encode("utf-8", errors="surrogatepass")
    if isinstance(entry, np.ndarray):
        return b"a" + entry.dtype.str.encode() + repr(entry.shape).encode() + entry.tobytes()
    return b"r" + type(entry).__qualname__.encode() + b":" + repr(entry).encode()


def symbols(rows: np.ndarray) -> np.ndarray:
    """One uint64 per report: a digest of the bytes of its entry (1-D) or row (2-D).

    The search reads reports of any dtype this way, as categorical symbols: strings,
    bytes, complex numbers, datetimes, structured records, and objects (by their bytes if
    bytes or str, else by ``repr``).  Equal entries get equal symbols; different entries
    collide with probability ~2^-64 per pair, which can only merge categories (a coarser
    event, never a false alarm).
    """
    n = rows.shape[0]
    if rows.dtype.kind == "O":
        flat = rows.reshape(n, -1)
        digests = [
            hashlib.blake2b(b"\x00".join(_entry_bytes(x) for x in row), digest_size=8).digest()
            for row in flat
        ]
        return np.frombuffer(b"".join(digests), dtype="<u8").copy() if n else np.zeros(0, "<u8")
    raw = np.ascontiguousarray(rows).reshape(n, -1)
    data = raw.view(np.uint8).reshape(n, -1) if raw.size else np.zeros((n, 0), np.uint8)
    digest = np.full(n, np.uint64(data.shape[1]), dtype=np.uint64)
    width = -(-data.shape[1] // 8)
    step = max(1, _SYMBOL_BLOCK // max(8 * width, 1))
    with np.errstate(over="ignore"):
        for start in range(0, n, step):  # a block of rows, word-major: each word contiguous
            block = data[start : start + step]
            if block.shape[1] % 8:
                pad = np.zeros((block.shape[0], -block.shape[1] % 8), np.uint8)
                block = np.concatenate([block, pad], axis=1)
            if HAVE_NUMBA:
                _mixed_rows(np.ascontiguousarray(block).view("<u8"), digest[start : start + step])
                continue
            words = np.ascontiguousarray(block.view("<u8").T)
            mixed = digest[start : start + step]
            for word in words:
                mixed = (mixed ^ word) * _MIX[0]
                mixed = (mixed ^ (mixed >> np.uint64(31))) * _MIX[1]
                mixed = (mixed ^ (mixed >> np.uint64(29))) * _MIX[2]
            digest[start : start + step] = mixed
    return digest


if HAVE_NUMBA:
    _M0, _M1, _M2 = _MIX
    _S31, _S29 = np.uint64(31), np.uint64(29)

    @numba.njit(cache=True, nogil=True)
    def _mixed_rows(words, digest):  # pragma: no cover - jit
        """:func:`symbols`' word-by-word mix, a row at a time, into ``digest`` (the same
        numbers as the numpy loop over words)."""
        for i in range(words.shape[0]):
            h = digest[i]
            for j in range(words.shape[1]):
                h = (h ^ words[i, j]) * _M0
                h = (h ^ (h >> _S31)) * _M1
                h = (h ^ (h >> _S29)) * _M2
            digest[i] = h


def _as_words(part: np.ndarray) -> np.ndarray:
    """Entries as uint64 words of their bits (floats: their IEEE representation); a view
    of ``part`` where it already holds 64-bit entries (read it, never write it)."""
    if part.dtype.kind == "f":
        return part.astype(np.float64, copy=False).view(np.uint64)
    if part.dtype.kind == "i":
        return part.astype(np.int64, copy=False).view(np.uint64)
    return part.astype(np.uint64, copy=False)


def report_columns(
    reports: Any, layout: tuple[bool, ...] | None = None, features: Sequence[Feature] = ()
) -> list[Column]:
    """Every column of a batch of reports and every bit of it, plus the given features.

    Packed bits (a 2-D uint8 field) give one column per bit; an integer or float field of
    one entry per report gives its values, each bit of its representation (seeds
    included: public randomness is read too) and, for floats, whether it is NaN; a 2-D
    numeric field gives that for each of its columns.
    """
    columns: list[Column] = []
    if isinstance(reports, tuple):
        names = getattr(reports, "_fields", [str(i) for i in range(len(reports))])
        if layout is None:
            layout = per_report_fields(reports, count(reports))
        for i, (name, part, own) in enumerate(zip(names, reports, layout, strict=True)):
            if own:
                columns += _field_columns(name, np.asarray(part), i)
        own_fields = tuple(i for i, own in enumerate(layout) if own)
        if own_fields:
            columns.append(Column("whole report", "report", fields=own_fields))
    else:
        array = np.asarray(reports)
        columns += _field_columns("report", array, None)
        if array.ndim >= 2 and array[:1].size > 1:  # a single entry is its values column
            columns.append(Column("whole report", "report"))
    columns += [Column(f.name, "feature", feature=f.column) for f in features]
    return columns


def _field_columns(
    name: str, part: np.ndarray, index: int | None, member: str | None = None
) -> list[Column]:
    if part.dtype == np.uint8 and part.ndim == 2 and member is None:  # packed bits
        return [Column(f"{name} bit {j}", "packed", index, j) for j in range(8 * part.shape[1])]
    if part.dtype.kind not in "biuf":
        return _symbol_columns(name, part, index, member)
    width = 1 if part.dtype == bool else 8 * part.dtype.itemsize
    entries = int(np.prod(part.shape[1:], dtype=np.int64)) if part.ndim > 1 else 1
    out = []
    for e in range(entries):
        label = f"{name}[{e}]" if part.ndim > 1 else name
        out.append(Column(label, "values", index, e * width, width, member=member))
        if part.dtype != bool:
            out += [
                Column(f"{label} bit {b}", "bit", index, e * width + b, width, member=member)
                for b in range(width)
            ]
        if part.dtype.kind == "f":
            out.append(Column(f"{label} is NaN", "nan", index, e * width, width, member=member))
    return out


#: A field of another dtype gets a symbol per entry when it has at most this many.
MAX_SYMBOL_ENTRIES = 64


def _symbol_columns(
    name: str, part: np.ndarray, index: int | None, member: str | None
) -> list[Column]:
    """Columns of a field no numeric column reads (strings, bytes, objects, complex,
    datetimes, structured records): its symbols (:func:`symbols`), the whole row's and,
    for a 2-D field of few entries, each entry's; plus the numeric columns of its parts
    (a record's fields, a complex number's halves, a datetime's count)."""
    if part.ndim == 0:
        return []
    out = [Column(f"{name} bytes", "symbol", index, -1, member=member)]
    entries = int(np.prod(part.shape[1:], dtype=np.int64)) if part.ndim > 1 else 1
    if 1 < entries <= MAX_SYMBOL_ENTRIES:
        out += [
            Column(f"{name}[{e}] bytes", "symbol", index, e, member=member) for e in range(entries)
        ]
    if member is not None:  # one level of parts
        return out
    if part.dtype.names:
        for sub in part.dtype.names:
            out += _field_columns(f"{name}.{sub}", part[sub], index, sub)
    elif part.dtype.kind == "c":
        for half in ("real", "imag"):
            out += _field_columns(f"{name}.{half}", _member(part, half), index, half)
    elif part.dtype.kind in "mM":
        out += _field_columns(f"{name} as int64", part.view(np.int64), index, "int64")
    return out


# ------------------------------------------------------------------ fixed events
def _bit(reports: Any, j: int) -> np.ndarray:
    """Bit j of packed unary reports (a tuple whose first field is the packed bits)."""
    packed = reports[0] if isinstance(reports, tuple) else np.asarray(reports)
    byte, shift = divmod(j, 8)
    return ((packed[:, byte] >> np.uint8(7 - shift)) & 1).astype(bool)


def categorical_events(v: int, v_prime: int) -> list[Event]:
    """report == v (evidence for v) and report == v' (for v')."""
    return [
        Event(f"report == {v}", lambda r: np.asarray(r) == v, +1),
        Event(f"report == {v_prime}", lambda r: np.asarray(r) == v_prime, -1),
    ]


def unary_events(v: int, v_prime: int) -> list[Event]:
    """Bit v set, bit v' unset, and both; mirrored for v' (packed bits, big-endian)."""
    events = []
    for a, b, favours in ((v, v_prime, +1), (v_prime, v, -1)):
        events += [
            Event(f"bit {a} set", lambda r, a=a: _bit(r, a), favours),
            Event(f"bit {b} unset", lambda r, b=b: ~_bit(r, b), favours),
            Event(
                f"bit {a} set and bit {b} unset",
                lambda r, a=a, b=b: _bit(r, a) & ~_bit(r, b),
                favours,
            ),
        ]
    return events


def hashed_events(g: int, key: Any, key_other: Any) -> list[Event]:
    """H_seed(v) = y and H_seed(v') != y; mirrored (reports with ``seeds`` and ``values``)."""

    def hit(reports: Any, k: Any) -> np.ndarray:
        return hash_of(k, reports.seeds, g) == np.asarray(reports.values)

    return [
        Event("H(seed, v) == y != H(seed, v')", lambda r: hit(r, key) & ~hit(r, key_other), +1),
        Event("H(seed, v') == y != H(seed, v)", lambda r: hit(r, key_other) & ~hit(r, key), -1),
    ]


def hashed_features(g: int, key: Any, key_other: Any) -> list[Feature]:
    """H_seed(v) and H_seed(v') of each report's seed, and whether the cell is one of them
    and not the other (the evidence of :func:`hashed_events`), as columns for the search:
    the conjunction of such a hit with a bit of the cell catches a leak that moves cells
    by their bits (``docs/privacy.md``, the power table)."""

    def only(reports: Any, k: Any, k_other: Any) -> np.ndarray:
        y = np.asarray(reports.values)
        return (hash_of(k, reports.seeds, g) == y) & (hash_of(k_other, reports.seeds, g) != y)

    return [
        Feature("H(seed, v)", lambda r: hash_of(key, r.seeds, g)),
        Feature("H(seed, v')", lambda r: hash_of(key_other, r.seeds, g)),
        Feature("H(seed, v) == y != H(seed, v')", lambda r: only(r, key, key_other)),
        Feature("H(seed, v') == y != H(seed, v)", lambda r: only(r, key_other, key)),
    ]


def histogram_events(v: int, v_prime: int, high: int, low: int = 0) -> list[Event]:
    """r[v] >= high and r[v'] <= low; mirrored (SHE: high = s, low = 0)."""
    events = []
    for a, b, favours in ((v, v_prime, +1), (v_prime, v, -1)):
        events.append(
            Event(
                f"r[{a}] >= {high} and r[{b}] <= {low}",
                lambda r, a=a, b=b: (np.asarray(r)[:, a] >= high) & (np.asarray(r)[:, b] <= low),
                favours,
            )
        )
    return events


def interval_events(interval: tuple[float, float], other: tuple[float, float]) -> list[Event]:
    """report in [a, b] (evidence for v) and report in [a', b'] (for v'): a real report's
    likelihood-ratio events (:mod:`ldp.numeric`)."""
    return [
        Event(f"report in [{lo:.6g}, {hi:.6g}]", lambda r, lo=lo, hi=hi: _within(r, lo, hi), f)
        for (lo, hi), f in ((interval, +1), (other, -1))
    ]


def bin_events(edges: Sequence[float]) -> list[Event]:
    """report in [e_j, e_{j+1}) for each bin of the edges, both directions.

    A real report's privacy at the resolution of the bins: if the densities of the two
    inputs are within e^ε everywhere, so are the probabilities of every bin, so an honest
    mechanism passes at any binning, and a bin where a broken one exceeds e^ε is found.
    """
    edges = np.asarray(edges, dtype=float)
    return [
        Event(
            f"report in [{lo:.4g}, {hi:.4g})",
            lambda r, lo=lo, hi=hi: (np.asarray(r) >= lo) & (np.asarray(r) < hi),
        )
        for lo, hi in zip(edges[:-1], edges[1:], strict=True)
    ]


def _within(reports: Any, low: float, high: float) -> np.ndarray:
    x = np.asarray(reports)
    return (x >= low) & (x <= high)


def off_grid(x: np.ndarray, bits: int = 53) -> np.ndarray:
    """|x| < 1/2 and x not a multiple of 2^-bits: impossible for fl(1 + noise) (Mironov)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = x * 2.0**bits
        return (np.abs(x) < 0.5) & (scaled != np.floor(scaled))


def float_events(columns: Sequence[int] | None) -> list[Event]:
    """Coordinate j (or the report, if 1-D) off the 2^-53 grid, for each j; both directions."""
    if columns is None:
        return [Event("report off the 2^-53 grid", lambda r: off_grid(np.asarray(r)))]
    return [
        Event(f"r[{j}] off the 2^-53 grid", lambda r, j=j: off_grid(np.asarray(r)[:, j]))
        for j in columns
    ]


def _declared(mechanism: Any, hook: str) -> Callable | None:
    """A protocol's hook, or that of the oracle a client wraps (attribute ``oracle``)."""
    own = getattr(mechanism, hook, None)
    if callable(own):
        return own
    inner = getattr(getattr(mechanism, "oracle", None), hook, None)
    return inner if callable(inner) else None


def oracle_inputs(mechanism: Any, v: Any, v_prime: Any) -> tuple[Any, Any]:
    """What the mechanism's oracle receives: ``mechanism.oracle_input`` (a heavy hitter's
    client: a prefix, a segment) of each input, or the inputs themselves."""
    mapping = getattr(mechanism, "oracle_input", None)
    if callable(mapping):
        return mapping(v), mapping(v_prime)
    return v, v_prime


def default_features(mechanism: Any, v: Any, v_prime: Any) -> list[Feature]:
    """The protocol's declared features (``audit_features(v, v')``), else none."""
    hook = _declared(mechanism, "audit_features")
    if hook is None:
        return []
    a, b = oracle_inputs(mechanism, v, v_prime)
    return list(hook(a, b))


def default_events(mechanism: Any, v: Any, v_prime: Any, sample: Any) -> list[Event | Finder]:
    """The protocol's own events, the float events fitting ``sample``, and the search.

    A mechanism declaring no events whose reports are 1-D integers gets ``report == v``.

    ``mechanism.audit_events(v, v')`` (or that of ``mechanism.oracle``) gives the
    protocol's events, built on the inputs its oracle receives (:func:`oracle_inputs`).
    """
    events: list[Event | Finder] = []
    a, b = oracle_inputs(mechanism, v, v_prime)
    own = _declared(mechanism, "audit_events")
    if own is not None:
        events += list(own(a, b))
    elif isinstance(sample, np.ndarray) and sample.dtype.kind in "iu" and sample.ndim == 1:
        if np.ndim(a) == 0 and np.ndim(b) == 0:  # an undeclared categorical report
            events += categorical_events(int(a), int(b))
    if isinstance(sample, np.ndarray) and sample.dtype.kind == "f":
        if sample.ndim == 1:
            events += float_events(None)
        elif np.ndim(a) == 0 and np.ndim(b) == 0 and sample.ndim == 2:
            events += float_events([j for j in (int(a), int(b)) if j < sample.shape[1]])
    events.append(FeatureSearch(features=tuple(default_features(mechanism, v, v_prime))))
    return events


def optimal_event_probabilities(oracle: Any) -> tuple[float, float]:
    """P(E | v) and P(E | v') of the protocol's likelihood-ratio event (ratio e^ε).

    Declared by the protocol as ``audit_event_probabilities()`` (GRR: (p*, q*); unary
    encodings: (p*(1-q*), q*(1-p*)); local hashing under an ideal hash:
    (p*(1-1/g), (1-p*)(1-1/g)/(g-1)); ...).  Feed them to
    :func:`ldp.audit.expected_lower_bound` to size an audit.

    Raises
    ------
    TypeError
        If the protocol declares none (its privacy loss has no closed-form event).
    """
    own = _declared(oracle, "audit_event_probabilities")
    if own is None:
        raise TypeError(f"no optimal event is known for {type(oracle).__name__}")
    return own()


# ------------------------------------------------------------------ the generic search
@dataclass(frozen=True, eq=False)
class _Codes:
    """Maps one column to integer codes fitted on training data."""

    column: Column
    kind: str  # "bool", "category", "bins", "float-grid" or "float-value"
    table: tuple[np.ndarray, ...] = ()  # sorted categories, bin edges, repeated values

    def __call__(self, reports: Any) -> np.ndarray:
        return self.codes(self.column(reports))

    def histogram(self, x: np.ndarray) -> np.ndarray:
        """How many entries of ``x`` take each code (float64, at least one code): the
        bincount of :meth:`codes`, computed on the distinct entries with their counts,
        since a code depends on its entry only (floats by their bits, so -0.0, 0.0 and
        NaN payloads stay apart).  A column of few distinct values (a float vector's
        coordinates on a noise grid) then costs a hash, not a binary search an entry."""
        if x.dtype.kind in "iuSb" or x.dtype == np.float64:
            distinct, counts = np.unique(
                _as_words(x) if x.dtype.kind == "f" else x, return_counts=True
            )
            if x.dtype.kind == "f":
                distinct = distinct.view(np.float64)
            return np.bincount(self.codes(distinct), weights=counts, minlength=1)
        return np.bincount(self.codes(x), minlength=1).astype(float)

    def codes(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "bool":
            return x.astype(np.int64)
        if self.kind == "category":  # an unseen value gets the code len(categories)
            return _lookup(self.table[0], x, len(self.table[0]))
        if self.kind == "bins":
            return np.searchsorted(self.table[0], x, side="right")
        if self.kind == "float-grid":  # binade, sign, on the 2^-53 grid
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                binade = np.clip(np.floor(np.log2(np.abs(x))), -16, 16)
                binade = np.where(np.isfinite(binade), binade + 17, 0).astype(np.int64)
                scaled = x * 2.0**53
                on_grid = np.isfinite(scaled) & (scaled == np.floor(scaled))
            return (binade * 2 + (x < 0)) * 2 + on_grid
        # float-value: each repeated bit pattern its own code (-0.0 is not 0.0, each NaN
        # payload its own), the rest in quantile bins of the values
        repeated, edges = self.table
        index = _lookup(repeated, _as_words(x), -1)
        bins = len(repeated) + np.searchsorted(edges, x, side="right")
        return np.where(index >= 0, index, bins)


def _lookup(categories: np.ndarray, x: np.ndarray, missing: int) -> np.ndarray:
    if categories.size == 0:
        return np.full(x.shape, missing, dtype=np.int64)
    index = np.minimum(np.searchsorted(categories, x), categories.size - 1)
    return np.where(categories[index] == x, index, missing)


def _quantile_edges(x: np.ndarray) -> np.ndarray:
    x = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    if x.size == 0:
        return np.array([], dtype=float)
    return np.unique(np.quantile(x, np.linspace(0, 1, BINS + 1)[1:-1]))


def _fit_codes(column: Column, pooled: np.ndarray) -> list[_Codes]:
    """The code mappers of one value column, fitted on both inputs' training reports.

    A digest (``"symbol"``, ``"report"``) is a category, not a number: its codes are the
    digests seen at least :data:`MIN_REPEATS` times (the :data:`MAX_CATEGORIES` most
    frequent), every other one shares the last code, so that a rare but fixed report
    (a revealing pattern) is an event however many distinct reports there are.
    """
    if column.kind in ("symbol", "report"):
        patterns, counts = np.unique(pooled, return_counts=True)
        order = np.argsort(-counts, kind="stable")[:MAX_CATEGORIES]
        kept = patterns[order][counts[order] >= MIN_REPEATS]
        return [_Codes(column, "category", (np.sort(kept),))]
    if pooled.dtype == bool:
        return [_Codes(column, "bool")]
    if pooled.dtype.kind in "iu":
        distinct = np.unique(pooled)
        if distinct.size <= MAX_CATEGORIES:
            return [_Codes(column, "category", (distinct,))]
        return [_Codes(column, "bins", (_quantile_edges(pooled),))]
    if pooled.dtype.kind == "f":
        patterns, counts = np.unique(_as_words(pooled), return_counts=True)
        repeated = patterns[counts >= 3]
        return [
            _Codes(column, "float-grid"),
            _Codes(column, "float-value", (repeated, _quantile_edges(pooled))),
        ]
    return []


@dataclass(frozen=True)
class _Candidate:
    """An event found in training: the codes of one column in ``chosen``."""

    scores: np.ndarray  # its projected bound at each evaluation size
    favours: int
    codes: _Codes
    chosen: np.ndarray


def projected_bounds(
    k: np.ndarray,
    n: np.ndarray | int,
    k_other: np.ndarray,
    n_other: np.ndarray | int,
    sizes: Sequence[int],
    level: float,
) -> np.ndarray:
    """The bound events would give on fresh samples of each size (axis 0), from their
    training counts: rates taken at their one-sided :data:`PROJECTION_LEVEL` bounds (low
    for the favoured input, high for the other), the bound at ``level``."""
    rate = clopper_pearson_lower(k, n, PROJECTION_LEVEL)
    rate_other = clopper_pearson_upper(k_other, n_other, PROJECTION_LEVEL)
    out = []
    with np.errstate(invalid="ignore"):
        for size in sizes:
            out.append(epsilon_lower_bound(rate * size, size, rate_other * size, size, level))
    return np.nan_to_num(np.asarray(out, dtype=float), nan=-np.inf)


def _table_key(column: Column) -> tuple:
    return (column.part, column.member)


@dataclass(eq=False)
class _ValueTable:
    """How many reports hold each value in each entry of a 2-D integer field: one
    bincount over the field, where reading it entry by entry would sort each column (an
    integer histogram vector's 1,024 columns cost ~100x more that way).  Its codes,
    histograms and bit counts are exactly those of the entry-by-entry reading."""

    low: int  #: the smallest value of either input's field
    counts: np.ndarray  #: (entries, values) int64: [e, v - low] reports of entry e hold v
    _bits: np.ndarray | None = None

    def bit_counts(self) -> np.ndarray:
        """(entries, 64): how many reports set bit b of entry e's int64 representation."""
        if self._bits is None:
            words = np.arange(self.low, self.low + self.counts.shape[1], dtype=np.int64)
            bits = (words.view(np.uint64)[:, None] >> np.arange(64, dtype=np.uint64)) & 1
            self._bits = self.counts @ bits.astype(np.int64)
        return self._bits

    def codes(self, column: Column, other: _ValueTable) -> list[tuple]:
        """:func:`_fit_codes` of entry ``column`` on both inputs, with each input's
        histogram of the codes (:meth:`_Codes.histogram`)."""
        entry = column.index // column.width
        x, y = self.counts[entry].astype(float), other.counts[entry].astype(float)
        held = np.flatnonzero(x + y)
        distinct = held + self.low
        if distinct.size <= MAX_CATEGORIES:
            return [(_Codes(column, "category", (distinct,)), x[held], y[held])]
        pooled = np.repeat(distinct, (x + y)[held].astype(np.int64))
        codes = _Codes(column, "bins", (_quantile_edges(pooled),))
        bins = codes.codes(distinct)
        return [
            (
                codes,
                np.bincount(bins, weights=x[held], minlength=1),
                np.bincount(bins, weights=y[held], minlength=1),
            )
        ]


def _value_tables(
    columns: Sequence[Column], reports: Any, reports_other: Any
) -> dict[tuple, tuple[_ValueTable, _ValueTable]]:
    """The value tables (v's and v''s) of every 2-D integer field of more than one entry
    whose table fits :data:`TABLE_CELLS`."""
    out: dict[tuple, tuple[_ValueTable, _ValueTable]] = {}
    for column in columns:
        key = _table_key(column)
        if column.kind != "values" or key in out:
            continue
        parts = []
        for batch in (reports, reports_other):
            part = np.asarray(batch if column.part is None else batch[column.part])
            parts.append(_member(part, column.member) if column.member is not None else part)
        a, b = parts
        if a.dtype.kind not in "iu" or a.ndim < 2 or a.dtype != b.dtype or not a.size or not b.size:
            continue
        a, b = _rows(a), _rows(b)
        if a.shape[1] < 2 or a.shape[1] != b.shape[1]:
            continue
        low, high = min(int(a.min()), int(b.min())), max(int(a.max()), int(b.max()))
        if a.shape[1] * (high - low + 1) > TABLE_CELLS or max(-low, high) >= 1 << 62:
            continue
        out[key] = (_value_table(a, low, high), _value_table(b, low, high))
    return out


def _value_table(rows: np.ndarray, low: int, high: int) -> _ValueTable:
    """Counted by the compiled kernel when numba is there; otherwise a block of rows and
    :data:`TABLE_GROUP` entries at a time, so that the counts being added to stay in cache
    and no temporary outgrows the allocator's reuse (the same counts either way)."""
    width, size = rows.shape[1], high - low + 1
    counts = np.zeros((width, size), dtype=np.int64)
    if HAVE_NUMBA:
        _count_values(np.ascontiguousarray(rows), low, counts)
        return _ValueTable(low, counts)
    offsets = size * np.arange(TABLE_GROUP, dtype=np.int64) - low
    step = max(1, TABLE_ENTRIES // TABLE_GROUP)
    for start in range(0, rows.shape[0], step):
        block = rows[start : start + step]
        for first in range(0, width, TABLE_GROUP):
            group = block[:, first : first + TABLE_GROUP]
            cells = group.astype(np.int64) + offsets[: group.shape[1]]
            found = np.bincount(cells.ravel(), minlength=group.shape[1] * size)
            counts[first : first + group.shape[1]] += found.reshape(-1, size)
    return _ValueTable(low, counts)


if HAVE_NUMBA:

    @numba.njit(cache=True, nogil=True)
    def _count_values(rows, low, counts):  # pragma: no cover - jit
        """counts[e, v - low] += 1 for every entry v of every row (column e), a block of
        rows a column at a time: the column's counts stay in L1, the block in L2."""
        block = max(1, (1 << 18) // max(1, rows.shape[1] * rows.itemsize))
        for first in range(0, rows.shape[0], block):
            last = min(rows.shape[0], first + block)
            for e in range(rows.shape[1]):
                for i in range(first, last):
                    counts[e, rows[i, e] - low] += 1


#: Bit j of each byte value (256 x 8), and each of a word's 8 bytes' place in one bincount.
_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.int64)
_BYTE_OFFSETS = 256 * np.arange(8, dtype=np.intp)


def _flag_counts(
    chunk: Sequence[Column], reports: Any, tables: dict[tuple, _ValueTable] | None = None
) -> np.ndarray:
    """How many reports set each of the chunk's flag columns (int64).

    A bit column's count comes from its word's 64 bit counts, taken at once from the
    histograms of the word's 8 little-endian bytes (one bincount a word, not a boolean
    column a bit): bit 8b + j is set in as many reports as byte b holds a value with bit j.
    A field with a value table (``tables``, :func:`_value_tables`) gives them all at once.
    """
    counts: dict[tuple, np.ndarray] = {}
    out = np.empty(len(chunk), dtype=np.int64)
    for j, column in enumerate(chunk):
        table = (tables or {}).get(_table_key(column)) if column.kind == "bit" else None
        if table is not None:
            out[j] = table.bit_counts()[column.index // column.width, column.index % column.width]
            continue
        if column.kind == "packed":
            key = ("packed", column.part, column.member)
            if key not in counts:
                counts[key] = _packed_bit_counts(column, reports)
            out[j] = counts[key][column.index]
            continue
        if column.kind != "bit":
            out[j] = int(np.count_nonzero(column(reports)))
            continue
        key = (column.part, column.member, column.index // column.width)
        if key not in counts:
            entry = Column(
                column.name, "values", column.part, column.index, column.width, member=column.member
            )
            words = np.ascontiguousarray(_as_words(entry(reports)), dtype="<u8")
            by_byte = words.view(np.uint8).reshape(-1, 8).astype(np.intp) + _BYTE_OFFSETS
            histograms = np.bincount(by_byte.ravel(), minlength=8 * 256).reshape(8, 256)
            counts[key] = (histograms @ _BYTE_BITS).ravel()  # [i]: reports with bit i set
        out[j] = counts[key][column.index % column.width]
    return out


#: Entries of a packed field histogrammed at once by :func:`_packed_bit_counts` (memory).
_PACKED_ENTRIES = 1 << 22


def _packed_bit_counts(column: Column, reports: Any) -> np.ndarray:
    """[i]: how many reports set bit i of a packed-bit column's field (byte i // 8, read
    big-endian as :class:`Column` reads it), from one histogram of each byte column."""
    part = np.asarray(reports if column.part is None else reports[column.part])
    if column.member is not None:
        part = _member(part, column.member)
    rows = _rows(part)
    width = rows.shape[1]
    offsets = 256 * np.arange(width, dtype=np.intp)
    histograms = np.zeros(256 * width, dtype=np.int64)
    step = max(1, _PACKED_ENTRIES // max(width, 1))
    for start in range(0, rows.shape[0], step):
        by_byte = rows[start : start + step].astype(np.intp) + offsets
        histograms += np.bincount(by_byte.ravel(), minlength=256 * width)
    return (histograms.reshape(width, 256) @ _BYTE_BITS[:, ::-1]).ravel()


#: Flags in a pattern column (:func:`pattern_columns`).
PATTERN_FLAGS = 8


@dataclass(frozen=True)
class _Pattern:
    """How many of some flag columns hold their chosen value (0 to len(flags))."""

    flags: tuple[Column, ...]
    values: tuple[bool, ...]

    def __call__(self, reports: Any) -> np.ndarray:
        held = np.zeros(count(reports), dtype=np.int64)
        for flag, value in zip(self.flags, self.values, strict=True):
            held += np.asarray(flag(reports), dtype=bool) == value
        return held


def pattern_columns(
    counted: Sequence[tuple[Sequence[Column], np.ndarray, np.ndarray]], n: int, n_other: int
) -> list[Column]:
    """A structured set of bits as one column: per direction, how many of the
    :data:`PATTERN_FLAGS` flag values that most favour it on the training reports a report
    holds.

    A leak spread over many bits (a fixed set of positions set together, at a rate too low
    for any one bit or pair to show it) puts its reports at the top of this count, where
    honest reports rarely are; the search's thresholds and ratio-ordered codes of the count
    (nine of them) are the events.  The flags are chosen on the training sample only, so
    the fresh count stays valid.  A count, not the 256 patterns of the eight flags: sets
    of so many codes ordered by their training ratio overfit, and cost power elsewhere
    (a pooled-hashing oracle's planted three-bit pattern at rate 0.3 fell from 10 to 8 of 10
    audits caught).
    ``counted`` holds each chunk of flag columns with how many reports of v and of v' set
    each.
    """
    if not counted:
        return []
    chunks = [chunk for chunk, _, _ in counted]
    flags = [column for chunk in chunks for column in chunk]
    if len(flags) < 2:
        return []
    ones = np.concatenate([k for _, k, _ in counted]).astype(float)
    ones_other = np.concatenate([k for _, _, k in counted]).astype(float)
    out = []
    for favours, label in ((1, "v"), (-1, "v'")):
        x, y, nx, ny = (
            (ones, ones_other, n, n_other) if favours > 0 else (ones_other, ones, n_other, n)
        )
        set_ratio = np.log((x + 0.5) / (nx + 1)) - np.log((y + 0.5) / (ny + 1))
        clear_ratio = np.log((nx - x + 0.5) / (nx + 1)) - np.log((ny - y + 0.5) / (ny + 1))
        value = set_ratio >= clear_ratio
        best = np.argsort(-np.maximum(set_ratio, clear_ratio), kind="stable")[:PATTERN_FLAGS]
        pattern = _Pattern(tuple(flags[j] for j in best), tuple(bool(value[j]) for j in best))
        name = f"flags held of the {len(best)} most favouring {label}"
        out.append(Column(name, "feature", feature=pattern))
    return out


@dataclass(frozen=True)
class FeatureSearch:
    """The most distinguishing set of one column's codes, or of two columns' conjunction.

    Every column of the reports (:func:`report_columns`, a chunk of ``CHUNK`` flag columns
    at a time) and every feature is coded; for each, the codes are ordered by their
    smoothed likelihood ratio on the training sample (up to ``MAX_RATIO_CODES`` codes)
    and, for integer columns, by value both ways (thresholds); every prefix set is a
    candidate event.  A candidate is ranked by the bound it would give on a fresh sample
    (:func:`projected_bounds`) at each evaluation size, and :func:`choose` picks the size
    and the event; the best sets of the two best columns favouring the same input are also
    tried as a conjunction.
    """

    name: str = "search"
    features: tuple[Feature, ...] = ()
    level: float = 1e-3
    layout: tuple[bool, ...] | None = None

    def fit(self, reports: Any, reports_other: Any) -> list[Event]:
        """The best event at the size of the training sample (the :class:`Finder` API)."""
        sizes = (count(reports),)
        found = self.candidates(reports, reports_other, sizes)
        event, _ = choose(self, found, sizes, None, reports, reports_other)
        return [] if event is None else [event]

    def candidates(self, reports: Any, reports_other: Any, sizes: Sequence[int]) -> list:
        """Every candidate event that :func:`choose` could pick, each with its projected
        bound at each of ``sizes`` (:meth:`_scored`: the others are never scored)."""
        columns = report_columns(reports, self.layout, self.features)
        n, n_other = count(reports), count(reports_other)
        tables = _value_tables(columns, reports, reports_other)
        records: list[tuple] = []
        flags = [c for c in columns if c.kind in ("bit", "packed", "nan")]
        values = [c for c in columns if c.kind not in ("bit", "packed", "nan")]
        counted = []
        for start in range(0, len(flags), CHUNK):
            chunk = flags[start : start + CHUNK]
            ones = _flag_counts(chunk, reports, {k: t[0] for k, t in tables.items()})
            ones_other = _flag_counts(chunk, reports_other, {k: t[1] for k, t in tables.items()})
            records += self._flag_records(chunk, ones, ones_other, n, n_other)
            counted.append((chunk, ones, ones_other))
        values += pattern_columns(counted, n, n_other)
        for column in values:
            table = tables.get(_table_key(column)) if column.kind == "values" else None
            if table is not None:
                for codes, *histograms in table[0].codes(column, table[1]):
                    records += self._prefix_sets(codes, *histograms, n, n_other)
                continue
            x, y = column(reports), column(reports_other)
            if x.ndim != 1 or len(x) != n or len(y) != n_other:
                continue
            for codes in _fit_codes(column, np.concatenate([x, y])):
                histograms = codes.histogram(x), codes.histogram(y)
                records += self._prefix_sets(codes, *histograms, n, n_other)
        return self._scored(records, sizes)

    def _flag_records(self, chunk, ones, ones_other, n, n_other) -> list[tuple]:
        """Column == 1 and column == 0, each favouring v or v', for a chunk of flags: one
        record per (value, direction), its counts over the chunk's columns."""
        out = []
        for value, k, k_other in ((1, ones, ones_other), (0, n - ones, n_other - ones_other)):
            for favours, x, y, nx, ny in (
                (+1, k, k_other, n, n_other),
                (-1, k_other, k, n_other, n),
            ):
                out.append(("flags", (chunk, value), favours, x, y, nx, ny))
        return out

    def _prefix_sets(self, codes, count_a, count_b, n, n_other) -> list[tuple]:
        """The prefix sets of one column's codes (``count_a``, ``count_b``: each input's
        reports per code, :meth:`_Codes.histogram`), each order both ways: one record per
        order, with the cumulative counts of the favoured input and of the other."""
        size = max(count_a.shape[0], count_b.shape[0])
        count_a = np.pad(count_a, (0, size - count_a.shape[0]))
        count_b = np.pad(count_b, (0, size - count_b.shape[0]))
        out = []
        for favours, x, y, nx, ny in (
            (+1, count_a, count_b, n, n_other),
            (-1, count_b, count_a, n_other, n),
        ):
            orders = []
            if size <= MAX_RATIO_CODES:  # few codes, each well counted: order by their ratio
                orders.append(np.argsort(-(x + 0.5) / (y + 0.5), kind="stable"))
            if codes.kind in ("category", "bins"):  # ordered codes: thresholds x <= t, x >= t
                orders += [np.arange(size), np.arange(size)[::-1]]
            for order in orders:
                kx, ky = np.cumsum(x[order]), np.cumsum(y[order])
                out.append(("prefixes", (codes, order), favours, kx, ky, nx, ny))
        return out

    def _scored(self, records: list[tuple], sizes: Sequence[int]) -> list[_Candidate]:
        """The candidates of every record: a flag record's columns each, a prefix record's
        best prefix at each size.

        A set's projected bound (:func:`projected_bounds`) is at most its training log
        ratio ln(k/n) - ln(k'/n'), since each one-sided Clopper-Pearson bound lies beyond
        its point estimate.  Sets are scored in batches, highest log ratio first, until no
        remaining log ratio reaches the :data:`CHOICE_DEPTH`-th best bound found at any
        size: a set below it can be neither the event :func:`choose` picks nor its partner,
        so the choice is the one scoring every set would give.  Reports of many columns
        (a float vector's 64 bits a coordinate) then cost a few batches, not a Beta
        quantile per column.
        """
        if not records:
            return []
        lengths = np.array([len(record[3]) for record in records])
        k = np.concatenate([np.asarray(record[3], dtype=float) for record in records])
        k_other = np.concatenate([np.asarray(record[4], dtype=float) for record in records])
        nx = np.repeat([float(record[5]) for record in records], lengths)
        ny = np.repeat([float(record[6]) for record in records], lengths)
        with np.errstate(divide="ignore", invalid="ignore"):
            ceiling = np.log(k / nx) - np.log(k_other / ny)
        ceiling = np.nan_to_num(ceiling, nan=-np.inf)  # k = k' = 0: no event
        order = np.argsort(-ceiling, kind="stable")
        # the flag records come first; each later record (prefix sets) starts at a head
        is_flag = np.array([record[0] == "flags" for record in records])
        flags = int(lengths[is_flag].sum())
        heads = (np.cumsum(lengths) - lengths)[~is_flag]
        scores = np.full((len(sizes), k.shape[0]), -np.inf)
        for start in range(0, order.shape[0], SCORE_BATCH):
            batch = order[start : start + SCORE_BATCH]
            if not np.isfinite(ceiling[batch[0]]) and ceiling[batch[0]] < 0:
                break  # -inf from here on: no set with k > 0 left
            scores[:, batch] = projected_bounds(
                k[batch], nx[batch], k_other[batch], ny[batch], sizes, self.level
            )
            rest = start + SCORE_BATCH
            if rest >= order.shape[0] or ceiling[order[rest]] < self._bar(scores, heads, flags):
                break
        out = []
        ends = np.cumsum(lengths)
        for (kind, payload, favours, *_), end, length in zip(records, ends, lengths, strict=True):
            block = scores[:, end - length : end]
            if kind == "flags":
                chunk, value = payload
                for j in np.flatnonzero(np.isfinite(block).any(axis=0)):
                    codes = _Codes(chunk[j], "bool")
                    out.append(_Candidate(block[:, j], favours, codes, np.array([value])))
                continue
            codes, ordered = payload
            for top in set(np.argmax(block, axis=1).tolist()):
                if np.isfinite(block[:, top]).any():
                    out.append(
                        _Candidate(block[:, top], favours, codes, np.sort(ordered[: top + 1]))
                    )
        return out

    @staticmethod
    def _bar(scores: np.ndarray, heads: np.ndarray, flags: int) -> float:
        """The :data:`CHOICE_DEPTH`-th best candidate bound found so far, the smallest over
        the sizes (-inf while fewer are known).  A flag column is a candidate; of a prefix
        record, at least its best prefix at each size is."""
        known = [scores[:, :flags]]
        if heads.size:
            known.append(np.maximum.reduceat(scores, heads, axis=1))
        known = np.concatenate(known, axis=1)
        if known.shape[1] < CHOICE_DEPTH:
            return -np.inf
        return float(np.partition(known, -CHOICE_DEPTH, axis=1)[:, -CHOICE_DEPTH].min())

    def event(self, candidate: _Candidate) -> Event:
        codes, chosen = candidate.codes, candidate.chosen
        shown = ", ".join(str(c) for c in chosen[:6].tolist())
        shown += ", ..." if len(chosen) > 6 else ""
        label = f"{self.name}: {codes.column.name} {codes.kind} code in {{{shown}}}"
        return Event(label, lambda r: np.isin(codes(r), chosen), candidate.favours)


def conjunction(first: Event, second: Event, name: str) -> Event:
    """Both events at once (favouring what the first favours)."""
    return Event(
        f"{first.name} and {second.name.removeprefix(name + ': ')}",
        lambda r: first.test(r) & second.test(r),
        first.favours,
    )


def choose(
    search: FeatureSearch,
    candidates: list[_Candidate],
    sizes: Sequence[int],
    target: float | None,
    reports: Any,
    reports_other: Any,
) -> tuple[Event | None, int]:
    """The event and the evaluation size: the smallest size at which the best candidate is
    projected to exceed ``target`` (a claimed ε), else the first size and its best.

    The choice reads training reports only, so the evaluation stays valid.
    """
    if not candidates:
        return None, 0
    scores = np.stack([c.scores for c in candidates])  # (candidates, sizes)
    pick = 0
    if target is not None and not scores[:, 0].max() > target:
        reaching = np.flatnonzero(scores.max(axis=0) > target)
        if reaching.size:
            pick = int(reaching[0])
    order = np.argsort(-scores[:, pick], kind="stable")
    best = candidates[order[0]]
    event = search.event(best)
    partner = next(
        (
            candidates[i]
            for i in order[1:CHOICE_DEPTH]
            if candidates[i].favours == best.favours
            and candidates[i].codes.column != best.codes.column
        ),
        None,
    )
    if partner is not None:
        joint = conjunction(event, search.event(partner), search.name)
        inside, inside_other = joint.test(reports).sum(), joint.test(reports_other).sum()
        k, k_other = (inside, inside_other) if best.favours > 0 else (inside_other, inside)
        n, n_other = count(reports), count(reports_other)
        nx, ny = (n, n_other) if best.favours > 0 else (n_other, n)
        joint_score = projected_bounds(
            np.asarray(k), nx, np.asarray(k_other), ny, [sizes[pick]], search.level
        )
        if float(joint_score[0]) > float(best.scores[pick]):
            event = joint
    return event, int(sizes[pick])
