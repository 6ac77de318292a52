"""TreeHist's verdicts compare PEM and TreeHist only where both measured a point."""

from __future__ import annotations

import numpy as np
import pandas as pd

from experiments.figures import fig_treehist


def _rows(protocol: str, form: str | None, epsilons, f1: float) -> list[dict]:
    rows = []
    for eps in epsilons:
        for trial in range(3):
            rows.append(
                {
                    "protocol.name": protocol,
                    "protocol.form": form if form is not None else np.nan,
                    "dataset.name": "exponential",
                    "epsilon": eps,
                    "metric": "f1",
                    "item": np.nan,
                    "value": f1,
                    "trial": trial,
                    "config_hash": f"{protocol}{form}{eps}",
                }
            )
    return rows


def test_a_point_treehist_did_not_run_is_neither_a_win_nor_a_loss() -> None:
    # PEM swept five ε, TreeHist three of them; PEM wins wherever both ran
    table = pd.DataFrame(
        _rows("PEM", None, [1, 2, 3, 4, 5], 0.9) + _rows("TreeHist", "top-k", [1, 3, 5], 0.5)
    )
    (claim,) = fig_treehist.claims_for("epsilon", "k = 16")(table)
    assert claim.verdict == "reproduced"
    assert "at the 3 points both ran" in claim.ours and claim.ours.endswith(" SE at 3")
    # the row's own detected deviation, planted, changes the verdict
    assert claim.detection.found and claim.mutated().verdict != "reproduced"


def test_a_point_where_treehist_is_ahead_still_counts_against_pem() -> None:
    table = pd.DataFrame(
        _rows("PEM", None, [1, 2, 3], 0.5) + _rows("TreeHist", "top-k", [1, 2], 0.9)
    )
    (claim,) = fig_treehist.claims_for("epsilon", "k = 16")(table)
    assert claim.verdict == "differs"
    assert "at the 2 points both ran" in claim.ours and "1: -0.40" in claim.ours
