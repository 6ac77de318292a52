"""A heavy hitter's whole client as one mechanism the auditor can run.

A heavy hitter's users each pick a group and send one or more frequency-oracle reports
(a prefix, a segment pair, a puzzle key, and π(v) when the budget is split).  Its privacy
is that of everything one user sends, taken together: ε-LDP needs the group choice to be
independent of the value, the reports of a split budget to compose to ε, and nothing
else on the wire to depend on the value.  Auditing the oracles alone checks none of that.

:class:`WholeClient` wraps a protocol whose ``perturb(values, rng)`` returns
:class:`~ldp.heavy_hitters.base.ClientReports` and presents each user's whole output as
one report: a row of bytes, the group first, then every part's report where the user
sends it (:meth:`~ldp.heavy_hitters.base.ClientReports.per_user`).  The auditor's search
then reads every byte and bit of it and the row as one symbol (whole-report events).  The
public randomness a run draws once (a short hash, a channel hash) is not in the rows: it
is public, and each call draws it afresh (``public_per_call``), so the audit conditions
on it and averages over it.

>>> import numpy as np
>>> from ldp import audit
>>> from ldp.audit.clients import WholeClient
>>> from ldp.heavy_hitters import PEM
>>> client = WholeClient(PEM(epsilon=1.0, k=4, m=8))
>>> found = audit.lower_bound(client, 0, 255, rng=np.random.default_rng(0), trials=20_000)
>>> found.epsilon <= 1.0
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ldp.contract import Capabilities
from ldp.heavy_hitters.base import ClientReports, UserRows
from ldp.validation import ParameterError

__all__ = ["WholeClient"]

#: The widest values the wrapper feeds (the data sets' integer representation).
MAX_BITS = 64


@dataclass(frozen=True)
class WholeClient:
    """``protocol``'s client as one report per user (module docstring), for
    :func:`ldp.audit.lower_bound`; its claim is the protocol's ε."""

    protocol: Any
    #: each call draws its public hashes afresh: the audit samples across calls
    capabilities: ClassVar[Capabilities] = Capabilities(public_per_call=True)

    def __post_init__(self) -> None:
        m = getattr(self.protocol, "m", None)
        if not callable(getattr(self.protocol, "perturb", None)) or not isinstance(m, int):
            raise ParameterError(
                "protocol", self.protocol, "a heavy hitter (perturb(values, rng) and m bits)"
            )
        if m > MAX_BITS:
            raise ParameterError("protocol", self.protocol, f"m <= {MAX_BITS} bits to audit")

    @property
    def epsilon(self) -> float:
        return float(self.protocol.epsilon)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> UserRows:
        """Every user's whole output, one row of bytes each."""
        words = np.asarray(values).astype(np.uint64)
        reports = self.protocol.perturb(words, rng)
        if not isinstance(reports, ClientReports):
            raise TypeError(
                f"{type(self.protocol).__name__}.perturb must return ClientReports, got "
                f"{type(reports).__name__}"
            )
        return reports.per_user()

    def in_support(self, reports: UserRows) -> np.ndarray:
        """Per user: a group that sends something, and zeros in every block its group does
        not send (:class:`~ldp.heavy_hitters.base.UserRows`); a row of another width is
        outside."""
        rows = np.asarray(reports.rows)
        if rows.ndim != 2 or rows.shape[1] != 8 + sum(reports.widths):
            return np.zeros(rows.shape[0] if rows.ndim else 1, dtype=bool)
        groups = np.ascontiguousarray(rows[:, :8]).view("<i8")[:, 0]
        inside = np.isin(groups, reports.groups)
        start = 8
        for width, senders in zip(reports.widths, reports.senders, strict=True):
            if senders is not None:
                silent = ~np.isin(groups, senders)
                inside &= ~(silent & rows[:, start : start + width].any(axis=1))
            start += width
        return inside
