"""The auditor on heavy hitters' whole clients (:class:`ldp.audit.clients.WholeClient`).

* Every registered heavy hitter, honest, at ε = 1 and m = 8: the audit's bound stays at or
  below ε (a false alarm has probability at most α = 0.01 per audit; six audits).
* Leaks of the whole client that no oracle's own audit sees, each planted into a real
  protocol and caught at the default trials: the group chosen from the value (a cohort
  derived from v, the leak class of "value-derived cohorts"), and a part whose report
  carries the value's low bit in a field of its own, and bytes in a block the user's group
  does not send (outside the rows' support: an unbounded loss).
* The rows' support (:meth:`WholeClient.in_support`): every honest row inside, a row with
  an unknown group or a stray block outside.
* The rows: one per user, the group first, then every part's bytes where the user sends it
  (checked against the protocol's own parts, split and partitioned).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp import audit, bits, registry
from ldp.audit import plant
from ldp.audit.clients import WholeClient
from ldp.heavy_hitters import PEM, SFP, SPM, TreeHist
from ldp.heavy_hitters.base import ClientReports, report_bytes
from ldp.validation import ParameterError

HEAVY_HITTERS = sorted(registry.protocols("heavy_hitter"))
M = 8
V, V_PRIME = 0, 2**M - 1


@pytest.mark.parametrize("name", HEAVY_HITTERS)
def test_honest_clients_stay_within_their_claim(name):
    protocol = registry.get(name, "heavy_hitter").cls(epsilon=1.0, k=4, m=M)
    found = audit.lower_bound(
        WholeClient(protocol), V, V_PRIME, rng=np.random.default_rng(3), trials=40_000
    )
    assert found.epsilon <= protocol.epsilon, (name, found.epsilon)


class CohortPEM(PEM):
    """PEM whose users with an odd value all join group 0: the cohort leaks the value."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        odd = (np.asarray(values) & np.uint64(1)).astype(bool)
        groups = np.where(odd, 0, reports.groups)
        # re-send every part for the groups as changed (the oracles are honest)
        parts = tuple(
            self.step_oracle(i).perturb(
                bits.prefix(np.asarray(values)[groups == i], self.m, ell), rng
            )
            for i, ell in enumerate(self.config.lengths)
        )
        return ClientReports(groups, parts)


class TaggedSPM(SPM):
    """SPM whose π(v) reports carry one more per-report field: the value's low bit."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        users = reports.users_of(None)
        low = (np.asarray(values)[users] & np.uint64(1)).astype(np.uint8)
        value = (*reports.value, low)
        return ClientReports(
            reports.groups, reports.parts, value, reports.public, reports.senders,
            reports.value_senders,
        )  # fmt: skip


class ChattyTreeHist(TreeHist):
    """TreeHist whose users of group 0 holding an odd value, once in 1,000, also fill the
    block of the next level's report (which group 0 does not send) with a copy of theirs."""

    def perturb(self, values, rng):
        reports = super().perturb(values, rng)
        self._odd = (np.asarray(values) & np.uint64(1)).astype(bool)
        self._rng = rng
        return reports


class ChattyClient(WholeClient):
    """The whole client of :class:`ChattyTreeHist`, its rows altered as the leak says."""

    def perturb(self, values, rng):
        rows = super().perturb(values, rng)
        width = rows.widths[0]
        users = np.flatnonzero(
            (rows.rows[:, :8].copy().view(np.int64)[:, 0] == 0)
            & self.protocol._odd
            & (rng.random(rows.rows.shape[0]) < 1e-3)
        )
        out = rows.rows.copy()
        out[users, 8 + width : 8 + 2 * width] = out[users, 8 : 8 + width]
        return rows._replace(rows=out)


@pytest.mark.parametrize("name", HEAVY_HITTERS)
def test_honest_rows_lie_in_their_support_and_altered_ones_do_not(name):
    """Every honest row is inside (a group that sends, zeros where it sends nothing); a
    row with a group no block names, or with bytes in a block its group does not send, is
    outside."""
    client = WholeClient(registry.get(name, "heavy_hitter").cls(epsilon=1.0, k=4, m=M))
    rows = client.perturb(np.arange(3000) % 2**M, np.random.default_rng(2))
    assert client.in_support(rows).all()
    stray = rows.rows.copy()
    stray[:3, :8] = np.array([max(rows.groups) + 1], dtype="<i8").view(np.uint8)
    assert not client.in_support(rows._replace(rows=stray))[:3].any()
    silent = [i for i, who in enumerate(rows.senders) if who is not None and len(who) == 1]
    if silent:
        block = 8 + sum(rows.widths[: silent[0]])
        outsider = np.flatnonzero(
            ~np.isin(rows.rows[:, :8].copy().view(np.int64)[:, 0], rows.senders[silent[0]])
        )
        if outsider.size:
            filled = rows.rows.copy()
            filled[outsider[:2], block] = 1
            assert not client.in_support(rows._replace(rows=filled))[outsider[:2]].any()


@pytest.mark.parametrize(
    "leaky",
    [
        CohortPEM(epsilon=1.0, k=4, m=M, etas=(2, 2), gamma=4),
        TaggedSPM(epsilon=1.0, k=4, m=M, variant="improved"),
        ChattyClient(ChattyTreeHist(epsilon=1.0, k=4, m=M)),
    ],
    ids=["value-derived cohort", "value bit beside pi(v)", "a block its group does not send"],
)
def test_whole_client_leaks_are_caught(leaky):
    client = leaky if isinstance(leaky, WholeClient) else WholeClient(leaky)
    found = audit.lower_bound(client, 1, 0, rng=np.random.default_rng(5))
    assert found.epsilon > leaky.epsilon, found.epsilon


@pytest.mark.parametrize("variant", ["improved", "partitioned"])
def test_rows_hold_each_users_group_and_parts(variant):
    protocol = SFP(epsilon=2.0, k=4, m=16, hash_bits=4, segment_bits=4, variant=variant)
    values = np.random.default_rng(0).integers(0, 2**16, size=500).astype(np.uint64)
    reports = protocol.perturb(values, np.random.default_rng(1))
    rows = reports.per_user().rows
    assert rows.shape[0] == 500
    assert np.array_equal(rows[:, :8].copy().view(np.int64).ravel(), reports.groups)
    start = 8
    for i, part in enumerate(reports.parts):
        users = reports.users_of(i)
        assert np.array_equal(np.unique(reports.groups[users]), [i + (variant == "partitioned")])
        raw = report_bytes(part, users.shape[0])
        block = rows[:, start : start + raw.shape[1]]
        assert np.array_equal(block[users], raw)
        assert not block[np.setdiff1d(np.arange(500), users)].any()
        start += raw.shape[1]
    value_users = reports.users_of(None)
    assert value_users.shape[0] == (500 if variant == "improved" else (reports.groups == 0).sum())
    assert rows.shape[1] == start + report_bytes(reports.value, value_users.shape[0]).shape[1]


def test_only_heavy_hitters_of_at_most_64_bits():
    with pytest.raises(ParameterError, match="protocol"):
        WholeClient(object())
    with pytest.raises(ParameterError, match="m <= 64"):
        WholeClient(PEM(epsilon=1.0, k=4, m=128))


@pytest.mark.parametrize("leak", plant.LEAKS)
def test_every_leak_class_plants_into_a_whole_client(leak):
    """The power table's leaks alter a whole client's rows and keep its layout (per-call
    fields, such as the blocks' senders, are not per-report arrays)."""
    client = WholeClient(TreeHist(epsilon=1.0, k=4, m=M))
    planted = plant.Planted(client, leak, 1.0, V, V_PRIME)
    values = np.full(40, V, dtype=np.int64)
    rows = planted.perturb(values, np.random.default_rng(4))
    honest = client.perturb(values, np.random.default_rng(4))
    assert rows.widths == honest.widths and rows.senders == honest.senders
    assert rows.rows.shape == honest.rows.shape and not np.array_equal(rows.rows, honest.rows)
