"""fig_textbook: each row's verdict on real (small) runs, the Truncated tolerance, and each
row on a planted deviation of its measured input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from experiments.figures import fig_textbook
from experiments.run import CONF_DIR, run_settings
from experiments.schema import register_configs
from experiments.settings import expand

CONFIGS = fig_textbook.FIGURE.experiments
TRIALS = 10


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The four textbook configs at 10 trials (sampled engine: a few seconds)."""
    results = tmp_path_factory.mktemp("textbook")
    register_configs()
    tables = []
    for name in CONFIGS:
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            overrides = [f"experiment={name}", f"results_dir={results}", f"n_trials={TRIALS}"]
            settings = expand("config", [*overrides, "progress=false", "n_jobs=1"])
        _, store = run_settings(settings, n_jobs=1)
        tables.append(store.load()[0])
    GlobalHydra.instance().clear()
    return pd.concat(tables, ignore_index=True)


def test_truncated_reads_cut_digits() -> None:
    cut = fig_textbook.Truncated((0.13, 0.002), (2, 3))
    assert cut.holds(np.array([0.1364, 0.00265]))
    assert not cut.holds(np.array([0.1401, 0.00265]))
    assert not cut.holds(np.array([0.1299, 0.00265]))


# ------------------------------------------------------------------------------ the rows
def test_every_row_is_declared_and_detects_within_the_bar(table) -> None:
    claims = fig_textbook.claims(table)
    assert len(claims) == 12
    verdicts = {c.source: c.verdict for c in claims}
    assert verdicts["[Tutorial] slide 15 (GRR), column d = 128"] == "differs"
    assert verdicts["[Tutorial] slide 4 (AOL data release, 2006)"] == "calibrated"
    assert verdicts["[Tutorial] slides 12-13 (randomized response, concrete example)"] == (
        "identity"
    )
    for claim in claims:
        if claim.verdict == "reproduced":
            assert claim.detection.within(), (claim.source, claim.detection.text())


def test_the_drawing_reads_the_table(table) -> None:
    import matplotlib.pyplot as plt

    figure = fig_textbook.draw(table)
    assert len(figure.axes) == 3
    plt.close(figure)


def _planted(table: pd.DataFrame, experiment: str, where, factor: float) -> pd.DataFrame:
    out = table.copy()
    rows = (out["experiment"] == experiment) & (out["metric"] == "sq_error_n") & where(out)
    out.loc[rows, "value"] *= factor
    return out


@pytest.mark.parametrize(
    ("source", "experiment", "where"),
    [
        (
            "[Notes] Sec. 2 (local against central DP)",
            "textbook",
            lambda t: (t["protocol.name"] == "GRR") & (t["n"] == 10**6),
        ),
        (
            "[Notes] Sec. 3 (binary sums in the shuffle model); [BBGN19] Theorem 3.1",
            "textbook_shuffle",
            lambda t: t["n"] == 10**6,
        ),
        (
            "[Notes] Sec. 4 (histograms: error per bin)",
            "textbook",
            lambda t: (t["protocol.name"] == "SUE") & (t["n"] == 10**6),
        ),
    ],
)
def test_a_rate_row_fails_when_the_error_at_one_n_is_planted_tenfold(
    table, source, experiment, where
) -> None:
    """An MSE ten times its value at n = 10^6 bends the fitted exponent: the row fails."""
    before = next(c for c in fig_textbook.claims(table) if c.source == source)
    assert before.verdict == "reproduced"
    after = next(
        c
        for c in fig_textbook.claims(_planted(table, experiment, where, 10.0))
        if c.source == source
    )
    assert after.verdict != "reproduced"


def test_the_largest_error_row_fails_on_a_planted_spread(table) -> None:
    """Every bin's error 30% larger (σ off): the largest error leaves E[max]."""
    planted = _planted(table, "textbook_max", lambda t: t["item"].notna(), 1.3**2)
    row = next(c for c in fig_textbook.claims(planted) if "max error" in c.paper)
    assert row.verdict != "reproduced"


def test_the_hashing_row_fails_without_the_collision_correction(table) -> None:
    """The uncorrected f̂[h(v)] is biased by n/m per empty value: planted as that bias."""
    planted = table.copy()
    rows = (planted["experiment"] == "textbook_hash") & (planted["metric"] == "error_n")
    m = int(planted.loc[planted["experiment"] == "textbook_hash", "protocol.m"].iloc[0])
    planted.loc[rows, "value"] += 1 / m
    row = next(c for c in fig_textbook.claims(planted) if "hashing" in c.source)
    assert row.verdict != "reproduced"


def test_the_table_and_example_rows_flip_on_their_detected_deviation(table) -> None:
    for claim in fig_textbook.claims(table):
        if claim.detection.found and claim.verdict in ("reproduced", "identity", "differs"):
            assert claim.mutated(2.0).verdict != claim.verdict, claim.source
