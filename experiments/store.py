"""The results store: one tidy long table per experiment, written in small atomic parts.

Layout under ``<results_dir>/<experiment>/``::

    parts/<setting key>/<first>-<last>.csv.gz   rows of trials first..last of one setting
    settings/<setting key>.json                 the setting's resolved config, for humans
    code/<setting key>.json                     the code that computed it (see below)
    table.csv.gz                                all valid rows, refreshed after each run

A part is written to a temporary name in its own directory and then ``os.replace``d, so
a crash or Ctrl-C leaves either a whole part or none.  Each CSV part ends with a footer
line ``#ldp-end rows=<N> sha256=<hex>`` over the bytes before it (Parquet parts carry the
row count in their metadata); a part that does not decompress, lacks its footer or fails
its checksum is *reported by name and excluded*, never silently used.  Parts stay readable
by plain pandas: ``pd.read_csv(path, comment="#", dtype=TEXT_COLUMNS)`` (the key columns
as text: a hex key such as ``9452459e63517589`` otherwise parses as a number).

A part is trusted only if its rows say what its name says: every row's ``config_hash`` is
the setting's key (the part's directory) and its ``trial`` values are exactly the part's
range; a part copied over another setting's, or renamed to cover more trials, is corrupt.
Which trials are done is read from the checked parts, so a rerun skips them; after a run
the parts of a setting are merged into one part per contiguous range of trials
(:meth:`ResultsStore.compact`).

Runs that share a results directory take a lock per setting (``locks/<key>.lock``, an
``fcntl`` lock released by the kernel when the process dies), so two runs of one setting
never compute or compact it at once; a later run waits and then finds the trials done.
Temporary files left by a killed run (``.*.tmp``) are removed when a run takes the lock.

A setting's key includes the digest of the code that computes its rows
(:mod:`experiments.codedigest`), so the same config under edited code is another setting.
``code/<key>.json`` records its *base key* (the key without the digest), the digest, the
SHA-256 of each file and when a run last used it: :meth:`ResultsStore.superseded` names the
settings a later run recomputed under other code (their rows are left out of
``table.csv.gz``), and a run names the files that changed.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import gzip
import hashlib
import io
import itertools
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.names import plain_name
from ldp.io.files import TEMPORARY, atomic_write_bytes

PART_NAME = re.compile(r"^(\d+)-(\d+)\.(csv\.gz|csv|parquet)$")
FOOTER = b"#ldp-end"
#: Columns that identify a row: a setting, a trial, a metric and (optionally) an item.
ROW_KEY = ["config_hash", "trial", "metric", "item"]
#: Columns read as text whatever they look like: a hex key of digits and one "e" is a float
#: to pandas (``9452459e63517589`` is inf), one of digits an integer without its leading
#: zeros; versions such as ``1.10`` would lose a digit.
TEXT_COLUMNS = {
    c: str
    for c in ("config_hash", "git_commit", "ldp_version", "numpy_version")
    + ("plugin", "plugin_version", "code_digest")
}


class CorruptPartError(ValueError):
    """A part file that cannot be trusted; the message names the file and the reason."""


class CorruptPartWarning(UserWarning):
    """Emitted (once per file) when a corrupt part is excluded."""


class ResultsDirError(ValueError):
    """The results directory cannot take the run's results (read-only, not a directory,
    full)."""

    @classmethod
    def writing(cls, directory: Path, error: OSError) -> ResultsDirError:
        """The one line for ``error`` raised while a run wrote to ``directory`` (a full
        disk, a directory gone or made read-only midway): what is kept and what to do."""
        where = error.filename or directory
        remedy = "free space or choose" if error.errno == errno.ENOSPC else "choose a writable"
        return cls(
            f"results_dir: cannot write {where}: {error.strerror or error}; the trials "
            f"recorded so far are kept: {remedy} results_dir=..., then rerun the same "
            "command to resume"
        )


def unusable(directory: Path) -> str | None:
    """Why ``directory`` (existing or to be created) cannot hold results at all, or None.

    A read-only directory is usable: a rerun with every trial recorded reads it and writes
    nothing (Hydra's logs then go to :func:`experiments.names.log_root`'s temp directory);
    with trials to run the store refuses it before the first
    (``ResultsStore.check_writable``).  A missing directory under a read-only one cannot be
    created, and is unusable.
    """
    wanted = Path(directory).absolute()
    existing = wanted
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is not a directory"
    if existing != wanted and not os.access(existing, os.W_OK):
        return f"{existing} is read-only"
    return None


@dataclass(frozen=True, order=True)
class Part:
    """One part file: the trials ``first..last`` (inclusive) of setting ``key``."""

    first: int
    last: int
    key: str
    path: Path

    @property
    def trials(self) -> range:
        return range(self.first, self.last + 1)


# ------------------------------------------------------------------------ encoding
#: gzip level of parts and tables: 6 is ~3x faster than 9 on these small files, ~same size.
GZIP_LEVEL = 6


@dataclass(frozen=True)
class Rows:
    """Rows as plain tuples under ``columns``: what a trial batch returns, written to CSV
    without building a DataFrame (the part writer is most of the harness's overhead)."""

    columns: tuple[str, ...]
    values: list[tuple[Any, ...]]

    def __len__(self) -> int:
        return len(self.values)

    def to_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.values, columns=list(self.columns))
        if "item" in frame.columns:
            frame["item"] = frame["item"].astype("Int64")
        return frame


def _cell(value: Any) -> Any:
    """A cell as pandas' ``to_csv`` writes it: empty for None/NaN, floats by repr."""
    if value is None:
        return ""
    if isinstance(value, float):  # numpy's float64 too, whose repr is "np.float64(...)"
        return "" if math.isnan(value) else repr(float(value))
    return value


def _footer(body: bytes, rows: int) -> bytes:
    return f"{FOOTER.decode()} rows={rows} sha256={hashlib.sha256(body).hexdigest()}\n".encode()


def encode_csv(frame: pd.DataFrame | Rows, compress: bool) -> bytes:
    """CSV bytes with the checksum footer, gzipped (deterministically) if ``compress``."""
    if isinstance(frame, Rows):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(frame.columns)
        writer.writerows([_cell(v) for v in row] for row in frame.values)
        body = buffer.getvalue().encode()
    else:
        body = frame.to_csv(index=False, lineterminator="\n").encode()
    data = body + _footer(body, len(frame))
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0) if compress else data


def _checked_body(data: bytes, compressed: bool) -> tuple[bytes, int]:
    """The CSV body of a part (header included) and its row count, checksum verified."""
    try:
        text = gzip.decompress(data) if compressed else data
    except (OSError, EOFError, ValueError) as error:  # truncated or bad gzip stream
        raise CorruptPartError(f"not a complete gzip stream ({error})") from None
    cut = text.rfind(b"\n" + FOOTER)
    if cut < 0:
        raise CorruptPartError("no end-of-part footer (truncated?)")
    body, footer = text[: cut + 1], text[cut + 1 :].decode(errors="replace").strip()
    match = re.fullmatch(r"#ldp-end rows=(\d+) sha256=([0-9a-f]{64})", footer)
    if match is None:
        raise CorruptPartError(f"malformed footer {footer[:60]!r}")
    if hashlib.sha256(body).hexdigest() != match.group(2):
        raise CorruptPartError("checksum mismatch")
    return body, int(match.group(1))


def merge_csv(paths: list[Path], compressed: bool) -> bytes | None:
    """One part's bytes from several CSV parts with the same header, checksums verified,
    without parsing them; None when the headers differ (then merge through pandas)."""
    bodies = []
    for path in paths:
        try:
            bodies.append(_checked_body(path.read_bytes(), compressed))
        except (CorruptPartError, OSError) as error:
            raise CorruptPartError(f"{path}: {error}") from None
    headers = {body.split(b"\n", 1)[0] for body, _ in bodies}
    if len(headers) != 1:
        return None
    first = bodies[0][0]
    body = first + b"".join(b.split(b"\n", 1)[1] for b, _ in bodies[1:])
    data = body + _footer(body, sum(rows for _, rows in bodies))
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0) if compressed else data


#: The cells pandas reads as missing by default (``pd.read_csv``'s ``na_values``).
MISSING_CELLS = (
    *("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND"),
    *("1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"),
)
#: Prefix of the columns of a protocol's effective parameters, where "None" is a value.
EFFECTIVE = "effective."


def _missing_cells(body: bytes) -> dict[str, Any]:
    """``read_csv`` options under which an ``effective.*`` cell "None" stays the text "None"
    (the protocol's effective value) while every other column reads as pandas reads it."""
    header = next(csv.reader([body.split(b"\n", 1)[0].decode()]), [])
    if not any(name.startswith(EFFECTIVE) for name in header):
        return {}
    missing = {name: [""] if name.startswith(EFFECTIVE) else list(MISSING_CELLS) for name in header}
    return {"keep_default_na": False, "na_values": missing}


def decode_csv(data: bytes, compressed: bool) -> pd.DataFrame:
    """Check and parse the bytes of a CSV part; CorruptPartError if anything is off."""
    body, rows = _checked_body(data, compressed)
    frame = pd.read_csv(io.BytesIO(body), dtype=TEXT_COLUMNS, **_missing_cells(body))
    if len(frame) != rows:
        raise CorruptPartError(f"{len(frame)} rows where the footer says {rows}")
    return frame


#: The most CSV text (bytes) :meth:`ResultsStore.load` parses in one call.
TOGETHER_BYTES = 64 * 2**20
#: Cells ``read_csv`` reads as booleans.
BOOLEAN_CELLS = ("True", "False", "TRUE", "FALSE", "true", "false")


@dataclass(frozen=True)
class Parsed:
    """CSV bodies with one header parsed as one frame: body i is rows ``ends[i]`` to
    ``ends[i + 1]``; ``empty[i]`` holds the text columns with no cell in it (read alone,
    such a column is float NaN: :meth:`ResultsStore.load` types the joined table so), and
    ``retyped[i]`` says whether read alone it would type a text column otherwise (every
    cell a number or a boolean), so that it must be read alone."""

    frame: pd.DataFrame
    ends: list[int]
    empty: list[set[str]]
    retyped: list[bool]


def _plain(text: str) -> bool:
    """Whether ``read_csv`` might read this cell as a number or a boolean (a superset)."""
    try:
        float(text)
    except ValueError:
        return text in BOOLEAN_CELLS
    return True


def decode_csv_together(bodies: list[tuple[bytes, int]]) -> Parsed | None:
    """Checked CSV bodies with one header (:func:`_checked_body`'s) parsed as one CSV; None
    when its rows do not add up to the footers' counts.

    A call of ``read_csv`` costs about 10 ms whatever its size, so a run of many small
    settings reads its parts an order of magnitude faster this way.
    """
    joined = bodies[0][0] + b"".join(body.split(b"\n", 1)[1] for body, _ in bodies[1:])
    frame = pd.read_csv(
        io.BytesIO(joined), dtype=TEXT_COLUMNS, low_memory=False, **_missing_cells(joined)
    )
    counts = [rows for _, rows in bodies]
    if len(frame) != sum(counts):
        return None
    ends = np.array(list(itertools.accumulate(counts, initial=0)))
    starts, stops = ends[:-1], ends[1:]
    empty: list[set[str]] = [set() for _ in counts]
    retyped = np.zeros(len(counts), dtype=bool)
    for name in frame.columns:
        column = frame[name]
        if name in TEXT_COLUMNS or not pd.api.types.is_string_dtype(column.dtype):
            continue
        cells = np.concatenate([[0], np.cumsum(column.notna().to_numpy())])
        held = cells[stops] - cells[starts]
        plain = [text for text in column.dropna().unique() if _plain(text)]
        if plain:
            plains = np.concatenate([[0], np.cumsum(column.isin(plain).to_numpy())])
            retyped |= (held > 0) & (plains[stops] - plains[starts] == held)
        for i in np.flatnonzero(held == 0):
            empty[i].add(name)
    return Parsed(frame, ends.tolist(), empty, retyped.tolist())


def encode_parquet(frame: pd.DataFrame) -> bytes:
    """Parquet bytes with the row count in the schema metadata (needs pyarrow)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), b"ldp_rows": str(len(frame)).encode()}
    buffer = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(metadata), buffer)
    return buffer.getvalue()


def decode_parquet(data: bytes) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as error:  # pyarrow raises several types for a damaged file
        raise CorruptPartError(f"unreadable parquet ({error})") from None
    rows = (table.schema.metadata or {}).get(b"ldp_rows")
    if rows is None or int(rows) != table.num_rows:
        raise CorruptPartError("parquet row count does not match its metadata")
    return table.to_pandas()


def check_rows(frame: pd.DataFrame, part: Part) -> None:
    """CorruptPartError unless the rows are those of ``part``: its setting, its trials."""
    where = part.path
    if "config_hash" in frame.columns:
        keys = set(frame["config_hash"].astype(str))
        if keys != {part.key}:
            shown = ", ".join(sorted(keys)[:3])
            raise CorruptPartError(f"{where}: rows of setting {shown}, not {part.key}")
    if "trial" in frame.columns:
        trials = set(frame["trial"].astype(int))
        if trials != set(part.trials):
            raise CorruptPartError(
                f"{where}: rows of trials {_span(trials)}, its name says {part.first}-{part.last}"
            )


def _span(trials: set[int]) -> str:
    if not trials:
        return "none"
    low, high = min(trials), max(trials)
    return f"{low}-{high}" if len(trials) == high - low + 1 else f"{sorted(trials)[:6]}"


def read_part(path: Path) -> pd.DataFrame:
    """Read and check one part file; CorruptPartError names it if it cannot be trusted."""
    try:
        data = path.read_bytes()
        if path.name.endswith(".parquet"):
            return decode_parquet(data)
        return decode_csv(data, compressed=path.name.endswith(".gz"))
    except CorruptPartError as error:
        raise CorruptPartError(f"{path}: {error}") from None
    except Exception as error:  # an unparsable body is corrupt too
        raise CorruptPartError(f"{path}: unreadable ({type(error).__name__}: {error})") from None


# --------------------------------------------------------------------------- store


class ResultsStore:
    """The parts of one experiment under ``<root>/<experiment>``.

    Parameters
    ----------
    root : str or Path
        The results directory (``results_dir``).
    experiment : str
        The experiment's name (a sub-directory of ``root``).
    fmt : str
        Format of new parts: ``csv.gz`` (default), ``csv`` or ``parquet``.
    """

    def __init__(self, root: str | os.PathLike[str], experiment: str, fmt: str = "csv.gz"):
        plain_name(experiment)
        self.root = Path(root)
        self.experiment = experiment
        self.fmt = fmt
        self.directory = self.root / experiment
        self.parts_dir = self.directory / "parts"
        self._reported: set[Path] = set()

    def __repr__(self) -> str:
        return f"ResultsStore({str(self.root)!r}, {self.experiment!r})"

    # --- listing ---------------------------------------------------------------------
    def keys(self) -> list[str]:
        """The setting keys that have a parts directory."""
        if not self.parts_dir.is_dir():
            return []
        return sorted(p.name for p in self.parts_dir.iterdir() if p.is_dir())

    def parts(self, key: str) -> list[Part]:
        """The part files of setting ``key``, by trial range (temporary files excluded)."""
        directory = self.parts_dir / key
        if not directory.is_dir():
            return []
        found = []
        for path in directory.iterdir():
            match = PART_NAME.match(path.name)
            if match:
                found.append(Part(int(match.group(1)), int(match.group(2)), key, path))
        return sorted(found)

    def _report(self, error: CorruptPartError) -> None:
        path = Path(str(error).split(": ", 1)[0])
        if path not in self._reported:
            self._reported.add(path)
            warnings.warn(
                f"corrupt results part excluded: {error}", CorruptPartWarning, stacklevel=3
            )

    def read(self, part: Part) -> pd.DataFrame:
        """The rows of ``part``, checked (:func:`read_part`, :func:`check_rows`)."""
        frame = read_part(part.path)
        check_rows(frame, part)
        return frame

    def done_trials(self, key: str, *, verify: bool = True) -> set[int]:
        """Trials of setting ``key`` already recorded.

        With ``verify`` every part is read and checked first; a corrupt one is reported,
        renamed to ``<name>.corrupt`` (kept for inspection) and its trials count as not
        done, so the next run redoes them.
        """
        done: set[int] = set()
        for part in self.recorded(key, verify=verify)[0]:
            done.update(part.trials)
        return done

    def recorded(self, key: str, *, verify: bool = True) -> tuple[list[Part], list[pd.DataFrame]]:
        """The trusted parts of setting ``key`` and (with ``verify``) their rows.

        A corrupt part is reported and moved aside as ``<name>.corrupt`` (see
        :meth:`done_trials`).
        """
        parts, frames = [], []
        for part in self.parts(key):
            if verify:
                try:
                    frames.append(self.read(part))
                except CorruptPartError as error:
                    self._report(error)
                    with contextlib.suppress(OSError):  # gone, or a read-only directory
                        os.replace(part.path, part.path.with_name(part.path.name + ".corrupt"))
                    continue
            parts.append(part)
        return parts, frames

    def recorded_many(
        self, keys: Iterable[str]
    ) -> dict[str, tuple[list[Part], list[pd.DataFrame]]]:
        """:meth:`recorded` (verified) of each of ``keys``; the settings whose parts are all
        sound parsed a header at a time (:meth:`_load_together`), each part's rows a slice
        of its header's frame."""
        keys = list(keys)
        together = self._load_together(keys, every=True)
        found = {}
        for key in keys:
            if key in together:
                found[key] = (
                    [part for part, _, _ in together[key]],
                    [p.frame.iloc[p.ends[i] : p.ends[i + 1]] for _, p, i in together[key]],
                )
            else:
                found[key] = self.recorded(key)
        return found

    # --- sharing the directory -------------------------------------------------------
    @contextlib.contextmanager
    def locked(self, keys: Iterable[str]) -> Iterator[bool]:
        """Hold the lock of every setting in ``keys``; yield whether the store is writable.

        Locks are taken in key order (two runs never deadlock) and waited for, with one
        line on stderr saying so.  In a directory where the lock files cannot be created
        (read-only) nothing is locked and ``False`` is yielded: reading still works, and
        :meth:`check_writable` refuses any work before a trial runs.
        """
        handles: list[int] = []
        writable = True
        try:
            for key in sorted(set(keys)):
                path = self.directory / "locks" / f"{key}.lock"
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
                except OSError as error:
                    if error.errno not in (errno.EACCES, errno.EROFS, errno.EPERM):
                        raise
                    writable = False
                    break
                handles.append(handle)
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    print(
                        f"{self.experiment}: another run is writing setting {key} in "
                        f"{self.directory}; waiting for it to finish",
                        file=sys.stderr,
                    )
                    fcntl.flock(handle, fcntl.LOCK_EX)
            yield writable and self._probe()
        finally:
            for handle in handles:
                os.close(handle)  # closing releases the lock

    def _probe(self) -> bool:
        """Whether a file can be created in the experiment's directory.  Each probe is a
        file of its own: jobs of one sweep probe the same directory at the same time."""
        probe = self.directory / f".probe.{os.getpid()}.{os.urandom(6).hex()}"
        try:
            atomic_write_bytes(probe, b"")
            probe.unlink()
        except OSError as error:
            if error.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
                return False
            raise
        return True

    def check_writable(self, writable: bool, todo: int) -> None:
        """ResultsDirError (one line) when ``todo`` trials are due and nothing can be written."""
        if todo and not writable:
            raise ResultsDirError(
                f"results_dir: cannot write to {self.directory} (read-only?); {todo} trials "
                "would be lost: choose a writable results_dir=..."
            )

    def forget(self, key: str) -> int:
        """Delete every recorded part of setting ``key`` (``rerun=true``; lock held)."""
        parts = self.parts(key)
        for part in parts:
            part.path.unlink(missing_ok=True)
        return len(parts)

    def remove_stale_temporaries(self, key: str) -> int:
        """Delete the temporary files a killed run left in setting ``key``'s parts (call
        with its lock held: only the lock holder writes there); return how many."""
        directory = self.parts_dir / key
        removed = 0
        if directory.is_dir():
            for path in directory.iterdir():
                if TEMPORARY.match(path.name):
                    path.unlink(missing_ok=True)
                    removed += 1
        return removed

    # --- writing ---------------------------------------------------------------------
    def _part_path(self, key: str, first: int, last: int) -> Path:
        return self.parts_dir / key / f"{first:06d}-{last:06d}.{self.fmt}"

    def write_part(self, key: str, trials: Iterable[int], frame: pd.DataFrame | Rows) -> Path:
        """Atomically write the rows of a contiguous run of trials of setting ``key``."""
        trials = sorted(trials)
        if not trials or trials != list(range(trials[0], trials[-1] + 1)):
            raise ValueError(f"a part holds a contiguous, non-empty run of trials, got {trials}")
        path = self._part_path(key, trials[0], trials[-1])
        if self.fmt == "parquet":
            data = encode_parquet(frame.to_frame() if isinstance(frame, Rows) else frame)
        else:
            data = encode_csv(frame, compress=self.fmt == "csv.gz")
        atomic_write_bytes(path, data)
        return path

    def record_setting(self, key: str, config: dict[str, Any]) -> None:
        """Keep the setting's resolved config beside its parts (once)."""
        path = self.directory / "settings" / f"{key}.json"
        if not path.exists():
            text = json.dumps(config, indent=2, sort_keys=True, default=str)
            atomic_write_bytes(path, text.encode())

    def record_code(self, key: str, record: dict[str, Any]) -> None:
        """Record (or refresh) which code computes setting ``key``: ``record`` holds its
        ``base_key``, ``code_digest`` and ``files``; the time of this call is kept as
        ``used``, so the setting a later run used is the current one of its base key."""
        path = self.directory / "code" / f"{key}.json"
        text = json.dumps({**record, "used": time.time()}, indent=2, sort_keys=True)
        atomic_write_bytes(path, text.encode())

    def code_records(self) -> dict[str, dict[str, Any]]:
        """The code records of this experiment's settings, by key (unreadable ones left out)."""
        directory = self.directory / "code"
        records: dict[str, dict[str, Any]] = {}
        if not directory.is_dir():
            return records
        for path in directory.glob("*.json"):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and isinstance(record.get("base_key"), str):
                records[path.stem] = record
        return records

    def superseded(self) -> dict[str, str]:
        """Recorded settings another setting of the same base key replaced, each mapped to
        that setting's key: the same config computed later under other code.  A key stored
        before code digests (its key is a base key) is replaced by any recorded setting of
        that base key."""
        records = self.code_records()
        latest: dict[str, tuple[float, str]] = {}
        for key, record in records.items():
            used = float(record.get("used", 0.0))
            base = record["base_key"]
            if base not in latest or used > latest[base][0]:
                latest[base] = (used, key)
        replaced: dict[str, str] = {}
        for key in self.keys():
            record = records.get(key)
            base = record["base_key"] if record else key
            if base in latest and latest[base][1] != key:
                replaced[key] = latest[base][1]
        return replaced

    def compact(self, key: str) -> None:
        """Merge the parts of ``key`` into one per contiguous range; drop subsumed ones.

        Safe to interrupt: the merged part is written before the parts it replaces are
        removed, and readers ignore a part whose range another part covers.
        """
        kept: list[Part] = []
        for part in self.parts(key):
            if kept and part.last <= kept[-1].last:  # subsumed (an interrupted compaction)
                part.path.unlink(missing_ok=True)
                continue
            kept.append(part)
        runs: list[list[Part]] = []
        for part in kept:
            if runs and part.first == runs[-1][-1].last + 1:
                runs[-1].append(part)
            else:
                runs.append([part])
        for run in runs:
            if len(run) < 2:
                continue
            trials = range(run[0].first, run[-1].last + 1)
            try:
                merged = None
                if self.fmt != "parquet" and all(p.path.name.endswith(self.fmt) for p in run):
                    merged = merge_csv([p.path for p in run], self.fmt == "csv.gz")
                if merged is None:
                    frames = [self.read(part) for part in run]
            except CorruptPartError as error:
                self._report(error)
                continue
            if merged is not None:  # the parts were checked when the run planned
                atomic_write_bytes(self._part_path(key, trials[0], trials[-1]), merged)
            else:
                self.write_part(key, trials, pd.concat(frames, ignore_index=True))
            for part in run:
                part.path.unlink(missing_ok=True)

    # --- reading ---------------------------------------------------------------------
    def load(self, keys: Iterable[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
        """All valid rows (one tidy table) and the list of corrupt parts, each reported.

        Parts whose trial range another part covers are skipped; duplicate rows (same
        setting, trial, metric and item) are kept once.  The table is the concatenation of
        the parts read one by one; settings whose parts are all sound are parsed a header
        at a time (:meth:`_load_together`) and typed as that concatenation types them.
        """
        keys = list(keys if keys is not None else self.keys())
        together = self._load_together(keys)
        frames: list[pd.DataFrame] = []
        corrupt: list[str] = []
        empty: set[str] = set()
        run: list[Any] = []  # [parsed, start, end]: consecutive rows of one parsed frame

        def flush() -> None:
            if run:
                frames.append(run[0].frame.iloc[run[1] : run[2]])
                run.clear()

        for key in keys:
            if key not in together:
                flush()
                for _ in range(3):  # a concurrent compaction may remove a listed part
                    found, bad, vanished = self._load_key(key)
                    if not vanished:
                        break
                frames.extend(found)
                corrupt.extend(bad)
                continue
            for _, parsed, i in together[key]:
                start, end = parsed.ends[i], parsed.ends[i + 1]
                empty |= parsed.empty[i]
                if run and run[0] is parsed and run[2] == start:
                    run[2] = end
                else:
                    flush()
                    run.extend([parsed, start, end])
        flush()
        if not frames:
            return pd.DataFrame(columns=[*ROW_KEY, "value", "analytic"]), corrupt
        table = pd.concat(frames, ignore_index=True)
        for name in empty:  # text in some parts, none in others: object, or float if none
            if pd.api.types.is_string_dtype(table[name].dtype):
                has_text = bool(table[name].notna().any())
                table[name] = table[name].astype(object if has_text else np.float64)
        table = table.drop_duplicates(subset=[c for c in ROW_KEY if c in table.columns])
        order = [c for c in ("config_hash", "trial", "metric", "item") if c in table.columns]
        return table.sort_values(order, kind="stable").reset_index(drop=True), corrupt

    def _load_together(
        self, keys: list[str], every: bool = False
    ) -> dict[str, list[tuple[Part, Parsed, int]]]:
        """The parts of every setting whose CSV parts are all sound, parsed a header at a
        time (:func:`decode_csv_together`): per setting, (part, parsed frame, body index)
        in part order, the parts :meth:`_load_key` reads (``every``: all of them, as
        :meth:`recorded` reads).  A setting with a part that is missing, damaged, of
        another format or holding other rows is left out: :meth:`_load_key` or
        :meth:`recorded` reads it part by part, reporting what is wrong as it always does."""
        bodies: dict[str, list[tuple[Part, bytes, int]]] = {}
        for key in keys:
            chosen, covered = [], -1
            for part in self.parts(key):
                if every or part.last > covered:  # _load_key's choice when all are sound
                    chosen.append(part)
                    covered = part.last
            if any(part.path.name.endswith(".parquet") for part in chosen):
                continue
            try:
                bodies[key] = [
                    (part, *_checked_body(part.path.read_bytes(), part.path.name.endswith(".gz")))
                    for part in chosen
                ]
            except (CorruptPartError, OSError):
                continue
        groups: dict[bytes, list[list[tuple[str, Part, bytes, int]]]] = {}
        held: dict[bytes, int] = {}  # the bytes of each header's last chunk
        for key, found in bodies.items():
            for part, body, rows in found:
                header = body.split(b"\n", 1)[0]
                chunks = groups.setdefault(header, [[]])
                if held.get(header, 0) + len(body) > TOGETHER_BYTES and chunks[-1]:
                    chunks.append([])  # a parse holds at most about TOGETHER_BYTES of text
                    held[header] = 0
                chunks[-1].append((key, part, body, rows))
                held[header] = held.get(header, 0) + len(body)
        located: dict[tuple[str, Part], tuple[Part, Parsed, int]] = {}
        failed: set[str] = set()
        for members in (chunk for chunks in groups.values() for chunk in chunks if chunk):
            try:
                parsed = decode_csv_together([(body, rows) for _, _, body, rows in members])
                hashes = parsed.frame["config_hash"].astype(str).to_numpy() if parsed else None
                trials = parsed.frame["trial"].astype(int).to_numpy() if parsed else None
            except Exception:  # an unparsable body: its setting is read part by part
                parsed = None
            if parsed is None:
                failed.update(key for key, *_ in members)
                continue
            for i, (key, part, _, _) in enumerate(members):
                start, end = parsed.ends[i], parsed.ends[i + 1]
                held = np.unique(trials[start:end])  # check_rows's test, on the slice
                if parsed.retyped[i] or not (
                    end > start
                    and bool(np.all(hashes[start:end] == key))
                    and np.array_equal(held, np.arange(part.first, part.last + 1))
                ):
                    failed.add(key)
                located[key, part] = (part, parsed, i)
        return {
            key: [located[key, part] for part, _, _ in found]
            for key, found in bodies.items()
            if key not in failed
        }

    def _load_key(self, key: str) -> tuple[list[pd.DataFrame], list[str], bool]:
        """The rows of one setting's parts, its corrupt parts, and whether a part vanished."""
        frames, corrupt, covered = [], [], -1
        for part in self.parts(key):
            if part.last <= covered:
                continue
            if not part.path.exists():
                return [], [], True
            try:
                frames.append(self.read(part))
            except CorruptPartError as error:
                if not part.path.exists():
                    return [], [], True
                self._report(error)
                corrupt.append(str(error))
                continue
            covered = max(covered, part.last)
        return frames, corrupt, False

    def current_keys(self) -> list[str]:
        """The recorded settings no later run replaced (:meth:`superseded`)."""
        replaced = self.superseded()
        return [key for key in self.keys() if key not in replaced]

    def export(self, table: pd.DataFrame | None = None) -> Path:
        """Write the valid rows of the current settings (:meth:`current_keys`: rows computed
        by code a later run replaced are left out) to ``table.csv.gz`` (plain CSV, atomic)
        and return its path.

        A table whose bytes would not change is not rewritten (so a no-op rerun writes
        nothing, even in a read-only directory).
        """
        if table is None:
            table, _ = self.load(self.current_keys())
        elif "config_hash" in table.columns:
            replaced = set(self.superseded())
            table = table[~table["config_hash"].astype(str).isin(replaced)]
        path = self.directory / "table.csv.gz"
        data = gzip.compress(table.to_csv(index=False, lineterminator="\n").encode(), mtime=0)
        try:
            unchanged = path.read_bytes() == data
        except OSError:
            unchanged = False
        if not unchanged:
            atomic_write_bytes(path, data)
        return path
