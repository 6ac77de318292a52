"""Every registered protocol passes the conformance suite of :mod:`ldp.testing`.

The items are parametrized from :mod:`ldp.registry`, one per (protocol, check), so a newly
registered protocol (a built-in module or a plug-in) is covered without editing this file.
A check that a protocol's declared capabilities rule out is reported as a skip with the
reason (``pytest -rs`` lists them).  Statistical checks are tests at level
``ldp.testing.ALPHA`` = 1e-4 each, on fixed seeds.  Oracles run at the default
``Settings`` (sized to catch a 2% variance error and a 1% bias with probability >= 0.9),
except those in :data:`ORACLE_SETTINGS` and :data:`MEAN_SETTINGS`, whose sampled engine is
slow.
"""

from __future__ import annotations

import pytest

from ldp import registry
from ldp.testing import (
    CheckSkipped,
    Settings,
    heavy_hitter_checks,
    mean_checks,
    oracle_checks,
    set_checks,
)

ORACLE_CONTEXT = {"epsilon": 1.0, "domain_size": 8}
HEAVY_HITTER_CONTEXT = {"epsilon": 2.0, "k": 4, "m": 16}
MEAN_CONTEXT = {"epsilon": 1.0}
SET_CONTEXT = {"epsilon": 1.0, "domain_size": 16}
#: Smaller-than-default parameters for protocols whose default sizes make the battery slow
#: (as scikit-learn's per-estimator check parameters): the sketches' k x m tables.
QUICK_PARAMETERS = {"CMS": {"k": 16, "m": 64}, "HCMS": {"k": 16, "m": 64}}
#: Oracles whose sampled engine costs 0.4 ms or more a call (a pool of hash functions, a
#: Hadamard transform, a sketch, a Bloom filter or a subset per run, against ~0.1 ms for
#: GRR): 5,000 sampled runs instead of the default 24,000, which keeps ``make test``'s time.
#: Their sampled variance test then detects about a 4% error with probability 0.9 over 8
#: values (10% for FLH, CMS and HCMS, which test one); each check's note says what it
#: detects.  ``Settings()`` is what a plug-in author runs.
SLOW_SAMPLED = ("FLH", "HR", "BHR", "HM", "RHR", "PGR", "HPGR", "SS", "RAPPOR", "CMS", "HCMS")
ORACLE_SETTINGS = {name: Settings(sampled_repetitions=5000) for name in SLOW_SAMPLED}
#: Mean protocols whose exact sampled engine costs about 2 ms a call (PM's and HM's sums of
#: uniform integers over the dyadic grid): 6,000 sampled runs instead of 24,000, so their
#: ``engines_agree`` detects a 9% variance error with probability 0.9 instead of 5%.  The
#: whole law of both engines is compared by tests/numeric/test_sampled.py (Kolmogorov-
#: Smirnov at four settings, and cell by cell on a tiny grid).
MEAN_SETTINGS = {name: Settings(sampled_repetitions=6000) for name in ("PM", "Hybrid")}


def _items():
    for name, entry in registry.protocols().items():
        if entry.kind == "oracle":
            checks = oracle_checks(
                entry.cls,
                ORACLE_SETTINGS.get(name),
                **ORACLE_CONTEXT,
                **QUICK_PARAMETERS.get(name, {}),
            )
        elif entry.kind == "mean":
            checks = mean_checks(
                entry.cls,
                MEAN_SETTINGS.get(name),
                **MEAN_CONTEXT,
                **QUICK_PARAMETERS.get(name, {}),
            )
        elif entry.kind == "set":
            checks = set_checks(entry.cls, **SET_CONTEXT, **QUICK_PARAMETERS.get(name, {}))
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
