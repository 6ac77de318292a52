"""The results store: atomic parts, checked on read; corrupt parts reported and excluded."""

from __future__ import annotations

import gzip
import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest

from experiments.store import CorruptPartWarning, ResultsStore, read_part


def rows(trials, key="abc") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "config_hash": key,
            "trial": np.repeat(list(trials), 2),
            "metric": ["f1", "ncr"] * len(list(trials)),
            "item": pd.array([None] * 2 * len(list(trials)), dtype="Int64"),
            "value": np.linspace(0, 1, 2 * len(list(trials))),
            "analytic": np.nan,
        }
    )


@pytest.mark.parametrize("fmt", ["csv.gz", "csv", "parquet"])
def test_parts_round_trip(tmp_path, fmt):
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        fmt = "csv.gz"  # parquet is optional
    store = ResultsStore(tmp_path, "exp", fmt)
    store.write_part("abc", range(0, 3), rows(range(0, 3)))
    store.write_part("abc", range(3, 5), rows(range(3, 5)))
    assert store.done_trials("abc") == set(range(5))
    table, corrupt = store.load()
    assert corrupt == [] and len(table) == 10
    assert (
        table["value"].tolist()
        == rows(range(0, 3))["value"].tolist() + rows(range(3, 5))["value"].tolist()
    )


def test_parts_are_readable_by_plain_pandas(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    path = store.write_part("abc", [0, 1], rows([0, 1]))
    assert len(pd.read_csv(path, comment="#")) == 4


def test_a_truncated_part_is_reported_by_name_and_excluded(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    store.write_part("abc", [0, 1], rows([0, 1]))
    bad = store.write_part("abc", [2, 3], rows([2, 3]))
    bad.write_bytes(bad.read_bytes()[: len(bad.read_bytes()) // 2])
    with pytest.warns(CorruptPartWarning, match=bad.name):
        table, corrupt = store.load()
    assert len(corrupt) == 1 and bad.name in corrupt[0]
    assert sorted(table["trial"].unique()) == [0, 1]


def test_a_tampered_part_fails_its_checksum(tmp_path):
    store = ResultsStore(tmp_path, "exp", "csv")
    path = store.write_part("abc", [0], rows([0]))
    path.write_text(path.read_text().replace("f1", "f2"))
    with pytest.raises(ValueError, match="checksum mismatch"):
        read_part(path)


def test_a_part_without_its_footer_is_corrupt(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    path = store.write_part("abc", [0], rows([0]))
    text = gzip.decompress(path.read_bytes()).decode()
    path.write_bytes(gzip.compress(text[: text.rindex("#ldp-end")].encode()))
    with pytest.raises(ValueError, match="no end-of-part footer"):
        read_part(path)


def test_resuming_moves_a_corrupt_part_aside_and_redoes_its_trials(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    store.write_part("abc", [0, 1], rows([0, 1]))
    bad = store.write_part("abc", [2, 3], rows([2, 3]))
    bad.write_bytes(b"\x1f\x8b garbage")
    with pytest.warns(CorruptPartWarning):
        assert store.done_trials("abc") == {0, 1}
    assert not bad.exists() and bad.with_name(bad.name + ".corrupt").exists()


def test_compaction_merges_contiguous_parts_and_drops_subsumed_ones(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    for first in range(0, 6, 2):
        store.write_part("abc", [first, first + 1], rows([first, first + 1]))
    store.write_part("abc", [9], rows([9]))
    before, _ = store.load()
    store.compact("abc")
    assert [(p.first, p.last) for p in store.parts("abc")] == [(0, 5), (9, 9)]
    after, _ = store.load()
    pd.testing.assert_frame_equal(before, after)
    store.write_part("abc", [2, 3], rows([2, 3]))  # as left by an interrupted compaction
    store.compact("abc")
    assert [(p.first, p.last) for p in store.parts("abc")] == [(0, 5), (9, 9)]


def test_temporary_files_are_ignored(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    store.write_part("abc", [0], rows([0]))
    (store.parts_dir / "abc" / ".000001-000001.csv.gz.123.tmp").write_bytes(b"half")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.done_trials("abc") == {0}


def test_a_part_must_hold_contiguous_trials(tmp_path):
    with pytest.raises(ValueError, match="contiguous"):
        ResultsStore(tmp_path, "exp").write_part("abc", [0, 2], rows([0, 2]))
