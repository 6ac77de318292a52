"""[PEM] Section VI figures (Figs. 5-9): configs compose and pass preflight, the configs a
figure reads fit together, every figure draws from the quick run's table (one trial per
setting, tests/conftest.py), claims are well formed."""

from __future__ import annotations

import dataclasses
import functools

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hydra import initialize_config_dir

from experiments.figures import FIGURES, ClaimCheck, style
from experiments.figures import __main__ as figures_main
from experiments.figures import pem_section6 as sec6
from experiments.figures.spec import VERDICTS
from experiments.preflight import preflight
from experiments.run import CONF_DIR
from experiments.schema import register_configs
from experiments.settings import expand
from experiments.store import ROW_KEY, ResultsStore

from .test_figure_colours import check_series_colours, legend_colours

NAMES = ("pem_fig5", "pem_fig6", "pem_fig7", "pem_fig8", "pem_fig9")
SPECS = {spec.name: spec for spec in FIGURES if spec.name in NAMES}
EXPERIMENTS = sorted({e for spec in SPECS.values() for e in spec.experiments})
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: Full grid sizes (settings) of each config.
GRID_SIZES = {
    "pem_fig5": 3 * 2 * 9,
    "pem_fig5_spm": 2 * 9,
    "pem_fig5_spm_url": 2,
    "pem_fig6": 3 * 2 * 8,
    "pem_fig6_spm": 2 * 6,
    "pem_fig6_spm_url": 4,
    "pem_fig7_eps": 3 * 9,
    "pem_fig7_theta": 3 * 5 * 2,
    "pem_fig8_budget": 7 * 8,  # split/partitioned MCM, SPM, block MCM both ways, √n MCM
    "pem_fig8_eta": 5 * 8,
    "pem_fig8_assumed": 4 * 8,
    "pem_fig9": 5 * 9,  # MCM, SPM split and partitioned, PEM with the paper shape
    "pem_fig5_sens": 3 * 3 * 9,  # PEM paper shape, MCM √n channels, MCM 8-bit blocks
    "pem_fig6_sens": 3 * 2 * 8,
    "pem_fig6_block": 3 * 7,  # k <= 32: at 64 the blocks exceed 2^20 queries
    "pem_fig7_partitioned": 2 * 9,
    "pem_fig7_partitioned_theta": 2 * 5 * 2,
}


@functools.cache
def _settings(experiment: str, *overrides: str) -> tuple:
    """The settings of a config under overrides (memoised: several tests read a grid)."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return tuple(expand("config", [f"experiment={experiment}", *overrides]))


@pytest.fixture(scope="module")
def quick_table(figures_quick_run: dict) -> pd.DataFrame:
    """Every config of Figs. 5-9 as the session's ``figures --quick`` run recorded it (one
    trial, each figure's quick grid; tests/conftest.py), as one table."""
    assert figures_quick_run["returncode"] == 0, figures_quick_run["stderr"]
    results = figures_quick_run["results"]
    tables = [ResultsStore(results, experiment).load()[0] for experiment in EXPERIMENTS]
    table = pd.concat([t for t in tables if not t.empty], ignore_index=True)
    assert set(table["experiment"]) == set(EXPERIMENTS)
    return table.drop_duplicates(subset=[c for c in ROW_KEY if c in table.columns])


def test_the_five_figures_are_registered_with_their_configs():
    assert sorted(SPECS) == list(NAMES)
    for spec in SPECS.values():
        for experiment in spec.experiments:
            assert (CONF_DIR / "experiment" / f"{experiment}.yaml").is_file()
    assert [SPECS[n].order for n in NAMES] == sorted(SPECS[n].order for n in NAMES)


def test_figures_sharing_a_config_share_their_quick_overrides():
    # A shared config runs with the quick overrides of the first figure that reads it.
    for a in SPECS.values():
        for b in SPECS.values():
            for experiment in set(a.experiments) & set(b.experiments):
                assert a.quick_overrides(experiment) == b.quick_overrides(experiment)


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_every_config_composes_with_its_grid_and_passes_preflight(experiment):
    settings = _settings(experiment)
    assert len(settings) == GRID_SIZES[experiment]
    assert all(s.config["n_trials"] == 10 and s.config["engine"] == "sampled" for s in settings)
    assert all(s.config["name"] == experiment for s in settings)
    # preflight builds each protocol (PEM's optimizer): one point per protocol is enough
    one_each = {s.config["protocol"]["label"]: s for s in settings}
    preflight([s.config for s in one_each.values()])


def _points(experiments, **where) -> set[tuple]:
    out = set()
    for experiment in experiments:
        for s in _settings(experiment):
            config = s.config
            if all(np.isclose(config[key], value) for key, value in where.items()):
                out.add((config["dataset"]["name"], config["protocol"]["label"], config["epsilon"]))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_the_quick_overrides_cut_the_grids_of_each_figure(name):
    spec = SPECS[name]
    sizes = []
    for experiment in spec.experiments:
        quick = _settings(experiment, *spec.quick_overrides(experiment))
        assert quick and all(s.config["n_trials"] == 1 for s in quick)
        sizes.append(len(quick))
    assert sum(sizes) < sum(GRID_SIZES[e] for e in spec.experiments)


#: ``--quick`` points of the sensitivity and partitioned lines' configs: (data sets, labels,
#: number of settings); the synthetic data only, Fig. 7b-c's dashed lines at θ = 0.04 only.
QUICK_CUTS = {
    "pem_fig5_sens": (
        {"exponential"},
        {"PEM (paper shape)", "MCM (√n channels)", "MCM (8-bit OLH blocks)"},
        3 * 3,
    ),
    "pem_fig6_sens": ({"exponential"}, {"PEM (paper shape)", "MCM (√n channels)"}, 2 * 2),
    "pem_fig6_block": ({"exponential"}, {"MCM (8-bit OLH blocks)"}, 2),
    "pem_fig7_partitioned": (
        {"exponential"},
        {"SPM (partitioned, threshold)", "MCM (partitioned, threshold)"},
        2 * 2,
    ),
    "pem_fig7_partitioned_theta": (
        {"exponential"},
        {"SPM (partitioned, threshold)", "MCM (partitioned, threshold)"},
        2 * 2,
    ),
}


@pytest.mark.parametrize("experiment", sorted(QUICK_CUTS))
def test_quick_keeps_the_sensitivity_lines_to_a_few_cheap_runs(experiment):
    (spec,) = [s for s in SPECS.values() if experiment in s.experiments]
    quick = _settings(experiment, *spec.quick_overrides(experiment))
    datasets, labels, size = QUICK_CUTS[experiment]
    assert {s.config["dataset"]["name"] for s in quick} == datasets
    assert {s.config["protocol"]["label"] for s in quick} == labels
    assert len(quick) == size
    if experiment == "pem_fig7_partitioned_theta":
        assert {s.config["protocol"]["threshold"] for s in quick} == {0.04}
    # the configs of the paper's lines keep the figure's quick overrides (every data set)
    assert spec.quick_overrides(spec.experiments[0]) == spec.quick


def test_a_configs_own_quick_overrides_replace_the_figures_for_the_same_key():
    spec = dataclasses.replace(
        SPECS["pem_fig5"],
        quick=("n_trials=1", "hydra.sweeper.params.epsilon='1,4'"),
        quick_for={"pem_fig5_sens": ("hydra.sweeper.params.epsilon=4", "dataset.n=1000")},
    )
    assert spec.quick_overrides("pem_fig5") == spec.quick
    assert spec.quick_overrides("pem_fig5_sens") == (
        "n_trials=1",
        "hydra.sweeper.params.epsilon=4",
        "dataset.n=1000",
    )


def test_figures_quick_runs_each_config_with_its_own_overrides(monkeypatch, tmp_path):
    seen: dict[str, tuple[str, ...]] = {}

    def record(experiment, overrides, added=()):
        seen[experiment] = tuple(overrides)
        return []

    monkeypatch.setattr(figures_main, "experiment_settings", record)
    # the settings are composed on the pool's workers; here in this process, patched
    monkeypatch.setattr(
        figures_main, "parallel_map", lambda f, calls, n_jobs=-1: [f(*c) for c in calls]
    )
    argv = ["--quick", "--no-run", "--only", "pem_fig5", "--results-dir", str(tmp_path)]
    assert figures_main.main(argv) == 0
    spec = SPECS["pem_fig5"]
    assert set(seen) == set(spec.experiments)
    for experiment in spec.experiments:
        assert seen[experiment] == (f"results_dir={tmp_path}", *spec.quick_overrides(experiment))
    assert "hydra.sweeper.params.dataset=exponential" in seen["pem_fig5_sens"]
    assert "hydra.sweeper.params.dataset=exponential" not in seen["pem_fig5"]


def test_fig6_has_k16_of_every_protocol_and_data_set():
    points = _points(SPECS["pem_fig6"].experiments, k=16, epsilon=2.0)
    for dataset in ("url", "aol", "exponential"):
        for label in ("PEM", "MCM", "SPM"):
            assert (dataset, label, 2.0) in points


def test_fig9_series_cover_the_same_epsilons():
    series: dict[str, set[float]] = {}
    for experiment in SPECS["pem_fig9"].experiments:
        for s in _settings(experiment):
            c = s.config
            if c["dataset"]["name"] != "exponential" or c["k"] != 16:
                continue
            assumed = c["protocol"].get("assumed")
            if c["protocol"]["name"] == "PEM" and (
                c["protocol"].get("eta") is not None or assumed not in (None, "zipf")
            ):
                continue
            series.setdefault(c["protocol"]["label"], set()).add(round(c["epsilon"], 6))
    assert set(series) == {
        "PEM",
        "PEM (paper shape)",
        "MCM",
        "SPM",
        "MCM (split ε)",
        "SPM (split ε)",
        "MCM (partitioned)",
        "SPM (partitioned)",
    }
    assert len({frozenset(v) for v in series.values()}) == 1


@pytest.fixture(scope="module")
def drawn(quick_table) -> dict[str, plt.Figure]:
    """Each figure drawn once from the quick table, for the tests that read the drawing."""
    figures = {}
    for name, spec in SPECS.items():
        table = quick_table[quick_table["experiment"].isin(spec.experiments)]
        assert not table.empty, name
        figures[name] = spec.draw(table)
    yield figures
    for figure in figures.values():
        plt.close(figure)


@pytest.mark.slow  # reads the session's figures --quick run
@pytest.mark.parametrize("name", NAMES)
def test_every_figure_draws_from_the_quick_table_and_states_its_claims(
    quick_table, drawn, name, tmp_path
):
    spec = SPECS[name]
    table = quick_table[quick_table["experiment"].isin(spec.experiments)]
    png, pdf = style.save(drawn[name], tmp_path, spec.name)
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    image = mpimg.imread(png)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 600
    assert pdf.read_bytes()[:5] == b"%PDF-"
    claims = spec.claims(table)
    assert claims and all(isinstance(c, ClaimCheck) for c in claims)
    for claim in claims:
        assert claim.source.startswith(("PEM Sec.", "PEM Appendix")) and claim.paper
        assert claim.ours and claim.verdict in VERDICTS and claim.tolerance
        assert claim.verdict in ("reproduced", "identity") or claim.cause
        assert "nan" not in claim.ours.lower()


@pytest.mark.slow  # reads the session's figures --quick run
def test_one_colour_per_series_across_the_five_figures(drawn):
    check_series_colours(drawn)  # each label in its series' colour, in every figure
    labels = {label for figure in drawn.values() for label in legend_colours(figure)}
    assert {"MCM (improved)", "MCM (√n channels)", "MCM (8-bit OLH blocks)"} <= labels
    assert "MCM, users partitioned (10%)" in labels  # Fig. 9 draws the partitioned versions


@pytest.mark.slow  # reads the session's figures --quick run
def test_the_final_tests_behind_fig9s_variance_lines(quick_table):
    rows = quick_table[quick_table["dataset.name"] == "exponential"].drop_duplicates("config_hash")

    def first(label: str) -> pd.Series:
        return rows[rows["protocol.label"] == label].iloc[0]

    assert sec6.final_test(first("MCM (split ε)"), 3.0) == (1.0, 1.5)
    assert sec6.final_test(first("SPM (split ε)"), 3.0) == pytest.approx((1.0, 1.0))
    # improved = the budget split (Sec. VI-B6); partitioned: a tenth of the users at ε
    assert sec6.final_test(first("MCM"), 3.0) == (1.0, 1.5)
    assert sec6.final_test(first("MCM (partitioned)"), 3.0) == (0.1, 3.0)
    rho, epsilon = sec6.final_test(first("PEM"), 3.0)
    assert epsilon == 3.0 and 0 < rho < 1
    rho, epsilon = sec6.final_test(first("PEM (paper shape)"), 3.0)
    assert (rho, epsilon) == (pytest.approx(1 / 6), 3.0)  # m = 64, k = 16: g = 6
    # Eq. (3) falls with ε, and a tenth of the users at ε costs more than all at ε/2
    mcm, split = first("MCM (partitioned)"), first("MCM (split ε)")
    assert sec6.squared_error_model(mcm, 2.0) > sec6.squared_error_model(mcm, 4.0)
    assert sec6.squared_error_model(mcm, 3.0) > sec6.squared_error_model(split, 3.0)


def _grid_rows(
    series: dict[tuple[str, str], float], dataset: str = "exponential", epsilons=(1.0, 2.0)
) -> pd.DataFrame:
    """Two runs of F1 and NCR per (protocol, label) and ε on one data set."""
    rows = []
    for (protocol, label), value in series.items():
        for epsilon in epsilons:
            for metric in ("f1", "ncr"):
                for trial in range(2):
                    rows.append(
                        {
                            "config_hash": f"{dataset}-{label}-{epsilon}",
                            "dataset.name": dataset,
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
    return pd.DataFrame(rows)


SENSITIVITY = {
    ("PEM", "PEM"): 0.9,
    ("PEM", "PEM (paper shape)"): 0.8,
    ("MCM", "MCM"): 0.2,
    ("MCM", "MCM (√n channels)"): 0.4,
    ("MCM", "MCM (8-bit OLH blocks)"): 0.95,
}


def test_the_grid_draws_a_line_per_preset_not_one_pooled_line_per_protocol():
    figure = sec6.utility_grid(_grid_rows(SENSITIVITY), "epsilon", "ε")
    ax = figure.axes[0]
    drawn = [line for line in ax.lines if len(line.get_ydata()) == 2]
    means = sorted({round(float(line.get_ydata()[0]), 3) for line in drawn})
    assert means == [0.2, 0.4, 0.8, 0.9, 0.95]  # pooled, MCM would be one line at 0.52
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels[:2] == ["PEM", "MCM (improved)"]
    assert {"PEM (paper shape)", "MCM (√n channels)", "MCM (8-bit OLH blocks)"} <= set(labels)
    assert {line.get_linestyle() for line in drawn} >= {"-", "--", "-."}


def test_claims_judge_the_papers_versions_not_the_sensitivity_lines():
    lines = {
        ("PEM", "PEM"): 0.5,
        ("MCM", "MCM"): 0.2,
        ("MCM", "MCM (√n channels)"): 0.95,
        ("MCM", "MCM (8-bit OLH blocks)"): 0.95,
    }
    table = pd.concat([_grid_rows(lines), _grid_rows(lines, "url", (4.0,))])
    (best,) = [c for c in SPECS["pem_fig5"].claims(table) if "performs best" in c.paper]
    # the sensitivity lines beat PEM, the paper's MCM (0.2) does not: PEM leads by 0.3 at
    # every point (pooled, MCM would be 0.7 and PEM behind)
    assert "exponential 1: +0.30, exponential 2: +0.30" in best.ours, best.ours
    assert best.verdict == "reproduced"
    # the √n line is judged only by its own row (Sec. VII), where it beats PEM
    (root,) = [c for c in SPECS["pem_fig5"].claims(table) if "√n channels significantly" in c.paper]
    assert root.verdict != "reproduced" and "exponential 1: -0.45" in root.ours


@pytest.mark.slow  # reads the session's figures --quick run
def test_fig7_draws_the_partitioned_threshold_versions_dashed(quick_table):
    spec = SPECS["pem_fig7"]
    figure = spec.draw(quick_table[quick_table["experiment"].isin(spec.experiments)])
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert "SPM (partitioned, threshold)" in labels and "MCM (partitioned, threshold)" in labels
    styles = {
        container.get_label(): container.lines[0].get_linestyle()
        for ax in figure.axes
        for container in ax.containers
    }
    assert styles.get("SPM (threshold)") == "-"
    partitioned = [c for ax in figure.axes for c in ax.containers if "partitioned" in c.get_label()]
    assert partitioned and all(c.lines[0].get_linestyle() != "-" for c in partitioned)


def test_best_reads_twice_and_names_where_a_rival_leads() -> None:
    """'Performs best': a rival ahead beyond sampling error differs; ahead within it, as
    the means stand, is partly, with the place named; an exact tie is neither."""
    index = pd.Index(["aol 1", "url 2", "url 4"])
    se = pd.Series([0.01, 0.0, 0.01], index=index)

    def verdict(lead):
        parts, reason = sec6.lead_parts("lead", pd.Series(lead, index=index), se, "MCM", df=9)
        return ClaimCheck("s", "p", "o", parts, reason=reason)

    held = verdict([0.05, 0.0, 0.2])  # url 2: both at F1 = 1
    assert held.verdict == "reproduced" and held.cause == ""
    assert held.detection.how == "shift" and held.detection.delta == pytest.approx(5.0, rel=1e-4)
    close = verdict([-0.01, 0.0, 0.2])
    assert close.verdict == "partly" and "MCM's mean above the leader's at aol 1" in close.cause
    far = verdict([-0.5, 0.0, 0.2])
    assert far.verdict == "differs" and "MCM ahead beyond sampling error at aol 1" in far.cause


def test_quick_keeps_fig8b_to_the_points_its_claim_reads():
    """Fig. 8b's refined model costs a second or more per (η, ε) setting: --quick keeps
    every η (the claim reads η = 2 to 10) at ε = 0.9 (the claim's) and 2."""
    (spec,) = [s for s in SPECS.values() if "pem_fig8_eta" in s.experiments]
    quick = _settings("pem_fig8_eta", *spec.quick_overrides("pem_fig8_eta"))
    points = {(s.config["protocol"]["eta"], s.config["epsilon"]) for s in quick}
    assert points == {(eta, eps) for eta in (2, 4, 6, 8, 10) for eps in (0.9, 2.0)}
