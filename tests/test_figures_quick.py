"""``make figures-quick`` end to end: every registered figure as a valid PNG (no PDF).

Reads the session's ``python -m experiments.figures --quick --results-dir <tmp>`` run
(what ``make figures-quick`` runs, into a temporary directory instead of
``results/quick``; the ``figures_quick_run`` fixture of ``tests/conftest.py``), then checks
every figure of :data:`experiments.figures.FIGURES` (whatever figures are registered:
nothing here names one), the gallery ``figures/index.md`` and the reproduction report
``REPRODUCTION.md``.  A quick run over 3 minutes on the 2-core machine is reported as a
warning, not a failure, since the machine is shared.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from experiments.figures import FIGURES

pytestmark = pytest.mark.slow

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The budget for ``make figures-quick`` (seconds): slower is a warning, not a failure.
QUICK_BUDGET = 180


@pytest.fixture(scope="module")
def quick_results(figures_quick_run: dict) -> Path:
    """The session's quick run (tests/conftest.py), which must have succeeded."""
    run = figures_quick_run
    assert run["returncode"] == 0, f"exit {run['returncode']}\n{run['stdout']}\n{run['stderr']}"
    if run["seconds"] > QUICK_BUDGET:
        warnings.warn(
            f"figures --quick took {run['seconds']:.0f} s, over the {QUICK_BUDGET} s budget",
            stacklevel=1,
        )
    print(f"figures --quick: {run['seconds']:.1f} s for {len(FIGURES)} figures")
    return Path(run["results"])


def test_some_figures_are_registered():
    assert FIGURES, "experiments.figures.FIGURES is empty"


@pytest.mark.parametrize("spec", FIGURES, ids=lambda spec: spec.name)
def test_the_figure_is_a_valid_png(quick_results: Path, spec):
    png = quick_results / "figures" / f"{spec.name}.png"
    assert png.is_file(), f"{png.name} missing"
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    try:
        from PIL import Image
    except ImportError:  # matplotlib's reader below still decodes the whole file
        pass
    else:
        with Image.open(png) as image:
            image.verify()
    pixels = mpimg.imread(png)
    assert pixels.ndim == 3 and min(pixels.shape[:2]) >= 100, pixels.shape
    assert np.ptp(pixels[..., :3]) > 0, f"{png.name} is a blank image"


def test_quick_mode_writes_no_pdf(quick_results: Path):
    # the PDF costs twice the PNG's time; style.save's PDF is tested with each figure module
    assert not list((quick_results / "figures").glob("*.pdf"))


def test_the_gallery_lists_every_figure(quick_results: Path):
    gallery = quick_results / "figures" / "index.md"
    assert gallery.is_file()
    text = gallery.read_text(encoding="utf-8")
    for spec in FIGURES:
        assert f"]({spec.name}.png)" in text, f"index.md does not show {spec.name}.png"
        assert f"({spec.name}.pdf)" not in text, f"index.md links {spec.name}.pdf"
        assert spec.title in text


def test_the_reproduction_report_is_written(quick_results: Path):
    report = quick_results / "REPRODUCTION.md"
    assert report.is_file()
    assert report.read_text(encoding="utf-8").strip()


def _claims_of(results: Path, spec) -> list:
    """The figure's claims computed from the quick run's recorded rows."""
    import pandas as pd

    from experiments.store import ResultsStore

    tables = [ResultsStore(results, name).load()[0] for name in spec.experiments]
    tables = [t for t in tables if not t.empty]
    if not tables or spec.claims is None:
        return []
    return spec.claims(pd.concat(tables, ignore_index=True))


@pytest.mark.parametrize("spec", [s for s in FIGURES if s.claims], ids=lambda s: s.name)
def test_every_claim_is_computed_and_its_detected_deviation_flips_it(quick_results: Path, spec):
    """The report's power column, checked by mutation: each row's *detects* deviation,
    planted into its measured values, changes the verdict (with the few trials of the
    quick run some rows are too far from their boundary for any deviation up to 50%)."""
    for check in _claims_of(quick_results, spec):
        found = check.detection
        if not found.found:  # a row far from its boundary here (the report prints "none")
            continue
        assert check.mutated().verdict != check.verdict, (spec.name, check.source)
