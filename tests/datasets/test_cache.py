"""The on-disk cache: hits, keys, atomic writes, corrupt entries rebuilt."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ldp.datasets import cache, load


def _builder(calls: list[int]):
    def build():
        calls.append(1)
        return np.array([3, 1], dtype=np.uint64), np.array([5, 2]), {"notes": ["x"]}

    return build


def test_hit_miss_and_keys(tmp_path: Path) -> None:
    calls: list[int] = []
    first = cache.cached_histogram("t", {"a": 1}, _builder(calls), directory=tmp_path)
    second = cache.cached_histogram("t", {"a": 1}, _builder(calls), directory=tmp_path)
    assert len(calls) == 1
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1])
    assert second[2] == {"notes": ["x"]}
    cache.cached_histogram("t", {"a": 2}, _builder(calls), directory=tmp_path)
    cache.cached_histogram("t", {"a": 1}, _builder(calls), enabled=False, directory=tmp_path)
    assert len(calls) == 3
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".npz", ".npz"]  # no temp files


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_corrupt_entry_detected_and_rebuilt(tmp_path: Path, damage: str) -> None:
    calls: list[int] = []
    cache.cached_histogram("t", {"a": 1}, _builder(calls), directory=tmp_path)
    path = cache.cache_path("t", {"a": 1}, tmp_path)
    raw = bytearray(path.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "flip":  # inside the stored values: only the checksum can tell
        start = raw.index(bytes(np.array([3, 1], dtype=np.uint64)))
        raw[start] ^= 0xFF
    else:
        raw = bytearray(b"not an npz file")
    path.write_bytes(bytes(raw))
    with pytest.warns(RuntimeWarning, match="unreadable"):
        values, counts, _ = cache.cached_histogram(
            "t", {"a": 1}, _builder(calls), directory=tmp_path
        )
    assert len(calls) == 2 and values.tolist() == [3, 1] and counts.tolist() == [5, 2]
    cache.cached_histogram("t", {"a": 1}, _builder(calls), directory=tmp_path)
    assert len(calls) == 2  # the rebuilt entry is good


def test_dataset_identical_from_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path))
    built = load("url", n=5000, top=2000, seed=1)
    assert len(list(tmp_path.glob("url-*.npz"))) == 1
    cached = load("url", n=5000, top=2000, seed=1)
    assert np.array_equal(built.values, cached.values) and built.params == cached.params
    assert cache.cache_dir() == tmp_path
    monkeypatch.delenv("LDP_CACHE_DIR")
    assert cache.cache_dir() == Path.cwd() / ".cache" / "datasets"
