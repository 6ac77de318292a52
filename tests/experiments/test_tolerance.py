"""Declared tolerances: each checks, describes itself, and finds its own power.

Every detection below is checked against the value worked out by hand, so a change to the
search (a wrong sign, a grid that skips the flip, a part left out) fails here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from experiments.figures.spec import ClaimCheck
from experiments.figures.tolerance import (
    Band,
    Beyond,
    Calibrated,
    Digits,
    Identity,
    Monotone,
    Part,
    WithinSE,
    bonferroni_z,
    combine,
)


def claim(*parts: Part, reason: str = "") -> ClaimCheck:
    return ClaimCheck("a source", "a statement", "a measurement", parts, reason=reason)


def test_bonferroni_z_is_the_union_bound() -> None:
    assert bonferroni_z(1, 0.05) == pytest.approx(norm.isf(0.025))
    assert bonferroni_z(40, 0.01) == pytest.approx(norm.isf(0.01 / 80))
    assert bonferroni_z(40, 0.01, one_sided=True) == pytest.approx(norm.isf(0.01 / 40))
    assert bonferroni_z(3, 0.01, df=7) > bonferroni_z(3, 0.01)  # t has heavier tails


def test_within_se_detects_the_shift_that_crosses_z() -> None:
    z = bonferroni_z(1, 0.01)
    check = claim(Part("Var/n", 1.0, WithinSE(1.0, 0.01, alpha=0.01)))
    assert check.verdict == "reproduced"
    found = check.detection
    # scaling 1.0 by 1 + δ leaves the band at δ = z SE / 1.0; a shift needs z SE
    assert found.delta == pytest.approx(z * 0.01, rel=1e-6) or found.delta == pytest.approx(
        z, rel=1e-6
    )
    assert found.within()  # z ≈ 2.6 SE: inside the report's 6 SE bar
    assert check.mutated().verdict == "differs"
    assert check.mutated(0.99).verdict == "reproduced"  # just short of the flip: unchanged
    assert "within 2.6 SE of the exact value" in check.tolerance


def test_within_se_one_sided_ignores_the_favourable_side() -> None:
    part = Part("ε", [0.5, 0.9], WithinSE([1.0, 1.0], [0.01, 0.01], side="below"))
    assert part.verdict == "reproduced"  # far below a bound read as 'at most'
    assert Part("ε", [1.2], WithinSE(1.0, 0.01, side="below")).verdict == "differs"


def test_beyond_is_a_one_sided_significance_reading_and_its_shift_is_the_margin() -> None:
    # 'ahead' at 3 points, family-wise 0.01 one-sided: z = isf(0.01/3); the weakest point
    # leads by 4 SE, so a shift of 4 - z SE down makes it fail (and nothing smaller does)
    z = norm.isf(0.01 / 3)
    tolerance = Beyond(0.0, [0.5, 1.0, 1.0], reading="'ahead'")
    values = np.array([2.0, 10.0, 12.0])
    assert tolerance.holds(values) and not tolerance.holds(values - 2.0 + 0.5 * z - 0.01)
    found = claim(Part("lead", values, tolerance)).detection
    assert found.how == "shift" and found.delta == pytest.approx(4.0 - z, rel=1e-5)
    assert "beyond" in tolerance.describe() and "'ahead'" in tolerance.describe()
    # below, and a tie is not beyond: a value at the threshold fails
    assert Beyond(0.5, 0.1, side="below").holds(np.array([0.1]))
    assert not Beyond(0.5, 0.1, side="below").holds(np.array([0.5]))


def test_beyond_at_z_zero_reads_the_plotted_order_and_flips_at_the_smallest_lead() -> None:
    plotted = Beyond(0.0, [0.01, 0.02], z=0.0)
    assert plotted.holds(np.array([0.001, 0.5])) and not plotted.holds(np.array([-1e-4, 0.5]))
    assert Beyond(0.0, [0.0, 0.02], z=0.0).holds(np.array([0.0, 0.5]))  # a tie at F1 = 1
    assert "as the means stand" in plotted.describe()
    found = claim(Part("lead, as plotted", [0.03, 0.5], plotted, otherwise="partly")).detection
    assert found.how == "shift" and found.delta == pytest.approx(3.0, rel=1e-5)  # 0.03/0.01
    tie = claim(Part("lead, as plotted", [0.0, 0.5], plotted, otherwise="partly")).detection
    assert tie.delta < 1e-6 and tie.text().startswith("any shift of lead, as plotted")


def test_digits_flip_where_the_rounding_changes() -> None:
    check = claim(Part("Var/n", 28.4648, Digits(28.5, decimals=1)))
    assert check.verdict == "reproduced"
    assert check.detection.delta == pytest.approx((28.4648 - 28.45) / 28.4648, rel=1e-4)
    assert Part("p", 0.000747, Digits(0.00075, significant=2)).verdict == "reproduced"
    assert Part("p", 0.000747, Digits(0.0007, significant=1)).verdict == "reproduced"
    assert Part("p", 0.000747, Digits(0.00074, significant=2)).verdict == "differs"
    with pytest.raises(ValueError, match="exactly one"):
        Digits(1.0)


def test_a_band_that_no_half_deviation_crosses_has_no_power() -> None:
    loose = claim(Part("ratio", 5.0, Band(low=1, strict=True, reading="'better' as > 1")))
    assert loose.verdict == "reproduced" and not loose.detection.found
    assert "none up to 50%" in loose.detection.text()
    tight = claim(Part("ratio", 1.05, Band(low=1, strict=True)))
    assert tight.detection.delta == pytest.approx(1 - 1 / 1.05, rel=1e-6)


def test_monotone_mutates_one_point() -> None:
    check = claim(Part("F1 over g", [0.41, 0.39, 0.36], Monotone("decreasing")))
    assert check.verdict == "reproduced"
    found = check.detection
    assert found.how == "point"
    # the smallest single move: 0.39 up to 0.41 (+5.1%) or 0.41 down to 0.39 (-4.9%)
    assert found.delta == pytest.approx(min(0.02 / 0.39, 0.02 / 0.41), rel=1e-6)
    assert check.mutated().verdict == "differs"
    slack = Part("F1", [0.41, 0.42], Monotone("decreasing", se=0.01, z=2))
    assert slack.verdict == "reproduced"  # a step back of 0.7 SE of the step is allowed


def test_identity_and_calibrated_rows_count_apart() -> None:
    exact = claim(Part("C(8,2)", 28, Identity(28)))
    assert exact.verdict == "identity" and exact.cause == ""
    assert exact.detection.delta < 1e-8 and exact.mutated().verdict == "differs"
    surrogate = claim(Part("n", 1_200_000, Calibrated(1.2e6, rtol=0.05)))
    assert surrogate.verdict == "calibrated"
    assert combine(["identity", "reproduced"]) == "reproduced"
    assert combine(["identity", "calibrated"]) == "calibrated"


def test_parts_combine_and_a_cause_is_never_invented() -> None:
    holds = Part("a", 1.0, WithinSE(1.0, 0.1))
    fails = Part("b", 2.0, WithinSE(1.0, 0.1))
    soft = Part("c", 2.0, WithinSE(1.0, 0.1), otherwise="partly")
    assert claim(holds, fails).verdict == "partly"
    assert claim(fails, fails).verdict == "differs"
    assert claim(soft).verdict == "partly"
    assert claim(soft, soft).verdict == "partly"  # only soft readings fail
    assert claim(fails, soft).verdict == "differs"  # nothing holds, a hard part among them
    assert claim(holds, soft).verdict == "partly"
    assert claim(holds, fails).cause == "not shown"
    assert claim(holds, fails, reason="measured: X").cause == "measured: X"
    missing = claim(Part("d", math.nan, WithinSE(1.0, 0.1)))
    assert missing.verdict == "not measurable" and not missing.detection.found


def test_the_detection_is_the_smallest_over_parts_and_mutations() -> None:
    wide = Part("wide", 1.0, WithinSE(1.0, 0.1))  # flips at 2.6 SE = 26%
    narrow = Part("narrow", 1.0, WithinSE(1.0, 0.001))  # flips at 0.26%
    found = claim(wide, narrow).detection
    assert found.quantity == "narrow" and found.within()
    # a planted half-size deviation leaves the verdict; the full one flips it
    both = claim(wide, narrow)
    assert both.mutated(0.5).verdict == "reproduced" and both.mutated().verdict == "partly"
    # two parts that flip at the same deviation: the first one named, in either order
    a, b = Part("a", 28, Identity(28)), Part("b", 45, Identity(45))
    assert claim(a, b).detection.quantity == "a" and claim(b, a).detection.quantity == "b"


def test_a_relative_flip_at_the_boundary_reads_any_deviation() -> None:
    # HM equal to PM: "at most" holds with no room, so any increase flips it
    edge = claim(Part("HM over PM", [1.0, 0.9], Band(high=1.0, reading="'at most'")))
    assert edge.detection.delta < 1e-14
    assert edge.detection.text().startswith("any deviation of HM over PM")


def test_a_claim_refuses_what_the_report_could_not_state() -> None:
    with pytest.raises(ValueError, match="Part"):
        ClaimCheck("src", "paper", "ours", ())
    with pytest.raises(ValueError, match="ours"):
        ClaimCheck("src", "paper", " ", Part("x", 1.0, Identity(1.0)))
    with pytest.raises(ValueError, match="otherwise"):
        Part("x", 1.0, Identity(1.0), otherwise="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        WithinSE(1.0, 0.1, alpha=1.5)


def test_many_points_get_a_wider_z() -> None:
    values = np.ones(400)
    part = Part("Var/n", values + 0.03, WithinSE(values, np.full(400, 0.01), alpha=0.01))
    assert part.verdict == "reproduced"  # 3 SE is inside Bonferroni's 4.4 SE for 400 points
    assert Part("x", [1.03], WithinSE(1.0, 0.01)).verdict == "differs"  # not for one point


def test_the_report_docs_example_prints_what_it_says() -> None:
    """docs/report.md's code block runs and prints the block that follows it."""
    import contextlib
    import io
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "report.md").read_text("utf-8")
    found = re.search(r"```python\n(.*?)```\s*\nprints\s*\n\s*```\n(.*?)```", text, re.S)
    assert found, "docs/report.md has no python block followed by what it prints"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(found.group(1), "docs/report.md", "exec"), {})
    assert out.getvalue() == found.group(2)


def test_an_exact_part_does_not_stand_in_for_the_measured_ones_power() -> None:
    exact = Part("C(8,2)", 28, Identity(28))
    measured = Part("Var/n", 1.0, WithinSE(1.0, 0.1))  # flips at 2.6 SE = 26%
    found = claim(exact, measured).detection
    assert found.quantity == "Var/n" and found.delta > 0.2
    assert claim(exact).detection.quantity == "C(8,2)"  # alone, the identity is the power
