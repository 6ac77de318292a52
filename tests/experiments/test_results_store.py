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


# ----------------------------------------------- a part's rows must match its name (issue 9)
def test_a_part_copied_over_another_settings_part_is_corrupt(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    mine = store.write_part("aaa", range(0, 10), rows(range(0, 10), key="aaa"))
    theirs = store.write_part("bbb", range(0, 10), rows(range(0, 10), key="bbb"))
    theirs.write_bytes(mine.read_bytes())
    with pytest.warns(CorruptPartWarning, match="rows of setting aaa, not bbb"):
        assert store.done_trials("bbb") == set()
    assert store.done_trials("aaa") == set(range(10))


def test_a_part_renamed_to_cover_more_trials_is_corrupt(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    path = store.write_part("abc", range(0, 5), rows(range(0, 5)))
    path.rename(path.with_name("000000-000009.csv.gz"))
    with pytest.warns(CorruptPartWarning, match="trials 0-4, its name says 0-9"):
        table, corrupt = store.load()
    assert table.empty and len(corrupt) == 1
    assert store.done_trials("abc") == set()  # reported once per file, then redone


def test_a_rerun_redoes_the_trials_of_a_part_with_foreign_rows(settings_of, results_dir):
    from experiments.run import run_settings

    from .conftest import TINY

    first = settings_of("protocol=grr", *TINY, "n_trials=4", "n_jobs=1", "name=exp")
    second = settings_of("protocol=oue", *TINY, "n_trials=4", "n_jobs=1", "name=exp")
    run_settings(first)
    run_settings(second)
    store = ResultsStore(results_dir, "exp")
    (a,), (b,) = store.parts(first[0].key), store.parts(second[0].key)
    b.path.write_bytes(a.path.read_bytes())
    with pytest.warns(CorruptPartWarning):
        report, _ = run_settings(second)
    assert (report.done_before, report.ran) == (0, 4)
    table, corrupt = store.load()
    assert not corrupt and set(table["protocol.name"]) == {"GRR", "OUE"}


# ------------------------------------------------------------- sharing a results directory
def test_a_second_run_waits_for_the_lock_and_then_finds_the_trials_done(tmp_path, capsys):
    import fcntl
    import os
    import threading
    import time

    store = ResultsStore(tmp_path, "exp")
    with store.locked(["abc"]) as writable:
        assert writable
        entered = threading.Event()

        def other() -> None:
            with ResultsStore(tmp_path, "exp").locked(["abc"]):
                entered.set()

        thread = threading.Thread(target=other)
        thread.start()
        said, deadline = "", time.monotonic() + 60
        while "another run is writing setting abc" not in said:  # it is waiting now
            assert time.monotonic() < deadline, "the other run never said it waits"
            said += capsys.readouterr().err
            time.sleep(0.01)
        assert not entered.is_set()  # the lock is held: the other run waits
        store.write_part("abc", [0], rows([0]))
    thread.join(60)
    assert entered.is_set()
    handle = os.open(store.directory / "locks" / "abc.lock", os.O_RDWR)
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on exit
    os.close(handle)


def test_stale_temporaries_of_a_killed_run_are_removed_under_the_lock(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    store.write_part("abc", [0], rows([0]))
    stale = store.parts_dir / "abc" / ".000001-000001.csv.gz.99999.0badcafe.tmp"
    stale.write_bytes(b"half")
    with store.locked(["abc"]):
        assert store.remove_stale_temporaries("abc") == 1
    assert not stale.exists() and store.done_trials("abc") == {0}


def test_a_read_only_results_dir_fails_before_any_trial(settings_of, results_dir, monkeypatch):
    import errno

    from experiments import execute as execute_module
    from experiments import store as store_module
    from experiments.run import run_settings
    from experiments.store import ResultsDirError

    from .conftest import TINY

    settings = settings_of("protocol=grr", *TINY, "n_trials=3", "n_jobs=1", "name=exp")
    run_settings(settings)
    table = ResultsStore(results_dir, "exp").directory / "table.csv.gz"
    stamp = table.stat().st_mtime_ns

    def refuse(path, data):
        raise PermissionError(errno.EROFS, "Read-only file system", str(path))

    calls = []
    monkeypatch.setattr(store_module, "atomic_write_bytes", refuse)
    monkeypatch.setattr(execute_module, "run_trial", lambda *a: calls.append(a))
    report, _ = run_settings(settings)  # a no-op rerun writes nothing
    assert report.ran == 0 and table.stat().st_mtime_ns == stamp
    more = settings_of("protocol=grr", *TINY, "n_trials=5", "n_jobs=1", "name=exp")
    with pytest.raises(ResultsDirError, match="results_dir: cannot write to .*2 trials"):
        run_settings(more)
    assert calls == []


def test_rows_written_without_pandas_read_back_as_pandas_writes_them(tmp_path):
    from experiments.store import Rows

    columns = ("config_hash", "trial", "metric", "item", "value", "analytic", "label", "flag")
    values = [
        ("abc", 0, "f1", None, 0.1, float("nan"), 'a "quoted", label', True),
        ("abc", 0, "sq", 3, 1e-300, 2.5, "plain", False),
        ("abc", 1, "f1", None, 1.0, -0.0, "", True),
        ("abc", 1, "sq", 12, np.float64(123456789.123), np.float64("nan"), "x\ny", False),
    ]
    rows = Rows(columns, values)
    fast, slow = ResultsStore(tmp_path / "fast", "exp"), ResultsStore(tmp_path / "slow", "exp")
    fast.write_part("abc", [0, 1], rows)
    slow.write_part("abc", [0, 1], rows.to_frame())
    pd.testing.assert_frame_equal(fast.load()[0], slow.load()[0])


def test_compaction_without_parsing_keeps_every_row(tmp_path):
    store = ResultsStore(tmp_path, "exp")
    for first in range(0, 6, 2):
        store.write_part("abc", [first, first + 1], rows([first, first + 1]))
    before, _ = store.load()
    store.compact("abc")
    (part,) = store.parts("abc")
    assert (part.first, part.last) == (0, 5)
    pd.testing.assert_frame_equal(store.load()[0], before)
    assert len(pd.read_csv(part.path, comment="#")) == 12


@pytest.mark.parametrize(
    "key",
    ["9452459e63517589", "0123456789012345", "1234567890123456"],
    ids=["reads-as-inf", "leading-zero", "all-digits"],
)
def test_setting_keys_that_look_like_numbers_stay_text(tmp_path, key):
    """A hex key of digits and one 'e' is a float to pandas (9452459e63517589 = inf), one of
    digits an integer (losing a leading zero): about one setting in a thousand. Its part
    must still be read as its own, not reported corrupt and rerun forever."""
    store = ResultsStore(tmp_path, "exp")
    store.write_part(key, [0, 1], rows([0, 1], key=key))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptPartWarning)
        table, corrupt = store.load()
    assert corrupt == [] and store.done_trials(key) == {0, 1}
    assert table["config_hash"].tolist() == [key] * 4


def test_jobs_probing_one_directory_at_once_all_find_it_writable(tmp_path):
    """The jobs of one sweep hold different settings' locks but probe the same directory;
    with one shared probe name, one job's unlink removed another's file (ENOENT)."""
    from concurrent.futures import ThreadPoolExecutor

    stores = [ResultsStore(tmp_path, "exp") for _ in range(8)]
    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(lambda i: stores[i % 8]._probe(), range(4000)))
    assert all(found)
    assert [p.name for p in stores[0].directory.iterdir() if p.name.startswith(".probe")] == []


@pytest.mark.parametrize("chunk", [None, 1, 900])  # bytes a parse holds: default, 1 part, ~2
def test_parts_parsed_a_header_at_a_time_give_the_table_read_part_by_part(
    tmp_path, monkeypatch, chunk
):
    """``load`` parses the parts of sound settings together, one read_csv per header; the
    table must be the one reading every part alone gives, dtypes included: another
    header, a text column empty in some parts (float there, so object when joined) or a
    number in one (an int there), overlapping parts and a part holding another setting's
    rows (read alone, reported)."""
    from experiments import store as store_module

    if chunk is not None:
        monkeypatch.setattr(store_module, "TOGETHER_BYTES", chunk)
    store = ResultsStore(tmp_path, "exp")
    for key in ["k0", "k1", "k2", "k3"]:
        frame = rows(range(0, 3), key=key)
        frame["form"] = {"k1": None, "k2": "7"}.get(key, "left")  # none in k1; k2's a number
        if key == "k3":
            frame["extra"] = 1.5  # another header
        store.write_part(key, range(0, 3), frame)
    store.write_part("k0", range(3, 5), rows(range(3, 5), key="k0").assign(form="right"))
    store.write_part("k0", range(2, 6), rows(range(2, 6), key="k0").assign(form="right"))
    mine = store.write_part("k4", range(0, 2), rows(range(0, 2), key="k4"))
    store.write_part("k5", range(0, 2), rows(range(0, 2), key="k5")).write_bytes(mine.read_bytes())
    with pytest.warns(CorruptPartWarning, match="rows of setting k4, not k5"):
        together, corrupt = store.load()
    monkeypatch.setattr(ResultsStore, "_load_together", lambda self, keys: {})
    store = ResultsStore(tmp_path, "exp")
    with pytest.warns(CorruptPartWarning, match="rows of setting k4, not k5"):
        alone, corrupt_alone = store.load()
    pd.testing.assert_frame_equal(together, alone, check_dtype=True)
    assert corrupt == corrupt_alone and len(corrupt) == 1
    assert together["form"].dtype == object and together["extra"].notna().sum() == 6
