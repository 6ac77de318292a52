"""fig_mean's claims on tables drawn from the closed forms: reproduced when the numbers
follow the paper, "differs" when PM's variance is planted wrong."""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.figures import fig_mean
from ldp import registry
from ldp.theory import numeric as theory

EPSILONS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


def _table(pm_factor: float = 1.0, trials: int = 100) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for name in registry.protocols("mean"):
        for law, t in fig_mean.LAWS.items():
            for eps in EPSILONS:
                variance = float(fig_mean._formula(name)(eps, t))
                truth = variance * (pm_factor if name == "PM" else 1.0)
                for trial in range(trials):
                    common = {
                        "protocol.name": name,
                        "dataset.law": law,
                        "epsilon": eps,
                        "trial": trial,
                        "item": np.nan,
                        "analytic": variance,
                    }
                    spread = truth * (1 + 0.003 * rng.standard_normal())
                    error = truth * rng.standard_normal() ** 2
                    rows.append(common | {"metric": "report_variance", "value": spread})
                    rows.append(common | {"metric": "sq_error_n", "value": error})
    return pd.DataFrame(rows)


def test_claims_reproduced_on_the_closed_forms() -> None:
    claims = fig_mean.claims(_table())
    assert [c.verdict for c in claims] == ["reproduced"] * 3 + ["identity"]
    assert str(round(theory.PM_BEATS_DUCHI, 2)) in claims[0].paper
    for claim in claims[:3]:
        assert claim.detection.within(), claim.detection.text()


def test_claims_catch_a_wrong_pm() -> None:
    """PM's variance 40% higher: the crossing moves, the MSE is off its closed form."""
    verdicts = [c.verdict for c in fig_mean.claims(_table(pm_factor=1.4))]
    assert verdicts[0] != "reproduced" and verdicts[2] != "reproduced"


def test_each_claim_flips_on_its_planted_deviation() -> None:
    """Each measured row, with its detected deviation applied (doubled), changes verdict."""
    for claim in fig_mean.claims(_table())[:3]:
        assert claim.mutated(2.0).verdict != claim.verdict, claim.source


def test_hm_above_the_others_is_caught() -> None:
    """HM planted 5% above Duchi's and PM's worst case: the Lemma 3 row fails."""
    table = _table()
    hybrid = (table["protocol.name"] == "Hybrid") & (table["metric"] == "report_variance")
    table.loc[hybrid, "value"] *= 1.05
    assert fig_mean.claims(table)[1].verdict == "differs"


def test_the_figure_draws() -> None:
    figure = fig_mean.draw(_table(trials=5))
    assert len(figure.axes) == 3
