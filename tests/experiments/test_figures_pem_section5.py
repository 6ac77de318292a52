"""The figures of [PEM] Section V (Fig. 2, 3, 4): configs, drawing, claims, the model's config.

Each figure reads one config per panel; the tests expand every config (grid and
preflight), run each with tiny overrides (2 trials, 20,000 users, a small Zipf support)
into ``tmp_path``, and draw the figure and its claims from the resulting table.
"""

from __future__ import annotations

import json

import matplotlib.image as mpimg
import pandas as pd
import pytest

from experiments.figures import FIGURES, fig_pem_fig2, fig_pem_fig3, fig_pem_fig4, style
from experiments.figures import pem_section5 as sec5
from experiments.figures.gallery import Entry, write_gallery
from experiments.figures.spec import ClaimCheck
from experiments.preflight import preflight
from experiments.run import run_settings

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SPECS = {"pem_fig2": fig_pem_fig2.FIGURE, "pem_fig3": fig_pem_fig3.FIGURE}
SPECS["pem_fig4"] = fig_pem_fig4.FIGURE
FIGURES_EXPERIMENTS = [spec.experiments for spec in SPECS.values()]
#: Tiny runs: 2 trials in-process, 20,000 users over 4096 Zipf ranks.
TINY = ("n_trials=2", "n_jobs=1", "progress=false", "dataset.support=4096")


def tiny_table(settings_of, experiments, *extra: str) -> tuple[pd.DataFrame, list]:
    """Run each experiment with the tiny overrides; their tables as one, and the settings."""
    tables, settings = [], []
    for experiment in experiments:
        chosen = settings_of(f"experiment={experiment}", *TINY, *extra)
        _, store = run_settings(chosen, export=False)
        tables.append(store.load([s.key for s in chosen])[0])
        settings += chosen
    return pd.concat(tables, ignore_index=True), settings


def check_claims(claims: list[ClaimCheck]) -> None:
    assert claims
    for claim in claims:
        assert isinstance(claim, ClaimCheck)
        assert claim.verdict in ("reproduced", "partly", "differs")
        assert claim.source.startswith("PEM Sec. V") and claim.paper and claim.ours
        assert "nan" not in claim.ours
        if claim.verdict != "reproduced":
            assert claim.reason


def check_png(path) -> None:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    image = mpimg.imread(path)
    assert image.ndim == 3 and image.shape[1] > 3 * image.shape[0] / 2


def test_the_figures_are_registered_in_paper_order():
    names = [spec.name for spec in FIGURES]
    assert [n for n in names if n in SPECS] == ["pem_fig2", "pem_fig3", "pem_fig4"]
    for spec in SPECS.values():
        assert len(spec.experiments) == 3 and spec.claims is not None


def test_fig2_grid(settings_of):
    configs = {
        e: [s.config for s in settings_of(f"experiment={e}")] for e in FIGURES_EXPERIMENTS[0]
    }
    for experiment, chosen in configs.items():
        preflight(chosen)
        for config in chosen:
            assert config["name"] == experiment and config["n_trials"] == 100
            assert config["k"] == 32 and config["options"]["per_value"]
            assert (config["protocol"]["gamma"], config["protocol"]["eta"]) == (5, 10)
    assert [c["dataset"]["n"] for c in configs["pem_fig2_n"]] == [10**5, 10**6, 10**7]
    assert [c["dataset"]["m"] for c in configs["pem_fig2_m"]] == [32, 48]
    assert [c["epsilon"] for c in configs["pem_fig2_eps"]] == [0.5, 2.0]


def test_fig3_grid(settings_of):
    chosen = {e: settings_of(f"experiment={e}") for e in FIGURES_EXPERIMENTS[1]}
    for settings in chosen.values():
        preflight([s.config for s in settings])
        for s in settings:
            c = s.config
            assert (c["k"], c["dataset"]["n"], c["dataset"]["m"], c["epsilon"]) == (
                16,
                10**5,
                16,
                1.0,
            )
            assert c["protocol"]["gamma"] == 4 and sum(c["protocol"]["etas"]) == 12
        assert {s.config["dataset"]["drop_top"] for s in settings} == {0, 20}
    rounds = {len(s.config["protocol"]["etas"]) for s in chosen["pem_fig3_rounds"]}
    assert rounds == {1, 2, 3, 4, 5, 6}
    firsts = {s.config["protocol"]["etas"][0] for s in chosen["pem_fig3_eta"]}
    assert firsts == set(range(1, 12)) - {6}  # η[1] = 6 is g = 2 of pem_fig3_rounds
    shares = {s.config["protocol"]["fractions"][0] for s in chosen["pem_fig3_users"]}
    assert shares == {0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9}


def test_fig4_grid_leaves_the_shape_to_the_optimizer(settings_of):
    for experiment in FIGURES_EXPERIMENTS[2]:
        settings = settings_of(f"experiment={experiment}")
        preflight([s.config for s in settings])
        for s in settings:
            protocol = s.config["protocol"]
            assert protocol["eta"] is None and protocol["etas"] is None
            assert s.config["k"] == 32 and s.config["options"]["per_value"]
        assert {s.config["dataset"]["drop_top"] for s in settings} == {0, 20}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_figure_draws_from_a_tiny_table(settings_of, tmp_path, name):
    spec = SPECS[name]
    extra = ("dataset.n=20000",)
    if name == "pem_fig4":  # a small query limit keeps the optimizer's steps cheap
        extra += ("protocol.query_limit=65536",)
    table, settings = tiny_table(settings_of, spec.experiments, *extra)
    assert not sec5.check_recorded(table)  # the model's configuration is the runs'
    files = style.save(spec.draw(table), tmp_path / "figures", spec.name)
    check_png(files[0])
    assert files[1].read_bytes()[:5] == b"%PDF-"
    check_claims(spec.claims(table))
    gallery = write_gallery(
        tmp_path / "figures", [Entry(spec, files, settings, table, ())], quick=True
    )
    text = gallery.read_text()
    for experiment in spec.experiments:
        assert f"conf/experiment/{experiment}.yaml" in text
        assert f"python -m experiments.run experiment={experiment}" in text


def test_fig3_panels_share_the_balanced_centre(settings_of):
    table, _ = tiny_table(
        settings_of, ["pem_fig3_rounds"], "dataset.n=20000", "protocol.etas=[6,6]"
    )
    points = fig_pem_fig3.points(table)
    # g = 2 with η = 6, 6 and n/2 users each is the centre of all three panels
    assert set(points["panel"]) == {"rounds", "eta", "users"}
    assert set(points.loc[points["panel"] == "users", "x"]) == {10_000.0}
    assert set(points.loc[points["panel"] == "eta", "x"]) == {6.0}


def test_the_model_config_follows_the_row():
    row = pd.Series(
        {
            "protocol.name": "PEM",
            "protocol.kind": "heavy_hitter",
            "protocol.label": "PEM",
            "protocol.oracle": "OLH",
            "protocol.eta": float("nan"),
            "protocol.gamma": 4.0,
            "protocol.etas": json.dumps([6, 6]),
            "protocol.fractions": json.dumps([0.3, 0.7]),
            "protocol.candidate_sizes": float("nan"),
            "protocol.query_limit": 1048576.0,
            "protocol.threshold": float("nan"),
            "epsilon": 1.0,
            "k": 16,
            "dataset.m": 16,
            "dataset.n": 100000,
            "n": 100000,
        }
    )
    config = sec5.pem_config(row)
    assert config.etas == (6, 6) and config.fractions == (0.3, 0.7) and config.gamma == 4
    assert config.candidate_sizes == (16, 16)
