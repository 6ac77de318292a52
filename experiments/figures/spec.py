"""What a figure module declares: :class:`FigureSpec`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import matplotlib.pyplot as plt
import pandas as pd

from experiments.figures.tolerance import (
    Detection,
    Part,
    Verdict,
    combine,
    detect,
    mutated,
)

VERDICTS: tuple[str, ...] = (
    "reproduced",
    "partly",
    "differs",
    "not measurable",
    "calibrated",
    "identity",
)
#: Verdicts of statements true by construction: counted apart from "reproduced".
BY_CONSTRUCTION: tuple[str, ...] = ("calibrated", "identity")


@dataclass(frozen=True)
class ClaimCheck:
    """One quantitative claim of a paper checked against our number: the data that both
    ``REPRODUCTION.md`` (:mod:`experiments.figures.reproduction`) and the tests read.

    The claim is checked in ``parts`` (:class:`~experiments.figures.tolerance.Part`), each
    a measured quantity with a declared tolerance.  Nothing about the outcome is typed by
    hand: the verdict combines the parts' verdicts (:func:`~.tolerance.combine`), the
    tolerance column is the parts' own sentences, and *detects* (:attr:`detection`) is
    the smallest deviation of a measured quantity that would change the verdict, found by
    re-running the same parts on mutated values.  ``reason`` is the cause shown when the
    verdict falls short ("not shown" when none is given); ``note`` adds to the tolerance
    column what the parts cannot say (why a reading was chosen).
    """

    source: str  #: where the paper says it, e.g. "PEM Sec. VI-B1 (Fig. 5a)"
    paper: str  #: the paper's statement, with its number
    ours: str  #: the measured values as the report prints them (numbers the parts check)
    parts: tuple[Part, ...]
    reason: str = ""  #: the (measured) cause when the verdict is not "reproduced"
    note: str = ""  #: further words for the tolerance column

    def __init__(
        self,
        source: str,
        paper: str,
        ours: str,
        parts: Part | Sequence[Part] = (),
        reason: str = "",
        note: str = "",
    ) -> None:
        parts = (parts,) if isinstance(parts, Part) else tuple(parts)
        for name, value in (("source", source), ("paper", paper), ("ours", ours)):
            object.__setattr__(self, name, value)
            if not str(value).strip():
                raise ValueError(f"a claim needs a non-empty {name}: {paper or source}")
        if not parts or not all(isinstance(p, Part) for p in parts):
            raise ValueError(f"a claim needs at least one Part: {source}")
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "note", note)

    @property
    def verdict(self) -> Verdict:
        return combine([part.verdict for part in self.parts])

    @property
    def tolerance(self) -> str:
        text = "; ".join(part.describe() for part in self.parts)
        return f"{text}. {self.note}" if self.note else text

    @property
    def cause(self) -> str:
        """The cause column: empty when the claim holds (or is true by construction)."""
        if self.verdict == "reproduced" or self.verdict in BY_CONSTRUCTION:
            return ""
        return self.reason or "not shown"

    @cached_property
    def detection(self) -> Detection:
        """The smallest deviation of a measured quantity that changes the verdict."""
        return detect(self.parts, lambda parts: combine([p.verdict for p in parts]))

    def mutated(self, factor: float = 1.0) -> ClaimCheck:
        """This claim with :attr:`detection`'s deviation applied (times ``factor``)."""
        return ClaimCheck(
            self.source,
            self.paper,
            self.ours,
            mutated(self.parts, self.detection, factor),
            self.reason,
            self.note,
        )


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
