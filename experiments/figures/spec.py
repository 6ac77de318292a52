"""What a figure module declares: :class:`FigureSpec`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import matplotlib.pyplot as plt
import pandas as pd

Verdict = Literal["reproduced", "partly", "differs", "not measurable"]
VERDICTS: tuple[str, ...] = ("reproduced", "partly", "differs", "not measurable")


def both(*verdicts: str) -> str:
    """The verdict of a sentence with several parts: every part must hold.

    All parts reproduced: "reproduced"; a part not measurable: "not measurable"; any part
    that differs while another holds (or is partly reproduced): "partly"; all differ:
    "differs".
    """
    if "not measurable" in verdicts:
        return "not measurable"
    if all(v == "reproduced" for v in verdicts):
        return "reproduced"
    if all(v == "differs" for v in verdicts):
        return "differs"
    return "partly"


def verdict_of(holds: bool | None, otherwise: Verdict = "differs") -> Verdict:
    """The verdict of one part read from one condition: "reproduced" when it holds,
    ``otherwise`` ("differs" or "partly") when not, "not measurable" when ``holds`` is None."""
    if holds is None:
        return "not measurable"
    return "reproduced" if holds else otherwise


def cause(verdict: str, reason: str) -> str:
    """The reason column of a check: empty when it is reproduced, else ``reason``."""
    return "" if verdict == "reproduced" else reason


#: |mean - exact| / SE beyond which a point of an unbiased estimator is called off.
Z_LIMIT = 4.5


def largest_z(mean: pd.Series, exact: pd.Series, se: pd.Series) -> float:
    """The largest |mean - exact| / SE over the points with SE > 0; NaN if there are none."""
    z = (mean - exact) / se.where(se > 0)
    return float(z.abs().max()) if z.notna().any() else math.nan


def chance_beyond(points: int, z: float = Z_LIMIT) -> float:
    """The chance that any of ``points`` unbiased normal points strays beyond z SE (union
    bound over two-sided normal tails): the false-alarm rate a z-tolerance states."""
    from scipy.stats import norm

    return min(1.0, points * 2 * float(norm.sf(z)))


@dataclass(frozen=True)
class ClaimCheck:
    """One quantitative claim of a paper checked against our number: the data that both
    ``REPRODUCTION.md`` (:mod:`experiments.figures.reproduction`) and the tests read.

    Every check states its ``tolerance``: what counts as agreement and why (from our
    standard error, from the digits the paper prints, or from a stated reading of a
    qualitative word, quoted).  A claim whose sentence has several parts checks each; a
    part that cannot be measured makes the check ``"not measurable"`` (never a silent
    pass).  Construction refuses a check without a source, a tolerance or a known verdict.
    """

    source: str  #: where the paper says it, e.g. "PEM Sec. VI-B1 (Fig. 5a)"
    paper: str  #: the paper's statement, with its number
    ours: str  #: the measured value on the figure's table, as the report prints it
    verdict: Verdict
    tolerance: str  #: what counts as a match, and why
    reason: str = ""  #: for "differs"/"partly"/"not measurable": the (demonstrated) cause
    #: the measured value as a number, where the claim is one number (NaN otherwise)
    measured: float = math.nan
    #: its standard error over trials, where it is a mean of trials (NaN otherwise)
    se: float = math.nan

    def __post_init__(self) -> None:
        for name in ("source", "paper", "ours", "tolerance"):
            if not str(getattr(self, name)).strip():
                raise ValueError(f"a claim needs a non-empty {name}: {self.paper or self.source}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.se < 0:
            raise ValueError(f"a standard error is >= 0, got {self.se}: {self.source}")


@dataclass(frozen=True)
class FigureSpec:
    """One paper figure: where its numbers come from and how it is drawn.

    ``draw`` receives the experiment's tidy results table (only the settings of the
    experiment's current grid; with several experiments, their tables concatenated) and
    returns a matplotlib figure; it must not simulate anything: numbers come from the
    table, closed forms from :mod:`ldp.theory`.
    """

    name: str  #: file stem under results/figures/
    #: the conf/experiment/<experiment>.yaml whose results it reads; a tuple of names for a
    #: figure whose panels vary different parameters (one config per panel, one table)
    experiment: str | tuple[str, ...]
    draw: Callable[[pd.DataFrame], plt.Figure]
    title: str  #: heading in the gallery
    caption: str  #: what is plotted, how, and what the error bars are
    claim: str  #: the paper's claim this figure checks, with its source
    quick: tuple[str, ...] = ("n_trials=5",)  #: overrides for ``--quick``, every config
    #: further ``--quick`` overrides of single configs (e.g. sensitivity lines cut to one
    #: data set); an override here replaces the one of ``quick`` with the same key
    quick_for: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    order: float = 100.0  #: position in the gallery (paper order)
    #: the quantitative claims this figure checks, computed from its table
    claims: Callable[[pd.DataFrame], list[ClaimCheck]] | None = None
    #: rough seconds ``draw`` takes (a model curve computed point by point): the longest
    #: drawings start first when the figures are drawn in parallel
    drawing_seconds: float = 1.0

    @property
    def experiments(self) -> tuple[str, ...]:
        """The experiment names whose tables are concatenated into the one ``draw`` gets."""
        return (self.experiment,) if isinstance(self.experiment, str) else tuple(self.experiment)

    def quick_overrides(self, experiment: str) -> tuple[str, ...]:
        """The ``--quick`` overrides of one of the figure's configs: ``quick``, then its
        own ``quick_for`` entries (which win over ``quick``'s for the same key)."""
        own = self.quick_for.get(experiment, ())
        keys = {override.split("=", 1)[0] for override in own}
        return tuple(o for o in self.quick if o.split("=", 1)[0] not in keys) + tuple(own)
