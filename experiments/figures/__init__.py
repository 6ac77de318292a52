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
   ``dataset.name``) and closed forms from :mod:`ldp.theory`.  The protocols a claim
   compares are data, never names in the code: a ``figure:`` block in the yaml
   (``series``, ``subjects``, ``reference``), read by
   :func:`experiments.results.figure_config`.  Colours, markers and the
   theme from :mod:`experiments.figures.style`.  End it with ``FIGURE = FigureSpec(...)``
   (name, experiment, draw, title, caption, claim, quick overrides, ``order`` in the
   gallery, and ``claims(table) -> list[ClaimCheck]`` for ``results/REPRODUCTION.md``).  The
   quick overrides apply to every config of the figure; ``quick_for={"<config>": (...)}``
   cuts one config further (e.g. a sensitivity line to one data set).  A
   module with several panels may define ``FIGURES = [...]`` instead, or draw them side
   by side in one figure: when the panels vary different parameters, give one config per
   panel as ``experiment=("<name>_a", "<name>_b", ...)`` and ``draw`` gets their rows in
   one table.
3. Nothing to register: every ``fig_*.py`` module here is discovered, and ``make
   figures``, ``make figures-quick``, the gallery and the report pick it up.
"""

import importlib
import pkgutil

from experiments.figures.spec import ClaimCheck, FigureSpec


def _discover() -> list[FigureSpec]:
    found: list[FigureSpec] = []
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name.startswith("fig_"):
            module = importlib.import_module(f"{__name__}.{module_info.name}")
            found.extend(getattr(module, "FIGURES", None) or [module.FIGURE])
    names = [spec.name for spec in found]
    if len(set(names)) != len(names):
        raise ValueError(f"two figures share a name: {sorted(names)}")
    return sorted(found, key=lambda spec: (spec.order, spec.name))


#: Every figure, in gallery order.
FIGURES: list[FigureSpec] = _discover()

__all__ = ["FIGURES", "ClaimCheck", "FigureSpec"]
