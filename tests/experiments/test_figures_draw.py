"""The figure module draws a valid PNG (and PDF) from a tiny results table; the gallery lists it."""

from __future__ import annotations

import matplotlib.colors as mcolors
import matplotlib.image as mpimg
import seaborn as sns

from experiments.figures import FIGURES, style
from experiments.figures.fig_oracle_variance import FIGURE
from experiments.figures.gallery import Entry, write_gallery
from experiments.run import run_settings
from ldp import registry

from .test_figure_colours import check_series_colours

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_every_figure_is_registered_once():
    names = [spec.name for spec in FIGURES]
    assert len(names) == len(set(names)) and "oracle_variance" in names


def test_the_oracle_variance_figure_draws_from_a_tiny_table(settings_of, tmp_path):
    settings = settings_of(
        "experiment=oracle_variance",
        "protocol=grr",
        "epsilon=1",
        "dataset.n=300",
        "n_trials=3",
        "n_jobs=1",
        "progress=false",
    )
    settings += settings_of(
        "experiment=oracle_variance",
        "protocol=olh",
        "epsilon=3",
        "dataset.n=300",
        "n_trials=3",
        "n_jobs=1",
        "progress=false",
    )
    _, store = run_settings(settings)
    table, _ = store.load()
    figure = FIGURE.draw(table)
    check_series_colours({FIGURE.name: figure})
    files = style.save(figure, tmp_path / "figures", FIGURE.name)
    png, pdf = files
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    image = mpimg.imread(png)
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 400
    assert pdf.read_bytes()[:5] == b"%PDF-"
    gallery = write_gallery(
        tmp_path / "figures", [Entry(FIGURE, files, settings, table, ())], quick=True
    )
    text = gallery.read_text()
    assert f"]({png.name})" in text and FIGURE.claim in text
    assert "python -m experiments.run experiment=oracle_variance" in text
    assert "source: point" in text


def test_protocol_colours_are_fixed_and_distinct():
    names = list(registry.protocols())
    assert style.color("olh") == style.color("OLH") == mcolors.to_rgb(registry.get("OLH").color)
    colours = [style.color(name) for name in names]
    assert len(set(colours)) == len(colours)
    # the built-in ones are seaborn's colour-blind palette, as every committed figure shows
    assert set(colours) >= set(sns.color_palette("colorblind", 10))
