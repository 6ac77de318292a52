"""The gallery states each figure's grid as the settings really take it."""

from __future__ import annotations

from experiments.figures.gallery import _grid
from experiments.settings import Setting


def setting(*overrides: str) -> Setting:
    return Setting(config={}, key="k", overrides=overrides)


def test_grid_lists_each_value_once_in_numeric_order():
    # two experiments of one figure: one writes 2.0, the other 2 (Fig. 5's "{1.0, ..., 2, 4}")
    settings = [setting(f"epsilon={e}") for e in ("1.0", "2.0", "5.0")]
    settings += [setting("epsilon=2"), setting("epsilon=4"), setting("protocol=olh")]
    settings += [setting("protocol=grr")]
    assert _grid(settings) == "epsilon ∈ {1, 2, 4, 5}; protocol ∈ {olh, grr}"


def test_grid_of_no_sweep_is_a_dash():
    assert _grid([setting()]) == "-"
