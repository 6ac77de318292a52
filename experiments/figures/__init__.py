"""The paper figures: one small module per figure, registered in :data:`FIGURES`.

``python -m experiments.figures [--quick]`` runs what is missing of each figure's
experiment (resuming), then draws every figure from the results tables (PNG + PDF) and
writes the gallery ``index.md``.

How to add a figure
-------------------
1. Write ``conf/experiment/<name>.yaml``: ``# @package _global_``, a header comment naming
   the paper figure and the command, ``name: <name>``, only what differs from
   ``conf/config.yaml`` (``override /protocol: ...``, ``override /dataset: ...``,
   ``n_trials``, ``options``) and its grid in ``hydra.sweeper.params`` (Hydra sweep
   syntax: ``epsilon: 0.5,1,2`` or ``range(0.5,5.01,0.5)``; group keys like ``protocol:
   pem,spm,mcm`` work too).  ``python -m experiments.run experiment=<name>`` now runs it.
2. Write ``experiments/figures/fig_<name>.py`` with ``draw(table) -> Figure`` reading only
   the tidy table (columns: ``metric``, ``item``, ``value``, ``analytic``, the flattened
   parameters such as ``epsilon``, ``protocol.name``, ``protocol.label``, ``engine``,
   ``dataset.name``) and closed forms from :mod:`ldp.theory`; colours, markers and the
   theme from :mod:`experiments.figures.style`.  End it with ``FIGURE = FigureSpec(...)``
   (name, experiment, draw, title, caption, claim, quick overrides).
3. Append ``fig_<name>.FIGURE`` to :data:`FIGURES` below.  ``make figures`` and
   ``make figures-quick`` pick it up, and the gallery lists it.
"""

from experiments.figures import fig_oracle_variance
from experiments.figures.spec import FigureSpec

#: Every figure, in gallery order.
FIGURES: list[FigureSpec] = [
    fig_oracle_variance.FIGURE,
]

__all__ = ["FIGURES", "FigureSpec"]
