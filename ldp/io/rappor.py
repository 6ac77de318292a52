"""google/rappor's files: read, write, and decode end to end.

A RAPPOR deployment built on google/rappor (Erlingsson, Pihur, Korolova, CCS 2014; the
reference implementation's ``client/python``, ``bin/hash_candidates.py``,
``bin/sum_bits.py`` and ``analysis/R``) passes five kinds of files between its steps.
This module reads and writes each of them so that ``write_x(read_x(file))`` gives the same
bytes back for a file in the reference's form, and decodes them with this library's
decoder (:func:`ldp.oracles.rappor.decoder.decode`).  ``docs/rappor.md`` describes the
formats with examples.

========================  ===========================================================
file                      form (no header unless said)
========================  ===========================================================
parameters CSV            header ``k,h,m,p,q,f``, then one row of the six numbers
reports CSV               header ``client,cohort,bloom,prr,irr``; one row per report:
                          a client id, its cohort in [0, m), and three k-bit strings
                          (``bloom`` and ``prr`` may be empty: a server sees ``irr`` only)
candidates                one candidate string per line
candidate map             one row per candidate: the string, then for each cohort c and
                          each of the h hashes the position c k + b + 1 (1-based, with
                          the cohort's offset) of the Bloom bit b it sets
bit counts                one row per cohort c = 0..m-1: the number of reports n_c, then
                          the number of reports with bit b set for b = 0, ..., k-1
========================  ===========================================================

**Bit order.**  A bit string is written most significant bit first: its first character
is Bloom bit k-1, its last bit 0 (the reference client's ``bit_string``, which
``sum_bits.py`` reads back with "char 0 = bit k-1").  The bit counts run the other way,
bit 0 first, which is also the order of the map's positions (bit b of cohort c is
column c k + b + 1).  Reading a bit string the other way round decodes without any
error to meaningless counts, so the readers here only ever use the reference's order.

**Bytes.**  Text is UTF-8 (bytes that are not UTF-8 survive a round trip unchanged).
The readers also take UTF-8 with a byte-order mark and UTF-16 with one (as editors on
Windows save text) and refuse other encodings (UTF-32, UTF-16 without a mark); the
writers write UTF-8 without a mark.
The reports, the map and the counts are written as Python's ``csv`` module writes them,
as the reference's tools do: fields quoted only when needed, lines ending in CRLF; the
parameters and the candidates end lines in LF.  The readers accept either line ending;
numbers are written canonically (integers without leading zeros, probabilities as
Python's ``repr`` of the float, e.g. ``0.5``), and a file read back from a writer gives
the same bytes.  Every malformed line is refused with :class:`RapporFileError`, naming
the file, the line and the field.

**Hostile files.**  Numbers are refused above what an int64 holds (and a cohort at or above
m, which may not exceed 2^32: the reference hashes the cohort as 4 bytes) before they are
converted; the parameters are checked against :mod:`ldp.budget` before a table of m k
counters is allocated; and an error quotes at most a short prefix of the offending text.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ldp import budget
from ldp.oracles.rappor.decoder import decode
from ldp.oracles.rappor.google import google_rappor
from ldp.oracles.rappor.protocol import (
    MAX_CELLS,
    MAX_HASHES,
    RAPPOR,
    CohortCounts,
    RapporReports,
    bloom_table,
    pack,
    unpack,
)

PathLike = str | os.PathLike
PARAMS_HEADER = "k,h,m,p,q,f"
REPORTS_HEADER = "client,cohort,bloom,prr,irr"
#: The line ending of the files the reference writes with Python's csv module.
CSV_NEWLINE = "\r\n"
_INTEGER = re.compile(r"0|[1-9][0-9]*")
#: The largest number a field may hold: every count and parameter is kept as an int64.
MAX_INTEGER = 2**63 - 1
#: The most cohorts: the reference hashes a cohort as 4 big-endian bytes.
MAX_COHORTS = 2**32
#: The characters of a field an error message quotes (a 10 MB field makes a short message).
SHOWN = 40
#: Bytes per (cohort, bit) counter while summing bits: the int64 count and bincount's own.
COUNTER_BYTES = 16
_SPECIAL = re.compile(r'[",\r\n]')

__all__ = [
    "CandidateMap",
    "RapporFileError",
    "RapporParams",
    "ReportsTable",
    "candidate_map",
    "check_counters",
    "check_hashing",
    "decode_files",
    "main",
    "read_candidate_map",
    "read_candidates",
    "read_counts",
    "read_params",
    "read_reports",
    "sum_bits",
    "write_candidate_map",
    "write_candidates",
    "write_counts",
    "write_params",
    "write_reports",
    "write_results",
]


class RapporFileError(ValueError):
    """A malformed line of a RAPPOR file.

    Attributes
    ----------
    path : str
        The file.
    line : int
        The line, counting from 1 (the header is line 1 where there is one).
    field : str
        The field's name (``"cohort"``, ``"irr"``, ``"bit 3"``, ...).
    """

    def __init__(self, path: PathLike, line: int, field: str, problem: str) -> None:
        self.path, self.line, self.field, self.problem = str(path), line, field, problem
        super().__init__(f"{path}, line {line}, field {field}: {problem}")

    def __reduce__(self):  # keep the attributes across pickling (joblib workers)
        return (type(self), (self.path, self.line, self.field, self.problem))


# ------------------------------------------------------------------ low-level text
def _shown(text: str) -> str:
    """``text`` quoted for a message: whole if short, else its first characters and length."""
    if len(text) <= SHOWN:
        return repr(text)
    return f"{text[:SHOWN]!r}... ({len(text):,} characters)"


#: Byte-order marks: UTF-32 is checked before UTF-16, whose little-endian mark it extends.
_UTF32_MARKS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")
_UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_MARK = b"\xef\xbb\xbf"


def _decode(path: PathLike, data: bytes) -> str:
    """The text of a file in UTF-8 (with or without a byte-order mark) or UTF-16 with one.

    Without a mark the bytes are UTF-8, and bytes that are not survive as surrogate escapes
    (so they are written back unchanged).  A UTF-8 mark is dropped (it is not part of the
    first string: without this "alpha" would be read as "\\ufeffalpha", a new candidate).
    Any other encoding is refused: UTF-32, and text with NUL bytes but no mark (UTF-16
    without one), which would otherwise be read as strings padded with NULs.
    """
    if data.startswith(_UTF32_MARKS):
        raise RapporFileError(path, 1, "encoding", "UTF-32 is not read; save it as UTF-8")
    if data.startswith(_UTF16_MARKS):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as error:
            raise RapporFileError(
                path, 1, "encoding", f"has a UTF-16 byte-order mark but is not UTF-16 ({error})"
            ) from None
    if data.startswith(_UTF8_MARK):
        data = data[len(_UTF8_MARK) :]
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise RapporFileError(
            path,
            line,
            "encoding",
            "a NUL byte: UTF-16 without a byte-order mark, or not text; save it as UTF-8",
        )
    return data.decode("utf-8", errors="surrogateescape")


def _read_lines(path: PathLike) -> list[str]:
    """The file's lines without their endings (LF, CRLF or CR; a missing final one is fine).

    Encodings: see ``_decode``.  ``-`` is standard input (as Google's tools read it).
    """
    if str(path) == "-":
        text = _decode(path, sys.stdin.buffer.read())
    else:
        with open(path, "rb") as handle:
            text = _decode(path, handle.read())
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _write_lines(path: PathLike, lines: list[str], newline: str) -> None:
    """Write the lines, each ended by ``newline``; ``-`` is standard output."""
    text = "".join(line + newline for line in lines)
    if str(path) == "-":
        sys.stdout.buffer.write(text.encode("utf-8", errors="surrogateescape"))
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
        handle.write(text)


def _split(path: PathLike, number: int, line: str) -> list[str]:
    """A CSV line's fields (quoted fields as Python's csv module reads them)."""
    if '"' not in line:
        return line.split(",")
    try:
        return next(csv.reader([line], strict=True))
    except csv.Error as error:
        raise RapporFileError(path, number, "(line)", f"not CSV: {error}") from None


def _check_header(path: PathLike, lines: list[str], header: str) -> None:
    """The first line must name ``header``'s fields, quoted or not (Google's analysis app
    ships ``"k","h","m","p","q","f"``, as R's ``write.csv`` writes it)."""
    if lines and (lines[0] == header or _split(path, 1, lines[0]) == header.split(",")):
        return
    found = _shown(lines[0]) if lines else "an empty file"
    raise RapporFileError(path, 1, "(header)", f"expected {header!r}, got {found}")


def _join(fields: Sequence[str]) -> str:
    """One CSV line as Python's csv module writes it (quoted only when needed)."""
    if not any(_SPECIAL.search(f) for f in fields):
        return ",".join(fields)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(fields)
    return buffer.getvalue()


def _integer(
    path: PathLike,
    number: int,
    field: str,
    text: str,
    maximum: int = MAX_INTEGER,
    why: str = "an int64",
) -> int:
    """A canonical non-negative integer of at most ``maximum``, refused before conversion
    when it has more digits than ``maximum`` (no overflow, no 10 MB conversion)."""
    if not _INTEGER.fullmatch(text):
        raise RapporFileError(path, number, field, f"{_shown(text)} is not a non-negative integer")
    if len(text) > len(str(maximum)) or int(text) > maximum:
        problem = f"{_shown(text)} exceeds {maximum} ({why})"
        raise RapporFileError(path, number, field, problem)
    return int(text)


def _bits(
    path: PathLike, numbers: Sequence[int], field: str, strings: Sequence[str], k: int
) -> np.ndarray:
    """k-bit strings, most significant bit first, as packed report bits (n, ⌈k/8⌉)."""
    if not strings:
        return np.zeros((0, -(-k // 8)), dtype=np.uint8)
    lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    wrong = np.flatnonzero(lengths != k)
    if wrong.size:
        row = int(wrong[0])
        problem = f"{lengths[row]} characters, expected k = {k} bits"
        raise RapporFileError(path, numbers[row], field, problem)
    joined = "".join(strings)
    chars = np.frombuffer(joined.encode("utf-8", "surrogateescape"), dtype=np.uint8)
    if chars.size != len(strings) * k:  # a character outside ASCII
        row = next(r for r, text in enumerate(strings) if not text.isascii())
        problem = f"{_shown(strings[row])} holds characters other than 0 and 1"
        raise RapporFileError(path, numbers[row], field, problem)
    chars = chars.reshape(len(strings), k)
    bad = (chars != ord("0")) & (chars != ord("1"))
    if bad.any():
        row = int(np.argmax(bad.any(axis=1)))
        problem = f"{_shown(strings[row])} holds characters other than 0 and 1"
        raise RapporFileError(path, numbers[row], field, problem)
    return pack(chars[:, ::-1] == ord("1"))  # the first character is bit k-1


def _cohorts(path: PathLike, numbers: Sequence[int], texts: Sequence[str], m: int) -> np.ndarray:
    """Cohort fields as int64, each a canonical integer in [0, m).

    A field with more digits than m - 1 is refused before any conversion: numpy would
    otherwise make a fixed-width string array as wide as the widest field for every row.
    """
    digits = len(str(m - 1))
    for row, text in enumerate(texts):
        if not (text.isascii() and text.isdigit() and (text[0] != "0" or text == "0")):
            _integer(path, numbers[row], "cohort", text)  # raises, naming the line
        if len(text) > digits:
            raise RapporFileError(
                path, numbers[row], "cohort", f"{_shown(text)} is not in [0, m = {m})"
            )
    cohorts = np.array(texts, dtype=str).astype(np.int64) if texts else np.zeros(0, np.int64)
    above = np.flatnonzero(cohorts >= m)
    if above.size:
        row = int(above[0])
        raise RapporFileError(
            path, numbers[row], "cohort", f"{cohorts[row]} is not in [0, m = {m})"
        )
    return cohorts


def _bit_strings(bits: np.ndarray, k: int) -> list[str]:
    """Packed report bits as k-bit strings, most significant bit (k-1) first."""
    chars = np.ascontiguousarray(unpack(bits, k)[:, ::-1].astype(np.uint8) + ord("0"))
    return [row.decode("ascii") for row in chars.view(f"S{k}").ravel().tolist()] if k else []


# ------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class RapporParams:
    """google/rappor's parameters (its params CSV ``k,h,m,p,q,f``).

    Parameters
    ----------
    k : int
        Bloom filter bits.
    h : int
        Hash functions.
    m : int
        Cohorts.
    p, q : float
        The IRR: a 0 becomes 1 w.p. p, a 1 stays 1 w.p. q.
    f : float
        The PRR's probability of randomizing a bit, as configured (each client realises
        it its own way: :func:`ldp.oracles.rappor.realised_f`).
    """

    k: int
    h: int
    m: int
    p: float
    q: float
    f: float

    def oracle(self, client: str | None = "python", *, allow_no_noise: bool = False) -> RAPPOR:
        """The :class:`~ldp.oracles.rappor.RAPPOR` these parameters describe, for reports of
        ``client`` (:func:`ldp.oracles.rappor.google.google_rappor`)."""
        return google_rappor(
            k=self.k,
            h=self.h,
            m=self.m,
            f=self.f,
            p=self.p,
            q=self.q,
            client=client,
            allow_no_noise=allow_no_noise,
        )


def read_params(path: PathLike) -> RapporParams:
    """Read a parameters CSV: the header ``k,h,m,p,q,f`` and one row.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    RapporParams

    Raises
    ------
    RapporFileError
        A wrong header, a missing or extra row, a field that is not a number or out of
        range (k, h, m >= 1; p, q, f in [0, 1]).
    """
    lines = _read_lines(path)
    _check_header(path, lines, PARAMS_HEADER)
    if len(lines) != 2:
        raise RapporFileError(
            path,
            min(len(lines), 3),
            "(line)",
            f"expected one row of parameters, got {len(lines) - 1}",
        )
    fields = _split(path, 2, lines[1])
    names = PARAMS_HEADER.split(",")
    if len(fields) != len(names):
        raise RapporFileError(
            path, 2, "(line)", f"{len(fields)} fields, expected 6 ({PARAMS_HEADER})"
        )
    values: dict[str, float | int] = {}
    for name, text in zip(names, fields, strict=True):
        if name in "khm":
            if name == "m":
                why = "2^32: the reference hashes a cohort as 4 bytes"
                values[name] = _integer(path, 2, name, text, MAX_COHORTS, why)
            else:
                values[name] = _integer(path, 2, name, text)
            if values[name] < 1:
                raise RapporFileError(path, 2, name, f"must be >= 1, got {text}")
        else:
            try:
                number = float(text)
            except ValueError:
                raise RapporFileError(path, 2, name, f"{_shown(text)} is not a number") from None
            if not 0.0 <= number <= 1.0:
                raise RapporFileError(path, 2, name, f"must lie in [0, 1], got {_shown(text)}")
            values[name] = number
    return RapporParams(**values)


def write_params(path: PathLike, params: RapporParams) -> None:
    """Write a parameters CSV (header ``k,h,m,p,q,f``, one row, LF line ends)."""
    row = [str(int(params.k)), str(int(params.h)), str(int(params.m))]
    row += [repr(float(x)) for x in (params.p, params.q, params.f)]
    _write_lines(path, [PARAMS_HEADER, ",".join(row)], "\n")


# ------------------------------------------------------------------ reports
@dataclass(frozen=True)
class ReportsTable:
    """The rows of a reports CSV.

    Parameters
    ----------
    clients : tuple of str
        Each report's client id, as written.
    irr : RapporReports
        Each report's cohort and IRR bits (what a server receives).
    bloom, prr : RapporReports or None
        The Bloom filter and the PRR of each report when the file has them (a simulation's
        output), None when the columns are empty (a server's).
    """

    clients: tuple[str, ...]
    irr: RapporReports
    bloom: RapporReports | None = None
    prr: RapporReports | None = None

    def __post_init__(self) -> None:
        n = self.irr.bits.shape[0]
        if len(self.clients) != n:
            raise ValueError(f"clients must hold one id per report ({n}), got {len(self.clients)}")
        for name in ("bloom", "prr"):
            part = getattr(self, name)
            if part is not None and (part.bits.shape[0] != n or part.k != self.irr.k):
                raise ValueError(f"{name} must hold {n} reports of k = {self.irr.k} bits")


def read_reports(path: PathLike, params: RapporParams) -> ReportsTable:
    """Read a reports CSV (header ``client,cohort,bloom,prr,irr``).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    params : RapporParams
        Its k (the bit strings' length) and m (cohorts lie in [0, m)).

    Returns
    -------
    ReportsTable
        Bit strings are read most significant bit first (character 0 is bit k-1).

    Raises
    ------
    RapporFileError
        A wrong header, a row without 5 fields, a cohort that is not an integer in
        [0, m), a bit string that is not k characters of 0 and 1, ``bloom`` or ``prr``
        given on some rows only.
    """
    lines = _read_lines(path)
    _check_header(path, lines, REPORTS_HEADER)
    rows = [
        line.split(",") if '"' not in line else _split(path, number, line)
        for number, line in enumerate(lines[1:], start=2)
    ]
    for number, fields in enumerate(rows, start=2):
        if len(fields) != 5:
            raise RapporFileError(path, number, "(line)", f"{len(fields)} fields, expected 5")
    clients, cohort_texts, *columns = zip(*rows, strict=True) if rows else [()] * 5
    numbers = range(2, len(lines) + 1)
    cohorts = _cohorts(path, numbers, cohort_texts, params.m)
    parts: dict[str, RapporReports | None] = {}
    for name, strings in zip(("bloom", "prr", "irr"), columns, strict=True):
        if name != "irr" and not any(strings):
            parts[name] = None
            continue
        bits = _bits(path, numbers, name, strings, params.k)
        parts[name] = RapporReports(cohorts, bits, params.k)
    return ReportsTable(tuple(clients), **parts)


def write_reports(
    path: PathLike, reports: ReportsTable | RapporReports, *, clients: Sequence[str] | None = None
) -> None:
    """Write a reports CSV as the reference's simulator does (CRLF line ends).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    reports : ReportsTable or RapporReports
        The rows; plain reports get empty ``bloom`` and ``prr`` columns.
    clients : sequence of str, optional
        Client ids for plain reports (default 1, 2, ..., n).
    """
    if isinstance(reports, RapporReports):
        n = reports.bits.shape[0]
        ids = (
            tuple(str(c) for c in clients)
            if clients is not None
            else tuple(map(str, range(1, n + 1)))
        )
        reports = ReportsTable(ids, reports)
    irr, k = reports.irr, reports.irr.k
    n = irr.bits.shape[0]
    columns = [
        _bit_strings(part.bits, k) if part is not None else [""] * n
        for part in (reports.bloom, reports.prr, irr)
    ]
    ids = [_join([c]) if _SPECIAL.search(c) else c for c in reports.clients]
    rows = [
        f"{client},{cohort},{bloom},{prr},{bits}"
        for client, cohort, bloom, prr, bits in zip(
            ids, irr.cohorts.tolist(), *columns, strict=True
        )
    ]
    _write_lines(path, [REPORTS_HEADER, *rows], CSV_NEWLINE)


# ------------------------------------------------------------------ candidates and map
def read_candidates(path: PathLike) -> list[str]:
    """Read a candidates file: one string per line.

    Raises
    ------
    RapporFileError
        An empty line, a line with leading or trailing white space (the reference's hash
        tool strips it, so the string it hashes would not be the one written), a
        candidate given twice.
    """
    seen: dict[str, int] = {}
    for number, line in enumerate(_read_lines(path), start=1):
        if not line or line != line.strip():
            problem = "empty" if not line else f"{_shown(line)} has leading or trailing white space"
            raise RapporFileError(path, number, "candidate", problem)
        if line in seen:
            problem = f"{_shown(line)} repeats line {seen[line]}"
            raise RapporFileError(path, number, "candidate", problem)
        seen[line] = number
    return list(seen)


def write_candidates(path: PathLike, candidates: Sequence[str]) -> None:
    """Write a candidates file: one string per line, LF line ends."""
    _write_lines(path, list(candidates), "\n")


@dataclass(frozen=True)
class CandidateMap:
    """The candidates' Bloom bits in every cohort (the reference's hash tool's output).

    Parameters
    ----------
    candidates : tuple of str
        The candidate strings.
    positions : numpy.ndarray
        int64 (m, C, h): the bit b in [0, k) hash i sets for candidate j in cohort c (the
        file writes c k + b + 1).
    k : int
        Bloom filter bits.
    """

    candidates: tuple[str, ...]
    positions: np.ndarray
    k: int


def candidate_map(candidates: Sequence[str], params: RapporParams) -> CandidateMap:
    """Hash candidates as google/rappor's ``hash_candidates.py`` does (MD5 Bloom bits)."""
    strings = tuple(candidates)
    encoded = [c.encode("utf-8", "surrogateescape") for c in strings]
    return CandidateMap(strings, bloom_table(encoded, params.m, params.h, params.k), params.k)


def read_candidate_map(path: PathLike, params: RapporParams) -> CandidateMap:
    """Read a candidate map: per row a string and its m h positions c k + b + 1.

    Two forms are read.  The reference's ``hash_candidates.py`` writes every position, h
    per cohort in hash order.  Google's R analysis (``CreateMap``) writes each string's
    *distinct* positions, sorted, and pads the shorter rows with empty fields (two hashes
    that set the same bit give one position); its names may be quoted.  A padded row is
    read in the second form, by cohort (position p belongs to cohort (p - 1) // k), and a
    cohort's positions are repeated to h, which sets the same Bloom bits.

    Raises
    ------
    RapporFileError
        A row of more than 1 + m h fields, or fewer without padding; a position that is
        not an integer in cohort c's range [c k + 1, c k + k] (the i-th position of a
        full row belongs to cohort i // h); in a padded row, a cohort with no position
        or more than h, or positions out of order.
    """
    m, h, k = params.m, params.h, params.k
    strings, rows = [], []
    for number, line in enumerate(_read_lines(path), start=1):
        fields = _split(path, number, line)
        texts = fields[1:]
        while texts and texts[-1] == "":
            texts.pop()
        if len(texts) == m * h and len(fields) == 1 + m * h:
            row = _full_row(path, number, texts, params)
        elif 1 <= len(texts) < len(fields) - 1 <= m * h:  # padded: R's form
            row = _sparse_row(path, number, texts, params)
        else:
            raise RapporFileError(
                path, number, "(line)", f"{len(fields)} fields, expected 1 + m h = {1 + m * h}"
            )
        strings.append(fields[0])
        rows.append(row)
    positions = np.array(rows, dtype=np.int64).reshape(len(rows), m, h).transpose(1, 0, 2)
    return CandidateMap(tuple(strings), np.ascontiguousarray(positions), k)


def _full_row(path: PathLike, number: int, texts: Sequence[str], params: RapporParams) -> list:
    """The m h positions of the reference's form, as bits: the i-th in cohort i // h."""
    h, k = params.h, params.k
    row = []
    for i, text in enumerate(texts):
        cohort, field = i // h, f"position {i + 1}"
        value = _integer(path, number, field, text)
        low = cohort * k + 1
        if not low <= value <= low + k - 1:
            raise RapporFileError(
                path, number, field, f"{value} is not in cohort {cohort}'s [{low}, {low + k - 1}]"
            )
        row.append(value - low)
    return row


def _sparse_row(path: PathLike, number: int, texts: Sequence[str], params: RapporParams) -> list:
    """The distinct sorted positions of R's ``CreateMap``, each cohort's repeated to h."""
    m, h, k = params.m, params.h, params.k
    values = [_integer(path, number, f"position {i + 1}", t) for i, t in enumerate(texts)]
    if any(b <= a for a, b in zip(values, values[1:], strict=False)):
        raise RapporFileError(
            path, number, "(line)", "a padded row's positions must be distinct and sorted"
        )
    bits: list[list[int]] = [[] for _ in range(m)]
    for i, value in enumerate(values):
        if not 1 <= value <= m * k:
            raise RapporFileError(
                path, number, f"position {i + 1}", f"{value} is not in [1, m k = {m * k}]"
            )
        bits[(value - 1) // k].append((value - 1) % k)
    for cohort, chosen in enumerate(bits):
        if not 1 <= len(chosen) <= h:
            raise RapporFileError(
                path,
                number,
                "(line)",
                f"cohort {cohort} has {len(chosen)} positions, expected 1 to h = {h}",
            )
    return [chosen[min(i, len(chosen) - 1)] for chosen in bits for i in range(h)]


def write_candidate_map(path: PathLike, mapping: CandidateMap) -> None:
    """Write a candidate map as the reference's hash tool does (CRLF line ends)."""
    m, count, h = mapping.positions.shape
    offsets = (np.arange(m, dtype=np.int64) * mapping.k + 1)[:, None, None]
    columns = (mapping.positions + offsets).transpose(1, 0, 2).reshape(count, m * h)
    rows = [
        _join([string, *map(str, row)])
        for string, row in zip(mapping.candidates, columns.tolist(), strict=True)
    ]
    _write_lines(path, rows, CSV_NEWLINE)


# ------------------------------------------------------------------ bit counts
def check_counters(params: RapporParams, path: PathLike, line: int = 2) -> None:
    """Refuse parameters whose m x k bit counters would exceed the memory budget.

    Raised as a :class:`RapporFileError` of ``path`` (the parameters file, or the counts
    file whose m rows of k + 1 counts they describe), naming the larger of m and k.
    """
    m, k = params.m, params.k
    size, limit = float(COUNTER_BYTES) * m * k, budget.current().memory_bytes
    if size > limit:
        field = "m" if m >= k else "k"
        raise RapporFileError(
            path,
            line,
            field,
            f"the m x k = {m} x {k} bit counters would take {budget.format_bytes(size)}, "
            f"over the {budget.format_bytes(limit)} memory budget; {budget.HOW_TO_RAISE}",
        )


def check_hashing(params: RapporParams, path: PathLike) -> None:
    """Refuse parameters the reference's hash tool cannot use, naming the field of ``path``:
    h above 16 (MD5 gives one byte per hash), an m x h table of positions for a single
    candidate above :data:`ldp.oracles.rappor.MAX_CELLS` cells."""
    if params.h > MAX_HASHES:
        problem = f"must be <= {MAX_HASHES} (MD5 gives 16 bytes, one per hash), got {params.h}"
        raise RapporFileError(path, 2, "h", problem)
    if params.m * params.h > MAX_CELLS:
        raise RapporFileError(
            path,
            2,
            "m",
            f"must be <= {MAX_CELLS // params.h} for h = {params.h}: one candidate's m x h "
            f"positions would exceed the limit of {MAX_CELLS:,} cells",
        )


def read_counts(path: PathLike, params: RapporParams) -> CohortCounts:
    """Read the per-cohort bit counts (the reference's ``sum_bits.py`` output).

    Row c (c = 0..m-1) holds n_c, then Y_c0, ..., Y_c(k-1): the number of reports of
    cohort c with bit b set, bit 0 first.

    Raises
    ------
    RapporFileError
        Not m rows, a row without k + 1 fields, a count that is not a non-negative
        integer or exceeds the cohort's n_c.
    """
    lines = _read_lines(path)
    if len(lines) != params.m:
        raise RapporFileError(
            path,
            min(len(lines), params.m) + 1,
            "(line)",
            f"{len(lines)} rows, expected m = {params.m}",
        )
    check_counters(params, path, 1)
    ones = np.zeros((params.m, params.k), dtype=np.int64)
    reports = np.zeros(params.m, dtype=np.int64)
    for number, line in enumerate(lines, start=1):
        fields = _split(path, number, line)
        if len(fields) != params.k + 1:
            raise RapporFileError(
                path, number, "(line)", f"{len(fields)} fields, expected k + 1 = {params.k + 1}"
            )
        reports[number - 1] = total = _integer(path, number, "reports", fields[0])
        for b, text in enumerate(fields[1:]):
            ones[number - 1, b] = count = _integer(path, number, f"bit {b}", text)
            if count > total:
                raise RapporFileError(path, number, f"bit {b}", f"{count} > {total} reports")
    return CohortCounts(ones, reports)


def sum_bits(reports: RapporReports, m: int) -> CohortCounts:
    """The per-cohort bit counts of reports (the reference's ``sum_bits.py``).

    Parameters
    ----------
    reports : RapporReports
        Cohorts in [0, m) and k-bit reports.
    m : int
        Cohorts.

    Returns
    -------
    CohortCounts
        ``ones[c, b]``: reports of cohort c with bit b set; ``reports[c]``: n_c.
    """
    k, cohorts = reports.k, np.asarray(reports.cohorts, dtype=np.int64)
    if cohorts.size and (cohorts.min() < 0 or cohorts.max() >= m):
        raise ValueError(f"cohorts must lie in [0, m = {m})")
    budget.check_memory(
        "m",
        m,
        f"<= {budget.current().memory_bytes // (COUNTER_BYTES * max(k, 1))} for k = {k}",
        float(COUNTER_BYTES) * m * k,
        f"the m x k = {m} x {k} bit counters",
    )
    ones = np.zeros(m * k, dtype=np.int64)
    offsets = np.arange(k, dtype=np.int64)
    rows = max(1, (1 << 22) // max(k, 1))
    for start in range(0, cohorts.shape[0], rows):
        bits = unpack(reports.bits[start : start + rows], k)
        cells = cohorts[start : start + rows, None] * k + offsets
        ones += np.bincount(cells[bits], minlength=m * k)
    return CohortCounts(ones.reshape(m, k), np.bincount(cohorts, minlength=m).astype(np.int64))


def write_counts(path: PathLike, counts: CohortCounts) -> None:
    """Write per-cohort bit counts as ``sum_bits.py`` does: n_c, then bit 0..k-1 (CRLF)."""
    ones, reports = (np.asarray(part) for part in counts)
    rows = [
        ",".join(map(str, [total, *row]))
        for total, row in zip(reports.tolist(), ones.tolist(), strict=True)
    ]
    _write_lines(path, rows, CSV_NEWLINE)


# ------------------------------------------------------------------ decoding
#: Why a candidate has no standard error (the ``note`` column of the results).
NOT_SELECTED = "not selected by the LASSO: 0 by selection, not a fit, so no standard error"


def decode_files(
    params: PathLike,
    reports: PathLike | None = None,
    candidates: PathLike | None = None,
    *,
    counts: PathLike | None = None,
    candidate_map_file: PathLike | None = None,
    client: str | None = "python",
    allow_no_noise: bool = False,
    alpha: float = 0.05,
    penalty: float | None = None,
) -> pd.DataFrame:
    """Decode a RAPPOR collection from google/rappor's files.

    Parameters
    ----------
    params : path
        The parameters CSV.
    reports : path, optional
        The reports CSV (its ``irr`` column); or give ``counts``.
    candidates : path, optional
        The candidates file (hashed here); or give ``candidate_map_file``.
    counts : path, optional
        The per-cohort bit counts instead of the reports.
    candidate_map_file : path, optional
        The candidate map instead of the candidates.
    client : {"python", "cpp"} or None, default "python"
        Which client made the reports, for the realised f
        (:func:`ldp.oracles.rappor.realised_f`); None for f as written (the reference's R
        simulator).
    allow_no_noise : bool, default False
        Accept parameters without noise (ε = ∞; Google's encoding tests).
    alpha : float, default 0.05
        Family-wise level of the detection cut-off (Bonferroni over the candidates).
    penalty : float, optional
        The LASSO's λ (default: the universal threshold).

    Returns
    -------
    pandas.DataFrame
        One row per candidate, largest estimate first: ``string``, ``estimate`` (count),
        ``std_error``, ``proportion`` (estimate / n), ``prop_std_error``, ``prop_low_95``
        and ``prop_high_95`` (proportion ± 1.96 SE, clipped to [0, 1]; the reference's
        columns so far), then ``selected``, ``detected`` and ``note`` (why a standard
        error is missing).  ``attrs`` holds the
        number of reports ``n``, the LASSO's ``penalty`` and the realised probabilities
        (``f``, ``p``, ``q``, ``p_star``, ``q_star``, ``epsilon_inf``, ``epsilon_one``).
    """
    if (reports is None) == (counts is None):
        raise TypeError("give exactly one of reports (a reports CSV) and counts (bit counts)")
    if (candidates is None) == (candidate_map_file is None):
        raise TypeError("give exactly one of candidates and candidate_map_file")
    parameters = read_params(params)
    check_counters(parameters, params)
    if candidates is not None:
        check_hashing(parameters, params)
    oracle = parameters.oracle(client, allow_no_noise=allow_no_noise)
    if reports is not None:
        collected = sum_bits(read_reports(reports, parameters).irr, parameters.m)
    else:
        collected = read_counts(counts, parameters)
    if candidates is not None:
        mapping = candidate_map(read_candidates(candidates), parameters)
    else:
        mapping = read_candidate_map(candidate_map_file, parameters)
    result = decode(oracle, collected, mapping.positions, alpha=alpha, penalty=penalty)
    n = int(np.sum(collected.reports))
    proportion, prop_std_error = result.estimates / max(n, 1), result.std_errors / max(n, 1)
    frame = pd.DataFrame(
        {
            "string": list(mapping.candidates),
            "estimate": result.estimates,
            "std_error": result.std_errors,
            "proportion": proportion,
            "prop_std_error": prop_std_error,
            "prop_low_95": np.clip(proportion - 1.96 * prop_std_error, 0.0, 1.0),
            "prop_high_95": np.clip(proportion + 1.96 * prop_std_error, 0.0, 1.0),
            "selected": result.selected,
            "detected": result.detected,
            "note": np.where(result.selected, "", NOT_SELECTED),
        }
    )
    frame = frame.sort_values("estimate", ascending=False, kind="stable").reset_index(drop=True)
    frame.attrs.update(n=n, penalty=result.penalty, **oracle.realised)
    return frame


def write_results(path: PathLike, results: pd.DataFrame) -> None:
    """Write :func:`decode_files`' table as CSV (NaN as an empty field)."""
    results.to_csv(path, index=False, lineterminator="\n")


# ------------------------------------------------------------------ command line
_CLIENTS = {"python": "python", "cpp": "cpp", "r": None}


def _parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or "python -m ldp.io.rappor",
        description="google/rappor's files: decode, hash candidates, sum bits.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("decode", help="estimates, standard errors and detections")
    run.add_argument("--params", required=True, help="parameters CSV (k,h,m,p,q,f)")
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--reports", help="reports CSV (client,cohort,bloom,prr,irr)")
    source.add_argument("--counts", help="per-cohort bit counts (sum_bits output)")
    strings = run.add_mutually_exclusive_group(required=True)
    strings.add_argument("--candidates", help="candidates, one per line")
    strings.add_argument("--map", help="candidate map (hash_candidates output)")
    run.add_argument(
        "--client",
        choices=sorted(_CLIENTS),
        default="python",
        help="the client that made the reports: its rounding of f (r: f as written)",
    )
    run.add_argument("--alpha", type=float, default=0.05, help="family-wise detection level")
    run.add_argument(
        "--allow-no-noise",
        action="store_true",
        help="accept f = 0 with p = 0 or q = 1 (epsilon = inf; encoding tests only)",
    )
    run.add_argument("--out", help="results CSV (default: standard output)")
    # Google's interface too: hash_candidates.py params.csv < candidates > map, and
    # sum_bits.py params.csv < reports > counts (``-``: standard input or output)
    hashing = commands.add_parser("hash-candidates", help="candidates -> candidate map")
    hashing.add_argument("params_file", nargs="?", help="parameters CSV (or --params)")
    hashing.add_argument("--params")
    hashing.add_argument("--candidates", default="-", help="default: standard input")
    hashing.add_argument("--out", default="-", help="default: standard output")
    summing = commands.add_parser("sum-bits", help="reports -> per-cohort bit counts")
    summing.add_argument("params_file", nargs="?", help="parameters CSV (or --params)")
    summing.add_argument("--params")
    summing.add_argument("--reports", default="-", help="default: standard input")
    summing.add_argument("--out", default="-", help="default: standard output")
    return parser


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """The command line: ``python -m ldp.io.rappor decode --params ... --reports ...``
    (``prog``: the name its usage shows).

    Returns 0 on success, 1 when a file or parameter is refused (the message on standard
    error names it); argparse exits with 2 on a bad command line.
    """
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.command != "decode":
        if (args.params is None) == (args.params_file is None):
            parser.error(f"{args.command}: give the parameters file once (PARAMS or --params)")
        args.params = args.params or args.params_file
    try:
        if args.command == "decode":
            results = decode_files(
                args.params,
                args.reports,
                args.candidates,
                counts=args.counts,
                candidate_map_file=args.map,
                client=_CLIENTS[args.client],
                allow_no_noise=args.allow_no_noise,
                alpha=args.alpha,
            )
            info = results.attrs
            print(
                f"n = {info['n']} reports, {int(results['detected'].sum())} of {len(results)} "
                f"candidates detected; realised f = {info['f']:.6g}, p = {info['p']:.6g}, "
                f"q = {info['q']:.6g}: epsilon_inf = {info['epsilon_inf']:.4f}, epsilon_1 = "
                f"{info['epsilon_one']:.4f}",
                file=sys.stderr,
            )
            write_results(args.out if args.out else sys.stdout, results)
        elif args.command == "hash-candidates":
            params = read_params(args.params)
            check_hashing(params, args.params)
            write_candidate_map(args.out, candidate_map(read_candidates(args.candidates), params))
        else:
            params = read_params(args.params)
            check_counters(params, args.params)
            table = read_reports(args.reports, params)
            write_counts(args.out, sum_bits(table.irr, params.m))
    except (ValueError, OSError) as error:  # RapporFileError, ParameterError: named causes
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
