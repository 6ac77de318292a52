"""On-disk cache of built histograms, so parameter sweeps do not rebuild them.

An entry is one ``.npz`` file named after a SHA-256 of (loader name, parameters, format
version), holding the distinct values, their counts, a JSON metadata string and a
checksum of all three. Writes are atomic (:func:`ldp.io.files.atomic_write_bytes`); an
entry that cannot be read or whose checksum does not match is reported with a warning,
deleted and rebuilt.

The directory is ``$LDP_CACHE_DIR`` when set, else ``.cache/datasets`` under the current
directory.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ldp.io.files import atomic_write_bytes

__all__ = ["FORMAT_VERSION", "cache_dir", "cache_path", "cached_entry", "cached_histogram"]

#: Bump when what a loader builds for given parameters changes: old entries are ignored.
FORMAT_VERSION = 1

Histogram = tuple[np.ndarray, np.ndarray, dict[str, Any]]
T = TypeVar("T")


def cache_dir(directory: str | os.PathLike[str] | None = None) -> Path:
    """The cache directory: the argument, else ``$LDP_CACHE_DIR``, else ``.cache/datasets``."""
    if directory is not None:
        return Path(directory)
    env = os.environ.get("LDP_CACHE_DIR")
    return Path(env) if env else Path.cwd() / ".cache" / "datasets"


def cache_key(name: str, params: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of (name, params, FORMAT_VERSION)."""
    payload = json.dumps(
        {"name": name, "params": params, "version": FORMAT_VERSION}, sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def cache_path(
    name: str, params: dict[str, Any], directory: str | os.PathLike[str] | None = None
) -> Path:
    """Where the entry of (name, params) lives."""
    return cache_dir(directory) / f"{name}-{cache_key(name, params)[:24]}.npz"


def _checksum(values: np.ndarray, counts: np.ndarray, meta: bytes) -> str:
    digest = hashlib.sha256()
    digest.update(str(values.dtype).encode())
    digest.update(np.ascontiguousarray(values).tobytes())
    digest.update(str(counts.dtype).encode())
    digest.update(np.ascontiguousarray(counts).tobytes())
    digest.update(meta)
    return digest.hexdigest()


def _read(path: Path) -> Histogram:
    with np.load(path, allow_pickle=False) as archive:
        values = archive["values"]
        counts = archive["counts"]
        meta = bytes(archive["meta"].item())
        stored = str(archive["checksum"].item())
    if _checksum(values, counts, meta) != stored:
        raise ValueError("checksum mismatch")
    return values, counts, json.loads(meta.decode("utf-8"))


def _write(path: Path, values: np.ndarray, counts: np.ndarray, meta: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta_bytes = json.dumps(meta, sort_keys=True).encode("utf-8")
    checksum = _checksum(values, counts, meta_bytes)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        values=values,
        counts=counts,
        meta=np.array(meta_bytes),
        checksum=np.array(checksum),
    )
    atomic_write_bytes(path, buffer.getvalue())


def cached_histogram(
    name: str,
    params: dict[str, Any],
    build: Callable[[], Histogram],
    *,
    enabled: bool = True,
    directory: str | os.PathLike[str] | None = None,
) -> Histogram:
    """Return ``build()``'s (values, counts, metadata), from the cache when possible.

    Parameters
    ----------
    name, params : str, dict
        The key: everything that determines the result (JSON-serialisable).
    build : callable
        Builds (distinct values, counts or weights, JSON-serialisable metadata dict).
    enabled : bool
        False bypasses the cache entirely (neither read nor written).
    directory : path, optional
        Overrides :func:`cache_dir`.
    """
    if not enabled:
        return build()
    return cached_entry(
        cache_path(name, params, directory), _read, build, lambda path, got: _write(path, *got)
    )


def cached_entry(
    path: Path, read: Callable[[Path], T], build: Callable[[], T], write: Callable[[Path, T], None]
) -> T:
    """``read(path)`` when the entry is there and readable, else ``build()``, written with
    ``write``.  An entry that cannot be read (corrupt, truncated, foreign, a checksum that
    does not match) is reported with a ``RuntimeWarning``, deleted and rebuilt; a cache that
    cannot be written is a warning (a read-only or full disk must not stop an experiment)."""
    if path.exists():
        try:
            return read(path)
        except Exception as error:  # corrupt, truncated or foreign file: rebuild it
            warnings.warn(
                f"dataset cache entry {path} is unreadable ({error}); rebuilding it",
                RuntimeWarning,
                stacklevel=3,
            )
            path.unlink(missing_ok=True)
    built = build()
    try:
        write(path, built)
    except OSError as error:
        warnings.warn(
            f"could not write dataset cache entry {path}: {error}", RuntimeWarning, stacklevel=3
        )
    return built
