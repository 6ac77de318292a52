"""One look for every figure: the seaborn theme, a fixed colour per protocol, saving.

Colours come from seaborn's colour-blind-safe ``colorblind`` palette and are fixed per
protocol (the class acronym), so GRR or PEM has the same colour in every figure; variants
of a protocol (e.g. "SPM (original)") share its colour and differ by line style or marker.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt  # headless machines get Agg; saved figures open no window
import seaborn as sns

#: Every protocol, in legend order.
PROTOCOLS = ("GRR", "SUE", "OUE", "SHE", "THE", "BLH", "OLH", "PEM", "SPM", "MCM")
#: A fixed colour per protocol: the 10 colours of seaborn's "colorblind" palette, placed
#: so that protocols drawn together (the oracles; PEM, SPM, MCM) are far apart.
_SLOTS = {
    "GRR": 0,
    "SUE": 1,
    "OUE": 2,
    "SHE": 3,
    "THE": 5,
    "BLH": 7,
    "OLH": 4,
    "PEM": 9,
    "SPM": 8,
    "MCM": 6,
}
COLORS = {name: sns.color_palette("colorblind", 10)[slot] for name, slot in _SLOTS.items()}
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
    """The colour of a protocol, by its class acronym (case-insensitive)."""
    return COLORS[protocol.upper()]


def order(protocols: list[str]) -> list[str]:
    """Protocol names in legend order (unknown names last, alphabetically)."""
    rank = {name: i for i, name in enumerate(PROTOCOLS)}
    return sorted(protocols, key=lambda p: (rank.get(p.upper(), len(rank)), p))


def save(figure: plt.Figure, directory: str | Path, stem: str) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.pdf`` (no timestamps inside) and close the figure."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{stem}.png", directory / f"{stem}.pdf"]
    figure.savefig(paths[0], dpi=DPI, metadata={"Software": None})
    figure.savefig(paths[1], metadata={"CreationDate": None, "Creator": None})
    plt.close(figure)
    return paths
