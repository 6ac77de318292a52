"""One look for every figure: the seaborn theme, a fixed colour per protocol, saving.

Colours are fixed per protocol by the registry (:mod:`ldp.registry`; the built-in ones are
seaborn's colour-blind-safe ``colorblind`` palette), so GRR or PEM has the same colour in
every figure; variants of a protocol (e.g. "SPM (original)") share its colour and differ by
line style or marker.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt  # headless machines get Agg; saved figures open no window
import seaborn as sns
from matplotlib.lines import Line2D

from ldp import registry

#: A colour for protocols registered without one (plug-ins): seaborn's "dark" palette.
FALLBACK_PALETTE = "dark"
#: Marker per engine: filled circle for the sampled engine, open square for real reports.
ENGINE_MARKERS = {"sampled": "o", "reports": "s"}
EPSILON_LABEL = "privacy budget ε"
#: Dots per inch of the PNG files.
DPI = 150


def apply_theme() -> None:
    """The one seaborn theme of every figure."""
    sns.set_theme(
        context="paper",
        style="whitegrid",
        palette="colorblind",
        font_scale=1.1,
        rc={
            "figure.dpi": DPI,
            "savefig.bbox": "tight",
            "axes.titleweight": "bold",
            "legend.frameon": False,
            "pdf.fonttype": 42,
        },
    )


def color(protocol: str) -> tuple[float, float, float]:
    """The colour of a protocol, by its registered name (case-insensitive).

    The registry's colour (:mod:`ldp.registry`) if it declares one; otherwise a colour of
    :data:`FALLBACK_PALETTE` fixed by the protocol's position among those without one.
    """
    entry = registry.get(protocol)
    if entry.color is not None:
        return mcolors.to_rgb(entry.color)
    plain = [p.name for p in registry.protocols().values() if p.color is None]
    palette = sns.color_palette(FALLBACK_PALETTE, 10)
    return tuple(palette[plain.index(entry.name) % len(palette)])


def order(protocols: list[str]) -> list[str]:
    """Protocol names in legend order (the registry's; unknown names last, alphabetically)."""
    rank = {name.upper(): i for i, name in enumerate(registry.protocols())}
    return sorted(protocols, key=lambda p: (rank.get(p.upper(), len(rank)), p))


def save(figure: plt.Figure, directory: str | Path, stem: str, pdf: bool = True) -> list[Path]:
    """Write ``<stem>.png`` and (with ``pdf``) ``<stem>.pdf`` (no timestamps inside), close
    the figure and return the paths.  The PDF costs about twice the PNG's time; ``figures
    --quick`` leaves it out."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{stem}.png"]
    figure.savefig(paths[0], dpi=DPI, metadata={"Software": None})
    if pdf:
        paths.append(directory / f"{stem}.pdf")
        figure.savefig(paths[1], metadata={"CreationDate": None, "Creator": None})
    plt.close(figure)
    return paths


def engine_handles(engines: object) -> list[Line2D]:
    """Legend entries for the engines whose rows a figure holds (filled: sampled, open:
    reports), so a figure without reports-engine rows does not list that engine."""
    present = set(map(str, engines))
    handles = []
    if "sampled" in present:
        handles.append(Line2D([], [], color="0.3", marker="o", ls="", label="sampled engine"))
    if "reports" in present:
        handles.append(
            Line2D([], [], color="0.3", marker="s", mfc="white", ls="", label="reports engine")
        )
    return handles
