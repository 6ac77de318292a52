"""``lookup`` and ``has_duplicates`` on word rows: the digest path gives what comparing
the rows' bytes gives, and falls back to the bytes when digests collide."""

from __future__ import annotations

import numpy as np
import pytest

from ldp import bits, registry
from ldp.oracles import base


def _by_bytes(keys, counts, queries):
    """The reference: a Python dict of the rows' bytes."""
    table = {row.tobytes(): int(c) for row, c in zip(keys, counts, strict=True)}
    return np.array([table.get(row.tobytes(), 0) for row in queries], dtype=np.int64)


def _rows(rng, n, width):
    return rng.integers(0, 2**64, size=(n, width), dtype=np.uint64, endpoint=False)


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("width", [1, 2, 3])
def test_lookup_of_word_rows_is_the_lookup_of_their_bytes(monkeypatch, collide, width):
    rng = np.random.default_rng(width)
    keys = _rows(rng, 500, width)
    keys[:, 0] &= np.uint64(7)  # rows that differ in their later words only
    keys = np.unique(keys, axis=0)
    counts = rng.integers(1, 100, size=keys.shape[0])
    queries = np.concatenate([keys[rng.permutation(keys.shape[0])[:200]], _rows(rng, 50, width)])
    if collide:  # every digest equal: the rows' bytes decide
        monkeypatch.setattr(base, "row_hashes", lambda rows: np.zeros(len(rows), np.uint64))
    assert np.array_equal(base.lookup(keys, counts, queries), _by_bytes(keys, counts, queries))
    assert not base.has_duplicates(keys)
    assert base.has_duplicates(np.concatenate([keys, keys[3:4]]))


def test_a_digest_hit_is_confirmed_on_the_row():
    """A query whose digest equals a key's but whose row differs counts 0."""
    keys = np.array([[1, 2], [3, 4]], dtype=np.uint64)
    queries = np.array([[1, 2], [1, 5]], dtype=np.uint64)
    digests = {(1, 2): 10, (3, 4): 20, (1, 5): 10}

    def fake(rows):
        return np.array([digests[tuple(int(w) for w in row)] for row in rows], np.uint64)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(base, "row_hashes", fake)
        assert base.lookup(keys, np.array([7, 9]), queries).tolist() == [7, 0]


def test_row_hashes_are_a_function_of_the_row():
    rng = np.random.default_rng(0)
    rows = _rows(rng, 1000, 3)
    again = np.ascontiguousarray(rows[::-1])[::-1]
    assert np.array_equal(bits.row_hashes(rows), bits.row_hashes(again))
    assert np.unique(bits.row_hashes(rows)).shape[0] == 1000


COUNTS_ONLY = [
    name
    for name, entry in registry.protocols("oracle").items()
    if entry.cls._simulate_population is base.FrequencyOracle._simulate_population
]


@pytest.mark.parametrize("name", COUNTS_ONLY)
def test_simulate_reads_the_dense_counts_as_the_sparse_lookup_would(name):
    """``simulate`` of a counts-only law skips the sparse histogram: the same draws as
    ``_simulate_population`` on it, for the whole domain and for chosen candidates (a
    slip such as passing every count instead of the candidates' fails here)."""
    oracle = registry.protocols("oracle")[name].cls(epsilon=1.0, domain_size=16)
    counts = np.random.default_rng(3).integers(0, 40, size=16)
    counts[[2, 7]] = 0
    held = np.flatnonzero(counts)
    for candidates in (None, np.array([7, 0, 12, 2])):
        chosen = np.arange(16) if candidates is None else candidates
        fast = oracle.simulate(counts, np.random.default_rng(9), candidates)
        slow = oracle._simulate_population(held, counts[held], chosen, np.random.default_rng(9))
        assert np.array_equal(fast, slow), (name, candidates)
