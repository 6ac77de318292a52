"""Distinguishing events: which reports make v more likely than v'.

An :class:`Event` maps a batch of reports to one boolean per report and says which input
it is evidence for (``favours`` = +1: v, -1: v', 0: try both).  Fixed events are built
from the two inputs alone (:func:`default_events` picks them from the report's type); a
:class:`Finder` chooses an event from a held-out training half of the reports, so the
bound computed on the other half stays valid whatever it chose.

Events for the mechanisms of :mod:`ldp.oracles` and beyond:

* categorical reports (GRR, or any 1-D integer report): ``report == v``;
* unary bits (SUE, OUE, THE, any :class:`~ldp.oracles.UnaryReports`): bit v set, bit v'
  unset, and both (the likelihood-ratio event: p(1-q) against q(1-p), ratio e^ε);
* local hashing (BLH, OLH; :class:`~ldp.oracles.HashReports`):
  H_seed(v) = y and H_seed(v') != y (ratio p(g-1)/(1-p) = e^ε);
* integer histograms (SHE): r[v] >= s and r[v'] <= 0 (ratio α^{-2s} = e^ε);
* floating point, for any float report: a coordinate with |x| < 1/2 off the 2^-53 grid
  (Mironov's attack on fl(v + noise));
* the generic :class:`FeatureSearch`, for unknown mechanisms: every column of the reports
  (bits, integers, floats with their grid class and repeated exact values) becomes
  categorical codes, and the most distinguishing set of codes of one column, or the
  conjunction of two columns' sets, is chosen on the training half.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ldp import hashing
from ldp.audit.bounds import epsilon_lower_bound
from ldp.oracles import BLH, GRR, OLH, SHE, HashReports, UnaryReports
from ldp.oracles.unary import UnaryEncoding

#: Columns of a report the generic search looks at, at most.
MAX_COLUMNS = 512
#: An integer column with more distinct values than this (on the training half) is binned.
MAX_CATEGORIES = 1024
#: Quantile bins of a binned column.
BINS = 32
#: Above this many codes, ordering codes by their training ratio overfits (a handful of
#: codes seen a few times under one input only): such columns get thresholds only.
MAX_RATIO_CODES = 256


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


class Finder(Protocol):
    """Chooses events from training reports of v and of v' (a held-out half)."""

    name: str

    def fit(self, reports: Any, reports_other: Any) -> list[Event]: ...


# ------------------------------------------------------------------ report structure
def count(reports: Any) -> int:
    """The number of reports in a batch (arrays: rows; tuples: their first array)."""
    if isinstance(reports, tuple):
        for part in reports:
            if isinstance(part, np.ndarray) and part.ndim >= 1:
                return int(part.shape[0])
        raise TypeError("a tuple of reports must hold at least one array")
    return int(np.shape(reports)[0])


def _unary_bits(reports: UnaryReports) -> np.ndarray:
    return np.unpackbits(reports.bits, axis=1, count=reports.domain_size).astype(bool)


def report_columns(reports: Any) -> list[tuple[str, np.ndarray]]:
    """Every column of a batch of reports, named: bits, integer or float arrays of length n."""
    if isinstance(reports, UnaryReports):
        bits = _unary_bits(reports)
        return [(f"bit {j}", bits[:, j]) for j in range(bits.shape[1])]
    if isinstance(reports, tuple):
        names = getattr(reports, "_fields", [str(i) for i in range(len(reports))])
        n = count(reports)
        columns = []
        for name, part in zip(names, reports, strict=True):
            if isinstance(part, np.ndarray) and part.ndim >= 1 and len(part) == n:
                columns += [(f"{name}{label}", col) for label, col in report_columns(part)]
        return columns
    array = np.asarray(reports)
    if array.dtype == np.uint8 and array.ndim == 2:  # packed bits, most likely
        array = np.unpackbits(array, axis=1).astype(bool)
    if array.ndim == 1:
        return [("", array)]
    flat = array.reshape(array.shape[0], -1)
    return [(f"[{j}]", flat[:, j]) for j in range(flat.shape[1])]


# ------------------------------------------------------------------ fixed events
def _coordinate(reports: Any, j: int) -> np.ndarray:
    if isinstance(reports, UnaryReports):
        byte, shift = divmod(j, 8)
        return ((reports.bits[:, byte] >> np.uint8(7 - shift)) & 1).astype(bool)
    array = np.asarray(reports)
    return array[:, j] if array.ndim == 2 else array


def categorical_events(v: int, v_prime: int) -> list[Event]:
    """report == v (evidence for v) and report == v' (for v')."""
    return [
        Event(f"report == {v}", lambda r: np.asarray(r) == v, +1),
        Event(f"report == {v_prime}", lambda r: np.asarray(r) == v_prime, -1),
    ]


def unary_events(v: int, v_prime: int) -> list[Event]:
    """Bit v set, bit v' unset, and both; mirrored for v'."""
    events = []
    for a, b, favours in ((v, v_prime, +1), (v_prime, v, -1)):
        events += [
            Event(f"bit {a} set", lambda r, a=a: _coordinate(r, a), favours),
            Event(f"bit {b} unset", lambda r, b=b: ~_coordinate(r, b), favours),
            Event(
                f"bit {a} set and bit {b} unset",
                lambda r, a=a, b=b: _coordinate(r, a) & ~_coordinate(r, b),
                favours,
            ),
        ]
    return events


def _keys(key: Any, n: int) -> np.ndarray:
    key = np.asarray(key)
    if key.ndim == 0:
        return np.full(n, int(key), dtype=np.uint64)
    return np.repeat(key.astype(np.uint64)[None, :], n, axis=0)


def hashed_events(g: int, key: Any, key_other: Any, labels: tuple[str, str]) -> list[Event]:
    """H_seed(v) = y and H_seed(v') != y; mirrored.  ``key``: what the client hashes."""

    def hit(reports: HashReports, k: Any) -> np.ndarray:
        seeds = np.asarray(reports.seeds, dtype=np.uint64)
        return hashing.hash_values(_keys(k, len(seeds)), seeds, g) == np.asarray(reports.values)

    a, b = labels
    return [
        Event(
            f"H(seed, {a}) == y != H(seed, {b})",
            lambda r: hit(r, key) & ~hit(r, key_other),
            +1,
        ),
        Event(
            f"H(seed, {b}) == y != H(seed, {a})",
            lambda r: hit(r, key_other) & ~hit(r, key),
            -1,
        ),
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


def off_grid(x: np.ndarray, bits: int = 53) -> np.ndarray:
    """|x| < 1/2 and x not a multiple of 2^-bits: impossible for fl(1 + noise) (Mironov)."""
    x = np.asarray(x, dtype=float)
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


def default_events(mechanism: Any, v: Any, v_prime: Any, sample: Any) -> list[Event | Finder]:
    """The fixed events that fit ``sample``'s report type, plus the generic search.

    ``mechanism.audit_events(v, v')`` (optional) adds the mechanism's own events (a new
    oracle's optimal ones) in front.

    ``mechanism.oracle_input(value)`` (optional) maps an input to what the client feeds its
    frequency oracle (a heavy hitter's client: a PEM prefix, an SPM segment); by default
    the input itself.  The fixed events are built on those two oracle inputs.
    ``mechanism.grid`` (SHE's s) sets the histogram event's threshold.
    """
    events: list[Event | Finder] = []
    if hasattr(mechanism, "oracle_input"):
        v, v_prime = mechanism.oracle_input(v), mechanism.oracle_input(v_prime)
    scalar = np.ndim(v) == 0 and np.ndim(v_prime) == 0
    own_events = getattr(mechanism, "audit_events", None)  # a mechanism's own optimal events
    if callable(own_events) and scalar:
        events += list(own_events(int(v), int(v_prime)))
    if isinstance(sample, UnaryReports) and scalar:
        events += unary_events(int(v), int(v_prime))
    elif isinstance(sample, tuple) and hasattr(sample, "seeds") and hasattr(mechanism, "g"):
        events += hashed_events(int(mechanism.g), v, v_prime, ("v", "v'"))
    elif isinstance(sample, np.ndarray):
        if sample.dtype.kind in "iu" and sample.ndim == 1 and scalar:
            events += categorical_events(int(v), int(v_prime))
        if sample.dtype.kind in "iu" and sample.ndim == 2 and scalar and hasattr(mechanism, "grid"):
            events += histogram_events(int(v), int(v_prime), int(mechanism.grid))
        if sample.dtype.kind == "f":
            if sample.ndim == 1:
                events += float_events(None)
            elif scalar and sample.ndim == 2 and max(int(v), int(v_prime)) < sample.shape[1]:
                events += float_events([int(v), int(v_prime)])
    events.append(FeatureSearch())
    return events


def optimal_event_probabilities(oracle: Any) -> tuple[float, float]:
    """P(E | v) and P(E | v') of the default event with ratio e^ε, for an oracle of ldp.

    GRR: (p*, q*); unary encodings and THE: (p*(1-q*), q*(1-p*)); local hashing under an
    ideal hash: (p*(1-1/g), (1-p*)(1-1/g)/(g-1)); SHE: from its tables.  Feed them to
    :func:`ldp.audit.expected_lower_bound` to size an audit.  Another oracle declares them
    with an ``audit_event_probabilities()`` method (and its events with ``audit_events``).
    """
    own = getattr(oracle, "audit_event_probabilities", None)  # declared by a new oracle
    if callable(own):
        return own()
    if isinstance(oracle, SHE):
        noise, s = oracle.noise, oracle.grid
        values = noise.values
        own, other = (np.array(t.masses, dtype=float) / 2.0**128 for t in (noise.own, noise.other))
        at_least, at_most = values >= s, values <= 0
        return (
            float(own[at_least].sum() * other[at_most].sum()),
            float(other[at_least].sum() * own[at_most].sum()),
        )
    if isinstance(oracle, BLH | OLH):
        g, p = oracle.g, oracle.p_star
        return p * (1 - 1 / g), (1 - p) * (1 - 1 / g) / (g - 1)
    if isinstance(oracle, UnaryEncoding):
        p, q = oracle.p_star, oracle.q_star
        return p * (1 - q), q * (1 - p)
    if isinstance(oracle, GRR):
        return oracle.p_star, oracle.q_star
    raise TypeError(f"no optimal event is known for {type(oracle).__name__}")


# ------------------------------------------------------------------ the generic search
@dataclass(frozen=True, eq=False)
class _Codes:
    """Maps column ``column`` of the reports to integer codes fitted on training data."""

    column: int
    kind: str  # "bool", "category", "bins", "float-grid" or "float-value"
    table: tuple[np.ndarray, ...] = ()  # sorted categories, bin edges, repeated values

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.kind == "bool":
            return x.astype(np.int64)
        if self.kind == "category":  # an unseen value gets the code len(categories)
            return _lookup(self.table[0], x, len(self.table[0]))
        if self.kind == "bins":
            return np.searchsorted(self.table[0], x, side="right")
        if self.kind == "float-grid":  # binade, sign, on the 2^-53 grid
            with np.errstate(divide="ignore", invalid="ignore"):
                binade = np.clip(np.floor(np.log2(np.abs(x))), -16, 16)
            binade = np.where(np.isfinite(binade), binade + 17, 0).astype(np.int64)
            with np.errstate(invalid="ignore", over="ignore"):
                scaled = x * 2.0**53
                on_grid = np.isfinite(scaled) & (scaled == np.floor(scaled))
            return (binade * 2 + (x < 0)) * 2 + on_grid
        # float-value: each repeated exact value its own code, the rest in quantile bins
        repeated, edges = self.table
        bins = len(repeated) + np.searchsorted(edges, x, side="right")
        return np.where(np.isin(x, repeated), _lookup(repeated, x, 0), bins)


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


def _fit_codes(j: int, pooled: np.ndarray) -> list[_Codes]:
    """The code mappers of one column, fitted on both inputs' training reports."""
    if pooled.dtype == bool:
        return [_Codes(j, "bool")]
    if pooled.dtype.kind in "iu":
        distinct = np.unique(pooled)
        if distinct.size <= MAX_CATEGORIES:
            return [_Codes(j, "category", (distinct,))]
        return [_Codes(j, "bins", (_quantile_edges(pooled),))]
    if pooled.dtype.kind == "f":
        values, counts = np.unique(pooled, return_counts=True)
        repeated = values[counts >= 3]
        return [
            _Codes(j, "float-grid"),
            _Codes(j, "float-value", (repeated, _quantile_edges(pooled))),
        ]
    return []


@dataclass(frozen=True)
class FeatureSearch:
    """The most distinguishing set of one column's codes, or of two columns' conjunction.

    For each coded column (at most ``MAX_COLUMNS``, evenly spaced) the codes are ordered by
    their smoothed likelihood ratio on the training half (up to ``MAX_RATIO_CODES`` codes)
    and, for integer columns, by value both ways (thresholds); every prefix set is scored
    by the Clopper–Pearson bound it would give there (at ``level``).  The best sets of the
    two best columns favouring the same input are also tried as a conjunction.  One event is
    returned, to be counted on the other half.
    """

    name: str = "search"
    level: float = 1e-3

    def fit(self, reports: Any, reports_other: Any) -> list[Event]:
        columns, columns_other = report_columns(reports), report_columns(reports_other)
        if not columns:
            return []
        names = [name or "report" for name, _ in columns]
        n, n_other = count(reports), count(reports_other)
        chosen = np.linspace(0, len(columns) - 1, min(len(columns), MAX_COLUMNS))
        candidates = []  # (score, favours, codes, chosen code set)
        for j in np.unique(chosen.astype(int)).tolist():
            pooled = np.concatenate([columns[j][1], columns_other[j][1]])
            for codes in _fit_codes(j, pooled):
                a, b = codes(columns[j][1]), codes(columns_other[j][1])
                candidates += self._best_sets(codes, a, b, n, n_other)
        if not candidates:
            return []
        candidates.sort(key=lambda c: c[0], reverse=True)
        best = candidates[0]
        event = self._event(best, names)
        partner = next(
            (c for c in candidates[1:] if c[1] == best[1] and c[2].column != best[2].column), None
        )
        if partner is not None:
            second = self._event(partner, names)
            joint = Event(
                f"{event.name} and {second.name.removeprefix(self.name + ': ')}",
                lambda r, one=event, two=second: one.test(r) & two.test(r),
                best[1],
            )
            inside, inside_other = joint.test(reports).sum(), joint.test(reports_other).sum()
            k, k_other = (inside, inside_other) if best[1] > 0 else (inside_other, inside)
            first, last = (n, n_other) if best[1] > 0 else (n_other, n)
            if float(epsilon_lower_bound(k, first, k_other, last, self.level)) > best[0]:
                event = joint
        return [event]

    def _best_sets(self, codes: _Codes, a: np.ndarray, b: np.ndarray, n: int, n_other: int):
        size = int(max(a.max(initial=0), b.max(initial=0))) + 1
        count_a = np.bincount(a, minlength=size).astype(float)
        count_b = np.bincount(b, minlength=size).astype(float)
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
                scores = epsilon_lower_bound(
                    np.cumsum(x[order]), nx, np.cumsum(y[order]), ny, self.level
                )
                top = int(np.argmax(scores))
                if np.isfinite(scores[top]):
                    out.append((float(scores[top]), favours, codes, np.sort(order[: top + 1])))
        return out

    def _event(self, candidate, names: list[str]) -> Event:
        _, favours, codes, chosen = candidate
        shown = ", ".join(str(c) for c in chosen[:6].tolist())
        shown += ", ..." if len(chosen) > 6 else ""
        label = f"{self.name}: {names[codes.column]} {codes.kind} code in {{{shown}}}"

        def test(reports: Any) -> np.ndarray:
            return np.isin(codes(report_columns(reports)[codes.column][1]), chosen)

        return Event(label, test, favours)
