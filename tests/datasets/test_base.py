"""The Dataset container: histogram order, top-k, true counts, validation."""

from __future__ import annotations

import numpy as np
import pytest

from ldp.datasets import Dataset


def _dataset(values: list[int], m: int = 8) -> Dataset:
    return Dataset(name="t", values=np.array(values, dtype=np.uint64), m=m, source="synthetic")


def test_histogram_sorted_by_count_then_value() -> None:
    data = _dataset([5, 3, 3, 9, 9, 1, 7, 7, 7])
    values, counts = data.histogram()
    assert values.tolist() == [7, 3, 9, 1, 5]
    assert counts.tolist() == [3, 2, 2, 1, 1]
    assert counts.dtype == np.int64 and counts.sum() == data.n == 9
    assert data.histogram()[0] is values  # cached
    assert data.n_distinct == 5


def test_top_k_with_counts_and_frequencies() -> None:
    data = _dataset([5, 3, 3, 9, 9, 1, 7, 7, 7])
    assert data.top_k(2).tolist() == [7, 3]
    top, counts = data.top_k(10, with_counts=True)
    assert top.tolist() == [7, 3, 9, 1, 5] and counts.tolist() == [3, 2, 2, 1, 1]
    assert data.counts_of(np.array([9, 4, 7, 255], dtype=np.uint64)).tolist() == [2, 0, 3, 0]
    assert np.allclose(data.frequencies(np.array([7], dtype=np.uint64)), [3 / 9])
    with pytest.raises(ValueError, match="k"):
        data.top_k(-1)


def test_bytes_values_and_text_format() -> None:
    values = np.array([b"b" * 9, b"a".ljust(9), b"b" * 9, b"ab".ljust(9)], dtype="S9")
    data = Dataset(name="t", values=values, m=72, source="surrogate", text=True)
    top, counts = data.top_k(3, with_counts=True)
    assert top.tolist() == [b"b" * 9, b"a".ljust(9), b"ab".ljust(9)]
    assert counts.tolist() == [2, 1, 1]
    assert data.counts_of(np.array([b"ab".ljust(9), b"z" * 9], dtype="S9")).tolist() == [1, 0]
    assert data.format(top[1]) == repr("a".ljust(9))
    with pytest.raises(TypeError, match="uint64"):
        Dataset(name="t", values=values.astype("S6"), m=48, source="surrogate")


def test_from_histogram_expands_and_shuffles() -> None:
    rng = np.random.default_rng(0)
    data = Dataset.from_histogram(
        np.array([4, 2, 8], dtype=np.uint64),
        np.array([3, 0, 5]),
        name="t",
        m=4,
        source="synthetic",
        params={"a": 1},
        rng=rng,
    )
    assert data.n == 8 and sorted(data.values.tolist()) == [4, 4, 4, 8, 8, 8, 8, 8]
    assert data.top_k(5).tolist() == [8, 4]
    fresh = _dataset(data.values.tolist(), m=4)
    assert np.array_equal(fresh.histogram()[0], data.histogram()[0])
    with pytest.raises(ValueError, match="distinct"):
        Dataset.from_histogram(
            np.array([1, 1], dtype=np.uint64), np.array([1, 2]), name="t", m=4, source="synthetic"
        )


def test_validation_and_read_only() -> None:
    with pytest.raises(TypeError, match="uint64"):
        Dataset(name="t", values=np.array([1, 2]), m=8, source="synthetic")
    with pytest.raises(ValueError, match="fit"):
        _dataset([256], m=8)
    with pytest.raises(TypeError, match="S20"):
        Dataset(name="t", values=np.array([b"a"], dtype="S4"), m=160, source="synthetic")
    with pytest.raises(ValueError, match="source"):
        Dataset(name="t", values=np.array([1], dtype=np.uint64), m=8, source="made-up")
    raw = np.array([1, 2], dtype=np.uint64)
    data = Dataset(name="t", values=raw, m=8, source="real:/x")
    with pytest.raises(ValueError):
        data.values[0] = 3
    raw[0] = 3  # the caller's array stays writeable
