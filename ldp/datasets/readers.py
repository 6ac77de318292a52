"""Parsers of the real data files: FIMI kosarak, the AOL query log, top-sites lists.

Each reader checks every line: a line it cannot parse raises :class:`DataFileError`
naming the file and the line number (or, with ``on_bad_line="skip"``, is skipped and
counted). Every row left out for a documented reason (empty lines, comment lines,
``Hidden profile`` rows, repeated users) is counted in the returned notes: nothing is
dropped silently. Files ending in ``.gz`` are decompressed on the fly.
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


class DataFileError(ValueError):
    """A data file that cannot be used: the message names the file and, if any, the line."""

    def __init__(self, path: str | os.PathLike[str], message: str, line: int | None = None):
        where = f"{path}" if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.message = message
        self.line = line

    def __reduce__(self):  # rebuilt from its own arguments, so it crosses process pools
        return type(self), (self.path, self.message, self.line)


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


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the line ending) for every line of a file."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
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
        Item ids must be < 2**m.

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
            bad(number, f"not a list of integer item ids (unexpected {stray[:10]!r})")
            continue
        item = int(items[0] if item_rule == "first" else items[int(u * len(items))])
        if item >= limit:
            bad(number, f"item id {item} does not fit in m={m} bits")
            continue
        chosen.append(item)
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
        value, tab, count = line.rpartition(b"\t")
        count = count.strip()
        if not tab or not count.isdigit() or int(count) == 0:
            bad(number, "expected <query><TAB><positive count>")
            continue
        texts.append(_text(value, errors, path, number, replaced))
        counts.append(int(count))
    notes = bad.notes()
    if empty:
        notes.append(f"{path}: skipped {empty:,} empty line(s)")
    if replaced[0]:
        notes.append(f"{path}: {replaced[0]:,} values had invalid UTF-8, replaced by U+FFFD")
    if not texts:
        raise DataFileError(path, "no '<query><TAB><count>' lines found (empty file?)")
    values, merged, merge_notes = merge_texts(
        texts, np.array(counts, dtype=float), n_bytes, path, "lines"
    )
    return values, np.rint(merged).astype(np.int64), notes + merge_notes


# ---------------------------------------------------------------------------- site lists
def _number(field: bytes) -> int | None:
    digits = field.strip().replace(b",", b"")
    return int(digits) if digits.isdigit() else None


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
    are comments, one header line such as ``Rank<TAB>Site`` may precede the data):

    * ranks only, Quantcast's format: ``<rank><TAB><site>``; ties share a rank;
    * with counts: ``<site><TAB><count>`` or ``<rank><TAB><site><TAB>...<TAB><count>``
      (thousands separators allowed).

    Rows whose site is ``Hidden profile`` (Quantcast's placeholder for sites that hide
    their data) are skipped and counted.

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
    if format not in ("auto", "ranks", "counts"):
        raise ValueError(f"format must be 'auto', 'ranks' or 'counts', got {format!r}")
    _check_encoding_policy(encoding_errors)
    bad = _Bad(path, on_bad_line)
    replaced = [0]
    sites: list[bytes] = []
    numbers: list[int] = []
    comments = empty = hidden = 0
    header_allowed = True
    for number, line in _lines(path):
        if not line.strip():
            empty += 1
            continue
        if line.startswith(b"#"):
            comments += 1
            continue
        fields = [f.strip() for f in line.split(b"\t" if b"\t" in line else b",")]
        if format == "auto":
            detected = _detect_site_format(fields)
            if detected == "auto" and header_allowed:  # a column header: "Rank<TAB>Site"
                header_allowed = False
                continue
            if detected == "auto":
                bad(
                    number,
                    "expected <rank><TAB><site>, <site><TAB><count> or "
                    "<rank><TAB><site><TAB><count>",
                )
                continue
            format = detected
        parsed = _parse_site_row(fields, format)
        if parsed is None:
            if header_allowed:
                header_allowed = False
                continue
            expected = "<rank><TAB><site>" if format == "ranks" else "<site> with a <count>"
            bad(number, f"expected a {expected} row")
            continue
        header_allowed = False
        site, value = parsed
        if site.lower() == b"hidden profile":
            hidden += 1
            continue
        sites.append(_text(site, encoding_errors, path, number, replaced))
        numbers.append(value)
    notes = bad.notes()
    if hidden:
        notes.append(f"{path}: skipped {hidden:,} 'Hidden profile' rows (sites without a name)")
    if comments or empty:
        notes.append(
            f"{path}: skipped {comments:,} '#' comment line(s) and {empty:,} empty line(s)"
        )
    if replaced[0]:
        notes.append(f"{path}: {replaced[0]:,} site names had invalid UTF-8, replaced by U+FFFD")
    if not sites:
        raise DataFileError(path, "no site rows found (empty file?)")
    return sites, np.array(numbers, dtype=np.int64), format, notes


def _detect_site_format(fields: list[bytes]) -> str:
    if len(fields) == 2 and _number(fields[0]) is not None and fields[1]:
        return "ranks"
    if len(fields) == 2 and _number(fields[1]) is not None and fields[0]:
        return "counts"
    if len(fields) >= 3 and _number(fields[0]) is not None and _number(fields[-1]) is not None:
        return "counts"
    return "auto"


def _parse_site_row(fields: list[bytes], format: str) -> tuple[bytes, int] | None:
    if format == "ranks":
        if len(fields) != 2 or not fields[1]:
            return None
        rank = _number(fields[0])
        return None if rank is None or rank < 1 else (fields[1], rank)
    if len(fields) == 2:
        count = _number(fields[1])
        return None if count is None or not fields[0] else (fields[0], count)
    if len(fields) >= 3 and _number(fields[0]) is not None:
        count = _number(fields[-1])
        return None if count is None or not fields[1] else (fields[1], count)
    return None
