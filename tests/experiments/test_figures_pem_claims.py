"""The report rows of [PEM] Secs. VI-VII and the appendix, each judged on a small table
built with known numbers, and each shown to change its verdict under a planted deviation."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from experiments.figures import (
    fig_pem_fig5,
    fig_pem_fig6,
    fig_pem_fig7,
    fig_pem_fig8,
    fig_pem_fig9,
    fig_sfp,
)

TRIALS = 10


def _rows(series: dict, by: str, xs, dataset: str = "exponential", spread: float = 0.04):
    """``TRIALS`` runs of F1 and NCR per (label, x): ``series[(protocol, label)]`` is the
    mean, a callable of x or a number; runs scattered ±``spread`` around it (mean exact)."""
    rng = np.random.default_rng(1)
    rows = []
    for (protocol, label), mean in series.items():
        for x in xs:
            centre = mean(x) if callable(mean) else mean
            noise = rng.normal(0, spread, TRIALS)
            values = centre + noise - noise.mean()
            for metric in ("f1", "ncr"):
                for trial, value in enumerate(values):
                    rows.append(
                        {
                            "config_hash": f"{dataset}-{label}-{x}",
                            "dataset.name": dataset,
                            "protocol.name": protocol,
                            "protocol.label": label,
                            "epsilon": x if by == "epsilon" else 2.0,
                            "k": x if by == "k" else 16,
                            "metric": metric,
                            "value": value,
                            "trial": trial,
                            "item": None,
                        }
                    )
    return pd.DataFrame(rows)


def _one(claims, text: str):
    (claim,) = [c for c in claims if text in c.paper]
    return claim


def _flips(claim) -> None:
    """The row's own detected deviation, planted, changes its verdict."""
    assert claim.detection.found, claim.ours
    assert claim.mutated().verdict != claim.verdict


CHANNELS = {
    ("PEM", "PEM"): 0.9,
    ("MCM", "MCM"): 0.4,
    ("MCM", "MCM (√n channels)"): 0.4,
}


def test_mcm_channels_rows_read_the_root_n_line():
    table = _rows(CHANNELS, "epsilon", (1.0, 2.0, 3.0))
    claims = fig_pem_fig5.channel_claims(table, "epsilon", "10 runs")
    enough, under = _one(claims, "k^1.5"), _one(claims, "√n channels significantly")
    assert enough.verdict == "reproduced" and under.verdict == "reproduced"
    _flips(enough)
    # plant: √n channels much better than k^1.5 ones, and as good as PEM
    table = _rows({**CHANNELS, ("MCM", "MCM (√n channels)"): 0.9}, "epsilon", (1.0, 2.0, 3.0))
    claims = fig_pem_fig5.channel_claims(table, "epsilon", "10 runs")
    assert _one(claims, "k^1.5").verdict == "partly"
    assert _one(claims, "√n channels significantly").verdict == "partly"  # tied, not behind


def _fig5_rows(mcm) -> list:
    table = _rows({("PEM", "PEM"): 0.9, ("MCM", "MCM"): mcm}, "epsilon", (1.0, 3.0, 5.0))
    f1 = fig_pem_fig5.summary(table, "f1", ["dataset.name", "protocol.name", "epsilon", "k"])
    return fig_pem_fig5.best_claims(f1, "10 runs")


def test_fig5_rows_read_the_three_sentences_and_compute_their_cause():
    claims = _fig5_rows(lambda e: 0.1 * e)  # MCM catches up: the lead shrinks
    best, count = _one(claims, "performs best"), _one(claims, "will increase")
    improvement = _one(claims, "more significant")
    assert best.verdict == count.verdict == "reproduced"
    _flips(count)
    assert improvement.verdict == "partly"
    assert "rises from F1 0.10 to 0.50" in improvement.reason
    claims = _fig5_rows(lambda e: 0.5 - 0.1 * e)  # plant: MCM finds fewer as ε grows
    assert _one(claims, "will increase").verdict == "partly"
    assert _one(claims, "more significant").verdict == "reproduced"


KS = (4, 8, 16, 32)


def test_fig6_decrease_and_stops_increasing_rows():
    # F1 falls with k; the count k × F1 levels off between 16 and 32 (0.5 × 32 = 16 = 1 × 16)
    falling = {("PEM", "PEM"): lambda k: {4: 1.0, 8: 1.0, 16: 1.0, 32: 0.5}[k] - 0.01 * k / 32}
    falling[("MCM", "MCM")] = lambda k: 0.6 - 0.01 * k
    claims = fig_pem_fig6.decrease_claims(_rows(falling, "k", KS), "10 runs")
    most, stops = _one(claims, "most of the cases"), _one(claims, "stops increasing")
    assert most.verdict == "reproduced" and stops.verdict == "reproduced"
    _flips(stops)
    rising = {("PEM", "PEM"): lambda k: 0.2 + 0.02 * k, ("MCM", "MCM"): lambda k: 0.1 + 0.01 * k}
    claims = fig_pem_fig6.decrease_claims(_rows(rising, "k", KS), "10 runs")
    assert _one(claims, "most of the cases").verdict == "differs"
    assert _one(claims, "stops increasing").verdict == "differs"


def test_fig6_f1_and_ncr_agree_or_the_reversal_is_named():
    table = _rows({("PEM", "PEM"): 0.9, ("MCM", "MCM"): 0.5}, "k", (4,))
    (claim,) = fig_pem_fig6.f1_ncr_claims(table)
    assert claim.verdict == "reproduced"
    flipped = table.copy()
    ncr = (flipped["metric"] == "ncr") & (flipped["protocol.name"] == "PEM")
    flipped.loc[ncr, "value"] -= 0.6  # PEM ahead on F1, behind on NCR
    (claim,) = fig_pem_fig6.f1_ncr_claims(flipped)
    assert claim.verdict == "differs" and "reversed at exponential k = 4" in claim.ours


def _theta_rows(pem: float, counts=(24, 10, 5), thetas=(0.015, 0.03, 0.04)) -> pd.DataFrame:
    rows = []
    rng = np.random.default_rng(2)
    for theta, count in zip(thetas, counts, strict=True):
        for epsilon in (2.0, 4.0):
            for protocol, mean in (("PEM", pem), ("SPM", 0.5), ("MCM", 0.6)):
                noise = rng.normal(0, 0.03, TRIALS)
                for trial in range(TRIALS):
                    for metric, number in (("f1", mean + noise[trial]), ("n_true", count)):
                        rows.append(
                            {
                                "config_hash": f"{protocol}-{theta}-{epsilon}",
                                "protocol.name": protocol,
                                "protocol.threshold": theta,
                                "epsilon": epsilon,
                                "metric": metric,
                                "item": None,
                                "value": number,
                                "trial": trial,
                            }
                        )
    return pd.DataFrame(rows)


def test_fig7_theta_rows_and_the_theta_k_identity():
    b, c = fig_pem_fig7.theta_claims(_theta_rows(0.9))
    assert (b.source, c.source) == ("PEM Sec. VI-B3 (Fig. 7b)", "PEM Sec. VI-B3 (Fig. 7c)")
    assert b.verdict == c.verdict == "reproduced"
    behind, _ = fig_pem_fig7.theta_claims(_theta_rows(0.3))
    assert behind.verdict == "differs"
    (count,) = fig_pem_fig7.count_claims(_theta_rows(0.9))
    assert count.verdict == "identity" and "θ = 0.015: 24" in count.ours
    (planted,) = fig_pem_fig7.count_claims(_theta_rows(0.9, counts=(5, 10, 24)))
    assert planted.verdict == "differs"


def test_fig7a_most_profound_at_two_is_measured():
    lead = {1.0: 0.3, 2.0: 0.6, 3.0: 0.2}
    table = _rows({("PEM", "PEM"): 0.9, ("MCM", "MCM"): lambda e: 0.9 - lead[e]}, "epsilon", lead)
    table["protocol.threshold"] = fig_pem_fig7.THETA
    table["protocol.label"] = table["protocol.name"] + fig_pem_fig7.SUFFIX
    claim = _one(fig_pem_fig7.claims(table), "most profound")
    assert claim.verdict == "reproduced"
    _flips(claim)
    lead[1.0] = 0.8  # plant: the widest lead at ε = 1
    table = _rows({("PEM", "PEM"): 0.9, ("MCM", "MCM"): lambda e: 0.9 - lead[e]}, "epsilon", lead)
    table["protocol.threshold"] = fig_pem_fig7.THETA
    table["protocol.label"] = table["protocol.name"] + fig_pem_fig7.SUFFIX
    claim = _one(fig_pem_fig7.claims(table), "most profound")
    assert claim.verdict == "partly" and "wider at ε = 1" in claim.reason


def _budget_rows(block: float) -> pd.DataFrame:
    rows = _rows(
        {("MCM", "MCM"): 0.3, ("MCM", "MCM (8-bit OLH blocks)"): block}, "epsilon", (1.2, 2.0)
    )
    rows["protocol.budget"] = "partition"
    split = rows.copy()
    split["protocol.budget"] = "split"
    split["config_hash"] += "-split"
    table = pd.concat([rows, split], ignore_index=True)
    block_rows = table["protocol.label"] == "MCM (8-bit OLH blocks)"
    table["protocol.block_encoding"] = np.where(block_rows, "oracle", None)
    table["protocol.block_bits"] = np.where(block_rows, 8.0, np.nan)
    return table


def test_fig8_bigger_blocks_row():
    (claim,) = fig_pem_fig8.block_claims(_budget_rows(0.6), "10 runs")
    assert claim.verdict == "reproduced"
    _flips(claim)
    (planted,) = fig_pem_fig8.block_claims(_budget_rows(0.3), "10 runs")
    assert planted.verdict == "partly"


def test_fig8_assumed_row_reads_sampling_error(monkeypatch):
    def rows(exponential: float) -> pd.DataFrame:
        series = {
            ("PEM", "zipf"): 0.8,
            ("PEM", "zipf1.5"): 0.8,
            ("PEM", "exponential"): exponential,
        }
        table = _rows(series, "epsilon", (1.0, 2.0))
        return table.assign(**{"protocol.assumed": table["protocol.label"]})

    shape = SimpleNamespace(config=SimpleNamespace(etas=(12, 12, 12)))
    monkeypatch.setattr(fig_pem_fig8.sec6, "built", lambda row, epsilon=None, k=None: shape)
    (claim,) = fig_pem_fig8.assumed_claims(rows(0.8), "10 runs")
    assert claim.verdict == "reproduced"
    _flips(claim)
    (planted,) = fig_pem_fig8.assumed_claims(rows(0.6), "10 runs")  # 0.2 off: ~10 SE
    assert planted.verdict == "partly" and "at ε = 1 F1 exponential 0.60" in planted.reason


@pytest.mark.parametrize("claim", [fig_pem_fig9.joint_estimator_claim()])
def test_spm_joint_estimator_is_unbiased_and_a_planted_bias_shows(claim):
    assert claim.verdict == "identity"
    assert claim.mutated().verdict == "differs"


def test_sfp_row_needs_heavy_hitters_found_and_the_model_of_its_rounds(monkeypatch):
    """F1 above 0 beyond sampling error at some point, and on the model at every point:
    a run that finds nothing differs, one off the model by 0.2 (10 SE here) is partly."""

    def table(f1: float) -> pd.DataFrame:
        return _rows({("SFP", "SFP"): f1}, "epsilon", (1.0, 5.0))

    model = {"value": 0.5}
    monkeypatch.setattr(fig_sfp, "model_f1", lambda row: model["value"])
    (claim,) = fig_sfp.claims_for("epsilon", "k = 16")(table(0.5))
    assert claim.verdict == "reproduced" and ": 0.500 ± " in claim.ours
    _flips(claim)
    (planted,) = fig_sfp.claims_for("epsilon", "k = 16")(table(0.0))
    assert planted.verdict == "differs"
    model["value"] = 0.3
    (off,) = fig_sfp.claims_for("epsilon", "k = 16")(table(0.5))
    assert off.verdict == "partly"


def test_the_sfp_models_distinct_rows_are_numpys() -> None:
    """fig_sfp._distinct (a lexsort of word rows) gives np.unique's rows, in its order, and
    their counts; integers and an empty table too."""
    from experiments.figures.fig_sfp import _distinct

    rng = np.random.default_rng(2)
    for words in (
        rng.integers(0, 3, size=(2000, 3)).astype(np.uint64),
        np.array([[5, 1], [1, 9], [5, 1], [1, 2]], dtype=np.uint64),
        np.zeros((0, 2), dtype=np.uint64),
        rng.integers(0, 50, size=500).astype(np.uint64),
    ):
        axis = 0 if words.ndim == 2 else None
        expected = np.unique(words, axis=axis, return_counts=True)
        for got, want in zip(_distinct(words), expected, strict=True):
            assert np.array_equal(got, want)
