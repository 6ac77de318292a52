"""What a figure module declares: :class:`FigureSpec`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd


@dataclass(frozen=True)
class FigureSpec:
    """One paper figure: where its numbers come from and how it is drawn.

    ``draw`` receives the experiment's tidy results table (only the settings of the
    experiment's current grid) and returns a matplotlib figure; it must not simulate
    anything: numbers come from the table, closed forms from :mod:`ldp.theory`.
    """

    name: str  #: file stem under results/figures/
    experiment: str  #: the conf/experiment/<experiment>.yaml whose results it reads
    draw: Callable[[pd.DataFrame], plt.Figure]
    title: str  #: heading in the gallery
    caption: str  #: what is plotted, how, and what the error bars are
    claim: str  #: the paper's claim this figure checks, with its source
    quick: tuple[str, ...] = ("n_trials=5",)  #: overrides for ``--quick``
