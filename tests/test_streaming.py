"""The streaming reports engine (:mod:`ldp.streaming`): exact against one batch, same law.

Every registered oracle that declares ``additive`` is checked, so a new or plug-in oracle
is checked too.  Statistical tolerances: a false-failure rate of 1e-4 per assertion.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ldp import registry, streaming
from ldp.contract import capabilities_of
from ldp.oracles import OLH
from ldp.streaming import repeat_in_chunks, stream_estimate, stream_histogram, users_in_chunks
from ldp.validation import ParameterError

ADDITIVE = [n for n, p in registry.protocols("oracle").items() if capabilities_of(p.cls).additive]
NOT_ADDITIVE = [
    n for n, p in registry.protocols("oracle").items() if not capabilities_of(p.cls).additive
]
ALPHA = 1e-4


def concatenate(parts: list) -> object:
    """One batch of reports from chunks: arrays joined, NamedTuple fields joined field by
    field (a field that is not an array, e.g. the unary encodings' d, is the same in all)."""
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    fields = zip(*parts, strict=True)
    return type(parts[0])(
        *(np.concatenate(f) if isinstance(f[0], np.ndarray) else f[0] for f in fields)
    )


def test_users_in_chunks_is_the_repeat_order() -> None:
    counts = np.array([3, 0, 5, 1, 0, 4])
    chunks = list(users_in_chunks(counts, 4))
    assert [c.shape[0] for c in chunks] == [4, 4, 4, 1]
    np.testing.assert_array_equal(np.concatenate(chunks), np.repeat(np.arange(6), counts))


@pytest.mark.parametrize("name", ADDITIVE)
def test_stream_equals_one_batch_exactly(name: str) -> None:
    """Chunks of 37 users, each perturbed with the same generator in turn: the streamed
    estimate is bit for bit ``estimate`` of all the chunks' reports joined."""
    oracle = registry.get(name).cls(epsilon=1.5, domain_size=12)
    counts = np.array([50, 0, 31, 7, 0, 0, 12, 3, 1, 0, 9, 2])
    candidates = np.array([0, 2, 5, 11])
    streamed = stream_histogram(
        oracle, counts, np.random.default_rng(5), candidates=candidates, chunk_users=37
    )
    rng = np.random.default_rng(5)
    batch = [oracle.perturb(chunk, rng) for chunk in users_in_chunks(counts, 37)]
    np.testing.assert_array_equal(
        streamed, oracle.estimate(concatenate(batch), candidates=candidates)
    )
    full = stream_histogram(oracle, counts, np.random.default_rng(1), chunk_users=40)
    assert full.shape == (12,)


@pytest.mark.parametrize("name", NOT_ADDITIVE[:1])
def test_refuses_an_oracle_that_is_not_additive(name: str) -> None:
    oracle = registry.get(name).cls(epsilon=1.0, domain_size=8)
    with pytest.raises(ParameterError, match="additive"):
        stream_estimate(oracle, [np.zeros(3, dtype=np.int64)], np.random.default_rng(0))


def test_bad_chunk_size() -> None:
    with pytest.raises(ParameterError, match="chunk_users"):
        list(users_in_chunks(np.array([1, 2]), 0))


def test_streamed_olh_has_the_reports_law() -> None:
    """300 runs of OLH over 3,000 users streamed in chunks of 700 (so the generator is
    consumed unlike one batch): each value's standardised error (ĉ - c)/sd has mean 0
    (z-test) and variance 1 (chi-square on 300 degrees of freedom), sd from the exact
    closed form; Bonferroni over the 6 values."""
    oracle = OLH(epsilon=1.0, domain_size=6)
    counts = np.array([1500, 800, 400, 200, 100, 0])
    rng = np.random.default_rng(2024)
    runs = 300
    errors = np.array(
        [stream_histogram(oracle, counts, rng, chunk_users=700) - counts for _ in range(runs)]
    )
    sd = np.sqrt([oracle.variance(int(counts.sum()), int(c)) for c in counts])
    z = errors / sd
    level = ALPHA / (2 * counts.shape[0])
    assert np.all(np.abs(z.mean(axis=0)) * np.sqrt(runs) < stats.norm.isf(level))
    squares = (z**2).sum(axis=0)
    assert np.all(squares > stats.chi2.ppf(level, runs))
    assert np.all(squares < stats.chi2.isf(level, runs))


def test_repeat_in_chunks_is_np_repeat() -> None:
    items = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.uint64)  # word rows too
    times = np.array([4, 0, 3])
    pieces = list(repeat_in_chunks(items, times, 3))
    assert [p.shape[0] for p in pieces] == [3, 3, 1]
    np.testing.assert_array_equal(np.concatenate(pieces), np.repeat(items, times, axis=0))
    assert [p.shape[0] for p in repeat_in_chunks(items, times, 7)] == [7]
    assert list(repeat_in_chunks(items[:0], times[:0], 3))[0].shape[0] == 0


@pytest.mark.parametrize("name", ["HR", "HM", "BHR", "RHR"])
def test_chunked_hadamard_engines_keep_their_law(name: str, monkeypatch) -> None:
    """The Hadamard family's sampled engines with their light users drawn 5 at a time
    (the numpy path): each value's standardised error has mean 0 and variance 1 against
    the exact ``variances`` (z and chi-square tests, 200 runs, Bonferroni over the 8
    values)."""
    from ldp.oracles import hadamard_sampling

    monkeypatch.setattr(streaming, "CHUNK_USERS", 5)
    monkeypatch.setattr(hadamard_sampling, "HAVE_NUMBA", False)
    oracle = registry.get(name).cls(epsilon=2.0, domain_size=8)
    counts = np.array([40, 25, 0, 13, 9, 0, 2, 1])
    rng = np.random.default_rng(11)
    runs = 200
    errors = np.array([oracle.simulate(counts, rng) - counts for _ in range(runs)])
    z = errors / np.sqrt(oracle.variances(counts))
    level = ALPHA / (2 * counts.shape[0])
    assert np.all(np.abs(z.mean(axis=0)) * np.sqrt(runs) < stats.norm.isf(level))
    squares = (z**2).sum(axis=0)
    assert np.all((squares > stats.chi2.ppf(level, runs)) & (squares < stats.chi2.isf(level, runs)))


def test_chunked_flh_engine_keeps_its_law(monkeypatch) -> None:
    """FLH's sampled engine with light users 5 at a time and heavy values 2 at a time
    (k' = 4): standardised errors against ``variances`` (its exact variance
    with the pool's shared collisions) have mean 0 and variance 1."""
    from ldp.oracles import flh

    monkeypatch.setattr(streaming, "CHUNK_USERS", 5)
    monkeypatch.setattr(flh, "CHUNK_USERS", 8)
    monkeypatch.setattr(flh.hashing, "HAVE_NUMBA", False)  # the chunked numpy path
    monkeypatch.setattr(flh, "HEAVY", 1)  # heavy from k' = 4 kept users
    oracle = flh.FLH(epsilon=2.0, domain_size=8, k_prime=4)
    counts = np.array([40, 25, 0, 13, 9, 0, 2, 1])
    rng = np.random.default_rng(12)
    runs = 300
    errors = np.array([oracle.simulate(counts, rng) - counts for _ in range(runs)])
    sd = np.sqrt(oracle.variances(counts))
    z = errors / sd
    level = ALPHA / (2 * counts.shape[0])
    assert np.all(np.abs(z.mean(axis=0)) * np.sqrt(runs) < stats.norm.isf(level))
    squares = (z**2).sum(axis=0)
    assert np.all((squares > stats.chi2.ppf(level, runs)) & (squares < stats.chi2.isf(level, runs)))
