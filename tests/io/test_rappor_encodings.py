"""The RAPPOR readers decode every encoding a user's file may have, or refuse it by name.

Each of the five fixture files is re-encoded as UTF-8 with a byte-order mark and as UTF-16
with one (little- and big-endian) and must read exactly as the UTF-8 original: a mark read
as text turns the first candidate "banana" into "\\ufeffbanana", a new string that no
report matches, and the header of a CSV into a refusal.  UTF-32 and UTF-16 without a mark
are refused with a :class:`RapporFileError` naming the encoding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ldp.io import rappor as rio

DATA = Path(__file__).parent / "data" / "rappor"
FILES = ["params.csv", "reports.csv", "candidates.txt", "map.csv", "counts.csv"]
ACCEPTED = {
    "utf-8 with a mark": lambda text: b"\xef\xbb\xbf" + text.encode("utf-8"),
    "utf-16 (mark, little-endian)": lambda text: b"\xff\xfe" + text.encode("utf-16-le"),
    "utf-16 (mark, big-endian)": lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
}
REFUSED = {
    "utf-32 (mark)": lambda text: text.encode("utf-32"),
    "utf-16 without a mark": lambda text: text.encode("utf-16-le"),
}


def _reader_writer(name: str):
    params = rio.read_params(DATA / "params.csv")
    return {
        "params.csv": (rio.read_params, rio.write_params),
        "reports.csv": (lambda p: rio.read_reports(p, params), rio.write_reports),
        "candidates.txt": (rio.read_candidates, rio.write_candidates),
        "map.csv": (lambda p: rio.read_candidate_map(p, params), rio.write_candidate_map),
        "counts.csv": (lambda p: rio.read_counts(p, params), rio.write_counts),
    }[name]


def _read(name: str, path: Path):
    return _reader_writer(name)[0](path)


@pytest.mark.parametrize("encoding", list(ACCEPTED))
@pytest.mark.parametrize("name", FILES)
def test_a_marked_file_reads_as_its_utf8_original(name, encoding, tmp_path) -> None:
    # what is read, written back by the writer, is the UTF-8 original byte for byte
    original = (DATA / name).read_text(encoding="utf-8")
    copy, out = tmp_path / name, tmp_path / f"out-{name}"
    copy.write_bytes(ACCEPTED[encoding](original))
    read, write = _reader_writer(name)
    write(out, read(copy))
    assert out.read_bytes() == (DATA / name).read_bytes()


@pytest.mark.parametrize("encoding", list(REFUSED))
@pytest.mark.parametrize("name", FILES)
def test_an_unsupported_encoding_is_refused_by_name(name, encoding, tmp_path) -> None:
    copy = tmp_path / name
    copy.write_bytes(REFUSED[encoding]((DATA / name).read_text(encoding="utf-8")))
    with pytest.raises(rio.RapporFileError, match="UTF") as caught:
        _read(name, copy)
    assert caught.value.field == "encoding"


def test_a_marked_candidates_file_gives_the_same_strings(tmp_path) -> None:
    path = tmp_path / "candidates.txt"
    path.write_bytes("\ufeffalpha\nbeta\n".encode())
    assert rio.read_candidates(path) == ["alpha", "beta"]
    path.write_bytes("alpha\r\nbeta\r\n".encode("utf-16"))
    assert rio.read_candidates(path) == ["alpha", "beta"]


def test_a_marked_file_decodes_end_to_end_like_the_original(tmp_path) -> None:
    for name in FILES:
        text = (DATA / name).read_text(encoding="utf-8")
        (tmp_path / name).write_bytes(text.encode("utf-16"))
    marked, plain = (
        rio.decode_files(
            folder / "params.csv",
            counts=folder / "counts.csv",
            candidates=folder / "candidates.txt",
            allow_no_noise=True,
        )
        for folder in (tmp_path, DATA)
    )
    assert marked.equals(plain)
