"""The search's compiled kernels give the numbers of its numpy paths, exactly.

An integer histogram field's value tables (:func:`ldp.audit.events._value_tables`) and the
reports' digests (:func:`ldp.audit.events.symbols`) are computed by numba kernels when
numba is installed; the numpy paths are the definitions.  Each check compares the two on
reports where a slip shows: negative values, a value range that starts above 0, entries
whose width is not a multiple of 8 bytes, blocks of rows that do not divide the batch.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp.audit import events
from ldp.oracles import SHE

pytestmark = pytest.mark.skipif(not events.HAVE_NUMBA, reason="numba is not installed")


def _both(monkeypatch, compute):
    monkeypatch.setattr(events, "HAVE_NUMBA", True)
    compiled = compute()
    monkeypatch.setattr(events, "HAVE_NUMBA", False)
    return compiled, compute()


def test_value_tables_are_the_same_with_and_without_the_kernel(monkeypatch) -> None:
    she = SHE(epsilon=2.0, domain_size=24)
    rng = np.random.default_rng(4)
    x = np.asarray(she.perturb(rng.integers(0, 24, size=3001), rng))
    y = np.asarray(she.perturb(rng.integers(0, 24, size=2999), rng)) + 7  # starts elsewhere
    columns = events.report_columns(x)
    compiled, plain = _both(monkeypatch, lambda: events._value_tables(columns, x, y))
    assert compiled.keys() == plain.keys() == {(None, None)}
    for a, b in zip(compiled[(None, None)], plain[(None, None)], strict=True):
        assert a.low == b.low < 0 and np.array_equal(a.counts, b.counts)
    assert compiled[(None, None)][0].counts.sum() == x.size  # every entry counted once


@pytest.mark.parametrize(("shape", "dtype"), [((5001, 13), np.uint8), ((777, 3), np.int32)])
def test_digests_are_the_same_with_and_without_the_kernel(monkeypatch, shape, dtype) -> None:
    rows = np.random.default_rng(5).integers(-90, 90, size=shape).astype(dtype)
    monkeypatch.setattr(events, "_SYMBOL_BLOCK", 4096)  # several blocks, the last one short
    compiled, plain = _both(monkeypatch, lambda: events.symbols(rows))
    assert np.array_equal(compiled, plain)
    assert np.unique(plain).size == np.unique(rows, axis=0).shape[0]  # distinct rows apart
