"""The report rows of [PEM] Sec. II-B, Lemma 1 / Prop. 1 and F1 against NCR: each judged on
a small table built with known numbers (Figs. 7b-c: ``test_figures_pem_claims``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from experiments.figures import fig_pem_fig6
from experiments.figures import fig_pem_section2 as sec2
from ldp import theory

TRIALS = 300


def _oracle_rows(protocol: str, epsilon: float, n: int, d: int, shift: float = 0.0):
    """``TRIALS`` rows of sq_error_n scattered ±5% around the exact Var/n (plus ``shift``
    relative), as the oracle trials record them."""
    if protocol == "GRR":
        p, q = theory.grr_pq(epsilon, d)
    else:
        p, q = theory.olh_pq(epsilon, theory.olh_default_g(epsilon))
    exact = float(theory.pure_variance(1, p, q))
    noise = np.random.default_rng(0).normal(0.0, 0.05 * exact, TRIALS)
    return pd.DataFrame(
        {
            "metric": "sq_error_n",
            "item": np.nan,
            "experiment": f"pem_section2_{protocol.lower()}",  # each example's own config
            "protocol.name": protocol,
            "epsilon": epsilon,
            "dataset.n": n,
            "value": exact * (1 + shift) + noise - noise.mean(),
            "analytic": exact,
            "trial": np.arange(TRIALS),
        }
    )


def _section2_table(shift: float = 0.0) -> pd.DataFrame:
    olh_eps = 2.3025850929940455  # below ln 10: g = 11 as the paper's d'
    rows = [_oracle_rows("GRR", math.log(49), 100_000, 2**16, shift)]
    rows += [
        _oracle_rows("OLH", e, n, 1024, shift)
        for e in (0.5, 1.0, 2.0, olh_eps)
        for n in (25_000, 50_000, 100_000)
    ]
    return pd.concat(rows, ignore_index=True)


def _claims(table: pd.DataFrame) -> dict[str, object]:
    out = sec2.olh_claims(sec2.stats(table))
    frame = sec2.stats(table)
    return {
        "grr": sec2.grr_claim(frame),
        "sd": out[0],
        "n": out[1],
        "lemma": sec2.lemma1_claim(frame),
        "prop": sec2.prop1_claim(frame),
    }


def test_section2_rows_reproduce_on_the_exact_variances():
    claims = _claims(_section2_table())
    for key, claim in claims.items():
        assert claim.verdict == "reproduced", (key, claim.ours)
    assert "28.4648" in claims["grr"].ours and "4,410,000" in claims["n"].ours
    assert "4,444,444" in claims["n"].ours  # 9 · 40/81 / 0.001^2 unrounded


def test_section2_rows_catch_a_variance_off_its_formula():
    claims = _claims(_section2_table(shift=0.05))  # 5% too high: ~17 SE at 300 trials
    assert claims["grr"].verdict == "partly" and claims["sd"].verdict == "partly"
    assert claims["grr"].reason


def test_section2_rows_without_runs_are_not_measurable():
    claims = _claims(_section2_table().iloc[:0])
    assert {c.verdict for c in claims.values()} == {"not measurable"}
    assert all("run pem_section2" in c.reason for c in claims.values())


def test_lemma1_pairs_compare_the_partition_with_the_split():
    pairs = sec2.lemma1_pairs(sec2.stats(_section2_table()))
    assert [(r.epsilon, r.g) for r in pairs.itertuples()] == list(sec2.PAIRS)
    assert (pairs["split"] > pairs["partition"]).all()
    # g = 2, ε = 2: the partition's n·Var is 2 x OLH's Var/n at ε = 2, Eq. (3) up to d'
    row = pairs.iloc[1]
    assert row["partition_eq3"] == pytest.approx(2 * 4 * math.e**2 / (math.e**2 - 1) ** 2)
    assert row["partition"] == pytest.approx(row["partition_exact"], rel=0.01)


def test_prop1_grid_matches_the_printed_formulas_at_a_point():
    grid = sec2.prop1_grid()
    row = grid[
        (grid["epsilon"] == 1.0)
        & (grid["g"] == 2)
        & (grid["f"] == 0.01)
        & (grid["n"] == 1e5)
        & (grid["slots"] == 1e-2)
    ].iloc[0]
    e = lambda x: (math.exp(x) - 1) ** 2 / math.exp(x)  # noqa: E731
    a, b, c = -2.3263478740408408, 0.005 * 0.995, 0.01 * math.sqrt(1e5) / 2
    p1 = a / math.sqrt(1 + b * e(1)) + c / math.sqrt(2 / e(1) + 2 * b)
    p2 = a / math.sqrt(1 + b * e(0.5)) + c / math.sqrt(1 / e(0.5) + b)
    assert (row["P1"], row["P2"]) == (pytest.approx(p1), pytest.approx(p2))


def test_channels_and_report_sizes_are_closed_forms():
    report, around = sec2.communication_claims()
    assert report.verdict == "reproduced" and "k = 16: 104" in report.ours
    assert around.verdict == "differs" and "k = 64: 512" in around.ours


def _utility_rows(values: dict[tuple[str, int], tuple[float, float]]) -> pd.DataFrame:
    """Two runs of F1 and NCR per (protocol, k) on the synthetic data at ε = 2."""
    rows = []
    for (protocol, k), (f1, ncr) in values.items():
        for metric, value in (("f1", f1), ("ncr", ncr)):
            for trial in range(2):
                rows.append(
                    {
                        "config_hash": f"{protocol}-{k}",
                        "dataset.name": "exponential",
                        "protocol.name": protocol,
                        "protocol.label": protocol,
                        "epsilon": 2.0,
                        "k": k,
                        "metric": metric,
                        "item": None,
                        "value": value,
                        "trial": trial,
                    }
                )
    return pd.DataFrame(rows)


def test_f1_and_ncr_agree_or_the_reversal_is_named():
    same = _utility_rows({("PEM", 4): (0.9, 0.95), ("MCM", 4): (0.5, 0.6), ("SPM", 4): (0.5, 0.4)})
    (claim,) = fig_pem_fig6.f1_ncr_claims(same)
    assert claim.verdict == "reproduced" and claim.ours.startswith("2 (data set")  # PEM-MCM, -SPM
    flipped = _utility_rows(
        {("PEM", 4): (0.9, 0.5), ("MCM", 4): (0.5, 0.6), ("SPM", 4): (0.3, 0.2)}
    )
    (claim,) = fig_pem_fig6.f1_ncr_claims(flipped)
    assert claim.verdict == "differs" and "MCM vs PEM" in claim.ours


@pytest.mark.slow
def test_dataset_rows_read_the_surrogates():
    claims = {c.paper.split(":")[0]: c for c in sec2.dataset_claims()}
    assert claims["url"].verdict == "reproduced" and "1,200,000" in claims["url"].ours
    assert claims["aol"].verdict == "partly" and "657,427" in claims["aol"].ours
    assert claims["exponential"].verdict == "reproduced"
