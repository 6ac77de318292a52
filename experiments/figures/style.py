"""One look for every figure: the seaborn theme, a fixed colour and marker per protocol
and per variant of a protocol, saving.

Every figure takes its colours and markers from here, never from a palette of its own, so
a series looks the same wherever it is drawn:

* a protocol's colour is the registry's (:mod:`ldp.registry`; the built-in ones are
  seaborn's colour-blind-safe ``colorblind`` palette and a few more), a plug-in without
  one gets a fixed colour of :data:`FALLBACK_PALETTE`;
* its marker is fixed by its rank in the registry's order (built-in protocols first, so a
  plug-in never moves a built-in's marker);
* a *variant* of a protocol, a legend label ``"<protocol> (<variant>)"`` such as
  ``"MCM (√n channels)"``, gets a lighter or darker shade of the protocol's colour and a
  marker of its own, fixed by the variant's rank among the protocol's presets in
  ``conf/protocol/`` (so the same in every figure).  Words that only say how the budget is
  spent or what is output (:data:`MODE_WORDS`: "split ε", "partitioned", "threshold",
  "improved") are not variants: figures draw them with line style and fill, in the
  colour of the protocol or variant.
"""

from __future__ import annotations

import colorsys
import functools
import hashlib
import re
from pathlib import Path

import matplotlib.colors as mcolors
import matplotlib.pyplot as plt  # headless machines get Agg; saved figures open no window
import numpy as np
import seaborn as sns
from matplotlib.lines import Line2D

from ldp import registry

#: A colour for protocols registered without one (plug-ins): seaborn's "dark" palette.
FALLBACK_PALETTE = "dark"
#: Marker per engine: filled circle for the sampled engine, open square for real reports.
ENGINE_MARKERS = {"sampled": "o", "reports": "s"}
#: Markers of protocols, by rank in the registry's order (built-ins first).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p")
#: Markers of a protocol's variants, by the variant's rank among the protocol's presets.
VARIANT_MARKERS = ("d", "h", "*", "8", "H", "p", "X", "P")
#: Lightness (HLS) of a protocol's variants: the levels farthest from the protocol's own
#: lightness come first, so the first variants stand out most.
VARIANT_LIGHTNESS = (0.22, 0.36, 0.5, 0.64, 0.8)
#: Parenthesised words of a legend label that name a budget or output mode, not a variant.
MODE_WORDS = frozenset({"improved", "split ε", "partitioned", "threshold"})
#: Colours of categories that are not protocols (post-processing methods, say): seaborn's
#: "Set2", none of whose colours is a built-in protocol's.
CATEGORY_PALETTE = "Set2"
#: Where the protocol presets (and their ``label:``) live.
PRESETS_DIR = Path(__file__).resolve().parents[2] / "conf" / "protocol"
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
    :data:`FALLBACK_PALETTE` fixed by the protocol's position among those without one
    (built-in protocols first); a name the registry does not know here (a plug-in not
    installed where the figure is drawn) gets one fixed by a hash of its name, so its
    results still draw.
    """
    try:
        entry = registry.get(protocol)
    except registry.RegistryError:
        palette = sns.color_palette(FALLBACK_PALETTE, 10)
        digest = hashlib.sha256(str(protocol).upper().encode()).hexdigest()
        return tuple(palette[int(digest, 16) % len(palette)])
    if entry.color is not None:
        return mcolors.to_rgb(entry.color)
    # built-ins first (:func:`_ranked`), so a plug-in never moves a built-in's colour
    plain = [name for name in _ranked() if registry.get(name).color is None]
    palette = sns.color_palette(FALLBACK_PALETTE, 10)
    return tuple(palette[plain.index(entry.name) % len(palette)])


def _ranked() -> list[str]:
    """Registered names: the built-in protocols by the registry's order, then plug-ins."""
    entries = list(registry.protocols().values())
    builtin = [p.name for p in entries if p.cls.__module__.startswith("ldp.")]
    return builtin + [p.name for p in entries if p.name not in builtin]


def _registered(name: str) -> str | None:
    """The registered name of a protocol given by its name or its label (None: unknown)."""
    wanted = name.strip().lower()
    for entry in registry.protocols().values():
        if wanted in {entry.name.lower(), str(entry.label).lower()}:
            return entry.name
    return None


def marker(protocol: str) -> str:
    """The marker of a protocol, by its rank in :func:`_ranked`; a name the registry does
    not know here (a plug-in not installed where the figure is drawn) gets one fixed by a
    hash of its name."""
    name = _registered(protocol)
    if name is None:
        digest = hashlib.sha256(protocol.encode()).digest()
        return MARKERS[digest[0] % len(MARKERS)]
    return MARKERS[_ranked().index(name) % len(MARKERS)]


def protocol_of(label: str) -> str | None:
    """The registered protocol a legend label names (``"MCM (√n channels)"``: MCM), or None
    for a label that names none here ("sampled engine", "model, Eq. (4)")."""
    own = _registered(label)
    if own is not None:
        return own
    match = re.fullmatch(r"\s*(.+?)\s+\((.*)\)\s*", label)
    return _registered(match.group(1)) if match else None


def split_label(label: str) -> tuple[str, str | None]:
    """``(protocol, variant)`` of a legend label ``"<protocol> (<words>, ...)"``.

    A registered protocol's own name or label is that protocol.  Otherwise the variant is
    the parenthesised words that are not :data:`MODE_WORDS`, joined by ", " (``None`` when
    none are left, or the label has no parentheses).  The protocol part is matched to a
    registered name or label (case-insensitive); an unknown one is kept as it is.
    """
    own = _registered(label)  # a protocol's own name or label: "UE(p)"
    if own is not None:
        return own, None
    match = re.fullmatch(r"\s*(.+?)\s+\((.*)\)\s*", label)
    name, words = (match.group(1), match.group(2)) if match else (label.strip(), "")
    name = _registered(name) or name  # an unknown name keeps its text (colour by hash)
    kept = [w.strip() for w in words.split(",") if w.strip() and w.strip() not in MODE_WORDS]
    return name, ", ".join(kept) or None


@functools.cache
def preset_variants() -> dict[str, tuple[str, ...]]:
    """Each protocol's variants named by the ``label:`` of its presets in ``conf/protocol``
    (sorted; the ranks :func:`series_color` and :func:`series_marker` use)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PRESETS_DIR.glob("*.yaml")):
        line = re.search(r"(?m)^label:\s*(.+?)\s*$", path.read_text())
        if not line:
            continue
        name, variant = split_label(line.group(1))  # an unregistered name keeps its text
        if variant is not None:
            found.setdefault(name, set()).add(variant)
    return {name: tuple(sorted(variants)) for name, variants in found.items()}


def _variant_rank(name: str, variant: str) -> int:
    known = preset_variants().get(name, ())
    if variant in known:
        return known.index(variant)
    # a label no preset declares: a fixed rank after the presets' (from its text)
    return len(known) + sum(map(ord, variant)) % len(VARIANT_MARKERS)


def series_color(label: str) -> tuple[float, float, float]:
    """The colour of a legend label: its protocol's (:func:`color`) for the protocol or a
    mode of it, a fixed shade of that colour for a variant (:func:`split_label`)."""
    name, variant = split_label(label)
    base = color(name)
    if variant is None:
        return base
    hue, lightness, saturation = colorsys.rgb_to_hls(*base)
    levels = sorted(VARIANT_LIGHTNESS, key=lambda level: -abs(level - lightness))
    level = levels[_variant_rank(name, variant) % len(levels)]
    return colorsys.hls_to_rgb(hue, level, saturation)


def series_marker(label: str) -> str:
    """The marker of a legend label: its protocol's (:func:`marker`), or a fixed marker of
    the variant (:data:`VARIANT_MARKERS`, by the variant's rank among the presets)."""
    name, variant = split_label(label)
    if variant is None:
        return marker(name)
    return VARIANT_MARKERS[_variant_rank(name, variant) % len(VARIANT_MARKERS)]


def shades(protocol: str, count: int) -> list[tuple[float, float, float]]:
    """``count`` shades of a protocol's colour, light to dark, for a parameter swept on one
    protocol (PEM's η, its assumed distribution): from halfway to white, through the
    colour, to 40% of it."""
    base = np.asarray(color(protocol))
    if count <= 1:
        return [tuple(base)]
    light, dark = 1 - 0.55 * (1 - base), 0.4 * base
    return [tuple(c) for c in sns.blend_palette([light, base, dark], count)]


def category_colors(names: list[str]) -> dict[str, tuple[float, float, float]]:
    """A colour per category that is not a protocol (e.g. post-processing methods), in the
    order given, from :data:`CATEGORY_PALETTE`, so no protocol's colour stands for one."""
    palette = sns.color_palette(CATEGORY_PALETTE, max(len(names), 1))
    return {name: tuple(palette[i % len(palette)]) for i, name in enumerate(names)}


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


def key(label: str, color: object = "0.3", **line: object) -> Line2D:
    """A legend entry that draws nothing: ``label`` in ``color``, styled by ``line``
    (``lw``, ``ls``, ``marker``, ``mfc``, ...)."""
    return Line2D([], [], color=color, label=label, **line)


def series_key(label: str, **line: object) -> Line2D:
    """The legend entry of a series: its colour and marker (:func:`series_color`,
    :func:`series_marker`), styled by ``line``."""
    return key(label, series_color(label), marker=series_marker(label), **line)


def drawn_handles(axes: object) -> dict[str, object]:
    """The first handle drawn on ``axes`` (one or an array of them) under each legend label,
    by label, in drawing order: for one legend over several panels."""
    seen: dict[str, object] = {}
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    return seen


def legend_right(figure: plt.Figure, handles: list[Line2D], y: float = 0.5) -> plt.Figure:
    """The figure's one legend, right of its panels and centred at height ``y``; then the
    tight layout.  Returns the figure."""
    figure.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, y))
    figure.tight_layout()
    return figure


def legend_if_any(ax: plt.Axes, **options: object) -> None:
    """The axes' own legend (``ax.legend(**options)``), if anything on it has a label."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**options)


def engine_handles(engines: object, own_markers: bool = True) -> list[Line2D]:
    """Legend entries for the engines whose rows a figure holds (filled: sampled, open:
    reports), so a figure without reports-engine rows does not list that engine.

    ``own_markers``: each engine's own marker (:data:`ENGINE_MARKERS`); else a circle for
    both, for figures whose markers are the protocols' and engines differ by fill only."""
    present = set(map(str, engines))
    shape = {e: (ENGINE_MARKERS[e] if own_markers else "o") for e in ENGINE_MARKERS}
    handles = []
    if "sampled" in present:
        handles.append(key("sampled engine", marker=shape["sampled"], ls=""))
    if "reports" in present:
        handles.append(key("reports engine", marker=shape["reports"], mfc="white", ls=""))
    return handles
