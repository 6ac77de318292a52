"""The set a protocol's reports live in, checked on every report the audit draws.

A protocol's privacy analysis covers the reports its declaration allows: values in [0, d)
for randomized response, k-bit vectors with nothing beyond bit k for the unary
encodings, cells in [0, g) for local hashing.  A report outside that set is one the
analysis never priced: its probability is 0 under every input by the declaration, so a
single one proves the mechanism emitting it is not the mechanism declared, whatever the
inputs (the audit reports an unbounded loss, with no sampling error).  An honest
mechanism never emits one, so the check adds no false alarm.

:func:`declared_support` gives the check of a mechanism: its own ``in_support(reports)``
(:class:`ldp.contract.HasReportSupport`), else one derived from its declared report model
(:mod:`ldp.contract`) for the report types of :mod:`ldp.oracles`:

* ``"categorical"`` with one integer a report: the values in [0, outputs), outputs the
  length of ``report_probabilities(v)`` (or ``report_count()``);
* ``"bits"`` with unary reports (``bits`` and ``domain_size`` fields) and the protocol's
  ``domain_size`` k: ⌈k/8⌉ bytes a report, no bit set beyond bit k;
* ``"hashed"`` with a ``values`` field and the protocol's hash range ``g``: cells in
  [0, g).

Anything else has no derived check (the audit then relies on its events alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ldp.contract import HasReportCount, HasReportSupport, capabilities_of

#: Per report: whether it lies in the declared support.
Check = Callable[[Any], np.ndarray]


def declared_support(mechanism: Any) -> Check | None:
    """The support check of ``mechanism`` (module docstring), or None if it declares none."""
    if isinstance(mechanism, HasReportSupport):
        return mechanism.in_support
    model = capabilities_of(mechanism).report_model
    if model == "categorical":
        outputs = _outputs(mechanism)
        return None if outputs is None else (lambda reports: _categorical(reports, outputs))
    domain = getattr(mechanism, "domain_size", None)
    if model == "bits" and isinstance(domain, int):
        return lambda reports: _packed(reports, domain)
    g = getattr(mechanism, "g", None)
    if model == "hashed" and isinstance(g, int):
        return lambda reports: _hashed(reports, g)
    return None


def _outputs(mechanism: Any) -> int | None:
    if isinstance(mechanism, HasReportCount):
        return int(mechanism.report_count())
    try:
        return int(np.shape(mechanism.report_probabilities(0))[0])
    except (TypeError, ValueError, MemoryError, AttributeError):
        return None


def _categorical(reports: Any, outputs: int) -> np.ndarray:
    """One integer a report, in [0, outputs); another layout is not this model's (all in)."""
    array = np.asarray(reports)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        return np.ones(np.shape(reports)[0] if np.ndim(reports) else 1, dtype=bool)
    return (array >= 0) & (array < outputs)


def _packed(reports: Any, domain: int) -> np.ndarray:
    """Unary reports (fields ``bits`` and ``domain_size``, as ``UnaryReports``): the
    domain the protocol's, ⌈k/8⌉ packed bytes a report, no bit set beyond bit k.  Other
    bit reports (Bloom filters, sketches, sampled buckets) have no derived check."""
    fields = getattr(reports, "_fields", ())
    n = len(reports[0]) if isinstance(reports, tuple) else len(reports)
    if fields[:2] != ("bits", "domain_size"):
        return np.ones(n, dtype=bool)
    bits, width = np.asarray(reports.bits), -(-domain // 8)
    if reports.domain_size != domain or bits.dtype != np.uint8 or bits.ndim != 2:
        return np.zeros(n, dtype=bool)
    if bits.shape[1] != width:
        return np.zeros(n, dtype=bool)
    padding = np.uint8((1 << (8 * width - domain)) - 1)
    return (bits[:, -1] & padding) == 0


def _hashed(reports: Any, g: int) -> np.ndarray:
    """Cells in [0, g)."""
    values = getattr(reports, "values", None)
    if values is None:
        return np.ones(len(reports[0]) if isinstance(reports, tuple) else len(reports), bool)
    values = np.asarray(values)
    return (values >= 0) & (values < g)
