"""Which data a setting reads, as part of its key: real files by content, else the surrogate.

A real-data setting (``kosarak``, ``aol``, ``url``) reads ``dataset.path`` or, without one,
the file the loader finds in ``$LDP_DATA_DIR`` (:func:`ldp.datasets.loaders.resolve_path`),
else its calibrated surrogate.  The key of a setting that reads a file hashes the file's
*content* (size and SHA-256), not its path: replacing the file at the same path, or setting
``LDP_DATA_DIR`` between two runs, gives a new key instead of mixing the two data sets
under one.  A setting on the surrogate keeps the key it has without any file.  Checksums
are cached by (path, size, modification time) in ``<cache>/file-digests.json`` (the
data-set cache directory, ``$LDP_CACHE_DIR`` or ``.cache/datasets``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

from ldp.io.files import atomic_write_bytes

#: The loaders that read a real file (and take ``dataset.path``).
REAL_DATASETS = ("kosarak", "aol", "url")


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
    return sha.hexdigest()


def _cache_file() -> Path:
    from ldp.datasets.cache import cache_dir

    return cache_dir() / "file-digests.json"


@functools.lru_cache(maxsize=256)
def file_digest(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of the file at ``path`` (whose stat is ``size``, ``mtime_ns``), cached on disk."""
    stamp = f"{path}:{size}:{mtime_ns}"
    cache = _cache_file()
    try:
        known = json.loads(cache.read_text())
    except (OSError, ValueError):
        known = {}
    if stamp in known:
        return known[stamp]
    digest = _digest(Path(path))
    known[stamp] = digest
    try:
        atomic_write_bytes(cache, json.dumps(known, indent=0, sort_keys=True).encode())
    except OSError:  # a read-only cache only costs the checksum next time
        pass
    return digest


def content_id(path: Path) -> str:
    """``sha256:<hex>`` of a file, or of a directory's files (names, sizes and digests)."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    parts = []
    for file in files:
        stat = file.stat()
        name = str(file.relative_to(path)) if path.is_dir() else ""
        digest = file_digest(str(file.resolve()), stat.st_size, stat.st_mtime_ns)
        parts.append(f"{name}:{stat.st_size}:{digest}")
    if len(parts) == 1 and not path.is_dir():
        return f"sha256:{files[0].stat().st_size}:{parts[0].rsplit(':', 1)[1]}"
    return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def data_source(dataset: dict[str, Any]) -> tuple[str | None, str]:
    """(content id of the real data read, or None; one line saying which data is read,
    empty for generated data).

    Raises what :func:`~ldp.datasets.loaders.resolve_path` raises for a missing file.
    """
    name = dataset.get("name")
    if name not in REAL_DATASETS:
        return None, ""
    from ldp.datasets.loaders import resolve_path

    with warnings.catch_warnings():  # the fallback is said in the returned line instead
        warnings.simplefilter("ignore")
        path, notes, fallback = resolve_path(name, dataset.get("path"), "auto")
    if path is None:
        reason = "; ".join(notes).split(": using the calibrated")[0]
        return None, f"{name}: calibrated surrogate ({reason or 'no file'})"
    return content_id(path), f"{name}: real file {path}"
