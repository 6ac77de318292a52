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
    settings += [setting("protocol=grr"), setting("dataset.n=1e+06"), setting("dataset.n=100000")]
    assert _grid(settings) == (
        "epsilon ∈ {1, 2, 4, 5}; protocol ∈ {olh, grr}; dataset.n ∈ {100000, 1000000}"
    )


def test_grid_includes_the_value_a_config_fixes():
    # Fig. 2: pem_fig2_m sweeps m = 32, 48; m = 64 comes from pem_fig2_n, which fixes it
    swept = [
        Setting(
            config={"dataset": {"m": m}, "epsilon": 1.0}, key=str(m), overrides=(f"dataset.m={m}",)
        )
        for m in (32, 48)
    ]
    fixed = Setting(config={"dataset": {"m": 64}, "epsilon": 1.0}, key="64", overrides=())
    assert _grid([*swept, fixed]) == "dataset.m ∈ {32, 48, 64}"


def test_the_fig2_gallery_grid_agrees_with_its_caption(settings_of):
    from experiments.figures.fig_pem_fig2 import FIGURE

    settings = [s for name in FIGURE.experiments for s in settings_of(f"experiment={name}")]
    grid = _grid(settings)
    assert "dataset.m ∈ {32, 48, 64}" in grid, grid
    assert "epsilon ∈ {0.5, 1, 2}" in grid and "dataset.n ∈ {100000, 1000000, 10000000}" in grid


def test_grid_includes_the_group_choice_a_config_fixes():
    # Fig. 5: pem_fig5 sweeps protocol = pem, mcm; pem_fig5_spm fixes protocol = spm
    swept = [
        Setting(config={"protocol": {"name": p.upper()}}, key=p, overrides=(f"protocol={p}",))
        for p in ("pem", "mcm")
    ]
    fixed = Setting(config={"protocol": {"name": "SPM"}}, key="s", choices={"protocol": "spm"})
    assert _grid([*swept, fixed]) == "protocol ∈ {pem, mcm, spm}"


def test_the_fig5_gallery_grid_names_spm(settings_of):
    from experiments.figures.fig_pem_fig5 import FIGURE

    settings = [s for name in FIGURE.experiments for s in settings_of(f"experiment={name}")]
    grid = _grid(settings)
    assert "protocol ∈ {pem, mcm, " in grid and "spm" in grid.split(";")[1], grid


def test_grid_of_no_sweep_is_a_dash():
    assert _grid([setting()]) == "-"


def test_engine_legend_lists_only_the_engines_drawn():
    from experiments.figures import style

    labels = [h.get_label() for h in style.engine_handles(["sampled"])]
    assert labels == ["sampled engine"]
    both = [h.get_label() for h in style.engine_handles(["reports", "sampled"])]
    assert both == ["sampled engine", "reports engine"]


def test_a_protocol_with_missing_points_is_not_joined_across_them():
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from experiments.figures.pem_section6 import utility_grid

    rows = []
    for protocol, epsilons in (("PEM", (1.0, 2.0, 3.0)), ("SPM", (1.0, 3.0))):
        for epsilon in epsilons:
            for metric in ("f1", "ncr"):
                for trial in range(2):
                    rows.append(
                        {
                            "dataset.name": "exponential",
                            "dataset.label": "exponential",
                            "protocol.name": protocol,
                            "epsilon": epsilon,
                            "metric": metric,
                            "value": 0.5,
                            "trial": trial,
                            "item": None,
                        }
                    )
    figure = utility_grid(pd.DataFrame(rows), "epsilon", "ε")
    spm = [line for line in figure.axes[0].lines if line.get_color() != "none"]
    ys = [line.get_ydata() for line in spm if len(line.get_xdata()) == 3]
    assert any(pd.isna(list(y)).any() for y in ys)  # SPM's ε = 2 is a gap, not a segment


def test_every_block_of_the_committed_gallery_is_kept_by_an_update():
    """An update (``--only``) keeps the blocks of the figures it does not draw: each must be
    found by its image, also when the title holds brackets ("in [-1, 1]"), which dropped
    the mean-estimation block from the gallery."""
    from pathlib import Path

    from experiments.figures.gallery import existing_blocks

    index = Path(__file__).resolve().parents[2] / "results" / "figures" / "index.md"
    headings = [line for line in index.read_text().splitlines() if line.startswith("## ")]
    blocks = existing_blocks(index)
    assert len(blocks) == len(headings) and "mean_eps" in blocks
