"""Packaging: an SPDX license string (no setuptools deprecation banner on install) and a
``notebooks`` extra with ``make notebooks`` to execute them."""

from __future__ import annotations

import tomllib

from .conftest import REPO


def test_the_license_is_an_spdx_string_and_notebooks_have_an_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"
    requires = project["build-system"]["requires"]
    assert any(r.startswith("setuptools>=") and int(r.split(">=")[1]) >= 77 for r in requires)
    extra = " ".join(project["project"]["optional-dependencies"]["notebooks"])
    assert "jupyter" in extra and "nbconvert" in extra
    makefile = (REPO / "Makefile").read_text()
    assert "\nnotebooks: " in makefile and "nbconvert --to notebook --execute" in makefile


def test_the_gallery_does_not_call_a_run_paper_scale(tmp_path):
    from experiments.figures.gallery import write_gallery

    text = write_gallery(tmp_path, [], quick=False).read_text()
    assert "paper scale" not in text
