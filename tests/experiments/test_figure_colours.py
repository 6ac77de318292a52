"""One colour and marker per protocol and per variant of a protocol, in every figure.

Two checks: every figure module takes its colours from :mod:`experiments.figures.style`
only (no palette, hex colour or matplotlib cycle colour of its own), and the legends the
figures draw give each series label the colour ``style.series_color`` assigns it (so a
label never has two colours, within or across figures).  The legends of the Sec. VI
figures are checked on their tiny tables in ``test_figures_pem_section6``; the helper
:func:`legend_colours` is shared.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import ErrorbarContainer

from experiments.figures import pem_section6 as sec6
from experiments.figures import style
from ldp import registry

FIGURES_DIR = Path(style.__file__).parent
#: Colour sources a figure module must not use: a palette, a hex literal, "C3"-style cycle
#: colours.  Greys ("0.3"), black and white are not protocol colours and are allowed.
FORBIDDEN = (
    re.compile(r"color_palette\("),
    re.compile(r"blend_palette\("),
    re.compile(r"[\"']#[0-9a-fA-F]{6}[\"']"),
    re.compile(r"colou?r\s*=\s*[\"']C\d[\"']"),
    re.compile(r"\bcm\.\w+\("),
)


def _modules() -> list[Path]:
    return sorted(p for p in FIGURES_DIR.glob("*.py") if p.name.startswith(("fig_", "pem_section")))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.stem)
def test_figure_modules_take_colours_from_style_only(path):
    text = path.read_text()
    for pattern in FORBIDDEN:
        assert not pattern.search(text), f"{path.name}: {pattern.pattern}"


def _handle_colour(handle) -> tuple[float, float, float] | None:
    if isinstance(handle, ErrorbarContainer):
        handle = handle.lines[0]
    getter = getattr(handle, "get_color", None) or getattr(handle, "get_facecolor", None)
    if getter is None:
        return None
    return tuple(round(c, 4) for c in mcolors.to_rgb(getter()))


def legend_colours(figure: plt.Figure) -> dict[str, tuple[float, float, float]]:
    """Every legend entry of ``figure`` (figure and axes legends) whose label names a
    series (its text up to the first ", " is a registered protocol, optionally with a
    parenthesised variant), mapped to the colour its handle is drawn in."""
    legends = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend()]
    found: dict[str, tuple[float, float, float]] = {}
    for legend in legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            series = text.get_text().split(", ")[0]
            if style.protocol_of(series) is None:
                continue  # "sampled engine", "model, Eq. (4)", "η = 2": not a series
            colour = _handle_colour(handle)
            if colour is not None:
                found[text.get_text()] = colour
    return found


def check_series_colours(figures: dict[str, plt.Figure]) -> None:
    """Each legend label in the colour ``style.series_color`` gives its series, and no
    series label with two colours across ``figures``."""
    seen: dict[str, tuple[str, tuple]] = {}
    for name, figure in figures.items():
        for label, colour in legend_colours(figure).items():
            series = label.split(", ")[0]
            expected = tuple(round(c, 4) for c in style.series_color(series))
            assert colour == expected, f"{name}: {label!r} drawn in {colour}, not {expected}"
            other = seen.setdefault(series, (name, colour))
            assert other[1] == colour, f"{series!r}: {other[1]} in {other[0]}, {colour} in {name}"


def test_a_protocol_and_its_modes_share_a_colour_its_variants_have_their_own():
    mcm = style.series_color("MCM")
    assert style.series_color("MCM (improved)") == mcm
    assert style.series_color("MCM (partitioned, threshold)") == mcm
    variants = ["MCM (√n channels)", "MCM (8-bit OLH blocks)", "MCM (original)"]
    colours = [style.series_color(v) for v in variants]
    assert len({mcm, *colours}) == 4
    # a mode beside a variant keeps the variant's colour and marker
    assert style.series_color("MCM (8-bit OLH blocks, partitioned)") == colours[1]
    assert style.series_marker("MCM (8-bit OLH blocks, partitioned)") == style.series_marker(
        "MCM (8-bit OLH blocks)"
    )
    # the variant is a shade of its protocol's colour: same hue
    assert mcolors.rgb_to_hsv(colours[0])[0] == pytest.approx(mcolors.rgb_to_hsv(mcm)[0], abs=0.02)


def test_every_registered_protocol_has_its_own_colour_and_a_marker():
    names = list(registry.protocols())
    colours = [style.series_color(n) for n in names]
    assert len(set(colours)) == len(colours)
    assert all(style.series_marker(n) in style.MARKERS for n in names)


def test_a_plug_in_gets_a_stable_colour_and_marker_without_moving_the_built_ins(monkeypatch):
    from dataclasses import dataclass

    before = {n: (style.color(n), style.marker(n)) for n in registry.protocols()}
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @dataclass
    class PlugIn:
        epsilon: float = 1.0
        domain_size: int = 2

    PlugIn.__module__ = "my_lab.oracles"
    registry.register(PlugIn, name="PlugInOracle", kind="oracle", order=15)
    colour = style.series_color("PlugInOracle")
    assert colour == style.series_color("pluginoracle")  # case-insensitive, stable
    assert colour not in {c for c, _ in before.values()}
    assert style.series_marker("PlugInOracle") in style.MARKERS
    # registered between GRR and SUE, it moves no built-in's colour or marker
    assert {n: (style.color(n), style.marker(n)) for n in before} == before


def test_the_figure_5_grid_draws_each_variant_in_its_own_colour():
    rows = []
    for protocol, label, value in [
        ("PEM", "PEM", 0.9),
        ("PEM", "PEM (paper shape)", 0.8),
        ("MCM", "MCM", 0.2),
        ("MCM", "MCM (√n channels)", 0.4),
        ("MCM", "MCM (8-bit OLH blocks)", 0.6),
        ("SPM", "SPM", 0.3),
    ]:
        for epsilon in (1.0, 2.0):
            for metric in ("f1", "ncr"):
                for trial in range(2):
                    rows.append(
                        {
                            "config_hash": f"{label}-{epsilon}",
                            "dataset.name": "exponential",
                            "protocol.name": protocol,
                            "protocol.label": label,
                            "epsilon": epsilon,
                            "k": 16,
                            "metric": metric,
                            "value": value,
                            "trial": trial,
                            "item": None,
                            "data_source": "synthetic",
                        }
                    )
    figure = sec6.utility_grid(pd.DataFrame(rows), "epsilon", "ε")
    colours = legend_colours(figure)
    mcm = [colours[x] for x in ("MCM (improved)", "MCM (√n channels)", "MCM (8-bit OLH blocks)")]
    assert len(set(mcm)) == 3
    check_series_colours({"fig5-like": figure})
    plt.close(figure)


def test_the_check_catches_a_protocol_drawn_in_two_colours():
    figure, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], color=style.color("MCM"), label="MCM, ε split")
    ax.plot([0, 1], [1, 0], color=np.array(style.color("MCM")) * 0.5, label="MCM, partitioned")
    ax.legend()
    with pytest.raises(AssertionError, match="MCM"):
        check_series_colours({"bad": figure})
    plt.close(figure)
