"""Real-data loaders on small files written by the tests: formats, errors, notes, paths."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ldp import bits
from ldp.datasets import DataFallbackWarning, DataFileError, load

ALPHA = 1e-4


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _text(data, value) -> str:
    return bits.int_to_bytes(int(value), data.m // 8).decode() if data.m <= 64 else value.decode()


# ------------------------------------------------------------------------------ kosarak
def test_kosarak_first_and_random_rules(tmp_path: Path) -> None:
    path = _write(tmp_path / "k.dat", b"1 2 3\n1\n4 5 6 7\n\n1 8\r\n9 10\n")
    first = load("kosarak", path=path)
    assert first.source == f"real:{path.resolve()}" and first.n == 5
    first = load("kosarak", path=path, item_rule="first")
    assert sorted(first.values.tolist()) == [1, 1, 1, 4, 9]
    assert any("1 empty line" in note for note in first.notes)
    assert first.m == 32 and first.params["item_rule"] == "first"


def test_kosarak_random_rule_is_uniform_over_the_line(tmp_path: Path) -> None:
    """One 4-item transaction repeated: each item chosen with probability 1/4."""
    path = _write(tmp_path / "k.dat", b"10 20 30 40\n" * 4000)
    data = load("kosarak", path=path, seed=2, cache=False)
    counts = data.counts_of(np.array([10, 20, 30, 40], dtype=np.uint64))
    assert counts.sum() == 4000
    assert stats.chisquare(counts).pvalue > ALPHA
    again = load("kosarak", path=path, seed=2)
    assert np.array_equal(again.values, data.values)


def test_kosarak_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.dat", b"1 2\n3 x4\n5\n")
    with pytest.raises(DataFileError, match=r"bad\.dat, line 2"):
        load("kosarak", path=path)
    data = load("kosarak", path=path, on_bad_line="skip", item_rule="first")
    assert sorted(data.values.tolist()) == [1, 5]
    assert any("skipped 1 malformed" in note and "line 2" in note for note in data.notes)
    too_big = _write(tmp_path / "big.dat", b"1\n70000\n")
    with pytest.raises(DataFileError, match="line 2.*m=16"):
        load("kosarak", path=too_big, m=16)


def test_kosarak_wrong_encoding_empty_and_gzip(tmp_path: Path) -> None:
    latin = _write(tmp_path / "latin.dat", "1 2\n3 \xe9\n".encode("latin-1"))
    with pytest.raises(DataFileError, match="line 2"):
        load("kosarak", path=latin)
    empty = _write(tmp_path / "empty.dat", b"")
    with pytest.raises(DataFileError, match="empty.dat.*no transactions"):
        load("kosarak", path=empty)
    blank = _write(tmp_path / "blank.dat", b"\n \n")
    with pytest.raises(DataFileError, match="no transactions"):
        load("kosarak", path=blank)
    packed = tmp_path / "k.dat.gz"
    packed.write_bytes(gzip.compress(b"7 8\n9\n"))
    assert sorted(load("kosarak", path=packed, item_rule="first").values.tolist()) == [7, 9]
    broken = _write(tmp_path / "broken.dat.gz", b"not gzip at all")
    with pytest.raises(DataFileError, match="cannot be read"):
        load("kosarak", path=broken)


def test_subsampling_real_users(tmp_path: Path) -> None:
    path = _write(tmp_path / "k.dat", b"1\n2\n2\n3\n3\n3\n")
    data = load("kosarak", path=path, n=4, seed=1)
    assert data.n == 4 and set(data.values.tolist()) <= {1, 2, 3}
    with pytest.raises(ValueError, match="n=7"):
        load("kosarak", path=path, n=7)


# ---------------------------------------------------------------------------------- AOL
RAW_HEADER = b"AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"


def test_aol_raw_first_query_per_user(tmp_path: Path) -> None:
    rows = [
        b"142\tgoogle\t2006-03-01 07:17:12\t\t",
        b"142\tyahoo mail\t2006-03-01 07:18:12\t1\thttp://mail.yahoo.com",
        b"217\t-\t2006-03-02 10:00:00\t\t",
        b"217\tgoogle\t2006-03-02 10:01:00\t\t",
        b"993\twww.google.com\t2006-03-03 09:00:00\t1\thttp://www.google.com",
        b"1000\tgo\t2006-03-03 09:00:00",
    ]
    path = _write(tmp_path / "user-ct-test-collection-01.txt", RAW_HEADER + b"\n".join(rows))
    data = load("aol", path=path)
    assert data.m == 48 and data.values.dtype == np.uint64 and data.n == 4
    texts = sorted(_text(data, v) for v in data.values)
    assert texts == ["-     ", "go    ", "google", "www.go"]
    assert data.params["format"] == "raw"
    assert any("2 later queries" in note for note in data.notes)


def test_aol_raw_directory_and_errors(tmp_path: Path) -> None:
    folder = tmp_path / "AOL"
    folder.mkdir()
    _write(folder / "user-ct-test-collection-01.txt", RAW_HEADER + b"1\tabc\tt\n2\tdef\tt\n")
    _write(folder / "user-ct-test-collection-02.txt", RAW_HEADER + b"2\tzzz\tt\n3\tghi\tt\n")
    data = load("aol", path=folder)
    assert data.n == 3
    _write(folder / "user-ct-test-collection-03.txt", RAW_HEADER + b"4\tonly two fields\n")
    with pytest.raises(DataFileError, match=r"collection-03\.txt, line 2"):
        load("aol", path=folder, cache=False)
    no_header = _write(tmp_path / "noheader.txt", b"1\tabc\tt\n")
    with pytest.raises(DataFileError, match="line 1"):
        load("aol", path=no_header, format="raw")


def test_aol_invalid_utf8_replaced_or_strict(tmp_path: Path) -> None:
    path = _write(tmp_path / "raw.txt", RAW_HEADER + b"1\tcaf\xe9 x\tt\n2\tok\tt\n")
    data = load("aol", path=path)
    texts = {bits.int_to_bytes(int(v), 6) for v in data.values}
    assert "caf\ufffd".encode()[:6] in texts
    assert any("invalid UTF-8" in note for note in data.notes)
    with pytest.raises(DataFileError, match="raw.txt, line 2.*UTF-8"):
        load("aol", path=path, encoding_errors="strict", cache=False)


def test_aol_histogram_format(tmp_path: Path) -> None:
    lines = b"-     \t30\ngoogle\t20\ngoogle maps\t5\nebay\t3\n\nyahoo \t2\n"
    path = _write(tmp_path / "hist.txt", lines)
    data = load("aol", path=path)
    assert data.params["format"] == "histogram" and data.n == 60
    top, counts = data.top_k(4, with_counts=True)
    assert [data.format(v) for v in top] == ["'-     '", "'google'", "'ebay  '", "'yahoo '"]
    assert counts.tolist() == [30, 25, 3, 2]  # "google maps" merged into "google"
    assert any("merged" in note for note in data.notes)
    assert any("1 empty line" in note for note in data.notes)
    bad = _write(tmp_path / "badhist.txt", b"google\t20\nyahoo\tmany\n")
    with pytest.raises(DataFileError, match="badhist.txt, line 2"):
        load("aol", path=bad)
    empty = _write(tmp_path / "emptyhist.txt", b"")
    with pytest.raises(DataFileError, match="empty"):
        load("aol", path=empty)
    wide = load("aol", path=path, n_bytes=12)
    assert wide.m == 96 and wide.values.dtype == np.dtype("S12")


# ---------------------------------------------------------------------------------- URL
QUANTCAST = (
    b"# Quantcast Top Million U.S. Web Sites\r\n# Rankings estimated as of Mar 06, 2016\r\n"
    b"\r\nRank\tSite\r\n1\tgoogle.com\r\n2\tyoutube.com\r\n3\tHidden profile\r\n"
    b"4\tan-extremely-long-domain-name.example.com\r\n5\tb.org\r\n5\tc.org\r\n"
)


def test_url_ranks_only_quantcast_format(tmp_path: Path) -> None:
    path = _write(tmp_path / "qc.txt", QUANTCAST)
    data = load("url", path=path, n=200_000, seed=3)
    assert data.m == 160 and data.values.dtype == np.dtype("S20") and data.n == 200_000
    assert data.params["format"] == "auto"
    assert any("1 'Hidden profile'" in note for note in data.notes)
    assert any("2 '#' comment" in note for note in data.notes)
    names = [b"google.com", b"youtube.com", b"an-extremely-long-do", b"b.org", b"c.org"]
    names = np.array([n.ljust(20) for n in names], dtype="S20")
    counts = data.counts_of(names)
    weights = np.array([1, 2, 4, 5, 5], dtype=float) ** -1.338  # ties share a rank
    expected = data.n * weights / weights.sum()
    assert counts.sum() == data.n
    assert stats.chisquare(counts, expected).pvalue > ALPHA


def test_url_counts_format_sampled_in_proportion(tmp_path: Path) -> None:
    path = _write(tmp_path / "counts.tsv", b"Site\tVisitors\na.com\t600\nb.com\t300\nc.com\t100\n")
    data = load("url", path=path, n=50_000, seed=4)
    names = np.array([b"a.com".ljust(20), b"b.com".ljust(20), b"c.com".ljust(20)], dtype="S20")
    counts = data.counts_of(names)
    assert stats.chisquare(counts, [30_000, 15_000, 5_000]).pvalue > ALPHA
    ranked = _write(tmp_path / "ranked.tsv", b"1\ta.com\t1,000\n2\tb.com\t10\n")
    data = load("url", path=ranked, n=1000, format="counts", top=1)
    assert data.n_distinct == 1 and any("top 1 of 2" in note for note in data.notes)


def test_url_errors(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.txt", b"Rank\tSite\n1\ta.com\nx\tb.com\n")
    with pytest.raises(DataFileError, match=r"bad\.txt, line 3"):
        load("url", path=bad)
    skipped = load("url", path=bad, on_bad_line="skip", n=10)
    assert any("malformed" in note for note in skipped.notes)
    only_hidden = _write(tmp_path / "hidden.txt", b"Rank\tSite\n1\tHidden profile\n")
    with pytest.raises(DataFileError, match="no site rows"):
        load("url", path=only_hidden)


def test_url_header_recognised_by_content_not_by_failing(tmp_path: Path) -> None:
    """A first data row that does not parse is a malformed row, never a silent header."""
    path = _write(tmp_path / "na.tsv", b"google.com\tn/a\nyahoo.com\t500\nbing.com\t100\n")
    with pytest.raises(DataFileError, match=r"na\.tsv, line 1"):
        load("url", path=path, n=100)
    data = load("url", path=path, n=100, on_bad_line="skip", cache=False)
    assert any("skipped 1 malformed" in note and "line 1" in note for note in data.notes)
    for header in (b"Rank\tSite", b"site,visitors", b"Domain\tCount", b"rank\turl\tpeople"):
        rows = b"1\ta.com\t10\n2\tb.com\t5\n" if header.count(b"\t") == 2 else b"a.com\t10\n"
        if header.startswith(b"Rank\tSite"):
            rows = b"1\ta.com\n2\tb.com\n"
        if b"," in header:
            rows = b"a.com,10\nb.com,5\n"
        file = _write(tmp_path / "h.txt", header + b"\n" + rows)
        assert load("url", path=file, n=50, cache=False).n_distinct >= 1


def test_url_loader_on_a_kosarak_file_names_line_one(tmp_path: Path) -> None:
    path = _write(tmp_path / "kosarak.dat", b"1 2 3\n1\n4 5 6 7\n")
    with pytest.raises(DataFileError, match=r"kosarak\.dat, line 1:"):
        load("url", path=path)


# --------------------------------------------------------------------------- resolution
def test_missing_path_never_falls_back(tmp_path: Path) -> None:
    for name in ("kosarak", "aol", "url"):
        with pytest.raises(FileNotFoundError, match="nope.txt"):
            load(name, path=tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="no real data file"):
        load("kosarak", source="real")
    with pytest.raises(ValueError, match="both"):
        load("kosarak", source="surrogate", path=tmp_path)


def test_data_dir_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "kosarak.dat", b"3 4\n5\n")
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))
    data = load("kosarak", item_rule="first")
    assert data.source == f"real:{(tmp_path / 'kosarak.dat').resolve()}"
    with pytest.warns(DataFallbackWarning, match="url.txt"):
        surrogate = load("url", n=1000)  # no URL file there: the surrogate, with a warning
    assert surrogate.source == "surrogate" and "LDP_DATA_DIR" in surrogate.fallback
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="missing"):
        load("kosarak")
