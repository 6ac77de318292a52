"""The sampler near the edges of its declared law: a real-valued mechanism's check.

A mechanism on real values (:mod:`ldp.numeric`) is ε-LDP as its bytes only if it draws
exactly the law its proof is about.  Float samplers go wrong first where that law has an
edge: a clamp whose folded tail lands on the boundary, the end of a piece of a piecewise
density, an atom.  The support check (:mod:`ldp.audit.support`) catches a report off the
declared grid; this one catches reports on the grid in the wrong proportions there.

A mechanism that declares its law (:class:`HasReportLaw`: ``report_cdf(t, x)`` and
``law_edges(t)``) gets, for each audited input t and each edge e, two windows: the
reports just below e, (e - δ, e], and just above, (e, e + δ], each δ the smallest whose
declared mass reaches :data:`WINDOW_REPORTS` reports of the sample (the whole side if it
cannot).  The count in each window is compared with its declared probability by an exact
two-sided binomial test; the check fails when some p-value is below ``level`` divided by
the number of windows (Bonferroni), so an honest sampler fails with probability at most
``level``.  :func:`ldp.audit.lower_bound` runs it as one more hypothesis of the audit, on
fresh reports, so the audit's false-alarm rate stays α.

What it sees: reports moved into or out of a window near an edge, beyond about four of
the count's standard deviations (√:data:`WINDOW_REPORTS` = 20 reports, 5% of the window,
with the Bonferroni z of a few dozen windows): a truncated tail, a boundary cell that
takes a neighbour's mass (both planted in ``tests/audit/test_law.py``).  What it does not:
a deviation away from every edge, or one that keeps each window's mass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy import stats

__all__ = ["HasReportLaw", "LawCheck", "Window", "check", "windows"]


@runtime_checkable
class HasReportLaw(Protocol):
    """The exact law of a real-valued report (:mod:`ldp.numeric`), for the check of the
    sampler near the law's edges."""

    def report_cdf(self, t: float, x: np.ndarray) -> np.ndarray:
        """P(report <= x | input t), exactly as the reports are drawn, at each x."""

    def law_edges(self, t: float) -> np.ndarray:
        """The points where the law given t has an atom or a kink (clamps, piece ends)."""


#: The expected reports of a window: the resolution of the check near an edge.
WINDOW_REPORTS = 400
#: Bisection steps of a window's width.
STEPS = 64


@dataclass(frozen=True)
class Window:
    """One window of reports near an edge, for the input ``t``."""

    t: float
    low: float  #: the window is (low, high]
    high: float
    observed: int
    expected: float  #: the declared probability times the reports
    p_value: float


@dataclass(frozen=True)
class LawCheck:
    """The windows tried and the check's level; ``holds`` when none is beyond it."""

    windows: tuple[Window, ...]
    level: float

    @property
    def holds(self) -> bool:
        return all(w.p_value > self.level / len(self.windows) for w in self.windows)

    @property
    def worst(self) -> Window | None:
        return min(self.windows, key=lambda w: w.p_value, default=None)

    def __str__(self) -> str:
        w = self.worst
        if w is None:
            return "no window"
        verdict = "matches its declaration" if self.holds else "differs from its declaration"
        return (
            f"the law near its edges {verdict}: worst window ({w.low:.6g}, {w.high:.6g}] "
            f"at t = {w.t:g}, {w.observed} reports against {w.expected:.1f} declared "
            f"(p = {w.p_value:.2g}, {len(self.windows)} windows, level {self.level:.2g})"
        )


def _mass(mechanism: Any, t: float, low: float, high: float) -> float:
    cdf = mechanism.report_cdf(t, np.array([low, high], dtype=float))
    return float(cdf[1] - cdf[0])


def windows(mechanism: Any, t: float, n: int) -> list[tuple[float, float, float]]:
    """(low, high, declared probability) of each window of the input t for n reports."""
    target = min(1.0, WINDOW_REPORTS / max(n, 1))
    edges = np.asarray(mechanism.law_edges(t), dtype=float)
    span = 2.0 * float(np.max(np.abs(edges))) + 1.0
    out = []
    for edge in edges:
        for side in (-1.0, 1.0):

            def mass(width: float, edge: float = edge, side: float = side) -> float:
                low, high = (edge - width, edge) if side < 0 else (edge, edge + width)
                return _mass(mechanism, t, low, high)

            if mass(span) <= 0.0:
                continue  # nothing declared on this side of the edge
            lo, hi = 0.0, span
            if mass(span) > target:
                for _ in range(STEPS):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if mass(mid) < target else (lo, mid)
            low, high = (edge - hi, edge) if side < 0 else (edge, edge + hi)
            out.append((low, high, mass(hi)))
    return out


def check(mechanism: Any, samples: dict[float, np.ndarray], level: float) -> LawCheck:
    """The windows of each input t of ``samples`` (t -> its reports) against the declared
    law, at ``level`` (module docstring)."""
    found = []
    for t, reports in samples.items():
        reports = np.asarray(reports, dtype=float)
        n = reports.shape[0]
        for low, high, probability in windows(mechanism, t, n):
            observed = int(np.count_nonzero((reports > low) & (reports <= high)))
            p = min(max(probability, 0.0), 1.0)
            p_value = (
                float(stats.binomtest(observed, n, p).pvalue)
                if 0 < p < 1
                else (1.0 if observed == round(n * p) else 0.0)
            )
            found.append(Window(float(t), low, high, observed, n * p, p_value))
    if not found or not math.isfinite(level):
        raise ValueError("no window to check: the mechanism declares no edge")
    return LawCheck(tuple(found), level)
