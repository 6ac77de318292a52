"""The results store: one tidy long table per experiment, written in small atomic parts.

Layout under ``<results_dir>/<experiment>/``::

    parts/<setting key>/<first>-<last>.csv.gz   rows of trials first..last of one setting
    settings/<setting key>.json                 the setting's resolved config, for humans
    table.csv.gz                                all valid rows, refreshed after each run

A part is written to a temporary name in its own directory and then ``os.replace``d, so
a crash or Ctrl-C leaves either a whole part or none.  Each CSV part ends with a footer
line ``#ldp-end rows=<N> sha256=<hex>`` over the bytes before it (Parquet parts carry the
row count in their metadata); a part that does not decompress, lacks its footer or fails
its checksum is *reported by name and excluded*, never silently used.  Parts stay readable
by plain pandas: ``pd.read_csv(path, comment="#")``.

Which trials are done is read from the part names, so a rerun skips them without
reading any numbers twice; after a run the parts of a setting are merged into one part
per contiguous range of trials (:meth:`ResultsStore.compact`).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import secrets
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

PART_NAME = re.compile(r"^(\d+)-(\d+)\.(csv\.gz|csv|parquet)$")
FOOTER = b"#ldp-end"
#: Columns that identify a row: a setting, a trial, a metric and (optionally) an item.
ROW_KEY = ["config_hash", "trial", "metric", "item"]


class CorruptPartError(ValueError):
    """A part file that cannot be trusted; the message names the file and the reason."""


class CorruptPartWarning(UserWarning):
    """Emitted (once per file) when a corrupt part is excluded."""


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


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary sibling and ``os.replace`` (atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


# ------------------------------------------------------------------------ encoding
def encode_csv(frame: pd.DataFrame, compress: bool) -> bytes:
    """CSV bytes with the checksum footer, gzipped (deterministically) if ``compress``."""
    body = frame.to_csv(index=False, lineterminator="\n").encode()
    footer = f"{FOOTER.decode()} rows={len(frame)} sha256={hashlib.sha256(body).hexdigest()}\n"
    data = body + footer.encode()
    return gzip.compress(data, mtime=0) if compress else data


def decode_csv(data: bytes, compressed: bool) -> pd.DataFrame:
    """Check and parse the bytes of a CSV part; CorruptPartError if anything is off."""
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
    frame = pd.read_csv(io.BytesIO(body))
    if len(frame) != int(match.group(1)):
        raise CorruptPartError(f"{len(frame)} rows where the footer says {match.group(1)}")
    return frame


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
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", experiment):
            raise ValueError(f"experiment name must be a plain file name, got {experiment!r}")
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

    def done_trials(self, key: str, *, verify: bool = True) -> set[int]:
        """Trials of setting ``key`` already recorded.

        With ``verify`` every part is read and checked first; a corrupt one is reported,
        renamed to ``<name>.corrupt`` (kept for inspection) and its trials count as not
        done, so the next run redoes them.
        """
        done: set[int] = set()
        for part in self.parts(key):
            if verify:
                try:
                    read_part(part.path)
                except CorruptPartError as error:
                    self._report(error)
                    os.replace(part.path, part.path.with_name(part.path.name + ".corrupt"))
                    continue
            done.update(part.trials)
        return done

    # --- writing ---------------------------------------------------------------------
    def _part_path(self, key: str, first: int, last: int) -> Path:
        return self.parts_dir / key / f"{first:06d}-{last:06d}.{self.fmt}"

    def write_part(self, key: str, trials: Iterable[int], frame: pd.DataFrame) -> Path:
        """Atomically write the rows of a contiguous run of trials of setting ``key``."""
        trials = sorted(trials)
        if not trials or trials != list(range(trials[0], trials[-1] + 1)):
            raise ValueError(f"a part holds a contiguous, non-empty run of trials, got {trials}")
        path = self._part_path(key, trials[0], trials[-1])
        if self.fmt == "parquet":
            data = encode_parquet(frame)
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
            try:
                frames = [read_part(part.path) for part in run]
            except CorruptPartError as error:
                self._report(error)
                continue
            self.write_part(
                key, range(run[0].first, run[-1].last + 1), pd.concat(frames, ignore_index=True)
            )
            for part in run:
                part.path.unlink(missing_ok=True)

    # --- reading ---------------------------------------------------------------------
    def load(self, keys: Iterable[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
        """All valid rows (one tidy table) and the list of corrupt parts, each reported.

        Parts whose trial range another part covers are skipped; duplicate rows (same
        setting, trial, metric and item) are kept once.
        """
        frames, corrupt = [], []
        for key in keys if keys is not None else self.keys():
            covered = -1
            for part in self.parts(key):
                if part.last <= covered:
                    continue
                try:
                    frames.append(read_part(part.path))
                except CorruptPartError as error:
                    self._report(error)
                    corrupt.append(str(error))
                    continue
                covered = max(covered, part.last)
        if not frames:
            return pd.DataFrame(columns=[*ROW_KEY, "value", "analytic"]), corrupt
        table = pd.concat(frames, ignore_index=True)
        table = table.drop_duplicates(subset=[c for c in ROW_KEY if c in table.columns])
        order = [c for c in ("config_hash", "trial", "metric", "item") if c in table.columns]
        return table.sort_values(order, kind="stable").reset_index(drop=True), corrupt

    def export(self, table: pd.DataFrame | None = None) -> Path:
        """Write all valid rows to ``table.csv.gz`` (plain CSV, atomic) and return its path."""
        if table is None:
            table, _ = self.load()
        path = self.directory / "table.csv.gz"
        data = gzip.compress(table.to_csv(index=False, lineterminator="\n").encode(), mtime=0)
        atomic_write_bytes(path, data)
        return path
