"""What a figure module declares: :class:`FigureSpec`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import matplotlib.pyplot as plt
import pandas as pd


@dataclass(frozen=True)
class Claim:
    """One quantitative claim of a paper beside our number, for ``REPRODUCTION.md``."""

    source: str  #: where the paper says it, e.g. "PEM Sec. VI-B1 (Fig. 5a)"
    paper: str  #: the claim, with the paper's number
    ours: str  #: our number, measured on the figure's table (with its spread)
    verdict: Literal["reproduced", "differs", "partly"]
    reason: str = ""  #: for "differs"/"partly": the likely reason


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
    claims: Callable[[pd.DataFrame], list[Claim]] | None = None

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
