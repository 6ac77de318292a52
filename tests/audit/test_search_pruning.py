"""The search scores only the sets that could be chosen, and chooses as if it scored all.

:meth:`ldp.audit.events.FeatureSearch._scored` scores candidate sets in batches, highest
training log ratio first, and stops once no remaining log ratio (an upper bound of a set's
projected bound) reaches the best bounds :func:`~ldp.audit.events.choose` reads.  Here the
same training reports are searched with batches so large that every set is scored, and
with small ones: the candidates that matter, the chosen event and its size must be equal,
and the small batches must have skipped sets (else the test shows nothing).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldp.audit import events
from ldp.oracles import OUE, SHE


@pytest.mark.parametrize(
    "protocol", [SHE(epsilon=1.0, domain_size=96), OUE(epsilon=2.0, domain_size=300)], ids=repr
)
def test_pruned_scoring_chooses_what_full_scoring_chooses(protocol, monkeypatch):
    rng = np.random.default_rng(5)
    first = protocol.perturb(np.zeros(6000, dtype=np.int64), rng)
    other = protocol.perturb(np.ones(6000, dtype=np.int64), rng)
    sizes = [6000, 12000, 24000]
    search = events.FeatureSearch(level=1e-3)

    def searched(batch: int):
        monkeypatch.setattr(events, "SCORE_BATCH", batch)
        found = search.candidates(first, other, sizes)
        event, size = events.choose(search, found, sizes, 1.0, first, other)
        return found, event, size

    everything, event, size = searched(10**9)
    pruned, pruned_event, pruned_size = searched(64)
    assert len(pruned) < len(everything)  # sets were skipped
    assert (pruned_event.name, pruned_size) == (event.name, size)
    for index in range(len(sizes)):
        best = sorted((c.scores[index] for c in everything), reverse=True)[: events.CHOICE_DEPTH]
        kept = sorted((c.scores[index] for c in pruned), reverse=True)[: events.CHOICE_DEPTH]
        np.testing.assert_array_equal(kept, best)


def test_bit_counts_from_byte_histograms_are_the_bits_counted_one_by_one():
    """The counts of a word's 64 bit columns (from its bytes' histograms) against each bit
    read and counted alone, for floats, signed and unsigned integers of every width."""
    rng = np.random.default_rng(11)
    fields = (
        rng.laplace(size=(500, 3)),
        rng.integers(-(2**62), 2**62, size=500),
        rng.integers(0, 2**31, size=(500, 2)).astype(np.int32),
        rng.integers(0, 2**16, size=500).astype(np.uint16),
    )
    for part in fields:
        chunk = [c for c in events.report_columns(part) if c.kind == "bit"]
        counted = events._flag_counts(chunk, part)
        alone = [int(np.count_nonzero(column(part))) for column in chunk]
        assert counted.tolist() == alone
        assert 0 < counted.sum() < 500 * len(chunk)
