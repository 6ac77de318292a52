"""Errors a user meets first: one line, naming file and line; picklable; never silent."""

from __future__ import annotations

import inspect
import pickle
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import ldp.datasets
from ldp.datasets import DataFallbackWarning, DataFileError, check_params, describe, load, readers
from ldp.datasets import __main__ as cli


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LDP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LDP_DATA_DIR", raising=False)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ------------------------------------------------------------------------------ pickling
#: One instance of every exception and warning class defined in ldp.datasets.
EXAMPLES = {
    "DataFileError": [DataFileError("/x", "bad", 3), DataFileError("/x", "bad")],
    "DataFallbackWarning": [DataFallbackWarning("no kosarak.dat in /data")],
}


def _exception_classes() -> dict[str, type]:
    found = {}
    for info in pkgutil.iter_modules(ldp.datasets.__path__, "ldp.datasets."):
        module = __import__(info.name, fromlist=["_"])
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[name] = obj
    return found


def test_every_exception_class_survives_pickling() -> None:
    classes = _exception_classes()
    assert set(classes) == set(EXAMPLES), "add an example of each new exception class"
    for name, examples in EXAMPLES.items():
        for error in examples:
            assert type(error) is classes[name]
            copy = pickle.loads(pickle.dumps(error))
            assert type(copy) is type(error) and str(copy) == str(error)
            assert copy.args == error.args and copy.__dict__ == error.__dict__


def test_data_file_error_keeps_its_fields() -> None:
    error = DataFileError("/x", "bad", 3)
    assert str(error) == "/x, line 3: bad" and isinstance(error, ValueError)
    assert (error.path, error.message, error.line) == ("/x", "bad", 3)
    assert str(DataFileError("/x", "bad")) == "/x: bad"


# ------------------------------------------------------------------------ size limits
def test_a_file_without_newline_is_rejected_without_reading_it_whole(tmp_path: Path) -> None:
    """A 2 GB sparse file with no newline: rejected from its first bytes (binary zeros)."""
    path = tmp_path / "huge.dat"
    with path.open("wb") as handle:
        handle.write(b"1 2\n")
        handle.truncate(2**31)  # sparse: no disk space, no newline after line 1
    with pytest.raises(DataFileError, match=r"huge\.dat: not a text file"):
        load("kosarak", path=path, cache=False)  # its zeros are binary data


def test_a_line_longer_than_the_limit_is_rejected_naming_it(tmp_path: Path) -> None:
    limit = readers.MAX_LINE_BYTES
    path = _write(tmp_path / "long.dat", b"1 2\n" + b"3 " * (limit // 2 + 8))
    with pytest.raises(DataFileError, match=rf"long\.dat, line 2: longer than {limit:,} bytes"):
        load("kosarak", path=path, cache=False)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("kosarak", b"1 2\n" + b"9" * 5000 + b"\n", r"line 2: item id of 5,000 digits"),
        ("aol", b"google\t5\nyahoo\t" + b"9" * 5000 + b"\n", r"line 2: count of 5,000 digits"),
        ("aol", b"google\t5\nyahoo\t" + str(2**70).encode() + b"\n", r"line 2: count 1180591"),
        ("url", b"a.com\t5\nb.com\t" + str(2**70).encode() + b"\n", r"line 2: count 1180591"),
        ("url", b"1\ta.com\n" + b"9" * 5000 + b"\tb.com\n", r"line 2: rank of 5,000 digits"),
    ],
)
def test_absurd_numbers_name_file_and_line(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = _write(tmp_path / f"big-{name}.txt", content)
    with pytest.raises(DataFileError, match=rf"big-{name}\.txt, {message}") as caught:
        load(name, path=path, cache=False)
    assert "\n" not in str(caught.value)


def test_aol_counts_that_do_not_fit_in_memory(tmp_path: Path) -> None:
    path = _write(tmp_path / "many.txt", b"google\t999999999\nyahoo\t999999999\n")
    with pytest.raises(DataFileError, match=r"many\.txt: 1,999,999,998 users"):
        load("aol", path=path, cache=False)


# ------------------------------------------------------------------------ parameters
def test_bad_item_rule_is_one_line_naming_the_choices() -> None:
    calls = (
        lambda: load("kosarak", item_rule="last"),
        lambda: check_params("kosarak", item_rule="last"),
    )
    for call in calls:
        with pytest.raises(ValueError) as caught:
            call()
        text = str(caught.value)
        assert "\n" not in text and text.startswith("item_rule")
        assert "'random'" in text and "'first'" in text and "'last'" in text


def test_check_params_validates_without_loading() -> None:
    check_params("kosarak", item_rule="first", m=32, seed=3, source="auto")
    check_params("aol", n=1000, format="histogram", encoding_errors="strict")
    with pytest.raises(TypeError, match="exponent"):
        check_params("zipf", exponent=2)
    with pytest.raises(ValueError, match="^source"):
        check_params("url", source="web")
    with pytest.raises(ValueError, match="^on_bad_line"):
        check_params("aol", on_bad_line="ignore")
    with pytest.raises(ValueError, match="^format"):
        check_params("url", format="csv")
    with pytest.raises(ValueError, match="unknown dataset"):
        check_params("imdb")


# ------------------------------------------------------------------ surrogate fallback
def test_data_dir_fallback_is_a_warning_naming_files_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "Kosarak_full.dat", b"1 2\n")
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))
    with pytest.warns(DataFallbackWarning) as caught:
        data = load("kosarak", n=1000)
    message = str(caught[0].message)
    assert str(tmp_path) in message and "kosarak.dat" in message and "kosarak.dat.gz" in message
    assert "Kosarak_full.dat" in message  # a near miss is pointed out
    assert data.source == "surrogate" and data.fallback == message
    assert data.notes[0] == message


def test_no_warning_without_data_dir_or_with_explicit_surrogate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load("kosarak", n=1000).fallback is None
        monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))
        assert load("kosarak", n=1000, source="surrogate").fallback is None


# ------------------------------------------------------------------------- display
def test_kosarak_ids_are_shown_in_decimal(tmp_path: Path) -> None:
    data = load("kosarak", path=_write(tmp_path / "k.dat", b"11 3\n11\n6\n"), item_rule="first")
    assert data.format(np.uint64(11)) == "11"
    assert describe(data)["top_values"][:2] == ["11", "6"]
    surrogate = load("kosarak", n=2000)
    assert describe(surrogate)["top_values"][0] in {"6", "3", "11", "1"}


def test_error_excerpt_shows_the_line_as_it_is(tmp_path: Path) -> None:
    path = _write(tmp_path / "k.dat", b"1 2\n# Real data from FIMI\n")
    with pytest.raises(DataFileError) as caught:
        load("kosarak", path=path)
    assert "line 2" in str(caught.value) and "'# Real data from FIMI'" in str(caught.value)


def test_cli_prints_kosarak_ids_in_decimal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path / "k.dat", b"41270 3\n41270\n3\n")
    assert cli.main(["describe", "kosarak", f"path={path}", "item_rule=first"]) == 0
    out = capsys.readouterr().out
    assert "top values        41270, 3" in out and "0x" not in out


# ------------------------------------------------------------------ binary files, seeds
PNG_START = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"


@pytest.mark.parametrize("name", ["kosarak", "aol", "url"])
@pytest.mark.parametrize("suffix", [".dat", ".dat.gz"])
def test_a_binary_file_is_not_a_text_file(tmp_path: Path, name: str, suffix: str) -> None:
    import gzip

    data = PNG_START + bytes(range(256)) * 4
    path = _write(
        tmp_path / f"image{suffix}", gzip.compress(data) if suffix.endswith("gz") else data
    )
    with pytest.raises(DataFileError) as caught:
        load(name, path=path, cache=False)
    assert str(caught.value) == f"{path}: not a text file (binary data in its first bytes)"


def test_text_with_latin1_bytes_is_still_text(tmp_path: Path) -> None:
    path = _write(tmp_path / "queries.txt", "café\t3\nnaïve\t2\n".encode("latin-1"))
    assert load("aol", path=path, cache=False).n == 5


def test_a_kosarak_id_too_wide_fails_whatever_the_seed(tmp_path: Path) -> None:
    """The wide id is one of 20 on its line: the error must not depend on which item the
    seed picks (it used to be raised only when the random pick landed on it)."""
    wide = str(2**32).encode()
    line = b" ".join([b"5"] * 19 + [wide])
    path = _write(tmp_path / "kosarak.dat", b"1 2 3\n" + line + b"\n4\n")
    for seed in range(8):
        with pytest.raises(DataFileError, match=rf"line 2: item id {2**32} does not fit in m=32"):
            load("kosarak", path=path, seed=seed, cache=False)
    for seed in range(8):  # skipped (and counted) under every seed alike
        data = load("kosarak", path=path, seed=seed, cache=False, on_bad_line="skip")
        assert data.n == 2
