"""The hadamard_anchor and shuffle_bounds benchmarks: their exact column and table logic."""

from __future__ import annotations

import pytest

from benchmarks import hadamard_anchor, shuffle_bounds
from ldp.oracles import BHR, HPGR, HR, PGR, RHR


def test_anchor_exact_column() -> None:
    """The exact mean variances the table prints (HR's is its closed form at n_x = n/d)."""
    d, n, e = hadamard_anchor.D, hadamard_anchor.N, hadamard_anchor.EPSILON
    assert hadamard_anchor.exact_mean_variance(HR(epsilon=e, domain_size=d)) == pytest.approx(
        HR(epsilon=e, domain_size=d).variance(n, n / d)
    )
    bhr = hadamard_anchor.exact_mean_variance(BHR(epsilon=e, domain_size=d))
    rhr = hadamard_anchor.exact_mean_variance(RHR(epsilon=e, domain_size=d))
    assert round(bhr, 2) == 182.66 and round(rhr, 2) == 150.39
    pgr = hadamard_anchor.exact_mean_variance(PGR(epsilon=e, domain_size=d))
    hpgr = hadamard_anchor.exact_mean_variance(HPGR(epsilon=e, domain_size=d))
    assert round(pgr, 2) == 76.13 and round(hpgr, 2) == 206.61


def test_tables_render() -> None:
    text = hadamard_anchor.render(
        [["BHR", "182.66", "182.80 ± 0.19", "+0.7", "182.9", "-0.13%", "0.4"]], 200
    )
    assert "BHR | 182.66" in text and "200 populations" in text
    text = hadamard_anchor.render_decode([["PGR", "13.5", "36.9", "11.9-12.9"]])
    assert "|    PGR |            13.5 |" in text and "d = 3,307,948" in text
    text = shuffle_bounds.render([(10**8, 0.000431, 5.5, 0.000529, 1.9)])
    assert "10^8" in text and "0.815" in text
