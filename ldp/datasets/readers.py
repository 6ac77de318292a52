"""Parsers of the real data files: FIMI kosarak, the AOL query log, top-sites lists.

Each reader checks every line: a line it cannot parse raises :class:`DataFileError`
naming the file and the line number (or, with ``on_bad_line="skip"``, is skipped and
counted). Every row left out for a documented reason (empty lines, comment lines,
``Hidden profile`` rows, repeated users) is counted in the returned notes: nothing is
dropped silently. Files ending in ``.gz`` are decompressed on the fly.

Limits, so that a wrong file fails fast with its name and line instead of exhausting
memory: a line is read at most :data:`MAX_LINE_BYTES` bytes at a time (a longer one is an
error), and a count or rank is at most :data:`MAX_COUNT` (an AOL histogram at most
:data:`MAX_USERS` users in total, since every user becomes one array element).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = [
    "DataFileError",
    "merge_texts",
    "read_aol",
    "read_kosarak",
    "read_site_list",
]

ON_BAD_LINE = ("raise", "skip")
ENCODING_ERRORS = ("replace", "strict")
_DIGITS = b"0123456789"
#: Longest line a reader accepts (kosarak's longest transaction is about 15 kB).
MAX_LINE_BYTES = 1 << 20
#: Largest count, rank or visitor count a line may hold.
MAX_COUNT = 10**12
#: Most users an AOL histogram may describe (each is one 8-byte array element).
MAX_USERS = 10**9
#: Numbers longer than this are rejected before ``int`` parses them.
_MAX_DIGITS = 30


class DataFileError(ValueError):
    """A data file that cannot be used: the message names the file and, if any, the line.

    Picklable (it crosses process boundaries with parallel trials): ``path``,
    ``message`` and ``line`` are kept and rebuild the same error.
    """

    def __init__(self, path: str | os.PathLike[str], message: str, line: int | None = None):
        where = f"{path}" if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.message = message
        self.line = line

    def __reduce__(self):
        return type(self), (self.path, self.message, self.line)


def excerpt(line: bytes, width: int = 40) -> str:
    """The start of a line as it is (spaces kept), quoted, for error messages."""
    text = line[:width].decode("utf-8", "backslashreplace")
    return repr(text) + ("..." if len(line) > width else "")


def parse_count(
    field: bytes, what: str, path: Path, line: int, limit: int = MAX_COUNT
) -> int | None:
    """A non-negative integer field (thousands separators allowed), or None if not one.

    Raises :class:`DataFileError` naming the line when the number is absurd: more than
    30 digits (``int`` would choke on thousands) or above ``limit``.
    """
    digits = field.strip().replace(b",", b"")
    if not digits.isdigit():
        return None
    if len(digits) > _MAX_DIGITS:
        raise DataFileError(path, f"{what} of {len(digits):,} digits is not plausible", line)
    value = int(digits)
    if value > limit:
        raise DataFileError(path, f"{what} {value} is more than {limit:,}: not plausible", line)
    return value


class _Bad:
    """Counts the skipped malformed lines, or raises on the first one."""

    def __init__(self, path: Path, policy: str):
        if policy not in ON_BAD_LINE:
            raise ValueError(f"on_bad_line must be one of {ON_BAD_LINE}, got {policy!r}")
        self.path, self.policy, self.count, self.first = path, policy, 0, None

    def __call__(self, line: int, message: str) -> None:
        if self.policy == "raise":
            raise DataFileError(self.path, message, line)
        self.count += 1
        if self.first is None:
            self.first = f"line {line}: {message}"

    def notes(self) -> list[str]:
        if not self.count:
            return []
        return [f"{self.path}: skipped {self.count:,} malformed line(s) (first: {self.first})"]


#: How much of a file's start :func:`_lines` checks for binary data.
BINARY_PROBE_BYTES = 8192


def _binary(head: bytes) -> bool:
    """Whether bytes are binary data rather than text: a NUL byte, or other control bytes
    (besides tab, line endings, form feed and escape) in what is not valid UTF-8."""
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return bool(head.translate(None, _TEXT_BYTES)[:1])
    return False


#: Bytes of text: printable ASCII, tab, line ending, form feed, escape and every byte >= 0x80.
_TEXT_BYTES = bytes([9, 10, 12, 13, 27, *range(32, 127), *range(128, 256)])


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the line ending) for every line of a file.

    Reads at most :data:`MAX_LINE_BYTES` bytes per line: a longer line (e.g. a binary or
    sparse file without newlines) is a :class:`DataFileError` naming it, and so is a file
    whose first :data:`BINARY_PROBE_BYTES` are binary data (an image, an archive): "not a
    text file".
    """
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            if _binary(handle.read(BINARY_PROBE_BYTES)):
                raise DataFileError(path, "not a text file (binary data in its first bytes)")
            handle.seek(0)
            number = 0
            while line := handle.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    raise DataFileError(
                        path,
                        f"longer than {MAX_LINE_BYTES:,} bytes (not a text data file?)",
                        number,
                    )
                yield number, line.rstrip(b"\r\n")
    except (OSError, EOFError) as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise DataFileError(path, f"cannot be read ({error})") from error


def _text(raw: bytes, errors: str, path: Path, line: int, counter: list[int]) -> bytes:
    """Check that ``raw`` is UTF-8: keep it, replace bad bytes by U+FFFD, or raise."""
    try:
        raw.decode("utf-8")
        return raw
    except UnicodeDecodeError as error:
        if errors == "strict":
            raise DataFileError(
                path, f"invalid UTF-8 ({error.reason} at byte {error.start})", line
            ) from error
        counter[0] += 1
        return raw.decode("utf-8", "replace").encode("utf-8")


def _pad(raw: bytes, n_bytes: int) -> bytes:
    return raw[:n_bytes].ljust(n_bytes, b" ")


def merge_texts(
    texts: list[bytes], weights: np.ndarray, n_bytes: int, path: Path, what: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Distinct n_bytes-wide values with summed weights; notes how many rows merged."""
    values = np.array([_pad(t, n_bytes) for t in texts], dtype=f"S{n_bytes}")
    distinct, inverse = np.unique(values, return_inverse=True)
    merged = np.bincount(inverse, weights=weights, minlength=len(distinct))
    notes = []
    if len(distinct) < len(values):
        notes.append(
            f"{path}: {len(values) - len(distinct):,} {what} merged with another "
            f"that has the same first {n_bytes} bytes"
        )
    return distinct, merged, notes


def _check_encoding_policy(errors: str) -> None:
    if errors not in ENCODING_ERRORS:
        raise ValueError(f"encoding_errors must be one of {ENCODING_ERRORS}, got {errors!r}")


# ------------------------------------------------------------------------------ kosarak
def read_kosarak(
    path: Path, *, item_rule: str, rng: np.random.Generator, m: int, on_bad_line: str = "raise"
) -> tuple[np.ndarray, list[str]]:
    """One item per transaction of a FIMI file (one transaction per line, items by spaces).

    Parameters
    ----------
    item_rule : {"random", "first"}
        ``"random"``: the item at a uniformly random position of the line (drawn from
        ``rng``, one uniform per line in file order); ``"first"``: the first item.
    m : int
        Every item id of every line must be < 2**m (all are checked, whichever is chosen,
        so whether a file is accepted does not depend on the seed).

    Returns
    -------
    values : numpy.ndarray
        ``np.uint64`` item ids, one per non-empty line, in file order.
    notes : list of str
        Empty lines skipped, malformed lines skipped (with ``on_bad_line="skip"``).
    """
    if item_rule not in ("random", "first"):
        raise ValueError(f"item_rule must be 'random' or 'first', got {item_rule!r}")
    bad = _Bad(path, on_bad_line)
    limit = 2**m
    digits = len(str(limit))  # an id with fewer digits is < limit
    chosen: list[int] = []
    empty = 0
    uniforms = rng.random(1 << 16)
    used = 0
    for number, line in _lines(path):
        if used == len(uniforms):
            uniforms, used = rng.random(1 << 16), 0
        u = uniforms[used]
        used += 1
        items = line.split()
        if not items:
            empty += 1
            continue
        stray = line.translate(None, _DIGITS + b" \t")
        if stray:
            at = line.index(stray[:1]) + 1
            bad(
                number,
                f"not a list of integer item ids ({chr(stray[0])!r} at byte {at} of "
                f"{excerpt(line)})",
            )
            continue
        # every id of the line is checked, not only the chosen one: whether a file is
        # accepted must not depend on the seed that picks a transaction's item
        if max(map(len, items)) >= digits:
            wrong = next((t for t in items if len(t) > _MAX_DIGITS or int(t) >= limit), None)
            if wrong is not None:
                what = f"of {len(wrong):,} digits" if len(wrong) > _MAX_DIGITS else int(wrong)
                bad(number, f"item id {what} does not fit in m={m} bits")
                continue
        token = items[0] if item_rule == "first" else items[int(u * len(items))]
        chosen.append(int(token))
    notes = bad.notes()
    if empty:
        notes.append(f"{path}: skipped {empty:,} empty line(s)")
    if not chosen:
        raise DataFileError(path, "no transactions found (empty file?)")
    return np.array(chosen, dtype=np.uint64), notes


# ---------------------------------------------------------------------------------- AOL
AOL_HEADER = b"AnonID\tQuery\tQueryTime"


def detect_aol_format(path: Path) -> str:
    """``"raw"`` for the 2006 collection (header ``AnonID Query ...``), else ``"histogram"``."""
    for _, line in _lines(path):
        if line.strip():
            return "raw" if line.startswith(b"AnonID") else "histogram"
    raise DataFileError(path, "no data lines (empty file?)")


def read_aol(
    paths: list[Path],
    *,
    format: str,
    n_bytes: int,
    encoding_errors: str = "replace",
    on_bad_line: str = "raise",
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Distinct queries cut or space-padded to n_bytes, and how many users hold each.

    Parameters
    ----------
    paths : list of Path
        One histogram file, or the raw collection's files (read in the given order).
    format : {"raw", "histogram"}
        ``"raw"``: the 2006 log, tab-separated ``AnonID Query QueryTime [ItemRank
        ClickURL]`` with a header line per file; each user (AnonID) contributes the query
        of their first row in file order, which the collection sorts by user then time
        (PEM, Section VI-A: "each user reports one query (w.l.o.g., the first query)").
        ``"histogram"``: ``<query>\\t<count>`` per line, the form the authors released.
    encoding_errors : {"replace", "strict"}
        Queries that are not valid UTF-8: replace the bad bytes by U+FFFD (counted in the
        notes) or raise. Cutting to n_bytes may split a multi-byte character; values are
        bytes, so that is kept as is.
    """
    _check_encoding_policy(encoding_errors)
    if format == "raw":
        return _read_aol_raw(paths, n_bytes, encoding_errors, on_bad_line)
    if format == "histogram":
        if len(paths) != 1:
            raise ValueError("the histogram format is one file")
        return _read_aol_histogram(paths[0], n_bytes, encoding_errors, on_bad_line)
    raise ValueError(f"format must be 'auto', 'raw' or 'histogram', got {format!r}")


def _read_aol_raw(
    paths: list[Path], n_bytes: int, errors: str, on_bad_line: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    first: dict[bytes, bytes] = {}
    notes: list[str] = []
    later = 0
    for path in paths:
        bad = _Bad(path, on_bad_line)
        replaced = [0]
        header_seen = False
        empty = 0
        for number, line in _lines(path):
            if not line.strip():
                empty += 1
                continue
            if not header_seen:
                if not line.startswith(AOL_HEADER):
                    raise DataFileError(
                        path,
                        "expected the header 'AnonID<TAB>Query<TAB>"
                        "QueryTime<TAB>ItemRank<TAB>ClickURL'",
                        number,
                    )
                header_seen = True
                continue
            fields = line.split(b"\t")
            if not 3 <= len(fields) <= 5 or not fields[0].isdigit():
                bad(
                    number,
                    "expected AnonID<TAB>Query<TAB>QueryTime[<TAB>ItemRank"
                    "<TAB>ClickURL] with an integer AnonID",
                )
                continue
            if fields[0] in first:
                later += 1
                continue
            first[fields[0]] = _text(fields[1], errors, path, number, replaced)
        notes += bad.notes()
        if empty:
            notes.append(f"{path}: skipped {empty:,} empty line(s)")
        if replaced[0]:
            notes.append(
                f"{path}: {replaced[0]:,} first queries had invalid UTF-8, replaced by U+FFFD"
            )
    if not first:
        raise DataFileError(paths[0], "no query rows found")
    notes.append(
        f"{len(first):,} users; {later:,} later queries of the same users not used "
        "(one query per user: the first)"
    )
    values, counts, merge_notes = merge_texts(
        list(first.values()), np.ones(len(first)), n_bytes, paths[0], "distinct full queries"
    )
    return values, np.rint(counts).astype(np.int64), notes + merge_notes


def _read_aol_histogram(
    path: Path, n_bytes: int, errors: str, on_bad_line: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    bad = _Bad(path, on_bad_line)
    replaced = [0]
    texts: list[bytes] = []
    counts: list[int] = []
    empty = 0
    for number, line in _lines(path):
        if not line:
            empty += 1
            continue
        value, tab, field = line.rpartition(b"\t")
        count = parse_count(field, "count", path, number, MAX_USERS) if tab else None
        if not count:
            bad(number, "expected <query><TAB><positive count>")
            continue
        texts.append(_text(value, errors, path, number, replaced))
        counts.append(count)
    notes = bad.notes()
    if empty:
        notes.append(f"{path}: skipped {empty:,} empty line(s)")
    if replaced[0]:
        notes.append(f"{path}: {replaced[0]:,} values had invalid UTF-8, replaced by U+FFFD")
    if not texts:
        raise DataFileError(path, "no '<query><TAB><count>' lines found (empty file?)")
    total = sum(counts)
    if total > MAX_USERS:
        raise DataFileError(
            path, f"{total:,} users in total: more than the {MAX_USERS:,} a dataset can hold"
        )
    values, merged, merge_notes = merge_texts(
        texts, np.array(counts, dtype=float), n_bytes, path, "lines"
    )
    return values, np.rint(merged).astype(np.int64), notes + merge_notes


# ---------------------------------------------------------------------------- site lists
#: Column names that make a first row a header (compared in lower case, quotes removed).
SITE_HEADER_WORDS = frozenset(
    b"rank site sites domain domains url urls host website name count counts visitors "
    b"visits people uniques hits views pageviews traffic".split()
)


def is_site_header(fields: list[bytes]) -> bool:
    """A column header such as ``Rank<TAB>Site``: known column names, no number at all."""
    words = [f.strip(b"\"' ").lower() for f in fields]
    return any(w in SITE_HEADER_WORDS for w in words) and not any(
        w.replace(b",", b"").isdigit() for w in words
    )


def read_site_list(
    path: Path,
    *,
    format: str,
    n_bytes: int,
    encoding_errors: str = "replace",
    on_bad_line: str = "raise",
) -> tuple[list[bytes], np.ndarray, str, list[str]]:
    """The sites of a top-sites list, in file order, with their rank or visitor count.

    Accepted lines (tab-separated, or comma-separated when a line has no tab; ``#`` lines
    are comments):

    * ranks only, Quantcast's format: ``<rank><TAB><site>``; ties share a rank;
    * with counts: ``<site><TAB><count>`` or ``<rank><TAB><site><TAB>...<TAB><count>``
      (thousands separators allowed).

    One header line may precede the data. It is recognised by its content
    (:func:`is_site_header`: column names such as ``Rank``, ``Site``, ``Visitors`` and
    no number), never by failing to parse: a first row that does not parse is a
    malformed row like any other. Rows whose site is ``Hidden profile`` (Quantcast's
    placeholder for sites that hide their data) are skipped and counted.

    Returns
    -------
    sites : list of bytes
        UTF-8 site names (not yet cut to n_bytes).
    numbers : numpy.ndarray
        The rank (``"ranks"``) or count (``"counts"``) of each site, int64.
    format : str
        ``"ranks"`` or ``"counts"`` (detected from the first data row with ``"auto"``).
    notes : list of str
    """
    if format not in SITE_FORMATS:
        raise ValueError(f"format must be one of {SITE_FORMATS}, got {format!r}")
    _check_encoding_policy(encoding_errors)
    bad = _Bad(path, on_bad_line)
    replaced = [0]
    sites: list[bytes] = []
    numbers: list[int] = []
    comments = empty = hidden = headers = 0
    data_seen = False
    for number, line in _lines(path):
        if not line.strip():
            empty += 1
            continue
        if line.startswith(b"#"):
            comments += 1
            continue
        fields = [f.strip() for f in line.split(b"\t" if b"\t" in line else b",")]
        if not data_seen and not headers and is_site_header(fields):
            headers += 1
            continue
        data_seen = True

        def num(field: bytes, what: str, number: int = number) -> int | None:
            return parse_count(field, what, path, number)

        if format == "auto":
            detected = _detect_site_format(fields, num)
            if detected is None:
                bad(
                    number,
                    "expected <rank><TAB><site>, <site><TAB><count> or "
                    f"<rank><TAB><site><TAB><count>, got {excerpt(line)}",
                )
                continue
            format = detected
        parsed = _parse_site_row(fields, format, num)
        if parsed is None:
            expected = "<rank><TAB><site>" if format == "ranks" else "<site> with a <count>"
            bad(number, f"expected a {expected} row, got {excerpt(line)}")
            continue
        site, value = parsed
        if site.lower() == b"hidden profile":
            hidden += 1
            continue
        sites.append(_text(site, encoding_errors, path, number, replaced))
        numbers.append(value)
    notes = bad.notes()
    if hidden:
        notes.append(f"{path}: skipped {hidden:,} 'Hidden profile' rows (sites without a name)")
    if comments or empty or headers:
        notes.append(
            f"{path}: skipped {comments:,} '#' comment line(s), {empty:,} empty line(s) and "
            f"{headers} column header line(s)"
        )
    if replaced[0]:
        notes.append(f"{path}: {replaced[0]:,} site names had invalid UTF-8, replaced by U+FFFD")
    if not sites:
        raise DataFileError(path, "no site rows found (empty file?)")
    return sites, np.array(numbers, dtype=np.int64), format, notes


SITE_FORMATS = ("auto", "ranks", "counts")


def _detect_site_format(fields: list[bytes], num) -> str | None:
    if len(fields) == 2 and fields[1] and num(fields[0], "rank") is not None:
        return "ranks"
    if len(fields) == 2 and fields[0] and num(fields[1], "count") is not None:
        return "counts"
    if len(fields) >= 3 and num(fields[0], "rank") is not None:
        if num(fields[-1], "count") is not None:
            return "counts"
    return None


def _parse_site_row(fields: list[bytes], format: str, num) -> tuple[bytes, int] | None:
    if format == "ranks":
        if len(fields) != 2 or not fields[1]:
            return None
        rank = num(fields[0], "rank")
        return None if rank is None or rank < 1 else (fields[1], rank)
    if len(fields) == 2:
        count = num(fields[1], "count")
        return None if count is None or not fields[0] else (fields[0], count)
    if len(fields) >= 3 and num(fields[0], "rank") is not None:
        count = num(fields[-1], "count")
        return None if count is None or not fields[1] else (fields[1], count)
    return None
