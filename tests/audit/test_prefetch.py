"""The fresh sample's first batches are drawn in a thread while the search runs
(:class:`ldp.audit.auditor._Prefetch`): the audit's results are those of drawing them
after the search, exactly.

Checked on an oracle drawn in batches of 65,536 and one drawn in many small calls (public
randomness per call), and on the sampler: the batches drawn after the prefetched ones are
those the evaluation's loop draws there.  The check's power: a
prefetch that drew one batch of another size (a stream out of step) changes the results.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp.audit import auditor, lower_bound
from ldp.oracles import FLH, SHE


class NoPrefetch:
    """Draws nothing: the evaluation loop draws every batch itself, after the search."""

    def __init__(self, sampler, rest, max_bytes) -> None:
        pass

    def result(self):
        return []

    def cancel(self) -> None:
        pass


class OutOfStep(auditor._Prefetch):
    """Draws one batch of another size first: the stream is no longer the loop's."""

    def _run(self, sampler, full, max_bytes) -> None:
        sampler.call(7, 7)
        super()._run(sampler, full, max_bytes)


def _audits():
    mechanisms = [
        (SHE(epsilon=1.0, domain_size=32), 160_000),
        (FLH(epsilon=1.0, domain_size=8), 20_000),
    ]
    out = []
    for mechanism, trials in mechanisms:
        found = lower_bound(mechanism, 0, 1, rng=np.random.default_rng(8), trials=trials)
        out.append((found.epsilon, found.evaluation, [e.count for e in found.events]))
    return out


@pytest.fixture(scope="module")
def prefetched():
    return _audits()


def test_prefetching_changes_no_result(prefetched, monkeypatch) -> None:
    monkeypatch.setattr(auditor, "_Prefetch", NoPrefetch)
    assert _audits() == prefetched


def test_the_batches_after_a_prefetch_are_the_loops_own() -> None:
    """A draw from the k-th batch on gives the batches a draw from 0 gives after k of them
    (sizes and reports), also when the total is no multiple of the batch."""
    flh = FLH(epsilon=1.0, domain_size=8)
    whole = auditor._Sampler(flh, 0, 1, np.random.default_rng(2))
    split = auditor._Sampler(flh, 0, 1, np.random.default_rng(2))
    n, batch = 5 * auditor.PER_CALL + 17, auditor.PER_CALL
    first = list(whole.draw(n))
    second = list(split.draw(3 * batch)) + list(split.draw(n, start=3 * batch))
    assert [len(a.values) for a, _ in first] == [len(a.values) for a, _ in second]
    assert len(first) == 6 and len(first[-1][0].values) == 17
    for (a, b), (c, d) in zip(first, second, strict=True):
        assert np.array_equal(a.values, c.values) and np.array_equal(b.seeds, d.seeds)


def test_a_prefetch_out_of_step_would_show(prefetched, monkeypatch) -> None:
    monkeypatch.setattr(auditor, "_Prefetch", OutOfStep)
    assert _audits() != prefetched
