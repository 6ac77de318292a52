"""Every budgeted operation has its measured cost per unit in docs/limits.md.

``benchmarks/budget.py`` reads the budgeted sites from the source (every function that
calls a check of :mod:`ldp.budget`) and runs cases that measure each one; the table it
generates sits in ``docs/limits.md``.  Here: each site of the source is charged by some
case (run at a tiny size), the committed table names each site, and a planted site, or a
check reached through ``check_rounds`` / ``check_query_limit``, is seen where it is.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from benchmarks import budget as costs
from ldp import budget
from ldp.validation import ParameterError

REPO = Path(__file__).resolve().parent.parent
LIMITS = REPO / "docs" / "limits.md"


def _short(site: str) -> str:
    return site.split(":", 1)[1]


@pytest.fixture(scope="module")
def smoke_sites() -> set[str]:
    """The sites charged by every case of the benchmark at its tiny size (the charges only:
    the traced peaks are the benchmark's, not this test's)."""
    return {site for result in costs.run(smoke=True, traced=False) for site, _ in result.charges}


def test_every_budgeted_site_of_the_source_is_charged_by_a_case(smoke_sites):
    sites = costs.budget_sites([REPO / root for root in costs.ROOTS])
    assert len(sites) > 30, sorted(sites)  # the reader finds the library's checks
    missing = sites - smoke_sites
    assert not missing, f"budgeted functions no case of benchmarks/budget.py reaches: {missing}"


def test_the_committed_table_names_every_site():
    text = LIMITS.read_text(encoding="utf-8")
    table = text[text.index(costs.BEGIN) : text.index(costs.END)]
    sites = costs.budget_sites([REPO / root for root in costs.ROOTS])
    missing = {site for site in sites if f"`{_short(site)}`" not in table}
    regenerate = "python -m benchmarks.budget --write docs/limits.md"
    assert not missing, f"{missing}: regenerate the table ({regenerate})"
    assert table.count("\n|") > len(sites) // 2  # a table, one row a case


def test_a_planted_site_is_found(tmp_path):
    package = tmp_path / "plugin"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernel.py").write_text(
        textwrap.dedent(
            """
            from ldp import budget

            class Sketch:
                def decode(self, n):
                    budget.check_operations("n", n, "fewer", 10.0 * n, "decoding")

            def helper():
                return 1
            """
        )
    )
    assert costs.budget_sites([package], base=tmp_path) == {"plugin.kernel:Sketch.decode"}


def test_recorded_keeps_refused_checks_and_names_the_function_that_asked():
    from ldp.oracles import LGRR

    oracle = LGRR(epsilon=1.0, epsilon_inf=2.0, domain_size=4)
    with budget.limits(operations=2**20), budget.recorded() as charges:
        with pytest.raises(ParameterError):
            oracle.perturb_rounds(np.zeros((1, 2**10), dtype=np.int64), np.random.default_rng(0))
    assert [c.site for c in charges] == ["ldp.oracles.longitudinal:Memoized.perturb_rounds"]
    assert charges[0].kind == "operations" and charges[0].amount == 2**10 * budget.ROUND_OPERATIONS
    with budget.recorded() as outside:
        budget.current()  # reading the budget is not a check
    assert outside == []  # and the refused check above was kept by its own block only


def test_the_table_is_replaced_between_its_markers_only():
    text = f"before\n{costs.BEGIN}\nold table\n{costs.END}\nafter\n"
    assert costs.replace_between_markers(text, "| new |") == (
        f"before\n{costs.BEGIN}\n| new |\n{costs.END}\nafter\n"
    )


def test_a_cached_result_earlier_in_the_process_does_not_hide_a_site():
    from ldp.theory import shuffle

    shuffle.shuffle_epsilon(1.0, 10**3, 1e-6, "fmt_numerical")  # cached, as another test may
    (result,) = costs.run(smoke=True, only=["fmt_numerical"])
    assert ("ldp.theory.shuffle:_check_window", "operations") in result.charges
