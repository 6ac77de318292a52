"""Every registered protocol passes the conformance suite of :mod:`ldp.testing`.

The items are parametrized from :mod:`ldp.registry`, one per (protocol, check), so a newly
registered protocol (a built-in module or a plug-in) is covered without editing this file.
A check that a protocol's declared capabilities rule out is reported as a skip with the
reason (``pytest -rs`` lists them).  Statistical checks are tests at level
``ldp.testing.ALPHA`` = 1e-4 each, on fixed seeds.
"""

from __future__ import annotations

import pytest

from ldp import registry
from ldp.testing import CheckSkipped, heavy_hitter_checks, mean_checks, oracle_checks

ORACLE_CONTEXT = {"epsilon": 1.0, "domain_size": 8}
HEAVY_HITTER_CONTEXT = {"epsilon": 2.0, "k": 4, "m": 16}
MEAN_CONTEXT = {"epsilon": 1.0}
#: Smaller-than-default parameters for protocols whose default sizes make the battery slow
#: (as scikit-learn's per-estimator check parameters): the sketches' k x m tables.
QUICK_PARAMETERS = {"CMS": {"k": 16, "m": 64}, "HCMS": {"k": 16, "m": 64}}


def _items():
    for name, entry in registry.protocols().items():
        if entry.kind == "oracle":
            checks = oracle_checks(entry.cls, **ORACLE_CONTEXT, **QUICK_PARAMETERS.get(name, {}))
        elif entry.kind == "mean":
            checks = mean_checks(entry.cls, **MEAN_CONTEXT, **QUICK_PARAMETERS.get(name, {}))
        else:
            checks = heavy_hitter_checks(
                entry.cls, **HEAVY_HITTER_CONTEXT, **QUICK_PARAMETERS.get(name, {})
            )
        for check in checks:
            yield pytest.param(check, id=f"{name}-{check.name}")


@pytest.mark.parametrize("check", list(_items()))
def test_conformance(check) -> None:
    try:
        check.run()
    except CheckSkipped as skipped:
        pytest.skip(f"{check.name}: {skipped}")
